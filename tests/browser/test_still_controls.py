"""Every panel's controls work before Bokeh does (issue 41): over the still, native controls
(static/still_controls.js) switch its chart and readouts from the table of states, and write
the address, while Bokeh's bundle is held back by the test; once it is let through, the island
mounts in the state the reader set, and the native controls are gone (one control of each
name for a screen reader).

/heatmap is worked control by control as a reader would (a click, the arrow keys on a range
input), and its still checked against the table: the stops it shows, its chart as AE.stills
draws that state (the node test, tests/test_stills_js.py, holds that drawing to Python's), and
the readouts' text and the heat map's labels as the state's values give them. The page asks
for Bokeh once its native controls have been left alone for a moment; the last change is made
while the mount waits on the bundle, so the hand-over must not lose it, nor the focus (on the
live control of the name the native one had). Every other state panel's page has each control
moved once, its drawing, address and mounted stops checked. axe-core finds no critical or
serious violation in an island while its native controls are there.
"""

import contextlib
import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.axe_core import axe
from tests.browser.conftest import RENDER_TIMEOUT_MS

pytestmark = pytest.mark.browser

BOKEH = re.compile(r"/bokeh-[\d.]+/bokeh\.min\.js$")

# whether an element shows what `html` parses to: the same nodes, attributes in any order (a
# redraw patches the nodes in place, static/still_controls.js, so an attribute that came back
# may stand last)
SAME_JS = """(box, html) => {
  const t = document.createElement("div");
  t.innerHTML = html;
  return box.childNodes.length === t.childNodes.length
    && [...box.childNodes].every((n, i) => n.isEqualNode(t.childNodes[i]));
}"""

# the still's state, checked in the page against the table: -> null when it agrees, or what
# differs
STILL_AGREES_JS = """(at) => {
  const island = document.getElementById("panel-head");
  if (!AE.stillControls) { return "not wired yet"; }  // its script may still be loading
  const p = AE.stillControls.panels[0];
  const table = AE.states && AE.states.table(p.data.table);
  if (!table) { return "no table"; }
  if (island.dataset.aeStill !== at.join(",")) { return `stops ${island.dataset.aeStill}`; }
  const state = AE.stills.stateAt(table, at);
  const pane = island.querySelector('[data-ae-pane="0"]');
  if (!(SAME)(pane, AE.stills.draw(p.data.description, state)[0])) {
    return "chart";
  }
  const labels = [...pane.querySelectorAll("text")].map((t) => t.textContent);
  for (const label of state["source:cells"].label) {
    if (label !== null && !labels.includes(label)) { return `no label ${label}`; }
  }
  const text = island.querySelector(".ae-still-body").textContent;
  for (const [hole, value] of Object.entries(state["holes:hero"])) {
    if (value && !text.includes(value)) { return `hero ${hole}: ${value}`; }
  }
  for (const value of Object.values(state["holes:caption"])) {
    if (value && !text.includes(value)) { return `caption: ${value}`; }
  }
  return null;
}""".replace("SAME", SAME_JS)

# the mounted panel's controls: -> each control's stop in the Bokeh widgets, once booted
MOUNTED_STOPS_JS = """() => {
  const island = document.getElementById("panel-head");
  if (!island.classList.contains("ae-mounted") || !window.AE || !AE.states) { return null; }
  const p = [...AE.states.panels.values()][0];
  if (!p || !p.booted) { return null; }
  return p.spec.table.controls.map((c, i) => c.raw.findIndex((r) => r === p.controls[i][c.prop]));
}"""


# the focused element's text or name, through shadow roots
FOCUSED_JS = """(() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; }
  return e ? (e.getAttribute("aria-label") || e.textContent.trim()) : null;
})()"""


def asked_for(page, held):  # asks for the islands' mount, as a reader's intent would (an
    # island with native controls mounts only on intent, static/islands.js), and waits until
    # the page has asked for Bokeh's bundle (held back); the focus stays where it was
    page.evaluate("() => { AE.islands.mountAll(); }")
    deadline = time.monotonic() + RENDER_TIMEOUT_MS / 1000
    while not held:
        assert time.monotonic() < deadline, "Bokeh's bundle was never asked for"
        page.wait_for_timeout(100)  # lets Playwright run the route handler meanwhile


def agrees(page, at):
    page.wait_for_function(f"() => ({STILL_AGREES_JS})({at}) === null",
                           timeout=RENDER_TIMEOUT_MS)


