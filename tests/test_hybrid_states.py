"""A hybrid's fixed-size state (Mamba, Gated DeltaNet) against Transformers' own cache.

For each type config_families.STATES holds, random small configs are drawn with the type's own
config class (scripts/derive_families.py `draw`), with random state sizes and layer layouts;
each model is built on the meta device and run once with a cache, and every layer's state is
read off Transformers' cache (its LinearAttentionLayer's conv_states and recurrent_states). The
core must count the same layers, the same values per layer, and cache keys and values in the
same layers. Without torch or Transformers this fails: the dev extra is part of `make test`.
"""

import random
import sys
from pathlib import Path

import hf_oracle  # tests/ is on sys.path
import pytest

from attention_core import config_families, costs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import derive_families

pytestmark = pytest.mark.xdist_group("hybrid_states")
TOKENS = 5


def _gated_deltanet(r, layers):
    k = r.choice([1, 2])
    return {"linear_num_key_heads": k, "linear_num_value_heads": k * r.choice([1, 2]),
            "linear_key_head_dim": r.choice([4, 8]), "linear_value_head_dim": r.choice([4, 6]),
            "linear_conv_kernel_dim": r.choice([2, 3, 4]),
            "layer_types": ["linear_attention"] + [r.choice(["linear_attention", "full_attention"])
                                                   for _ in range(layers - 2)] + ["full_attention"]}


def _mamba2(r, layers, indices=None, types=None):
    heads, expand, hidden = r.choice([2, 4]), r.choice([1, 2]), r.choice([16, 32])
    out = {"hidden_size": hidden, "mamba_expand": expand, "mamba_n_heads": heads,
           "mamba_d_head": expand * hidden // heads, "mamba_n_groups": r.choice([1, 2]),
           "mamba_d_state": r.choice([4, 8]), "mamba_d_conv": r.choice([2, 4]),
           "mamba_chunk_size": 4, "num_attention_heads": 2, "num_key_value_heads": 1}
    if indices:
        out["attn_layer_indices"] = indices
    if types:
        out["layer_types"] = types
    return out


def _falcon_h1(r, layers):  # Mamba beside attention in every layer; d_ssm is heads x width
    out = _mamba2(r, layers)
    return {**out, "mamba_d_ssm": out["mamba_n_heads"] * out["mamba_d_head"]}


def _jamba(r):
    period, experts = r.choice([2, 3]), r.choice([1, 3])
    return {"mamba_d_state": r.choice([4, 8]), "mamba_d_conv": r.choice([2, 4]),
            "mamba_expand": r.choice([1, 2]), "attn_layer_period": period,
            "attn_layer_offset": r.randrange(period), "num_experts": experts,
            "num_experts_per_tok": 1}


def _mamba(r):
    return {"state_size": r.choice([4, 8]), "conv_kernel": r.choice([2, 4]),
            "expand": r.choice([1, 2]), "use_bias": r.random() < 0.3,
            "use_conv_bias": r.random() < 0.7}


GENERATORS = {
    "qwen3_next": _gated_deltanet, "qwen3_5_text": _gated_deltanet,
    "qwen3_5_moe_text": _gated_deltanet, "olmo_hybrid": _gated_deltanet,
    "bamba": lambda r, n: _mamba2(r, n, indices=sorted(r.sample(range(n), 1))),
    "granitemoehybrid": lambda r, n: _mamba2(r, n, types=["mamba"] + [
        r.choice(["mamba", "attention"]) for _ in range(n - 2)] + ["attention"]),
    "falcon_h1": lambda r, n: _falcon_h1(r, n),
    "nemotron_h": lambda r, n: {
        "mamba_num_heads": r.choice([2, 4]), "mamba_head_dim": r.choice([4, 8]),
        "n_groups": r.choice([1, 2]), "ssm_state_size": r.choice([4, 8]),
        "conv_kernel": r.choice([2, 4]), "expand": 2, "chunk_size": 4,
        "hybrid_override_pattern": "".join(r.choice("M*-") for _ in range(n - 1)) + "*"},
    "jamba": lambda r, n: _jamba(r),
    # Mamba and Falcon Mamba: every layer a mixer, none attends
    "mamba": lambda r, n: _mamba(r), "falcon_mamba": lambda r, n: _mamba(r),
}


def as_published(model_type, cfg, extra):  # Nemotron-H's Hub files spell its layout as a
    # pattern string beside num_hidden_layers (Transformers 5 writes layers_block_type)
    if model_type == "nemotron_h":
        cfg = {k: v for k, v in cfg.items() if k != "layers_block_type"}
        cfg.update(hybrid_override_pattern=extra["hybrid_override_pattern"],
                   num_hidden_layers=len(extra["hybrid_override_pattern"]))
    return cfg


