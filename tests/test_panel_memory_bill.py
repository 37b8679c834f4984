"""The memory bill without a browser: weights, caches, the catch-up point, prefill scratch."""

import json
import re

import pytest
from bokeh.models import Legend

from app.kit import states
from app.panels.memory_bill import MemoryBillPanel
from attention_core import costs
from tests.state_checks import (
    assert_sampled_states_pure,
    assert_url_defaults,
    assert_url_repairs,
    mismatches,
)


def text(readout):  # what a reader sees
    return readout.text()


@pytest.fixture
def panel():
    return MemoryBillPanel()


def test_defaults_and_url_keys(panel):
    assert_url_defaults(panel, model="llama-3-8b", users=1, context=4096, prompt=8192,
                        dtype="bf16")


def test_parameters_are_16_gb_and_one_user_catches_them_near_120k(panel):
    t = text(panel.readout)
    # "parameters", not "weights"; 3 digits, so 16.1 + 0.537 visibly make 16.6
    assert "Parameters: 8,030,261,248 parameters × 2 bytes = 16.1 GB (15.0 GiB), fixed" in t
    assert "Weights" not in t
    assert "0.537 GB (0.500 GiB). Parameters plus cache: 16.6 GB (15.5 GiB)." in t
    # a step streams every matrix a token multiplies, not the embedding table: as the decode bill
    step = costs.decode_step_bytes(costs.preset("llama-3-8b"), 4096) - 4096 * 131_072
    assert round(step / 1e9, 1) == 15.0
    assert ("a decode step streams 15.0 GB (14.0 GiB) of them (every matrix a token multiplies; "
            "a lookup table gives one row), however long the conversation") in t
    assert "131,072 bytes (128 KiB) per token" in t
    catch = int(re.search(r"outweighs them at ([\d,]+) tokens", t).group(1).replace(",", ""))
    assert catch == pytest.approx(120_000, rel=0.05)
    assert "≈ 120 thousand" in t


def test_32_users_at_4k_hold_17_gb(panel):
    panel.users = 32
    t = text(panel.readout)
    assert "For 32 users at 4,096 tokens each: 17.2 GB (16.0 GiB)" in t
    assert "Parameters plus cache: 33.2 GB (31.0 GiB)" in t
    assert "their caches together outweigh the parameters at 3,829" in t
    assert panel.cross_label.text == "cache = parameters at 3,829"
    assert "3,829 tokens each" in t  # 122,532 / 32
    assert panel.cross_span.location == pytest.approx(122_532 / 32, rel=1e-6)
    assert panel.kv_item.label.value == "KV cache, 32 users" and panel.one_line.visible


def test_prefill_scratch_against_a_fused_tile(panel):
    t = text(panel.scratch)
    assert 8192 ** 2 == 67_108_864 and "67,108,864 scores (≈ 67 million)" in t
    assert "× 32 heads × 2 bytes = 4.3 GB (4.0 GiB) of scratch per layer" in t
    assert "128 × 128 tile" in t and "1.0 MB (1.0 MiB)" in t  # 128² × 32 × 2 = 2²⁰ bytes
    assert "4,096 times" in t


@pytest.mark.parametrize("dtype, weights", [("fp8", "8.03 GB"), ("fp32", "32.1 GB")])
def test_bytes_per_value(panel, dtype, weights):
    panel.dtype = dtype
    assert f"= {weights}" in text(panel.readout)


def test_chart_sources(panel):
    data = panel.curve_source.data
    assert min(data["weights"]) == max(data["weights"]) == pytest.approx(16.06, abs=0.01)
    assert panel.marker_source.data["kv"] == [pytest.approx(0.537, abs=0.001)]
    assert panel.cross_span.location == pytest.approx(122_532, abs=1)
    assert not panel.one_line.visible


