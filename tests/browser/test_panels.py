"""Each panel alone at its route, in Chromium, driven as a reader would: controls found by
their role and visible name, figures checked against what the two documents quote. Every
route honours a deep link and clamps or ignores a bad value with a visible note.

These drive the live routes (/live/heatmap, ...): a Panel session behind every click. The
static pages at /heatmap, ... are the same panels switched in the browser (test_static_*.py).
"""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

LIVE = "/live"  # the live routes: a Panel session per page


def shown(page, text):  # a figure standing on its own (a table cell, a bold number)
    return page.get_by_text(text, exact=True).first


def says(page, pattern):  # the innermost element whose text matches the pattern
    return page.get_by_text(re.compile(pattern)).first


def button(page, name):
    return page.get_by_role("button", name=name, exact=True)


def type_into(page, label, text):  # a text box, found by its visible label; Enter commits
    box = page.get_by_role("textbox", name=re.compile(label))
    box.fill(text)
    box.press("Enter")


# --- the head (/heatmap) ----------------------------------------------------------------

def test_head_without_the_divisor_piles_row_2_onto_cat(open_page):
    page = open_page(LIVE + "/heatmap")
    button(page, "divide scores by √d_k").click()
    expect(shown(page, "0.97")).to_be_visible()  # row 2 (sat) on cat
    expect(says(page, r"\b1\.17\b")).to_be_visible()  # effective tokens attended


def test_head_at_length_8_discards_28_of_64(open_page):
    page = open_page(LIVE + "/heatmap")
    length = page.get_by_role("slider").first  # sequence length, the first slider
    expect(length).to_have_attribute("aria-valuenow", re.compile(r"^6"))
    length.focus()
    page.keyboard.press("End")
    expect(says(page, r"28 of 64")).to_be_visible()


def test_head_in_decode_the_mask_changes_nothing_and_the_log_says_why(open_page):
    page = open_page(LIVE + "/heatmap")
    button(page, "decode").click()
    expect(says(page, r"phase decode")).to_be_visible()  # the log: decode has landed
    tables = page.locator("table.ae-arith")  # the inspected row's arithmetic
    expect(tables.first).to_contain_text("query 5")  # the newest token's row
    before = tables.all_inner_texts()
    button(page, "causal mask").click()
    expect(says(page, r"no future key to hide")).to_be_visible()
    assert tables.all_inner_texts() == before, "a number moved when the mask was toggled"


# --- the cost panel (/cost) -------------------------------------------------------------

def test_cost_qwen3_at_4096_then_gpt2(open_page):
    page = open_page(LIVE + "/cost")
    expect(says(page, r"^7\.4%$")).to_be_visible()  # attention's share of prefill
    expect(says(page, r"51,324")).to_be_visible()  # the crossover, triangular kernel
    button(page, "GPT-2").click()
    expect(says(page, r"13,404")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]model=gpt2"))


def test_cost_deep_link_restores_gpt2_at_1024(open_page):
    page = open_page(LIVE + "/cost?model=gpt2&prompt=1024")
    expect(says(page, r"^7\.1%$")).to_be_visible()
    expect(says(page, r"Counting\s+GPT-2")).to_be_visible()


def test_cost_malformed_config_names_the_field_and_the_panel_still_works(open_page):
    page = open_page(LIVE + "/cost")
    button(page, "Custom").click()
    paste = page.get_by_role("textbox", name=re.compile("paste config.json"))
    paste.fill('{"num_hidden_layers": "many", "hidden_size": 4096, '
               '"num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}')
    button(page, "Use this config").click()
    alert = page.get_by_role("alert").filter(has_text="num_hidden_layers")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("positive integer")
    expect(says(page, r"^7\.4%$")).to_be_visible()  # still counting Qwen3-8B
    button(page, "GPT-2").click()
    expect(says(page, r"13,404")).to_be_visible()


# --- the √d_k sweep (/sqrt-dk) ----------------------------------------------------------

def test_sqrt_dk_deep_link_512_collapses_the_raw_row_only(open_page):
    page = open_page(LIVE + "/sqrt-dk?d_k=512")
    expect(says(page, r"Without the divisor:\s*1\.00 effective keys")).to_be_visible()
    scaled = says(page, r"Divided by √d_k:\s*\d+\.\d\d effective keys of 16")
    expect(scaled).to_be_visible()
    keys = float(re.search(r"Divided by √d_k:\s*(\d+\.\d\d)", scaled.inner_text()).group(1))
    assert keys > 10, f"the scaled row should stay flat, spreading over most keys: {keys}"


# --- the second document's panels -------------------------------------------------------

