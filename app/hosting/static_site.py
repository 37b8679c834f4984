"""Serving the static build: the pages every reader gets, with no server session.

`attention-explorable serve` builds (or reuses) the site (app/hosting/build.py) into
`$AE_BUILD_DIR`, by default `.build/site` under the repository, and serves it at the routes
the explorable always had: "/", "/math", "/heatmap", ... ("/heatmap" and "/heatmap/" give the
same file; a deep link's query is read by the page itself). The live Panel sessions move to
"/live" ("/live/math", "/live/heatmap", ...), for what needs Python: your own config.json,
the kernel lab, script embeds.

Responses: HTML with `Cache-Control: no-cache` and an ETag (a browser revalidates, and gets a
304 while the build is unchanged); files under assets/ are named by version or content, so
they are cached for a day. Text files go out precompressed (`.br` or `.gz` beside them in the
build, the smaller one the client accepts, with its `Content-Encoding` and `Vary:
Accept-Encoding`). The
security headers come from app/hosting/security.py's transform, as for every response.

Nothing here imports panel: the handlers are plain Tornado.

Why not Tornado's `StaticFileHandler` (measured 2026-12-04 on the build): it cannot send the
build's brotli copies, so with Tornado's gzip transform a reader of "/" would get 44.2 KB
instead of 34.8 KB (+27 %), bokeh.min.js 351.7 KB instead of 284.3 KB (+24 %), and the server
would spend 2.9 ms of CPU gzipping "/" and 25.6 ms gzipping bokeh.min.js for every reader
(this handler: none, and the file's bytes read once, `_Cache`). A page's theme from its query
(`BuiltFile.resolve`) is the one other thing it adds.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from tornado import web

from app.hosting.routes import CHAPTER_ROUTES
from app.kit import resources

STATIC_DIR = resources.STATIC_DIR  # the app's own files (the example course page), at /assets/
LIVE = "/live"
ASSET_MAX_AGE_S = 86_400

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}


site_dir = resources.site_dir  # -> where serve builds and serves the static site


def live_route(route):  # "/heatmap" -> "/live/heatmap"; "/" -> "/live"
    return LIVE if route == "/" else LIVE + route


def embed_routes(panel_routes):  # the single-panel routes, static and live: may be framed
    return [*panel_routes, *(live_route(r) for r in panel_routes)]


def page_routes(panel_routes):  # -> {route: file in the build}: the chapters' pages, the panels'
    return {r: f"{r.strip('/')}/index.html" if r != "/" else "index.html"
            for r in [*CHAPTER_ROUTES, *panel_routes]}


def patterns(root, panel_routes):  # -> Tornado routes serving the build at `root`
    root = Path(root)
    out = []
    for route, file in page_routes(panel_routes).items():
        base = "" if route == "/" else re.escape(route)
        out.append((rf"{base}/?(index(?:-dark)?\.html)?", BuiltFile,
                    {"root": root, "file": file}))
    out.append((r"/embed/([A-Za-z0-9_-]+\.html)", BuiltFile, {"root": root, "folder": "embed"}))
    out.append((r"/(embed\.js)", BuiltFile, {"root": root, "folder": "."}))  # script embeds
    out.append((r"/oembed/([A-Za-z0-9_-]+\.json)", BuiltFile,  # oEmbed, as built
                {"root": root, "folder": "oembed"}))
    out.append((r"/assets/(.+)", BuiltFile,
                {"root": root, "folder": "assets", "fallback": STATIC_DIR}))
    return out


def live_asset_redirects():  # -> Tornado routes to add ahead of Bokeh's (add_handlers)
    # Panel names a live page's assets relative to its route without the slash
    # ("static/extensions/panel/..." from /live, "../static/..." from /live/heatmap); a page
    # opened with its slash (/live/, where the chapters' own links lead) asks for them under
    # /live/static/extensions/, which Bokeh's per-app static route answers with 404: send it
    # to /static/extensions/. (Bokeh's own files under /live/static/js/ are served as they are.)
    # The same page names its icon "./favicon.ico".
    return [(rf"{LIVE}(?:/[^/]+)?/static/extensions/(.*)", web.RedirectHandler,
             {"url": "/static/extensions/{0}"}),
            (rf"{LIVE}(?:/[^/]+)?/favicon\.ico", web.RedirectHandler, {"url": "/favicon.ico"})]


class _Cache:
    """File bytes and their ETags, read again only when the file changes on disk."""

    def __init__(self):
        self.entries = {}

    def get(self, path):  # -> (bytes, etag) or None when there is no such file
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        hit = self.entries.get(path)
        if hit and hit[0] == key:
            return hit[1], hit[2]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        etag = '"' + hashlib.sha1(data).hexdigest()[:20] + '"'
        self.entries[path] = (key, data, etag)
        return data, etag


CACHE = _Cache()


def accepts_encoding(header, coding):  # Accept-Encoding, "gzip" or "br" -> does the reader
    # take it? ("gzip, deflate, br", "br") -> True; ("gzip;q=0", "gzip") -> False
    for part in (header or "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in (coding, "*"):
            q = params.strip()
            if q.startswith("q="):
                try:
                    return float(q[2:]) > 0
                except ValueError:
                    return False
            return True
    return False


class OwnETag(web.RequestHandler):
    """A handler that sends bytes under an ETag of its own, and 304 to a reader who holds it."""

    def send(self, data, etag, body=True):
        self.set_header("ETag", etag)
        if etag in etags(self.request.headers.get("If-None-Match", "")):
            self.set_status(304)
            return
        self.set_header("Content-Length", str(len(data)))
        if body:
            self.write(data)

    def compute_etag(self):  # ours is set in send; Tornado's would hash the body again
        return None


def etags(header):  # 'W/"a", "b"' -> {'"a"', '"b"'}
    return {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


class BuiltFile(OwnETag):
    """One file of the build: a page (`file`), or a path under `folder` (with `fallback`, a
    second folder for what the build does not hold)."""

    def initialize(self, root, file=None, folder=None, fallback=None):
        self.root = Path(root)
        self.file, self.folder, self.fallback = file, folder, fallback

    def resolve(self, path):  # -> (absolute path, from the build?) or None
        if self.file is not None:  # a page: in the theme its query asks for (the build has both)
            dark = (path == "index-dark.html"
                    or self.get_argument("theme", "").strip().lower() == "dark")
            file = self.file.replace("index.html", "index-dark.html") if dark else self.file
            return str(self.root / file), True
        parts = [p for p in path.split("/") if p]
        if not parts or any(p in (".", "..") or p.startswith(".") for p in parts):
            return None
        candidate = self.root / self.folder / Path(*parts)
        if candidate.is_file():
            return str(candidate), True
        if self.fallback is not None and (Path(self.fallback) / Path(*parts)).is_file():
            return str(Path(self.fallback) / Path(*parts)), False
        return None

    def head(self, path=""):
        return self.get(path, body=False)

    def get(self, path="", body=True):
        found = self.resolve(path)
        entry = CACHE.get(found[0]) if found else None
        if entry is None:
            raise web.HTTPError(404)
        file, built = found
        data, etag = entry
        suffix = Path(file).suffix.lower()
        self.set_header("Content-Type", CONTENT_TYPES.get(suffix, "application/octet-stream"))
        long_lived = built and self.folder == "assets"
        self.set_header("Cache-Control", f"public, max-age={ASSET_MAX_AGE_S}" if long_lived
                        else "no-cache")
        accepted = self.request.headers.get("Accept-Encoding")
        for suffix, coding in ((".br", "br"), (".gz", "gzip")):  # the smaller one first
            packed = CACHE.get(file + suffix) if built else None
            if packed is None:
                continue
            self.set_header("Vary", "Accept-Encoding")
            if accepts_encoding(accepted, coding):
                data, etag = packed[0], packed[1][:-1] + f'-{coding}"'
                self.set_header("Content-Encoding", coding)
                break
        self.send(data, etag, body)
