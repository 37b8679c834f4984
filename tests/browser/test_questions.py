"""Predict, then see, in Chromium: the questions of the static chapter at "/" (a build of the
site, served by a plain static file server, as test_static_build.py does).

A choice answered wrongly then rightly, a number inside and outside its band, Enter and the
keyboard alone, a reload that keeps every answer, the review at the end listing exactly the
questions still wrong or unanswered, "Hide questions" and ?questions=off, "Show me" putting
the head in the state that shows the answer, and axe-core on the page with the questions
shown and answered: no critical or serious violation.
"""

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from app.chapters import content, questions
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.static_pages import BOOTED_JS, HOLES_JS
from tests.browser.test_a11y import laid_out_at, violations
from tests.browser.test_static_build import Watch, built, close_watched, file_server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

IDS = [q.id for q in questions.questions_of(content.load("attention.md"))]


@pytest.fixture
def chapter(browser, file_server):  # noqa: F811  chapter(query="") -> a fresh reader's "/"
    contexts = []

    def _open(query="", context=None, theme_file=""):
        if context is None:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(RENDER_TIMEOUT_MS)
            contexts.append((context, Watch(page, urlsplit(file_server).netloc)))
        else:
            page = context.pages[0]
        page.goto(f"{file_server}/{theme_file}{query}")
        page.wait_for_function("() => window.AE !== undefined && AE.questions !== undefined && "
                               "document.querySelector('.ae-q-toggle') !== null")
        return page

    yield _open
    close_watched(contexts)


def question(page, qid):
    return page.locator(f"#q-{qid}")


def answer_choice(page, qid, key, how="click"):
    q = question(page, qid)
    q.locator(f"#q-{qid}-{key}").check()
    if how == "enter":
        q.locator(f"#q-{qid}-{key}").press("Enter")
    else:
        q.get_by_role("button", name="Check").click()
    return q


def answer_number(page, qid, value):
    q = question(page, qid)
    q.get_by_label("Your answer").fill(str(value))
    q.get_by_role("button", name="Check").click()
    return q


def feedback(q):
    return q.locator(".ae-q-feedback")


def review_ids(page):  # the questions the review lists now, in order
    return page.evaluate("""() => [...document.querySelectorAll(
        '.ae-review li[data-question]')].filter((li) => li.offsetParent !== null)
        .map((li) => li.dataset.question)""")


def test_a_choice_answered_wrongly_then_rightly(chapter):
    page = chapter()
    q = answer_choice(page, "mask-off-row2", "on")
    expect(feedback(q)).to_contain_text("Not quite.")
    expect(feedback(q)).to_contain_text("You picked: on, the word right after sat")
    expect(q.locator(".ae-q-reply")).to_contain_text("Nearness earns nothing")  # its own
    expect(feedback(q)).to_contain_text("row 2 gives 0.23 to mat")  # the computed value
    expect(q).to_have_attribute("data-result", "wrong")
    q = answer_choice(page, "mask-off-row2", "mat")
    expect(feedback(q)).to_contain_text("Right.")
    expect(feedback(q)).to_contain_text("0.23")
    # the why
    expect(feedback(q)).to_contain_text("shared among all six keys. mat fits the query of sat")
    expect(q).to_have_attribute("data-result", "right")
    assert feedback(q).get_attribute("aria-live") == "polite"


def test_nothing_chosen_asks_for_an_answer_and_stores_nothing(chapter):
    page = chapter()
    q = question(page, "decode-mask")
    q.get_by_role("button", name="Check").click()
    expect(feedback(q)).to_have_text("Pick one of the answers first.")
    expect(q).not_to_have_attribute("data-result", re.compile("."))


def test_a_number_question_judges_within_its_band(chapter):
    page = chapter()
    q = answer_number(page, "pairs-discarded-8", 27)  # band 0: only the exact number
    expect(feedback(q)).to_contain_text("Not quite. You said 27 pairs.")
    expect(feedback(q)).to_contain_text("28 of the 64 pairs are computed, then thrown away")
    q = answer_number(page, "pairs-discarded-8", 28)
    expect(feedback(q)).to_contain_text("Right.")
    q = answer_number(page, "cost-share-4096", 8)  # band: 15% around 7.4%
    expect(feedback(q)).to_contain_text("Right.")
    expect(feedback(q)).to_contain_text("7.4%")
    q = answer_number(page, "cost-share-4096", 50)  # the common guess: far too high
    expect(feedback(q)).to_contain_text("Not quite.")
    expect(q.locator(".ae-q-reply")).to_contain_text("is still far less than 4,096 tokens at")
    q = answer_number(page, "cost-share-4096", 1)  # too low: its own reply
    expect(q.locator(".ae-q-reply")).to_contain_text("the pairs against the tokens give 7.4%")
    q = answer_number(page, "effective-keys-128", 1.5)  # band: 15% around the mean of 1.4
    expect(feedback(q)).to_contain_text("Right.")
    expect(feedback(q)).to_contain_text("about 1.4 effective keys of 16")
    q = answer_number(page, "effective-keys-128", 1)  # one-hot: the slip the chapter corrects
    expect(feedback(q)).to_contain_text("Not quite.")
    expect(q.locator(".ae-q-reply")).to_contain_text("Close, but the runner-up often trails")


