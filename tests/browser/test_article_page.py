"""The article at "/": its panels answer deep links, and the theme switch works."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_article_head_restores_a_deep_link(open_page):
    page = open_page("/?mask=off&query=2")
    expect(page.get_by_text("0.23", exact=True).first).to_be_visible()


def test_theme_button_switches_to_dark_and_back(open_page, rendered):
    page = open_page("/")
    page.get_by_role("button", name="Dark theme").click()
    expect(page).to_have_url(re.compile(r"[?&]theme=dark"))
    rendered(page)
    light = page.get_by_role("button", name="Light theme")
    expect(light).to_be_visible()
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == "rgb(18, 18, 18)"
    light.click()
    expect(page).to_have_url(re.compile(r"[?&]theme=default"))
    rendered(page)
    expect(page.get_by_role("button", name="Dark theme")).to_be_visible()
