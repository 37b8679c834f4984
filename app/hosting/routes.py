"""The site's pages and their titles: the one table the server, the build and the tests read.

Importing it builds nothing and changes nothing: it names pages as "module:function" strings,
and `page_factory` imports a page's module only when asked.
"""

import importlib

from app import content

SITE_TITLE = content.load("attention.md").title  # the first chapter's title names the site

# the two chapters and the ledger, then each panel alone (embeddable, and framed by course pages)
CHAPTER_ROUTES = {
    "/": "app.article:page",
    "/math": "app.article_math:page",
    "/numbers": "app.numbers_page:page",  # the claims ledger, for readers: text only
}
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
ALL_ROUTES = {**CHAPTER_ROUTES, **PANEL_ROUTES}


def page_factory(target):  # "module:function" -> callable building a fresh page per session
    module_name, func = target.split(":")
    return getattr(importlib.import_module(module_name), func)


def title(route):  # "/" -> the site's title; "/heatmap" -> "heatmap · <site title>"
    return SITE_TITLE if route == "/" else f"{route.strip('/')} · {SITE_TITLE}"


def titles(routes):  # {route: anything} -> {route: the HTML <title>}
    return {route: title(route) for route in routes}
