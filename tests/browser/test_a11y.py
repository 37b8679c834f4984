"""Every reader can use it: axe-core on every page, a keyboard walkthrough, named controls.

- axe-core (axe-playwright-python) on every route, static and live, light and dark theme,
  at 1280 and 390 px: any critical or serious violation fails; moderate ones are printed.
- From the top of "/", Tab reaches the head's controls in reading order, and keys alone
  reproduce the documents' walk: 0.77 → mask off → 0.23 → mask on → length 8 → 28 of 64.
- The accessibility tree names every control of the head by its visible label, and the
  heatmap's table holds the same numbers as its cells.
"""

import pytest
from axe_playwright_python.sync_playwright import Axe

from app.hosting import server
from tests.browser.conftest import DOCUMENT_IDLE_JS
from tests.browser.static_pages import SLOTS_JS

ROUTES = ["/", "/math", *server.PANEL_ROUTES]
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



# Every panel has landed (no loading placeholder, as a live chapter's deferred panels show),
# app/static/a11y.js has no walk waiting, and every slider handle and spin button it names
# has its name: a condition to wait for, where a fixed pause lost the race on a busy machine.
SETTLED_JS = """() => {
  if (window.AEA11y === undefined || !AEA11y.idle()) { return false; }
  const roots = [document];
  while (roots.length > 0) {
    const root = roots.pop();
    if (root.querySelector(".pn-loading")) { return false; }
    for (const control of root.querySelectorAll(
        ".noUi-handle[role=slider], .bk-spin-btn-up, .bk-spin-btn-down")) {
      if (!control.getAttribute("aria-label")) { return false; }
    }
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); }
    }
  }
  return true;
}"""


def settle(page):  # rendered, and the page's accessibility script has run after it
    page.wait_for_function(DOCUMENT_IDLE_JS)
    page.wait_for_function(SETTLED_JS, polling=100)


def violations(page):  # -> (failing, moderate): [(rule, nodes, first target)]
    results = Axe().run(page).response["violations"]
    rows = [(v["impact"], v["id"], len(v["nodes"]), v["nodes"][0]["target"]) for v in results]
    return ([r for r in rows if r[0] in FAILING], [r for r in rows if r[0] not in FAILING])


@pytest.mark.parametrize("theme", ["default", "dark"])
@pytest.mark.parametrize("route", ROUTES + LIVE)
def test_no_critical_or_serious_violation(page, route, theme):
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    page.goto(route + ("?theme=dark" if theme == "dark" else ""))
    settle(page)
    found = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)  # Bokeh lays the page out again at the new width
        page.wait_for_function(SETTLED_JS, polling=100)
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
    slots = page.evaluate(SLOTS_JS)
    assert (slots["weight1"], slots["weight0"]) == ("0.77", "0.07")
    for _ in range(3):  # back to the causal mask
        page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED_JS)[3] == "causal mask"
    page.keyboard.press("Space")
    assert page.evaluate(SLOTS_JS)["weight5"] == "0.23"
    page.keyboard.press("Enter")  # and on again
    assert page.evaluate(SLOTS_JS)["masked5"] == "−∞"  # masked: row 2 cannot see "mat"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED_JS)[2] == "sequence length"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    slots = page.evaluate(SLOTS_JS)
    assert (slots["dots"], slots["discarded"]) == ("64", "28 of 64")


def test_the_head_names_its_controls_and_its_table_matches_the_cells(page):
    page.goto("/heatmap")
    settle(page)
    tree = page.locator("body").aria_snapshot()
    for control in ('slider "sequence length"', 'slider "inspect query"',
                    'button "causal mask"', 'button "divide scores by √d_k"',
                    'button "prefill"', 'button "decode"'):
        assert control in tree, control
    assert 'heading "The head" [level=1]' in tree
    slots = page.evaluate(SLOTS_JS)
    labels = page.evaluate("""() => { const p = [...AEStates.panels.values()][0];
        const c = p.targets[p.spec.targets.indexOf("source:cells")].data;
        return [...(c instanceof Map ? c.get("label") : c.label)]; }""")
    for q in range(6):
        for k in range(6):
            cell = labels[q * 8 + k]
            assert slots[f"w{q}_{k}"] == (cell or "masked"), (q, k)
    assert "table" in tree and "Attention weights of the head" in tree


CONTROL_ROLES = ("slider", "button", "combobox", "spinbutton", "textbox", "checkbox", "radio")


@pytest.mark.parametrize("route", [r for r in server.PANEL_ROUTES])
def test_every_control_of_every_panel_has_a_name(page, route):
    page.goto(route)
    settle(page)
    unnamed = []
    for line in page.locator("body").aria_snapshot().splitlines():
        item = line.strip().removeprefix("- ")
        role = item.split(" ", 1)[0].rstrip(":")
        if role in CONTROL_ROLES and '"' not in item.split(":", 1)[0]:
            unnamed.append(line.strip())
    assert not unnamed, f"{route}: controls without a name: {unnamed}"


def test_names_are_fixed_again_only_where_nodes_changed(page):
    # app/static/a11y.js walks again only the shadow roots whose nodes changed: a walk of the
    # whole page after every change took 1-3 ms, in the frame of the next step of a slider
    page.goto("/heatmap")
    settle(page)
    before = page.evaluate("({...AEA11y.stats})")
    page.get_by_role("button", name="divide scores by √d_k").click()  # readouts' text only
    page.wait_for_timeout(300)
    handle = page.locator(".noUi-handle").first  # sequence length 6 -> 7: Bokeh redraws
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(f"AEA11y.stats.rootWalks > {before['rootWalks']}")
    page.wait_for_timeout(300)
    after = page.evaluate("({...AEA11y.stats})")
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
