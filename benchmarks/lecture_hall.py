"""A lecture hall opening the explorable: N fresh readers arriving over T seconds, no browser.

    PYTHONPATH=. python benchmarks/lecture_hall.py                        # 300 readers / 30 s on /
    PYTHONPATH=. python benchmarks/lecture_hall.py --route /heatmap
    PYTHONPATH=. python benchmarks/lecture_hall.py --route / --route /heatmap --readers 30 \\
        --seconds 3 --json                                                 # CI size

Each reader fetches what a fresh browser (empty cache) fetches for the page: the HTML, then
every script, stylesheet and icon it names, the stylesheets named inside its Bokeh document
(the JSON in the page, or the document a live page pulls over its socket), and, recursively,
what those stylesheets' url()s and @imports name; at most 6 requests at a time, each URL
once, all with `Accept-Encoding: gzip, deflate, br` as Chromium sends it (--gzip-only:
gzip). A live page (one that carries a session token) also
opens its websocket, pulls its document and says it is rendered, as BokehJS does.

The script starts `attention-explorable serve` on a free loopback port (or measures a running
one with --url, loopback only) and stops it on exit. Readers arrive evenly spaced over
--seconds. Reported per route: errors, reader time (from sending the page's request to the
last byte of its last asset) median / p95 / max, the page's time to first byte, bytes on the
wire per reader (bodies as sent, compressed, plus response headers), requests per reader,
readers that needed a websocket, and server CPU per reader (user + system time of the server
process and its children, from /proc/<pid>/stat, over the route's run, divided by readers).

Bounded: loopback only, at most 2,000 readers over at most 600 s per route, a timeout on
every request and a --time-limit on the whole run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import html
import json
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import load  # the sibling benchmark: server start/stop, /proc readings, the Bokeh protocol
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from app.kit import island_documents

MAX_READERS = 2000
MAX_SECONDS = 600.0
PARALLEL = 6  # requests a browser makes at once to one host
REQUEST_TIMEOUT_S = 60.0
ACCEPT_ENCODING = "gzip, deflate, br"  # what Chromium sends; --gzip-only for "gzip"

TAG = re.compile(r"<(script|link|img)\b([^>]*)>", re.IGNORECASE)
ATTR = re.compile(r"""\b(src|href|rel)\s*=\s*(["'])(.*?)\2""", re.IGNORECASE | re.DOTALL)
JSON_SCRIPT = re.compile(r'<script type="application/json" id="[^"]+">(.*?)</script>',
                         re.DOTALL)
CSS_REF = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")
TOKEN = re.compile(r'"token"\s*:\s*"(eyJ[A-Za-z0-9_\-.=]+)"')  # a live page's session (a JWT)


class ReaderError(Exception):
    pass


def page_refs(text):  # the page's HTML -> URLs a browser fetches for it (relative as written)
    refs = []
    for tag, attrs in TAG.findall(text):
        values = {name.lower(): value for name, _, value in ATTR.findall(attrs)}
        tag = tag.lower()
        if tag in ("script", "img") and values.get("src"):
            refs.append(values["src"])
        elif tag == "link" and values.get("href"):
            rel = values.get("rel", "").lower().split()
            if "stylesheet" in rel or "icon" in rel or "modulepreload" in rel:
                refs.append(values["href"])
    for raw in JSON_SCRIPT.findall(text):
        try:
            data = json.loads(html.unescape(raw))
        except ValueError:
            continue
        refs += stylesheet_urls(data)
        refs += mounted_at_once(data)
    return [r for r in refs if r and not r.startswith(("data:", "blob:", "#"))]


def mounted_at_once(config):  # an islands config -> what loads before the reader scrolls
    # A panel's own page is one island in view: it mounts at once and loads Bokeh, Panel,
    # the switcher, its table and its document. A chapter's islands wait for the reader.
    groups = config.get("groups") if isinstance(config, dict) else None
    if not isinstance(groups, dict) or len(groups) != 1:
        return []
    group = next(iter(groups.values()))
    return [*config.get("scripts", []), config.get("switcher", ""), *group.get("tables", []),
            group.get("doc", "")]


def island_doc_refs(text):  # a panel document's script -> the stylesheets it names (URLs
    # relative to the page that loads it); read as the browser reads it (shared stylesheets
    # put back in place)
    try:
        _, doc = island_documents.read_doc_script(text)
    except (AttributeError, ValueError):  # not a document script: it names nothing
        return []
    return stylesheet_urls(doc)


def stylesheet_urls(value):  # a Bokeh document (JSON) -> the urls of its ImportedStyleSheets
    found = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if v.get("name") == "ImportedStyleSheet":
                url = (v.get("attributes") or {}).get("url")
                if url:
                    found.append(url)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found


def css_refs(text):
    refs = [m.group(2) or m.group(4) for m in CSS_REF.finditer(text)]
    return [r.strip() for r in refs if r and not r.strip().startswith(("data:", "#"))]


class Reader:
    """One fresh browser's visit: what it fetched, how long it took, what went wrong."""

    def __init__(self):
        self.requests = 0
        self.bytes = 0
        self.ttfb = None
        self.seconds = None
        self.websocket = False
        self.error = None


def wire_bytes(response):  # body as received (compressed) + the response's header lines
    head = sum(len(k) + len(v) + 4 for k, v in response.headers.get_all()) + 17
    return len(response.body or b"") + head


def decoded(response):  # -> the body as text, decompressed when it came compressed
    body = response.body or b""
    coding = response.headers.get("Content-Encoding", "").lower()
    if coding == "gzip":
        body = gzip.decompress(body)
    elif coding == "br":
        import brotli

        body = brotli.decompress(body)
    return body.decode("utf-8", "replace")


async def fetch(http, url, reader, first=False):
    started = time.perf_counter()
    first_byte = []

    def on_header(line):
        if not first_byte:
            first_byte.append(time.perf_counter())

    request = HTTPRequest(url, headers={"Accept-Encoding": ACCEPT_ENCODING},
                          decompress_response=False,
                          request_timeout=REQUEST_TIMEOUT_S, connect_timeout=REQUEST_TIMEOUT_S,
                          header_callback=on_header if first else None)
    try:
        response = await http.fetch(request, raise_error=False)
    except (OSError, TimeoutError) as e:
        raise ReaderError(f"GET {urlsplit(url).path}: {type(e).__name__}: {e}") from None
    reader.requests += 1
    if response.code != 200:
        raise ReaderError(f"GET {urlsplit(url).path}: HTTP {response.code}")
    reader.bytes += wire_bytes(response)
    if first and first_byte:
        reader.ttfb = first_byte[0] - started
    return response


async def open_socket(base, route, token, reader):  # -> the live page's document (JSON)
    session = load.Session(base, route)
    parts = urlsplit(base)
    ws_path = route.split("?")[0].rstrip("/") + "/ws"
    request = HTTPRequest(f"ws://{parts.netloc}{ws_path}",
                          headers={"Origin": f"{parts.scheme}://{parts.netloc}"},
                          connect_timeout=REQUEST_TIMEOUT_S, request_timeout=REQUEST_TIMEOUT_S)
    try:
        session.ws = await asyncio.wait_for(
            websocket_connect(request, subprotocols=["bokeh", token]), REQUEST_TIMEOUT_S)
    except Exception as e:  # noqa: BLE001 - any failure to connect is this reader's error
        raise ReaderError(f"websocket {ws_path}: {type(e).__name__}: {e}") from None
    reader.websocket = True
    session._reader = asyncio.ensure_future(session._read())
    try:
        await session.expect("ACK")
        await session.send("PULL-DOC-REQ", {})
        reply = await session.expect("PULL-DOC-REPLY")
        await session.send("PATCH-DOC", {"events": [load.document_ready()]})
        return reply.content["doc"]
    except load.LoadError as e:
        raise ReaderError(str(e)) from None
    finally:
        await session.close()


async def read_page(http, base, route):  # -> Reader: one fresh browser opening route
    reader = Reader()
    host = urlsplit(base).netloc
    started = time.perf_counter()
    try:
        page_url = base + route
        page = await fetch(http, page_url, reader, first=True)
        text = decoded(page)
        queue = [urljoin(page_url, r) for r in page_refs(text)]
        match = TOKEN.search(text)
        socket = None
        if match:  # a live page: its document, and the stylesheets it names, come by socket
            socket = asyncio.ensure_future(open_socket(base, route, match.group(1), reader))
        seen = set()
        gate = asyncio.Semaphore(PARALLEL)

        async def asset(url):
            async with gate:
                response = await fetch(http, url, reader)
            if urlsplit(url).path.endswith(".css"):
                return [urljoin(url, r) for r in css_refs(decoded(response))]
            if "/assets/docs/" in urlsplit(url).path:
                return [urljoin(page_url, r) for r in island_doc_refs(decoded(response))]
            return []

        while queue:
            batch = []
            for url in queue:
                key = url.split("#", 1)[0]
                if key in seen:
                    continue
                seen.add(key)
                if urlsplit(key).netloc != host:
                    raise ReaderError(f"{route} names another host: {key}")
                batch.append(key)
            more = await asyncio.gather(*(asset(u) for u in batch))
            queue = [u for refs in more for u in refs]
            if socket is not None and not queue:
                doc = await socket
                socket = None
                queue = [urljoin(page_url, u) for u in stylesheet_urls(doc)]
        reader.seconds = time.perf_counter() - started
    except ReaderError as e:
        reader.error = str(e)
    except Exception as e:  # noqa: BLE001 - anything else is this reader's error too
        reader.error = f"{type(e).__name__}: {e}"
    return reader


async def hall(base, route, readers, seconds, pid, deadline):  # -> this route's report
    http = AsyncHTTPClient(force_instance=True, max_clients=max(64, readers * PARALLEL))
    cpu_before = load.cpu_seconds(pid) if pid else 0.0
    started = time.perf_counter()
    gap = seconds / readers

    async def arrive(i):
        await asyncio.sleep(i * gap)
        return await read_page(http, base, route)

    try:
        left = max(1.0, deadline - time.monotonic())
        results = await asyncio.wait_for(asyncio.gather(*(arrive(i) for i in range(readers))),
                                         left)
    finally:
        http.close()
    wall = time.perf_counter() - started
    cpu = (load.cpu_seconds(pid) - cpu_before) if pid else float("nan")
    ok = [r for r in results if r.error is None]
    times = [r.seconds for r in ok]
    errors = [r.error for r in results if r.error]
    return {
        "route": route,
        "readers": readers,
        "seconds": seconds,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "websocket_readers": sum(r.websocket for r in results),
        "reader_ms_median": ms(statistics.median(times)) if times else None,
        "reader_ms_p95": ms(load.percentile(times, 95)) if times else None,
        "reader_ms_max": ms(max(times)) if times else None,
        "page_ttfb_ms_median": ms(statistics.median([r.ttfb for r in ok if r.ttfb]))
        if any(r.ttfb for r in ok) else None,
        "bytes_per_reader": int(statistics.median([r.bytes for r in ok])) if ok else None,
        "requests_per_reader": int(statistics.median([r.requests for r in ok])) if ok else None,
        "server_cpu_ms_per_reader": round(1000 * cpu / readers, 2) if pid else None,
        "wall_s": round(wall, 2),
    }


def ms(seconds):
    return round(seconds * 1000, 1)


async def run(base, routes, readers, seconds, pid, time_limit):
    deadline = time.monotonic() + time_limit
    reports = []
    for route in routes:
        reports.append(await hall(base, route, readers, seconds, pid, deadline))
    return reports


def print_report(reports, command):
    print(command)
    for r in reports:
        print(f"\n{r['route']}: {r['readers']} readers over {r['seconds']:g} s "
              f"(took {r['wall_s']} s)")
        rows = [
            ("errors", r["errors"]),
            ("readers that opened a websocket", r["websocket_readers"]),
            ("reader time median / p95 / max",
             f"{r['reader_ms_median']} / {r['reader_ms_p95']} / {r['reader_ms_max']} ms"),
            ("page time to first byte, median", f"{r['page_ttfb_ms_median']} ms"),
            ("bytes on the wire per reader", f"{r['bytes_per_reader']:,}"
             if r["bytes_per_reader"] is not None else "-"),
            ("requests per reader", r["requests_per_reader"]),
            ("server CPU per reader", f"{r['server_cpu_ms_per_reader']} ms"),
        ]
        load.print_rows(rows, r["error_samples"], indent="  ")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--route", action="append", help="page to open (repeatable; default /)")
    p.add_argument("--readers", type=int, default=300, help=f"readers (max {MAX_READERS})")
    p.add_argument("--seconds", type=float, default=30.0,
                   help=f"readers arrive evenly over this many seconds (max {MAX_SECONDS:g})")
    p.add_argument("--url", help="measure an already running site (loopback only) instead")
    p.add_argument("--pid", type=int, help="with --url: the server's pid, for its CPU time")
    p.add_argument("--server-arg", action="append", default=[],
                   help="extra `serve` argument for the server this script starts")
    p.add_argument("--time-limit", type=float, default=900.0, help="seconds for the whole run")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--gzip-only", action="store_true",
                   help="readers accept gzip only (an older client), not Brotli")
    a = p.parse_args(argv)
    global ACCEPT_ENCODING
    if a.gzip_only:
        ACCEPT_ENCODING = "gzip"
    routes = a.route or ["/"]
    if not (1 <= a.readers <= MAX_READERS and 0 < a.seconds <= MAX_SECONDS
            and 0 < a.time_limit <= 3600 and len(routes) <= 20):
        p.error(f"out of bounds: readers 1-{MAX_READERS}, seconds up to {MAX_SECONDS:g}, "
                "time limit up to 3600 s, at most 20 routes")
    if any(not r.startswith("/") for r in routes):
        p.error("a route starts with /")
    if a.url:
        load.require_loopback(a.url)
        reports = asyncio.run(run(a.url.rstrip("/"), routes, a.readers, a.seconds, a.pid,
                                  a.time_limit))
    else:
        with own_server(a.server_arg) as (base, pid):
            reports = asyncio.run(run(base, routes, a.readers, a.seconds, pid, a.time_limit))
    if a.json:
        print(json.dumps(reports, indent=2))
    else:
        print_report(reports, "PYTHONPATH=. python benchmarks/lecture_hall.py " + " ".join(
            argv if argv is not None else sys.argv[1:]))
    return 0 if all(r["errors"] == 0 for r in reports) else 1


@contextlib.contextmanager
def own_server(args):  # -> (base url, pid): `attention-explorable serve` on a free port
    with load.own_server(list(args)) as served:
        yield served


if __name__ == "__main__":
    sys.exit(main())
