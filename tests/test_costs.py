"""The cost model against the documents' own numbers and published model sizes.

Expected values are the figures the seed documents print (or vendors publish), not the
formula re-run: a test that recomputes the formula would pass with the formula wrong.
"""

import ast
import copy
import json
import math
import pathlib
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_core import config_families, costs
from attention_core.costs import (
    GPUS,
    MAX_CONFIG_BYTES,
    PRESET_NAMES,
    PRESETS,
    ConfigError,
    ModelShape,
    attention_flops_decode,
    attention_flops_prefill,
    crossover_tokens,
    decode_arithmetic_intensity,
    decode_attention_share,
    decode_dot_products,
    decode_score_flops,
    decode_value_flops,
    eager_score_matrix_bytes,
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    kv_outweighs_weights_context,
    matmul_params,
    moe_active_params,
    other_flops_decode,
    other_flops_prefill,
    pair_flops,
    parse_config_text,
    prefill_attention_share,
    prefill_pairs,
    preset,
    total_params,
    weight_bytes,
)

QWEN = preset("qwen3-8b")
GPT2 = preset("gpt2")
LLAMA = preset("llama-3-8b")


def shape(**overrides) -> ModelShape:  # a preset config with fields changed -> ModelShape
    cfg = copy.deepcopy(PRESETS["llama-3-8b"])
    cfg.update(overrides)
    return ModelShape.from_config(cfg)


def pct(x: float, digits: int = 0) -> float:
    return round(100 * x, digits)


# --- presets read as their config.json fields say (the configs table in costs.py) ----------

def test_presets_match_the_design_table():
    assert (QWEN.layers, QWEN.hidden, QWEN.intermediate, QWEN.heads, QWEN.kv_heads) == (
        36, 4096, 12288, 32, 8)
    assert (QWEN.head_dim, QWEN.vocab, QWEN.tied, QWEN.max_positions) == (
        128, 151936, False, 40960)
    assert (GPT2.layers, GPT2.hidden, GPT2.intermediate, GPT2.heads, GPT2.kv_heads) == (
        12, 768, 3072, 12, 12)
    assert (GPT2.head_dim, GPT2.vocab, GPT2.tied, GPT2.max_positions) == (64, 50257, True, 1024)
    assert (LLAMA.layers, LLAMA.hidden, LLAMA.intermediate, LLAMA.heads, LLAMA.kv_heads) == (
        32, 4096, 14336, 32, 8)
    assert (LLAMA.head_dim, LLAMA.vocab, LLAMA.tied, LLAMA.max_positions) == (
        128, 128256, False, 8192)
    assert (GPT2.mlp_matrices, QWEN.mlp_matrices, LLAMA.mlp_matrices) == (2, 3, 3)
    assert {k: preset(k).name for k in PRESETS} == PRESET_NAMES


def test_unknown_preset_names_the_choices():
    with pytest.raises(ConfigError) as e:
        preset("gpt-5")
    assert e.value.field == "model"
    assert "qwen3-8b" in e.value.problem and "llama-3-8b" in e.value.problem


def test_gpt2_n_inner_absent_means_four_times_hidden():
    cfg = {k: v for k, v in PRESETS["gpt2"].items() if k != "n_inner"}
    assert ModelShape.from_config(cfg).intermediate == 4 * 768


def test_published_parameter_counts():
    # GPT-2 small "124M" (with its learned positions), Llama 3 8B "8.03B"
    assert round(total_params(GPT2) / 1e6) == 124
    assert round(total_params(LLAMA) / 1e9, 2) == 8.03
    # Qwen3-8B's model card: 8.2B parameters
    assert round(total_params(QWEN) / 1e9, 1) == 8.2


