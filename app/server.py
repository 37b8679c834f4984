"""Serving: the article at /, each panel alone at its own route for iframes."""

import gc
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


def serve_settings(args, environ=None):  # parsed `serve` options -> keyword arguments of pn.serve
    from app import security
    from app.server_options import env_list

    embed = [security.parse_origin(o)
             for o in (args.embed_origin or env_list("AE_EMBED_ORIGINS", environ))]
    origins = list(args.allow_websocket_origin or env_list("AE_WEBSOCKET_ORIGINS", environ)
                   or [f"localhost:{args.port}", f"127.0.0.1:{args.port}"])
    origins += [h for h in map(security.websocket_host, embed) if h not in origins]
    lifetime_ms = int(args.unused_session_lifetime * 1000)
    patterns = [(security.HEALTH_PATH, security.HealthHandler)]
    if args.admin:
        from app.server_options import admin_password

        patterns += security.admin_patterns(admin_password(args, environ), lifetime_ms,
                                            wrap=prepare_session)
    return {
        "port": args.port, "address": args.address, "websocket_origin": origins,
        "num_procs": args.num_procs,
        "unused_session_lifetime_milliseconds": lifetime_ms,
        "check_unused_sessions_milliseconds": int(args.check_unused_sessions * 1000),
        "keep_alive_milliseconds": int(args.keep_alive * 1000),
        "session_token_expiration": int(args.reconnect_within),
        "use_xheaders": args.behind_proxy,
        "extra_patterns": patterns,
        "transforms": [security.security_headers(PANEL_ROUTES, embed, origins)],
    }


def prepare_session(factory, reconnect=True):
    # Each session: reconnect after a dropped connection (Bokeh's client retries with the
    # page's token; --reconnect), and its assets from this server. Panel 1.9.4 points a
    # session's stylesheets at its own server only when it renders the page itself (the
    # HTML of a GET). A script embed's session (autoload.js) and a reused
    # session get cdn.holoviz.org, or paths relative to the course's page, which this site's
    # CSP, an offline network and the course's server all refuse. Set the session's asset
    # base before its page is built, as the GET would: relative for our own pages, our
    # absolute URL for a script embed. The session's Location resets it from the path it
    # sees (first /route/autoload.js, then the course page's own path, read as if it were
    # on our server): in a script embed, put ours back each time.
    from panel.io.resources import LOCAL_DIST

    def build(*args, **kwargs):
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.config.reconnect_session = bool(reconnect)
            rel = pn.state.rel_path  # Panel's, from this session's request
            dist_url = f"{rel}/{LOCAL_DIST}" if rel else LOCAL_DIST

            def settle(*events):
                pn.state.rel_path = rel
                doc._template_variables["dist_url"] = dist_url

            location = pn.state.location  # made now, before we settle the paths
            settle()
            if location is not None and rel.startswith(("http://", "https://")):
                location.param.watch(settle, ["pathname", "port"])
        return factory(*args, **kwargs)

    build.__wrapped__ = factory
    return build


def reuse_key(request):  # -> (path, theme): reused first paints are keyed by these two only
    # Panel's own key takes the raw ?theme= value, so every new value would cache (and never
    # expire) another session; two themes bound the cache at two sessions per route.
    raw = (request.arguments.get("theme") or [b"default"])[-1]
    theme = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return request.path, ("dark" if theme.strip().lower() == "dark" else "default")


async def warm_reused_sessions(server, paths, themes=("default", "dark")):
    # With reuse on, a route's first paint comes from one cached session. Build them here,
    # from the plain URL, before any visitor's request can: else the first visitor's deep
    # link (and its notes) would be everyone's first paint until their own session arrives.
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from panel.io.state import state
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    app = server._tornado
    for path in paths:
        context = app._applications.get(path)
        for theme in themes:
            uri = path if theme == "default" else f"{path}?theme={theme}"
            request = HTTPServerRequest(
                start_line=RequestStartLine("GET", uri, "HTTP/1.1"),
                headers=HTTPHeaders({"Host": f"127.0.0.1:{server.port}"}))
            key = reuse_key(request)
            if context is None or key in state._sessions:
                continue
            session_id = generate_session_id(secret_key=app.secret_key, signed=app.sign_sessions)
            token = generate_jwt_token(
                session_id, secret_key=app.secret_key, signed=app.sign_sessions,
                expiration=app.session_token_expiration,
                extra_payload={"headers": {}, "cookies": {},
                               "arguments": {k: v for k, v in request.arguments.items()}})
            session = await context.create_session_if_needed(session_id, request, token)
            state._session_key_funcs[path] = reuse_key
            state._sessions[key] = session
            session.block_expiration()


def _die_with_parent():  # a forked server process ends when the process that forked it does
    import ctypes
    import os
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(0)


def main(args):
    from tornado import process

    from app.security import OriginError

    try:
        settings = serve_settings(args)
    except OriginError as e:
        raise SystemExit(f"attention-explorable serve: --embed-origin: {e}")
    pn.config.reconnect = args.reconnect
    pn.config.reuse_sessions = args.reuse_sessions
    pn.config.session_key_func = reuse_key
    print(f"serving the attention explorable on http://localhost:{args.port}/"
          + (f" ({args.num_procs or 'one per core'} processes)" if args.num_procs != 1 else ""),
          flush=True)
    pages = {route: prepare_session(factory, args.reconnect)
             for route, factory in routes().items()}
    gc.collect()
    gc.freeze()  # the import-time heap (panel, bokeh, numpy, torch) leaves every collection
    server = pn.serve(pages, show=args.show, title=titles(pages), static_dirs=static_dirs(),
                      start=False, verbose=False, **settings)
    if process.task_id() is not None:  # a forked child: from here on, this is one server
        _die_with_parent()
    server.start()
    if args.reuse_sessions:
        from app import security

        security.HealthHandler.ready = False  # 503 until the first paints are cached

        async def warm():
            try:
                await warm_reused_sessions(server, list(pages))
            finally:
                security.HealthHandler.ready = True

        server.io_loop.add_callback(warm)
    server.io_loop.start()
    return 0
