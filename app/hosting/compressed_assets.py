"""Bokeh's and Panel's bundles, compressed once per process and sent compressed to live pages.

A live page loads bokeh.min.js, bokeh-widgets, bokeh-tables and panel.min.js from Bokeh's
`/static/js/` and Panel's `/static/extensions/panel/`, which Tornado sends as they lie on
disk: 2.8 MB. These handlers send the same files brotli (quality 11) or gzip (level 9), each
compressed once per process, off the server's loop, and kept in memory (about 1 MB in all).

Why not Tornado's `compress_response` alone: it gzips every response again, at level 6, on
the server's loop: bokeh.min.js costs about 28 ms of CPU per reader and goes out at 352 KB,
where brotli 11, made once, is 279 KB and costs nothing per reader (docs/architecture.md,
"Live pages, text first and compressed"; benchmarks/live_compression.py). The first reader
after a start gets gzip 9 (40 ms, once) while brotli is made in the background. The live
server also gzips what else it sends (pages, small files) with Tornado's transform.

    attention-explorable serve                # app/hosting/server.py adds these handlers
    panel serve app/hosting/serve_panel.py --plugins app.hosting.compressed_assets

Nothing here imports panel: its `dist` folder is found from the package's location.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import gzip
import hashlib
import importlib.util
import os
import queue
import threading
from pathlib import Path

from tornado import web

from app.hosting import static_site

MAX_AGE_S = 31_536_000  # a `?v=` URL names one version of the file: a year, as Tornado's own
BROTLI_QUALITY = 11
GZIP_LEVEL = 9


class Worker:
    """One daemon thread running jobs in turn. A ThreadPoolExecutor's threads are joined at
    exit, its queue run first: a server asked to stop would wait seconds for brotli."""

    def __init__(self, name):
        self.name, self.jobs, self.lock, self.thread = name, queue.SimpleQueue(), \
            threading.Lock(), None

    def submit(self, fn, *args):  # -> concurrent Future of fn(*args)
        future = concurrent.futures.Future()
        self.jobs.put((future, fn, args))
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name=self.name, daemon=True)
                self.thread.start()
        return future

    def run(self):
        while True:
            future, fn, args = self.jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except Exception as e:  # noqa: BLE001  any error goes to the awaiting request
                future.set_exception(e)


# gzip first (fast: the reader waits for it), brotli after (slow: nobody waits for it)
_FAST = Worker("ae-gzip")
_SLOW = Worker("ae-brotli")


def bokehjs_dir():  # -> the folder Bokeh's server serves at /static/
    from bokeh.settings import settings

    return Path(settings.bokehjs_path())


def panel_dist_dir():  # -> panel/dist, served at /static/extensions/panel/
    return Path(importlib.util.find_spec("panel").origin).parent / "dist"


@dataclasses.dataclass
class Packed:
    key: tuple  # the file's (mtime, size, inode) when read
    etag: str
    raw: bytes
    gzip: bytes
    br: bytes | None = None  # set by the background job when it is done


_PACKED: dict[str, concurrent.futures.Future] = {}


def _stat_key(path):
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, st.st_ino


def _pack(path, key):  # -> Packed (raw and gzip now), brotli queued
    raw = Path(path).read_bytes()
    packed = Packed(key, '"' + hashlib.sha1(raw).hexdigest()[:20], raw,
                    gzip.compress(raw, GZIP_LEVEL, mtime=0))

    def brotli_later():
        import brotli

        packed.br = brotli.compress(raw, quality=BROTLI_QUALITY)

    _SLOW.submit(brotli_later)
    return packed


def packed(path):  # -> concurrent Future of the Packed file; one job per file and version
    key = _stat_key(path)
    future = _PACKED.get(path)
    if future is None or (future.done() and (future.exception() is not None
                                             or future.result().key != key)):
        future = _PACKED[path] = _FAST.submit(_pack, path, key)
    return future


def encoding(accept, item):  # Accept-Encoding, Packed -> (coding or None, body)
    if item.br is not None and static_site.accepts_encoding(accept, "br"):
        return "br", item.br
    if static_site.accepts_encoding(accept, "gzip"):
        return "gzip", item.gzip
    return None, item.raw


class PackedAsset(static_site.OwnETag):
    """One JavaScript or CSS file under `root`, compressed as the reader accepts."""

    def initialize(self, root):
        self.root = Path(root)

    def resolve(self, path):  # -> an absolute path inside root, or None
        parts = [p for p in path.split("/") if p]
        if not parts or any(p in (".", "..") or p.startswith(".") for p in parts):
            return None
        candidate = self.root.joinpath(*parts)
        return str(candidate) if candidate.is_file() else None

    async def head(self, path):
        await self.get(path, body=False)

    async def get(self, path, body=True):
        file = self.resolve(path)
        if file is None:
            raise web.HTTPError(404)
        item = await asyncio.wrap_future(packed(file))
        coding, data = encoding(self.request.headers.get("Accept-Encoding"), item)
        self.set_header("Content-Type", static_site.CONTENT_TYPES[Path(file).suffix.lower()])
        self.set_header("Cache-Control", f"public, max-age={MAX_AGE_S}, immutable"
                        if self.get_argument("v", "") else "no-cache")
        self.set_header("Vary", "Accept-Encoding")
        if coding:
            self.set_header("Content-Encoding", coding)
        self.send(data, item.etag + (f'-{coding}"' if coding else '"'), body)


def handlers(prefix=""):  # -> Tornado handlers ahead of Bokeh's and Panel's static handlers
    # prefix: a regex for the folders a page may name them under ("/live/static/js/..." from
    # a live page opened with its slash)
    return [(rf"{prefix}/static/(js/[^?#]+\.(?:js|css))", PackedAsset, {"root": bokehjs_dir()}),
            (rf"{prefix}/static/extensions/panel/([^?#]+\.(?:js|css))", PackedAsset,
             {"root": panel_dist_dir()})]


ROUTES = handlers()  # for `panel serve --plugins app.hosting.compressed_assets`


class GzipResponses(web.GZipContentEncoding):
    """Tornado's gzip of a response as it goes (skipping one already encoded), without naming
    Accept-Encoding twice in Vary where the handler named it (the build's files do)."""

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        vary = headers.get("Vary")
        out = super().transform_first_chunk(status_code, headers, chunk, finishing)
        if vary is not None and "accept-encoding" in vary.lower():
            headers["Vary"] = vary
        return out
