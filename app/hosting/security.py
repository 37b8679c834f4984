"""What a public teaching site adds to every response, and the few routes beside the panels.

- Security headers on every response (a Tornado output transform, so error pages, static
  files and the autoload script get them too): `X-Content-Type-Options: nosniff`, a
  `Referrer-Policy`, and a Content-Security-Policy that lets scripts, styles, fonts and
  sockets come only from this server. Its `frame-ancestors` is `'self'` everywhere; the
  single-panel (embed) routes also name the course sites given by `--embed-origin`.
- `/health`: 200 "ok" for a load balancer's check; it builds no page and opens no session.
- The admin page (Panel's session dashboard), only with a password: every admin route,
  its websocket included, answers 401 until HTTP Basic credentials carry it.

Nothing here imports panel at module level, so `--help` and the unit tests stay fast.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from urllib.parse import urlsplit

from tornado import web

from app.kit.panel_internals import (
    AUTOLOAD_URL_ARG,
    absolute_static_urls,
    admin_context,
    app_routes,
)

HEALTH_PATH = "/health"
ADMIN_PATH = "/admin"
ADMIN_REALM = "attention explorable admin"

# Panel and Bokeh need inline scripts (the page's bootstrap), eval (CustomJS callbacks such as
# the theme button), blob: scripts (Panel compiles its ESM components into blob: modules in
# the page) and inline styles; everything else is locked to this server.
CSP_BASE = (
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
)


class OriginError(ValueError):
    """An --embed-origin that is not scheme://host[:port]."""


def parse_origin(text):  # "https://course.example.edu/x" -> "https://course.example.edu"
    text = text.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OriginError(f"{text!r} is not an origin like https://course.example.edu[:port]")
    if any(c in text for c in " ;,'\"\\"):
        raise OriginError(f"{text!r} holds a character an origin cannot")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def websocket_host(origin):  # "https://course.example.edu:8443" -> "course.example.edu:8443"
    return urlsplit(origin).netloc.lower()


def frame_ancestors(origins):  # origins -> the CSP directive's value
    return " ".join(["'self'", *origins])


def content_security_policy(ancestors):  # frame-ancestors value -> the whole header
    return "; ".join([*CSP_BASE, f"frame-ancestors {ancestors}"])


def is_embed_path(path, embed_routes):  # "/heatmap", "/heatmap/index.html" -> True
    for name in ("index.html", "index-dark.html"):  # a static host's names for the page
        if path.endswith("/" + name):
            path = path[: -len(name)]
    path = path.rstrip("/") or "/"
    return path in embed_routes


def security_headers(embed_routes, embed_origins=(), site_hosts=()):
    """-> an OutputTransform class adding the headers. embed_routes may be framed by
    embed_origins (and by this server), every other page only by this server. Their
    autoload.js (a script embed) may be fetched by scripts of embed_origins and of this
    site's own hosts (site_hosts: the websocket allow-list, host[:port]), not by any page
    on the web as Bokeh's "*" would let it."""
    from bokeh.server.util import check_allowlist, create_hosts_allowlist

    embed_routes = frozenset(r.rstrip("/") or "/" for r in embed_routes)
    default_csp = content_security_policy(frame_ancestors(()))
    embed_csp = content_security_policy(frame_ancestors(embed_origins))
    hosts = create_hosts_allowlist([*site_hosts, *map(websocket_host, embed_origins)], None) \
        if (site_hosts or embed_origins) else []

    class SecurityHeaders(web.OutputTransform):
        def __init__(self, request):
            super().__init__(request)
            self.embed = is_embed_path(request.path, embed_routes)
            self.autoload = request.path.endswith("/autoload.js")
            self.origin = request.headers.get("Origin")
            self.server_url = _server_url(request) if self.autoload else None

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            headers["X-Content-Type-Options"] = "nosniff"
            headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
            headers["Content-Security-Policy"] = embed_csp if self.embed else default_csp
            if not self.embed:
                headers["X-Frame-Options"] = "SAMEORIGIN"  # for browsers without CSP 2
            if self.autoload:
                self._cors(headers)
                if status_code == 200 and finishing and self.server_url:
                    chunk = absolute_static_urls(chunk, self.server_url)
                    headers["Content-Length"] = str(len(chunk))
            return status_code, headers, chunk

        def _cors(self, headers):
            for name in ("Access-Control-Allow-Origin", "Access-Control-Allow-Credentials"):
                if name in headers:
                    del headers[name]
            netloc = urlsplit(self.origin or "").netloc.lower()
            if netloc and check_allowlist(netloc, hosts):
                headers["Access-Control-Allow-Origin"] = self.origin
            headers["Vary"] = "Origin"

    SecurityHeaders.embed_routes = embed_routes
    SecurityHeaders.embed_csp = embed_csp
    SecurityHeaders.default_csp = default_csp
    return SecurityHeaders


