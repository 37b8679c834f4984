"""The article without a browser: it builds, its URL keys never clash, the figures its prose
quotes are the ones attention_core computes, and its sentences are its own."""

import re
from pathlib import Path

import panel as pn
import param
import pytest

from app import article, chrome, server
from attention_core import claims

ROOT = Path(__file__).resolve().parents[1]
SEED = "scaled-dot-product-attention.txt"


def prose_text():  # every markdown block of the article, joined
    return "\n".join(item for item in article.SECTIONS if isinstance(item, str))


def test_page_builds_with_title_and_theme_button():
    page = article.page()
    assert page.name == article.TITLE == server.TITLE == "Scaled dot-product attention, worked"
    buttons = page.select(pn.widgets.Button)
    assert [b.label for b in buttons if b.label in ("Dark theme", "Light theme")] == ["Dark theme"]


def test_every_panel_slot_in_the_prose_is_built():
    slots = [item[1] for item in article.SECTIONS if isinstance(item, tuple)
             and item[0] == "panel"]
    panels = article.build_panels()
    assert slots == list(panels), "each panel appears once, in page order"


def test_ladder_follows_the_articles_head():
    panels = article.build_panels()
    head, ladder = panels["head"], panels["ladder"]
    assert ladder.head is head
    head.param.update(length=8, phase="decode")
    assert (ladder.length, ladder.phase) == (8, "decode")


def test_url_plan_gives_every_key_to_exactly_one_panel():
    panels = article.build_panels()
    plan = article.url_plan(panels)
    keys = [key for carried in plan.values() for key in carried]
    assert len(keys) == len(set(keys))
    assert not set(keys) & article.PAGE_KEYS
    # the ladder follows the head here, so only the head carries length and phase
    assert {"length", "phase"} <= set(plan["head"].values())
    assert not {"length", "phase"} & set(plan["ladder"].values())
    for slot, carried in plan.items():  # every key names a real parameter of its panel
        assert set(carried.values()) <= set(panels[slot].param)


class Fake(param.Parameterized):
    length = param.Integer(default=3, bounds=(1, 9))
    url_keys = ("length",)


def test_url_plan_renames_a_clash_instead_of_sharing_a_key():
    plan = article.url_plan({"a": Fake(), "b": Fake()})
    assert plan == {"a": {"length": "length"}, "b": {"b_length": "length"}}


def test_with_url_state_restores_under_a_renamed_key(monkeypatch):
    monkeypatch.setattr(type(pn.state), "session_args",
                        property(lambda self: {"b_length": [b"99"], "length": [b"2"]}))
    viewer = Fake()
    notes = chrome.with_url_state(viewer, {"b_length": "length"})
    assert viewer.length == 9
    assert notes.visible and "b_length=99 is out of range; using 9" in notes.object


def test_page_restores_the_head_from_the_query(monkeypatch):
    monkeypatch.setattr(type(pn.state), "session_args",
                        property(lambda self: {"mask": [b"off"], "query": [b"2"]}))
    built = {}
    real = article.build_panels
    monkeypatch.setattr(article, "build_panels", lambda: built.setdefault("p", real()))
    article.page()
    head = built["p"]["head"]
    assert (head.mask, head.query) == (False, 2)
    assert "0.23" in head.arithmetic_html(head.numbers())


