"""The head on a static page, opened from file:// in Chromium: no server, no websocket.

Every one of the head's 384 states is set in the page and what it shows is compared with
what `HeadPanel.state()` (the live panel's state) gives; the documents' numbers are reached
by clicking and by keys; deep links restore and bad values are repaired with a note, as the
live page's `url_state.coerce` repairs them.
"""

import itertools
import random

import pytest

from app.kit import url_state
from app.panels.heatmap import HeadPanel
from tests.browser.static_pages import HOLES_JS, address_shows, holes, watched_pages

HEAD_JS = """() => [...AE.states.panels.values()].find(
  (p) => p.spec.table.controls.some((c) => c.name === "mask"))"""

# set every control of the head to a state, let the page apply it, read what it shows
ALL_STATES_JS = """async (combos) => {
  const p = (@HEAD@)();
  const names = p.spec.table.controls.map((c) => c.name);
  const cells = p.targets[p.spec.targets.findIndex((t) => t.name === "source:cells")];
  const holes = @HOLES@;
  const out = [];
  for (const combo of combos) {
    names.forEach((name, i) => {
      const c = p.spec.table.controls[i];
      const raw = c.raw[c.values.indexOf(combo[name])];
      if (p.controls[i][c.prop] !== raw) { p.controls[i][c.prop] = raw; }
    });
    await new Promise((r) => requestAnimationFrame(() => r()));
    const get = (k) => (cells.data instanceof Map ? cells.data.get(k) : cells.data[k]);
    out.push({holes: holes(), label: [...get("label")], weight: [...get("weight")],
              n: [...get("n")]});
  }
  return out;
}""".replace("@HEAD@", HEAD_JS).replace("@HOLES@", HOLES_JS)


@pytest.fixture(scope="session")
def site(site_build):  # -> the built site's folder (tests/conftest.py: one build for the run)
    return site_build


@pytest.fixture
def static_page(context, site):
    open_, check = watched_pages(context, lambda: (site / "heatmap" / "index.html").as_uri())
    yield lambda query="": open_(query=query)
    check()


def test_every_state_shows_what_the_live_panels_state_gives(static_page):
    page = static_page()
    names = [c.name for c in HeadPanel.controls()]
    combos = [dict(zip(names, values))
              for values in itertools.product(*(c.values for c in HeadPanel.controls()))]
    assert len(combos) == 384
    shown = page.evaluate(ALL_STATES_JS, combos)
    mismatched = []
    for combo, got in zip(combos, shown):
        state = HeadPanel.state(**combo)
        expected = {}
        for target in ("holes:hero", "holes:caption", "holes:arithmetic", "holes:truncate"):
            expected.update(state[target])
        texts = {k: got["holes"].get(k) for k in expected}
        cells = state["source:cells"]
        if (texts != expected or got["label"] != cells["label"]
                or got["weight"] != cells["weight"] or got["n"] != cells["n"]):
            mismatched.append(combo)
    assert not mismatched, f"{len(mismatched)} states differ, e.g. {mismatched[:3]}"


def test_the_documents_numbers_by_clicking_and_keys(static_page):
    page = static_page()
    s = holes(page)
    assert s["weight1"] == "0.77" and s["weight0"] == "0.07" and s["eff"] == "1.98"
    page.get_by_role("button", name="causal mask").click()
    s = holes(page)
    assert s["weight5"] == "0.23"  # mask off: row 2 now reaches "mat"
    labels = page.evaluate("""() => { const p = (@HEAD@)();
        const c = p.targets[p.spec.targets.findIndex((t) => t.name === "source:cells")].data;
        return [...(c instanceof Map ? c.get("label") : c.label)]; }""".replace("@HEAD@", HEAD_JS))
    assert labels[0:6] == labels[4 * 8:4 * 8 + 6]  # rows 0 and 4 ("the" twice) are identical
    page.get_by_role("button", name="causal mask").click()
    page.get_by_role("button", name="divide scores by √d_k").click()
    s = holes(page)
    assert (s["weight1"], s["eff"]) == ("0.97", "1.17")
    page.get_by_role("button", name="divide scores by √d_k").click()
    handle = page.locator(".noUi-handle").first  # the sequence length slider
    handle.focus()
    handle.press("ArrowRight")
    handle.press("ArrowRight")
    s = holes(page)
    assert s["dots"] == "64" and s["discarded"] == "28 of 64"
    page.get_by_role("button", name="decode").click()
    page.get_by_role("button", name="causal mask").click()
    s = holes(page)
    assert s["log0"].startswith("causal mask off: no weight changed, because")
    assert "64" not in s["dots"] and s["dots"] == "8"


