"""Every page loads: the article and each single-panel route render in Chromium with no
console error, no request off our server, and no horizontal overflow on a 390 px phone."""

import re

import pytest
from playwright.sync_api import expect

from app.hosting.server import PANEL_ROUTES

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
CHAPTERS = ["/", "/math"]  # the chapters build their panels after the page appears
ROUTES = [*CHAPTERS, *PANEL_ROUTES]


def overflow(page):  # -> how many px the document is wider than the viewport
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("route", ROUTES)
def test_route_renders_on_a_phone(page, rendered, route):
    page.set_viewport_size(PHONE)
    response = page.goto(route)
    assert response is not None and response.status == 200
    rendered(page)
    expect(page.locator(".pn-loading")).to_have_count(0)  # deferred panels included
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], (
        f"{route} overflows a 390 px viewport by {overflow(page)} px")


@pytest.mark.parametrize("route, title, heading", [
    ("/", "Scaled dot-product attention, worked", "Scaled dot-product attention, worked"),
    ("/math", re.compile(r"math", re.IGNORECASE), "Dot products, softmax and attention math"),
])
def test_chapter_renders_wide(page, rendered, route, title, heading):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(route)
    rendered(page)
    expect(page.locator(".pn-loading")).to_have_count(0)
    expect(page).to_have_title(title)
    assert page.get_by_role("heading", name=heading).is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
