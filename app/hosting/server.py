"""Serving: the static build at /, /math, /heatmap, ... (app/hosting/static_site.py) and the
live Panel sessions under /live (/live, /live/math, /live/heatmap, ...), each panel alone
for iframes."""

import gc

import panel as pn

from app.hosting import compressed_assets
from app.hosting.routes import PANEL_ROUTES, SITE_TITLE, page_factory, title, titles
from app.kit import panel_internals, resources

TITLE = SITE_TITLE
STATIC_DIR = resources.STATIC_DIR  # served at /assets


def routes():  # -> {route: page factory} of every page the live server offers
    from app.hosting.routes import ALL_ROUTES

    return {route: page_factory(target, route) for route, target in ALL_ROUTES.items()}


def static_dirs():  # our own assets (CSS, images, the example course page), never a CDN
    return {"assets": str(STATIC_DIR)} if STATIC_DIR.is_dir() else {}


def serve_settings(args, environ=None):  # parsed `serve` options -> keyword arguments of pn.serve
    from app.hosting import security, static_site
    from app.hosting.options import env_list

    embed = [security.parse_origin(o)
             for o in (args.embed_origin or env_list("AE_EMBED_ORIGINS", environ))]
    origins = list(args.allow_websocket_origin or env_list("AE_WEBSOCKET_ORIGINS", environ)
                   or [f"localhost:{args.port}", f"127.0.0.1:{args.port}"])
    origins += [h for h in map(security.websocket_host, embed) if h not in origins]
    lifetime_ms = int(args.unused_session_lifetime * 1000)
    from app.hosting import oembed

    patterns = [(security.HEALTH_PATH, security.HealthHandler), *oembed.patterns(),
                *static_site.patterns(static_site.site_dir(environ), PANEL_ROUTES)]
    if args.admin:
        from app.hosting.options import admin_password

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
        # pages and small files gzipped as they go; the build's files and the bundles
        # (app/hosting/compressed_assets.py) go out already compressed
        "transforms": [security.security_headers(static_site.embed_routes(PANEL_ROUTES), embed,
                                                 origins), compressed_assets.GzipResponses],
    }


def prepare_session(factory, reconnect=True, title=None):
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

    from app.chapters.live_chapter import LiveChapter

    def build(*args, **kwargs):
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.config.reconnect_session = bool(reconnect)
            rel = pn.state.rel_path  # Panel's, from this session's request
            dist_url = f"{rel}/{LOCAL_DIST}" if rel else LOCAL_DIST

            def settle(*events):
                pn.state.rel_path = rel
                panel_internals.set_dist_url(doc, dist_url)

            location = panel_internals.session_location(doc)  # now, before the paths settle
            settle()
            if location is not None and rel.startswith(("http://", "https://")):
                location.param.watch(settle, ["pathname", "port"])
        page = factory(*args, **kwargs)
        if doc is not None and isinstance(page, LiveChapter):  # text in the page, parts roots
            page.server_doc(doc, title=title)
            return None  # Panel adds nothing more to a document the page function filled
        if doc is not None:
            phone_ready(doc)
        return page

    build.__wrapped__ = factory
    return build


# A live page's head gets the viewport tag (without it a phone lays the page out 980 px wide
# and shrinks it), and its scripts deferred, bokeh-gl left out (as a chapter's: see
# app/chapters/live_chapter.py): Panel's own page template, extended through the document's
# public `template` and `template_variables`.
LIVE_HEAD = ('{% extends ae_base %}{% block js_resources %}{{ ae_scripts(bokeh_js) }}'
             '{% endblock %}{% block postamble %}'
             '<meta name="viewport" content="width=device-width, initial-scale=1">'
             '<meta name="description" content="{{ ae_description }}">{{ ae_embed_head }}'
             '{% endblock %}')
LIVE_DESCRIPTION = ("An interactive explanation of scaled dot-product attention: every number "
                    "computed, nothing typed in.")


def phone_ready(doc):  # a session's Document -> its page has the viewport and description tags
    import jinja2
    from panel.io.resources import BASE_TEMPLATE

    from app.chapters.live_chapter import deferred_scripts

    doc.template = jinja2.Template(LIVE_HEAD)
    from app.kit import embedding  # oEmbed discovery, ?embed=1, frame height, "Embed"

    doc.template_variables.update(ae_base=BASE_TEMPLATE, ae_description=LIVE_DESCRIPTION,
                                  ae_embed_head=embedding.live_head(embedding.session_path(),
                                                                    TITLE),
                                  ae_scripts=deferred_scripts(doc))


def reuse_key(request):  # -> (path, theme): reused first paints are keyed by these two only
    # Panel's own key takes the raw ?theme= value, so every new value would cache (and never
    # expire) another session; two themes bound the cache at two sessions per route.
    raw = (request.arguments.get("theme") or [b"default"])[-1]
    theme = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    # "/live/heatmap/" is the same page as "/live/heatmap": one key, the warmed one.
    path = request.path.rstrip("/") or "/"
    return path, ("dark" if theme.strip().lower() == "dark" else "default")


async def warm_reused_sessions(server, paths, themes=("default", "dark")):
    # With reuse on, a route's first paint comes from one cached session. Build them here,
    # from the plain URL, before any visitor's request can: else the first visitor's deep
    # link (and its repairs) would be everyone's first paint until their own session arrives.
    # It fills Panel's private session cache: see app/kit/panel_internals.py.
    return await panel_internals.warm_reused_sessions(server, paths, reuse_key, themes)


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

    from app.hosting.security import OriginError

    # Panel's 50 ms hold on incoming changes off, one websocket message per interaction,
    # patches sent as soon as they are made: Panel internals, each named and explained in
    # app/kit/panel_internals.py. Only a live server needs them, so only it installs them.
    panel_internals.install()

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
    # readers get the static build (app/hosting/static_site.py, built by the CLI); the Panel
    # sessions live under /live: "/live" (the first chapter), "/live/math", "/live/heatmap", ...
    from app.hosting import static_site
    from app.hosting.static_site import live_route

    live = {route: prepare_session(factory, args.reconnect, title=title(route))
            for route, factory in routes().items()}
    pages = {live_route(route): page for route, page in live.items()}
    gc.collect()
    gc.freeze()  # the import-time heap (panel, bokeh, numpy, torch) leaves every collection
    server = pn.serve(pages, show=args.show,
                      title={live_route(r): t for r, t in titles(live).items()},
                      static_dirs=static_dirs(), start=False, verbose=False, **settings)
    # ahead of Bokeh's routes (Tornado's add_handlers): a live page opened with its slash
    # and Bokeh's and Panel's bundles compressed (app/hosting/compressed_assets.py)
    panel_internals.tornado_app(server).add_handlers(r".*", [
        *static_site.live_asset_redirects(), *compressed_assets.handlers(r"(?:/live(?:/[^/]+)?)?")])
    if process.task_id() is not None:  # a forked child: from here on, this is one server
        _die_with_parent()
    server.start()
    if args.reuse_sessions:
        from app.hosting import security

        security.HealthHandler.ready = False  # 503 until the first paints are cached

        async def warm():
            try:
                await warm_reused_sessions(server, list(pages))
            finally:
                security.HealthHandler.ready = True

        server.io_loop.add_callback(warm)
    server.io_loop.start()
    return 0