def test_figure_is_built_once(panel):
    fig, source, renderers = panel.figure, panel.curve_source, list(panel.figure.renderers)
    panel.param.update(users=8, context=100_000, prompt=1000, dtype="fp8")
    panel.model = "qwen3-8b"
    panel.picker.load_config(json.dumps(costs.PRESETS["gpt2"]))
    assert panel.figure is fig and panel.curve_source is source
    assert list(panel.figure.renderers) == renderers


@pytest.mark.parametrize("bad", [
    "{", '{"num_hidden_layers": NaN}',
    json.dumps({**costs.PRESETS["llama-3-8b"], "num_hidden_layers": 1e12}),
    json.dumps({**costs.PRESETS["llama-3-8b"], "model_type": "<script>x</script>"}),
])
def test_a_bad_config_keeps_the_numbers(panel, bad):
    before = (text(panel.readout), text(panel.scratch))
    assert not panel.picker.load_config(bad)
    assert (text(panel.readout), text(panel.scratch)) == before
    assert "<script" not in panel.picker._error_pane.object


def test_a_window_on_every_layer_never_outweighs_the_parameters(panel):
    cfg = {"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "sliding_window": 512}
    assert panel.picker.load_config(json.dumps(cfg))
    panel.users = 4
    t = text(panel.readout)
    assert "one user's cache outweighs them never: the window caps the cache" in t
    assert "outweigh the parameters never." in t
    assert not panel.cross_span.visible


def test_url_restore_clamps_and_ignores_listing_repairs(panel):
    args = {"model": [b"bogus"], "users": [b"-3"], "context": [b"1e99"], "prompt": [b"1e99"],
            "dtype": [b"int4"]}
    assert_url_repairs(panel, args, "model='bogus'", "dtype='int4'", "users=-3 is out of range",
                       "prompt=1e99 is out of range")
    assert panel.model == "llama-3-8b" and panel.dtype == "bf16" and panel.users == 1
    assert panel.prompt == 131_072 and panel.context == panel.param.context.bounds[1]


# ---- the one shape: a pure state, live == state, a small table ------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_sampled_states_pure(panel)


def test_the_documents_settings_are_stops():
    controls = {c.name: c for c in MemoryBillPanel.controls()}  # (defaults: the contract test)
    assert 32 in controls["users"].values and 8192 in controls["prompt"].values


def test_the_curve_source_is_fed_by_two_parts(panel):
    panel.param.update(users=32, dtype="fp8")
    state = MemoryBillPanel.state(**panel.params())
    data = panel.curve_source.data
    assert list(data["kv"]) == state["source:curve_kv"]["kv"]
    assert list(data["kv_one"]) == state["source:curve_one"]["kv_one"]
    assert len({len(column) for column in data.values()}) == 1


def test_your_config_goes_through_the_same_parts(panel):
    assert panel.picker.load_config(json.dumps({**costs.PRESETS["gpt2"], "_name_or_path": "x"}))
    assert mismatches(panel, MemoryBillPanel.state(**panel.params())) == []
    gpt2 = MemoryBillPanel.state(**{**panel.params(), "model": "gpt2"})
    mine = MemoryBillPanel.state(**panel.params())
    assert mine["holes:one_user"] == gpt2["holes:one_user"]
    assert mine["source:curve_kv"] == gpt2["source:curve_kv"]


def test_a_static_page_has_sliders_on_stops_and_no_number_boxes():
    with states.static_build():
        p = MemoryBillPanel()
        p.__panel__()
    assert p.context_input is None and p.users_input is None and p.prompt_input is None
    assert (p.context_slider.value, p.users_slider.value, p.prompt_slider.value) == (12, 0, 13)


def test_the_chart_and_notes_say_parameters(panel):
    from app.panels import memory_bill

    assert "parameters against the KV cache" in text(panel.caption)
    labels = [item.label.value for legend in panel.figure.select(type=Legend)
              for item in legend.items]
    assert "parameters" in labels and "weights" not in labels
    for note in (memory_bill.INTRO, memory_bill.CONVENTIONS):
        assert "weights" not in note.lower() and "parameters" in note
