"""The site's pages and their titles: the one table the server, the build and the tests read.

Importing it builds nothing and changes nothing: it names pages as "module:function" strings
(a chapter) or "module:Class" (a panel's page of its own, from the one table of panels,
app/kit/registry.py), and `page_factory` imports a page's module only when asked.
"""

import importlib

from app.chapters import content
from app.kit import registry

SITE_TITLE = content.load("attention.md").title  # the first chapter's title names the site

# the two chapters and the ledger, then each panel alone (embeddable, and framed by course pages)
CHAPTER_ROUTES = {
    "/": "app.chapters.article:page",
    "/math": "app.chapters.article_math:page",
    "/numbers": "app.chapters.numbers_page:page",  # the claims ledger, for readers: text only
}
PANEL_ROUTES = registry.routes()  # "/heatmap": "app.panels.heatmap:HeadPanel", ...
ALL_ROUTES = {**CHAPTER_ROUTES, **PANEL_ROUTES}


def page_factory(target):  # "module:function" or a panel's "module:Class" -> a callable
    # building a fresh page per session
    panel = registry.by_viewer(target)
    if panel is not None:
        return panel.page
    module_name, func = target.split(":")
    return getattr(importlib.import_module(module_name), func)


def title(route):  # "/" -> the site's title; "/heatmap" -> "heatmap · <site title>"
    return SITE_TITLE if route == "/" else f"{route.strip('/')} · {SITE_TITLE}"


def titles(routes):  # {route: anything} -> {route: the HTML <title>}
    return {route: title(route) for route in routes}
