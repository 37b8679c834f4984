"""The site's pages and their titles: the one table the server, the build and the tests read.

Importing it builds nothing and changes nothing: the chapters come from app/kit/registry.py's
CHAPTERS (each drawn from its page model, app/chapters/page_model.py), then the ledger's text
page, then each panel's page of its own from the same registry's PANELS ("module:Class");
`page_factory` imports a page's module only when asked.
"""

import functools
import importlib

from app.chapters import content, page_model
from app.kit import registry

SITE_TITLE = content.load(registry.CHAPTERS[0].content).title  # the first chapter names the site

TEXT_PAGE = "app.chapters.live_chapter:page"  # a page drawn from a page model, live
# the chapters and the ledger (text only), then each panel alone (embeddable, and framed by
# course pages)
CHAPTER_ROUTES = {**{c.route: TEXT_PAGE for c in registry.CHAPTERS},
                  page_model.NUMBERS_ROUTE: TEXT_PAGE}
PANEL_ROUTES = registry.panel_routes()  # "/heatmap": "app.panels.heatmap:HeadPanel", ...
ALL_ROUTES = {**CHAPTER_ROUTES, **PANEL_ROUTES}


def page_factory(target, route=None):  # a route's target -> a callable building a fresh
    # page per session: a panel's page ("module:Class"), or the text page at `route`
    panel = registry.by_viewer(target)
    if panel is not None:
        return panel.page
    module_name, func = target.split(":")
    made = getattr(importlib.import_module(module_name), func)
    return functools.partial(made, route) if target == TEXT_PAGE else made


def title(route):  # "/" -> the site's title; "/math" -> its chapter's title · the site's;
    # "/heatmap" -> "heatmap · <site title>"
    if route == "/":
        return SITE_TITLE
    record = registry.chapter_at(route)
    name = content.load(record.content).title if record else route.strip("/")
    return f"{name} · {SITE_TITLE}"


def titles(routes):  # {route: anything} -> {route: the HTML <title>}
    return {route: title(route) for route in routes}