def test_qwen3_8b_total_to_the_parameter():
    # Qwen3-8B, from its config.json, by hand (no biases, lm_head untied):
    #   attention: q 4,096 x 32 x 128 = 16,777,216; k, v 4,096 x 8 x 128 = 4,194,304 each;
    #              o 32 x 128 x 4,096 = 16,777,216                        ->    41,943,040
    #   MLP (gate, up, down): 3 x 4,096 x 12,288                          ->   150,994,944
    #   RMSNorms: input and post-attention 2 x 4,096, q_norm and k_norm
    #             one head_dim each (shared by every head) 2 x 128        ->         8,448
    #   one layer                                                         ->   192,946,432
    #   36 layers                                                         -> 6,946,071,552
    #   embedding and lm_head: 2 x 151,936 x 4,096                        -> 1,244,659,712
    #   final norm                                                        ->         4,096
    layer = (4096 * 32 * 128 + 2 * 4096 * 8 * 128 + 32 * 128 * 4096 + 3 * 4096 * 12288
             + 2 * 4096 + 2 * 128)
    assert layer == 192_946_432
    total = 36 * layer + 2 * 151_936 * 4096 + 4096
    assert total == 8_190_735_360  # the official figure
    assert total_params(QWEN) == total
    assert QWEN.small_params == 36 * (2 * 4096 + 2 * 128) + 4096 == 308_224


# --- scaled-dot-product-attention.txt: the cost panel -----------------------------------

def test_qwen3_pair_flops():
    assert pair_flops(QWEN) == 589_824


@pytest.mark.parametrize("n, expected, digits", [
    (4_096, 7.4, 1), (32_768, 39, 0), (131_072, 72, 0),
])
def test_qwen3_prefill_share(n, expected, digits):
    assert pct(prefill_attention_share(QWEN, n), digits) == expected


def test_qwen3_crossover_triangular_and_naive():
    tri, naive = crossover_tokens(QWEN), crossover_tokens(QWEN, "naive")
    assert round(tri) == math.floor(tri) == 51_324
    assert round(naive) == math.floor(naive) == 25_662


def test_crossover_is_where_attention_equals_the_rest():
    n = crossover_tokens(QWEN)
    assert attention_flops_prefill(QWEN, n) == pytest.approx(other_flops_prefill(QWEN, n))
    assert prefill_attention_share(QWEN, n) == pytest.approx(0.5)


def test_gpt2_crossover_and_its_ceiling():
    assert round(crossover_tokens(GPT2)) == 13_404
    assert round(crossover_tokens(QWEN) / crossover_tokens(GPT2), 1) == 3.8
    assert pct(prefill_attention_share(GPT2, GPT2.max_positions), 1) == 7.1


def test_qwen3_short_prompt_under_one_percent_in_both_phases():
    assert pct(prefill_attention_share(QWEN, 256), 2) == 0.50
    assert pct(decode_attention_share(QWEN, 256), 2) == 0.99


def test_eager_score_matrix_is_one_gib_at_4096():
    assert QWEN.heads == 32
    assert eager_score_matrix_bytes(QWEN, 4_096) == 2**30


def test_prefill_pair_conventions():
    assert prefill_pairs(QWEN, 8, "naive") == 64
    assert prefill_pairs(QWEN, 8, "triangular") == 32  # the documents' n^2/2, not 36
    with pytest.raises(ValueError):
        prefill_pairs(QWEN, 8, "flash")
    with pytest.raises(ValueError):
        crossover_tokens(QWEN, "flash")


# --- dot-products-softmax-attention-math.txt: the bill for one token --------------------

def test_llama_decode_bill_at_4096():
    assert decode_dot_products(LLAMA, 4_096) == 4_194_304
    assert round(attention_flops_decode(LLAMA, 4_096) / 1e9, 1) == 2.1
    assert round(decode_score_flops(LLAMA, 4_096) / 1e9, 2) == 1.07
    assert round(decode_value_flops(LLAMA, 4_096) / 1e9, 2) == 1.07
    assert round(other_flops_decode(LLAMA) / 1e9) == 15
    assert 0.12 < decode_attention_share(LLAMA, 4_096) < 0.13  # "~12%, ~1/8"


def test_llama_kv_bytes():
    assert kv_bytes_per_token_per_layer(LLAMA) == 4_096  # 4 KB
    assert kv_bytes_per_token(LLAMA) == 131_072  # 128 KB
    assert round(kv_cache_bytes(LLAMA, 4_096) / 1e9, 2) == 0.54  # "~0.5 GB"


