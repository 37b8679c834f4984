"""What a live page's head carries for course pages (the static pages' template has the same):
its oEmbed discovery link (app/hosting/oembed.py answers it), static/page_head.js (the
`?embed=1` class set before the page paints, AE.page) and static/embedding.js (frame height,
answers to a parent, "Embed")."""

import html
from urllib.parse import urlencode

from app.kit import resources

OEMBED_PATH = "/oembed"  # the live server's oEmbed endpoint
SCRIPT = "/assets/embedding.js"  # static/embedding.js, as the live server serves it
HEAD_JS = resources.inline_script("page_head.js")  # inline: it runs before the first paint


def oembed_href(path):  # "/live/heatmap" -> "/oembed?url=%2Flive%2Fheatmap&format=json"
    return f"{OEMBED_PATH}?{urlencode({'url': path, 'format': 'json'})}"


def live_head(path, title):  # a live page's path and title -> the HTML for its <head>
    return (f'<link rel="alternate" type="application/json+oembed" '
            f'href="{html.escape(oembed_href(path))}" title="{html.escape(title)}">\n'
            f"<script>{HEAD_JS}</script>\n"
            f'<script src="{SCRIPT}" defer></script>')


def session_path(default="/live"):  # -> this session's page path (Panel's Location), or default
    import panel as pn

    location = pn.state.location if pn.state.curdoc is not None else None
    return (location.pathname if location is not None else "") or default