def test_deep_link_restores_and_bad_values_get_a_note(static_page):
    page = static_page("?length=8&query=9&mask=maybe&divide=off")
    s = holes(page)
    assert s["dots"] == "64" and s["title_row"] == "7 (purred)"
    assert s["divisor"] == "÷ 1"
    assert "mask='maybe' is not on/off; ignored" in s["url"]
    assert "query=9 is out of range; using 7" in s["url"]
    assert address_shows(page, "length=8", "divide=off")


def test_the_browser_repairs_a_url_value_as_the_live_page_does(static_page):
    page = static_page()
    rng = random.Random(7)
    pieces = ["", " ", "-", "+", "0", "1", "3", "5", "7", "8", "9", "12", ".", "5", "e", "E",
              "_", "x", "inf", "nan", "on", "off", "yes", "No", "prefill", "DECODE", "2.5",
              "4.5", "1e1", "0x10", "1_0", "ab"]
    raws = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(1200)]
    panel = HeadPanel()
    controls = {c.name: c for c in HeadPanel.controls()}
    checked = 0
    for name in ("length", "query", "mask", "phase"):
        c = controls[name]
        got = page.evaluate(
            "([control, raws]) => raws.map((raw) => AE.url.coerce(control, control.name, raw))",
            [{"name": c.name, "kind": c.kind, "values": list(c.values)}, raws])
        for raw, (stop, repair) in zip(raws, got):
            value, expected = url_state.coerce(panel.param[name], name, raw)
            assert (c.values[stop] if stop >= 0 else None) == value, (name, raw)
            assert repair == expected, (name, raw)
            checked += 1
    assert checked >= 1000


