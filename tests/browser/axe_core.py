"""axe-core for the browser tests and benchmarks/a11y_race.py: the release package-lock.json pins
(node_modules/, which `make lint` installs with npm ci), run through axe-playwright-python's Axe.

axe-playwright-python 0.1.8, its newest release, bundles axe-core 4.12.1. On the first
chapter, 4.14.1 decided the same colour contrast in under half the time (3.5 s to 1.5 s,
idle), and could tell 15 more of its nodes apart from their background.
"""

import functools
from pathlib import Path

from axe_playwright_python.sync_playwright import Axe

AXE_JS = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


@functools.cache
def axe() -> Axe:  # one Axe, its script read once; missing is an error, never a skip
    if not AXE_JS.exists():
        raise FileNotFoundError(f"{AXE_JS} is missing: `make lint` (or `npm ci`) installs "
                                "axe-core as package-lock.json pins it")
    return Axe.from_file(AXE_JS)