class HeldBack:  # a page in a context of its own whose Bokeh bundle waits until let go
    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.held, self.problems = [], []
        self.context.route(BOKEH, self.hold)
        self.page = self.context.new_page()
        self.page.set_default_timeout(RENDER_TIMEOUT_MS)
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))

    def hold(self, request_route):
        self.held.append(request_route)

    def let_go(self):  # once the page has asked for it (asked_for)
        for request_route in self.held:
            request_route.continue_()
        self.context.unroute(BOKEH, self.hold)


@contextlib.contextmanager
def bokeh_held_back(browser):  # -> HeldBack, its context closed after
    held_back = HeldBack(browser)
    try:
        yield held_back
    finally:
        held_back.context.close()


def test_native_controls_switch_the_still_then_hand_over(browser, server):
    with bokeh_held_back(browser) as held_back:
        page, held, problems = held_back.page, held_back.held, held_back.problems
        page.goto(server + "/heatmap", wait_until="domcontentloaded")
        controls = page.locator("#panel-head .ae-still-controls")
        expect(controls).to_be_visible()
        assert page.evaluate("() => typeof window.Bokeh") == "undefined"
        # stops: length 3..8 (6), query 0..7 (2), mask (on), divide (on), phase (prefill)
        at = [3, 2, 1, 1, 0]
        mask = controls.get_by_role("button", name="causal mask")
        expect(mask).to_have_attribute("aria-pressed", "true")
        mask.click()
        at[2] = 0
        agrees(page, at)
        controls.get_by_role("button", name="divide scores by √d_k").click()
        at[3] = 0
        agrees(page, at)
        length = controls.get_by_role("slider", name="sequence length")
        length.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        at[0] = 5
        agrees(page, at)
        expect(page).to_have_url(re.compile(r"length=8"))
        query = controls.get_by_role("slider", name="inspect query")
        query.focus()
        page.keyboard.press("ArrowLeft")
        at[1] = 1
        agrees(page, at)
        page.locator("#panel-head .ae-still-choice").get_by_role("button", name="decode").click()
        at[4] = 1
        agrees(page, at)
        expect(query).to_be_disabled()  # the state disables the query in decode
        found = axe().run(page, context="#panel-head", options={
            "resultTypes": ["violations"], "preload": {"assets": ["media"]}}).response
        serious = [(v["id"], v["nodes"][0]["target"]) for v in found["violations"]
                   if v["impact"] in ("critical", "serious")]
        assert not serious, serious  # the native controls, as axe finds them before Bokeh
        assert page.evaluate("() => typeof window.Bokeh") == "undefined"
        asked_for(page, held)  # the mount began, the reader having left the controls alone
        # the last change, made while the mount waits on Bokeh's bundle: the mount must take it
        page.locator("#panel-head .ae-still-choice").get_by_role("button", name="prefill").click()
        at[4] = 0
        held_back.let_go()
        page.wait_for_function(f"() => JSON.stringify(({MOUNTED_STOPS_JS})()) === "
                               f"JSON.stringify({at})", timeout=RENDER_TIMEOUT_MS)
        expect(page.locator(".ae-still-controls")).to_have_count(0)
        # the focus was on the native "prefill": it is on the live one now
        page.wait_for_function(FOCUSED_JS + " === 'prefill'", timeout=RENDER_TIMEOUT_MS)
        expect(page.get_by_role("button", name="causal mask")).to_have_count(1)
        expect(page.get_by_role("button", name="causal mask")).to_be_visible()
        expect(page).to_have_url(re.compile(r"length=8&query=1&mask=off&divide=off&phase=prefill"))
        assert not problems, problems


