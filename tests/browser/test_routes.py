"""Every page loads: the article and each single-panel route render in Chromium with no
console error, no request off our server, and no horizontal overflow on a 390 px phone."""

import pytest

from app.server import PANEL_ROUTES

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ROUTES = ["/", *PANEL_ROUTES]


def overflow(page):  # -> how many px the document is wider than the viewport
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("route", ROUTES)
def test_route_renders_on_a_phone(page, rendered, route):
    page.set_viewport_size(PHONE)
    response = page.goto(route)
    assert response is not None and response.status == 200
    rendered(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], (
        f"{route} overflows a 390 px viewport by {overflow(page)} px")


def test_article_renders_wide(page, rendered):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/")
    rendered(page)
    assert page.title() == "Scaled dot-product attention, worked"
    assert page.get_by_role("heading", name="Scaled dot-product attention, worked").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
