"""The live chapter's questions (app/live_question.py) in Chromium: a wrong answer, then the
right one, each with the computed value; "Show me" sets the head as a deep link would."""

import re

from playwright.sync_api import expect

from tests.browser.conftest import wait_for_render


def test_a_live_question_is_judged_and_shows_its_state(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/live")
    wait_for_render(page)
    page.get_by_text("0 of 36").or_(page.get_by_text("15 of 36")).first.wait_for()
    answer = page.get_by_role("combobox", name="Your answer").first
    answer.select_option(label="on, the word right after sat")
    checks = page.get_by_role("button", name="Check")
    checks.first.click()
    expect(page.get_by_text("Not quite.").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"row 2 gives 0\.23 to mat")).first).to_be_visible()
    answer.select_option(label="mat, three words further on")
    checks.first.click()
    expect(page.get_by_text("Right.", exact=True).first).to_be_visible()
    expect(page.get_by_text("15 of 36").first).to_be_visible()  # the mask is still on
    page.get_by_role("button", name="Show me").first.click()
    expect(page.get_by_text("0 of 36").first).to_be_visible()  # the head, mask off
    expect(page).to_have_url(re.compile(r"[?&]mask=off"))
