"""The cost panel, the decode bill and the memory bill on static pages, opened from file:// in
Chromium: no server, no websocket.

Four pages are built here, as a static build writes them: each panel alone, and the decode
and memory bills together under the second chapter's keys (the memory bill's `model`, `users`
and `context` renamed, as `url_state.url_plan` renames them). The documents' numbers are
reached by operating the controls; deep links restore, bad values are repaired with a visible
note; your own config.json is offered as the live explorable; and for a sample of states the
page shows exactly what the live panel's `state()` gives: every text hole, the sources' columns
and the figures' properties.
"""

import itertools
import random
import re
from pathlib import Path

import panel as pn
import pytest
from playwright.sync_api import expect

from app.chapters import page_model
from app.kit import chrome, states, url_state
from app.panels.cost import CostPanel
from app.panels.decode_bill import DecodeBillPanel
from app.panels.memory_bill import MemoryBillPanel
from tests.browser import static_pages
from tests.browser.static_pages import (
    HOLES_JS,
    address_shows,
    assert_holes_read,
    holes,
    prepare,
    static_html,
)

ROOT = Path(__file__).resolve().parents[2]

# set the panel's controls to each combination, let the page apply it, read what it shows:
# every hole's text, every source target's columns, every property target's value
STATES_JS = """async ([control, combos]) => {
  HELPERS
  const p = panelWith(control);
  const holes = HOLES_JS;
  const get = (o, k) => (o instanceof Map ? o.get(k) : o[k]);
  const out = [];
  for (const combo of combos) {
    await setStops(p, combo);
    const columns = {}, props = {};
    p.spec.targets.forEach((target, i) => {  // each a record: app/kit/targets.py
      const model = p.targets[i];
      if (target.kind === "source") {
        const data = model.data;
        const names = data instanceof Map ? [...data.keys()] : Object.keys(data);
        columns[target.name] = Object.fromEntries(names.map((n) => [n, [...get(data, n)]]));
      } else if (target.kind === "prop") {
        let value = model[target.attr];
        if (value !== null && typeof value === "object" && "value" in value) {
          value = {value: value.value};  // a Value spec, as Python writes it
        }
        props[target.name] = value;
      }
    });
    out.push({holes: holes(), columns, props});
  }
  return out;
}""".replace("HELPERS", static_pages.PANEL_HELPERS_JS).replace("HOLES_JS", HOLES_JS)

MATH_KEYS = url_state.chapter_plan(page_model.at("/math").panels,
                                   page_model.at("/math").follows)  # slot -> keys


@pytest.fixture(scope="session")
def site(tmp_path_factory):  # -> the folder holding cost.html, decode.html, memory.html, math.html
    out = tmp_path_factory.mktemp("static-costs")
    prepare(out)
    with states.static_build():
        static_html(chrome.single_page(CostPanel(), "What attention costs"), out / "cost.html")
        static_html(chrome.single_page(DecodeBillPanel(), "The decode bill"), out / "decode.html")
        static_html(chrome.single_page(MemoryBillPanel(), "The memory bill"), out / "memory.html")
        decode, memory = DecodeBillPanel(in_chapter=True), MemoryBillPanel(in_chapter=True)
        repairs = [url_state.with_url_state(decode, MATH_KEYS["decode"]),
                   url_state.with_url_state(memory, MATH_KEYS["memory"])]
        static_html(pn.Column(repairs[0], decode, repairs[1], memory,
                              sizing_mode="stretch_width"), out / "math.html")
    return out


def slide(page, index, exponent):  # the index-th slider's handle to 2**exponent, by keys
    handle = page.locator(".noUi-handle").nth(index)
    handle.focus()
    handle.press("Home")
    for _ in range(exponent):
        handle.press("ArrowRight")


def click(page, name):
    page.get_by_role("button", name=name, exact=True).click()


def sample(cls, n, seed, must=()):  # -> the documents' states and n random ones
    controls = cls.controls()
    names = [c.name for c in controls]
    combos = [dict(zip(names, values))
              for values in itertools.product(*(c.values for c in controls))]
    return [*must, *random.Random(seed).sample(combos, n)]