def test_agreement_shows_3_and_256(open_page):
    page = open_page(LIVE + "/agreement")
    expect(shown(page, "3")).to_be_visible()  # (2, −1, 0.5) · (3, 4, 2)
    expect(says(page, r"Operations per dot product: 256 at 128 numbers")).to_be_visible()
    type_into(page, "vector b", "1, 2, 0")
    expect(says(page, r"verdict: perpendicular")).to_be_visible()


def test_overflow_default_then_the_float16_trap_then_the_fix(open_page):
    page = open_page(LIVE + "/overflow")
    for weight in ("66%", "24%", "10%"):
        expect(shown(page, weight)).to_be_visible()
    expect(button(page, "float16")).to_be_visible()
    type_into(page, "scores", "12, 1, 0.1")
    expect(says(page, r"The row is garbage")).to_be_visible()
    expect(shown(page, "inf")).to_be_visible()
    expect(shown(page, "nan")).to_be_visible()
    button(page, "subtract the max").click()
    expect(says(page, r"nothing can overflow")).to_be_visible()
    expect(page.get_by_text(re.compile("The row is garbage"))).to_have_count(0)
    expect(shown(page, "100%")).to_be_visible()
    expect(page.get_by_text("nan", exact=True)).to_have_count(0)


def test_online_softmax_to_the_end_equals_the_full_row(open_page):
    page = open_page(LIVE + "/online-softmax")
    next_block = button(page, "Next block")
    next_block.click()
    expect(says(page, r"Block 1 of 2")).to_be_visible()
    next_block.click()
    expect(says(page, r"All 4 scores read")).to_be_visible()
    end = says(page, r"All 4 scores read")
    expect(end).to_contain_text(re.compile(r"Running sum\s*1\.553"))
    expect(end).to_contain_text(re.compile(r"Σ e\^\(score − 3\):\s*1\.553"))
    expect(end).to_contain_text(re.compile(r"They are (exactly equal|equal up to float rounding)"))
    expect(next_block).to_be_disabled()


def test_decode_bill_is_memory_bound(open_page):
    page = open_page("/decode-bill")
    expect(says(page, r"^4,194,304$")).to_be_attached()  # dot products, folded in the count
    expect(says(page, r"≈\s*4\.0 FLOP/byte")).to_be_visible()
    expect(says(page, r"≈\s*295 FLOP/byte")).to_be_visible()  # the H100's ridge point
    expect(says(page, r"Memory-bound")).to_be_visible()


def test_memory_bill_crossover_32_users_and_prefill_scratch(open_page):
    page = open_page(LIVE + "/memory-bill")
    expect(says(page, r"≈ 120 thousand")).to_be_visible()  # one user's cache = the weights
    expect(says(page, r"^4\.3 GB")).to_be_visible()  # an 8,192-token prompt's scores, per layer
    type_into(page, r"^users", "32")
    expect(says(page, r"For 32 users at 4,096 tokens each:\s*17\.2 GB")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]users=32"))


# --- every route: a deep link is honoured, a bad value noted ------------------------------

DEEP_LINKS = [  # route?query, what the honoured part shows, the visible note on the bad part
    ("/agreement?b=1,2,0&d=99999", r"verdict: perpendicular",
     r"d=99999 is out of range; using 4096"),
    ("/overflow?scores=12,1,0.1&subtract_max=maybe", r"The row is garbage",
     r"subtract_max='maybe' is not on/off; ignored"),
    ("/online-softmax?block=4&step=99", r"All 4 scores read",
     r"step=99 is out of range; using 16"),
    ("/decode-bill?users=64&context=99999999", r"For all 64 users",
     r"context=99999999 is out of range; using 1048576"),
    ("/memory-bill?users=32&dtype=fp4", r"For 32 users at 4,096 tokens each",
     r"dtype='fp4' is not one of"),
    ("/cost?model=gpt2&prompt=999999999", r"Counting\s+GPT-2",
     r"prompt=999999999 is out of range; using 131072"),
    ("/sqrt-dk?keys=8&d_k=0", r"effective keys of 8", r"d_k=0 is out of range; using 1"),
]


@pytest.mark.parametrize("link, honoured, note", DEEP_LINKS,
                         ids=[link.split("?")[0] for link, _, _ in DEEP_LINKS])
def test_deep_link_is_honoured_and_a_bad_value_is_noted(open_page, link, honoured, note):
    page = open_page(LIVE + link)
    expect(says(page, honoured)).to_be_visible()
    expect(says(page, note)).to_be_visible()
    assert "error" not in page.title().lower()
