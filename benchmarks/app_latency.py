"""How fast the served app answers: interaction latency, session cost, message size, memory.

    PYTHONPATH=. python benchmarks/app_latency.py [--toggles 60] [--gets 20] [--sessions 20]
    PYTHONPATH=. python benchmarks/app_latency.py --interaction-only [--root TREE] [--trace F]

Starts `python -m app.hosting.cli serve` on a free port in 5400-5499 and measures the LIVE pages
(/live, /live/heatmap: a Panel session each; the static pages at / and /heatmap open none,
see benchmarks/static_latency.py and benchmarks/lecture_hall.py), against its targets:
- server memory per open session: RSS from /proc before and after holding N pages of "/"
  open in Chromium (measured first, on the fresh server);
- interaction latency in Chromium: click "causal mask" on /heatmap, time until the
  arithmetic readout in the DOM changes (a MutationObserver in the page), many times,
  split into the server's part (request frame out -> patch frame back, as Chromium's network
  stack timed them) and the browser's part (the rest); and, as a check on that number, the
  time until the frame showing the change is done (the next animation frame, where Bokeh
  repaints the heatmap, and a task after it);
- websocket bytes for one interaction (frames sent and received around one click);
- server time to create a session: the HTTP GET of "/" and "/heatmap" (median), and, in
  this process, where a session's time goes: building the page, making its Bokeh models,
  serializing them.
--interaction-only skips memory and sessions. --root serves another tree (a copy of the
working tree with other code in it), so a before/after comparison runs the same script in
the same conditions: alternate the two a few times, other processes load the machine.
--trace writes a Chromium performance trace of the timed clicks (open it in DevTools).
Needs Chromium at /usr/bin/chromium (or $CHROMIUM). Prints one table, then the breakdown.
"""

import argparse
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests import servers

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# a live chapter's session attaches when asked, as a reader's scroll does (static/live_page.js)
IDLE_JS = ("() => (!window.AE || !AE.livePage || AE.livePage.attach())"
           " && window.Bokeh !== undefined && Bokeh.documents.length > 0"
           " && Bokeh.documents.every((d) => d.is_idle)")

SETTLE_MS = 250  # between clicks

TARGETS = {  # name -> (limit, unit)
    "interaction p95": (25.0, "ms"),
    "session GET /live": (150.0, "ms"),
    "session GET /live/heatmap": (50.0, "ms"),
    "memory per session /live": (2.0, "MiB"),
    "memory per session /live/heatmap": (2.0, "MiB"),
    "largest ws message": (4.0, "KiB"),
}

# One click on the mask button, timed in the page from the click until the watched shadow
# root (the arithmetic readout) changes: performance.now() on both ends, no round trip to us.
# Also timed: until the frame that shows the change is done (the next animation frame, where
# Bokeh repaints its canvas, and a task after it), so a readout that lands in the DOM early
# while the rest of the page is still busy does not look faster than it is.
CLICK_AND_WAIT_JS = """
async ([button, cell]) => {
  const root = cell.getRootNode();
  return await new Promise((resolve, reject) => {
    const observer = new MutationObserver(() => {
      observer.disconnect();
      const dom = performance.now() - t0;
      requestAnimationFrame(() => setTimeout(() => resolve([dom, performance.now() - t0]), 0));
    });
    observer.observe(root, {subtree: true, childList: true, characterData: true});
    setTimeout(() => { observer.disconnect(); reject(new Error("no update in 5 s")); }, 5000);
    const t0 = performance.now();
    button.click();
  });
}
"""

PORTS = range(5400, 5500)  # the ports this benchmark may use


def free_port():
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def start_server(port, log, root=ROOT):  # root: the tree to serve (an A/B snapshot)
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "app.hosting.cli", "serve", "--port", str(port)],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}; see {log.name}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start within 90 s")


stop = servers.stop


def rss_mib(pid):  # resident memory of a process, from /proc
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def percentile(values, q):  # nearest-rank percentile
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-q * len(ordered) // 100) - 1))]


def time_gets(url, n):  # -> list of ms for n sequential GETs (each builds a session)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def open_rendered(context, url):
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(IDLE_JS, timeout=60_000)
    return page