def same(shown, value):  # the page's value is the state's (a number as JSON carried it)
    if isinstance(shown, dict) and not isinstance(value, dict):
        shown = shown.get("value")  # a glyph's spec, {value: ...}, set from a plain value
    if isinstance(value, list):
        return len(shown) == len(value) and all(map(same, shown, value))
    if isinstance(value, float) and isinstance(shown, (int, float)):
        return shown == value or abs(shown - value) <= 1e-12 * abs(value)
    return shown == value


def differences(cls, combos, shown):  # -> combos whose page differs from the live state
    bad = []
    for combo, got in zip(combos, shown):
        state = cls.state(**combo)
        for target, value in state.items():
            kind = target.partition(":")[0]
            if kind == "holes":
                ok = all(got["holes"].get(k) == v for k, v in value.items())
            elif kind == "source":
                columns = got["columns"][target]
                ok = all(same(columns[k], v) for k, v in value.items())
            else:
                ok = same(got["props"][target], value)
            if not ok:
                bad.append((combo, target))
                break
    return bad


def check_states(page, cls, control, combos):
    shown = page.evaluate(STATES_JS, [control, combos])
    bad = differences(cls, combos, shown)
    assert not bad, f"{len(bad)} of {len(combos)} states differ, e.g. {bad[:3]}"


# --- the cost panel -----------------------------------------------------------------------

def test_cost_documents_numbers_by_clicks_and_keys(static_page):
    page = static_page("cost.html")
    assert_holes_read(holes(page), name="Qwen3-8B", share="7.4%", tri="51,324", naive="25,662",
                      formula="4 × 36 layers × 32 query heads × 128 head_dim",
                      pair_flops="589,824")
    expect(page.get_by_text("prompt tokens, powers of two: 4,096")).to_be_visible()
    for exponent, share in ((15, "39%"), (17, "72%")):
        slide(page, 0, exponent)
        assert holes(page)["share"] == share
    slide(page, 0, 8)  # 256 tokens, then 4,096 generated
    assert_holes_read(holes(page), share="0.50%", first="0.99%", first_context="256",
                      last_context="4,351")
    click(page, "GPT-2")
    slide(page, 0, 10)
    s = holes(page)
    assert_holes_read(s, name="GPT-2 small", tri="13,404", share="7.1%")
    assert "max position is 1,024" in s["reach"] and "lies beyond it" in s["reach"]
    click(page, "naive: whole square, n²")
    assert holes(page)["kernel"] == "naive kernel, n² pairs"
    assert address_shows(page, "model=gpt2", "prompt=1024", "kernel=naive")


# every readout's host element: its height, its held min-height, its height without the hold
READOUTS_JS = """() => {
  const out = [];
  for (const p of AE.states.panels.values()) {
    p.spec.targets.forEach(({name, kind}, i) => {
      if (kind !== "holes") { return; }
      for (const v of Bokeh.index.find(p.targets[i])) {
        const held = v.el.style.minHeight;
        v.el.style.minHeight = "";
        const natural = v.el.getBoundingClientRect().height;
        v.el.style.minHeight = held;
        out.push({name, height: v.el.getBoundingClientRect().height, held, natural});
      }
    });
  }
  return out;
}"""


# -> READOUTS_JS's answer once it has read the same in three frames running (settled over two
# frames: Bokeh's layout and the ResizeObserver that holds heights run before a frame's
# paint), null until then; `token` starts a new count. Polled every animation frame.
SETTLED_JS = """(token) => {
  const now = (""" + READOUTS_JS + """)(), key = JSON.stringify(now);
  const s = window.__settled;
  if (!s || s.token !== token) { window.__settled = {token, key, same: 0}; return null; }
  if (key === s.key) { s.same += 1; } else { s.key = key; s.same = 0; }
  return s.same >= 2 ? now : null;
}"""
_settles = itertools.count()


def settled_readouts(page):  # -> READOUTS_JS, once the readouts' heights are settled
    return page.wait_for_function(SETTLED_JS, arg=next(_settles), polling="raf").json_value()


