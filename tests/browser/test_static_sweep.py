"""Where the n² lives and the √d_k sweep on static pages, opened from file:// in Chromium: no
server, no websocket.

Three pages are built here, as a static build writes them: the ladder alone, the sweep alone,
and the head above a ladder that follows it (the article's composition: the head's sequence
length and phase drive both panels). The documents' numbers are reached by operating the
controls; deep links restore, bad values are repaired with a visible note; and for a sample
of states (every state of the sweep) the page shows exactly what the live panel's `state()`
gives.
"""

import itertools
import random
import re
from pathlib import Path

import panel as pn
import pytest
from playwright.sync_api import expect

from app.kit import chrome, states, url_state
from app.panels.heatmap import HeadPanel
from app.panels.ladder import LadderPanel
from app.panels.sqrt_dk import SqrtDkPanel
from tests.browser import static_pages
from tests.browser.conftest import DOCUMENT_IDLE_JS, RENDER_TIMEOUT_MS
from tests.browser.static_pages import HOLES_JS, address_shows, holes, prepare, static_html

ROOT = Path(__file__).resolve().parents[2]

# the ladder's marker of the head's length: [dot products, length]
HEAD_MARKER_JS = """() => { HELPERS
  return columnsOf(panelWith("prompt"), {"source:head_marker": ["y"]})["source:head_marker"].y;
}""".replace("HELPERS", static_pages.PANEL_HELPERS_JS)

# set the panel's controls to each combination, let the page apply it, read what it shows:
# every hole's text and the named columns of the named sources
STATES_JS = """async ([control, combos, sources]) => {
  HELPERS
  return statesOf(panelWith(control), combos, HOLES_JS, sources);
}""".replace("HELPERS", static_pages.PANEL_HELPERS_JS).replace("HOLES_JS", HOLES_JS)


@pytest.fixture(scope="session")
def site(tmp_path_factory):  # -> the folder holding ladder.html, sweep.html, article.html
    out = tmp_path_factory.mktemp("static-sweep")
    prepare(out)
    with states.static_build():
        static_html(chrome.single_page(LadderPanel(), "Where the n² lives"), out / "ladder.html")
        static_html(chrome.single_page(SqrtDkPanel(), "The √d_k sweep"), out / "sweep.html")
        head = HeadPanel()
        ladder = LadderPanel(head=head, in_chapter=True)
        repairs = [url_state.with_url_state(head),
                   url_state.with_url_state(ladder, {"prompt": "prompt", "response": "response"})]
        static_html(pn.Column(repairs[0], head, repairs[1], ladder,
                              sizing_mode="stretch_width"), out / "article.html")
    return out


def press(page, handle, key, times=1):  # a slider's handle, by keyboard
    handle.focus()
    for _ in range(times):
        handle.press(key)


def shown_states(page, control, combos, sources):  # -> what the page shows for each combo
    return page.evaluate(STATES_JS, [control, combos, sources])


def mismatches(panel_class, combos, shown, hole_targets, sources):
    # -> combos whose page differs from the live state: holes' texts, sources' columns
    bad = []
    for combo, got in zip(combos, shown):
        state = panel_class.state(**combo)
        expected = {}
        for target in hole_targets:
            expected.update(state[target])
        texts = {k: got["shown"].get(k) for k in expected}
        columns = {t: {n: state[t][n] for n in names} for t, names in sources.items()}
        if texts != expected or got["columns"] != columns:
            bad.append(combo)
    return bad


# --- where the n² lives ------------------------------------------------------------------

def test_ladder_documents_numbers_by_keys_and_clicks(static_page):
    page = static_page("ladder.html")
    s = holes(page)
    assert (s["now"], s["prefill_all"], s["decode_all"]) == (
        "36", "9, 16, 25, 36, 49, 64", "3, 4, 5, 6, 7, 8")
    assert (s["response"], s["total"], s["final"], s["final_square"]) == (
        "4,096", "9,435,136", "4,352", "18,939,904")
    assert (s["linear"], s["square"]) == ("1,048,576", "8,386,560")  # R·P + R(R − 1)/2
    handles = page.locator(".noUi-handle")  # length, prompt tokens, response tokens
    expect(page.get_by_text("prompt tokens: 256")).to_be_visible()
    for n, square in zip(range(3, 9), (9, 16, 25, 36, 49, 64)):
        press(page, handles.nth(0), "ArrowLeft" if n == 3 else "ArrowRight", 3 if n == 3 else 1)
        assert (holes(page)["n"], holes(page)["now"]) == (str(n), str(square))
    page.get_by_role("button", name="decode").click()
    assert (holes(page)["phase"], holes(page)["now"]) == ("decode", "8")
    press(page, handles.nth(1), "Home")  # a prompt of 1 token
    press(page, handles.nth(2), "End")  # 65,536 response tokens
    s = holes(page)
    assert (s["prompt"], s["response"], s["total"]) == ("1", "65,536", f"{65_536 * 65_537 // 2:,}")
    expect(page.get_by_text("response tokens: 65,536")).to_be_visible()
    assert address_shows(page, "length=8", "phase=decode", "response=65536")


def test_ladder_deep_link_and_a_repaired_value(static_page):
    page = static_page("ladder.html", "?length=9&phase=decode&prompt=1000&response=abc")
    s = holes(page)
    assert (s["n"], s["now"], s["prompt"], s["response"]) == ("8", "8", "1,024", "4,096")
    for repair in ("length=9 is out of range; using 8",
                   "prompt=1000 is not one of this page's stops; using 1024",
                   "response='abc' is not a number; ignored"):
        assert repair in s["url"]
    expect(page.get_by_text(re.compile("length=9 is out of range"))).to_be_visible()


