"""Serving: the article at /, each panel alone at its own route for iframes."""

import importlib
from pathlib import Path

import panel as pn
from panel.io.document import unlocked
from panel.io.state import set_curdoc
from panel.reactive import Syncable

# route -> "module:factory" of a single-panel page; the article shows them all.
PANEL_ROUTES = {
    "/heatmap": "app.panels.heatmap:page",
    "/ladder": "app.panels.ladder:page",
    "/agreement": "app.panels.agreement:page",
    "/overflow": "app.panels.overflow:page",
    "/online-softmax": "app.panels.online_softmax:page",
    "/sqrt-dk": "app.panels.sqrt_dk:page",
    "/cost": "app.panels.cost:page",
    "/decode-bill": "app.panels.decode_bill:page",
    "/memory-bill": "app.panels.memory_bill:page",
    "/kernel-lab": "app.panels.kernel_lab:page",
}

# Panel holds each incoming widget change 50 ms to batch bursts; sliders here report on
# release (value_throttled) or are cheap to recompute, so answer at once.
Syncable._debounce = 0


# One interaction, one websocket message. Panel writes each component's model changes as
# its own PATCH-DOC message, so a click on the head went out as 16 messages, each serialized
# and written in turn. Holding the document for the whole change makes Panel's `unlocked`
# send them as one; with the wait below, the server's share of a click on /heatmap fell
# from about 40 ms to 12-16 ms here (benchmarks/app_latency.py).
def _batched(process):
    def run(self, doc, *args):
        with set_curdoc(doc), unlocked():
            return process(self, doc, *args)

    run.__wrapped__ = process
    return run


# Bokeh answers the browser's change with an "OK" while our handler is already running; when
# the handler's patch is ready and that reply still holds the socket's write lock, Panel
# parks the patch and retries 10 ms later. Wait for pending writes first, then handle the
# change in one go: the patch goes out as soon as it is made.
def _after_pending_writes(coroutine):
    async def run(self, doc, *args, **kwargs):
        session = getattr(getattr(doc, "session_context", None), "session", None)
        for conn in list(getattr(session, "_subscribed_connections", ())):
            lock = getattr(getattr(conn, "_socket", None), "write_lock", None)
            if lock is not None:
                async with lock:
                    pass
        return await coroutine(self, doc, *args, **kwargs)

    run.__wrapped__ = coroutine
    return run


if not hasattr(Syncable._change_event, "__wrapped__"):
    Syncable._change_event = _batched(Syncable._change_event)
    Syncable._process_bokeh_event = _batched(Syncable._process_bokeh_event)
    Syncable._change_coroutine = _after_pending_writes(Syncable._change_coroutine)
    Syncable._event_coroutine = _after_pending_writes(Syncable._event_coroutine)


def page_factory(target):  # "module:function" -> callable building a fresh page per session
    module_name, func = target.split(":")
    return getattr(importlib.import_module(module_name), func)


TITLE = "Scaled dot-product attention, worked"
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"  # served at /assets


def routes():
    from app import article, article_math

    pages = {"/": article.page, "/math": article_math.page}
    for route, target in PANEL_ROUTES.items():
        pages[route] = page_factory(target)
    return pages


def titles(pages):  # {route: factory} -> {route: the HTML <title>}
    return {route: TITLE if route == "/" else f"{route.strip('/')} · {TITLE}" for route in pages}


def static_dirs():  # our own assets (CSS, images, the example course page), never a CDN
    return {"assets": str(STATIC_DIR)} if STATIC_DIR.is_dir() else {}


def main(args):
    origins = args.allow_websocket_origin or [f"localhost:{args.port}", f"127.0.0.1:{args.port}"]
    print(f"serving the attention explorable on http://localhost:{args.port}/", flush=True)
    pages = routes()
    pn.serve(pages, port=args.port, address=args.address, websocket_origin=origins,
             show=args.show, title=titles(pages), static_dirs=static_dirs(), start=True)
    return 0
