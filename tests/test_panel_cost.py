"""The cost panel without a browser: the documents' shares and crossovers, bad configs, URL."""

import json

import pytest

from app.kit import url_state
from app.panels.cost import CostPanel
from app.panels.model_picker import Model
from attention_core import costs
from tests.state_checks import (
    assert_sampled_states_pure,
    assert_url_defaults,
    assert_url_repairs,
    mismatches,
)


def text(panel):  # the readout as a reader sees it
    return panel.readout.text()


@pytest.fixture
def panel():
    return CostPanel()


def test_defaults_and_url_keys(panel):
    assert_url_defaults(panel, model="qwen3-8b", prompt=4096, generate=4096,
                        kernel="triangular")
    assert panel.picker.shape.name == "Qwen3-8B"


def test_qwen3_at_4096_is_7_4_percent_and_crosses_at_51324(panel):
    t = text(panel)
    assert "attention is 7.4% of the arithmetic" in t
    assert "51,324 tokens with the triangular kernel" in t
    assert "at 25,662 tokens with the naive one" in t  # half of 51,324, as the document says
    assert 'aria-live="polite"' in panel.readout.template


@pytest.mark.parametrize("prompt, share", [(32_768, "39%"), (131_072, "72%")])
def test_qwen3_longer_prompts(panel, prompt, share):
    panel.prompt = prompt
    assert f"attention is {share} of the arithmetic" in text(panel)


def test_gpt2_crossover_and_its_max_position(panel):
    panel.model = "gpt2"
    panel.prompt = 1024
    t = text(panel)
    assert "13,404 tokens with the triangular kernel" in t
    assert "attention is 7.1% of the arithmetic" in t
    assert "max position is 1,024" in t and "lies beyond it" in t
    assert round(51_324 / 13_404, 1) == 3.8  # the document's factor


def test_qwen3_at_256_is_under_one_percent_in_both_phases(panel):
    panel.param.update(prompt=256, generate=4096)
    t = text(panel)
    assert "attention is 0.50% of the arithmetic" in t
    assert "0.99% of the first step's arithmetic (context 256 tokens)" in t
    assert "context 4,351 tokens" in t  # the last step: 256 + 4,096 - 1


def test_pair_flops_formula_with_the_four_fields(panel):
    t = text(panel)
    assert "4 × 36 layers × 32 query heads × 128 head_dim = 589,824" in t
    assert 4 * 36 * 32 * 128 == 589_824
    assert "not the 8 KV heads" in t
    assert "Matmul parameters: 7,568,097,280" in t


def test_pair_flops_formula_counts_only_the_layers_that_attend(panel):
    """Jamba-v0.1 attends on 4 of its 32 layers; Mamba on none: the formula says so and its
    product is the figure beside it."""
    jamba = {"model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336,
             "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 65536, "num_experts": 16, "num_experts_per_tok": 2,
             "mamba_dt_rank": 256}
    assert panel.picker.load_config(json.dumps(jamba))
    assert "4 × 4 attention layers × 32 query heads × 128 head_dim = 65,536" in text(panel)
    assert 4 * 4 * 32 * 128 == 65_536
    mamba = {"model_type": "mamba", "hidden_size": 768, "intermediate_size": 1536,
             "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16,
             "conv_kernel": 4, "expand": 2, "time_step_rank": 48}
    assert panel.picker.load_config(json.dumps(mamba))
    assert "no layer attends, so no pairs = 0" in text(panel)


def test_kernel_choice_moves_the_crossover_marker(panel):
    assert panel.cross_span.location == pytest.approx(51_324, abs=1)
    panel.kernel = "naive"
    assert panel.cross_span.location == pytest.approx(25_662, abs=1)
    assert "naive kernel, n² pairs" in text(panel)
    assert panel.lines["naive"].glyph.line_width > panel.lines["triangular"].glyph.line_width


def test_chart_sources(panel):
    data = panel.curve_source.data
    assert min(data["n"]) == 1 and max(data["n"]) == 262_144
    assert set(data) >= {"triangular", "naive"}
    assert panel.marker_source.data["n"] == [4096]
    assert panel.marker_source.data["share"][0] == pytest.approx(0.074, abs=0.0005)
    assert panel.maxpos_span.location == 40_960 and panel.maxpos_span.visible
    assert "crossover 51,324" == panel.cross_label.text


def test_log_slider_and_exact_input_agree(panel):
    panel.prompt_slider.value = 10
    assert panel.prompt == 1024
    panel.prompt = 3000
    assert panel.prompt_slider.value == 12  # nearest power of two: 4,096


def test_figure_is_built_once(panel):
    fig, source, renderers = panel.figure, panel.curve_source, list(panel.figure.renderers)
    panel.param.update(prompt=100, generate=10, kernel="naive")
    panel.model = "gpt2"
    panel.picker.load_config(json.dumps({**costs.PRESETS["llama-3-8b"],
                                         "_name_or_path": "mine"}))
    assert panel.figure is fig and panel.curve_source is source
    assert list(panel.figure.renderers) == renderers
    assert "mine" in panel.caption.text()