def test_llama_arithmetic_intensity_against_h100_ridge():
    assert round(decode_arithmetic_intensity(LLAMA, 4_096)) == 4
    assert round(GPUS["h100-sxm"].ridge_point) == 295
    flops_per_byte = attention_flops_decode(LLAMA, 4_096) / kv_cache_bytes(LLAMA, 4_096)
    assert decode_arithmetic_intensity(LLAMA, 4_096) == pytest.approx(flops_per_byte)


def test_llama_memory_bill():
    assert round(weight_bytes(LLAMA) / 1e9) == 16
    assert 118_000 <= kv_outweighs_weights_context(LLAMA) <= 125_000  # "~120k tokens"
    assert round(kv_cache_bytes(LLAMA, 4_096, users=32) / 1e9, 1) == 17.2  # "~17 GB"


def test_llama_prefill_scratch_at_8192():
    per_head = eager_score_matrix_bytes(LLAMA, 8_192, bytes_per_value=1) / LLAMA.heads
    assert round(per_head / 1e6) == 67  # "~67M scores per head"
    assert round(eager_score_matrix_bytes(LLAMA, 8_192) / 1e9, 1) == 4.3  # "~4.3 GB"


def test_gpu_table():
    assert set(GPUS) == {"a100-80gb", "h100-sxm", "h200", "b200", "rtx-4090"}
    assert GPUS["a100-80gb"].peak_flops == 312e12 and GPUS["a100-80gb"].bandwidth == 2.039e12
    assert GPUS["h200"].bandwidth == 4.8e12 and GPUS["b200"].peak_flops == 2250e12
    assert GPUS["rtx-4090"].bandwidth == 1.008e12
    assert all(g.ridge_point > 100 for g in GPUS.values())


# --- mixture of experts: published totals -----------------------------------------------

MIXTRAL_8X7B = {  # mistralai/Mixtral-8x7B-v0.1 config.json (the fields read)
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
    "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "sliding_window": None, "tie_word_embeddings": False, "vocab_size": 32000,
}
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3 config.json (the fields read)
    "first_k_dense_replace": 3, "hidden_size": 7168, "intermediate_size": 18432,
    "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "tie_word_embeddings": False,
    "v_head_dim": 128, "vocab_size": 129280,
}
QWEN15_MOE = {  # Qwen/Qwen1.5-MoE-A2.7B config.json (the fields read)
    "decoder_sparse_step": 1, "hidden_size": 2048, "intermediate_size": 5632,
    "model_type": "qwen2_moe", "moe_intermediate_size": 1408, "num_attention_heads": 16,
    "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 16, "shared_expert_intermediate_size": 5632,
    "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 32768,
    "vocab_size": 151936,
}
QWEN3_30B_A3B = {  # Qwen/Qwen3-30B-A3B config.json (the fields read)
    "decoder_sparse_step": 1, "head_dim": 128, "hidden_size": 2048,
    "intermediate_size": 6144, "mlp_only_layers": [], "model_type": "qwen3_moe",
    "moe_intermediate_size": 768, "num_attention_heads": 32, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4,
    "tie_word_embeddings": False, "vocab_size": 151936,
}


def active_with_embedding(m: ModelShape) -> int:  # what model cards call "active"
    return matmul_params(m) + m.vocab * m.hidden


@pytest.mark.parametrize("cfg, active, total", [
    (MIXTRAL_8X7B, 12.9e9, 46.7e9),  # Mistral's announcement: 46.7B total, 12.9B per token
    (DEEPSEEK_V3, 37e9, 671e9),  # DeepSeek-V3 report: 671B total, 37B activated
    (QWEN15_MOE, 2.7e9, 14.3e9),  # Qwen1.5-MoE-A2.7B card: 14.3B total, 2.7B activated
    (QWEN3_30B_A3B, 3.3e9, 30.5e9),  # Qwen3-30B-A3B card: 30.5B total, 3.3B activated
])
def test_moe_active_and_total_match_published(cfg, active, total):
    m = ModelShape.from_config(cfg)
    # published figures are rounded ("12.9B"): a router's million hides in 3%; the exact
    # counts are test_moe_active_parameters_exactly_router_included's
    assert active_with_embedding(m) == pytest.approx(active, rel=0.03)
    assert total_params(m) == pytest.approx(total, rel=0.01)
    assert any("experts" in note for note in m.notes)


