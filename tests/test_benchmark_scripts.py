"""The benchmark scripts run as a reader of the README runs them: `python benchmarks/X.py`,
from the repository, with the script's own folder first on the path (where a
benchmarks/kernels.py would shadow the kernels package)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "session_cpu.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def test_session_cpu_prints_a_median_within_its_spread_for_each_route():
    done = run("--runs", "3", "--route", "/overflow", "--route", "/cost")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {m[0]: [float(x) for x in m[1:]] for m in re.findall(
        r"^(/[\w-]*)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", done.stdout, re.MULTILINE)}
    assert set(rows) == {"/overflow", "/cost"}, done.stdout
    for route, (median, fastest, slowest) in rows.items():
        assert 0 < fastest <= median <= slowest, (route, median, fastest, slowest)
    total = float(re.search(r"sum of medians\s+(\d+)", done.stdout).group(1))
    assert abs(total - sum(r[0] for r in rows.values())) <= 2  # each median rounded


def test_session_cpu_names_the_known_routes_for_an_unknown_one():
    done = run("--route", "/nowhere")
    assert done.returncode == 2
    assert "unknown route(s) ['/nowhere']" in done.stderr and "/heatmap" in done.stderr
