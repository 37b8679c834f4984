"""The second chapter's agreement, overflow and online-softmax panels on static pages, opened
from file:// in Chromium: no server, no websocket.

Each panel alone, as a static build writes it. The documents' numbers are reached by
operating the controls (the preset lists, the toggles, the sliders, the step buttons); deep
links restore, bad values are repaired with a visible note; and for a sample of states the
page shows exactly the texts (and source columns) the live panel's `state()` gives.
"""

import itertools
import random
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.kit import registry, states
from app.kit.readout import HOLE
from app.panels import agreement, online_softmax, overflow
from tests.browser.static_pages import (
    PANEL_HELPERS_JS,
    address_shows,
    assert_holes_read,
    prepare,
    static_html,
)

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"agreement.html": "/agreement", "overflow.html": "/overflow",
         "online.html": "/online-softmax"}  # file -> the panel's route
PANELS = {"agreement.html": agreement.AgreementPanel, "overflow.html": overflow.OverflowPanel,
          "online.html": online_softmax.OnlineSoftmaxPanel}

# every Readout on the page, in order: its holes' [name, text], one list per shadow root
READOUTS_JS = """() => {
  const out = [];
  const walk = (root) => {
    const own = [...root.querySelectorAll("[data-s]")];
    if (own.length) { out.push(own.map((e) => [e.dataset.s, e.textContent])); }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } }
  };
  walk(document);
  return out;
}"""

# set the panel's controls to each combination, let the page apply it, read what it shows:
# every readout's holes and the named columns of the named sources
STATES_JS = """async ([combos, sources]) => {
  HELPERS
  return statesOf([...AE.states.panels.values()][0], combos, READOUTS_JS, sources);
}""".replace("READOUTS_JS", READOUTS_JS).replace("HELPERS", PANEL_HELPERS_JS)


@pytest.fixture(scope="session")
def site(tmp_path_factory):  # -> the folder holding one page per panel
    out = tmp_path_factory.mktemp("static-math")
    prepare(out)
    for name, route in PAGES.items():
        with states.static_build():
            static_html(registry.by_route(route).page(static=True), out / name)
    return out


def holes(page, having=None):
    # -> {hole: text} over every readout (a name in two readouts: the last), or only the
    # readout that has the hole `having`
    readouts = [dict(r) for r in page.evaluate(READOUTS_JS)]
    if having is not None:
        return next(r for r in readouts if having in r)
    return {name: text for readout in readouts for name, text in readout.items()}


def button(page, name):
    return page.get_by_role("button", name=name, exact=True)


def pick(page, label, option):  # a preset list, found by its label; the option by its text
    page.get_by_role("combobox", name=label).select_option(label=option)


def press(page, handle, key, times=1):  # a slider's handle, by keyboard
    handle.focus()
    for _ in range(times):
        handle.press(key)


def says(page, pattern):
    return page.get_by_text(re.compile(pattern)).first


# --- the agreement ------------------------------------------------------------------------

def test_agreement_documents_numbers_by_the_lists_and_the_slider(static_page):
    page = static_page("agreement.html")
    assert_holes_read(holes(page), pairs="2 × 3 + (−1) × 4 + 0.5 × 2", terms="6 − 4 + 1",
                      score="3", verdict="leaning together", spread_raw="10.9",
                      spread_scaled="0.96", eff_raw="1.00", eff_scaled="5.15", ops="256")
    expect(says(page, r"Operations per dot product: 256 at 128 numbers")).to_be_visible()
    assert not page.get_by_role("textbox").count()  # typing is the live page's
    expect(button(page, "Type your own vectors (live explorable)")).to_be_visible()
    pick(page, "vector b", "(1, 2, 0)")
    assert_holes_read(holes(page), score="0", verdict="perpendicular")
    expect(says(page, r"verdict: perpendicular")).to_be_visible()
    pick(page, "vector b", "(−3, −4, −2): minus the chapter's b")
    assert_holes_read(holes(page), score="−3", verdict="leaning apart")
    d = page.locator(".noUi-handle").first
    press(page, d, "ArrowRight")
    assert_holes_read(holes(page), ops="512", d="256")
    expect(page.get_by_text("d (numbers per vector): 256")).to_be_visible()
    press(page, d, "Home")
    assert holes(page)["d"] == "1"
    assert address_shows(page, "b=-3%2C+-4%2C+-2", "d=1")


def test_agreement_deep_link_and_a_repaired_value(static_page):
    page = static_page("agreement.html", "?b=1, 2, 0&d=99999&a=5, 5, 5")
    s = holes(page)
    assert_holes_read(s, score="0", verdict="perpendicular", d="4,096", ops="8,192")
    assert "d=99999 is out of range; using 4096" in s["url"]
    assert "a='5, 5, 5' is not one of" in s["url"]
    expect(says(page, r"d=99999 is out of range; using 4096")).to_be_visible()