# The same four, to the parameter, worked by hand from the fields above. Per MoE layer a token
# uses the router (hidden x experts), the shared experts and k routed experts (gate, up, down:
# 3 x hidden x width each); matmul_params adds attention per layer, any dense MLPs, lm_head.
MOE_BY_HAND = {
    "mixtral-8x7b": {
        "cfg": MIXTRAL_8X7B,
        "router": 4096 * 8,  # 32,768
        "shared": 0,
        "routed": 2 * 3 * 4096 * 14336,  # 352,321,536
        "active": 352_354_304,
        # 32 layers x (attention q, o 2 x 4,096 x 4,096 + k, v 2 x 4,096 x 1,024 = 41,943,040
        # + 352,354,304) + lm_head 32,000 x 4,096
        "matmul": 32 * (41_943_040 + 352_354_304) + 32000 * 4096,
        "matmul_total": 12_748_587_008},
    "qwen3-30b-a3b": {
        "cfg": QWEN3_30B_A3B,
        "router": 2048 * 128,  # 262,144
        "shared": 0,
        "routed": 8 * 3 * 2048 * 768,  # 37,748,736
        "active": 38_010_880,
        # 48 layers x (attention q, o 2 x 2,048 x 4,096 + k, v 2 x 2,048 x 512 = 18,874,368
        # + 38,010,880) + lm_head 151,936 x 2,048
        "matmul": 48 * (18_874_368 + 38_010_880) + 151936 * 2048,
        "matmul_total": 3_041_656_832},
    "qwen1.5-moe-a2.7b": {
        "cfg": QWEN15_MOE,
        "router": 2048 * 60,  # 122,880
        "shared": 3 * 2048 * 5632,  # 34,603,008
        "routed": 4 * 3 * 2048 * 1408,  # 34,603,008
        "active": 69_328_896,
        # 24 layers x (attention 4 x 2,048 x 2,048 = 16,777,216 + 69,328,896 + the shared
        # expert's one-output gate 2,048) + lm_head 151,936 x 2,048
        "matmul": 24 * (16_777_216 + 69_328_896 + 2048) + 151936 * 2048,
        "matmul_total": 2_377_760_768},
    "deepseek-v3": {
        "cfg": DEEPSEEK_V3,
        "router": 7168 * 256,  # 1,835,008
        "shared": 3 * 7168 * 2048,  # one shared expert, 44,040,192
        "routed": 8 * 3 * 7168 * 2048,  # 352,321,536
        "active": 398_196_736,
        # MLA per layer: q 7,168 x 1,536 + 1,536 x 128 x (128 + 64); kv_a 7,168 x (512 + 64);
        # kv_b 512 x 128 x (128 + 128); o 128 x 128 x 7,168
        # = 48,758,784 + 4,128,768 + 16,777,216 + 117,440,512 = 187,105,280
        # 61 layers of attention, 3 dense MLPs 3 x 7,168 x 18,432 = 396,361,728,
        # 58 MoE layers, lm_head 129,280 x 7,168
        "matmul": 61 * 187_105_280 + 3 * 396_361_728 + 58 * 398_196_736 + 129280 * 7168,
        "matmul_total": 36_624_596_992},
}


@pytest.mark.parametrize("name", MOE_BY_HAND)
def test_moe_active_parameters_exactly_router_included(name):
    case = MOE_BY_HAND[name]
    # the hand sums agree with the totals written beside them
    assert case["router"] + case["shared"] + case["routed"] == case["active"]
    assert case["matmul"] == case["matmul_total"]
    m = ModelShape.from_config(case["cfg"])
    assert moe_active_params(m) == case["active"]
    assert matmul_params(m) == case["matmul_total"]


