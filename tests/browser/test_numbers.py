"""The ledger's page in Chromium (/numbers over the static build, served by a plain static file
server as test_static_build.py does): every claim is a row, and every "shown at" link lands on
its panel page with the panel in view."""

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from app.chapters import numbers_page
from attention_core import claims
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.static_pages import BOOTED_JS
from tests.browser.test_a11y import violations
from tests.browser.test_static_build import Watch, built, close_watched, file_server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


def test_numbers_lists_every_claim_and_its_links_land_on_a_visible_panel(
        browser, file_server):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    watch = Watch(page, urlsplit(file_server).netloc)
    try:
        page.goto(f"{file_server}/numbers/")
        rows = page.locator(".ae-numbers tbody tr")  # the ledger's, then the chapters' figures
        figures = sum(len(rows_of()) for _, _, rows_of in numbers_page.CHAPTER_FIGURES)
        expect(rows).to_have_count(len(claims.all_claims()) + figures)
        expect(page.get_by_role("heading", level=1)).to_have_text("Every number, checked")
        failing, _ = violations(page)
        assert not failing, failing
        links = page.eval_on_selector_all(".ae-numbers td:last-child a",
                                          "(a) => a.map((e) => e.href)")
        assert len(links) == len(claims.all_claims()) + figures
        for href in sorted(set(links)):
            page.goto(href)
            island = page.locator("section.ae-island").first
            expect(island).to_be_visible()
            expect(island).to_be_in_viewport()
            page.evaluate("AE.islands.mountAll()")  # it mounts on intent: ask, as a reader
            page.wait_for_function(BOOTED_JS)  # mounted, its state from the link applied
            expect(page.get_by_text(re.compile(r"^URL: "))).to_have_count(0)  # no value refused
    finally:
        context.close()
    assert not watch.problems, watch.problems