# --- the overflow trap --------------------------------------------------------------------

def test_overflow_trap_and_fix_by_the_list_and_the_toggles(static_page):
    page = static_page("overflow.html")
    s = holes(page)
    assert [s[f"p{i}"] for i in range(3)] == ["66%", "24%", "10%"]
    assert_holes_read(s, e0="7.39", total="11.2")
    pick(page, "scores", "12, 1, 0.1: e^12 ≈ 162,755 > float16's 65,504")
    s = holes(page)
    assert s["alarm"] == "The row is garbage: e^12 ≈ 162,755 > 65,504, the largest float16."
    assert_holes_read(s, e0="inf", w0="nan", f0="✕")
    expect(says(page, r"The row is garbage")).to_be_visible()
    button(page, "subtract the max").click()
    s = holes(page)
    assert "nothing can overflow" in s["okay"] and s["alarm"] == "" and s["p0"] == "100%"
    expect(page.get_by_text(re.compile("The row is garbage"))).to_have_count(0)
    button(page, "subtract the max").click()
    button(page, "float32").click()
    s = holes(page)
    assert s["alarm"] == "" and s["dtype"] == "float32" and s["e0"] == "162,755"
    assert address_shows(page, "precision=float32", "subtract_max=off")


def test_overflow_deep_link_and_a_repaired_value(static_page):
    page = static_page("overflow.html", "?scores=12, 1, 0.1&subtract_max=on&precision=float8")
    s = holes(page)
    assert "nothing can overflow" in s["okay"] and s["p0"] == "100%" and s["dtype"] == "float16"
    expect(says(page, r"precision='float8' is not one of float32, float16; ignored")
           ).to_be_visible()


# --- online softmax -----------------------------------------------------------------------

def test_online_softmax_both_walks_step_by_step(static_page):
    page = static_page("online.html")
    assert holes(page, having="end_sum")["how"].startswith("Nothing read yet")
    next_block = button(page, "Next block")
    next_block.click()
    expect(says(page, r"Block 1 of 2")).to_be_visible()
    next_block.click()
    end = says(page, r"All 4 scores read")
    expect(end).to_contain_text(re.compile(r"Running sum\s*1\.553"))
    expect(end).to_contain_text(re.compile(r"Σ e\^\(score − 3\):\s*1\.553"))
    expect(page.get_by_text("e^(2 − 3) = 0.3679")).to_be_visible()
    expect(next_block).to_be_disabled()
    button(page, "Previous").click()
    expect(says(page, r"Block 1 of 2")).to_be_visible()
    assert address_shows(page, "step=1")
    # the attention walk: back to the start, then block by block to the naive output
    button(page, "Reset keys").click()
    expect(says(page, r"Nothing read yet: 3 blocks of keys")).to_be_visible()
    for _ in range(3):
        button(page, "Next keys").click()
    s = holes(page)
    assert s["diff_says"] == "float rounding" and re.fullmatch(r"\d(\.\d)? × 10\^−1[67]",
                                                               s["diff"])
    assert s["tiled"] == s["naive"]
    expect(button(page, "Next keys")).to_be_disabled()
    # the memory held: one tile against the whole square
    assert s["naive_big"] == "4,294,967,296 bytes ≈ 4.29 GB"
    assert s["tiled_big"] == "1,048,576 bytes ≈ 1.05 MB"


def test_a_walk_button_is_disabled_on_its_element_not_rebuilt(static_page):
    # The switcher sets a Button's `disabled` on its element (static/switcher.js): Bokeh 3.9
    # rebuilds a button whose model's `disabled` changes and lays out the page again.
    page = static_page("online.html")
    next_block = button(page, "Next block")
    next_block.evaluate("(el) => { el.dataset.aeSeen = 'yes'; }")
    next_block.click()
    next_block.click()
    expect(next_block).to_be_disabled()
    assert next_block.evaluate("(el) => el.dataset.aeSeen") == "yes"  # the same element
    model_disabled, set_on_elements = page.evaluate("""() => {
      const p = [...AE.states.panels.values()][0];
      const next = p.targets[p.spec.targets.findIndex((t) => t.name === "prop:next.disabled")];
      return [next.disabled, AE.fence.internals.buttonElementsSet]; }""")
    assert model_disabled is False and set_on_elements > 0
    button(page, "Previous").click()
    expect(next_block).to_be_enabled()


