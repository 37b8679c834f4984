"""The article without a browser: it builds, its URL keys never clash, the figures its prose
quotes are the ones attention_core computes, and its sentences are its own."""

import dataclasses
import re
from pathlib import Path

import panel as pn
import param
import pytest

from app.chapters import content, live_chapter, page_model
from app.hosting import server
from app.kit import url_state
from attention_core import claims, costs, sqrt_dk
from tests.prose_check import ProseCheck, assert_quoted

ARTICLE = page_model.at("/")  # the first chapter's page model

ROOT = Path(__file__).resolve().parents[1]
SEED = "scaled-dot-product-attention.txt"


def prose_text():  # every markdown block of the article, joined
    return "\n".join(item for item in ARTICLE.sections if isinstance(item, str))


def test_page_builds_with_title_and_theme_link():
    page = live_chapter.page("/")
    assert page.title == ARTICLE.title == server.TITLE == "Scaled dot-product attention, worked"
    top = page.html()[:page.html().index("<main")]  # the header: native, before the session
    assert re.findall(r'data-ae-switch-theme="(\w+)">(\w+ theme)<', top) == [("dark", "Dark theme")]


def test_every_panel_slot_in_the_prose_is_built():
    slots = [item.slot for item in ARTICLE.sections if isinstance(item, content.PanelMarker)]
    panels = live_chapter.build_panels(ARTICLE.panels)
    assert slots == list(panels) == list(ARTICLE.panels), "each panel appears once, in order"
    for slot, (cls, _) in ARTICLE.panels.items():
        assert isinstance(panels[slot], cls)


def test_the_kernel_lab_replaces_the_placeholder():
    assert not [item for item in ARTICLE.sections if isinstance(item, content.Placeholder)]
    assert "lab" in ARTICLE.panels
    text = prose_text()
    for point in ("you are really running", "triangular mask",
                  "SDPBackend.MATH", 'attn_implementation="eager"'):
        assert point in text, f"the prose around the lab no longer covers {point!r}"


def test_ladder_follows_the_articles_head():
    panels = live_chapter.build_panels(ARTICLE.panels)
    head, ladder = panels["head"], panels["ladder"]
    assert ladder.head is head
    head.param.update(length=8, phase="decode")
    assert (ladder.length, ladder.phase) == (8, "decode")


def test_a_follower_built_first_still_gets_its_leader():
    shelf = live_chapter.Shelf(ARTICLE.panels)
    ladder = shelf("ladder")
    assert ladder.head is shelf("head") and list(shelf.built) == ["head", "ladder"]


def test_url_plan_gives_every_key_to_exactly_one_panel():
    panels = live_chapter.build_panels(ARTICLE.panels)
    plan = url_state.url_plan(panels, ARTICLE.follows)
    keys = [key for carried in plan.values() for key in carried]
    assert len(keys) == len(set(keys))
    assert not set(keys) & url_state.PAGE_KEYS
    # the ladder follows the head here, so only the head carries length and phase
    assert {"length", "phase"} <= set(plan["head"].values())
    assert not {"length", "phase"} & set(plan["ladder"].values())
    for slot, carried in plan.items():  # every key names a real parameter of its panel
        assert set(carried.values()) <= set(panels[slot].param)
    # the lab's prompt length would clash with the head's sequence length
    assert plan["lab"]["lab_length"] == "length"
    # the plan made from the classes, before anything is built, is the same plan
    assert url_state.chapter_plan(ARTICLE.panels, ARTICLE.follows) == plan


class Fake(param.Parameterized):
    length = param.Integer(default=3, bounds=(1, 9))
    url_keys = ("length",)


def test_url_plan_renames_a_clash_instead_of_sharing_a_key():
    plan = url_state.url_plan({"a": Fake(), "b": Fake()}, {})
    assert plan == {"a": {"length": "length"}, "b": {"b_length": "length"}}


def test_with_url_state_restores_under_a_renamed_key(monkeypatch):
    monkeypatch.setattr(type(pn.state), "session_args",
                        property(lambda self: {"b_length": [b"99"], "length": [b"2"]}))
    viewer = Fake()
    repairs = url_state.with_url_state(viewer, {"b_length": "length"})
    assert viewer.length == 9
    assert repairs.visible and "b_length=99 is out of range; using 9" in repairs.object


