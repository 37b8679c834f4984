"""The chapters load wide: at 1280 px each renders every panel with its title and heading, no
console error, no request off our server and no horizontal overflow. Every route on a phone
(Pixel 5 and iPhone 12 emulation) is tests/browser/test_text_first.py's."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("route, title, heading", [
    ("/", "Scaled dot-product attention, worked", "Scaled dot-product attention, worked"),
    ("/math", re.compile(r"math", re.IGNORECASE), "Dot products, softmax and attention math"),
    ("/flash", re.compile(r"FlashAttention"), "FlashAttention: attention without the square"),
    ("/kv", re.compile(r"KV cache"), "The KV cache, as a server holds it"),
])
def test_chapter_renders_wide(page, rendered, route, title, heading):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(route)
    rendered(page)
    expect(page.locator(".pn-loading")).to_have_count(0)
    expect(page).to_have_title(title)
    assert page.get_by_role("heading", name=heading).is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