def _server_url(request):  # autoload.js?bokeh-absolute-url=http://host/route -> "http://host"
    values = request.query_arguments.get(AUTOLOAD_URL_ARG) or [b""]
    parts = urlsplit(values[-1].decode("utf-8", "replace"))
    if parts.scheme in ("http", "https") and parts.netloc and not any(
            c in parts.netloc for c in "\"'<>\\ "):
        return f"{parts.scheme}://{parts.netloc}"
    return None


class HealthHandler(web.RequestHandler):
    """200 "ok" while this process's event loop answers, 503 "starting" while it is still
    preparing its first pages: for a load balancer's check."""

    ready = True

    def set_default_headers(self):
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.set_header("Cache-Control", "no-store")

    def get(self):
        if not self.ready:
            self.set_status(503)
            self.write("starting")
            return
        self.write("ok")

    def head(self):
        self.set_status(200 if self.ready else 503)


def password_matches(header, password):  # "Basic dXNlcjpwdw==", "pw" -> bool (any user name)
    if not header or not password or not header.startswith("Basic "):
        return False
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _, sep, given = decoded.partition(":")
    return bool(sep) and hmac.compare_digest(given.encode(), password.encode())


class AdminGuard:
    """Mixed in before a Bokeh handler: 401 unless HTTP Basic carries the admin password."""

    admin_password = ""

    async def prepare(self):
        if not password_matches(self.request.headers.get("Authorization"),
                                self.admin_password):
            self.set_status(401)
            self.set_header("WWW-Authenticate", f'Basic realm="{ADMIN_REALM}", charset="UTF-8"')
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish("the admin page needs its password\n")
            return
        await super().prepare()


def admin_patterns(password, unused_ms, path=ADMIN_PATH, wrap=None):
    """-> Tornado routes serving Panel's admin dashboard at `path`, every one password-guarded.

    This is what `panel serve --admin` sets up, with each handler wrapped in AdminGuard.
    wrap: applied to Panel's admin page function (server.prepare_session)."""
    from bokeh.application import Application
    from bokeh.application.handlers.document_lifecycle import DocumentLifecycleHandler
    from bokeh.application.handlers.function import FunctionHandler
    from panel.io.admin import admin_panel

    if not password:
        raise ValueError("the admin page needs a password")
    app = Application(FunctionHandler(wrap(admin_panel) if wrap else admin_panel))
    app.add(DocumentLifecycleHandler())
    context = admin_context(app, unused_ms, path)  # set as Panel sets it (privately)
    patterns = []
    for route, handler, *_ in app_routes():
        guarded = type(f"Guarded{handler.__name__}", (AdminGuard, handler),
                       {"admin_password": password})
        patterns.append((path + route, guarded, {"application_context": context}))
    ws_path = next(r for r, *_ in patterns if r.endswith("/ws"))
    for _, _, kwargs in patterns:
        kwargs["bokeh_websocket_path"] = ws_path
    return patterns
