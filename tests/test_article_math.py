"""The second chapter at "/math" without a browser: it builds with the first chapter's
chrome, its URL keys never clash, every figure its prose quotes is one attention_core
computes, what its "try it" paragraphs promise is what the panels do, and its sentences
are its own."""

import math
import re
from pathlib import Path

import numpy as np
import panel as pn
import pytest

from app.chapters import content, live_chapter, page_model
from app.hosting import server
from app.kit import registry, url_state
from app.panels.agreement import AgreementPanel
from app.panels.decode_bill import DecodeBillPanel
from app.panels.memory_bill import MemoryBillPanel
from app.panels.online_softmax import OnlineSoftmaxPanel
from app.panels.overflow import OverflowPanel
from attention_core import claims, costs, numerics
from tests.prose_check import ProseCheck, assert_quoted

MATH = page_model.at("/math")  # the second's

ROOT = Path(__file__).resolve().parents[1]
SEED = "dot-products-softmax-attention-math.txt"
LLAMA = costs.preset("llama-3-8b")
QWEN = costs.preset("qwen3-8b")


def prose_text():  # every markdown block of the chapter, joined, whitespace collapsed
    blocks = [item for item in MATH.sections if isinstance(item, str)]
    return re.sub(r"\s+", " ", "\n".join(blocks))


def slots(sections):
    return [item.slot for item in sections if isinstance(item, content.PanelMarker)]


# --- the page ---------------------------------------------------------------------------

def test_page_builds_with_the_first_chapters_chrome():
    page = live_chapter.page("/math")
    assert page.title == MATH.title == "Dot products, softmax and attention math"
    made = server.routes()["/math"]
    assert made.func is live_chapter.page and made.args == ("/math",)
    top = page.html()[:page.html().index("<main")]  # the header: native, before the session
    assert re.findall(r'data-ae-switch-theme="(\w+)">(\w+ theme)<', top) == [("dark", "Dark theme")]
    assert '<main class="ae-article" id="main">' in page.html()  # the same column as "/"


def test_the_panels_follow_the_lessons_order():
    # the registry's records of this chapter, in table order, are its markers' order
    records = [r for r in registry.PANELS if r.chapter == registry.chapter_at("/math").content]
    assert slots(MATH.sections) == list(MATH.panels) == [r.slot for r in records]
    built = live_chapter.build_panels(MATH.panels)
    assert [type(viewer) for viewer in built.values()] == [r.viewer_class for r in records]


def test_each_panel_follows_the_prose_or_the_figure_it_explores():
    # a panel is for exploring: it comes after the text and the figure that carry its idea
    sections = MATH.sections
    for i, item in enumerate(sections):
        if isinstance(item, content.PanelMarker):
            before = sections[i - 1]
            assert isinstance(before, str | content.FigureMarker | content.Question), item.slot


def test_url_plan_prefixes_the_names_two_panels_share():
    plan = url_state.chapter_plan(MATH.panels, MATH.follows)
    keys = [key for carried in plan.values() for key in carried]
    assert len(keys) == len(set(keys)) and not set(keys) & url_state.PAGE_KEYS
    assert plan["decode"] == {"model": "model", "context": "context", "users": "users",
                              "gpu": "gpu"}
    assert plan["memory"] == {"memory_model": "model", "memory_users": "users",
                              "memory_context": "context", "prompt": "prompt", "dtype": "dtype"}
    assert plan["online"] == {"online_scores": "scores", "block": "block", "step": "step"}
    built = live_chapter.build_panels(MATH.panels)
    assert url_state.url_plan(built, MATH.follows) == plan
    for slot, carried in plan.items():
        assert set(carried.values()) <= set(built[slot].param)


def query(monkeypatch, args):
    monkeypatch.setattr(type(pn.state), "session_args",
                        property(lambda self: {k: [v.encode()] for k, v in args.items()}))


