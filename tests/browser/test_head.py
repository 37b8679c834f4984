"""The head at /heatmap, driven as a reader would: by the controls' visible names.

The defaults are read on the static page (/heatmap); clicks, deep links and repaired values
on the live one (/live/heatmap), a Panel session behind it."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def weight(page, text):  # a weight shown on its own (a cell of the arithmetic table)
    return page.get_by_text(text, exact=True).first


def test_defaults_show_the_documents_weights(open_page):
    page = open_page("/heatmap")
    expect(weight(page, "0.77")).to_be_visible()  # row 2 (sat) on cat
    expect(weight(page, "0.07")).to_be_visible()  # row 2 on the
    expect(page.get_by_text("0.23", exact=True)).to_have_count(0)


def test_causal_mask_toggle_lets_row_2_see_mat(open_page):
    page = open_page("/live/heatmap")
    mask = page.get_by_role("button", name="causal mask")
    expect(mask).to_be_visible()
    mask.click()
    expect(weight(page, "0.23")).to_be_visible()  # row 2 on mat, three positions ahead
    expect(page).to_have_url(re.compile(r"[?&]mask=off"))  # the address is a deep link


def test_deep_link_restores_mask_off_and_query_2(open_page):
    page = open_page("/live/heatmap?mask=off&query=2")
    expect(weight(page, "0.23")).to_be_visible()
    expect(page.get_by_text(re.compile(r"out of range|ignored"))).to_have_count(0)


def test_out_of_range_length_is_clamped_with_a_visible_note(open_page):
    page = open_page("/live/heatmap?length=99")
    expect(page.get_by_text(re.compile(r"length=99 is out of range; using 8"))).to_be_visible()
    expect(page.get_by_text("28 of 64").first).to_be_visible()  # the head runs at length 8
    assert "error" not in page.title().lower()
