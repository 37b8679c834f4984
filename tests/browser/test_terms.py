"""Terms and references in Chromium (static/terms.js over the static build, served by a
plain static file server as test_static_build.py does).

A later use of a defined term opens its definition in a popover from the keyboard (Tab
focuses it) and closes with Escape; on a phone (Pixel 5 emulation: touch, mobile viewport) a
tap opens it and a second tap closes it; a mouse hover opens a citation's reference. The
popover says what the glossary says, moves nothing on the page, and axe finds nothing
critical or serious with it open. Without scripts a term is a plain link that lands on its
glossary entry, and every question still holds its answer and its reasons.
"""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from app.chapters import apparatus, content
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.readiness import settled_js
from tests.browser.test_a11y import violations
from tests.browser.test_static_build import Watch, built, close_watched, file_server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

TIP = "#ae-term-tip"
OPEN_JS = "() => { const t = document.getElementById('ae-term-tip'); " \
          "return !!t && t.matches(':popover-open'); }"
CLOSED_JS = f"() => !({OPEN_JS})()"
WHERE_JS = ("() => [document.documentElement.scrollHeight, "
            "document.querySelector('main').getBoundingClientRect().top]")
IN_VIEW_MOUNTED_JS = """() => [...document.querySelectorAll('.ae-island')].every((el) => {
  const box = el.getBoundingClientRect();
  return box.bottom < 0 || box.top > innerHeight || el.classList.contains('ae-mounted'); })"""


@pytest.fixture
def opened(browser, file_server):  # noqa: F811  opened(route, **context options) -> a page
    contexts = []

    def _open(route="", **options):
        options.setdefault("viewport", {"width": 1280, "height": 900})
        context = browser.new_context(**options)
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        contexts.append((context, Watch(page, urlsplit(file_server).netloc)))
        page.goto(f"{file_server}/{route}")
        if options.get("java_script_enabled", True):
            page.wait_for_function("() => window.AE !== undefined && AE.terms !== undefined")
        return page

    yield _open
    close_watched(contexts)


def glossary_text(page, tid):
    return " ".join(page.locator(f"#glossary-{tid}-def").inner_text().split())


def tip_text(page):
    return " ".join(page.locator(TIP).inner_text().split())


def first_term(page):  # -> (the first later-use link of the page, its term id)
    link = page.locator("a.ae-term").first
    return link, link.get_attribute("href").removeprefix("#glossary-")


def test_the_keyboard_opens_a_term_and_escape_closes_it(opened):
    page = opened()
    link, tid = first_term(page)
    link.scroll_into_view_if_needed()
    link.focus()  # as Tab would: keyboard focus, so :focus-visible
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.wait_for_function(OPEN_JS)
    assert tip_text(page).startswith(glossary_text(page, tid))
    assert page.evaluate("document.activeElement.className") == "ae-term"  # focus stays
    page.keyboard.press("Escape")
    page.wait_for_function(CLOSED_JS)


def test_the_popover_moves_nothing_and_axe_finds_nothing_serious_with_it_open(opened):
    page = opened()
    link, _ = first_term(page)
    link.scroll_into_view_if_needed()
    # an island that came into view mounts (and may move the page by a few px): let it first
    page.wait_for_function(IN_VIEW_MOUNTED_JS)
    # laid out: two reads 300 ms apart agree
    before = page.wait_for_function(settled_js(WHERE_JS), arg="terms", polling=300).json_value()
    link.hover()
    page.wait_for_function(OPEN_JS)
    after = page.evaluate(WHERE_JS)
    assert after == before
    box = page.locator(TIP).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
    failing, moderate = violations(page)
    for row in moderate:
        print(f"moderate with a term open: {row}")
    assert not failing, failing


def test_hovering_a_citation_shows_its_reference(opened):
    page = opened("math/")
    cite = page.locator("a.ae-cite").first
    rid = cite.get_attribute("href").removeprefix("#ref-")
    cite.scroll_into_view_if_needed()
    cite.hover()
    page.wait_for_function(OPEN_JS)
    listed = " ".join(page.locator(f"#ref-{rid}").inner_text().split())
    assert tip_text(page).startswith(listed)
    expect(page.locator(TIP).get_by_role("link", name="In the references")).to_have_attribute(
        "href", f"#ref-{rid}")


@pytest.mark.parametrize("device", ["Pixel 5"])
def test_a_tap_opens_a_term_on_a_phone_and_a_second_tap_closes_it(opened, playwright, device):
    page = opened(**playwright.devices[device])  # mobile viewport and touch
    link, tid = first_term(page)
    link.scroll_into_view_if_needed()
    link.tap()
    page.wait_for_function(OPEN_JS)
    assert tip_text(page).startswith(glossary_text(page, tid))
    box = page.locator(TIP).bounding_box()
    width = page.viewport_size["width"]
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)
    assert page.url.endswith("/")  # the tap opened the popover, it did not follow the link
    link.tap()
    page.wait_for_function(CLOSED_JS)
    failing, _ = violations(page)
    assert not failing, failing


def test_without_scripts_a_term_is_a_link_to_its_glossary_entry(opened):
    page = opened(java_script_enabled=False)
    link, tid = first_term(page)
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url(f"**#glossary-{tid}")
    expect(page.locator(f"#glossary-{tid}")).to_be_in_viewport()
    expect(page.locator(f"#glossary-{tid} a")).to_have_attribute("href", f"#term-{tid}")
    expect(page.locator(f"#term-{tid}")).to_have_count(1)  # and it links back to the first use
    # every question still shows its answer and why each wrong answer fails
    details = page.locator(".ae-q-answer")
    assert details.count() >= 5
    for i in range(details.count()):
        expect(details.nth(i).locator(".ae-q-reasons li").first).to_be_attached()


def test_every_term_of_the_chapters_is_in_their_glossaries(opened):
    for route, name in (("", "attention.md"), ("math/", "math.md")):
        page = opened(route)
        defined = apparatus.Apparatus(content.load(name).sections).defined
        listed = page.eval_on_selector_all(".ae-glossary-list dt", "(d) => d.map((e) => e.id)")
        assert listed == [f"glossary-{tid}" for tid in defined]
        for tid in defined:
            expect(page.locator(f"dfn#term-{tid}")).to_have_count(1)
