"""The benchmark scripts run as a reader of the README runs them: `python benchmarks/X.py`,
from the repository, with the script's own folder first on the path (where a
benchmarks/kernels.py would shadow the kernels package)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_script(name, *args, timeout=300, **kw):  # -> the finished run of benchmarks/<name>
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          check=False, **kw)


def run(*args):
    return run_script("session_cpu.py", *args)


def smoke_output(name, site_build):  # -> the stdout of benchmarks/<name> in its smoke mode,
    # run to success; its server starts from a copy of the session's build (AE_SEED_BUILD), not
    # a build of its own: the same inputs, so the same site. The smoke run checks the script's
    # code paths and asserts no figure, so its server skips caching the live pages' first paints
    # (AE_REUSE_SESSIONS=0): that warm-up was 14 s of each run's 20 s (bundle_bytes, idle)
    done = run_script(name, "--smoke", timeout=600,
                      env={**os.environ, "AE_SEED_BUILD": str(site_build),
                           "AE_REUSE_SESSIONS": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


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


def test_chapter_sessions_refuses_a_static_route_before_a_server_starts():
    done = run_script("chapter_sessions.py", "--route", "/heatmap", timeout=60)
    assert done.returncode == 2 and "--route must be a live route" in done.stderr
    assert not done.stdout


def test_lighthouse_refuses_an_unknown_against_commit_before_npm_or_a_server(tmp_path):
    done = run_script("lighthouse.py", "--against", "no-such-commit", timeout=60,
                      env={**os.environ, "AE_LIGHTHOUSE_DIR": str(tmp_path / "lh")})
    assert done.returncode == 2, done.stderr
    assert "--against 'no-such-commit': not a commit" in done.stderr
    assert not (tmp_path / "lh").exists() and not done.stdout  # no npm install, no table


# --- benchmarks/static_latency.py: an interaction with no DOM change is a slow sample ------

def static_latency():
    sys.path.append(str(ROOT / "benchmarks"))  # after the packages: kernels.py must not shadow
    import static_latency
    return static_latency


def test_a_timed_out_interaction_is_a_sample_at_its_timeout_and_is_counted():
    sl = static_latency()
    fast = [{"dom": 1.0, "painted": 3.0}] * 9
    timed_out = {"dom": sl.TIMEOUT_MS, "painted": sl.TIMEOUT_MS, "timedOut": True}
    dom, painted, nothing, timeouts = sl.tally([None, *fast, timed_out])
    assert (nothing, timeouts, len(painted)) == (1, 1, 10) and dom[-1] == sl.TIMEOUT_MS
    assert sl.pct(painted, 0.95) == sl.TIMEOUT_MS  # one slow sample in 10: the p95
    assert sl.pct(sl.tally([None, *fast])[1], 0.95) == 3.0  # left out, it would not show


# a page as static_latency's floor, whose buttons: change a value and the DOM; change a value
# and no DOM (a change the page failed to show); change neither
SLOW_PAGE = """<!doctype html><html lang="en"><head><title>t</title></head><body>
<button class="bk-btn" id="shows">shows</button> <span id="out">0</span>
<button class="bk-btn" id="hides">hides</button> <button class="bk-btn" id="noop">noop</button>
<script>
const counter = {value: 0};
window.AE = {states: {panels: new Map([[0, {booted: true, controls: [counter],
                                              spec: {table: {controls: [{prop: "value"}]}}}]])}};
document.getElementById("shows").addEventListener("click", () => {
  counter.value += 1; document.getElementById("out").textContent = String(counter.value); });