# figure as the article writes it -> the claims-ledger row (by its `what`) that computes it
QUOTED = {
    "0.77": "row 2 (sat), mask on: weight on cat",
    "0.07": "row 2, mask on: weight on the",
    "0.23": "row 2, mask off: weight on mat",
    "0.97": "row 2, divisor off: weight on cat",
    "1.98": "row 2, mask on: effective tokens attended",
    "1.17": "row 2, divisor off: effective tokens attended",
    "28 of the 64": "length 8, mask on: pairs computed then discarded",
    "9, 16, 25, 36, 49, 64": "prefill ladder, lengths 3..8",
    "3, 4,\n5, 6, 7, 8": "decode ladder, lengths 3..8",
    "√5 ≈ 2.24": "√5, the divisor of a d_k = 5 head",
    "7.4%": "Qwen3-8B, 4,096 prompt: attention share of prefill",
    "39%": "Qwen3-8B, 32,768 prompt: attention share of prefill",
    "72%": "Qwen3-8B, 131,072 prompt: attention share of prefill",
    "51,324": "Qwen3-8B crossover, triangular kernel (tokens)",
    "25,662": "Qwen3-8B crossover, naive kernel (tokens)",
    "13,404": "GPT-2 small crossover, triangular (tokens)",
    "3.8 times": "Qwen3-8B / GPT-2 crossover",
    "7.1%": "GPT-2 at its 1,024 maximum: attention share of prefill",
    "0.50%": "Qwen3-8B, 256 prompt: attention share of prefill",
    "0.99%": "Qwen3-8B, context 256: attention share of a decode step",
    "589,824": "Qwen3-8B: FLOPs per (query, key) pair",
    "1 GiB per layer": "eager score matrix, 4,096 tokens, 32 heads, bf16 (GiB per layer)",
    "±34": "d_k = 128: three standard deviations of unscaled scores",
    "10<sup>29</sup>": "e^68 ≈ 10^x: x (whole part)",
    "6.68": "d_k = 4: unscaled effective keys (mean of 2000 draws)",
    "2.84": "d_k = 16: unscaled effective keys (mean of 2000 draws)",
    "1.44": "d_k = 128: unscaled effective keys (mean of 2000 draws)",
    "1.19": "d_k = 512: unscaled effective keys (mean of 2000 draws)",
    "11.19": "d_k = 4: scaled effective keys (mean of 2000 draws)",
    "10.96": "d_k = 16: scaled effective keys (mean of 2000 draws)",
    "10.71": "d_k = 128: scaled effective keys (mean of 2000 draws)",
    "10.76": "d_k = 512: scaled effective keys (mean of 2000 draws)",
    "1.82": "d_k = 4: measured spread of 16 scores (mean of draws)",
    "10.72": "d_k = 128: measured spread of 16 scores (mean of draws)",
    "21.48": "d_k = 512: measured spread of 16 scores (mean of draws)",
    "11.31": "√128",
    "22.63": "√512",
}


@pytest.fixture(scope="module")
def ledger():
    rows = claims.head_claims() + claims.sqrt_dk_claims() + claims.cost_claims()
    return {c.what: c for c in rows}


@pytest.mark.parametrize("figure", sorted(QUOTED))
def test_each_quoted_figure_is_in_the_prose_and_agrees_with_the_ledger(figure, ledger):
    assert figure in prose_text(), f"the article no longer quotes {figure!r}"
    claim = ledger[QUOTED[figure]]
    assert claim.ok, f"{figure}: attention_core computes {claim.shown}, not {claim.document}"


def seed_path():  # the lesson the article retells; it lives beside the repo, not in it
    for base in (ROOT / "shared", ROOT.parent / "shared", ROOT):
        path = base / "seeds" / SEED
        if path.is_file():
            return path
    return None


def words(text):  # lower-case words, markup and numbers dropped
    text = re.sub(r"<[^>]+>", " ", text)
    return re.findall(r"[a-z']+", text.lower())


# names the article must use as they are: the formula, APIs, config fields, control labels
NAMES = ["attention q k v softmax q k t d k v", "torch nn functional scaled dot product attention",
         "num hidden layers num attention heads head dim", "attn mask and is causal true",
         "turn the causal mask off", "checking it on a real system"]
SHINGLE = 7


def shingles(text):  # -> every run of SHINGLE words that is not part of a name
    joined = " ".join(words(text))
    for i, name in enumerate(NAMES):
        joined = joined.replace(name, f" | {i} | ")
    out = set()
    for part in joined.split("|"):
        ws = [w for w in part.split() if not w.isdigit()]
        out |= {" ".join(ws[i:i + SHINGLE]) for i in range(len(ws) - SHINGLE + 1)}
    return out


def test_the_prose_is_in_our_own_words():
    path = seed_path()
    if path is None:
        pytest.fail(f"seeds/{SEED} is not beside this checkout (CI lays shared/ beside it)")
    copied = shingles(prose_text()) & shingles(path.read_text(encoding="utf-8"))
    assert not copied, f"runs of {SHINGLE} words copied from the lesson: {sorted(copied)}"