def query(monkeypatch, args):  # pretend the page was opened with this query string
    monkeypatch.setattr(type(pn.state), "session_args",
                        property(lambda self: {k: [v.encode()] for k, v in args.items()}))


def test_page_restores_the_head_from_the_query(monkeypatch):
    query(monkeypatch, {"mask": "off", "query": "2"})
    shelf = live_chapter.Shelf(ARTICLE.panels)
    live_chapter.page("/", defer=False, shelf=shelf)
    head = shelf.built["head"]
    assert (head.mask, head.query) == (False, 2)
    nums = head.numbers()  # row 2 (sat) now reaches mat, three tokens ahead
    assert round(float(nums.result.weights[nums.row, 5]), 2) == 0.23


def deferred(monkeypatch, route="/"):  # -> (page, shelf, later): built, never filled
    later = live_chapter.Later()
    later.start = lambda: None  # no browser to say "ready"
    monkeypatch.setattr(live_chapter, "Later", lambda: later)
    shelf = live_chapter.Shelf(page_model.at(route).panels)
    return live_chapter.page(route, shelf=shelf), shelf, later


def test_deferred_page_builds_nothing_until_it_is_filled(monkeypatch):
    query(monkeypatch, {"mask": "off", "lab_length": "999999", "length": "7"})
    page, shelf, later = deferred(monkeypatch)
    assert shelf.built == {}, "no panel is built while the page is being sent"
    holders = [holder for holder, _ in later.pending]
    assert len(holders) == len(ARTICLE.panels)
    assert all(h.loading and h in page.objects and not h.objects for h in holders)
    later.fill()
    assert set(shelf.built) == set(ARTICLE.panels)  # a follower above builds its leader first
    for holder, slot in zip(holders, ARTICLE.panels):  # each box, its panel
        viewer = shelf.built[slot]
        assert not holder.loading and viewer.__panel__() in holder.objects, slot
    head, lab = shelf.built["head"], shelf.built["lab"]
    assert (head.mask, head.length) == (False, 7)  # a deep link lands on deferred panels
    assert lab.length == lab.param["length"].bounds[1]
    repairs = [n.object for n in page.select(pn.pane.HTML) if "lab_length=999999" in str(n.object)]
    assert repairs and "out of range" in repairs[0]


def test_deferred_panels_land_where_an_eager_page_puts_them(monkeypatch):
    page, shelf, later = deferred(monkeypatch)
    later.fill()
    eager = live_chapter.page("/", defer=False)
    assert [r.name for r in page.roots] == [r.name for r in eager.roots]
    for slot, viewer in shelf.built.items():  # each viewer sits right in its root's column
        box, eager_box = page.root(f"panel-{slot}"), eager.root(f"panel-{slot}")
        assert viewer.__panel__() in box.objects, slot
        assert [type(o) for o in box.objects] == [type(o) for o in eager_box.objects], slot


def test_a_panel_that_fails_to_build_leaves_the_others(monkeypatch):
    def broken(get):
        raise RuntimeError("boom")

    panels = dict(ARTICLE.panels, cost=ARTICLE.panels["cost"]._replace(build=broken))
    shelf = live_chapter.Shelf(panels)
    model = dataclasses.replace(ARTICLE, panels=panels)
    page = live_chapter.render(model, defer=False, shelf=shelf)
    assert any("could not be loaded" in str(p.object) for p in page.select(pn.pane.HTML))
    assert set(shelf.built) == set(panels) - {"cost"}


def test_the_first_chapter_ends_with_a_link_to_the_second():
    links = [item for item in ARTICLE.sections if isinstance(item, content.ChapterLink)]
    assert links == [content.ChapterLink("Every figure the sources quote, checked on one page →",
                                         "numbers"),
                     content.ChapterLink("Next: dot products, softmax and attention math →",
                                         "math")]
    assert ARTICLE.sections[-1] == links[-1]  # the last thing on the page
    page = live_chapter.page("/", defer=False)
    assert page.html().count("ae-chapter-link") == 2
    assert ('<p><a class="ae-chapter-link" href="math">'
            "Next: dot products, softmax and attention math →</a></p>") in page.html()


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
    "±34": "d_k = 128: three standard deviations of unscaled scores",
    "10<sup>29</sup>": "e^68 ≈ 10^x: x (whole part)",
    "11.31": "√128",
    "22.63": "√512",
}


