"""Bytes a static page fetches before its first control works, brotli as served.

    python benchmarks/bundle_bytes.py [--routes / /heatmap] [--against REF]
    python benchmarks/bundle_bytes.py --smoke      # /heatmap alone (make test)
    python benchmarks/bundle_bytes.py --stills     # what still descriptions would add

Serves the tree's build with `attention-explorable serve` (benchmarks/lighthouse.py's
`served`; with --against REF, that commit's too, from a git worktree) and opens each static
page in Chromium, a new context (cold cache) per page: a panel's page from navigation, a
chapter once loaded and its first island scrolled into view, until that island is mounted
and its switcher booted (a control would be applied). Every request made until then is
counted at the size of the build's `.br` copy of its file (what the server sends a browser
that takes brotli), or the file's own where the build has none. Prints one row per page:
the Bokeh and Panel bundles it loaded, their KB, everything else's KB and the total, and the
KB fetched until the first island's native controls stood over its still (they answer a tap
before any Bokeh: static/still_controls.js), "-" for a page without them.
"""

import argparse
import contextlib
import datetime
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(HERE))  # after the packages: benchmarks/kernels.py must not shadow them
import lighthouse  # benchmarks/lighthouse.py: a tree's build, served

from app.kit import registry

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHAPTERS = ["/", "/math"]
SMOKE_ROUTES = ["/heatmap"]
TIMEOUT_MS = 120_000

# the first island's native controls over its still are there (static/still_controls.js)
NATIVE_JS = """() => document.querySelector(".ae-island .ae-still-controls") !== null"""

# the first island mounted and every panel's switcher booted
MOUNTED_JS = """() => {
  const island = document.querySelector(".ae-island");
  return island !== null && island.classList.contains("ae-mounted") && window.AE
    && AE.states && [...AE.states.panels.values()].every((p) => p.booted);
}"""


def served_file(site, url):  # -> the build's file a request of the page names, or None
    path = unquote(urlsplit(url).path).lstrip("/")
    target = site / path
    if path == "" or target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


def as_served(path):  # -> bytes the server sends for a file: its .br copy's where it has one
    br = path.with_name(path.name + ".br")
    return (br if br.is_file() else path).stat().st_size


def bundle(path):  # -> "bokeh-widgets", "panel", ... for a Bokeh or Panel bundle, else None
    if path.suffix != ".js" or not path.parent.name.startswith(("bokeh-", "panel-")):
        return None
    return path.name.removesuffix(".js").removesuffix(".min")


def measure(browser, base, site, route):  # -> {bundles: {name: B}, other: B, requests: n}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    urls = []
    page.on("request", lambda r: urls.append(r.url))
    try:
        page.goto(base + route, wait_until="load" if route in CHAPTERS else "commit")
        if route in CHAPTERS:  # the reader reaches the first island
            page.evaluate('document.querySelector(".ae-island").scrollIntoView()')
        page.wait_for_function(f"() => ({NATIVE_JS})() || ({MOUNTED_JS})()",
                               timeout=TIMEOUT_MS, polling=50)
        native = list(urls) if page.evaluate(NATIVE_JS) else None
        # an island with native controls mounts only on intent (static/islands.js): the
        # reader asks for the first one, as its button would, once islands.js (deferred, so
        # possibly after the native controls show) has run
        page.wait_for_function("() => window.AE && AE.islands", timeout=TIMEOUT_MS, polling=50)
        page.evaluate('AE.islands.mountFor(document.querySelector(".ae-island"))')
        page.wait_for_function(MOUNTED_JS, timeout=TIMEOUT_MS, polling=50)
        fetched = list(urls)
    finally:
        context.close()
    out = {"bundles": {}, "other": 0, "requests": 0, "native": None}
    if native is not None:
        out["native"] = sum(as_served(path) for url in dict.fromkeys(native)
                            if url.startswith(base) and (path := served_file(site, url)))
    for url in dict.fromkeys(u for u in fetched if u.startswith(base)):
        path = served_file(site, url)
        if path is None:
            continue
        out["requests"] += 1
        name = bundle(path)
        if name:
            out["bundles"][name] = as_served(path)
        else:
            out["other"] += as_served(path)
    return out


def row(route, m):
    kb = lambda b: f"{b / 1000:,.1f}"
    names = ", ".join(f"{n} {kb(b)}" for n, b in m["bundles"].items())
    total = sum(m["bundles"].values()) + m["other"]
    native = "-" if m["native"] is None else kb(m["native"])
    return (f"| {route} | {names} | {kb(sum(m['bundles'].values()))} | {kb(m['other'])} "
            f"| {kb(total)} | {m['requests']} | {native} |")


def run(tree, routes, label):  # -> {route: measurement} of tree's build
    sites = []
    with lighthouse.served(tree, prepare=sites.append) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            out = {}
            for route in routes:
                out[route] = measure(browser, base, Path(sites[0]), route)
                print(f"measured {route} ({label})", file=sys.stderr, flush=True)
            return out
        finally:
            browser.close()


def still_bytes():  # -> rows: the bytes the still descriptions (app/chapters/still_figures.py)
    # add to each page, as one JSON per page, raw and brotli 11 (no server, no browser)
    import json

    import brotli

    from app.chapters import still_figures

    described = {r.slot: still_figures.of_slot(r.slot) for r in registry.PANELS}
    pages = {c.route: [r.slot for r in registry.PANELS if r.chapter == c.content]
             for c in registry.CHAPTERS}
    pages.update({r.route: [r.slot] for r in registry.PANELS})
    rows = ["| page | panels described | JSON bytes | brotli bytes |", "|---|---|---|---|"]
    for route, slots in pages.items():
        shown = {s: described[s] for s in slots if described[s] is not None}
        text = json.dumps(shown, allow_nan=False, ensure_ascii=False,
                          separators=(",", ":")).encode()
        packed = len(brotli.compress(text, quality=11)) if shown else 0
        rows.append(f"| {route} | {len(shown)} | {len(text) if shown else 0:,} | {packed:,} |")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--routes", nargs="+", default=None)
    p.add_argument("--against", metavar="REF", help="also measure this commit's build")
    p.add_argument("--smoke", action="store_true", help="/heatmap alone")
    p.add_argument("--stills", action="store_true",
                   help="the bytes still descriptions add to each page, brotli (no browser)")
    args = p.parse_args(argv)
    if args.stills:
        print("\n".join(still_bytes()))
        return
    routes = args.routes or (SMOKE_ROUTES if args.smoke else [*CHAPTERS, *registry.panel_routes()])
    commit = lighthouse.git("rev-parse", "--short", "HEAD") or "?"
    trees = [(f"this tree ({commit})", ROOT)]
    with contextlib.ExitStack() as stack:
        if args.against:
            ref = lighthouse.git("rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}")
            if not ref:
                p.error(f"--against {args.against!r}: not a commit in {ROOT}")
            short = lighthouse.git("rev-parse", "--short", ref)
            trees.insert(0, (f"{args.against} ({short})",
                             stack.enter_context(lighthouse.worktree(ref))))
        results = [(label, run(tree, routes, label)) for label, tree in trees]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"bytes before the first usable control, brotli as served, {when}")
    for label, measured in results:
        print(f"\n{label}: KB = 1,000 bytes")
        print("| page | bundles loaded, KB each | bundles KB | other KB | total KB | requests "
              "| KB before a native control |")
        print("|---|---|---|---|---|---|---|")
        for route in routes:
            print(row(route, measured[route]))


if __name__ == "__main__":
    main()
