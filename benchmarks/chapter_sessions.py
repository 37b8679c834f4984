"""What one reader of a live chapter costs the server: memory held and CPU spent, in Chromium.

    PYTHONPATH=. python benchmarks/chapter_sessions.py [--route /live] [--readers 4]

benchmarks/load.py clicks the head on a panel's live page; a live chapter builds its panels
after the page appears, which that script's browser-less client does not wait for. Here real
pages do: `attention-explorable serve` starts on a free loopback port, one page is opened and
closed to warm the server, then --readers pages of --route are opened one after another, each
until its Bokeh documents are idle and no panel is still to come. Printed: the server's RSS
(the process and its children, from /proc) and CPU before and after, per reader.
"""

import argparse
import os
import time

import load  # this folder's: the server's start, health, stop and its /proc figures

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# a live chapter is drawn: its session attached (as a reader's scroll attaches it,
# static/live_page.js), every document idle, no deferred panel's placeholder left
DRAWN_JS = """() => (!window.AE || !AE.livePage || AE.livePage.attach())
  && window.Bokeh !== undefined && Bokeh.documents.length > 0
  && Bokeh.documents.every((d) => d.is_idle) && !document.querySelector(".ae-loading")"""


def rss_mib_and_cpu_s(pid):  # the server and its children: (RSS MiB, user + system CPU s)
    return load.rss_bytes(pid) / load.MiB, load.cpu_seconds(pid)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--route", default="/live", help="a live route, e.g. /live or /live/math")
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--settle", type=float, default=8.0,
                   help="seconds after the last page is drawn before the server is read")
    a = p.parse_args()
    if not a.route.startswith("/live") or not 1 <= a.readers <= 50:
        p.error("--route must be a live route and --readers 1-50")
    from playwright.sync_api import sync_playwright

    port = load.free_port()
    base = f"http://127.0.0.1:{port}"
    proc = load.start_server(port)
    try:
        load.wait_healthy(base, proc, timeout=300)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM)
            context = browser.new_context()
            warm = context.new_page()  # the server's first session pays for imports
            warm.goto(base + a.route)
            warm.wait_for_function(DRAWN_JS, timeout=180_000)
            warm.close()
            time.sleep(a.settle)
            rss0, cpu0 = rss_mib_and_cpu_s(proc.pid)
            for _ in range(a.readers):
                page = context.new_page()
                page.goto(base + a.route)
                page.wait_for_function(DRAWN_JS, timeout=180_000)
            time.sleep(a.settle)
            rss1, cpu1 = rss_mib_and_cpu_s(proc.pid)
            browser.close()
    finally:
        load.stop_server(proc)
    print(f"$ python benchmarks/chapter_sessions.py --route {a.route} --readers {a.readers}")
    print(f"server RSS before / with {a.readers} readers open   {rss0:.0f} / {rss1:.0f} MiB")
    print(f"server memory per reader                          {(rss1 - rss0) / a.readers:.2f} MiB")
    print(f"server CPU per reader (page, session, panels)    {(cpu1 - cpu0) / a.readers:.2f} s")


if __name__ == "__main__":
    main()