def test_ladder_states_are_the_live_states(static_page):
    page = static_page("ladder.html")
    controls = LadderPanel.controls()
    combos = [dict(zip([c.name for c in controls], values))
              for values in itertools.product(*(c.values for c in controls))]
    rng = random.Random(3)
    sample = [c for c in combos if c["prompt"] == 256 and c["response"] == 4096]
    sample += rng.sample(combos, 150)
    sources = {"source:bars": ["line_width", "alpha"], "source:head_marker": ["n", "y"],
               "source:marker": ["n", "total"]}
    shown = shown_states(page, "prompt", sample, sources)
    bad = mismatches(LadderPanel, sample, shown, ("holes:ladder", "holes:context"), sources)
    assert not bad, f"{len(bad)} of {len(sample)} states differ, e.g. {bad[:3]}"


def test_the_heads_controls_drive_the_ladder_that_follows_it(static_page):
    page = static_page("article.html")
    assert (holes(page)["n"], holes(page)["dots"]) == ("6", "36")
    assert page.evaluate(HEAD_MARKER_JS) == [36, 6]
    length = page.locator(".noUi-handle").first  # the head's sequence length
    press(page, length, "ArrowRight", 2)
    s = holes(page)
    assert (s["dots"], s["n"], s["now"]) == ("64", "8", "64")  # head and ladder both moved
    assert page.evaluate(HEAD_MARKER_JS) == [64, 8]
    page.get_by_role("button", name="decode").click()
    s = holes(page)
    assert (s["dots"], s["n"], s["phase"], s["now"]) == ("8", "8", "decode", "8")
    press(page, length, "ArrowLeft", 5)
    s = holes(page)
    assert (s["n"], s["now"]) == ("3", "3") and page.evaluate(HEAD_MARKER_JS) == [9, 3]
    # the ladder's own keys stay its own; length and phase are the head's
    assert address_shows(page, "length=3", "phase=decode", "prompt=256")


def test_the_article_composition_restores_both_panels_from_one_link(static_page):
    page = static_page("article.html", "?length=7&phase=decode&prompt=1024&response=3")
    s = holes(page)
    assert (s["dots"], s["n"], s["now"], s["prompt"], s["response"]) == (
        "7", "7", "7", "1,024", "2")
    expect(page.get_by_text(re.compile("response=3 is not one of this page's stops"))
           ).to_be_visible()


# --- the √d_k sweep -----------------------------------------------------------------------

def test_sweep_documents_numbers_by_keys(static_page):
    page = static_page("sweep.html")
    s = holes(page)
    assert (s["d_k"], s["root"], s["n"], s["swing"], s["two_swing"]) == (
        "128", "11.31", "16", "34", "68")
    assert (s["ratio"], s["ratio_exp"]) == ("10", "29")  # e⁶⁸ ≈ 10²⁹
    expect(page.get_by_text("d_k, in powers of two: 128")).to_be_visible()
    d_k = page.locator(".noUi-handle").first
    press(page, d_k, "Home")
    roots = {}
    for exponent in range(11):
        if exponent:
            press(page, d_k, "ArrowRight")
        s = holes(page)
        roots[int(s["d_k"])] = s["root"]
        assert s["d_k"] == str(2 ** exponent)
    assert [roots[d] for d in (4, 16, 128, 512)] == ["2.00", "4.00", "11.31", "22.63"]
    assert float(s["eff_raw"]) < 1.5 and float(s["eff_scaled"]) > 10  # d_k = 1024
    keys = page.locator(".noUi-handle").nth(1)
    press(page, keys, "End")
    assert holes(page)["n"] == "256" and address_shows(page, "keys=256")


def test_sweep_deep_link_and_a_repaired_value(static_page):
    page = static_page("sweep.html", "?d_k=512&keys=0")
    s = holes(page)
    assert (s["d_k"], s["root"], s["n"]) == ("512", "22.63", "2")
    assert "keys=0 is out of range; using 2" in s["url"]
    expect(page.get_by_text(re.compile("keys=0 is out of range"))).to_be_visible()
    page = static_page("sweep.html", "?d_k=5")
    assert holes(page)["d_k"] == "4"
    expect(page.get_by_text(re.compile(r"d_k=5 is not one of this page's stops; using 4 "
                                       r"\(the live explorable takes any value\)"))
           ).to_be_visible()


def test_every_sweep_state_is_the_live_state(static_page):
    page = static_page("sweep.html")
    controls = SqrtDkPanel.controls()
    combos = [dict(zip([c.name for c in controls], values))
              for values in itertools.product(*(c.values for c in controls))]
    assert len(combos) == 88
    sources = {"source:bars": ["key", "w_raw", "w_scaled"], "source:marker": ["raw", "scaled"],
               "source:curve": ["mean_raw", "draw_scaled"]}
    shown = shown_states(page, "d_k", combos, sources)
    bad = mismatches(SqrtDkPanel, combos, shown, ("holes:readout", "holes:curve_note"),
                     sources)
    assert not bad, f"{len(bad)} of 88 states differ, e.g. {bad[:3]}"


def test_on_the_chapter_the_ladder_follows_the_heads_controls_from_its_own_island(page):
    # on "/" the head and the ladder are two islands, two roots of one document, and Panel
    # gives a root's callbacks the models of that root only: the head's sliders carry the
    # ladder's callback without the ladder's models, which must still reach the ladder
    messages = []
    page.on("console", lambda m: messages.append(m.text))
    page.goto("/?length=8")
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    assert page.evaluate(HEAD_MARKER_JS) == [64, 8]
    press(page, page.locator("#panel-head .noUi-handle").first, "ArrowLeft", 2)
    page.wait_for_function(f"() => JSON.stringify(({HEAD_MARKER_JS})()) === '[36,6]'")
    assert not [m for m in messages if "is not defined" in m], messages
