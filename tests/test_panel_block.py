"""The block panel: every size on its two diagrams and every count in its text is the preset's
config, counted by attention_core.costs; the sharing of K and V is drawn as it is."""

import re

import pytest

from app.kit import registry, states, url_state
from app.panels import block
from app.panels.cost import CostPanel
from attention_core import costs
from tests.state_checks import assert_models_hold

CONFIG = {  # what each config.json says, read off the file (costs.PRESETS), not the shape
    "qwen3-8b": ("hidden_size", "num_attention_heads", "num_key_value_heads",
                 "num_hidden_layers", "intermediate_size", "vocab_size"),
    "llama-3-8b": ("hidden_size", "num_attention_heads", "num_key_value_heads",
                   "num_hidden_layers", "intermediate_size", "vocab_size"),
    "gpt2": ("n_embd", "n_head", "n_head", "n_layer", None, "vocab_size"),
}


def config_sizes(model):  # -> (d_model, heads, kv_heads, layers, d_ff, vocab) from the file
    cfg = costs.PRESETS[model]
    d_model, heads, kv, layers, d_ff, vocab = (cfg[k] if k else None for k in CONFIG[model])
    d_ff = d_ff or 4 * d_model  # GPT-2's n_inner: null means 4 × n_embd
    return d_model, heads, kv, layers, d_ff, vocab


def labels(state, figure):
    return state[f"source:{figure}_labels"]["text"]


