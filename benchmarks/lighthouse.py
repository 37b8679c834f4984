"""Lighthouse 12 (mobile defaults: simulated slow 4G, 4x CPU slowdown) on the served pages.

    python benchmarks/lighthouse.py [--runs 3] [--routes / /math /heatmap /cost] [--against REF]

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

With --against REF (a commit), REF is checked out in a temporary git worktree and served too,
each side by its own code; each run measures every route on this checkout's server, then at
once on REF's, so both see the same machine. It prints each side's table, then per route
this / REF: the medians' ratio, and the run-by-run ratios' min-max.
"""

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("AE_LIGHTHOUSE_DIR", Path.home() / ".cache" / "ae-lighthouse"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
BARE = "/assets/bench/bare.html"
FIGURES = ("performance", "accessibility", "best-practices", "seo")
METRICS = {"first-contentful-paint": "FCP s", "largest-contentful-paint": "LCP s",
           "total-blocking-time": "TBT ms", "cumulative-layout-shift": "CLS"}
NAMES = (*FIGURES, *METRICS.values(), "blocking ms", "KB loaded")
COMPARED = ("performance", "TBT ms", "blocking ms", "KB loaded")


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


def git(*args):  # -> the stdout of a git command in this checkout, or None if it failed
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() if done.returncode == 0 else None


@contextlib.contextmanager
def worktree(commit):  # -> Path of a detached worktree of commit, removed on exit
    folder = Path(tempfile.mkdtemp(prefix="ae-lighthouse-ref-")) / "tree"
    try:
        if git("worktree", "add", "--detach", str(folder), commit) is None:
            raise SystemExit(f"git worktree add {commit} failed")
        yield folder
    finally:
        git("worktree", "remove", "--force", str(folder))
        shutil.rmtree(folder.parent, ignore_errors=True)
        git("worktree", "prune")


def launcher(tree):  # -> `python -c` code running the tree's own `attention-explorable`
    with open(tree / "pyproject.toml", "rb") as f:
        entry = tomllib.load(f)["project"]["scripts"]["attention-explorable"]
    module, function = entry.split(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def seed_build(site):  # $AE_SEED_BUILD, a built site, copied into `site` (the tests pass the
    # one they built): the server's build finds it current and skips, or rebuilds it when its
    # inputs differ from this tree's, as it would any stale build; copied under the build's lock
    seed = os.environ.get("AE_SEED_BUILD", "").strip()
    if not seed or not Path(seed).is_dir():
        return
    import fcntl

    seed = Path(seed)
    with open(seed.parent / f".{seed.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.copytree(seed, site, dirs_exist_ok=True, symlinks=True)


@contextlib.contextmanager
def served(tree, prepare=None):  # -> base URL of tree's `attention-explorable serve`, the
    # bare page added (and prepare(site), when given: benchmarks/first_touch.py adds its own)
    # cwd and PYTHONPATH: the tree's own app package, not the one installed in the venv
    site = Path(tempfile.mkdtemp(prefix="ae-lighthouse-site-"))
    seed_build(site)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, AE_BUILD_DIR=str(site), PYTHONPATH=os.pathsep.join(
        filter(None, [str(tree), os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryFile() as log:  # the server's stderr, shown if it fails to start
        proc = subprocess.Popen([sys.executable, "-c", launcher(tree), "serve", "--port",
                                 str(port)], cwd=tree, env=env, stdout=subprocess.DEVNULL,
                                stderr=log)
        try:
            deadline = time.monotonic() + 240
            while True:
                try:
                    with urllib.request.urlopen(base + "/health", timeout=5):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        tail = log.read().decode(errors="replace")[-2000:]
                        raise SystemExit(f"the server in {tree} did not answer:\n{tail}")
                    time.sleep(0.5)
            add_bare_page(site)
            if prepare is not None:
                prepare(site)
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            shutil.rmtree(site, ignore_errors=True)


def median(runs, name):
    return statistics.median(r[name] for r in runs)


def fmt(name, value):
    return f"{value:.2f}" if name in ("FCP s", "LCP s", "CLS") else f"{value:.0f}"


def table(rows, n):  # print one server's figures, the pages against its bare page
    bare_tbt, bare_all = median(rows[BARE], "TBT ms"), median(rows[BARE], "blocking ms")

    def to_bare(runs, name):  # -> the page's median as a ratio to the bare page's
        bare = median(rows[BARE], name)
        return median(runs, name) / bare if bare else 0

    print(f"Lighthouse 12, mobile defaults, median of {n} (min-max); "
          f"TBT ratio against the bare Bokeh page's median ({bare_tbt:.0f} ms); blocking ms: "
          f"every long task over 50 ms from the start, first paint or not (bare "
          f"{bare_all:.0f} ms)")
    print("| page | " + " | ".join(NAMES) + " | TBT / bare | blocking / bare | failing audits |")
    print("|---" * (len(NAMES) + 3) + "|")
    for route, runs in rows.items():
        cells = []
        for name in NAMES:
            values = [r[name] for r in runs]
            spread = f" ({fmt(name, min(values))}-{fmt(name, max(values))})" \
                if min(values) != max(values) else ""
            cells.append(fmt(name, statistics.median(values)) + spread)
        failing = sorted({a for r in runs for a in r["failing"]})
        label = "bare Bokeh page" if route == BARE else route
        print(f"| {label} | " + " | ".join(cells) + f" | {to_bare(runs, 'TBT ms'):.2f} | "
              f"{to_bare(runs, 'blocking ms'):.2f} | {', '.join(failing) or '-'} |")


def comparison(this, ref, label, ref_label):  # print this / REF per route and figure
    print(f"{label} / {ref_label}, per figure: this median / REF median = their ratio "
          f"(min-max of the run-by-run ratios, each run of this against REF's right after "
          f"it); the bare page, the same file on both, shows the noise")
    print("| page | " + " | ".join(COMPARED) + " |")
    print("|---" * (len(COMPARED) + 1) + "|")
    for route in this:
        cells = []
        for name in COMPARED:
            a, b = median(this[route], name), median(ref[route], name)
            cell = f"{fmt(name, a)} / {fmt(name, b)} = " + (f"{a / b:.2f}" if b else "-")
            pairs = [x[name] / y[name] for x, y in zip(this[route], ref[route]) if y[name]]
            if pairs:
                cell += f" ({min(pairs):.2f}-{max(pairs):.2f})"
            cells.append(cell)
        label = "bare Bokeh page" if route == BARE else route
        print(f"| {label} | " + " | ".join(cells) + " |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--routes", nargs="+", default=["/", "/math", "/heatmap", "/cost"])
    p.add_argument("--against", metavar="REF",
                   help="a commit to measure beside this checkout, run for run")
    args = p.parse_args(argv)
    trees = [ROOT]
    if args.against:  # a bad REF fails here, before npm, a build or a server
        commit = git("rev-parse", "--verify", "--quiet", "--end-of-options",
                     f"{args.against}^{{commit}}")
        if not commit:
            p.error(f"--against {args.against!r}: not a commit in {ROOT}")
        dirty = " + uncommitted changes" if git("status", "--porcelain") else ""
        labels = (f"this checkout ({git('rev-parse', '--short', 'HEAD')}{dirty})",
                  f"--against {args.against} ({git('rev-parse', '--short', commit)})")
    binary = lighthouse_bin()
    with contextlib.ExitStack() as stack:
        if args.against:
            trees.append(stack.enter_context(worktree(commit)))
        bases = [stack.enter_context(served(tree)) for tree in trees]
        sides = [{route: [] for route in [BARE, *args.routes]} for _ in trees]
        for run in range(args.runs):  # run by run, route by route, side by side: same conditions
            for route in sides[0]:
                for base, rows in zip(bases, sides):
                    rows[route].append(figures(run_lighthouse(binary, base + route)))
                print(f"measured {route} (run {run + 1} of {args.runs})", file=sys.stderr,
                      flush=True)
    if not args.against:
        table(sides[0], args.runs)
        return 0
    for label, rows in zip(labels, sides):
        print(f"\n{label}:")
        table(rows, args.runs)
    print()
    comparison(*sides, *labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