def reply_text(page, qid):
    return " ".join(question(page, qid).locator(".ae-q-reply").inner_text().split())


@pytest.mark.parametrize("name, route", [("attention.md", ""), ("math.md", "math/")])
def test_each_wrong_answer_shows_its_own_reply_with_its_number(chapter, name, route):
    page = chapter(theme_file=route)
    for q in questions.questions_of(content.load(name)):
        ans = questions.answer(q)
        said = {key: questions.plain(text) for key, text in questions.replies(q, ans).items()}
        if q.kind == "choice":
            tried = [(key, key) for key, _ in q.options if key != ans.correct]
        else:  # each slip, and a number on either side of the band
            tried = [*((slip, name) for name, slip in ans.slips.items()),
                     (float(ans.correct) / 1000 - 1, "low"),
                     (float(ans.correct) * 1000 + 1, "high")]
        for given, key in tried:
            box = (answer_choice(page, q.id, given) if q.kind == "choice"
                   else answer_number(page, q.id, given))
            expect(box).to_have_attribute("data-result", "wrong")
            expect(box.locator(".ae-q-reply")).to_have_count(1)
            assert reply_text(page, q.id) == " ".join(said[key].split()), (q.id, key)
            assert re.search(r"\d", said[key]), (q.id, key, "no number")


def test_the_keyboard_alone_answers(chapter):
    page = chapter()
    q = question(page, "decode-growth")
    q.locator("#q-decode-growth-square").focus()
    page.keyboard.press("ArrowDown")  # moves the choice to "linear"
    expect(q.locator("#q-decode-growth-linear")).to_be_checked()
    page.keyboard.press("Enter")
    expect(feedback(q)).to_contain_text("Right.")
    page.keyboard.press("ArrowDown")  # "one": then Tab to Check, and Space
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Check"
    page.keyboard.press("Space")
    expect(feedback(q)).to_contain_text("Not quite.")
    expect(feedback(q)).to_contain_text("3, 4, 5, 6, 7, 8")


def test_a_reload_keeps_the_answers_and_their_feedback(chapter):
    page = chapter()
    answer_choice(page, "mask-off-row2", "mat")
    answer_choice(page, "decode-mask", "future")
    answer_number(page, "pairs-discarded-8", 28)
    page = chapter(context=page.context)
    expect(question(page, "mask-off-row2").locator("#q-mask-off-row2-mat")).to_be_checked()
    expect(feedback(question(page, "mask-off-row2"))).to_contain_text("Right.")
    expect(question(page, "decode-mask")).to_have_attribute("data-result", "wrong")
    expect(feedback(question(page, "decode-mask"))).to_contain_text("Not quite.")
    expect(question(page, "pairs-discarded-8").get_by_label("Your answer")).to_have_value("28")
    expect(question(page, "pairs-discarded-8")).to_have_attribute("data-result", "right")
    # the dark theme's file is the same page: the same answers
    page = chapter(context=page.context, theme_file="index-dark.html")
    expect(question(page, "pairs-discarded-8")).to_have_attribute("data-result", "right")


def test_the_review_lists_exactly_the_wrong_and_unanswered(chapter):
    page = chapter()
    assert review_ids(page) == IDS
    expect(page.locator(".ae-review-status")).to_have_text(
        f"{len(IDS)} of {len(IDS)} questions still to answer, or to answer again:")
    answer_choice(page, "mask-off-row2", "mat")  # right
    answer_choice(page, "mask-off-rows-0-4", "later")  # wrong
    answer_number(page, "pairs-discarded-8", 28)  # right
    expected = [i for i in IDS if i not in ("mask-off-row2", "pairs-discarded-8")]
    assert review_ids(page) == expected
    expect(page.locator('.ae-review li[data-question="mask-off-rows-0-4"]')).to_contain_text(
        "(answered wrongly)")
    expect(page.locator('.ae-review li[data-question="decode-mask"]')).to_contain_text(
        "(not answered yet)")
    link = page.locator('.ae-review li[data-question="mask-off-rows-0-4"] a')
    assert link.get_attribute("href") == "#q-mask-off-rows-0-4"
    answer_choice(page, "mask-off-rows-0-4", "same")  # right now: it leaves the list
    assert review_ids(page) == [i for i in expected if i != "mask-off-rows-0-4"]
    page = chapter(context=page.context)  # and a reload lists the same
    assert review_ids(page) == [i for i in expected if i != "mask-off-rows-0-4"]


def test_every_question_answered_right_empties_the_review(chapter):
    page = chapter()
    for qid in IDS:
        q = next(q for q in questions.questions_of(content.load("attention.md")) if q.id == qid)
        right = questions.answer(q).correct
        if q.kind == "choice":
            answer_choice(page, qid, right)
        else:
            answer_number(page, qid, right)
    assert review_ids(page) == []
    expect(page.locator(".ae-review-status")).to_have_text(
        f"You have answered all {len(IDS)} questions of this chapter right.")