def test_a_redraw_changes_the_charts_nodes_in_place(browser, server):
    # a state mostly recolours cells and rewrites numbers: the chart's nodes stay, so the
    # browser lays out only what changed (a tap's time on a slowed phone: issue 41)
    with bokeh_held_back(browser) as held_back:
        page = held_back.page
        page.goto(server + "/heatmap", wait_until="domcontentloaded")
        controls = page.locator("#panel-head .ae-still-controls")
        expect(controls).to_be_visible()
        page.evaluate("""() => { const pane = document.querySelector(
          '#panel-head [data-ae-pane="0"]');
          window.__before = [pane.firstElementChild, ...pane.querySelectorAll("rect, text")]; }""")
        controls.get_by_role("button", name="divide scores by √d_k").click()
        agrees(page, [3, 2, 1, 0, 0])
        kept = page.evaluate("""() => { const pane = document.querySelector(
          '#panel-head [data-ae-pane="0"]');
          const now = new Set([pane.firstElementChild, ...pane.querySelectorAll("rect, text")]);
          return [__before[0] === pane.firstElementChild,
                  __before.filter((n) => now.has(n)).length / __before.length]; }""")
        assert kept[0], "the chart's <svg> was replaced"
        assert kept[1] > 0.75, f"only {kept[1]:.0%} of the chart's cells and labels were kept"
        assert page.evaluate("() => typeof window.Bokeh") == "undefined"


def test_a_tap_paints_its_control_first_and_one_draw_follows_a_burst(browser, server):
    # static/still_controls.js answers a tap in two frames: the control at once, in the tap's
    # own task, the still in a task after that frame; taps faster than frames share one draw,
    # of the stops as they are when it runs
    with bokeh_held_back(browser) as held_back:
        page = held_back.page
        page.goto(server + "/heatmap", wait_until="domcontentloaded")
        page.wait_for_function("""() => { const p = window.AE && AE.stillControls
          && AE.stillControls.panels[0];
          return Boolean(p && AE.states && AE.states.table(p.data.table)
          && p.island.dataset.aeStill); }""")
        before, pressed, shown = page.evaluate("""() => {
          const p = AE.stillControls.panels[0];
          window.__draws = 0;
          new MutationObserver((records) => { window.__draws += records.length; })
            .observe(p.island, {attributeFilter: ["data-ae-still"]});
          const before = p.island.dataset.aeStill;
          const button = [...p.island.querySelectorAll(".ae-still-controls button")]
            .find((b) => b.textContent.trim() === "divide scores by √d_k");
          button.click(); button.click(); button.click(); // on as built: off, on, off
          return [before, button.getAttribute("aria-pressed"), p.island.dataset.aeStill];
        }""")
        assert pressed == "false" and shown == before, "the still was drawn in the tap's task"
        page.wait_for_function("() => AE.stillControls.panels[0].pending === null")
        agrees(page, [3, 2, 1, 0, 0])
        assert page.evaluate("() => window.__draws") == 1
        assert held_back.problems == []


STILLS_JS = re.compile(r"/assets/site-[0-9a-f]+/stills\.js$")


def test_a_tap_before_the_controls_are_wired_is_kept_and_played(browser, server):
    # the native controls are in the page as built: a reader may use them before
    # still_controls.js has run (held back here); page_head.js keeps those inputs, and the
    # wired controls play them, in order, as taps
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    held, problems = [], []

    def hold(request_route):
        held.append(request_route)

    context.route(STILLS_JS, hold)
    try:
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
        page.goto(server + "/heatmap", wait_until="commit")
        controls = page.locator("#panel-head .ae-still-controls")
        expect(controls).to_be_visible()
        deadline = time.monotonic() + RENDER_TIMEOUT_MS / 1000
        while not held:  # the page has asked for the script that wires the controls
            assert time.monotonic() < deadline, "stills.js was never asked for"
            page.wait_for_timeout(50)  # lets Playwright run the route handler meanwhile
        controls.get_by_role("button", name="causal mask").click()
        length = controls.get_by_role("slider", name="sequence length")
        length.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        controls.get_by_role("button", name="causal mask").click()
        controls.get_by_role("button", name="divide scores by √d_k").click()
        assert page.evaluate("() => [AE.stillControls === undefined, AE.earlyInput.length > 0]") \
            == [True, True]
        for request_route in held:
            request_route.continue_()
        context.unroute(STILLS_JS, hold)
        # length 6 -> 8, the mask off then on again, the divisor off
        agrees(page, [5, 2, 1, 0, 0])
        expect(page).to_have_url(re.compile(r"length=8.*divide=off"))
        expect(controls.get_by_role("button", name="causal mask")).to_have_attribute(
            "aria-pressed", "true")
        assert page.evaluate("() => AE.earlyInput.length") == 0
        assert not problems, problems
    finally:
        context.close()


# --- every state panel's page: each native control switches the still, then the hand-over ----