def memory_per_session(context, base, pid, sessions, route="/live"):
    # -> (before MiB, after MiB, MiB per session) with `sessions` pages of `route` open
    open_rendered(context, base + route).close()  # imports and caches, not per-session cost
    time.sleep(1.0)
    before = rss_mib(pid)
    pages = [open_rendered(context, base + route) for _ in range(sessions)]
    time.sleep(1.0)
    after = rss_mib(pid)
    for page in pages:
        page.close()
    return before, after, (after - before) / sessions


class Frames:
    """Websocket frames as Chromium's network stack saw them (CDP): times not delayed by a
    busy page, so frame times tell the server's share of a click from the browser's."""

    def __init__(self, page):
        self.items = []  # (kind, seconds, bytes)
        cdp = page.context.new_cdp_session(page)
        cdp.on("Network.webSocketFrameSent", lambda e: self._add("sent", e))
        cdp.on("Network.webSocketFrameReceived", lambda e: self._add("received", e))
        cdp.send("Network.enable")

    def _add(self, kind, event):
        self.items.append((kind, event["timestamp"], len(event["response"]["payloadData"])))

    def server_ms(self):  # the click's request out -> the largest frame back (the patch), ms
        received = [(n, t) for kind, t, n in self.items if kind == "received"]
        if not received:
            return float("nan")
        patch_at = max(received)[1]
        sent = [t for kind, t, _ in self.items if kind == "sent" and t <= patch_at]
        return (patch_at - max(sent)) * 1000 if sent else float("nan")


def interaction(context, base, toggles, browser=None, trace=None):
    # -> (ms to DOM, ms to the next frame, ms in the server, frames of a click); a trace of
    # the clicks if asked
    page = context.new_page()
    frames = Frames(page)
    page.goto(base + "/live/heatmap")
    page.wait_for_function(IDLE_JS, timeout=60_000)
    page.wait_for_timeout(300)
    if trace:
        browser.start_tracing(page=page, path=str(trace), screenshots=False)
    button = page.get_by_role("button", name="causal mask").element_handle()
    to_dom, to_frame, in_server, one_click = [], [], [], None
    for i in range(toggles):
        turning_off = i % 2 == 0  # mask off shows row 2's 0.23 on mat; back on hides it
        # the arithmetic readout's shadow root, looked up afresh (a pane may re-render)
        cell = page.get_by_text("The arithmetic of row").first.element_handle()
        frames.items.clear()
        dom, frame = page.evaluate(CLICK_AND_WAIT_JS, [button, cell])
        to_dom.append(dom)
        to_frame.append(frame)
        # let trailing messages land (the URL mirror's round trip): a reader pauses too
        page.wait_for_timeout(SETTLE_MS)
        in_server.append(frames.server_ms())
        if i < 2:  # the readout that changed shows the new state: row 2 on mat, 0.23 or 0
            shown = page.get_by_text("0.23", exact=True).count() > 0
            assert shown == turning_off, "the mask click did not change the readout"
            # report the heavier of the two clicks, mask off and mask on
            click = [(kind, n) for kind, _, n in frames.items]
            if one_click is None or ws_summary(click)[2] > ws_summary(one_click)[2]:
                one_click = click
    if trace:
        browser.stop_tracing()
    page.close()
    return to_dom, to_frame, in_server, one_click


def ws_summary(frames):  # frames of one click -> (sent B, received B, largest frame B)
    sent = sum(n for kind, n in frames if kind == "sent")
    received = sum(n for kind, n in frames if kind == "received")
    return sent, received, max((n for _, n in frames), default=0)