def test_hide_questions_and_questions_off(chapter):
    page = chapter()
    toggle = page.get_by_role("button", name="Hide questions")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(page.locator(".ae-question").first).to_be_visible()
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    for locator in (page.locator(".ae-question"), page.locator(".ae-review")):
        for i in range(locator.count()):
            expect(locator.nth(i)).to_be_hidden()
    page = chapter(context=page.context)  # remembered
    expect(page.locator(".ae-question").first).to_be_hidden()
    page.get_by_role("button", name="Hide questions").click()
    expect(page.locator(".ae-question").first).to_be_visible()
    expect(page.locator(".ae-review")).to_be_visible()

    page = chapter("?questions=off")  # a fresh reader, told by the address
    expect(page.get_by_role("button", name="Hide questions")).to_have_attribute(
        "aria-pressed", "true")
    assert page.locator(".ae-question:visible").count() == 0
    expect(page.locator(".ae-review")).to_be_hidden()
    expect(page.locator("main p").first).to_be_visible()  # the prose stays


def test_show_me_puts_the_head_in_the_answering_state(chapter):
    page = chapter()
    question(page, "mask-off-row2").get_by_role("button", name="Show me").click()
    page.wait_for_function(BOOTED_JS)
    page.wait_for_function(f"() => ({HOLES_JS})().weight5 === '0.23'")  # row 2 on mat
    expect(page).to_have_url(re.compile(r"[?&]mask=off(&|$)"))
    assert page.evaluate("document.activeElement.id") == "panel-head"


@pytest.mark.parametrize("theme_file", ["", "index-dark.html"])
def test_axe_finds_nothing_serious_with_the_questions_answered(chapter, theme_file):
    page = chapter(theme_file=theme_file)
    answer_choice(page, "mask-off-row2", "on")  # wrong
    answer_choice(page, "mask-off-rows-0-4", "same")  # right
    answer_number(page, "pairs-discarded-8", 28)
    question(page, "decode-mask").locator("summary").click()  # an open answer too
    found = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        laid_out_at(page, width)
        failing, moderate = violations(page)
        for row in moderate:
            print(f"moderate on / {theme_file} ({width} px): {row}")
        found += [(width, *row) for row in failing]
    assert not found, found


def test_question_text_is_16px_and_targets_24px(chapter):
    page = chapter()
    sizes = page.evaluate("""() => [...document.querySelectorAll(
        '.ae-question legend, .ae-question label, .ae-q-feedback, .ae-question summary')]
        .map((e) => parseFloat(getComputedStyle(e).fontSize))""")
    assert min(sizes) >= 16, sizes
    boxes = page.evaluate("""() => [...document.querySelectorAll(
        '.ae-question input, .ae-question button, .ae-question summary, .ae-q-toggle')]
        .map((e) => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })""")
    assert all(w >= 24 and h >= 24 for w, h in boxes), boxes


def test_a_panel_page_carries_the_question_a_link_asks_for(browser, file_server):  # noqa: F811
    # /heatmap?ask=<id>: a course page's frame shows that one question above the panel,
    # judges it, and "Show me" sets the panel under the page's own keys
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(page, urlsplit(file_server).netloc)
    try:
        page.goto(f"{file_server}/heatmap/index.html")
        assert page.locator("template.ae-asked").count() >= 3  # the chapters' head questions
        expect(page.locator(".ae-question")).to_have_count(0)  # asked for none: none there
        page.goto(f"{file_server}/heatmap/index.html?ask=mask-off-row2")
        q = question(page, "mask-off-row2")
        expect(q).to_be_visible()
        expect(page.locator(".ae-question:visible")).to_have_count(1)
        expect(page.locator(".ae-q-toggle")).to_have_count(0)  # no chapter switch here
        answer_choice(page, "mask-off-row2", "on")
        expect(feedback(q)).to_contain_text("0.23")
        q.get_by_role("button", name="Show me").click()
        expect(page).to_have_url(re.compile(r"[?&]mask=off"))
        page.get_by_text("0 of 36").first.wait_for()
    finally:
        context.close()
    assert not watch.problems, watch.problems


@pytest.mark.parametrize("device", ["Pixel 5", "iPhone 12"])
def test_axe_finds_nothing_serious_on_a_phone_with_questions_answered_and_hidden(
        chapter, browser, playwright, device):
    context = browser.new_context(**playwright.devices[device])  # mobile viewport, touch
    context.new_page().set_default_timeout(RENDER_TIMEOUT_MS)
    page = chapter(context=context)  # opens "/" in that context's page
    try:
        answer_choice(page, "mask-off-row2", "on")  # wrong
        answer_number(page, "pairs-discarded-8", 28)  # right
        question(page, "decode-mask").locator("summary").click()
        found = violations(page)[0]  # the critical and serious ones
        page.get_by_role("button", name="Hide questions").click()
        found += violations(page)[0]
        assert not found, (device, found)
    finally:
        context.close()
