"""Live chapters paint their text first and get Bokeh's and Panel's bundles compressed:
the first response holds the prose, the page paints while the bundles are still on their way,
the bundles arrive with a Content-Encoding, and bokeh-gl is asked for by no live page."""

import re

import pytest

from app.chapters import apparatus, content, page_model
from tests.browser.conftest import wait_for_render

CHAPTERS = {"/live": "/", "/live/math": "/math"}
BUNDLE = re.compile(r"/static/(js/bokeh[a-z-]*|extensions/panel/panel)\.min\.js")


def first_prose(route):  # -> the chapter's first paragraph of prose, as plain text
    sections = page_model.at(route).sections
    first = next(item for item in sections[1:] if isinstance(item, str))
    return " ".join(content.TAG.sub("", apparatus.Apparatus(sections).prose(first)).split())


@pytest.mark.parametrize("live", CHAPTERS)
def test_a_live_chapters_first_response_holds_its_prose_and_paints_before_bokeh(page, live):
    held, released = [], []  # the bundles' requests, answered once the page has painted

    def hold(route):  # runs as Playwright delivers the request: after the release, at once
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(BUNDLE, hold)
    response = page.goto(live, wait_until="commit")
    html = response.text()
    text = " ".join(content.TAG.sub("", html).split())
    assert first_prose(CHAPTERS[live]) in text
    assert html.index("<main") < html.index("bokeh.min.js")
    page.wait_for_function("() => performance.getEntriesByName('first-contentful-paint').length")
    page.wait_for_function("() => document.readyState !== 'loading'")
    assert page.evaluate("() => window.Bokeh === undefined")  # painted with Bokeh unloaded
    released.append(True)
    for route in held:
        route.continue_()
    wait_for_render(page)  # the session attaches once the bundles have run


@pytest.mark.parametrize("live", [*CHAPTERS, "/live/heatmap"])
def test_live_bundles_arrive_compressed_and_bokeh_gl_is_never_asked_for(page, live):
    asked, encodings = [], {}
    page.on("request", lambda request: asked.append(request.url))

    def on_response(response):
        if BUNDLE.search(response.url):
            encodings[BUNDLE.search(response.url).group(1)] = response.headers.get(
                "content-encoding")

    page.on("response", on_response)
    page.goto(live)
    wait_for_render(page)
    assert not [url for url in asked if "bokeh-gl" in url], asked
    assert {"js/bokeh", "extensions/panel/panel"} <= set(encodings), encodings
    assert set(encodings.values()) <= {"br", "gzip"}, encodings
