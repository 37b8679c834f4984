"""The shapes figure: every box is its matrix's rows × columns at every head state, and its
own controls switch it."""

import numpy as np
import pytest

from app.kit import registry, url_state
from app.panels import shapes
from attention_core import costs, head, reference, worked_example


@pytest.mark.parametrize("phase", head.PHASES)
@pytest.mark.parametrize("length", shapes.LENGTHS)
def test_every_box_is_the_numpy_computations_shape(length, phase):
    x = worked_example.embeddings(length)
    q, k, v = (x @ w for w in (worked_example.W_QUERY, worked_example.W_KEY,
                               worked_example.W_VALUE))
    if phase == "decode":  # the newest token alone asks
        q = q[-1:]
    out = reference.numpy_attention(q[None, None], k[None, None], v[None, None],
                                    causal=phase == "prefill")[0, 0]
    scores = q @ k.T
    x_new = x[-q.shape[0]:]  # decode projects only the newest word
    want = [x_new.shape, q.shape, k.shape, v.shape, scores.shape, scores.shape, out.shape]
    state = shapes.ShapesPanel.state(length=length, phase=phase)
    boxes = state["source:boxes"]
    assert list(zip(boxes["h"], boxes["w"], strict=True)) == want
    assert state["source:labels"]["text"][1::2] == [f"{r} × {c}" for r, c in want]
    assert f"{scores.size} dot products" in state["holes:shapes"]["where"]


def test_its_controls_switch_it_and_the_head_keeps_its_url_keys():
    figure = shapes.ShapesPanel(in_chapter=True)
    figure.param.update(length=4, phase="decode")
    assert figure.box_source.data["h"][1] == 1 and figure.box_source.data["h"][2] == 4  # Q, K
    plan = url_state.chapter_plan(registry.chapter_panels("attention.md"),
                                  registry.follows("attention.md"))
    assert plan["head"]["length"] == "length" and plan["shapes"] == {
        "shapes_length": "length", "shapes_phase": "phase"}


def test_the_caption_gives_the_real_models_sizes():
    m = costs.preset(shapes.REAL_MODEL)
    text = shapes.caption()
    for shown in (f"{m.hidden:,} columns", f"{m.heads} query heads", f"n × {m.head_dim}",
                  f"{m.kv_heads} KV heads", f"shared by {m.heads // m.kv_heads} query heads"):
        assert shown in text, shown
    assert np.isclose(m.hidden / m.heads, m.head_dim)  # 4,096 = 32 × 128


def test_the_caption_names_its_terms():
    text = shapes.caption()
    # d_model named once as the hidden size; the divided scores are the scaled scores; the
    # softmax's outputs are attention weights
    assert "each as wide as the hidden size (d_model)" in text
    assert "the scaled scores are Q K<sup>T</sup> ÷ √d<sub>k</sub>" in text
    assert "into attention weights" in text