def test_moe_by_hand_totals():  # the MLA and attention sums in the comments above
    assert 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168 == (
        187_105_280)
    assert 2 * 4096 * 4096 + 2 * 4096 * 1024 == 41_943_040
    assert 2 * 2048 * 4096 + 2 * 2048 * 512 == 18_874_368
    assert 3 * 7168 * 18432 == 396_361_728


def test_deepseek_dense_layers_and_mla_cache():
    m = ModelShape.from_config(DEEPSEEK_V3)
    assert (m.dense_layers, m.moe_layers, m.mla) == (3, 58, True)
    assert kv_bytes_per_token_per_layer(m) == (512 + 64) * 2
    assert kv_bytes_per_token(m) == 61 * (512 + 64) * 2
    # decompressed: 128 heads score over 128 + 64 dims and sum 128 value dims
    assert pair_flops(m) == 2 * 61 * 128 * (192 + 128)
    assert decode_score_flops(m, 10) + decode_value_flops(m, 10) == attention_flops_decode(m, 10)
    assert any("decompressed" in note for note in m.notes)


def test_qwen_mlp_only_layers_are_dense():
    m = ModelShape.from_config({**QWEN3_30B_A3B, "mlp_only_layers": [0, 47]})
    assert (m.dense_layers, m.moe_layers) == (2, 46)


def test_unused_window_is_ignored():
    assert ModelShape.from_config(QWEN15_MOE).sliding_window is None


# --- sliding window ---------------------------------------------------------------------

MISTRAL_7B_V01 = {  # mistralai/Mistral-7B-v0.1 config.json (the fields read)
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
    "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "sliding_window": 4096, "tie_word_embeddings": False,
    "vocab_size": 32000,
}


def test_window_flattens_decode_and_caps_the_cache():
    m = ModelShape.from_config(MISTRAL_7B_V01)
    assert (m.sliding_window, m.sliding_layers) == (4096, 32)
    assert decode_attention_share(m, 32_768) == decode_attention_share(m, 4_096)
    assert decode_dot_products(m, 32_768) == 32 * 32 * 4_096
    assert kv_cache_bytes(m, 32_768) == kv_cache_bytes(m, 4_096)
    assert any("Sliding window" in note for note in m.notes)


def test_small_window_means_no_crossover_and_no_cache_overtake():
    m = ModelShape.from_config(MISTRAL_7B_V01)
    assert crossover_tokens(m) == math.inf  # pair_flops x 4096 < 2 x matmul_params
    assert math.isfinite(crossover_tokens(m, "naive"))  # a naive kernel pays the square
    assert kv_outweighs_weights_context(m) == math.inf  # 0.5 GB of cache, ~14 GB of weights
    assert kv_outweighs_weights_context(m, users=32) < 4_096  # 32 caches do outweigh them


def test_banded_prefill_pairs():
    m = ModelShape.from_config(MISTRAL_7B_V01)
    assert prefill_pairs(m, 4_096) == 4_096**2 / 2
    assert prefill_pairs(m, 10_000) == 4_096**2 / 2 + (10_000 - 4_096) * 4_096
    assert prefill_pairs(m, 10_000, "naive") == 10_000**2  # computes, then masks


def test_mixed_layers_move_the_crossover_out():
    types = ["sliding_attention", "full_attention"] * 16
    m = shape(sliding_window=1024, layer_types=types)
    assert m.sliding_layers == 16
    n = crossover_tokens(m)
    assert n > crossover_tokens(LLAMA)
    assert attention_flops_prefill(m, n) == pytest.approx(other_flops_prefill(m, n))


def test_all_sliding_layers_with_a_wide_window_still_cross():
    m = shape(sliding_window=60_000)  # the unwindowed crossover (57,256) lies inside it
    assert crossover_tokens(m) == pytest.approx(crossover_tokens(LLAMA))
    m = shape(sliding_window=40_000)  # beyond the window: linear growth still catches up
    n = crossover_tokens(m)
    assert 40_000 < n < math.inf
    assert attention_flops_prefill(m, n) == pytest.approx(other_flops_prefill(m, n))


