"""The decode bill without a browser: the document's ops, bytes, intensity and verdict."""

import json
import re

import pytest

from app.kit import registry, states
from app.panels.decode_bill import DecodeBillPanel
from attention_core import costs
from tests.state_checks import (
    assert_sampled_states_pure,
    assert_url_defaults,
    assert_url_repairs,
    mismatches,
)

# The document's figures for Llama-3-8B at 4,096 tokens of context, one user.
DOTS = 32 * 32 * 4096  # 4,194,304
HALF = DOTS * 2 * 128  # scores, and again the weighted sum: ≈ 1.07B each


def text(readout):  # what a reader sees
    return readout.text()


def all_text(panel):
    return " ".join(text(p) for p in (panel.readout, panel.bytes_readout, panel.verdict,
                                      panel.gqa_text))


@pytest.fixture
def panel():
    return DecodeBillPanel()


def test_defaults_and_url_keys(panel):
    assert_url_defaults(panel, model="llama-3-8b", context=4096, users=1, gpu="h100-sxm")


def test_operations_match_the_document(panel):
    t = text(panel.readout)
    assert DOTS == 4_194_304 and f"{DOTS:,}" in t
    assert t.count(f"{HALF:,} FLOPs") == 2 and "≈ 1.07 billion" in t
    total = float(re.search(r"attention ≈ ([\d.]+) billion FLOPs", t).group(1))
    assert total == pytest.approx(2.1, abs=0.06)
    # the model's parameters are "parameters"; "weights" are the softmax's outputs
    assert "Weights" not in t and "Parameters: 2 × 7,504,658,432 parameters in matrix products" in t
    weights = float(re.search(r"= [\d,]+ FLOPs \(≈ ([\d.]+) billion\)",
                              t.split("Parameters:")[1]).group(1))
    assert weights == pytest.approx(15, abs=0.1)
    share = float(re.search(r"FLOPs, ([\d.]+)% of its arithmetic", t).group(1))
    assert share == pytest.approx(12, abs=1) and "about 1/8" in t


def test_bytes_match_the_document(panel):
    t = text(panel.bytes_readout)
    assert "2 (K and V) × 8 KV heads × 128 × 2 bytes = 4,096 bytes (4 KiB)" in t
    assert "131,072 bytes (128 KiB)" in t
    assert "0.54 GB (0.50 GiB)" in t


def test_intensity_ridge_and_verdict(panel):
    t = text(panel.verdict)
    assert "4.0 FLOP/byte" in t
    assert "989 TFLOP/s ÷ 3.35 TB/s ≈ 295 FLOP/byte" in t
    assert "Memory-bound by a factor of ~74" in t


def test_grouped_query_attention(panel):
    t = text(panel.gqa_text)
    assert "32 query heads share 8 KV heads: 4 per group" in t
    assert "×4" in t and "16,384" in t  # 4,096 bytes with 8 KV heads, 16,384 with 32
    assert len(panel.query_source.data["x"]) == 32 and len(panel.kv_source.data["x"]) == 8
    assert panel.gqa_pane.visible


def test_roofline_sources(panel):
    roof = panel.roof_source.data
    assert max(roof["y"]) == pytest.approx(989)
    assert panel.ridge_span.location == pytest.approx(989 / 3.35, rel=1e-6)
    assert panel.point_source.data["x"] == [pytest.approx(4.0)]
    assert panel.point_source.data["y"] == [pytest.approx(4.0 * 3.35)]  # TFLOP/s
    panel.gpu = "b200"
    assert panel.ridge_span.location == pytest.approx(2250 / 8.0)
    assert "B200" in panel.caption.text()


def test_users_multiply_the_cache(panel):
    panel.users = 32
    assert "17 GB (16 GiB)" in text(panel.bytes_readout)
    assert "4.0 FLOP/byte" in text(panel.verdict)  # every user reads their own cache


def test_gpt2_has_no_grouping(panel):
    panel.model = "gpt2"
    assert "no grouping" in text(panel.gqa_text)
    assert len(panel.kv_source.data["x"]) == 12
    # every model's heads fill the same 0..1 axis: a change of model leaves the axes alone
    fig = panel.gqa_figure
    assert (fig.x_range.start, fig.x_range.end) == (0, 1)
    q, kv = panel.query_source.data, panel.kv_source.data
    assert q["x"][0] - q["width"][0] / 2 > 0 and q["x"][-1] + q["width"][-1] / 2 < 1
    assert kv["x"][-1] + kv["width"][-1] / 2 < 1
    assert q["width"][0] == pytest.approx(0.8 / 12.2)