def test_online_softmax_block_size_never_changes_the_answer(static_page):
    page = static_page("online.html", "?step=4")
    block = page.locator(".noUi-handle").first
    for key in ("Home", "ArrowRight", "ArrowRight", "ArrowRight"):  # block 1, 2, 3, 4
        press(page, block, key)
        assert holes(page)["end_sum"] == "1.553"


def test_online_softmax_deep_link_and_a_repaired_value(static_page):
    page = static_page("online.html", "?block=4&step=99&scores=3, 1, 2, 0")
    s = holes(page)
    assert "step=99 is out of range; using 16" in s["url"]
    now = holes(page, having="end_sum")
    assert now["end_sum"] == "1.553" and now["head"] == "Block 1 of 1: (3, 1, 2, 0)."
    expect(says(page, r"step 16 is past the last block; showing step 1, the end")
           ).to_be_visible()
    page = static_page("online.html", "?scores=3, 1, 2, 0&step=2")
    expect(says(page, r"does not beat the running max 3")).to_be_visible()


# --- static states are the live states ------------------------------------------------------

def expected_readouts(panel, state):  # -> each Readout's [name, text] list, as the page shows
    out = []
    for target, values in state.items():
        if target.startswith("holes:"):
            template = panel.targets[target].template
            out.append([[name, values[name]] for name in HOLE.findall(template)])
    return out


SAMPLES = {  # page: how many states to compare (all when the panel has fewer), columns
    "agreement.html": (40, {"source:demo": ["raw", "w_scaled"], "source:gauge": ["x", "y"]}),
    "overflow.html": (None, {"source:bars": ["x", "label", "score"],
                             "source:broken": ["x", "text"]}),
    "online.html": (60, {"source:bars": ["x", "term", "label", "color"],
                         "source:scores": ["score"], "source:edges": ["x"]}),
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_static_states_are_the_live_states(static_page, name):
    cls = PANELS[name]
    count, sources = SAMPLES[name]
    controls = cls.controls()
    combos = [dict(zip([c.name for c in controls], values))
              for values in itertools.product(*(c.values for c in controls))]
    sample = combos if count is None else random.Random(5).sample(combos, count)
    page = static_page(name)
    shown = page.evaluate(STATES_JS, [sample, sources])
    live = cls()
    distinct = {str(expected_readouts(live, cls.state(**combo))) for combo in sample}
    assert len(distinct) > len(sample) // 3  # the sample reaches many different states
    bad = []
    for combo, got in zip(sample, shown):
        state = cls.state(**combo)
        missing = [r for r in expected_readouts(live, state) if r not in got["shown"]]
        columns = {t: {n: state[t][n] for n in names} for t, names in sources.items()}
        if missing or got["columns"] != columns:
            bad.append((combo, missing[:1]))
    assert not bad, f"{len(bad)} of {len(sample)} states differ, e.g. {bad[:2]}"


def test_a_figures_axes_are_measured_again_only_when_a_range_moves(static_page):
    # the switcher's patch of Bokeh's side-panel check (static/switcher.js): a change that
    # moves no range skips it; sixteen scores move the x range, and the check runs again
    # for the new range, then is skipped again while the range stays
    page = static_page("overflow.html")
    assert page.evaluate("AE.fence.internals.sidePanelsWatched") is True
    figure = """() => { const p = [...AE.states.panels.values()][0];
      const bars = p.targets[p.spec.targets.findIndex((t) => t.name === "source:bars")];
      const doc = Bokeh.documents[0];
      const plot = [...(doc._all_models ? doc._all_models.values() : doc.all_models)]
        .find((m) => Array.isArray(m.renderers) && m.renderers.some((r) => r.data_source === bars));
      const view = [...Bokeh.index.find(plot)][0];
      return {checked: view.aeRangesChecked, end: view.frame.x_range.end,
              skipped: AE.fence.internals.sidePanelChecksSkipped}; }"""
    button(page, "float32").click()  # the same scores: no range moves
    page.wait_for_function(f"() => ({figure})().checked !== undefined")
    before = page.evaluate(figure)
    button(page, "float16").click()
    page.wait_for_function(f"AE.fence.internals.sidePanelChecksSkipped > {before['skipped']}")
    assert page.evaluate(figure)["checked"] == before["checked"]
    pick(page, "scores", "sixteen 9s: each e^9 fits float16, their sum does not")
    page.wait_for_function(f"() => ({figure})().checked.includes(',15.5,')")
    after = page.evaluate(figure)
    assert after["end"] == 15.5 and after["checked"] != before["checked"]
    button(page, "float32").click()
    page.wait_for_function(f"AE.fence.internals.sidePanelChecksSkipped > {after['skipped']}")
    assert page.evaluate(figure)["checked"] == after["checked"]