@pytest.fixture(scope="module")
def ledger():
    rows = claims.head_claims() + claims.sqrt_dk_claims() + claims.cost_claims()
    return {c.what: c for c in rows}


@pytest.mark.parametrize("figure", sorted(QUOTED))
def test_each_quoted_figure_is_in_the_prose_and_agrees_with_the_ledger(figure, ledger):
    assert_quoted(figure, prose_text(), ledger[QUOTED[figure]], "the article")


def test_figures_beyond_the_ledger_are_computed_too():
    text = " ".join(prose_text().split())
    qwen = costs.preset("qwen3-8b")
    prompt, generated = 256, 4096
    last = prompt + generated - 1  # the context of the last decode step
    attention = sum(float(costs.attention_flops_decode(qwen, prompt + i)) for i in range(generated))
    whole = attention / (attention + generated * costs.other_flops_decode(qwen))
    prefill = float(costs.attention_flops_prefill(qwen, prompt) + costs.other_flops_prefill(
        qwen, prompt))
    decode = attention + generated * float(costs.other_flops_decode(qwen))
    llama = costs.preset("llama-3-8b")
    sweep = sqrt_dk.expectation((4, 16, 128, 512), draws=2000)

    checks = {  # figure as written -> what attention_core gives
        "0.99% of the first decode step, whose context is 256 tokens": (
            f"{costs.decode_attention_share(qwen, prompt):.2%} of the first decode step, whose "
            f"context is {prompt} tokens"),
        "By the last step (context 4,351) attention's share has grown to 14.5%": (
            f"By the last step (context {last:,}) attention's share has grown to "
            f"{costs.decode_attention_share(qwen, last):.1%}"),
        "over the whole response it is about 8% of the decode arithmetic": (
            f"over the whole response it is about {whole:.0%} of the decode arithmetic"),
        "past the 40,960 positions of Qwen3-8B's": f"past the {qwen.max_positions:,} positions "
                                                   "of Qwen3-8B's",
        "4 × 36 × 32 × 128 = 589,824": (f"4 × {qwen.layers} × {qwen.heads} × {qwen.head_dim} = "
                                        f"{costs.pair_flops(qwen):,}"),
        "The decode steps together do about 17 times the prefill's": (
            f"The decode steps together do about {decode / prefill:.0f} times the prefill's"),
        "Llama-3-8B's crossover, 57,256 tokens, lies far past its 8,192 positions": (
            f"Llama-3-8B's crossover, {costs.crossover_tokens(llama):,.0f} tokens, lies far past "
            f"its {llama.max_positions:,} positions"),
        "that is 1.07 GB per layer": (
            f"that is {costs.eager_score_matrix_bytes(qwen, 4096) / 1e9:.2f} GB per layer"),
        "and 38.7 GB if all of Qwen3-8B's 36 layers return theirs": (
            f"and {costs.eager_score_matrix_bytes(qwen, 4096) * qwen.layers / 1e9:.1f} GB if all "
            f"of Qwen3-8B's {qwen.layers} layers return theirs"),
        # the block: Qwen3-8B's heads, width, MLP, depth and vocabulary
        "32 query heads of d<sub>k</sub> = 128, and 32 × 128 = 4,096, its hidden size": (
            f"{qwen.heads} query heads of d<sub>k</sub> = {qwen.head_dim}, and {qwen.heads} × "
            f"{qwen.head_dim} = {qwen.heads * qwen.head_dim:,}, its hidden size"
            if qwen.heads * qwen.head_dim == qwen.hidden else "?"),
        "output projection (4,096 × 4,096)": f"output projection ({qwen.heads * qwen.head_dim:,} "
                                             f"× {qwen.hidden:,})",
        "share 8 heads of keys and values, 4 query heads to each": (
            f"share {qwen.kv_heads} heads of keys and values, {qwen.heads // qwen.kv_heads} query "
            "heads to each"),
        "two 4,096 × 12,288 matrices in, one 12,288 × 4,096 out": (
            f"two {qwen.hidden:,} × {qwen.intermediate:,} matrices in, one "
            f"{qwen.intermediate:,} × {qwen.hidden:,} out"),
        "stacks 36 such layers": f"stacks {qwen.layers} such layers",
        "each of the 151,936 tokens": f"each of the {qwen.vocab:,} tokens",
        "the key and value projections and the KV cache shrink to a quarter": (
            "the key and value projections and the KV cache shrink to a quarter"
            if qwen.heads == 4 * qwen.kv_heads else "?"),
        "covers about 6.8 effective keys when d<sub>k</sub> = 4, 2.8 at 16, 1.4 at 128 and 1.2": (
            "covers about {:.1f} effective keys when d<sub>k</sub> = 4, {:.1f} at 16, {:.1f} at "
            "128 and {:.1f}".format(*sweep.effective_raw)),
        "about 11.3, 10.8, 10.7 and 10.6": "about {:.1f}, {:.1f}, {:.1f} and {:.1f}".format(
            *sweep.effective_scaled),
        "1.80 versus 2.00 at d<sub>k</sub> = 4, 10.79 versus 11.31 at 128, 21.57 versus 22.63": (
            "{:.2f} versus 2.00 at d<sub>k</sub> = 4, {:.2f} versus 11.31 at 128, {:.2f} versus "
            "22.63".format(*sweep.spread[[0, 2, 3]])),
    }
    for written, computed in checks.items():
        assert written in text, f"the article no longer says {written!r}"
        assert written == computed, f"{written!r}: computed {computed!r}"
    # "Two of those lengths lie past the 40,960 positions": 51,324 and 131,072, not 25,662
    beyond = [n for n in (costs.crossover_tokens(qwen), costs.crossover_tokens(qwen, "naive"),
                          32768, 131072) if n > qwen.max_positions]
    assert len(beyond) == 2


