"""Every reader can use it: axe-core on every page, a keyboard walkthrough, named controls.

- axe-core (axe-playwright-python) on every route, static and live, light and dark theme,
  at 1280 and 390 px, the moment the page is ready (not after waiting for the names): any
  critical or serious violation fails; moderate ones are printed.
- Every control has its name the moment the page is ready (READY_JS), in the accessibility
  tree too (every route, both themes), and keeps it through a re-render: every widget
  drawn again, in the same task, and at every frame while a live page's server redraws
  its slider.
- From the top of "/", Tab reaches the head's controls in reading order, and keys alone
  reproduce the documents' walk: 0.77 → mask off → 0.23 → mask on → length 8 → 28 of 64.
- The accessibility tree names every control of the head by its visible label, and the
  heatmap's table holds the same numbers as its cells.
"""

import pytest

from app.hosting import server
from app.kit import registry
from tests.browser.axe_core import axe
from tests.browser.readiness import READY_JS, STYLESHEETS_LOADED_JS, UNNAMED_JS
from tests.browser.static_pages import HOLES_JS

ROUTES = [*(c.route for c in registry.CHAPTERS), "/numbers", *server.PANEL_ROUTES]
LIVE = [("/live" + r).rstrip("/") or "/live" for r in ROUTES]
WIDTHS = (1280, 390)
FAILING = ("critical", "serious")