def session_breakdown(target, repeats=5):  # "module:page" -> median ms (build, models, JSON)
    import panel as pn  # noqa: F401  (imported here: the server runs in its own process)
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.hosting import server

    factory = server.page_factory(target) if ":" in target else server.routes()[target]
    logging.getLogger("bokeh").setLevel(logging.ERROR)
    runs = []
    for _ in range(repeats + 1):
        doc = Document()
        with set_curdoc(doc):
            t0 = time.perf_counter()
            page = factory()
            t1 = time.perf_counter()
            page.server_doc(doc, title="benchmark", location=False)
            t2 = time.perf_counter()
            doc.to_json()
            t3 = time.perf_counter()
        runs.append(((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, len(doc.models)))
    runs = runs[1:]  # the first pays for imports
    return tuple(statistics.median(r[i] for r in runs) for i in range(4))


def row(name, value, unit, spread=""):
    limit = TARGETS.get(name)
    verdict = "" if limit is None else ("ok" if value <= limit[0] else "OVER")
    target = "" if limit is None else f"≤ {limit[0]:g} {limit[1]}"
    return f"{name:<30} {value:>9.2f} {unit:<4} {target:<11} {verdict:<4} {spread}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toggles", type=int, default=60, help="mask clicks timed (default 60)")
    p.add_argument("--gets", type=int, default=20, help="GETs per route timed (default 20)")
    p.add_argument("--sessions", type=int, default=20, help="pages of / held open for memory")
    p.add_argument("--interaction-only", action="store_true",
                   help="time the clicks and their websocket bytes only (no memory, GETs)")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="serve this tree instead (a snapshot, to compare before and after)")
    p.add_argument("--trace", type=Path, default=None,
                   help="write a Chromium performance trace of the timed clicks here")
    args = p.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: install Debian's chromium")

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    memory, get_article, get_heatmap = {}, [], []
    with tempfile.NamedTemporaryFile("w+", prefix="ae-bench-", suffix=".log") as log:
        proc = start_server(port, log, args.root.resolve())
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                if not args.interaction_only:
                    memory = {route: memory_per_session(context, base, proc.pid, args.sessions,
                                                        route)
                              for route in ("/live/heatmap", "/live")}
                to_dom, to_frame, in_server, frames = interaction(context, base, args.toggles,
                                                        browser if args.trace else None,
                                                        args.trace)
                browser.close()
            if not args.interaction_only:
                time_gets(base + "/live", 2)  # warm
                get_article = time_gets(base + "/live", args.gets)
                get_heatmap = time_gets(base + "/live/heatmap", args.gets)
        finally:
            stop(proc)

    in_browser = [d - f for d, f in zip(to_dom, in_server)]
    sent, received, largest = ws_summary(frames or [])
    lines = [
        f"{'measure':<30} {'value':>9} {'unit':<4} {'target':<11} {'':<4} spread",
        row("interaction median", statistics.median(to_dom), "ms",
            f"n={len(to_dom)}, min {min(to_dom):.1f}, max {max(to_dom):.1f}"),
        row("interaction p95", percentile(to_dom, 95), "ms",
            f"IQR {percentile(to_dom, 25):.1f}-{percentile(to_dom, 75):.1f}"),
        row("to next frame median", statistics.median(to_frame), "ms",
            f"p95 {percentile(to_frame, 95):.1f}: the frame showing the change is done"),
        row("  server: request -> patch", statistics.median(in_server), "ms",
            "median, from the network stack's frame times"),
        row("  browser: the rest", statistics.median(in_browser), "ms",
            "median: click, apply the patch, style, layout"),
    ]
    if get_article:
        lines += [
            row("session GET /live", statistics.median(get_article), "ms",
                f"n={len(get_article)}, min {min(get_article):.0f}, max {max(get_article):.0f}"),
            row("session GET /live/heatmap", statistics.median(get_heatmap), "ms",
                f"n={len(get_heatmap)}, min {min(get_heatmap):.0f}, "
                f"max {max(get_heatmap):.0f}"),
        ]
    lines += [
        row("ws bytes sent, one click", sent / 1024, "KiB"),
        row("ws bytes received, one click", received / 1024, "KiB",
            f"{sum(1 for k, _ in frames or [] if k == 'received')} frames"),
        row("largest ws message", largest / 1024, "KiB", "largest frame of that click"),
    ]
    for route, (before, after, per_session) in memory.items():
        lines.append(row(f"memory per session {route}", per_session, "MiB",
                         f"RSS {before:.0f} -> {after:.0f} MiB, {args.sessions} pages open"))
    print("\n".join(lines))
    if args.interaction_only:
        return 0
    print("\nwhere a session's server time goes (in this process, median of 5):")
    print(f"{'page':<10} {'build':>8} {'models':>8} {'to JSON':>8} {'models':>7}")
    for route in ("/", "/heatmap"):  # the pages /live and /live/heatmap build
        build, models, to_json, count = session_breakdown(route)
        print(f"{route:<10} {build:>6.0f}ms {models:>6.0f}ms {to_json:>6.0f}ms {count:>7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
