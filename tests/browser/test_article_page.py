"""The two chapters, live at "/live/" and "/live/math": their panels arrive after the page
appears and still answer deep links, the chapters link to each other, and the theme switch
works. (The static chapters at "/" and "/math": test_routes.py, test_static_build.py.)"""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def panels_loaded(page):  # the chapters build their panels after the page appears
    expect(page.locator(".pn-loading")).to_have_count(0)


@pytest.fixture
def open_chapter(open_page):  # open_chapter("/live/math?users=64") -> the page, panels in place
    def _open(path):
        page = open_page(path)
        panels_loaded(page)
        return page

    return _open


def test_article_head_restores_a_deep_link(open_chapter):
    page = open_chapter("/live/?mask=off&query=2")
    expect(page.get_by_text("0.23", exact=True).first).to_be_visible()


def test_article_holds_the_kernel_lab_under_a_prefixed_key(open_chapter):
    page = open_chapter("/live/?lab_length=99999999&length=7")
    expect(page.get_by_text(re.compile(r"lab_length=99999999 is out of range; using \d+"))
           ).to_be_visible()
    expect(page.get_by_role("button", name="Sweep prompt length")).to_be_visible()
    expect(page.get_by_text(re.compile(r"A live kernel lab is coming"))).to_have_count(0)
    # the head took plain `length`; nothing complained about it
    expect(page.get_by_text(re.compile(r"\blength=7"))).to_have_count(0)


def test_the_chapters_link_to_each_other(open_chapter):
    page = open_chapter("/live/")
    page.get_by_role("link", name="Next: dot products, softmax and attention math →").click()
    expect(page).to_have_url(re.compile(r"/live/math$"))
    expect(page.get_by_role("heading", name="Dot products, softmax and attention math")
           ).to_be_visible()
    panels_loaded(page)
    page.get_by_role("link", name="← Scaled dot-product attention").click()
    expect(page).to_have_url(re.compile(r"/live/$"))
    expect(page.get_by_role("heading", name="Scaled dot-product attention, worked")
           ).to_be_visible()


def test_math_chapter_deep_link_reaches_each_panel_by_its_key(open_chapter):
    page = open_chapter("/live/math?users=64&memory_users=32&memory_model=gpt2&step=99")
    expect(page.get_by_text(re.compile(r"For all 64 users"))).to_be_visible()  # decode bill
    expect(page.get_by_text(re.compile(r"For 32 users at 4,096 tokens each"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"Counting\s+GPT-2")).first).to_be_visible()  # memory
    expect(page.get_by_text(re.compile(r"step=99 is out of range; using 16"))).to_be_visible()
    # the decode bill keeps its own model: Llama-3-8B's 4,194,304 dot products (folded)
    expect(page.get_by_text(re.compile(r"^4,194,304$")).first).to_be_attached()
    # a change made on a deferred panel goes back into the address under its own key
    users = page.get_by_role("textbox", name=re.compile(r"^users \(1"))  # the memory bill's
    users.fill("16")
    users.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]memory_users=16(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]users=64(&|$)"))


def test_theme_link_switches_to_dark_and_back_keeping_the_state(open_page, rendered):
    page = open_page("/live/?mask=off")
    page.get_by_role("link", name="Dark theme").click()  # native: it keeps the address's state
    expect(page).to_have_url(re.compile(r"[?&]theme=dark"))
    expect(page).to_have_url(re.compile(r"[?&]mask=off"))
    rendered(page)
    light = page.get_by_role("link", name="Light theme")
    expect(light).to_be_visible()
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == "rgb(18, 18, 18)"
    # the link to the next chapter keeps the theme
    expect(page.get_by_role("link", name=re.compile("Next: dot products"))).to_have_attribute(
        "href", "math?theme=dark")
    light.click()
    expect(page).to_have_url(re.compile(r"[?&]theme=default"))
    rendered(page)
    expect(page.get_by_role("link", name="Dark theme")).to_be_visible()