def test_a_readout_keeps_its_tallest_height_until_the_width_changes(static_page):
    # GPT-2's cost readout has a sentence more than Qwen3-8B's; back on Qwen3-8B the readout
    # keeps GPT-2's height, so the figure below stays put and Bokeh lays nothing out again
    page = static_page("cost.html")
    before = settled_readouts(page)
    click(page, "GPT-2")  # the state's text is set in the click's handler (holes() reads it)
    taller = settled_readouts(page)
    click(page, "Qwen3-8B")
    back = settled_readouts(page)
    grew = [i for i, (a, b) in enumerate(zip(before, taller)) if b["height"] > a["height"] + 1]
    assert grew, "no readout grew from Qwen3-8B to GPT-2: the test shows nothing"
    for i in grew:
        assert back[i]["natural"] < taller[i]["height"] - 1, back[i]  # its text is shorter
        assert back[i]["height"] == pytest.approx(taller[i]["height"], abs=0.5), back[i]
    assert page.evaluate("AE.heights.stats.readoutsHeld") > 0
    page.set_viewport_size({"width": 700, "height": 900})  # a new width: held heights reset
    page.wait_for_function("window.innerWidth === 700", polling="raf")
    for r in settled_readouts(page):
        assert r["height"] == pytest.approx(r["natural"], abs=0.5), r


def test_cost_deep_link_and_repaired_values(static_page):
    page = static_page("cost.html", "?model=gpt2&prompt=1024&generate=3000&kernel=square")
    s = holes(page)
    assert_holes_read(s, name="GPT-2 small", share="7.1%", tri="13,404", generate="2,048")
    for repair in ("kernel='square' is not one of triangular, naive; ignored",
                   "generate=3000 is not one of this page's stops; using 2048"):
        assert repair in s["url"]
    expect(page.get_by_text(re.compile("generate=3000 is not one of"))).to_be_visible()
    page = static_page("cost.html", "?model=custom&prompt=1e99")
    s = holes(page)
    assert "model='custom' is not one of qwen3-8b, gpt2, llama-3-8b; ignored" in s["url"]
    assert "prompt=1e99 is out of range; using 131072" in s["url"]
    assert_holes_read(s, name="Qwen3-8B", prompt="131,072")


def test_your_own_config_opens_the_live_explorable_in_this_state(static_page):
    page = static_page("cost.html")
    expect(page.get_by_role("button", name="Custom")).to_have_count(0)
    expect(page.get_by_role("textbox")).to_have_count(0)  # no paste box, no number box
    expect(page.get_by_role("button", name="Open this in the live explorable")).to_be_visible()
    click(page, "Llama-3-8B")
    live = page.evaluate("() => AE.url.liveUrl()")  # this page's live twin, in this state
    assert re.search(r"/live/cost(\.html)?\?.*model=llama-3-8b", live), live


def test_cost_states_are_the_live_states(static_page):
    page = static_page("cost.html")
    must = [{"model": m, "prompt": 4096, "generate": 4096, "kernel": k}
            for m in ("qwen3-8b", "gpt2", "llama-3-8b") for k in ("triangular", "naive")]
    check_states(page, CostPanel, "kernel", sample(CostPanel, 120, 5, must))


# --- the decode bill ----------------------------------------------------------------------

def test_decode_bill_documents_numbers(static_page):
    page = static_page("decode.html")
    assert_holes_read(holes(page), dots="4,194,304", scores_short="1.07 billion",
                      values_short="1.07 billion", intensity="4.0", ridge="295",
                      verdict="Memory-bound by a factor of ~74", kv_layer="4,096",
                      kv_token="131,072", kv_all_size="0.54 GB (0.50 GiB)")
    slide(page, 1, 5)  # 32 users
    assert_holes_read(holes(page), kv_all_size="17 GB (16 GiB)", intensity="4.0")
    expect(page.get_by_text(re.compile(r"^For all 32 users"))).to_be_visible()
    click(page, "B200")
    assert holes(page)["ridge"] == "281"
    click(page, "GPT-2")
    assert "no grouping" in holes(page)["gqa_body"]
    assert address_shows(page, "users=32", "gpu=b200")


