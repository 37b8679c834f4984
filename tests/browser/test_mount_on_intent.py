"""An island whose still has native controls mounts Bokeh only on intent (static/islands.js):
left alone, a static panel page and a chapter scrolled through never load BokehJS; a mouse
resting on a chart, or the island's own button, mounts it."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import RENDER_TIMEOUT_MS

pytestmark = pytest.mark.browser

ALONE_MS = 10_000  # what "left alone" means here: the issue's own measure, not a wait for
# something to happen
# resolves once the page has been idle twice: whatever nearing an island sets off has run
SETTLED_JS = "() => new Promise((r) => requestIdleCallback(() => requestIdleCallback(r)))"


BOKEH_JS = re.compile(r"/bokeh[^/]*\.js$")  # BokehJS and its widget bundles


def bokeh_requests(page_requests):
    return [u for u in page_requests if BOKEH_JS.search(u)]


@pytest.fixture
def watched(browser, base_url):  # -> (page, its requests from navigation on)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=base_url)
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    yield page, requested
    context.close()


def test_a_panel_page_left_alone_never_loads_bokeh_and_a_resting_mouse_mounts_it(watched):
    page, requested = watched
    page.goto("/heatmap")
    expect(page.locator(".ae-still-controls").first).to_be_visible()
    page.wait_for_timeout(ALONE_MS)
    assert bokeh_requests(requested) == [], bokeh_requests(requested)
    assert page.locator(".ae-island.ae-mounted").count() == 0
    # the positive control: the mouse rests on the still's chart
    page.locator(".ae-island [data-ae-pane] svg").first.hover()
    expect(page.locator(".ae-island.ae-mounted")).to_have_count(1, timeout=RENDER_TIMEOUT_MS)
    assert bokeh_requests(requested)


def test_a_chapter_scrolled_through_mounts_only_its_islands_without_native_controls(watched):
    page, _ = watched
    page.goto("/math")
    for island in page.locator(".ae-island").all():
        island.scroll_into_view_if_needed()
        page.evaluate(SETTLED_JS)
    page.wait_for_timeout(ALONE_MS)  # then left alone, as the panel page above
    natives = page.locator(".ae-island:has(script.ae-still-data)")
    assert natives.count() >= 4
    assert page.locator(".ae-island.ae-mounted:has(script.ae-still-data)").count() == 0
    # the island's own button mounts it (its still, and the still's data, go then)
    first = page.locator("#" + natives.first.get_attribute("id"))
    first.get_by_role("button", name="Load the interactive chart").click()
    expect(first).to_have_class(re.compile(r"\bae-mounted\b"), timeout=RENDER_TIMEOUT_MS)
