"""CPU to build one live session's document, route by route, in this process.

What a live page costs the server before any click: the page's viewers built in a fresh
Bokeh Document, as `pn.serve` builds them for a session, and the document serialized, as
its first message sends it. A chapter's panels are built too (on a server they follow a
moment after the page, in the same session). Printed per route: the median and the spread
(fastest to slowest) of --runs documents, in CPU milliseconds of this process.

    python benchmarks/session_cpu.py [--runs 15] [--route /heatmap ...]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

# the repository's packages ahead of this folder (whose kernels.py would shadow `kernels`)
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def document_cpu(factory):  # -> CPU seconds to build and serialize one session's document
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    start = time.process_time()
    doc = Document()
    with set_curdoc(doc):  # no session context: a chapter builds its panels at once
        page = factory()  # a live chapter puts its roots in the document itself
        (page if hasattr(page, "server_doc") else pn.panel(page)).server_doc(doc)
    doc.to_json()
    return time.process_time() - start


def main(argv=None):
    from app.hosting import server
    from app.kit import panel_internals

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="documents per route (default 15)")
    parser.add_argument("--route", action="append", help="a route such as /heatmap (repeatable; "
                        "default: every route)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    factories = server.routes()
    unknown = [r for r in args.route or [] if r not in factories]
    if unknown:
        parser.error(f"unknown route(s) {unknown}; known: {sorted(factories)}")
    panel_internals.install()  # as a live server runs
    print(f"{'route':16} {'median':>8} {'fastest':>8} {'slowest':>8}   CPU ms per document "
          f"({args.runs} runs, after one unmeasured)")
    total = 0.0
    for route in args.route or list(factories):
        document_cpu(factories[route])  # imports and caches (tables, styles) out of the count
        runs = [document_cpu(factories[route]) * 1e3 for _ in range(args.runs)]
        median = statistics.median(runs)
        total += median
        print(f"{route:16} {median:8.0f} {min(runs):8.0f} {max(runs):8.0f}")
    print(f"{'sum of medians':16} {total:8.0f}")


if __name__ == "__main__":
    main()