def test_deep_link_reaches_the_right_panel_and_clamps_with_a_note(monkeypatch):
    query(monkeypatch, {"users": "64", "memory_users": "5000", "online_scores": "2, 1, 3, 0",
                        "step": "2", "precision": "float32"})
    shelf = live_chapter.Shelf(MATH.panels)
    page = live_chapter.page("/math", defer=False, shelf=shelf)
    decode, memory = shelf.built["decode"], shelf.built["memory"]
    assert (decode.users, memory.users) == (64, memory.param["users"].bounds[1])
    assert shelf.built["online"].step == 2 and shelf.built["overflow"].precision == "float32"
    repairs = [str(p.object) for p in page.select(pn.pane.HTML) if "memory_users=5000" in
               str(p.object)]
    assert repairs and "out of range" in repairs[0]


def test_the_chapters_link_to_each_other():
    page = live_chapter.page("/math", defer=False)
    text = page.html()
    first = page_model.at("/").title  # the back link names the first chapter by its title
    assert f'<a class="ae-back-link" href="./">← {first}</a>' in text
    assert '<a class="ae-chapter-link" href="./">' in text


def test_links_keep_the_dark_theme(monkeypatch):
    monkeypatch.setattr(live_chapter.chrome, "theme", lambda: "dark")
    assert live_chapter.chapter_href("math") == "math?theme=dark"
    assert live_chapter.chapter_href("./") == "./?theme=dark"


def test_deferred_chapter_fills_every_placeholder(monkeypatch):
    later = live_chapter.Later()
    later.start = lambda: None
    monkeypatch.setattr(live_chapter, "Later", lambda: later)
    shelf = live_chapter.Shelf(MATH.panels)
    page = live_chapter.page("/math", shelf=shelf)
    assert shelf.built == {} and len(later.pending) == len(MATH.panels)
    later.fill()
    assert list(shelf.built) == list(MATH.panels)
    assert all(viewer.__panel__() in page.root(f"panel-{slot}").objects
               for slot, viewer in shelf.built.items())


# --- the figures the prose quotes -------------------------------------------------------

# figure as the chapter writes it -> the claims-ledger row (by its `what`) that computes it
QUOTED = {
    "6 − 4 + 1 = 3": "(2, −1, 0.5) · (3, 4, 2)",
    "256 operations per dot product": "operations per 128-number dot product",
    "±11": "d = 128: spread of raw scores (mean of draws)",
    "about ±1": "d = 128: spread after dividing by √128",
    "√128 ≈ 11.3": "√128",
    "66%": "softmax(2, 1, 0.1): first weight",
    "24%": "softmax(2, 1, 0.1): second weight",
    "10%": "softmax(2, 1, 0.1): third weight",
    "7.39": "e² (no max subtracted)",
    "about 11.2": "e² + e¹ + e^0.1",
    "65,504": "largest float16",
    "162,755": "e¹²",
    "4,194,304": "Llama-3-8B, 4,096 context: dot products per decoded token",
    "2.1 billion": "Llama-3-8B: attention operations per decoded token",
    "1.07 billion": "… of which the scores",
    "15 billion operations per token": "Llama-3-8B: weight operations per token",
    "about 12%": "Llama-3-8B, 4,096: attention share of a decode step",
    "= 4,096 bytes": "Llama-3-8B KV bytes per token per layer (bf16)",
    "over 32 layers 131,072 bytes": "Llama-3-8B KV bytes per token (bf16)",
    "0.54 GB": "Llama-3-8B keys and values at 4,096 tokens",
    "about 4 operations per byte": "decode attention arithmetic intensity (FLOP/byte)",
    "≈ 295": "H100 SXM ridge point (FLOP/byte)",
    "16 GB": "Llama-3-8B weights in bf16",
    "about 120,000 tokens": "one user's cache outweighs the weights at (tokens)",
    "about 17 GB": "32 users at 4k tokens: keys and values",
    "67 million scores": "8,192-token prompt: scores per head",
    "4.3 GB": "8,192-token prompt: score scratch per layer (32 heads, 2 B)",
    "about 1.55": "blocks [2, 1] then [3, 0]: running sum",
    "the same as a single pass over the whole row": "… equal to the full-row sum",
}


@pytest.fixture(scope="module")
def ledger():
    return {c.what: c for c in claims.all_claims()}