@pytest.mark.parametrize("bad", [
    "not json", "{" + " " * costs.MAX_CONFIG_BYTES + "}", '{"num_hidden_layers": NaN}',
    json.dumps({**costs.PRESETS["qwen3-8b"], "num_hidden_layers": 1e12}),
    json.dumps({**costs.PRESETS["qwen3-8b"], "head_dim": "<script>alert(1)</script>"}),
])
def test_a_bad_config_keeps_the_numbers(panel, bad):
    before = text(panel)
    curve = list(panel.curve_source.data["triangular"])
    panel.model = "custom"
    panel.picker.load_config(bad)
    assert text(panel) == before
    assert list(panel.curve_source.data["triangular"]) == curve
    error = panel.picker._error_pane.object
    assert panel.picker._error_pane.visible and "<script" not in error


def test_custom_config_numbers(panel):
    cfg = {**costs.PRESETS["gpt2"], "_name_or_path": "my-gpt2"}
    assert panel.picker.load_config(json.dumps(cfg))
    assert panel.model == "custom"
    assert "13,404 tokens" in text(panel)


def test_a_window_on_every_layer_can_mean_no_crossover(panel):
    cfg = {"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "sliding_window": 512,
           "max_position_embeddings": None}  # absent, Mistral's class reads 131,072
    assert panel.picker.load_config(json.dumps(cfg))
    assert "Crossover, where prefill attention equals everything else: never with the " \
        "triangular kernel" in text(panel)
    assert not panel.cross_span.visible and not panel.maxpos_span.visible
    assert "Sliding window of 512 tokens" in panel.picker.fields.text()


def test_url_restore_clamps_and_ignores_listing_repairs(panel):
    args = {"model": [b"bogus"], "prompt": [b"1e99"], "generate": [b"-3"],
            "kernel": [b"square"]}
    assert_url_repairs(panel, args, "model='bogus'", "kernel='square'",
                       "prompt=1e99 is out of range", "generate=-3 is out of range")
    assert panel.model == "qwen3-8b" and panel.kernel == "triangular"
    assert panel.prompt == 131_072 and panel.generate == 1


def test_url_restore_sets_a_preset():
    panel = CostPanel()
    repairs = url_state.restore(panel, panel.url_keys, {"model": [b"gpt2"], "prompt": [b"1024"]})
    assert repairs == [] and panel.picker.shape.name == "GPT-2 small"
    assert "attention is 7.1% of the arithmetic" in text(panel)


# ---- the one shape: a pure state, live == state, a small table ------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_sampled_states_pure(panel)


def test_the_documents_states_are_in_the_table():
    controls = {c.name: c for c in CostPanel.controls()}  # (defaults: the contract test)
    for value in (256, 1024, 4096, 32_768, 131_072):
        assert value in controls["prompt"].values
    assert controls["model"].values == ("qwen3-8b", "gpt2", "llama-3-8b")


def test_your_config_goes_through_the_same_parts(panel):
    cfg = {**costs.PRESETS["gpt2"], "_name_or_path": "my-gpt2"}
    assert panel.picker.load_config(json.dumps(cfg))
    model = panel.params()["model"]
    assert isinstance(model, Model) and model.shape.name == "my-gpt2"
    assert mismatches(panel, CostPanel.state(**panel.params())) == []
    gpt2 = CostPanel.state(**{**panel.params(), "model": "gpt2"})
    mine = CostPanel.state(**panel.params())
    assert mine["holes:crossover"] == gpt2["holes:crossover"]  # the same numbers: 13,404
    assert mine["source:curve"] == gpt2["source:curve"]


def test_off_stop_values_typed_live_are_counted(panel):
    panel.prompt = 3000
    assert "Prefill of a 3,000-token prompt" in text(panel)
    assert mismatches(panel, CostPanel.state(**panel.params())) == []


def test_a_static_page_has_presets_stops_and_the_live_button():
    import panel as pn

    from app.kit import states

    with states.static_build():
        p = CostPanel()
        p.__panel__()
    assert list(p.picker.model_buttons.options) == ["Qwen3-8B", "GPT-2", "Llama-3-8B"]
    assert p.prompt_input is None and p.generate_input is None
    assert not hasattr(p.picker, "file_input")
    buttons = [b for b in p.picker._layout.select(pn.widgets.Button)
               if b.label == "Open this in the live explorable"]
    assert len(buttons) == 1
    assert p.prompt_slider.value == 12 and p.generate_slider.value == 12  # 4,096 = 2¹²
    assert p.widgets["model"] is p.picker.model_buttons


def test_the_note_says_the_lm_head_is_counted_at_every_position():
    from app.panels import cost

    m = costs.preset("qwen3-8b")
    assert costs.lm_head_params(m) == 151_936 * 4096  # vocab × hidden, 8.2% of the matmuls
    assert costs.lm_head_params(m) / costs.matmul_params(m) == pytest.approx(0.0822, abs=1e-4)
    assert ("The lm_head is counted at every prompt position, as in training; serving needs it "
            "at the last one only (Qwen3-8B: 622 million of its 7.57 billion matmul parameters, "
            "8.2%).") in cost.CONVENTIONS
    assert "weight" not in cost.CONVENTIONS  # the model's parameters are "parameters"