def _numel(x) -> int:
    if x is None:
        return 0
    if isinstance(x, dict):
        return sum(_numel(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(_numel(v) for v in x)
    return x.numel()


def cache_of(model) -> list[tuple[int, bool]]:  # -> per layer (state values, keeps keys?)
    torch = hf_oracle._torch()[0]
    hf_oracle.pass_moe_through(model)
    model.config.pad_token_id = None
    ids = torch.zeros((1, TOKENS), dtype=torch.long, device="meta")
    with torch.no_grad():  # a cache_position: a cache of state layers alone has no length
        out = model(input_ids=ids, use_cache=True,
                    cache_position=torch.arange(TOKENS, device="meta"))
    cache = hf_oracle.output_cache(out)
    return [(_numel(getattr(layer, "conv_states", None))
             + _numel(getattr(layer, "recurrent_states", None)),
             getattr(layer, "keys", None) is not None) for layer in cache.layers]


def test_every_type_with_a_state_rule_is_drawn():
    assert set(GENERATORS) == set(config_families.STATES)


@pytest.mark.parametrize("model_type", sorted(config_families.STATES))
def test_the_state_and_the_cached_layers_equal_transformers(model_type):
    r = random.Random(f"states {model_type}")
    checked = 0
    while checked < 3:
        layers = r.randint(3, 5)
        extra = {"num_hidden_layers": layers, **GENERATORS[model_type](r, layers)}
        drawn = derive_families.draw(model_type, r, extra)
        assert drawn is not None, f"{model_type}: no draw builds"
        config, cfg = drawn
        cfg = as_published(model_type, cfg, extra)
        m = costs.ModelShape.from_config(cfg)  # before the forward, which edits the config
        held = cache_of(hf_oracle.build(config))
        states = [s for s, _ in held if s]
        assert m.state_layers == len(states) > 0, (model_type, cfg, held)
        assert set(states) == {m.state_per_layer}, (model_type, cfg, held)
        assert m.attention_layers == sum(keys for _, keys in held), (model_type, cfg, held)
        assert any(f"Each of the {m.state_layers} " in n for n in m.notes)
        checked += 1


# the hybrids whose mixers the family table counts (config_families' rows with a mixer's
# tensors per layer, per attention layer or per layer without attention)
COUNTED = ["bamba", "falcon_h1", "falcon_mamba", "granitemoehybrid", "jamba", "mamba",
           "olmo_hybrid", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next"]


@pytest.mark.parametrize("model_type", COUNTED)
def test_a_hybrids_parameters_equal_transformers(model_type):
    r = random.Random(f"parameters {model_type}")
    for i in range(4):
        layers = r.randint(3, 5)
        extra = {"num_hidden_layers": layers, **GENERATORS[model_type](r, layers),
                 "attention_bias": i % 2 == 1}
        drawn = derive_families.draw(model_type, r, extra)
        assert drawn is not None, f"{model_type}: no draw builds"
        config, cfg = drawn
        m = costs.ModelShape.from_config(cfg)
        truth = derive_families.truth(config)  # total, and matmul with k of E experts
        assert (costs.total_params(m), costs.matmul_params(m)) == (
            truth["total"], truth["matmul"]), (model_type, cfg)


def test_a_state_field_left_out_is_the_class_default_and_a_bad_one_is_said():
    cfg = {"model_type": "jamba", "hidden_size": 64, "intermediate_size": 128,
           "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 100, "attn_layer_period": 2, "attn_layer_offset": 1,
           "mamba_expand": 2, "mamba_d_conv": 4}
    m = costs.ModelShape.from_config(cfg)  # JambaConfig's mamba_d_state: 16
    assert (m.uncached_layers, m.state_layers, m.state_per_layer) == (2, 2, 128 * 4 + 128 * 16)
    assert any("defaults for model_type 'jamba'" in n and "mamba_d_state 16" in n
               for n in m.notes)
    # Jamba's row sizes its Mamba layers' weights by the same field: a bad one is refused
    with pytest.raises(costs.ConfigError, match="mamba_d_state: must be a positive integer"):
        costs.ModelShape.from_config({**cfg, "mamba_d_state": 0})
    # a type whose weights no rule reads (Nemotron-H): its state is not counted, said
    nemotron = {**cfg, "model_type": "nemotron_h", "mamba_num_heads": 4, "mamba_head_dim": 32,
                "n_groups": 1, "conv_kernel": 4, "hybrid_override_pattern": "M*M*",
                "ssm_state_size": 0}
    bad = costs.ModelShape.from_config(nemotron)
    assert (bad.uncached_layers, bad.state_layers) == (2, 0)
    assert ("The 2 Mamba-2 layers' fixed state is not counted: ssm_state_size is 0, not a whole "
            "number from 1 to 1,000,000.") in bad.notes
    assert any("any fixed state they keep is not counted" in n for n in bad.notes)