@pytest.mark.parametrize("figure", sorted(QUOTED))
def test_each_quoted_figure_is_in_the_prose_and_agrees_with_the_ledger(figure, ledger):
    assert_quoted(figure, prose_text(), ledger[QUOTED[figure]], "the chapter")


def test_figures_beyond_the_ledger_are_computed_too():
    text = prose_text()
    kv32 = costs.kv_cache_bytes(LLAMA, 4096, users=32)
    with np.errstate(over="ignore"):  # the overflow is what is checked
        rounds_to_inf = np.isinf(np.float16(65520.0)) and np.float16(65519.0) == 65504
    checks = {  # figure as written -> is it what attention_core (or plain arithmetic) gives?
        "122,532": f"{math.floor(costs.kv_outweighs_weights_context(LLAMA)):,}",
        "88.72": f"{math.log(float(numerics.largest_finite('float32'))):.2f}",
        "11.09": f"{math.log(float(numerics.largest_finite('float16'))):.2f}",
        "8.03 billion": f"{costs.total_params(LLAMA) / 1e9:.2f} billion",
        "about 7.5 billion": f"about {costs.matmul_params(LLAMA) / 1e9:.1f} billion",
        "128,256 × 4,096, about 0.53 billion": (
            f"{LLAMA.vocab:,} × {LLAMA.hidden:,}, about {LLAMA.vocab * LLAMA.hidden / 1e9:.2f}"
            " billion"),
        "32 layers of 32 query heads": f"{LLAMA.layers} layers of {LLAMA.heads} query heads",
        "just 8 key/value heads, so each key/value head serves four query heads": (
            f"just {LLAMA.kv_heads} key/value heads, so each key/value head serves "
            f"{['', '', 'two', 'three', 'four'][LLAMA.heads // LLAMA.kv_heads]} query heads"),
        "989 TFLOP/s ÷ 3.35 TB/s": (f"{costs.GPUS['h100-sxm'].peak_flops / 1e12:.0f} TFLOP/s ÷ "
                                    f"{costs.GPUS['h100-sxm'].bandwidth / 1e12:.2f} TB/s"),
        "≈ 1.368": f"≈ {math.exp(0) + math.exp(-1):.3f}",
        "1.553": f"{1.368 * math.exp(-1) + math.exp(0) + math.exp(-3):.3f}",
        "0, −1 and −1.9": "0, −1 and −1.9" if math.isclose(0.1 - 2, -1.9) else "?",
        "about a million operations": ("about a million operations"
                                       if round(4096 * 256 / 1e6) == 1 else "?"),
        "it reads at most 8,192 tokens, where its cache is 1.07 GB": (
            f"it reads at most {LLAMA.max_positions:,} tokens, where its cache is "
            f"{costs.kv_cache_bytes(LLAMA, LLAMA.max_positions) / 1e9:.2f} GB"),
        "of which it looks up one row per token: about 15 GB a step": (
            "of which it looks up one row per token: about "
            f"{(costs.weight_bytes(LLAMA) - 2 * LLAMA.vocab * LLAMA.hidden) / 1e9:.0f} GB a step"),
        "float16 rounds a result past about 65,520 to infinity": (
            "float16 rounds a result past about 65,520 to infinity" if rounds_to_inf else "?"),
        "a row of 4,096 scores of 2.8 is enough": (
            "a row of 4,096 scores of 2.8 is enough"
            if (math.isinf(numerics.softmax_steps([2.8] * 4096, "float16", False).total)
                and not numerics.softmax_steps([2.8], "float16", False).overflowed) else "?"),
        "(17.2 GB against 16.1 GB, about 7% more)": (
            f"({kv32 / 1e9:.1f} GB against {costs.weight_bytes(LLAMA) / 1e9:.1f} GB, about "
            f"{kv32 / costs.weight_bytes(LLAMA) - 1:.0%} more)"),
        # one model carries the chapter; its layers are the first chapter's Qwen3-8B's
        ("(4,096 wide, 32 query heads of 128, sharing 8 heads of keys and values), with 32 "
         "layers to Qwen3-8B's 36 and wider feed-forward layers"): (
            f"({LLAMA.hidden:,} wide, {LLAMA.heads} query heads of {LLAMA.head_dim}, sharing "
            f"{LLAMA.kv_heads} heads of keys and values), with {LLAMA.layers} layers to "
            f"Qwen3-8B's {QWEN.layers} and wider feed-forward layers"
            if LLAMA.intermediate > QWEN.intermediate and all(getattr(LLAMA, f) == getattr(QWEN, f)
                   for f in ("hidden", "heads", "head_dim", "kv_heads")) else "?"),
        ("serves four query heads at one multiply-add (2 operations) each, 8 operations per 2 "
         "bytes"): (
            f"serves {['', '', 'two', 'three', 'four'][LLAMA.heads // LLAMA.kv_heads]} query heads "
            "at one multiply-add (2 operations) each, "
            f"{2 * LLAMA.heads // LLAMA.kv_heads} operations per 2 bytes"),
    }
    for written, computed in checks.items():
        assert written in text, f"the chapter no longer says {written!r}"
        assert written == computed, f"{written!r}: computed {computed!r}"
    # "serves four query heads ... 8 operations per 2 bytes": the intensity is the grouping
    assert costs.decode_arithmetic_intensity(LLAMA, 4096) == LLAMA.heads // LLAMA.kv_heads
    # "every ridge point lies in the hundreds"
    assert all(100 <= gpu.ridge_point < 1000 for gpu in costs.GPUS.values())