def test_cache_outweighs_weights_past_the_window_with_full_layers():
    m = shape(sliding_window=1024, layer_types=["sliding_attention", "full_attention"] * 16)
    n = kv_outweighs_weights_context(m)
    assert 1024 < n < math.inf
    assert kv_cache_bytes(m, n) == pytest.approx(weight_bytes(m))


# --- parsing: every failure is a ConfigError naming the field ---------------------------

def config_text(**overrides) -> str:
    return json.dumps({**PRESETS["llama-3-8b"], **overrides}, ensure_ascii=False)


def raises_config_error(text) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        ModelShape.from_config(parse_config_text(text))
    return e.value


@pytest.mark.parametrize("text", [
    '{"num_hidden_layers": 32,', "hidden_size = 4096", "{'a': 1}",
], ids=["truncated", "toml-ish", "single-quotes"])
def test_not_json(text):
    assert raises_config_error(text).field == "config.json"


@pytest.mark.parametrize("text", ["[1, 2]", '"llama"', "32", "null"])
def test_not_an_object(text):
    e = raises_config_error(text)
    assert e.field == "config.json" and "object" in e.problem


def test_over_one_megabyte():
    text = config_text(padding="x" * MAX_CONFIG_BYTES)
    assert raises_config_error(text).field == "config.json"
    assert raises_config_error(text.encode()).field == "config.json"