# every Bokeh canvas layer on the page as an image, in document order: [container, layer, url]
CANVASES_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const c of root.querySelectorAll("canvas")) {
      const layers = [...c.parentNode.children].filter((e) => e.tagName === "CANVAS");
      out.push([out.length, layers.indexOf(c), c.toDataURL()]);
    }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } }
  };
  walk(document);
  return out;
}"""


def test_a_change_of_data_redraws_the_overlay_canvas_alone(static_page):
    # What a state changes is drawn on Bokeh's overlay canvas (app/kit/states.py), so a change
    # of the inspected query repaints that layer and leaves the primary one (masked cells,
    # position labels) as it was; a new length moves those too and repaints both.
    page = static_page()
    before = page.evaluate(CANVASES_JS)
    handle = page.locator(".noUi-handle").nth(1)  # the inspected query
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => r(true)))")
    after = page.evaluate(CANVASES_JS)
    changed = [(i, layer) for (i, layer, a), (_, _, b) in zip(before, after) if a != b]
    assert changed and all(layer == 1 for _, layer in changed), changed
    # the mask and the phase too: the masked layer stays drawn, covered where not masked
    for name in ("causal mask", "decode", "prefill", "causal mask"):
        was = page.evaluate(CANVASES_JS)
        page.get_by_role("button", name=name, exact=True).click()
        page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => r(true)))")
        now = page.evaluate(CANVASES_JS)
        changed = [(i, layer) for (i, layer, a), (_, _, b) in zip(was, now) if a != b]
        assert changed and all(layer == 1 for _, layer in changed), (name, changed)
    after = page.evaluate(CANVASES_JS)
    handle = page.locator(".noUi-handle").first  # the sequence length
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => r(true)))")
    again = page.evaluate(CANVASES_JS)
    assert {layer for (i, layer, a), (_, _, b) in zip(after, again) if a != b} == {0, 1}


def test_bokehs_css_variable_lookup_is_skipped(static_page):
    # the switcher's patch of Bokeh's CSS-variable lookup (static/switcher.js) is in place
    page = static_page()
    assert page.evaluate("AE.fence.internals.cssVisualsSkipped") is True
    assert page.evaluate("""() => {
      const proto = Bokeh.require("core/visuals/visual").VisualProperties.prototype;
      return proto._get_css_value.toString().replace(/\\s+/g, " ");
    }""") == 'function () { return ""; }'


def test_bokeh_rewrites_no_style_that_holds_the_same_text(static_page):
    # the switcher's patch of Bokeh's per-paint position styles (static/switcher.js): a
    # change repaints the figure, and the renderers' unchanged position styles are kept
    page = static_page()
    assert page.evaluate("AE.fence.internals.sameStylesKept") is True
    kept = page.evaluate("AE.fence.internals.sameStylesSkipped")
    page.get_by_role("button", name="causal mask").click()
    address_shows(page, "mask=off")
    page.wait_for_function(f"AE.fence.internals.sameStylesSkipped > {kept}")
    assert holes(page)["weight5"] == "0.23"  # the change itself is drawn


def test_bokeh_leaves_the_glyph_renderers_empty_elements_where_they_were(static_page):
    # the switcher's patch of Bokeh's per-paint placing of glyph renderers' elements
    # (static/switcher.js): a new length moves the drawn cells, and with them the box Bokeh
    # would write into the cells' renderer element's <style>; it stays as first written
    page = static_page()
    assert page.evaluate("AE.fence.internals.glyphElementsLeft") is True
    position = """() => { const p = (@HEAD@)();
      const cells = p.targets[p.spec.targets.findIndex((t) => t.name === "source:cells")];
      const renderers = [...cells.document.all_models].filter(
        (m) => m.type === "GlyphRenderer" && m.data_source === cells);
      return renderers.map((r) => {
        const [view] = Bokeh.index.find(r);
        return [view.el.childElementCount, view.position.el.textContent];
      }); }""".replace("@HEAD@", HEAD_JS)
    before = page.evaluate(position)
    assert len(before) == 2 and all(count == 0 for count, _ in before)  # rect, text: empty
    assert all("width" in css for _, css in before)  # placed once, at its first paint
    skipped = page.evaluate("AE.fence.internals.glyphPlacesSkipped")
    handle = page.locator(".noUi-handle").first  # the sequence length: 6 -> 7
    handle.focus()
    handle.press("ArrowRight")
    address_shows(page, "length=7")
    page.wait_for_function(f"AE.fence.internals.glyphPlacesSkipped > {skipped}")
    assert holes(page)["dots"] == "49"  # the change itself is drawn
    assert page.evaluate(position) == before


def test_a_holes_text_changes_in_its_own_text_node(static_page):
    # a readout (app/kit/readout.py) changes the data of a hole's one text node: a node put in
    # its place would be styled and laid out afresh, and its table's :empty rules checked
    page = static_page()
    keep = """() => { const roots = [document];
      const walk = (r) => { for (const x of r.querySelectorAll("*")) {
        if (x.shadowRoot) { roots.push(x.shadowRoot); walk(x.shadowRoot); } } };
      walk(document);
      window.__holes = {};
      for (const r of roots) { for (const e of r.querySelectorAll("[data-s]")) {
        window.__holes[e.dataset.s] = [e, e.firstChild, e.textContent]; } }
      return Object.keys(window.__holes).length; }"""
    assert page.evaluate(keep) > 100
    page.get_by_role("button", name="divide scores by √d_k").click()
    address_shows(page, "divide=off")
    kept = page.evaluate("""() => Object.entries(window.__holes).filter(
      ([, [e, node, text]]) => e.textContent !== text).map(
      ([name, [e, node]]) => [name, e.childNodes.length === 1 && e.firstChild === node])""")
    assert len(kept) > 20  # the scores, weights and their table changed
    assert [name for name, same in kept if not same] == []


def test_the_address_bar_is_written_after_the_change_is_painted(static_page):
    # the switcher defers replaceState past the change's frame (each one makes Chromium read
    # the page's icon again); the address still catches up, and a pending one is flushed when
    # something reads it first (the live link)
    page = static_page()
    seen = page.evaluate("""async () => {
      const p = (@HEAD@)();
      const i = p.spec.table.controls.findIndex((c) => c.name === "divide");
      const c = p.spec.table.controls[i];
      const set = (v) => { p.controls[i][c.prop] = c.raw[c.values.indexOf(v)]; };
      let frames = 0;
      let running = true;
      const tick = () => { frames += 1; if (running) { requestAnimationFrame(tick); } };
      requestAnimationFrame(tick);  // before any change: runs first in every frame
      while (frames === 0) { await new Promise((r) => requestAnimationFrame(r)); }
      const original = window.history.replaceState;
      const calls = [];
      window.history.replaceState = function (...args) {
        calls.push(frames);
        return original.apply(this, args);
      };
      // the write waits for the page to be idle (at most 120 ms on; longer on a busy
      // machine's timers): wait for the address itself, up to 10 s, never a fixed time
      const shows = async (text) => { const end = performance.now() + 10000;
        while (!window.location.search.includes(text) && performance.now() < end) {
          await new Promise((r) => setTimeout(r, 20)); } };  // a bounded poll of the address
      const changedAt = [frames];
      set(false);
      await shows("divide=off");
      const afterOff = window.location.search;
      changedAt.push(frames);
      set(true);
      const live = await new Promise((r) => requestAnimationFrame(() => r(AE.url.liveUrl())));
      await shows("divide=on");
      // a second write could come only from the flush the change scheduled (a frame, then an
      // idle callback); an idle callback asked for two frames later runs after it (in order)
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(
        () => window.requestIdleCallback(r, {timeout: 250}))));
      running = false;
      window.history.replaceState = original;
      return {calls, changedAt, afterOff, live, after: window.location.search};
    }""".replace("@HEAD@", HEAD_JS))
    # written once per change, each after at least one frame since the change
    assert len(seen["calls"]) == 2, seen
    assert all(call > at for call, at in zip(seen["calls"], seen["changedAt"])), seen
    assert "divide=off" in seen["afterOff"]
    assert "divide=on" in seen["live"] and "divide=on" in seen["after"]


def test_a_part_whose_value_is_drawn_is_not_set_again(static_page):
    # the inspected query changes the row's part alone: the cells' source keeps its data
    # (setting it again, unchanged, would make Bokeh work the glyphs out again)
    page = static_page()
    keep = """() => { const p = (@HEAD@)();
      window.__cells = p.targets[p.spec.targets.findIndex((t) => t.name === "source:cells")];
      window.__data = window.__cells.data;
      return AE.states.stats.partsSkipped; }""".replace("@HEAD@", HEAD_JS)
    skipped = page.evaluate(keep)
    handle = page.locator(".noUi-handle").nth(1)  # the inspected query
    handle.focus()
    handle.press("ArrowRight")
    address_shows(page, "query=3")
    assert page.evaluate("() => window.__cells.data === window.__data") is True
    assert page.evaluate("AE.states.stats.partsSkipped") == skipped + 2  # places, cells
    assert holes(page)["eff_row"] == "3, on"
    page.get_by_role("button", name="causal mask").click()  # the cells' part changes
    address_shows(page, "mask=off")
    assert page.evaluate("() => window.__cells.data !== window.__data") is True