def switched_routes():  # the panel pages with native controls over their still, but /heatmap
    # (the test above works it control by control, keyboard and focus included)
    from app.kit import registry, states

    return [r.route for r in registry.PANELS if r.still_controls and r.route != "/heatmap"
            and issubclass(r.viewer_class, states.StatePanel)]


# the still in the stops `at`: -> null when its charts and readouts are AE.stills' drawing of
# the table's state at those stops (tests/test_stills_js.py holds that drawing to Python's)
DRAWN_JS = """(at) => {
  const p = AE.stillControls.panels[0];
  const table = AE.states && AE.states.table(p.data.table);
  if (!table) { return "no table"; }
  if (p.island.dataset.aeStill !== at.join(",")) { return `stops ${p.island.dataset.aeStill}`; }
  const state = AE.stills.stateAt(table, at);
  const body = p.island.querySelector(".ae-still-body");
  const svgs = AE.stills.draw(p.data.description, state);
  for (const [i, svg] of svgs.entries()) {
    const pane = body.querySelector(`[data-ae-pane="${i}"]`);
    if (pane && !(SAME)(pane, svg)) { return `chart ${i}`; }
  }
  for (const [i, r] of AE.stills.readouts(p.data.description, state).entries()) {
    const box = body.querySelector(`[data-ae-readout="${i}"]`);
    if (box && (!(SAME)(box, r.html) || box.hidden !== r.empty)) {
      return `readout ${i}`;
    }
  }
  return null;
}""".replace("SAME", SAME_JS)

# the mounted panel whose table the still had: -> each control's stop in Bokeh's widgets
MOUNTED_AT_JS = """(name) => {
  if (!document.querySelector(".ae-island.ae-mounted") || !window.AE || !AE.states) {
    return null; }
  const table = AE.states.table(name);
  const p = [...AE.states.panels.values()].find((x) => x.spec.table === table);
  if (!p || !p.booted) { return null; }
  return p.spec.table.controls.map((c, i) => c.raw.findIndex((r) => r === p.controls[i][c.prop]));
}"""


def move(page, control, i):  # works control i to its next stop, as a reader would -> the stop
    box = page.locator(".ae-still-controls > *").nth(i)
    n = len(control["values"])
    if control["widget"] == "slider":  # from where the input stands (a state may have
        # lowered its end below the stop, as it does the live slider's)
        value, end = box.locator("input").evaluate("(e) => [Number(e.value), Number(e.max)]")
        here = round((value - control["min"]) / control["step"])
        up = control["min"] + (here + 1) * control["step"] <= end
        stop = here + 1 if up else here - 1
        box.locator("input").focus()
        page.keyboard.press("ArrowRight" if up else "ArrowLeft")
    elif control["widget"] == "select":
        stop = (control["at"] + 1) % n
        box.get_by_role("combobox", name=control["label"]).select_option(index=stop)
    elif control["widget"] == "toggle":
        stop = 1 - control["at"]
        box.click()
    else:
        stop = (control["at"] + 1) % n
        box.get_by_role("button", name=str(control["values"][stop]), exact=True).click()
    return stop


@pytest.mark.parametrize("route", switched_routes())
def test_each_panels_native_controls_switch_its_still_and_hand_over(browser, server, route):
    with bokeh_held_back(browser) as held_back:
        page, held, problems = held_back.page, held_back.held, held_back.problems
        page.goto(server + route, wait_until="domcontentloaded")
        expect(page.locator(".ae-still-controls")).to_be_visible()
        data = page.evaluate("() => AE.stillControls.panels[0].data")
        # the readouts the live panel announces are live regions over the still too
        announced = [i for i, r in enumerate(data["description"]["readouts"])
                     if 'aria-live="polite"' in r["template"] or 'role="status"' in r["template"]]
        live = page.evaluate("""() => [...document.querySelectorAll(
            '.ae-still-body [data-ae-readout][aria-live="polite"]')].map(
            (e) => Number(e.dataset.aeReadout))""")
        assert sorted(live) == announced, (route, live, announced)
        at = [c["at"] for c in data["controls"]]
        url_key = {name: key for key, name in data["url"].items()}
        for i, control in enumerate(data["controls"]):
            if page.evaluate(f"() => AE.stillControls.panels[0].data.controls[{i}].disabled"):
                continue  # the state has it disabled, as the live panel would
            control = page.evaluate(f"() => AE.stillControls.panels[0].data.controls[{i}]")
            control["at"] = at[i]
            at[i] = move(page, control, i)
            page.wait_for_function(f"() => ({DRAWN_JS})({at}) === null",
                                   timeout=RENDER_TIMEOUT_MS)
            if control["name"] in url_key:  # the address names the control (written at once or
                # at the page's next flush)
                expect(page).to_have_url(re.compile(rf"[?&]{url_key[control['name']]}="))
        assert page.evaluate("() => typeof window.Bokeh") == "undefined"
        found = axe().run(page, context=".ae-island", options={
            "resultTypes": ["violations"], "preload": {"assets": ["media"]}}).response
        serious = [(v["id"], v["nodes"][0]["target"]) for v in found["violations"]
                   if v["impact"] in ("critical", "serious")]
        assert not serious, (route, serious)
        asked_for(page, held)
        held_back.let_go()
        try:
            page.wait_for_function(f"() => JSON.stringify(({MOUNTED_AT_JS})({data['table']!r})) "
                                   f"=== JSON.stringify({at})", timeout=RENDER_TIMEOUT_MS)
        except PlaywrightTimeout:  # say what the mounted panel shows instead
            mounted = page.evaluate(f"() => ({MOUNTED_AT_JS})({data['table']!r})")
            pytest.fail(f"{route}: mounted at {mounted}, the still at {at}; {problems}")
        expect(page.locator(".ae-still-controls")).to_have_count(0)  # one control of each name
        assert not problems, problems