def test_multibyte_text_is_measured_in_bytes():
    text = config_text(padding="é" * (MAX_CONFIG_BYTES // 2 + 10))  # fewer chars than bytes
    assert len(text) < MAX_CONFIG_BYTES < len(text.encode())
    assert "bytes" in raises_config_error(text).problem


@pytest.mark.parametrize("text", ["", "   \n\t", b""])
def test_empty(text):
    e = raises_config_error(text)
    assert e.field == "config.json" and "empty" in e.problem


@pytest.mark.parametrize("data", [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", bytes(range(256)), b'{"a": "\xff\xfe"}',
])
def test_binary(data):
    assert raises_config_error(data).field == "config.json"


@pytest.mark.parametrize("key", [
    "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size",
    "intermediate_size",
])
def test_missing_required_field(key):
    cfg = {k: v for k, v in PRESETS["llama-3-8b"].items() if k != key}
    e = raises_config_error(json.dumps(cfg))
    assert e.field == key and "missing" in e.problem


def test_missing_field_named_in_gpt2_spelling():
    cfg = {k: v for k, v in PRESETS["gpt2"].items() if k != "n_layer"}
    cfg["n_layer"] = 0
    assert raises_config_error(json.dumps(cfg)).field == "n_layer"


@pytest.mark.parametrize("value", [0, -4, 32.0, 32.5, True, "32", None, [32], {"n": 32}],
                         ids=["zero", "negative", "float", "fraction", "bool", "string",
                              "null", "list", "object"])
def test_bad_count(value):
    e = raises_config_error(config_text(num_hidden_layers=value))
    assert e.field == "num_hidden_layers"
    assert str(e) == f"num_hidden_layers: {e.problem}"


def test_bad_count_message_shows_the_value():
    assert raises_config_error(config_text(num_attention_heads=32.0)).problem == (
        "must be a positive integer, got 32.0")


@pytest.mark.parametrize("key, value", [
    ("num_hidden_layers", 10_001), ("hidden_size", 1_000_001), ("num_attention_heads", 100_001),
    ("vocab_size", 100_000_001), ("intermediate_size", 10_000_001), ("num_hidden_layers", 10**400),
])
def test_absurd_counts(key, value):
    assert raises_config_error(config_text(**{key: value})).field == key


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers(token):
    text = config_text(num_hidden_layers=0).replace(
        '"num_hidden_layers": 0', f'"num_hidden_layers": {token}')
    e = raises_config_error(text)
    assert e.field == "num_hidden_layers" and "finite" in e.problem


def test_non_finite_number_in_an_unused_nested_field():
    text = config_text(rope_scaling={"factor": 0}).replace('"factor": 0', '"factor": NaN')
    assert raises_config_error(text).field == "rope_scaling.factor"


def test_heads_not_dividing_hidden_without_head_dim():
    e = raises_config_error(config_text(num_attention_heads=30, num_key_value_heads=10))
    assert e.field == "num_attention_heads"
    # with head_dim given, the division is not needed (Gemma-style)
    m = ModelShape.from_config(parse_config_text(
        config_text(num_attention_heads=30, num_key_value_heads=10, head_dim=256)))
    assert m.head_dim == 256


def test_kv_heads_not_dividing_heads():
    assert raises_config_error(config_text(num_key_value_heads=5)).field == (
        "num_key_value_heads")


def test_ten_thousand_deep_nesting():
    text = '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}"
    e = raises_config_error(text)
    assert e.field == "config.json" and "deep" in e.problem


def test_moderate_nesting_past_the_limit():
    text = '{"a": ' + "[" * 100 + "]" * 100 + "}"
    assert "64" in raises_config_error(text).problem


def test_html_in_values_is_only_data():
    e = raises_config_error(config_text(hidden_size="<script>alert(1)</script>"))
    assert e.field == "hidden_size" and "<script>" in e.problem


def test_text_config_is_read():
    cfg = {"model_type": "llava", "vision_config": {"hidden_size": 1024},
           "text_config": PRESETS["llama-3-8b"]}
    m = ModelShape.from_config(parse_config_text(json.dumps(cfg)))
    assert matmul_params(m) == matmul_params(LLAMA)
    assert raises_config_error('{"text_config": [1]}').field == "text_config"


def test_config_error_is_a_picklable_value_error():
    e = ConfigError("vocab_size", "is missing")
    assert isinstance(e, ValueError) and str(e) == "vocab_size: is missing"
    back = pickle.loads(pickle.dumps(e))
    assert (back.field, back.problem) == ("vocab_size", "is missing")


# --- property: any JSON-ish input gives a shape with sane costs, or a ConfigError -------

FIELDS = sorted({
    "num_hidden_layers", "n_layer", "hidden_size", "n_embd", "num_attention_heads", "n_head",
    "vocab_size", "intermediate_size", "n_inner", "num_key_value_heads", "head_dim",
    "model_type", "tie_word_embeddings", "max_position_embeddings", "n_positions",
    "sliding_window", "use_sliding_window", "layer_types", "max_window_layers",
    "sliding_window_pattern", "num_local_experts", "num_experts", "n_routed_experts",
    "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
    "n_shared_experts", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
    "mlp_only_layers", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "text_config", "_name_or_path",
    # the other families' spellings (config_families.py)
    "ffn_dim", "n_embed", "num_kv_heads", "n_head_kv", "multi_query", "new_decoder_architecture",
    "ffn_hidden_size", "d_model", "n_heads", "n_layers", "expansion_ratio", "attn_config",
    "max_seq_len", "num_layers", "num_heads", "window_size", "attention_types",
})
json_leaf = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
             | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=8)
field_value = (st.integers(-2, 70) | st.sampled_from([1, 2, 4, 8, 64, 128, 4096, 10_001, 2**63])
               | st.lists(st.sampled_from(["sliding_attention", "full_attention"]), max_size=40)
               | st.sampled_from(["gpt2", "mixtral", "deepseek_v3", "qwen3_moe", "gemma2", "opt",
                                 "falcon", "RefinedWeb", "bloom", "gptj", "gpt_neo", "mpt",
                                 "gemma3_text"])
               | st.fixed_dictionaries({"kv_n_heads": st.integers(-2, 70)})
               | st.lists(st.tuples(st.lists(st.sampled_from(["global", "local"]), max_size=3),
                                    st.integers(0, 30)).map(list), max_size=3)
               | json_value)
random_config = st.dictionaries(st.sampled_from(FIELDS), field_value, max_size=12)
FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "configs"
BASES = [*PRESETS.values(), *(json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))),
         MIXTRAL_8X7B, DEEPSEEK_V3, QWEN15_MOE, QWEN3_30B_A3B,
         MISTRAL_7B_V01, {**PRESETS["llama-3-8b"], "sliding_window": 512,
                          "layer_types": ["sliding_attention", "full_attention"] * 16}]