# --- what the "try it" paragraphs promise -------------------------------------------------

def test_agreement_try_it():
    p = AgreementPanel(b="1, 2, 0")
    n = p.numbers()
    assert (n.score, n.verdict) == (0.0, "perpendicular")
    p.b = "-3, -4, -2"
    n = p.numbers()
    assert (n.score, n.verdict) == (-3.0, "leaning apart")  # 104.1°, not opposed
    assert round(AgreementPanel(d=4).numbers().effective_raw) == 4  # "about four keys"
    for d in (128, 4096):
        n = AgreementPanel(d=d).numbers()
        assert n.effective_raw < 1.01 and n.effective_scaled > 4  # picks / keeps spreading


def test_overflow_try_it():
    p = OverflowPanel()
    assert p.precision == "float16" and p.scores == "2, 1, 0.1" and not p.subtract_max
    p.scores = "12, 1, 0.1"
    steps = p.numbers().steps
    assert steps.garbage and steps.overflowed
    p.subtract_max = True
    assert not p.numbers().steps.garbage
    p.param.update(subtract_max=False, precision="float32")
    assert not p.numbers().steps.garbage


def test_decode_bill_try_it():
    p = DecodeBillPanel()
    assert (p.model, p.context, p.users, p.gpu) == ("llama-3-8b", 4096, 1, "h100-sxm")
    one = p.numbers()
    p.users = 64
    many = p.numbers()
    assert round(one["intensity"]) == round(many["intensity"]) == 4
    assert many["weights_intensity"] > 32 * one["weights_intensity"]


def test_memory_bill_try_it():
    p = MemoryBillPanel(users=32)
    n = p.numbers()
    assert n["kv_all"] > n["weights"] and round(n["kv_all"] / 1e9) == 17
    assert round(n["eager"] / 1e9, 1) == 4.3 and n["prompt"] == 8192


def test_online_softmax_try_it():
    p = OnlineSoftmaxPanel()
    assert (p.scores, p.block, p.step) == ("2, 1, 3, 0", 2, 0)
    p.step = 2
    r = p.numbers().result
    assert f"{r.running_sum:.3f}" == "1.553" and math.isclose(r.running_sum, r.full_sum)
    for block in (1, 4):
        p.block = block
        assert np.isclose(p.numbers().result.running_sum, r.running_sum)


# --- our own words ----------------------------------------------------------------------

# names the chapter must use as they are: a paper's title, control labels
NAMES = ["attention is all you need", "subtract the max"]
PROSE = ProseCheck(SEED, NAMES, min_words=500)
(test_the_prose_is_in_our_own_words, test_the_fingerprint_is_of_a_whole_document,
 test_the_fingerprint_matches_the_lesson_where_it_is_present) = PROSE.tests(prose_text)
