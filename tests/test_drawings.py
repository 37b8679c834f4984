"""The drawings (app/chapters/drawings): every number and every size they show, against an
independent numpy computation of the worked example, at every state of their panel."""

import itertools
import re

import numpy as np
import pytest

from app.chapters import content, figures
from app.chapters.drawings import catalogue as drawings
from app.kit import registry
from attention_core import head
from attention_core.worked_example_constants import EMBEDDINGS, W_K, W_Q, W_V, WORDS

CELL = re.compile(r'<text [^>]*data-step="([a-z-]+)"(?: data-key="(\d+)")?[^>]*>([^<]*)</text>')
MATRIX = re.compile(r'data-matrix="([^"]+)" data-rows="(\d+)" data-cols="(\d+)"')


def numpy_row(length, query, mask, divide, phase):  # -> {step: [text]}: BLAS, not the core
    x = np.array([EMBEDDINGS[w] for w in WORDS[:length]])
    q_all, k, v = x @ np.array(W_Q), x @ np.array(W_K), x @ np.array(W_V)
    pos = length - 1 if phase == "decode" else min(query, length - 1)
    raw = q_all[pos] @ k.T
    scaled = raw / np.sqrt(k.shape[1]) if divide else raw
    hidden = (np.arange(length) > pos) if mask else np.zeros(length, bool)
    masked = np.where(hidden, -np.inf, scaled)
    e = np.exp(masked - masked.max())
    w = e / e.sum()

    def t(values, digits=2):
        return [f"{x:.{digits}f}".replace("-", "−").replace("inf", "∞") for x in values]

    return {"raw": t(raw), "scaled": t(scaled), "masked": t(masked), "exp": t(e, 3),
            "weight": t(w), "sum": t([e.sum()], 3), "max": t([masked.max()]),
            "output": ["[" + ", ".join(t(w @ v)) + "]"], "weight-sum": t([w.sum()])}


def drawn_row(settings):  # -> {step: [text]} read back from the drawing's SVG
    out = {}
    for step, _key, text in CELL.findall(drawings.draw("head", "row", settings)):
        out.setdefault(step, []).append(text.replace("m = ", ""))
    return out


def head_states():
    cls = registry.by_slot("head").viewer_class
    stops = {c.name: c.values for c in cls.controls()}
    names = ("length", "query", "mask", "divide", "phase")
    for values in itertools.product(*(stops[n] for n in names)):
        yield dict(zip(names, values))


def mismatches(states):
    bad = []
    for s in states:
        drawn, expected = drawn_row(s), numpy_row(**s)
        drawn.pop("same-as-prefill", None)
        if drawn != expected:
            bad.append((s, {k: (drawn.get(k), v) for k, v in expected.items()
                            if drawn.get(k) != v}))
    return bad


def test_the_worked_row_shows_the_cores_numbers_at_every_head_state():
    states = list(head_states())
    assert len(states) == 384
    assert mismatches(states) == []


def test_a_mutated_core_fails_the_worked_row(monkeypatch):
    def no_max(scores, sum_fn=head.ordered_sum):  # the softmax without subtracting the max
        exps = np.exp(scores)
        sums = sum_fn(exps, axis=-1)
        return exps, sums, exps / sums[:, None]

    monkeypatch.setattr(head, "softmax_parts", no_max)
    states = [s for s in head_states() if s["length"] == 6 and s["query"] == 2]
    assert len(mismatches(states)) == len(states)


def test_decode_marks_its_row_equal_to_prefills_last_row_as_it_is():
    for length in range(3, 9):
        for mask, divide in itertools.product((True, False), repeat=2):
            page = drawings.draw("head", "row", {"length": length, "query": 0, "mask": mask,
                                                 "divide": divide, "phase": "decode"})
            assert f"= prefill&#x27;s row {length - 1}, bit for bit" in page


def numpy_sizes(length, phase):  # -> {matrix: (rows, cols)} from numpy's own products
    x = np.array([EMBEDDINGS[w] for w in WORDS[:length]])
    xq = x[-1:] if phase == "decode" else x
    q, k, v = xq @ np.array(W_Q), x @ np.array(W_K), x @ np.array(W_V)
    s = q @ k.T
    new = {"k": (xq @ np.array(W_K)).shape, "v": (xq @ np.array(W_V)).shape} if (
        phase == "decode") else {"K": k.shape}  # decode projects the new word's k and v only
    return {"X": xq.shape, "W_Q": np.shape(W_Q), "W_K": np.shape(W_K), "W_V": np.shape(W_V),
            "Q": q.shape, **new, "V": v.shape, "Kᵀ": k.T.shape, "scores": s.shape,
            "weights": s.shape, "output": (s @ v).shape}


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_the_products_drawing_has_numpys_sizes_operators_and_k_transposed(phase):
    for length in range(3, 9):
        page = drawings.draw("shapes", "products", {"length": length, "phase": phase})
        drawn = {}
        for name, rows, cols in MATRIX.findall(page):
            drawn.setdefault(name, set()).add((int(rows), int(cols)))
        assert drawn == {k: {v} for k, v in numpy_sizes(length, phase).items()}, length
        assert page.count('data-op="×"') == 5 and page.count('data-op="="') == 5
        assert ">Kᵀ<" in page
        cached = f"{length - 1} rows from the cache"
        assert (cached in page) == (phase == "decode")