mutated_config = st.builds(
    lambda base, changes: {**base, **changes},
    st.sampled_from(BASES), st.dictionaries(st.sampled_from(FIELDS), field_value, max_size=3))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_config | mutated_config)
def test_any_config_gives_sane_costs_or_config_error(cfg):
    text = json.dumps(cfg, allow_nan=True)
    try:
        m = ModelShape.from_config(parse_config_text(text))
    except ConfigError as e:
        assert e.field and e.problem
        return
    finite_positive = [
        matmul_params(m), total_params(m), pair_flops(m), kv_bytes_per_token(m),
        weight_bytes(m), attention_flops_prefill(m, 4_096), attention_flops_decode(m, 4_096),
        other_flops_decode(m), kv_cache_bytes(m, 4_096), decode_arithmetic_intensity(m, 4_096),
    ]
    assert all(math.isfinite(x) and x > 0 for x in finite_positive)
    for n in (1, 512, 100_000):
        assert 0 <= prefill_attention_share(m, n) <= 1
        assert 0 <= decode_attention_share(m, n) <= 1
    assert crossover_tokens(m) > 0 and crossover_tokens(m, "naive") > 0
    assert kv_outweighs_weights_context(m) > 0


# --- vectorised over lengths ------------------------------------------------------------

WINDOWED = ModelShape.from_config(MISTRAL_7B_V01)
LENGTH_FUNCTIONS = [
    lambda m, n: prefill_pairs(m, n, "naive"), prefill_pairs, attention_flops_prefill,
    other_flops_prefill, prefill_attention_share, attention_flops_decode,
    decode_attention_share, decode_dot_products, decode_score_flops, decode_value_flops,
    kv_cache_bytes, decode_arithmetic_intensity, eager_score_matrix_bytes,
]


@pytest.mark.parametrize("m", [QWEN, WINDOWED], ids=["qwen3", "mistral-window"])
@pytest.mark.parametrize("fn", LENGTH_FUNCTIONS)
def test_arrays_in_arrays_out(fn, m):
    lengths = np.array([0, 1, 256, 4_095, 4_096, 4_097, 131_072])
    out = fn(m, lengths)
    assert isinstance(out, np.ndarray) and out.shape == lengths.shape
    scalars = [fn(m, int(n)) for n in lengths]
    assert all(isinstance(s, float) for s in scalars)
    np.testing.assert_allclose(out, scalars, rtol=1e-12)


def test_users_vectorise_too():
    users = np.array([1, 8, 32])
    out = kv_outweighs_weights_context(WINDOWED, users)
    np.testing.assert_allclose(out, [kv_outweighs_weights_context(WINDOWED, int(u))
                                     for u in users])


# --- purity -----------------------------------------------------------------------------

def imports(module) -> set[str]:  # -> the modules a file imports, dotted
    tree = ast.parse(pathlib.Path(module.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module + ("." + alias.name if node.module == "attention_core" else "")
                 for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
    return imported


def test_costs_imports_only_numpy_stdlib_and_its_table():
    assert imports(costs) <= {"__future__", "json", "math", "dataclasses", "typing", "numpy",
                              "attention_core.config_families"}
    # plain data, its derived part read from JSON, and lookups: portable as is
    assert imports(config_families) == {"json", "pathlib"}


def test_an_expansion_ratio_transformers_ignores_is_said_not_refused():
    # Transformers' MPT builds 4 x d_model whatever the ratio: even 1e308 is only noted
    cfg = {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
           "vocab_size": 50432, "max_seq_len": 2048, "expansion_ratio": 1e308}
    m = costs.ModelShape.from_config(cfg)
    assert m.intermediate == 4 * 4096
    assert any(n.startswith("expansion_ratio is 1e+308: Transformers' MPT") for n in m.notes)