@pytest.mark.parametrize("model", block.MODELS)
def test_the_sizes_on_the_figures_are_the_configs(model):
    d_model, heads, kv, layers, d_ff, vocab = config_sizes(model)
    head_dim = costs.PRESETS[model].get("head_dim", d_model // heads)
    state = block.BlockPanel.state(model=model)
    whole, inside = labels(state, "model"), labels(state, "heads")
    for shown in (f"token embedding: {vocab:,} × {d_model:,}", f"× {layers} layers",
                  f"attention: {heads} heads", f"MLP: {d_model:,} → {d_ff:,} → {d_model:,}",
                  f"lm_head: {d_model:,} → {vocab:,}", f"logits: n × {vocab:,}",
                  f"residual stream: n × {d_model:,}"):
        assert shown in whole, shown
    for shown in (f"Q: {heads} heads, n × {head_dim} each",
                  f"K and V: {kv} heads, n × {head_dim} each",
                  f"concatenated: n × ({heads} × {head_dim}) = n × {heads * head_dim:,}",
                  f"W_O: {heads * head_dim:,} × {d_model:,}",
                  f"added to the stream: n × {d_model:,}"):
        assert shown in inside, shown
    # the heads' boxes: one per query head, one K and one V per KV head, each KV head as
    # wide as the query heads it serves
    boxes = state["source:heads_boxes"]
    by_fill = {fill: [w for f, w, a in zip(boxes["fill"], boxes["w"], boxes["alpha"])
                      if f == fill and a > 0.5]  # the strips; W_O's box is pale
               for fill in (block.Q, block.K, block.V, block.OUT)}
    assert len(by_fill[block.Q]) == len(by_fill[block.OUT]) == heads
    assert len(by_fill[block.K]) == len(by_fill[block.V]) == kv
    group = heads // kv
    assert by_fill[block.K][0] + 1 == pytest.approx(group * (by_fill[block.Q][0] + 1))


@pytest.mark.parametrize("model", block.MODELS)
def test_the_parameter_counts_are_attention_cores(model):
    m = costs.preset(model)
    attention, mlp = costs.attention_params(m), costs.dense_mlp_params(m)
    state = block.BlockPanel.state(model=model)
    whole, text = labels(state, "model"), state["holes:block"]["params"]
    assert f"{attention:,} parameters" in whole and f"{mlp:,} parameters" in whole
    assert f"{m.vocab * m.hidden:,} parameters" in whole  # the embedding
    if m.tied:
        assert "tied" in " ".join(whole) and "tied" in text
    else:
        assert f"{costs.lm_head_params(m):,} parameters" in whole
    layer = attention + mlp
    assert (f"Attention holds {attention:,} of the {layer:,} parameters in one layer's "
            f"matrices ({round(100 * attention / layer)}%)") in text
    assert f"make {costs.total_params(m):,} in all" in text
    # the parts named add up to the total: nothing typed, nothing left out
    counts = [int(n.replace(",", "")) for n in re.findall(r"\((\d[\d,]*)\)", text)]
    rest = int(re.search(r"and ([\d,]+) in small vectors", text).group(1).replace(",", ""))
    assert sum(counts) + rest == costs.total_params(m)  # layers, embedding(s), lm_head


@pytest.mark.parametrize("model", block.MODELS)
def test_d_model_is_claimed_only_where_heads_times_head_dim_is_it(model):
    m = costs.preset(model)
    text = block.BlockPanel.state(model=model)["holes:block"]["structure"]
    assert (f"{m.heads} query heads × {m.head_dim} = {m.heads * m.head_dim:,}") in text
    square = m.heads * m.head_dim == m.hidden
    assert ("= the hidden size (d_model), so W_O, the output projection, is square"
            in text) == square
    # the lm_head's outputs named once: one number per vocabulary token
    assert (f"lm_head, whose {m.vocab:,} outputs per token are the logits: one number per "
            "vocabulary token") in text
    assert "(a norm rescales each token's vector)" in text
    if m.kv_heads < m.heads:
        assert f"each shared by {m.heads // m.kv_heads} query heads" in text


def test_a_model_whose_heads_are_not_d_model_says_so(monkeypatch):
    # Qwen3-32B's shape: 64 heads of 128 = 8,192 against a hidden size of 5,120
    shape = costs.ModelShape.from_config({**costs.PRESETS["qwen3-8b"], "hidden_size": 5120,
                                          "num_attention_heads": 64})
    monkeypatch.setattr(costs, "preset", lambda key: shape)
    block.sizes.cache_clear()
    try:
        text = block.text_state("qwen3-8b")["holes:block"]["structure"]
        whole = block.heads_state("qwen3-8b")["source:heads_labels"]["text"]
    finally:
        block.sizes.cache_clear()
    assert "= the hidden size" not in text
    assert ("8,192, not the hidden size (d_model, 5,120): W_O, the output projection, maps "
            "8,192 back to 5,120") in text
    assert "W_O: 8,192 × 5,120" in whole


def test_the_static_table_holds_every_state():
    table = block.BlockPanel.table()
    (part,) = table["parts"]
    for i, model in enumerate(block.MODELS):
        assert part["values"][part["index"][i]] == block.BlockPanel.state(model=model)


def test_a_live_panel_holds_each_models_state():
    panel = block.BlockPanel()
    for model in (*block.MODELS, block.DEFAULT_MODEL):
        panel.param.update(model=model)
        assert_models_hold(panel, block.BlockPanel.state(model=model))


def test_it_opens_on_the_cost_panels_model_and_leaves_it_the_model_key():
    assert block.BlockPanel.param["model"].default == CostPanel.param["model"].default
    plan = url_state.chapter_plan(registry.chapter_panels("attention.md"),
                                  registry.follows("attention.md"))
    assert plan["block"] == {"block_model": "model"} and plan["cost"]["model"] == "model"
    assert block.BlockPanel.url_keys == ("model",)  # on its own page, plain `model`


def test_every_label_fits_its_fixed_width_figure():
    # 12 px type at about 7 px a character: a label centred at x must fit inside 0..WIDTH
    for model in block.MODELS:
        state = block.BlockPanel.state(model=model)
        for figure in ("model", "heads"):
            cols = state[f"source:{figure}_labels"]
            for x, text in zip(cols["x"], cols["text"]):
                half = len(text) * 7 / 2
                assert half <= x <= block.WIDTH - half, (model, text)


def test_the_records_place_it_after_the_ladder_and_before_the_cost_panel():
    slots = [r.slot for r in registry.PANELS if r.chapter == "attention.md"]
    assert slots.index("block") == slots.index("ladder") + 1
    assert slots.index("cost") == slots.index("block") + 1
    with states.static_build():
        assert block.BlockPanel().spec()["table_ref"].startswith("BlockPanel-")
