"""Lighthouse 12 (mobile defaults: simulated slow 4G, 4x CPU slowdown) on the served pages.

    python benchmarks/lighthouse.py [--runs 3] [--routes / /math /heatmap /cost]

Starts `attention-explorable serve` on a free loopback port (the static build, sent
compressed as `make serve` sends it), adds a bare Bokeh page to the build for comparison
(one 8 x 8 heatmap with its numbers, two sliders and a CustomJS, from
`bokeh.embed.file_html`, its two scripts deferred behind a heading and a paragraph: what
Bokeh's own start-up costs), and runs Lighthouse on each page `--runs` times. Prints the
median of each figure, its spread (min-max), total blocking time as a ratio to the bare
page's in the same run (Lighthouse's, after the first paint, and every long task's from the
start of the load), and the bytes "/" loads before the reader scrolls (every request of
a Lighthouse load, which never scrolls). Lighthouse is installed with npm into
~/.cache/ae-lighthouse when it is missing; Debian's chromium runs it.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("AE_LIGHTHOUSE_DIR", Path.home() / ".cache" / "ae-lighthouse"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
BARE = "/assets/bench/bare.html"
FIGURES = ("performance", "accessibility", "best-practices", "seo")
METRICS = {"first-contentful-paint": "FCP s", "largest-contentful-paint": "LCP s",
           "total-blocking-time": "TBT ms", "cumulative-layout-shift": "CLS"}


def lighthouse_bin():  # -> path of the lighthouse CLI, installed into CACHE if missing
    binary = CACHE / "node_modules" / ".bin" / "lighthouse"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        print(f"installing lighthouse@12 into {CACHE} (npm)", file=sys.stderr, flush=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund",
                        "--prefix", str(CACHE), "lighthouse@12"], check=True, timeout=600)
    return binary


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bare_page():  # -> HTML: the bare Bokeh page, its scripts deferred behind the text
    import numpy as np
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, Slider
    from bokeh.plotting import figure
    from bokeh.resources import CDN

    n = 8
    xs, ys = np.meshgrid(np.arange(n), np.arange(n))
    w = np.random.default_rng(0).random((n, n))
    source = ColumnDataSource({"x": xs.ravel(), "y": ys.ravel(), "w": w.ravel(),
                               "t": [f"{v:.2f}" for v in w.ravel()]})
    fig = figure(width=360, height=360, tools="")
    fig.rect("x", "y", 1, 1, source=source, fill_color="#0072b2", fill_alpha="w")
    fig.text("x", "y", "t", source=source, text_align="center", text_baseline="middle")
    sliders = [Slider(start=1, end=8, value=6, step=1, title=t) for t in ("length", "query")]
    code = "const d = source.data; d.w = d.w.map((v) => (v + 0.1) % 1); source.change.emit();"
    for s in sliders:
        s.js_on_change("value", CustomJS(args={"source": source}, code=code))
    page = file_html(column(*sliders, fig), CDN, "A bare Bokeh page")
    page = page.replace('<script type="text/javascript" src=', '<script defer src=')
    page = page.replace("<head>", '<head>\n<meta name="viewport" '
                        'content="width=device-width, initial-scale=1">', 1)
    return page.replace("<body>", "<body>\n<h1>A bare Bokeh page</h1>\n<p>One heatmap, two "
                        "sliders and a CustomJS, its scripts deferred.</p>", 1)


def add_bare_page(site):  # write it into the served build, its scripts from the build's copy
    import re

    import bokeh

    page = bare_page()
    page = re.sub(r"https://cdn\.bokeh\.org/bokeh/release/(bokeh[a-z-]*)-[0-9.]+(\.min)?\.js",
                  rf"../bokeh-{bokeh.__version__}/\1\2.js", page)
    folder = Path(site) / "assets" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bare.html").write_text(page, encoding="utf-8")
    import gzip

    (folder / "bare.html.gz").write_bytes(gzip.compress(page.encode(), 9))


def run_lighthouse(binary, url):  # -> the report's JSON
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    subprocess.run([str(binary), url, "--quiet", "--output=json", f"--output-path={path}",
                    "--chrome-flags=--headless=new --no-sandbox --disable-gpu"],
                   check=True, env=env, timeout=300, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    try:
        return json.loads(Path(path).read_text())
    finally:
        os.unlink(path)


def figures(report):  # -> {name: value} of one run
    cats, audits = report["categories"], report["audits"]
    out = {name: round(cats[name]["score"] * 100) for name in FIGURES}
    for audit, name in METRICS.items():
        value = audits[audit]["numericValue"]
        out[name] = value / 1000 if name.endswith(" s") else value
    requests = audits["network-requests"]["details"]["items"]
    out["KB loaded"] = sum(r.get("transferSize", 0) for r in requests) / 1000
    # Lighthouse counts blocking only after the first paint: a page that paints after its
    # scripts ran (the bare page, here) hides them. This counts every long task's time over
    # 50 ms from the start of the load, for a fair ratio between the two kinds of page.
    tasks = audits["long-tasks"]["details"]["items"]
    out["blocking ms"] = sum(max(0.0, t["duration"] - 50) for t in tasks)
    out["failing"] = sorted({ref["id"] for cat in FIGURES[1:]
                             for ref in cats[cat]["auditRefs"]
                             if audits[ref["id"]].get("score") not in (None, 1)})
    return out


def serve(site):  # -> (Popen, base URL) of `attention-explorable serve`, once it answers
    port = free_port()
    env = dict(os.environ, AE_BUILD_DIR=str(site))
    cli = shutil.which("attention-explorable") or str(Path(sys.executable).parent
                                                      / "attention-explorable")
    proc = subprocess.Popen([cli, "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5):
                return proc, base
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the server exited before it answered")
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not answer within 240 s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--routes", nargs="+", default=["/", "/math", "/heatmap", "/cost"])
    args = p.parse_args(argv)
    binary = lighthouse_bin()
    site = Path(tempfile.mkdtemp(prefix="ae-lighthouse-site-"))
    proc, base = serve(site)
    try:
        add_bare_page(site)
        rows = {}
        for route in [BARE, *args.routes]:
            runs = [figures(run_lighthouse(binary, base + route)) for _ in range(args.runs)]
            rows[route] = runs
            print(f"measured {route} ({args.runs} runs)", file=sys.stderr, flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(site, ignore_errors=True)
    def median(runs, name):
        return statistics.median(r[name] for r in runs)

    def to_bare(runs, name):  # -> the page's median as a ratio to the bare page's
        bare = median(rows[BARE], name)
        return median(runs, name) / bare if bare else 0

    bare_tbt, bare_all = median(rows[BARE], "TBT ms"), median(rows[BARE], "blocking ms")
    names = [*FIGURES, *METRICS.values(), "blocking ms", "KB loaded"]
    print(f"Lighthouse 12, mobile defaults, median of {args.runs} (min-max); "
          f"TBT ratio against the bare Bokeh page's median ({bare_tbt:.0f} ms); blocking ms: "
          f"every long task over 50 ms from the start, first paint or not (bare "
          f"{bare_all:.0f} ms)")
    print("| page | " + " | ".join(names) + " | TBT / bare | blocking / bare | failing audits |")
    print("|---" * (len(names) + 3) + "|")
    for route, runs in rows.items():
        cells = []
        for name in names:
            values = [r[name] for r in runs]
            med = statistics.median(values)
            fmt = "{:.2f}" if name in ("FCP s", "LCP s", "CLS") else "{:.0f}"
            spread = f" ({fmt.format(min(values))}-{fmt.format(max(values))})" \
                if min(values) != max(values) else ""
            cells.append(fmt.format(med) + spread)
        failing = sorted({a for r in runs for a in r["failing"]})
        label = "bare Bokeh page" if route == BARE else route
        print(f"| {label} | " + " | ".join(cells) + f" | {to_bare(runs, 'TBT ms'):.2f} | "
              f"{to_bare(runs, 'blocking ms'):.2f} | {', '.join(failing) or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