# the element that has focus, through shadow roots: [tag, role, accessible label, text]
FOCUSED_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; }
  return [e.tagName, e.getAttribute("role"), e.getAttribute("aria-label"),
          (e.textContent || "").trim()];
}"""


# A watch on every node of the page: the document and each shadow root (one that appears
# later is an added node in its parent's root, so it is seen too), any change at all.
WATCH_CHANGES_JS = """() => {
  const w = window.__changes = {seen: 0, last: performance.now()};
  w.observer = new MutationObserver((records) => {
    w.seen += records.length; w.last = performance.now(); });
  const roots = [document];
  while (roots.length > 0) {
    const root = roots.pop();
    w.observer.observe(root, {subtree: true, childList: true, attributes: true,
                              characterData: true});
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); }
    }
  }
}"""
# -> the changes the watch saw, once every Bokeh document is idle and nothing has changed for
# `quietMs` (the stated window); null until then. Polled every frame.
QUIET_JS = """(quietMs) => {
  const w = window.__changes;
  if (!Bokeh.documents.every((doc) => doc.is_idle)) { return null; }
  if (performance.now() - w.last < quietMs) { return null; }
  w.observer.disconnect();
  return w.seen;
}"""
QUIET_MS = 300  # nothing changed for this long after the page said it was idle


def watch_changes(page):  # start watching every node: before the action that changes them
    page.evaluate(WATCH_CHANGES_JS)


def quiet(page):  # -> how many changes the watch saw, once the page is idle and quiet
    return page.wait_for_function(QUIET_JS, arg=QUIET_MS, polling="raf").json_value()


def settle(page):  # -> once the page is ready; fails if a control lacked its name right then
    found = page.wait_for_function(READY_JS, polling="raf").json_value()
    assert found == {"unnamed": [], "ready": True}, f"{page.url} at ready: {found}"
    page.wait_for_function(STYLESHEETS_LOADED_JS, polling="raf")  # before axe reads colours


# axe's defaults, less its preload of every stylesheet (CSSOM), which only the rule
# css-orientation-lock reads, an experimental rule axe does not run unless asked: on every
# route here the results were the same, in half the time on the chapters
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": {"assets": ["media"]}}


def laid_out_at(page, width):  # -> once Bokeh has laid the page out again at `width`
    # the page scrolls no wider than the new width (each route fits 390 px, test_text_first.py:
    # a live figure holds the old width until Bokeh's resize observer has run), then two
    # frames, where the observer's layout lands
    page.wait_for_function("""(width) => window.innerWidth === width
        && document.documentElement.scrollWidth <= width""", arg=width, polling="raf")
    page.evaluate("""() => new Promise((done) =>
        requestAnimationFrame(() => requestAnimationFrame(() => done())))""")


def violations(page):  # -> (failing, moderate): [(rule, nodes, first target)]
    # axe-core is put into the page once (Axe().run evaluates its 650 KB each call): a
    # second run on the same document, at another width, finds it there. axe.run starts
    # each run afresh, so the results are those of a first run.
    if not page.evaluate("() => typeof window.axe === 'object' && window.axe !== null"):
        page.evaluate(axe().axe_script)
    results = page.evaluate("(options) => axe.run(options)",
                            AXE_OPTIONS)["violations"]
    rows = [(v["impact"], v["id"], len(v["nodes"]), v["nodes"][0]["target"]) for v in results]
    return ([r for r in rows if r[0] in FAILING], [r for r in rows if r[0] not in FAILING])


@pytest.mark.parametrize("theme", ["default", "dark"])
@pytest.mark.parametrize("route", ROUTES + LIVE)
def test_no_critical_or_serious_violation(page, route, theme):
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    page.goto(route + ("?theme=dark" if theme == "dark" else ""))
    settle(page)
    unnamed = unnamed_controls(page)  # as the accessibility tree names them, too
    assert not unnamed, f"{route} ({theme}): controls without a name: {unnamed}"
    found = []
    for width in WIDTHS:
        if width != WIDTHS[0]:
            page.set_viewport_size({"width": width, "height": 900})
            laid_out_at(page, width)
            settle(page)
        failing, moderate = violations(page)
        for row in moderate:
            print(f"moderate on {route} ({theme}, {width} px): {row}")
        found += [(width, *row) for row in failing]
    assert not found, f"{route} ({theme}): {found}"


def test_keyboard_alone_walks_the_documents_numbers(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/")
    settle(page)
    order = []  # the header, the questions before the head, then the head's controls
    for _ in range(80):
        page.keyboard.press("Tab")
        order.append(page.evaluate(FOCUSED_JS))
        if (order[-1][2] or order[-1][3]) == "sequence length":
            break
    for _ in range(5):
        page.keyboard.press("Tab")
        order.append(page.evaluate(FOCUSED_JS))
    names = [label or text for _, _, label, text in order]
    assert names[-6:] == ["sequence length", "inspect query", "causal mask",
                          "divide scores by √d_k", "prefill", "decode"], names
    holes = page.evaluate(HOLES_JS)
    assert (holes["weight1"], holes["weight0"]) == ("0.77", "0.07")
    for _ in range(3):  # back to the causal mask
        page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED_JS)[3] == "causal mask"
    page.keyboard.press("Space")
    assert page.evaluate(HOLES_JS)["weight5"] == "0.23"
    page.keyboard.press("Enter")  # and on again
    assert page.evaluate(HOLES_JS)["masked5"] == "−∞"  # masked: row 2 cannot see "mat"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED_JS)[2] == "sequence length"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    holes = page.evaluate(HOLES_JS)
    assert (holes["dots"], holes["discarded"]) == ("64", "28 of 64")


def test_the_head_names_its_controls_and_its_table_matches_the_cells(page):
    page.goto("/heatmap")
    settle(page)
    tree = page.locator("body").aria_snapshot()
    for control in ('slider "sequence length"', 'slider "inspect query"',
                    'button "causal mask"', 'button "divide scores by √d_k"',
                    'button "prefill"', 'button "decode"'):
        assert control in tree, control
    assert 'heading "The head" [level=1]' in tree
    holes = page.evaluate(HOLES_JS)
    labels = page.evaluate("""() => { const p = [...AE.states.panels.values()][0];
        const c = p.targets[p.spec.targets.findIndex((t) => t.name === "source:cells")].data;
        return [...(c instanceof Map ? c.get("label") : c.label)]; }""")
    for q in range(6):
        for k in range(6):
            cell = labels[q * 8 + k]
            assert holes[f"w{q}_{k}"] == (cell or "masked"), (q, k)
    assert "table" in tree and "Attention weights of the head" in tree


CONTROL_ROLES = ("slider", "button", "combobox", "spinbutton", "textbox", "checkbox", "radio")


def unnamed_controls(page):  # -> the lines of the page's accessibility tree that are a
    # control without a name
    unnamed = []
    for line in page.locator("body").aria_snapshot().splitlines():
        item = line.strip().removeprefix("- ")
        role = item.split(" ", 1)[0].rstrip(":")
        if role in CONTROL_ROLES and '"' not in item.split(":", 1)[0]:
            unnamed.append(line.strip())
    return unnamed


def test_names_are_fixed_again_only_where_nodes_changed(page):
    # static/a11y.js walks again only the shadow roots whose nodes changed: a walk of the
    # whole page after every change took 1-3 ms, in the frame of the next step of a slider
    page.goto("/heatmap")
    settle(page)
    before = page.evaluate("({...AE.a11y.stats})")
    watch_changes(page)
    page.get_by_role("button", name="divide scores by √d_k").click()  # readouts' text only
    assert quiet(page) > 0  # the watch saw the click's changes, then none for QUIET_MS
    handle = page.locator(".noUi-handle").first  # sequence length 6 -> 7: Bokeh redraws
    handle.focus()
    watch_changes(page)
    handle.press("ArrowRight")
    page.wait_for_function(f"AE.a11y.stats.rootWalks > {before['rootWalks']}")
    assert quiet(page) > 0  # the step's redraw, then nothing more for QUIET_MS
    after = page.evaluate("({...AE.a11y.stats})")
    assert after["pageWalks"] == before["pageWalks"], (before, after)
    assert after["rootWalks"] > before["rootWalks"]
    valuetext = page.evaluate("""() => { const find = (root) => {
        const h = root.querySelector(".noUi-handle"); if (h) return h;
        for (const e of root.querySelectorAll("*")) {
          if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; } } };
      return find(document).getAttribute("aria-valuetext"); }""")
    assert valuetext == "7"  # the slider's new value, named in its own root's walk


def test_a_dragged_slider_keeps_the_readouts_quiet_until_it_lands(page):
    page.goto("/heatmap")
    settle(page)
    busy_js = """() => { const out = [];
      const walk = (root) => { for (const e of root.querySelectorAll("[aria-live]")) {
        out.push(e.getAttribute("aria-busy")); }
        for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) walk(e.shadowRoot); } };
      walk(document); return out; }"""
    handle = page.locator(".noUi-handle").first
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 60, box["y"] + box["height"] / 2, steps=4)
    during = page.evaluate(busy_js)
    page.mouse.up()
    after = page.evaluate(busy_js)
    assert during and all(b == "true" for b in during), during
    assert all(b is None for b in after), after


# every slider handle and spin button on the page, through shadow roots
CONTROLS_JS = """() => { const out = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll(".noUi-handle, .bk-spin-btn")) { out.push(e); }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } } };
  walk(document); return out; }"""

# From now on, at every animation frame, record what lacks a name (a screen reader reads the
# tree the page paints); -> nothing, read the record with FRAMES_RESULT_JS
FRAMES_WATCH_JS = """() => { window.__frames = {count: 0, unnamed: []};
  const unnamed = (""" + UNNAMED_JS + """);
  const tick = () => { const u = unnamed(); __frames.count += 1;
    if (u.length) { __frames.unnamed.push(u); }
    if (!__frames.stop) { requestAnimationFrame(tick); } };
  requestAnimationFrame(tick); }"""
FRAMES_RESULT_JS = "() => { __frames.stop = true; return __frames; }"

# Take every part of the page that holds a slider or a number box out of its layout and put
# it back (public model properties: a layout's `children`), as a page whose panels change
# does: Bokeh drops the part's views and builds new ones, with new elements. -> how many
# parts were moved; the controls before are kept in window.__before
REBUILD_JS = """() => {
  window.__before = new Set((""" + CONTROLS_JS + """)());
  const moving = new Map(); // layout model -> the children of it to move
  for (const doc of Bokeh.documents) {
    for (const model of doc.all_models) {
      let view = Bokeh.index.find_one(model);
      const shadow = view && view.el instanceof Element ? view.el.shadowRoot : null;
      if (shadow === null || shadow.querySelector(".noUi-handle, .bk-spin-btn") === null) {
        continue;
      }
      while (view.parent && !Array.isArray(view.parent.model.children)) { view = view.parent; }
      if (!view.parent) { continue; }
      const layout = view.parent.model;
      if (!moving.has(layout)) { moving.set(layout, new Set()); }
      moving.get(layout).add(view.model);
    }
  }
  let moved = 0;
  for (const [layout, parts] of moving) {
    const kids = [...layout.children];
    layout.children = kids.filter((child) => !parts.has(child));
    layout.children = kids;
    moved += parts.size;
  }
  return moved;
}"""

# -> null until every control is a new one (as many as before), then what lacks a name in
# that same turn: polled every frame, so this is the first frame that shows them
REBUILT_JS = """() => {
  const now = (""" + CONTROLS_JS + """)();
  if (now.length < __before.size || now.some((e) => __before.has(e))) { return null; }
  return (""" + UNNAMED_JS + """)();
}"""


@pytest.mark.parametrize("route", ["/heatmap", "/math", "/online-softmax", "/cost"])
def test_a_control_built_again_has_its_name_from_its_first_frame(page, route):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(route)
    settle(page)
    page.evaluate(FRAMES_WATCH_JS)
    for _ in range(2):  # and again: a rebuilt widget rebuilt
        assert page.evaluate(REBUILD_JS) > 0
        unnamed = page.wait_for_function(REBUILT_JS, polling="raf").json_value()
        assert unnamed == [], f"{route}, the first frame of the new widgets: {unnamed}"
    frames = page.evaluate(FRAMES_RESULT_JS)
    assert frames["count"] > 2 and frames["unnamed"] == [], frames
    settle(page)


def test_a_live_slider_the_server_redraws_keeps_its_name_at_every_frame(page):
    # on the live head, each step goes to the server and back: Bokeh draws the slider's
    # handle again for the value it is given, and the readouts change around it
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/live/heatmap")
    settle(page)
    page.evaluate(FRAMES_WATCH_JS)
    handle = page.get_by_role("slider", name="sequence length")
    handle.focus()
    # the server's answers: changes BokehJS applied from a server patch (those are not synced
    # back: event.sync is false), other than the slider's own value
    page.evaluate("""() => { window.__answers = 0;
      for (const doc of Bokeh.documents) { doc.on_change((event) => {
        if (event.sync === false && !["value", "value_throttled"].includes(event.attr)) {
          window.__answers += 1; } }); } }""")
    for key in ["ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft"]:
        answers = page.evaluate("window.__answers")
        watch_changes(page)
        handle.press(key)
        # the server answered this step, then the page is idle and quiet
        page.wait_for_function(f"window.__answers > {answers}", polling="raf")
        assert quiet(page) > 0
    frames = page.evaluate(FRAMES_RESULT_JS)
    assert frames["count"] > 5 and frames["unnamed"] == [], frames
    settle(page)
