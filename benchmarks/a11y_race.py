"""Do controls have their accessible names when the page first reports it is ready?

    PYTHONPATH=. python benchmarks/a11y_race.py [--runs 3] [--busy] [--themes default dark]
                                                [--routes / /live/heatmap ...] [--no-axe]

Starts `attention-explorable serve`, then opens every route, static and live, at 1280 px and in
Playwright's Pixel 5 emulation, in each theme, and the moment the page is ready looks at it:

- ready, on a static page: the islands are mounted (all of them: asking mounts them, as a
  reader scrolling through would) and every Bokeh document is idle; on a live page: every
  Bokeh document is idle and no deferred panel is still loading (no `.pn-loading`), i.e. the
  chapter's panels that arrive after the page appears have arrived. Nothing of
  static/a11y.js is waited for. The condition is polled every animation frame; it is
  tests/browser/readiness.py's READY_JS, the one tests/browser/test_a11y.py asserts on.
- in the same turn of the page's event loop as the condition first holds, every control
  (slider handle, spin button, button, input, select; through shadow roots) without an
  accessible name is counted, with every scroll box of ours (`.ae-scroll`) not reachable by
  keyboard, and a page whose a11y.js does not report itself ready;
- then axe-core runs at once (axe-playwright-python) and its critical and serious nodes are
  counted by rule.

--busy starts two `python3 -c "while True: pass"` for the run (this machine has two cores).
Prints one line per page with a finding and a table of totals per run.
"""

import argparse
import collections
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.browser.axe_core import axe as pinned_axe  # the axe-core the tests run
from tests.browser.readiness import READY_JS  # the condition the browser tests assert

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
FAILING = ("critical", "serious")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve():  # -> (Popen, base URL) of the server, once it answers
    port = free_port()
    cli = shutil.which("attention-explorable") or str(Path(sys.executable).parent
                                                      / "attention-explorable")
    with tempfile.NamedTemporaryFile("w+", prefix="ae-a11y-race-", suffix=".log",
                                     delete=False) as log:
        proc = subprocess.Popen([cli, "serve", "--port", str(port)], stdout=log,
                                stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/", timeout=5):
                return proc, base
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited before it answered, see {log.name}")
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not answer within 240 s")


def default_routes():
    from app.hosting.routes import PANEL_ROUTES

    static = ["/", "/math", *PANEL_ROUTES]
    return static + [("/live" + r).rstrip("/") for r in static]


def look(context, url, axe):  # -> (unnamed at ready [[kind, what]], {rule: nodes} from axe)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(url)
        found = page.wait_for_function(READY_JS, polling="raf").json_value()
        unnamed = [[what.split(".")[0], what] for what in found["unnamed"]]
        if found["ready"] is not True:  # static/a11y.js does not call the page named
            unnamed.append(["a11y.js not ready", str(found["ready"])])
        rules = collections.Counter()
        if axe is not None:
            for v in axe.run(page).response["violations"]:
                if v["impact"] in FAILING:
                    rules[v["id"]] += len(v["nodes"])
        return unnamed, rules
    finally:
        page.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--busy", action="store_true", help="two busy loops beside the browser")
    p.add_argument("--themes", nargs="+", default=["default", "dark"])
    p.add_argument("--routes", nargs="+", default=None)
    p.add_argument("--no-axe", action="store_true", help="only the names at readiness")
    args = p.parse_args(argv)
    routes = args.routes or default_routes()
    proc, base = serve()
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2 if args.busy else 0)]
    totals = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            views = {"1280": {"viewport": {"width": 1280, "height": 900}},
                     "pixel5": dict(pw.devices["Pixel 5"])}
            axe = None if args.no_axe else pinned_axe()
            for run in range(args.runs):
                unnamed_total, rules_total, pages = collections.Counter(), collections.Counter(), 0
                started = time.monotonic()
                for view, options in views.items():
                    context = browser.new_context(**options, base_url=base)
                    for theme in args.themes:
                        for route in routes:
                            url = route + ("?theme=dark" if theme == "dark" else "")
                            unnamed, rules = look(context, url, axe)
                            pages += 1
                            unnamed_total.update(kind for kind, _ in unnamed)
                            rules_total.update(rules)
                            if unnamed or rules:
                                print(f"run {run + 1} {view} {theme} {route}: unnamed at ready "
                                      f"{unnamed[:6]}; axe {dict(rules)}", flush=True)
                    context.close()
                totals.append((pages, unnamed_total, rules_total, time.monotonic() - started))
            browser.close()
    finally:
        for s in spinners:
            s.kill()
            s.wait()
        proc.terminate()
        proc.wait(timeout=30)
    print(f"\n{'busy CPU' if args.busy else 'idle CPU'}, themes {args.themes}, "
          f"views 1280 px and Pixel 5, {len(routes)} routes")
    print("| run | pages | unnamed at ready (by kind) | axe critical+serious nodes (by rule) | s |")
    print("|---|---|---|---|---|")
    for i, (pages, unnamed, rules, seconds) in enumerate(totals, 1):
        print(f"| {i} | {pages} | {sum(unnamed.values())} {dict(unnamed) or ''} | "
              f"{sum(rules.values())} {dict(rules) or ''} | {seconds:.0f} |")
    bad = sum(1 for _, u, r, _ in totals if u or r)
    print(f"runs with a finding: {bad} of {len(totals)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
