"""A live chapter's panels are usable before their session attaches: each shows the static
chapter's still with native controls (app/chapters/live_stills.py), which answer at once, and
the stops a reader sets there survive the hand-over to the session's panel (static/
live_stills.js): the session's own widgets show them, the focus moves to the live control of
the same name, and nothing is waited on but conditions."""

import json
import re

from tests.browser.conftest import wait_for_render

BUNDLE = re.compile(r"/static/(js/bokeh[a-z-]*|extensions/panel/panel)\.min\.js")
HANDED_OVER = "() => document.querySelectorAll('.ae-live-panel > .ae-island.ae-mounted').length"

# the still is drawn with its control k at `stop` (still_controls.js marks the stops it shows)
STILL_AT_JS = """([el, k, stop]) => el.dataset.aeStill !== undefined
  && el.dataset.aeStill.split(",")[k] === String(stop)"""

# the element that holds the focus, through shadow roots
DEEP_FOCUS_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; }
  return e ? {label: e.getAttribute("aria-label"), now: e.getAttribute("aria-valuenow"),
              tag: e.localName} : null;
}"""

# -> the text of every Bokeh button of the island that is active, through shadow roots, as
# plain lower-case letters and digits (the live button says "GPT-2" for the still's "gpt2")
ACTIVE_BUTTONS_JS = """(island) => {
  const plain = (text) => text.toLowerCase().replace(/[^a-z0-9]/g, "");
  const out = [], roots = [island];
  while (roots.length) {
    for (const e of roots.pop().querySelectorAll("*")) {
      if (e.shadowRoot) { roots.push(e.shadowRoot); }
      if (e.matches("button.bk-btn.bk-active")) { out.push(plain(e.textContent)); }
    }
  }
  return out;
}"""


def still_data(island):  # -> the still's data (its controls, stops, address keys)
    return json.loads(island.locator("script.ae-still-data").text_content())


def test_a_live_chapters_panel_answers_natively_and_its_stops_survive_the_hand_over(page):
    held, released = [], []

    def hold(route):  # Bokeh's and Panel's bundles wait until the native controls are tried
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(BUNDLE, hold)
    page.goto("/live/math")
    decode, online = page.locator("#panel-decode"), page.locator("#panel-online")
    page.wait_for_function("() => window.AE && AE.stillControls && AE.liveStills")

    # a choice the address carries, by a tap: the still is drawn in it, with no Bokeh
    m, model = next((i, c) for i, c in enumerate(still_data(decode)["controls"])
                    if c["name"] == "model")
    chosen = next(i for i in range(len(model["values"])) if i != model["at"])
    wanted = model["values"][chosen]
    decode.locator(".ae-still-choice button", has_text=wanted).click()
    page.wait_for_function(STILL_AT_JS, arg=[decode.element_handle(), m, chosen])
    # a slider the address has no key for, by the keyboard: the focus stays on it
    controls = still_data(online)["controls"]
    k = next(i for i, c in enumerate(controls) if c["name"] == "attention_step")
    assert "attention_step" not in still_data(online)["url"].values()
    step = online.locator(f'[data-ae-control="{k}"] input')
    step.focus()
    step.press("ArrowLeft")
    stop = (int(step.input_value()) - controls[k]["min"]) // controls[k]["step"]
    page.wait_for_function(STILL_AT_JS, arg=[online.element_handle(), k, stop])
    assert page.evaluate("() => window.Bokeh === undefined")  # answered before the session
    assert page.evaluate("() => document.activeElement.type") == "range"
    pressed = decode.locator(".ae-still-choice button", has_text=wanted)
    assert pressed.get_attribute("aria-pressed") == "true"

    released.append(True)
    for route in held:
        route.continue_()
    page.evaluate("() => AE.livePage.attach()")
    wait_for_render(page)
    page.wait_for_function(f"() => ({HANDED_OVER})() === "
                           "document.querySelectorAll('.ae-live-panel > .ae-island').length")
    assert decode.locator(".ae-island-still").count() == 0
    assert online.locator(".ae-still-controls").count() == 0
    # the session's panels hold the stops: its widgets show them (set by the server, as the
    # browser sent stops, not widget values), and the focus is on the live slider of that name
    page.wait_for_function(f"([el, want]) => ({ACTIVE_BUTTONS_JS})(el).includes(want)",
                           arg=[decode.element_handle(), re.sub(r"[^a-z0-9]", "", wanted.lower())])
    focus = page.evaluate(DEEP_FOCUS_JS)
    assert focus["label"] == controls[k]["label"], focus
    assert float(focus["now"]) == float(controls[k]["values"][stop]), focus
    assert f"model={wanted}" in page.url  # the address kept the native control's key


def test_a_live_chapters_panels_keep_their_place_and_the_live_only_one_says_it_is_loading(page):
    page.goto("/live")
    lab = page.locator("#panel-lab")
    assert "loading" in lab.locator(".ae-island-wait").text_content()
    assert lab.locator("script.ae-still-data").count() == 0  # no still of a link to itself
    head = page.locator("#panel-head")
    assert head.locator(".ae-still-controls button").count() > 0
    held = page.evaluate("(el) => el.getBoundingClientRect().height", head.element_handle())
    assert held >= 700  # the island holds the panel's height (registry) before it takes over
    page.evaluate("() => AE.livePage.attach()")
    wait_for_render(page)
    page.wait_for_function(f"() => ({HANDED_OVER})() === "
                           "document.querySelectorAll('.ae-live-panel > .ae-island').length")
    assert lab.locator(".ae-island-still").count() == 0