def test_a_drawing_figure_links_to_its_panel_in_its_state_and_refuses_bad_markers():
    marker = content.FigureMarker("head", (("draw", "row"), ("mask", "off"), ("query", "3")),
                                  "Row 3, unmasked.")
    page = figures.figure_html(marker, lambda text: text)
    assert 'data-drawing="row"' in page and "#panel-head" in page
    assert "draw" not in figures.query(marker) and "query=3" in figures.query(marker)
    side = content.FigureMarker("head", (("draw", "row"), ("beside", "divide")), "c")
    both = figures.figure_html(side, lambda text: text)
    assert both.count(">Query 2 (sat), one query<") == 2 and "÷√5" in both and "÷ 1" in both
    for bad in ((("draw", "nothing"),), (("draw", "row"), ("draw", "row")),
                (("beside", "divide"),), (("draw", "row"), ("beside", "query")),
                (("draw", "row"), ("beside", "mask"), ("mask", "on"))):
        with pytest.raises(figures.FigureError):
            figures.settings(content.FigureMarker("head", bad, "c"))


def test_the_step_time_is_llama_3_8bs_worked_by_hand():
    # Llama 3 8B, one user, 4,096 tokens in, H100 SXM (3.35 TB/s, 989 TFLOP/s), bf16:
    # bytes = 2 × (7,504,658,432 matmul parameters + the norms: two a layer and a final one,
    #         4,096 each) + 4,096 tokens × 131,072 bytes of keys and values
    # FLOPs = 2 × 7,504,658,432 + 4 × 32 layers × 32 heads × 128 × 4,096 pairs
    read = 2 * (7_504_658_432 + (2 * 32 + 1) * 4_096) + 4_096 * 131_072
    flops = 2 * 7_504_658_432 + 4 * 32 * 32 * 128 * 4_096
    page = drawings.draw("decode", "time", {"model": "llama-3-8b", "context": 4096,
                                            "users": 1, "gpu": "h100-sxm"})
    values = {s: (float(v), t) for s, v, t in
              re.findall(r'data-step="(\w+)" data-value="([^"]+)">([^<]+)<', page)}
    assert values["read"][0] == pytest.approx(read / 3.35e12, rel=1e-12)
    assert values["math"][0] == pytest.approx(flops / 989e12, rel=1e-12)
    assert values["step"][0] == values["read"][0]  # memory sets the pace
    assert (values["step"][1], values["tokens"][1]) == ("4.64 ms", "215 tokens/s")


def test_the_truncate_drawing_is_equal_exactly_when_the_mask_hides_the_later_words():
    # a masked row never weighs a later word, so cutting the sequence after it changes
    # nothing; unmasked, every row but the last weighs words the cut pass does not have
    for s in head_states():
        if s["phase"] != "prefill":
            continue
        page = drawings.draw("head", "truncate", s)
        equal = re.search(r'data-step="truncate" data-equal="(\w+)"', page).group(1)
        position = min(s["query"], s["length"] - 1)
        assert (equal == "true") == (s["mask"] or position == s["length"] - 1), s
        weights = re.findall(r'data-step="weight" data-key="(\d+)"[^>]*>([^<]+)<', page)
        cut = dict(weights[s["length"]:])  # the second strip: the first position + 1 keys
        full = dict(weights[:s["length"]])
        if s["mask"]:
            assert all(full[k] == w for k, w in cut.items()), s


def test_the_scratch_drawing_is_llama_3_8bs_worked_by_hand():
    # 8,192² scores a head × 32 heads × 2 bytes, against one 128 × 128 tile a head
    page = drawings.draw("memory", "scratch", {"model": "llama-3-8b", "prompt": 8192,
                                               "dtype": "bf16", "users": 1, "context": 4096})
    assert ">4.29 GB<" in page and ">1.05 MB<" in page  # 4,294,967,296 and 1,048,576 bytes
    ratio = float(re.search(r'data-step="ratio" data-value="([^"]+)"', page).group(1))
    assert ratio == 8192 ** 2 * 32 * 2 / (128 ** 2 * 32 * 2) == 4096
    sides = {m: (int(r), int(c)) for m, r, c in MATRIX.findall(page)}
    assert sides == {"scores": (8192, 8192), "tile": (128, 128)}
