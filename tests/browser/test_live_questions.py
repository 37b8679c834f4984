"""The live chapter's questions (app/chapters/live_question.py) in Chromium: a wrong answer,
then the right one, each with the computed value; "Show me" sets the head as a deep link would."""

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


def open_live(page, path="/live"):
    page.goto(path)
    wait_for_render(page)
    page.get_by_text("0 of 36").or_(page.get_by_text("15 of 36")).first.wait_for()


def test_a_live_chapter_keeps_answers_in_the_browser_and_reviews_them(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_live(page)
    review = page.locator(".ae-review")
    expect(review).to_contain_text("9 of 9 questions still to answer")
    answer = page.get_by_role("combobox", name="Your answer").first
    answer.select_option(label="on, the word right after sat")  # wrong
    page.get_by_role("button", name="Check").first.click()
    expect(page.get_by_text("Not quite.").first).to_be_visible()
    first = review.get_by_role("listitem").first
    expect(first).to_contain_text("(answered wrongly)")
    kept = page.evaluate("() => Object.keys(window.localStorage)"
                         ".filter((k) => k.startsWith('ae-questions:/live#'))")
    assert kept == ["ae-questions:/live#mask-off-row2"]

    open_live(page)  # a reload: the answer comes back from this browser, judged again
    expect(page.get_by_role("combobox", name="Your answer").first).to_have_value(
        "on, the word right after sat")
    expect(page.get_by_text("Not quite.").first).to_be_visible()
    expect(review.get_by_role("listitem").first).to_contain_text("(answered wrongly)")
    review.get_by_role("link").first.click()  # back to the question: focus on its text
    expect(page.locator("#q-mask-off-row2")).to_be_focused()

    page.get_by_role("combobox", name="Your answer").first.select_option(
        label="mat, three words further on")
    page.get_by_role("button", name="Check").first.click()
    expect(page.get_by_text("Right.", exact=True).first).to_be_visible()
    expect(review).to_contain_text("8 of 9 questions still to answer")
    expect(review.get_by_role("listitem")).to_have_count(8)


def test_a_live_chapter_hides_its_questions_when_asked(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_live(page)
    legends = page.locator(".ae-q-legend")
    expect(legends).to_have_count(9)
    toggle = page.get_by_role("button", name="Hide questions")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(legends.first).to_be_hidden()
    expect(page.locator(".ae-review")).to_be_hidden()
    open_live(page)  # remembered in this browser
    expect(page.locator(".ae-q-legend").first).to_be_hidden()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    toggle.click()
    expect(page.locator(".ae-q-legend").first).to_be_visible()
    expect(toggle).to_have_attribute("aria-pressed", "false")

    open_live(page, "/live?questions=off")  # a link or an embed without them
    expect(page.get_by_role("button", name="Hide questions")).to_have_count(0)
    expect(page.get_by_role("button", name="Check")).to_have_count(0)
    expect(page.locator(".ae-review")).to_have_count(0)


def test_a_live_chapters_header_works_before_its_session_which_waits_to_be_neared(context):
    # Pixel 5-sized: the first part needing the session is screens below the header
    page = context.new_page()
    page.set_viewport_size({"width": 393, "height": 851})
    bundles = []
    page.on("request", lambda r: bundles.append(r.url) if "bokeh.min.js" in r.url else None)
    page.goto("/live")
    page.wait_for_function("() => window.AE !== undefined && AE.livePage !== undefined")
    toggle = page.get_by_role("button", name="Hide questions")
    toggle.click()  # native: it answers with no session
    expect(toggle).to_have_attribute("aria-pressed", "true")
    toggle.click()
    page.wait_for_load_state("load")
    assert not bundles and page.evaluate("() => window.Bokeh === undefined")
    page.locator(".ae-live-panel").first.scroll_into_view_if_needed()  # a reader scrolls there
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents.length > 0")
    expect(page.locator(".ae-live-panel").first.get_by_text("dot products").first).to_be_visible()
    assert len(bundles) == 1
    page.close()
