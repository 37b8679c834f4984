"""An island holds its panel's height before it mounts, so nothing below it moves then.

Each record of app/kit/registry.py says how tall its panel is, mounted in a chapter, at
1280 px (`island_height`) and on a phone (`phone_height`), and on its page of its own, where
its title and what its own() holds make it taller (`page_height`, `page_phone_height`). A
panel that grows (a note more, a chart taller) and a record left as it was would move the
page under the reader when the island mounts; a record that names too much leaves a gap under
the still. Here every island of every chapter and of every panel's page is mounted, at
1280 x 900 and in Pixel 5 emulation, and its height is held to what it held before.
"""

import pytest

from app.kit import registry
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.readiness import settled_js

pytestmark = pytest.mark.browser

# px or share of the held height: fonts, wrapping and a scrollbar move a panel by a few px
SLACK_PX, SLACK = 40, 0.08
# what the island holds, read from --ae-held, not min-height: an island that mounts by itself
# (the kernel lab's page, at idle) drops its min-height, and reading that would race the mount
HELD_JS = """() => [...document.querySelectorAll('.ae-island')].map((el) =>
  [el.dataset.slot, parseFloat(getComputedStyle(el).getPropertyValue('--ae-held'))])"""
MOUNTED_JS = """() => [...document.querySelectorAll('.ae-island')].map((el) =>
  [el.dataset.slot, el.classList.contains('ae-mounted'), el.getBoundingClientRect().height])"""


@pytest.mark.parametrize("device", ["desktop", "Pixel 5"])
@pytest.mark.parametrize("route", [c.route for c in registry.CHAPTERS]
                         + [r.route for r in registry.PANELS])
def test_a_mounted_island_is_as_tall_as_it_held(browser, playwright, base_url, route, device):
    options = ({"viewport": {"width": 1280, "height": 900}} if device == "desktop"
               else dict(playwright.devices[device]))
    context = browser.new_context(base_url=base_url, **options)
    try:
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        page.goto(route)
        page.wait_for_function("() => window.AE && AE.islands")
        held = dict(page.evaluate(HELD_JS))
        own = registry.by_route(route)  # a panel's page of its own, or None: a chapter
        slots = ([own.slot] if own else [r.slot for r in registry.PANELS
                                         if r.chapter == registry.chapter_at(route).content])
        assert set(held) == set(slots), (held, slots)
        field = "island_height" if device == "desktop" else "phone_height"
        for slot, px in held.items():  # the page holds what the record says
            assert px == getattr(registry, field)(slot, own_page=own is not None), (slot, px)
        page.evaluate("AE.islands.mountAll()")
        page.wait_for_function(f"() => ({MOUNTED_JS})().every(([, mounted]) => mounted)")
        # until the last plot is laid out: two reads 300 ms apart agree
        mounted = page.wait_for_function(settled_js(MOUNTED_JS), arg=route + device,
                                         polling=300).json_value()
        wrong = [(slot, round(height), held[slot]) for slot, _, height in mounted
                 if abs(height - held[slot]) > max(SLACK_PX, SLACK * held[slot])]
        assert not wrong, f"{route} {device}: (slot, mounted px, held px) {wrong}"
    finally:
        context.close()
