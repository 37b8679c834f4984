"""A figure on the first screen: each chapter shows one before the reader scrolls, at 1280 x 900
and on a phone (Pixel 5 emulation), and the first chapter's opening figure answers its one
control without scripts (its native radios and CSS, app/chapters/figures.py)."""

import pytest
from playwright.sync_api import expect

from app.kit import registry

CHAPTERS = [c.route for c in registry.CHAPTERS]
SEEN_PX = 120  # at least this much of the figure is inside the first viewport
FIGURE = "main figure.ae-small-figure svg, main .ae-island"


def first_figure_top(page):  # -> (top of the first figure's box, viewport height), in CSS px
    box = page.locator(FIGURE).first.bounding_box()
    return box["y"], page.viewport_size["height"]


@pytest.fixture(params=["desktop", "Pixel 5"])
def device_page(request, browser, playwright, base_url):
    options = ({"viewport": {"width": 1280, "height": 900}} if request.param == "desktop"
               else playwright.devices[request.param])
    context = browser.new_context(**options, base_url=base_url)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("route", CHAPTERS)
def test_each_chapter_shows_a_figure_on_its_first_screen(device_page, route):
    device_page.goto(route)
    expect(device_page.locator(FIGURE).first).to_be_attached()
    top, height = first_figure_top(device_page)
    assert 0 <= top <= height - SEEN_PX, f"{route}: the first figure starts at {top} of {height}"


def test_the_opening_figure_answers_its_control_without_scripts(browser, base_url):
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    page = context.new_page()
    page.goto("/")
    figure = page.locator("main figure.ae-small-figure").first
    states = figure.locator(".ae-figure-state")
    expect(states.nth(0)).to_be_visible()  # prefill, the panel's default, checked
    expect(states.nth(1)).to_be_hidden()
    figure.get_by_label("decode").check()  # the reader's one control
    expect(states.nth(1)).to_be_visible()
    expect(states.nth(0)).to_be_hidden()
    assert figure.locator("legend").inner_text().strip() == "phase"
    context.close()


def test_explore_this_opens_the_big_panel_in_the_figures_state(page):
    # the decode section's second figure: the roofline with 64 users
    page.goto("/math")
    figure = page.locator('main figure.ae-small-figure[data-slot="decode"]').filter(
        has=page.locator('a.ae-explore[href*="users=64"]'))
    expect(figure).to_have_count(1)
    link = figure.get_by_role("link", name="Explore this →")
    link.click()
    page.wait_for_function("""() => window.AE && AE.states && [...AE.states.panels.values()]
        .some((p) => p.booted && p.spec.table.controls.some((c) => c.name === "users"))""")
    users = page.evaluate("""() => {
      const p = [...AE.states.panels.values()].find(
        (p) => p.booted && p.spec.table.controls.some((c) => c.name === "users"));
      const i = p.spec.table.controls.findIndex((c) => c.name === "users");
      const c = p.spec.table.controls[i];
      return c.values[c.raw.indexOf(p.controls[i][c.prop])];
    }""")
    assert users == 64
    assert "users=64" in page.url and page.url.endswith("#panel-decode")


SMALLEST_PX = 12  # a figure's type on a phone


@pytest.mark.parametrize("route", CHAPTERS)
def test_every_figures_type_is_at_least_12_px_on_a_phone(browser, playwright, base_url, route):
    context = browser.new_context(**playwright.devices["Pixel 5"], base_url=base_url)
    page = context.new_page()
    page.goto(route)
    expect(page.locator("main figure.ae-small-figure").first).to_be_visible()
    sizes = page.evaluate("""() => [...document.querySelectorAll(
        'main figure.ae-small-figure text, main figure.ae-small-figure td, ' +
        'main figure.ae-small-figure th')].filter((el) => el.getClientRects().length)
      .map((el) => {
        let px = parseFloat(getComputedStyle(el).fontSize);
        if (el instanceof SVGElement) {
          const m = el.getScreenCTM();
          px *= Math.hypot(m.a, m.b);  // the view box's scale on this screen
        }
        return [px, el.textContent.slice(0, 30)];
      })""")
    context.close()
    assert len(sizes) > 50
    small = [s for s in sizes if s[0] < SMALLEST_PX]
    assert not small, f"{route}: type under {SMALLEST_PX} px: {small[:5]}"