def test_decode_bill_deep_link_and_a_repaired_value(static_page):
    page = static_page("decode.html", "?users=64&context=99999999&gpu=tpu")
    s = holes(page)
    assert s["users"].startswith("For all 64 users") and s["context"] == "1,048,576"
    for repair in ("context=99999999 is out of range; using 1048576", "gpu='tpu' is not one of"):
        assert repair in s["url"]
    expect(page.get_by_text(re.compile("context=99999999 is out of range"))).to_be_visible()


def test_decode_bill_states_are_the_live_states(static_page):
    page = static_page("decode.html")
    must = [{"model": "llama-3-8b", "context": 4096, "users": u, "gpu": "h100-sxm"}
            for u in (1, 32)]
    check_states(page, DecodeBillPanel, "gpu", sample(DecodeBillPanel, 120, 6, must))


# --- the memory bill ----------------------------------------------------------------------

def test_memory_bill_documents_numbers(static_page):
    page = static_page("memory.html")
    s = holes(page)
    assert_holes_read(s, weights="16.1 GB (15.0 GiB)", one="122,532",
                      one_approx=" (≈ 120 thousand)", total="16.6 GB (15.5 GiB)",
                      scores="67,108,864", eager="4.3 GB (4.0 GiB)", fused="1.0 MB (1.0 MiB)",
                      ratio="4,096")
    assert s["read"].startswith("15.0 GB (14.0 GiB)")
    slide(page, 1, 5)  # 32 users
    assert_holes_read(holes(page), who="32 users", kv_all="17.2 GB (16.0 GiB)", all="3,829")
    expect(page.get_by_text(re.compile(r"For 32 users at 4,096 tokens each:"))).to_be_visible()
    click(page, "fp8 (1 byte)")
    assert holes(page)["weights"] == "8.03 GB (7.48 GiB)"
    assert address_shows(page, "users=32", "dtype=fp8")


def test_memory_bill_deep_link_and_a_repaired_value(static_page):
    page = static_page("memory.html", "?users=32&dtype=fp4&prompt=1000")
    s = holes(page)
    assert_holes_read(s, who="32 users", kv_all="17.2 GB (16.0 GiB)", prompt="1,024")
    for repair in ("dtype='fp4' is not one of bf16, fp8, fp32; ignored",
                   "prompt=1000 is not one of this page's stops; using 1024"):
        assert repair in s["url"]
    expect(page.get_by_text(re.compile("dtype='fp4' is not one of"))).to_be_visible()


def test_memory_bill_states_are_the_live_states(static_page):
    page = static_page("memory.html")
    must = [{"model": "llama-3-8b", "users": u, "context": 4096, "prompt": 8192,
             "dtype": "bf16"} for u in (1, 32)]
    check_states(page, MemoryBillPanel, "dtype", sample(MemoryBillPanel, 120, 7, must))


# --- both bills on one page, under the chapter's keys --------------------------------------

def test_the_chapters_keys_restore_both_bills_from_one_link(static_page):
    assert MATH_KEYS["memory"]["memory_users"] == "users"
    page = static_page("math.html", "?users=64&memory_users=32&memory_model=gpt2")
    def shown(pattern):
        return page.get_by_text(re.compile(pattern)).first

    expect(shown(r"^For all 64 users")).to_be_visible()  # the decode bill
    expect(shown(r"For 32 users at 4,096 tokens each")).to_be_visible()  # the memory bill
    expect(page.get_by_text("4,194,304", exact=True).first).to_be_attached()  # decode: Llama
    expect(shown(r"Counting\s+GPT-2 small")).to_be_visible()  # memory: GPT-2
    slide(page, 3, 4)  # the memory bill's users slider: context, users, context, users, prompt
    expect(shown(r"For 16 users at 4,096 tokens each")).to_be_visible()
    assert address_shows(page, "memory_users=16", "users=64")
