"""oEmbed 1.0 (https://oembed.com): a link to one of our pages, pasted into an oEmbed-aware
course site (Moodle's and WordPress's filters), becomes a frame of that page.

- Every page names its response in a discovery `<link rel="alternate"
  type="application/json+oembed">`.
- The static build writes one response per route, `OUT/oembed/<name>.json` (its frame's
  address is absolute with `--site-url`, else the route from the host's root).
- The live server answers `GET /oembed?url=…[&maxwidth=…][&maxheight=…][&format=json]` for any
  page it serves, static or live, deep link included: 404 for a url not ours, 501 for a format
  other than json, 400 without a url (the spec's codes).

A response is `type: "rich"`, `version: "1.0"`, `html` (the iframe, `?embed=1`: the page
without its chrome), `width`, `height`, `title`, `provider_name`, `provider_url`.
"""

from __future__ import annotations

import html
import json
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tornado import web

from app.hosting import routes
from app.kit import embedding, registry

PATH = embedding.OEMBED_PATH
STATIC_FOLDER = "oembed"
WIDTH = 800  # px: a course page's column; the frame's style lets it shrink to fit
CHAPTER_HEIGHT = 900  # px: a chapter scrolls inside its frame unless embed.js sizes it
PANEL_CHROME = 120  # px over a panel's island height: its page's title and padding
CACHE_AGE_S = 86_400
LIVE = "/live"


def name(route):  # "/" -> "index", "/heatmap" -> "heatmap"
    return route.strip("/") or "index"


def static_href(route, up="", site_url=None):  # -> the discovery link's address on a page
    rel = f"{STATIC_FOLDER}/{name(route)}.json"
    return f"{site_url.rstrip('/')}/{rel}" if site_url else f"{up}{rel}"


def size(route):  # -> (width, height) of the frame a route gets by default
    record = registry.by_route(route)
    return WIDTH, (record.island_height + PANEL_CHROME if record else CHAPTER_HEIGHT)


def with_embed(query):  # "mask=off&embed=0" -> "mask=off&embed=1" (chrome off in the frame)
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True)
             if k not in ("embed", "format")]
    return urlencode([*pairs, ("embed", "1")])


def response(route, src, maxwidth=None, maxheight=None):  # -> the oEmbed response, a dict
    # src: the frame's address (the page's, with ?embed=1)
    width, height = size(route)
    width = min(width, maxwidth) if maxwidth else width
    height = min(height, maxheight) if maxheight else height
    title = routes.title(route)
    frame = (f'<iframe src="{html.escape(src)}" title="{html.escape(title)}" width="{width}" '
             f'height="{height}" style="border:0;max-width:100%" loading="lazy"></iframe>')
    out = {"type": "rich", "version": "1.0", "title": title,
           "provider_name": routes.SITE_TITLE, "html": frame, "width": width,
           "height": height, "cache_age": CACHE_AGE_S}
    if src.startswith(("http://", "https://")):
        parts = urlsplit(src)
        out["provider_url"] = f"{parts.scheme}://{parts.netloc}/"
    return out


def static_files(site_url=None):  # -> {path in OUT: bytes}: one response per route
    base = site_url.rstrip("/") if site_url else ""
    out = {}
    for route in routes.ALL_ROUTES:
        src = f"{base}{route}?{with_embed('')}"
        body = response(route, src)
        out[f"{STATIC_FOLDER}/{name(route)}.json"] = json.dumps(body, indent=1).encode()
    return out


def route_of(path):  # "/live/heatmap/index.html" -> "/heatmap"; not one of ours -> None
    for tail in ("index.html", "index-dark.html"):
        if path.endswith("/" + tail):
            path = path[: -len(tail)]
    path = path.rstrip("/") or "/"
    if path == LIVE or path.startswith(LIVE + "/"):
        path = path[len(LIVE):] or "/"
    return path if path in routes.ALL_ROUTES else None


def _positive(text):  # "640" -> 640; "", "x", "-3" -> None
    try:
        value = int(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


class OEmbedHandler(web.RequestHandler):
    """GET /oembed?url=…: the response for one of our pages, as the oEmbed spec says."""

    def get(self):
        fmt = self.get_argument("format", "json").strip().lower()
        if fmt != "json":
            raise web.HTTPError(501)  # the spec: a format we do not give
        raw = self.get_argument("url", "").strip()
        if not raw:
            raise web.HTTPError(400)
        parts = urlsplit(raw)
        host = self.request.host.lower()
        absolute = parts.scheme or parts.netloc
        if absolute and (parts.scheme not in ("http", "https") or parts.netloc.lower() != host):
            raise web.HTTPError(404)  # not ours
        route = route_of(parts.path or "/")
        if route is None:
            raise web.HTTPError(404)
        scheme = parts.scheme or self.request.protocol
        live = parts.path.startswith(LIVE)
        path = (LIVE if route == "/" else LIVE + route) if live else route
        src = urlunsplit((scheme, host, path, with_embed(parts.query), ""))
        body = response(route, src, _positive(self.get_argument("maxwidth", "")),
                        _positive(self.get_argument("maxheight", "")))
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=3600")
        self.set_header("Access-Control-Allow-Origin", "*")  # public metadata, no cookies
        self.finish(json.dumps(body))


def patterns():  # -> the Tornado route of the live endpoint
    return [(PATH, OEmbedHandler)]