def test_a_compute_bound_custom_model(panel):
    cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 512,
           "intermediate_size": 1024, "num_attention_heads": 1024, "num_key_value_heads": 1,
           "head_dim": 8, "vocab_size": 1000, "tie_word_embeddings": False}
    assert panel.picker.load_config(json.dumps(cfg))
    assert "Compute-bound" in text(panel.verdict)
    assert not panel.gqa_pane.visible and "Too many heads to draw" in text(panel.gqa_text)


def test_a_model_with_no_attention_has_no_heads_and_no_cache(panel):
    """Mamba: no layer attends, so the panel draws no heads and counts no bytes per layer,
    rather than the stand-in head the core counts back out."""
    cfg = {"model_type": "mamba", "hidden_size": 768, "intermediate_size": 1536,
           "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16, "conv_kernel": 4,
           "expand": 2, "time_step_rank": 48}
    assert panel.picker.load_config(json.dumps(cfg))
    assert not panel.gqa_pane.visible
    assert "No layer attends" in text(panel.gqa_text)
    state = panel._state["holes:per_token"]
    assert (state["kv_layer"], state["kv_token"]) == ("0", "0")
    assert "no layer attends" in state["layer_formula"]


def test_figures_are_built_once(panel):
    figs = (panel.roofline, panel.gqa_figure)
    renderers = [list(f.renderers) for f in figs]
    panel.param.update(context=100, users=7, gpu="rtx-4090")
    panel.model = "gpt2"
    panel.picker.load_config(json.dumps(costs.PRESETS["qwen3-8b"]))
    assert (panel.roofline, panel.gqa_figure) == figs
    assert [list(f.renderers) for f in figs] == renderers


@pytest.mark.parametrize("bad", [
    "not json", '{"num_hidden_layers": NaN}',
    json.dumps({**costs.PRESETS["llama-3-8b"], "num_hidden_layers": 1e12}),
    json.dumps({**costs.PRESETS["llama-3-8b"], "_name_or_path": "<script>x</script>"}),
])
def test_a_bad_config_keeps_the_numbers(panel, bad):
    before = all_text(panel)
    assert not panel.picker.load_config(bad)
    assert all_text(panel) == before and panel.picker.shape.name == "Llama-3-8B"
    assert "<script" not in panel.picker._error_pane.object


def test_url_restore_clamps_and_ignores_listing_repairs(panel):
    args = {"model": [b"bogus"], "context": [b"1e99"], "users": [b"-3"], "gpu": [b"tpu"]}
    assert_url_repairs(panel, args, "model='bogus'", "gpu='tpu'", "users=-3 is out of range",
                       "context=1e99 is out of range")
    assert panel.model == "llama-3-8b" and panel.gpu == "h100-sxm"
    assert panel.users == 1 and panel.context == panel.param.context.bounds[1]


# ---- every figure gets laid out, however deep the panel sits -----------------------------
# Bokeh (3.9, LayoutDOMView) gives a figure a layout of its own, and a Row/Column holding one
# a layout too. Starting at the page's root, a node with a layout lays out its children that
# have one as part of its own, and "propagates" to the others; a propagated node lays out only
# its children with no layout. So a Column with a layout whose parent has one too never lays
# out its other children (a FlexBox, say), and a figure inside one of them stays 0 × 0: the
# page never finishes rendering. That happened to the roofline one Column deeper than the page.

def _children(model):
    kids = getattr(model, "children", None)
    if isinstance(kids, dict):  # a Panel FlexBox (ReactiveHTML): {slot: [models]}
        return [m for ms in kids.values() for m in ms]
    return list(kids or [])


def _has_layout(model):
    from bokeh.models import Column, Plot, Row

    if isinstance(model, Plot):
        return True
    return isinstance(model, (Column, Row)) and any(_has_layout(c) for c in _children(model))


def _figures(model):
    from bokeh.models import Plot

    return [model] if isinstance(model, Plot) else [
        f for c in _children(model) for f in _figures(c)]


def never_laid_out(model, how="compute"):  # -> the figures under `model` Bokeh never lays out
    lost = []
    for child in _children(model):
        if how == "compute":
            nxt = "propagate" if _has_layout(model) and _has_layout(child) else "compute"
        elif how == "propagate":
            nxt = "skip" if _has_layout(child) else "compute"
        else:  # skip: laid out as part of an ancestor's layout; its other children never are
            nxt = "skip" if _has_layout(child) else "lost"
        lost += _figures(child) if nxt == "lost" else never_laid_out(child, nxt)
    return lost


