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
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# a live chapter is drawn: every document idle, no deferred panel's placeholder left
DRAWN_JS = """() => window.Bokeh !== undefined && Bokeh.documents.length > 0
  && Bokeh.documents.every((d) => d.is_idle) && !document.querySelector(".ae-loading")"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib_and_cpu_s(pid):  # the process and its children: (RSS MiB, user + system CPU s)
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                              check=False)  # none: pgrep exits 1
    rss = cpu = 0.0
    for p in [pid, *map(int, children.stdout.split())]:
        status = Path(f"/proc/{p}/status").read_text()
        rss += int(next(line for line in status.splitlines()
                        if line.startswith("VmRSS")).split()[1]) / 1024
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return rss, cpu


def wait_for_health(base, proc, timeout_s=300):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(base + "/health", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"{base}/health did not answer within {timeout_s} s")


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

    base = f"http://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from app.hosting.cli import main; main()", "serve",
         "--port", base.rsplit(":", 1)[1]], cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for_health(base, proc)
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
        proc.terminate()
        proc.wait(timeout=30)
    print(f"$ python benchmarks/chapter_sessions.py --route {a.route} --readers {a.readers}")
    print(f"server RSS before / with {a.readers} readers open   {rss0:.0f} / {rss1:.0f} MiB")
    print(f"server memory per reader                          {(rss1 - rss0) / a.readers:.2f} MiB")
    print(f"server CPU per reader (page, session, panels)    {(cpu1 - cpu0) / a.readers:.2f} s")


if __name__ == "__main__":
    main()