# names the article must use as they are: the formula, APIs, config fields, control labels
NAMES = ["attention q k v softmax q k t d k v", "torch nn functional scaled dot product attention",
         "num hidden layers num attention heads head dim", "attn mask and is causal true",
         "turn the causal mask off", "checking it on a real system"]
PROSE = ProseCheck(SEED, NAMES, min_words=1000)
(test_the_prose_is_in_our_own_words, test_the_fingerprint_is_of_a_whole_document,
 test_the_fingerprint_matches_the_lesson_where_it_is_present) = PROSE.tests(prose_text)


def test_a_live_chapter_puts_its_roots_into_the_document_in_one_go(monkeypatch):
    # each root added on its own made Bokeh walk the whole document again: 16 walks, twice
    # the CPU of a chapter's session (benchmarks/session_cpu.py)
    from bokeh.document import Document

    doc, walks = Document(), []
    manager = type(doc.models)
    recompute = manager.recompute
    monkeypatch.setattr(manager, "recompute", lambda self: (walks.append(1), recompute(self)))
    page = live_chapter.page("/", defer=False)
    page.server_doc(doc, title="t")
    assert [r.name for r in doc.roots if r.name != "location"] == [r.name for r in page.roots]
    assert len(walks) == 1, f"the document's models were walked {len(walks)} times"
    assert doc.template_variables["ae_parts"][0] == ("html", page.parts[0])  # its text


# the statements the review of 2026-12-03 found wrong
# (app/chapters/content/REVIEW.md): gone, and what replaced them there
CORRECTED = {
    "attention.md": [("under 1% either way", "By the last step (context 4,351)"),
                     ("added to the inputs before attention runs",
                      "rotate each pair of components of every query and key"),
                     ("The causal mask changes scores, not weights",
                      "sets forbidden scores to −∞ before the softmax"),
                     ("indistinguishable from one-hot", "close to"),
                     ("A fallback does trigger a warning",
                      "that fallback passed without a warning")],
    "math.md": [("all of it read on every decode step", "reads all of but the embedding table"),
                ("yet yet", "In exact arithmetic every key gets some weight"),
                ("Divide the two and you get about 4",
                 "shows why the reading, not the arithmetic, sets the pace"),
                ("until they weigh more than the model", "would match the parameters")],
}


@pytest.mark.parametrize("name", sorted(CORRECTED))
def test_the_reviewed_statements_stay_corrected(name):
    from app.chapters import content

    text = content.read(name)
    for wrong, right in CORRECTED[name]:
        assert wrong not in " ".join(text.split()), f"{name} says again: {wrong!r}"
        assert " ".join(right.split()) in " ".join(text.split()), f"{name} lost: {right!r}"
    if name == "math.md":  # the one-user crossover comes with Llama 3 8B's own limit
        assert "Llama 3 8B stops short: it reads at most 8,192 tokens" in " ".join(
            text.split())