def _old_decode_bill_layout():  # the layout that broke: a bare figure beside a FlexBox'd one
    import panel as pn

    p = DecodeBillPanel()
    roof = pn.FlexBox(pn.Column(pn.pane.Bokeh(p.roofline, sizing_mode="stretch_width")),
                      sizing_mode="stretch_width")
    return pn.Column(pn.pane.Bokeh(p.gqa_figure, sizing_mode="stretch_width"), roof), p.roofline


def test_the_layout_model_finds_the_roofline_that_never_drew():
    import panel as pn

    layout, roofline = _old_decode_bill_layout()
    assert never_laid_out(pn.Column(layout).get_root()) == []  # right under the page: drew
    assert never_laid_out(pn.Column(pn.Column(layout)).get_root()) == [roofline]


@pytest.mark.parametrize("record", registry.PANELS, ids=lambda r: r.slot)
@pytest.mark.parametrize("depth", [1, 2, 4])
@pytest.mark.parametrize("in_chapter", [False, True])
def test_every_figure_is_laid_out_at_any_depth(record, depth, in_chapter):
    import panel as pn

    layout = record.viewer_class(in_chapter=in_chapter)
    for _ in range(depth):
        layout = pn.Column(layout, sizing_mode="stretch_width")
    root = layout.get_root()
    assert _figures(root), "no figure found: the walk missed the panel's models"
    assert never_laid_out(root) == []


# ---- the one shape: a pure state, live == state, a small table ------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_sampled_states_pure(panel)


def test_the_documents_settings_are_stops():
    controls = {c.name: c for c in DecodeBillPanel.controls()}  # (defaults: the contract test)
    assert 32 in controls["users"].values and 64 in controls["users"].values
    assert controls["gpu"].values == tuple(costs.GPUS)


def test_a_ridge_point_part_depends_on_the_gpu_alone():
    parts = {p.fn.__name__: p.controls for p in DecodeBillPanel.parts()}
    assert parts["gpu_state"] == ("gpu",) and parts["model_state"] == ("model",)


def test_your_config_goes_through_the_same_parts(panel):
    assert panel.picker.load_config(json.dumps({**costs.PRESETS["gpt2"], "_name_or_path": "x"}))
    assert mismatches(panel, DecodeBillPanel.state(**panel.params())) == []
    gpt2 = DecodeBillPanel.state(**{**panel.params(), "model": "gpt2"})
    mine = DecodeBillPanel.state(**panel.params())
    assert {k: v for k, v in mine.items() if k != "holes:model_status"} == \
        {k: v for k, v in gpt2.items() if k != "holes:model_status"}


def test_a_static_page_has_sliders_on_stops_and_no_number_boxes():
    with states.static_build():
        p = DecodeBillPanel()
        p.__panel__()
    assert p.context_input is None and p.users_input is None
    assert (p.context_slider.value, p.users_slider.value) == (12, 0)  # 4,096 and 1
    assert list(p.picker.model_buttons.options) == ["Qwen3-8B", "GPT-2", "Llama-3-8B"]


def test_the_notes_name_parameters_and_what_is_left_out(panel):
    from app.panels import decode_bill

    # scale, max, subtract, exp, add, divide: 6 per score, against 4 × head_dim for attention
    left_out = 6 * DOTS
    assert f"{left_out:,}" == "25,165,824"
    assert left_out / (2 * HALF) == pytest.approx(0.0117, abs=1e-4)
    assert ("are left out: for Llama-3-8B at 4,096 tokens, 25.2 million against attention's "
            "2.15 billion (1.2%)") in decode_bill.CONVENTIONS
    assert "few million" not in decode_bill.CONVENTIONS
    assert "The parameter matmuls (the matrix products with the model's parameters)" in (
        decode_bill.CONVENTIONS)
    # the cache streams in while the kernel works: the step cannot finish sooner
    assert "the step cannot finish before the whole key/value cache has travelled" in (
        decode_bill.INTRO)
    assert "before any of them can run" not in decode_bill.INTRO
    hint = text(panel.verdict)
    assert "the parameter matmuls: with one user, each parameter read does one multiply-add" in hint
    assert "Batching (decoding several users' tokens in one step) raises that" in hint
    panel.users = 32
    assert "each parameter read is used by all 32 users of the batch" in text(panel.verdict)
    assert "parameter FLOPs this step" in text(panel.readout)
    assert "Batching shares the parameters: the parameter matmuls alone turn" in text(
        panel.time)