# --- a chapter: the head's native controls drive the ladder's still, as its widgets do live ---

# a chapter's still by its island's id, in the stops `at` (DRAWN_JS for one of several)
ISLAND_DRAWN_JS = DRAWN_JS.replace("const p = AE.stillControls.panels[0];",
                                   "const p = AE.stillControls.panels.find((x) => "
                                   "x.island.id === id);").replace("(at) =>", "([id, at]) =>")


def test_in_a_chapter_the_heads_native_controls_drive_the_ladder_then_both_hand_over(
        browser, server):
    with bokeh_held_back(browser) as held_back:
        page, held, problems = held_back.page, held_back.held, held_back.problems
        page.goto(server + "/", wait_until="load")
        head = page.locator("#panel-head")
        head.scroll_into_view_if_needed()
        ladder_controls = page.locator("#panel-ladder .ae-still-controls")
        # the ladder shows its own controls only: length and phase are the head's
        expect(ladder_controls.get_by_role("slider")).to_have_count(2)
        expect(ladder_controls.get_by_role("slider", name="sequence length")).to_have_count(0)
        ladder = page.evaluate("""() => AE.stillControls.panels.find(
            (x) => x.island.id === "panel-ladder").data.controls.map((c) => [c.name, c.at])""")
        assert [name for name, _ in ladder[:2]] == ["length", "phase"], ladder
        head_at = [3, 2, 1, 1, 0]  # length 6, query 2, mask, divide, prefill
        ladder_at = [at for _, at in ladder]
        length = head.get_by_role("slider", name="sequence length")
        length.focus()
        page.keyboard.press("ArrowRight")
        head.locator(".ae-still-choice").get_by_role("button", name="decode").click()
        head_at[0], head_at[4] = 4, 1
        ladder_at[0], ladder_at[1] = 4, 1
        for slot, at in (("panel-head", head_at), ("panel-ladder", ladder_at)):
            page.wait_for_function(f"() => ({ISLAND_DRAWN_JS})([{slot!r}, {at}]) === null",
                                   timeout=RENDER_TIMEOUT_MS)
        expect(page).to_have_url(re.compile(r"length=7.*phase=decode"))
        asked_for(page, held)
        held_back.let_go()
        page.wait_for_function("""() => AE.states && ["HeadPanel", "LadderPanel"].every((kind) =>
            [...AE.states.panels.values()].some((p) => p.booted
              && p.spec.table_ref.startsWith(kind)))""", timeout=RENDER_TIMEOUT_MS)
        mounted = page.evaluate("""() => Object.fromEntries([...AE.states.panels.values()].map(
            (p) => [p.spec.table_ref.split("-")[0], p.spec.table.controls.map(
              (c, i) => c.raw.findIndex((r) => r === p.controls[i][c.prop]))]))""")
        assert mounted["HeadPanel"] == head_at and mounted["LadderPanel"] == ladder_at, mounted
        expect(page.locator("#panel-head .ae-still-controls")).to_have_count(0)
        assert not problems, problems