document.getElementById("hides").addEventListener("click", () => { counter.value += 1; });
</script></body></html>"""


@pytest.mark.browser  # Chromium, a few seconds
def test_operate_tells_a_change_with_no_dom_from_no_change_in_chromium(tmp_path):
    import concurrent.futures
    import os

    from playwright.sync_api import sync_playwright
    chromium = os.environ.get("AE_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell")
    sl = static_latency()
    (tmp_path / "p.html").write_text(SLOW_PAGE)

    def drive():  # Playwright's sync API refuses a thread whose asyncio loop runs, as an
        # earlier test on the same worker can leave this one's: it gets a thread of its own
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=sl.CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto((tmp_path / "p.html").as_uri())
                assert page.evaluate(sl.CONTROLS_JS) == 3  # shows, hides, noop: in that order
                return [page.evaluate(sl.OPERATE_JS, [i, "Enter", 300]) for i in range(3)]
            finally:
                browser.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        shown, hidden, noop = pool.submit(drive).result(timeout=120)
    assert not shown.get("timedOut") and 0 <= shown["dom"] <= shown["painted"] < 300, shown
    assert hidden == {"dom": 300, "painted": 300, "timedOut": True}
    assert noop is None


# --- benchmarks/gpu_check.py: its exit status is the GPU tests' verdict ---------------------

def gpu_check_with(monkeypatch, tests_exit):
    # gpu_check as on a CUDA machine whose matrix and benchmark rows are stubbed, and whose
    # `pytest -m gpu` is a real child process that exits with `tests_exit`
    sys.path.append(str(ROOT / "benchmarks"))  # after the packages: kernels.py must not shadow
    import gpu_check
    monkeypatch.setattr(gpu_check.kernels, "cuda_available", lambda: True)
    monkeypatch.setattr(gpu_check.kernels, "environment", lambda: {"device": "stub"})
    monkeypatch.setattr(gpu_check, "dispatch_matrix", lambda quick: print("matrix"))
    monkeypatch.setattr(gpu_check, "named_backends", lambda: print("backends"))
    monkeypatch.setattr(gpu_check, "_load_benchmark",
                        lambda: type("Bench", (), {"main": staticmethod(lambda argv: None)}))
    monkeypatch.setattr(gpu_check, "GPU_TESTS", [
        sys.executable, "-c",
        f"import sys; print('{'1 failed' if tests_exit else '3 passed'}'); sys.exit({tests_exit})"])
    return gpu_check


@pytest.mark.parametrize("tests_exit", [1, 5])  # a failed test; no test run at all
def test_gpu_check_exits_nonzero_when_the_gpu_tests_fail(monkeypatch, tmp_path, capfd,
                                                         tests_exit):
    gpu_check = gpu_check_with(monkeypatch, tests_exit)
    assert gpu_check.main(["--out", str(tmp_path)]) == gpu_check.EXIT_TESTS_FAILED != 0
    written = (tmp_path / "gpu_check.md").read_text()
    assert "1 failed" in written and f"FAILED: pytest -m gpu exited {tests_exit}" in written
    assert "FAILED" in capfd.readouterr().out  # the tee writes to the real stdout


def test_gpu_check_exits_0_when_the_gpu_tests_pass(monkeypatch, tmp_path):
    gpu_check = gpu_check_with(monkeypatch, 0)
    assert gpu_check.main(["--out", str(tmp_path)]) == 0
    assert "3 passed" in (tmp_path / "gpu_check.md").read_text()


def test_gpu_check_without_cuda_says_so_and_exits_1():
    done = run_script("gpu_check.py", timeout=120)
    if "no CUDA here" not in done.stdout:
        pytest.skip("this machine has CUDA")
    assert done.returncode == 1


# --- benchmarks/first_touch.py: its smoke mode, one short run (no targets asserted) ---------

@pytest.mark.browser  # a server and Chromium, about a minute
def test_first_touch_smoke_prints_a_row_of_figures_for_each_page(site_build):
    out = smoke_output("first_touch.py", site_build)
    rows = re.findall(r"^\| (\S+(?: Bokeh page)?) \| [^|]+ \| (\d+) \| (\d+) / (\d+) \| "
                      r"(\d+) / (\d+) \|", out, re.MULTILINE)
    assert [r[0] for r in rows] == ["/heatmap", "/", "/live", "bare Bokeh page"], out
    for label, usable, inp, inp95, state, state95 in rows:
        assert 0 <= int(usable) and 0 < int(inp) <= int(inp95) and 0 < int(state) <= int(
            state95), (label, out)
    # the static pages' taps went to the native controls over their stills
    native = dict(re.findall(r"^\| (\S+) \|.*\| \d+ \((\d+) native\) \|", out, re.MULTILINE))
    assert int(native["/heatmap"]) > 0 and int(native["/"]) > 0, out


# --- benchmarks/bundle_bytes.py: its smoke mode, /heatmap's bytes before its first control --

@pytest.mark.browser  # a server and Chromium, about a minute
def test_bundle_bytes_smoke_prints_the_heatmap_pages_bundles_without_bokeh_tables(site_build):
    out = smoke_output("bundle_bytes.py", site_build)
    row = re.search(r"^\| /heatmap \| (.+?) \| ([\d,.]+) \| ([\d,.]+) \| ([\d,.]+) \| (\d+) "
                    r"\| ([\d,.]+) \|$", out, re.MULTILINE)
    assert row, out
    names, bundles, other, total, native = row.group(1), *(
        float(row.group(i).replace(",", "")) for i in (2, 3, 4, 6))
    assert "bokeh " in names and "panel " in names and "bokeh-tables" not in names
    assert abs(bundles + other - total) <= 0.2 and 0 < other < total
    assert 0 < native < bundles  # the native controls answer before any Bokeh bundle
