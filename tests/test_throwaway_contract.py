"""A panel in three places, for real: with the throwaway panel added as docs/PANEL_CONTRACT.md
says (its file, its record, its marker: tests/with_throwaway.py) and nowhere else, every test
that enumerates the panels passes, the throwaway among them.

They run in a pytest of their own, because the record and the marker must be in before
anything reads the registry or the chapters (the routes are read once, at import).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the tests that enumerate the panels, from the registry, its routes or a chapter's markers
# (test_nginx.py's two that need no nginx; test_build.py builds whole sites, too slow here)
CONTRACT_TESTS = [
    "tests/test_panel_contract.py", "tests/test_registry.py", "tests/test_article_math.py",
    "tests/test_stills.py", "tests/test_states.py",
    "tests/test_nginx.py::test_template_renders_every_field",
    "tests/test_nginx.py::test_the_rendered_config_names_every_single_panel_page_as_embeddable",
]
TIMEOUT_S = 300  # about 20 s alone; the parallel suite shares the machine


def test_the_contract_suite_passes_with_the_throwaway_panel_added(tmp_path):
    from tests.with_throwaway import RECORD

    env = dict(os.environ, AE_BUILD_DIR=str(tmp_path / "site"))  # never the suite's build
    run = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                          "-p", "tests.with_throwaway", *CONTRACT_TESTS],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                         check=False)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    # the throwaway was in: each test parametrized by panel or route ran for it too
    for file, throwaway in (("test_panel_contract.py", RECORD.slot),
                            ("test_stills.py", RECORD.route), ("test_states.py", RECORD.route)):
        names = set(re.findall(rf"{file}::(\w+)\[", out))
        assert names, f"{file}: no parametrized test ran"
        for name in names:
            assert f"{file}::{name}[{throwaway}] PASSED" in out, (file, name)
    assert "test_registry.py::test_every_chapter_marker_is_a_record_of_that_chapter_and_back " \
           "PASSED" in out
