"""The families a hand-typed table missed, each worked out by hand and built by Transformers.

Llama 4 (a shared expert in every MoE layer, dense layers of another width, chunked attention
cached like a window), gpt-oss (attention sinks, biases everywhere), SmolLM3 (tied by its
class's default, which its published file leaves out); a type Transformers ships that no rule
counts, one it does not ship, and the formats the core refuses, in the CLI's text and JSON;
Qwen3.5-MoE (no dense width), OLMoE (experts as wide as intermediate_size) and a multimodal
wrapper (Gemma 3: the language model and its head are what is counted).
Every expected number below is arithmetic on the config's own sizes, written out.
"""

import json
import subprocess
import sys

import hf_oracle  # tests/ is on sys.path; without torch or transformers this fails, not skips
import pytest

from attention_core import costs


def shape(cfg: dict) -> costs.ModelShape:
    return costs.ModelShape.from_config(cfg)


def built(model_type: str, **sizes):  # -> (the written config, Transformers' own counts)
    from transformers import AutoConfig
    config = AutoConfig.for_model(model_type, **sizes)
    cfg = {**hf_oracle.written(config), "model_type": model_type}
    truth = hf_oracle.parameters(hf_oracle.build(config))
    return cfg, truth


# Llama 4 Scout's text model (meta-llama/Llama-4-Scout-17B-16E's text_config; these are also
# Llama4TextConfig's defaults)
SCOUT = {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
         "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
         "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
         "attention_chunk_size": 8192, "no_rope_layers": [], "tie_word_embeddings": False,
         "max_position_embeddings": 10485760}


def test_llama4_scout_counts_its_shared_expert():
    h, i, e, layers, vocab = 5120, 8192, 16, 48, 202048
    attention = h * 40 * 128 + 2 * h * 8 * 128 + 40 * 128 * h
    routed, shared, router, norms = e * 3 * h * i, 3 * h * i, h * e, 2 * h
    total = layers * (attention + routed + shared + router + norms) + 2 * vocab * h + h
    active = layers * (attention + 1 * 3 * h * i + shared + router) + vocab * h
    m = shape(SCOUT)
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, active)
    assert total == 107_769_861_120 and active == 16_137_912_320  # 17 B with the embedding
    cfg, truth = built("llama4_text", **{k: v for k, v in SCOUT.items() if k != "model_type"})
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == hf_oracle.active_linear(truth, 1)


def test_llama4_maverick_interleaves_dense_layers_of_their_own_width():
    cfg = {**SCOUT, "num_local_experts": 128, "interleave_moe_layer_step": 2}
    h, i, mlp = 5120, 8192, 16384
    m = shape(cfg)
    assert (m.moe_layers, m.dense_layers, m.intermediate) == (24, 24, mlp)
    dense, moe = 3 * h * mlp, 128 * 3 * h * i + 3 * h * i + h * 128
    attention = h * 40 * 128 + 2 * h * 8 * 128 + 40 * 128 * h
    assert costs.total_params(m) == (48 * (attention + 2 * h) + 24 * dense + 24 * moe
                                     + 2 * 202048 * h + h)
    built_cfg, truth = built("llama4_text", **{k: v for k, v in cfg.items()
                                                if k != "model_type"})
    assert costs.total_params(shape(built_cfg)) == truth["total"]
    listed = {**SCOUT, "moe_layers": [1, 5, 9]}  # a list wins over the step
    assert shape(listed).moe_layers == 3


def test_llama4_chunked_layers_cache_at_most_a_chunk():
    m = shape(SCOUT)
    # no_rope_layers empty: every 4th layer is full, the other 36 attend in chunks of 8,192
    assert (m.sliding_window, m.sliding_layers) == (8192, 36)
    per_token = 2 * 8 * 128 * 2  # keys and values, 8 KV heads of 128, bf16
    assert costs.kv_cache_bytes(m, 131072) == per_token * (12 * 131072 + 36 * 8192)
    assert costs.kv_cache_bytes(m, 131072) == 7_650_410_496  # not 25.8 GB: 3.4x less
    assert any(n.startswith("Chunked attention of 8,192 tokens on 36 of 48") for n in m.notes)
    listed = shape({**SCOUT, "no_rope_layers": [1, 0] * 24})
    assert listed.sliding_layers == 24
    typed = shape({**SCOUT, "layer_types": ["chunked_attention"] * 47 + ["full_attention"]})
    assert typed.sliding_layers == 47
    with pytest.raises(costs.ConfigError, match="no_rope_layers: must be 48 ones and zeros"):
        shape({**SCOUT, "no_rope_layers": [1, 2] * 24})


# openai/gpt-oss-120b's config (GptOssConfig's defaults)
GPT_OSS = {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
           "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8,
           "head_dim": 64, "vocab_size": 201088, "num_local_experts": 128,
           "num_experts_per_tok": 4, "sliding_window": 128, "attention_bias": True,
           "tie_word_embeddings": False, "max_position_embeddings": 131072,
           "layer_types": ["sliding_attention", "full_attention"] * 18}


def test_gpt_oss_counts_its_sinks_and_biases():
    h, i, e, q, kv = 2880, 2880, 128, 64 * 64, 8 * 64
    attention = h * q + 2 * h * kv + q * h
    biases = q + 2 * kv + h  # q, k, v and o
    sinks = 64  # one learned logit per head
    experts = e * (h * 2 * i + i * h) + e * (2 * i + h)  # gate_up and down, with their biases
    router = h * e + e  # a weight and a bias
    per_layer = attention + biases + sinks + experts + router + 2 * h
    total = 36 * per_layer + 2 * 201088 * h + h
    assert costs.total_params(shape(GPT_OSS)) == total == 116_829_156_672
    cfg, truth = built("gpt_oss", **{k: v for k, v in GPT_OSS.items() if k != "model_type"})
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == hf_oracle.active_linear(truth, 4)


def test_smollm3_is_tied_as_its_class_says_when_its_file_is_silent():
    cfg = {"model_type": "smollm3", "hidden_size": 2048, "intermediate_size": 11008,
           "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
           "vocab_size": 128256, "max_position_embeddings": 65536}
    m = shape(cfg)
    assert m.tied and not any("assumed untied" in n for n in m.notes)
    untied = shape({**cfg, "tie_word_embeddings": False})
    assert costs.total_params(untied) - costs.total_params(m) == 128256 * 2048  # 263 M
    _, truth = built("smollm3", **{k: v for k, v in cfg.items() if k != "model_type"})
    assert costs.total_params(m) == truth["total"]


# deepseek-ai/DeepSeek-V3's sizes
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
               "moe_intermediate_size": 2048, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
               "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
               "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512,
               "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def test_deepseek_with_attention_bias_counts_its_latent_projections_biases():
    # DeepSeek-V3's sizes with attention_bias set: q_a_proj (to the q latent),
    # kv_a_proj_with_mqa (to the kv latent and the shared RoPE key) and o_proj gain biases;
    # q_b_proj and kv_b_proj never have one
    v3 = {**DEEPSEEK_V3, "attention_bias": False}
    per_layer = 1536 + (512 + 64) + 7168
    with_bias = shape({**v3, "attention_bias": True})
    assert costs.total_params(with_bias) - costs.total_params(shape(v3)) == 61 * per_layer
    assert costs.matmul_params(with_bias) == costs.matmul_params(shape(v3))
    small = {"hidden_size": 48, "intermediate_size": 40, "moe_intermediate_size": 12,
             "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
             "vocab_size": 300, "n_routed_experts": 4, "n_shared_experts": 1,
             "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 16,
             "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
             "attention_bias": True}
    for q_rank in (24, None):  # a low-rank q has its latent's bias; a full-rank one none
        cfg, truth = built("deepseek_v3", **small, q_lora_rank=q_rank)
        assert costs.total_params(shape(cfg)) == truth["total"], q_rank


def test_deepseek_v2_with_mlp_bias_counts_its_dense_and_shared_experts_biases():
    # DeepSeek-V2 alone reads mlp_bias: each dense layer's MLP gains gate, up (intermediate
    # wide) and down (hidden) biases, and so does each MoE layer's shared-expert MLP
    # (n_shared_experts x moe_intermediate_size wide); the routed experts never have one
    h, i, moe_i, shared, layers, dense = 48, 40, 12, 2, 4, 1
    small = {"hidden_size": h, "intermediate_size": i, "moe_intermediate_size": moe_i,
             "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 4,
             "vocab_size": 300, "n_routed_experts": 4, "n_shared_experts": shared,
             "num_experts_per_tok": 2, "first_k_dense_replace": dense, "kv_lora_rank": 16,
             "q_lora_rank": 24, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
             "topk_method": "greedy"}
    biases = dense * (2 * i + h) + (layers - dense) * (2 * shared * moe_i + h)
    without, _ = built("deepseek_v2", **small, mlp_bias=False)
    cfg, truth = built("deepseek_v2", **small, mlp_bias=True)
    assert costs.total_params(shape(cfg)) - costs.total_params(shape(without)) == biases
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == costs.matmul_params(shape(without))


def test_deepseek_v3_2s_indexer_is_counted_on_each_layer_that_runs_one():
    # DeepSeek-V3.2 is DeepSeek-V3 with a sparse-attention indexer on every layer: wq_b from
    # q's latent to index_n_heads heads of index_head_dim, wk from the hidden state to one
    # key of index_head_dim, its LayerNorm (weight and bias), and weights_proj, one weight
    # per indexer head; every matrix runs for each token
    v3 = DEEPSEEK_V3
    v32 = {**v3, "model_type": "deepseek_v32", "index_n_heads": 64, "index_head_dim": 128}
    matrices = 64 * 128 * 1536 + 128 * 7168 + 64 * 7168
    assert costs.matmul_params(shape(v32)) - costs.matmul_params(shape(v3)) == 61 * matrices
    assert costs.total_params(shape(v32)) - costs.total_params(shape(v3)) == \
        61 * (matrices + 2 * 128)
    assert costs.kv_bytes_per_token(shape(v32), 2) == costs.kv_bytes_per_token(shape(v3), 2)
    # GLM-5's layers marked "shared" reuse the last full layer's choice and hold no indexer
    small = {"hidden_size": 32, "intermediate_size": 40, "moe_intermediate_size": 12,
             "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
             "vocab_size": 300, "n_routed_experts": 4, "n_shared_experts": 1,
             "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 16,
             "q_lora_rank": 24, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
             "index_n_heads": 2, "index_head_dim": 16}
    every, _ = built("glm_moe_dsa", **small, indexer_types=["full"] * 4)
    cfg, truth = built("glm_moe_dsa", **small, indexer_types=["full", "shared", "full", "shared"])
    one = 2 * 16 * 24 + 16 * 32 + 2 * 32 + 2 * 16
    assert costs.total_params(shape(every)) - costs.total_params(shape(cfg)) == 2 * one
    assert costs.total_params(shape(cfg)) == truth["total"]


def test_an_older_class_is_read_under_its_own_names():
    # CTRL names its sizes n_layer, n_embd, n_head and dff: per layer q, k, v and o with
    # biases, a plain MLP (dff wide, biases), two LayerNorms; a tied table, its final
    # LayerNorm and lm_head's bias
    h, dff, layers, vocab = 32, 40, 3, 300
    cfg, truth = built("ctrl", n_layer=layers, n_embd=h, n_head=4, dff=dff, vocab_size=vocab,
                       n_positions=64)
    per_layer = 4 * h * h + 4 * h + 2 * h * dff + dff + h + 2 * 2 * h
    m = shape(cfg)
    assert (m.layers, m.hidden, m.intermediate, m.mlp_matrices) == (layers, h, dff, 2)
    assert costs.total_params(m) == layers * per_layer + vocab * h + 2 * h + vocab
    assert costs.total_params(m) == truth["total"]
    # XGLM's: num_layers, d_model, attention_heads, ffn_dim; one K and one V a layer
    cfg, truth = built("xglm", num_layers=2, d_model=48, attention_heads=6, ffn_dim=56,
                       vocab_size=300)
    m = shape(cfg)
    assert (m.layers, m.hidden, m.heads, m.intermediate) == (2, 48, 6, 56)
    assert costs.total_params(m) == truth["total"]
    assert costs.kv_bytes_per_token(m, 1) == 2 * 2 * 48


def test_a_multimodal_ropes_text_model_caches_what_the_core_counts():
    # Qwen2.5-VL's text model at small random sizes: its forward runs once its RoPE sections
    # fit the head (hf_oracle sizes them), and its cache holds the core's KV
    cfg, _ = built("qwen2_5_vl_text", **SMALL, num_key_value_heads=2)
    from transformers import AutoConfig
    config = AutoConfig.for_model("qwen2_5_vl_text", **SMALL, num_key_value_heads=2)
    truth = hf_oracle.truth(config)
    per_token = 2 * 2 * 2 * 16  # layers, k and v, KV heads, head width (64 / 4)
    assert sum(k + v for k, v in truth["kv_widths"]) == per_token
    assert costs.kv_bytes_per_token(shape(cfg), 1) == per_token
    assert hf_oracle.differences({"family": "qwen2_5_vl_text", "config": cfg,
                                  "truth": truth}) == {}


SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 1000}


def cli(cfg: dict, *flags) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.hosting.cli", "costs", "--config", "-",
                           "--prompt", "100", *flags], input=json.dumps(cfg),
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("model_type, says", [
    ("lfm3", "'lfm3' is a Transformers {v} model this version has no rule for"),
    ("mystery", "'mystery' is not one this version knows (nor Transformers {v})"),
])
def test_a_type_no_rule_counts_is_named_in_one_line(model_type, says):
    import transformers
    says = says.format(v=transformers.__version__)
    text = cli({**SMALL, "model_type": model_type})
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    line = next(i for i, t in enumerate(lines) if says in t)
    # beside the figure it affects: straight after the matmul parameters
    assert lines[line - 1].lstrip().startswith("matmul parameters")
    assert "total and matmul parameters may be off" in lines[line]
    data = json.loads(cli({**SMALL, "model_type": model_type}, "--json").stdout)
    assert sum(says in n for n in data["notes"]) == 1
    known = json.loads(cli({**SMALL, "model_type": "llama"}, "--json").stdout)
    assert not any("no rule for" in n or "not one this version knows" in n
                   for n in known["notes"])


@pytest.mark.parametrize("cfg, says", [
    ({**SMALL, "model_type": "bart", "is_encoder_decoder": True},
     "model_type: 'bart' is an encoder-decoder; this version reads decoder-only models"),
    ({**SMALL, "model_type": "t5-like", "is_encoder_decoder": True},
     "model_type: 't5-like' is an encoder-decoder"),
    ({"model_type": "chatglm", "num_layers": 28, "hidden_size": 4096, "ffn_hidden_size": 13696,
      "multi_query_group_num": 2, "kv_channels": 128, "padded_vocab_size": 65024},
     "multi_query_group_num: is ChatGLM's format"),
    ({**SMALL, "model_type": "nemotron-nas", "block_configs": [{"attention": {}}]},
     "block_configs: is Nemotron-NAS's format"),
])
def test_a_format_not_read_is_refused_by_name(cfg, says):
    out = cli(cfg)
    assert out.returncode == 2 and says in out.stderr, out.stderr
    assert "intermediate_size is missing" not in out.stderr
    with pytest.raises(costs.ConfigError, match="format|encoder-decoder"):
        shape(cfg)


def test_a_hybrid_caches_only_its_attention_layers():
    """Qwen3-Next (its class's defaults, Qwen3-Next-80B-A3B): 36 of 48 layers are linear
    attention, holding a fixed-size state; only the 12 full-attention layers cache keys and
    values, as Transformers' own cache for the config holds them."""
    from transformers import AutoConfig, DynamicCache
    config = AutoConfig.for_model("qwen3_next")
    cfg = {**hf_oracle.written(config), "model_type": "qwen3_next"}
    kinds = [type(layer).__name__ for layer in DynamicCache(config=config).layers]
    growing = kinds.count("DynamicLayer")  # the layers whose keys and values grow
    m = shape(cfg)
    assert (m.attention_layers, m.uncached_layers) == (growing, len(kinds) - growing) == (12, 36)
    per_token = 12 * 2 * 2 * 256 * 2  # layers, keys and values, KV heads, head_dim, bf16
    assert costs.kv_bytes_per_token(m) == per_token == 24_576  # not 98,304 for all 48
    assert costs.kv_cache_bytes(m, 32768) == per_token * 32768
    assert costs.decode_dot_products(m, 100) == 12 * 16 * 100  # attention layers x heads x keys
    assert any(n.startswith("36 of 48 layers (linear_attention) hold no KV cache")
               for n in m.notes)
    assert "36 of 48 layers hold no KV cache" in costs.cache_convention(m)
    none_attend = shape({**cfg, "layer_types": ["linear_attention"] * 48})
    assert costs.kv_bytes_per_token(none_attend) == 0
    assert costs.crossover_tokens(none_attend) == float("inf")
    assert costs.decode_arithmetic_intensity(none_attend, 10) == 0


# Qwen3-Next-80B-A3B's config.json as published (Transformers 4 era): its layout as
# full_attention_interval, no layer_types
QWEN3_NEXT_80B = {
    "model_type": "qwen3_next", "hidden_size": 2048, "intermediate_size": 5120,
    "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
    "head_dim": 256, "vocab_size": 151936, "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32, "num_experts": 512,
    "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "max_position_embeddings": 262144, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def test_a_hybrids_fixed_state_is_its_own_figure():
    """Worked by hand: every 4th of 48 layers is full attention, so 36 are Gated DeltaNet. Each
    keeps, per user, a convolution over q, k and v of (2 x 16 x 128 + 32 x 128) channels by a
    4-wide kernel, 32,768 values, and a 128 x 128 state for each of 32 value heads, 524,288:
    557,056 a layer, 20,054,016 in all, 40,108,032 bytes in bf16 whatever the context."""
    m = shape(QWEN3_NEXT_80B)
    assert (m.attention_layers, m.uncached_layers) == (12, 36)
    assert (m.state_layers, m.state_per_layer) == (36, 32_768 + 524_288)
    assert costs.state_bytes(m, 1, 2) == 40_108_032 and costs.state_bytes(m, 3, 1) == 60_162_048
    assert costs.kv_bytes_per_token(m) == 24_576  # the cache grows in the other 12 alone
    assert "Each of the 36 Gated DeltaNet layers keeps a fixed state per user instead of a KV " \
        "cache, at any context: 557,056 values a layer (32,768 convolution, 524,288 " \
        "recurrent), 20,054,016 in all." in m.notes
    assert "they keep a fixed state, its own figure" in costs.cache_convention(m)
    plain = shape(costs.PRESETS["qwen3-8b"])
    assert (plain.state_layers, costs.state_bytes(plain)) == (0, 0)


def qwen3_next_layers(h, heads, kv, hd):  # -> (an attention layer's matrices, a Gated
    # DeltaNet layer's matrices, its small tensors) as Qwen3-Next and Qwen3.5 size them: 16 key
    # heads of 128, 32 value heads of 128, a 4-wide convolution
    attention = h * heads * hd * 2 + 2 * h * kv * hd + heads * hd * h  # q (gated), k, v, o
    key_dim, value_dim, value_heads = 16 * 128, 32 * 128, 32
    linear = h * (2 * key_dim + 2 * value_dim) + h * 2 * value_heads + value_dim * h
    linear_small = (2 * key_dim + value_dim) * 4 + 2 * value_heads + 128
    return attention, linear, linear_small


def test_a_gated_deltanet_hybrids_parameters_are_counted_layer_by_kind():
    """Qwen3-Next-80B-A3B worked by hand. Its 12 attention layers: q_proj twice as wide as the
    heads (the output gate), k, v, o, and q and k norms a head wide. Its 36 Gated DeltaNet
    layers: no q, k, v, o, but projections to q and k (16 key heads of 128), to v and the
    gate z (32 value heads of 128), to a decay and a beta per value head, and back out; a
    4-wide depthwise convolution over q, k and v, a decay and a bias per value head, a norm
    one value head wide. Every layer's MoE: a router, 512 experts, a shared expert and its
    one-output gate."""
    h, hd, vocab = 2048, 256, 151936
    attention, linear, linear_small = qwen3_next_layers(h, heads=16, kv=2, hd=hd)
    router, expert, shared_gate = h * 512, 3 * h * 512, h
    moe_stored = router + 512 * expert + expert + shared_gate
    total = (12 * (attention + 2 * hd) + 36 * (linear + linear_small) + 48 * (moe_stored + 2 * h)
             + h + 2 * vocab * h)
    active = 12 * attention + 36 * linear + 48 * (router + 10 * expert + expert + shared_gate) \
        + vocab * h
    m = shape(QWEN3_NEXT_80B)
    assert costs.total_params(m) == total == 79_674_391_296
    assert costs.matmul_params(m) == active == 3_562_373_120
    assert not any("no rule for" in n for n in m.notes)
    cfg, truth = built("qwen3_next", **{k: v for k, v in QWEN3_NEXT_80B.items()
                                        if k not in ("model_type", "torch_dtype")})
    assert (costs.total_params(shape(cfg)), costs.matmul_params(shape(cfg))) == (
        truth["total"], hf_oracle.active_linear(truth, 10))


# a Bamba config at 9B scale, as a Transformers 4 save_pretrained writes it: Mamba's step
# clamp (time_step_limit) is (0, inf) by default, written as JSON's non-standard Infinity
BAMBA_TEXT = """{"model_type": "bamba", "hidden_size": 4096, "intermediate_size": 14336,
 "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
 "vocab_size": 128256, "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128,
 "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
 "mamba_expand": 2, "mamba_conv_bias": true, "mamba_proj_bias": false,
 "time_step_limit": [0.0, Infinity], "tie_word_embeddings": false}"""


def test_a_mamba2_hybrids_parameters_are_counted_layer_by_kind():
    """Worked by hand: 3 of 32 layers attend (q, k, v, o); the other 29 are Mamba-2, each
    with a projection in to the gate and input (2 x 8,192), B and C (128 each) and a step per
    head (128), one out from 8,192; a 4-wide convolution over 8,448 channels with its bias,
    a decay, a skip and a step bias per head, a norm 8,192 wide. Every layer has a gated MLP
    and two norms."""
    cfg = costs.parse_config_text(BAMBA_TEXT)  # the Infinity is read past, in that field only
    h, vocab, inner, groups, heads = 4096, 128256, 8192, 128, 128
    attention = h * h + 2 * h * 8 * 128 + h * h
    mamba = h * (2 * inner + 2 * groups + heads) + inner * h
    mamba_small = (inner + 2 * groups) * 4 + (inner + 2 * groups) + 3 * heads + inner
    mlp = 3 * h * 14336
    total = 3 * attention + 29 * (mamba + mamba_small) + 32 * (mlp + 2 * h) + h + 2 * vocab * h
    m = shape(cfg)
    assert (m.attention_layers, m.uncached_layers, m.state_layers) == (3, 29, 29)
    assert costs.total_params(m) == total == 9_780_235_392
    assert costs.matmul_params(m) == 3 * attention + 29 * mamba + 32 * mlp + vocab * h
    sizes = {k: v for k, v in cfg.items() if k not in ("model_type", "time_step_limit")}
    written, truth = built("bamba", **sizes)
    assert costs.total_params(shape(written)) == truth["total"]
    with pytest.raises(costs.ConfigError, match="hidden_size: Infinity is not a finite number"):
        costs.parse_config_text(BAMBA_TEXT.replace("4096", "Infinity"))


def test_the_cli_gives_the_fixed_state_its_own_line(tmp_path, capsys):
    from app.hosting import cli
    path = tmp_path / "config.json"
    path.write_text(json.dumps(QWEN3_NEXT_80B))
    assert cli.main(["costs", "--config", str(path), "--prompt", "4096", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["state_bytes_per_user"] == 40_108_032
    assert cli.main(["costs", "--config", str(path), "--prompt", "8", "--kv-dtype", "int8"]) == 0
    assert "fixed state per user (int8)  20,054,016 B (at any context)" in capsys.readouterr(
    ).out


def test_qwen3_5_moe_counts_every_mlp_as_experts_without_a_dense_width():
    """Qwen3.5-MoE as its class's defaults size it (Qwen3.5-35B-A3B's text model): Qwen3-Next's
    layers, 10 of 40 attending, every MLP a MoE of 256 experts 512 wide with top-8, a shared
    expert and its gate; the class has no dense intermediate_size, and no layer needs one."""
    h, hd, vocab = 2048, 256, 248320
    attention, linear, linear_small = qwen3_next_layers(h, heads=16, kv=2, hd=hd)
    router, expert, shared_gate = h * 256, 3 * h * 512, h
    total = (10 * (attention + 2 * hd) + 30 * (linear + linear_small)
             + 40 * (router + 256 * expert + expert + shared_gate + 2 * h) + h + 2 * vocab * h)
    active = (10 * attention + 30 * linear + 40 * (router + 8 * expert + expert + shared_gate)
              + vocab * h)
    cfg, truth = built("qwen3_5_moe_text")
    assert "intermediate_size" not in cfg
    m = shape(cfg)
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, active)
    assert (total, active) == (34_660_610_688, 2_945_269_760)
    assert (total, active) == (truth["total"], hf_oracle.active_linear(truth, 8))
    assert (m.attention_layers, m.uncached_layers) == (10, 30)


# OLMoE-1B-7B's sizes (allenai/OLMoE-1B-7B-0924's config.json)
OLMOE = {"hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 16,
         "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 50304,
         "num_experts": 64, "num_experts_per_tok": 8, "tie_word_embeddings": False}


def test_olmoe_experts_are_intermediate_size_wide_as_its_class_has_no_other_width():
    h, layers, vocab, i, e, k = 2048, 16, 50304, 1024, 64, 8
    attention, qk_norms, router, expert = 4 * h * h, h + h, h * e, 3 * h * i
    total = layers * (attention + qk_norms + router + e * expert + 2 * h) + h + 2 * vocab * h
    active = layers * (attention + router + k * expert) + vocab * h
    cfg, truth = built("olmoe", **OLMOE)
    assert "moe_intermediate_size" not in cfg
    m = shape(cfg)
    assert (m.num_experts, m.moe_intermediate, m.dense_layers) == (e, i, 0)
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, active)
    assert (total, active) == (6_919_161_856, 1_178_861_568)
    assert (total, active) == (truth["total"], hf_oracle.active_linear(truth, k))
    # Qwen-MoE's spelling of the same field still needs its width: refused, by name
    with pytest.raises(costs.ConfigError, match="moe_intermediate_size"):
        shape({**cfg, "model_type": "qwen2_moe"})


def test_a_multimodal_wrappers_counts_are_its_language_model_and_head():
    """Gemma 3's causal-LM class wraps a vision tower and a projector around the text model. The
    core counts text_config and says the tower is left out; the oracle's truth is the same part
    of the model: everything else it holds is under the tower and the projector."""
    from transformers import AutoConfig
    config = AutoConfig.for_model("gemma3")
    model = hf_oracle.build(config)
    whole = sum(p.numel() for p in model.parameters())
    beside = sum(p.numel() for name, p in model.named_parameters()
                 if name.startswith(("model.vision_tower.", "model.multi_modal_projector.")))
    truth = hf_oracle.parameters(model)
    assert beside > 0 and truth["total"] == whole - beside
    m = shape({**hf_oracle.written(config), "model_type": "gemma3"})
    assert costs.total_params(m) == truth["total"]
    assert costs.matmul_params(m) == truth["linear"]
    assert any("vision tower is left out" in n for n in m.notes)


SMALL_TEXT = {"hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
              "vocab_size": 300, "pad_token_id": 0}


def wrapped(outer: str, text: dict, **fields):  # -> (the core's shape, Transformers' counts);
    # the JavaScript twin's total and matmul equal the core's
    from tests import test_cost_model_js as twin
    cfg, truth = built(outer, text_config=text, **fields)
    case = twin.text_case("family", cfg, calls=[["total_params", "M"], ["matmul_params", "M"]])
    assert not twin.compare([case], [twin.run_py(case)], twin.run_js([case]))
    return shape(cfg), truth


def test_a_wrapper_ties_its_head_as_its_own_config_says():
    """GOT-OCR2's text model is a Qwen2, untied by its own field; Transformers ties the
    wrapper's head to the embedding as the wrapper's config says, so the core does too."""
    text = {"model_type": "qwen2", **SMALL_TEXT, "tie_word_embeddings": False}
    tied, truth_tied = wrapped("got_ocr2", text, tie_word_embeddings=True)
    untied, truth_untied = wrapped("got_ocr2", text, tie_word_embeddings=False)
    assert (tied.tied, untied.tied) == (True, False)
    assert truth_untied["total"] - truth_tied["total"] == 300 * 32  # the head's own matrix
    assert costs.total_params(tied) == truth_tied["total"]
    assert costs.total_params(untied) == truth_untied["total"]


def test_a_text_model_without_a_row_is_counted_by_its_wrappers_row():
    """Emu3's text model (emu3_text_model) has no row: no causal LM of its own builds. Its
    wrapper's row, fitted to the wrapper's language model, counts it, and says whose row."""
    from attention_core import config_families
    assert "emu3_text_model" not in config_families.FAMILIES and "emu3" in config_families.FAMILIES
    m, truth = wrapped("emu3", {"model_type": "emu3_text_model", **SMALL_TEXT})
    assert m.name == "emu3"
    assert costs.total_params(m) == truth["total"]
    assert costs.matmul_params(m) == truth["linear"]


def test_flags_a_class_takes_only_together_are_fitted_together():
    """InternLM3's class refuses attention_bias without mlp_bias (and the other way round), so
    the derivation flips both at once and its row's bias terms need both; with both set, the
    core counts what Transformers builds."""
    from attention_core import config_families
    row = config_families.FAMILIES["internlm3"]
    both = [t for t in row["tensors"]
            if {c.get("flag") for c in t["when"]} == {"attention_bias", "mlp_bias"}]
    assert both, row["tensors"]
    sizes = {k: v for k, v in SMALL_TEXT.items() if k != "head_dim"}
    for bias in (True, False):
        cfg, truth = built("internlm3", **sizes, attention_bias=bias, mlp_bias=bias)
        assert costs.total_params(shape(cfg)) == truth["total"], bias


def test_a_moe_file_without_its_experts_count_has_its_classs_experts():
    """A Mixtral file that leaves out num_local_experts and num_experts_per_tok builds 8
    experts, 2 active, in Transformers (its class's defaults), so the core counts them and
    says it took them from the class; it is not read as a dense MLP."""
    sizes = {"hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300}
    cfg, truth = built("mixtral", **sizes)
    sparse = {k: v for k, v in cfg.items()
              if k not in ("num_local_experts", "num_experts_per_tok")}
    m = shape(sparse)
    assert (m.num_experts, m.experts_per_token) == (8, 2)
    assert costs.total_params(m) == truth["total"]
    assert costs.matmul_params(m) == hf_oracle.active_linear(truth, 2)
    assert any("num_local_experts 8" in n and "num_experts_per_tok 2" in n for n in m.notes)


def test_an_experts_count_is_filled_only_where_the_type_is_counted_exactly():
    """Nemotron-H's class defaults n_routed_experts to 8, but its experts sit on its E layers
    alone, which the core does not read as Transformers does (its total is not shown exact):
    a Nemotron-H file without n_routed_experts is not given 8 experts on every layer."""
    from attention_core import config_families
    types = config_families.DERIVED["types"]
    assert not types["nemotron_h"]["exact"]["total"]
    assert "n_routed_experts" not in types["nemotron_h"]["fills"]
    assert types["mixtral"]["fills"]["num_local_experts"] == 8


def test_mlp_layer_types_says_which_layers_hold_experts():
    """AXK1 lays its MLPs out in mlp_layer_types ("dense" or "sparse" a layer) and counts its
    experts as DeepSeek does; EXAONE MoE counts them as Qwen does, with num_shared_experts
    shared experts in one MLP, each as wide as a routed one. The listed layers are the MoE
    ones, whatever first_k_dense_replace says, and the active weights are Transformers' own.
    EXAONE MoE's total is too; AXK1's is not shown exact since its latent attention's ranks
    are drawn, and is not held here."""
    h, i, moe_i, e, k, vocab = 32, 40, 12, 4, 2, 300  # SMALL_TEXT's, and the experts'
    kinds = ["dense", "sparse", "dense", "sparse", "sparse"]
    attention = h * 4 * 8 + 2 * h * 2 * 8 + 4 * 8 * h
    for model_type, experts, shared in (
            ("axk1", {"n_routed_experts": e, "n_shared_experts": 1}, 1),
            ("exaone_moe", {"num_experts": e, "num_shared_experts": 2}, 2)):
        cfg, truth = built(model_type, **{**SMALL_TEXT, "num_hidden_layers": len(kinds)},
                           moe_intermediate_size=moe_i, num_experts_per_tok=k,
                           mlp_layer_types=kinds, first_k_dense_replace=0, **experts)
        m = shape(cfg)
        assert (m.dense_layers, m.moe_layers, m.shared_experts) == (2, 3, shared), model_type
        assert costs.matmul_params(m) == hf_oracle.active_linear(truth, k), model_type
    assert costs.total_params(m) == truth["total"]  # EXAONE MoE's
    # EXAONE MoE's attention is plain (AXK1's is MLA): its active weights by hand, 2 dense
    # MLPs, 3 MoE layers of 2 routed and 2 shared experts and a router each, and the head
    active = (len(kinds) * attention + 2 * 3 * h * i + 3 * (k + 2) * 3 * h * moe_i
              + 3 * h * e + vocab * h)
    assert costs.matmul_params(m) == active


@pytest.mark.parametrize("kinds, says", [
    (["dense", "sparse"], "has 2 entries for 3 layers"),
    (["dense", "moe", "sparse"], 'must be a list of "dense" and "sparse"'),
    ("sparse", 'must be a list of "dense" and "sparse"')])
def test_a_malformed_mlp_layer_types_is_refused_by_name(kinds, says):
    cfg = {"model_type": "exaone_moe", "hidden_size": 32, "intermediate_size": 40,
           "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 300, "num_experts": 4, "num_experts_per_tok": 2,
           "moe_intermediate_size": 12, "mlp_layer_types": kinds}
    with pytest.raises(costs.ConfigError, match=f"mlp_layer_types: {says}"):
        shape(cfg)


# the MoE layouts families write under their own names; each row: the type, its fields over
# SMALL_TEXT's sizes (3 layers unless said), then what the core must read (dense layers, MoE
# layers, top-k, each expert's width, shared experts) and the active weights by hand
A, ROUTER, HEAD = 3072, 4 * 32, 300 * 32  # attention (q 32, k 16, v 16, o 32 wide), 4 experts
MOE_LAYOUTS = [
    # Hunyuan: top-k in moe_topk; experts intermediate_size wide; one shared MLP as wide
    ("hunyuan_v1_moe", {"num_experts": 4, "moe_topk": 2}, (0, 3, 2, 40, 0),
     3 * (A + ROUTER + 2 * 3 * 32 * 40 + 3 * 32 * 40) + HEAD),
    # Hunyuan-A13B's file: a top-k per layer, and a moe_intermediate_size its class ignores
    ("hunyuan_v1_moe", {"num_experts": 4, "moe_topk": [2, 2, 2, 2],
                        "moe_intermediate_size": [12, 12, 12]}, (0, 3, 2, 40, 0),
     3 * (A + ROUTER + 2 * 3 * 32 * 40 + 3 * 32 * 40) + HEAD),
    # AFMoE: the first num_dense_layers dense; a gate projection beside the attention
    ("afmoe", {"num_experts": 4, "num_experts_per_tok": 2, "num_shared_experts": 1,
               "moe_intermediate_size": 12, "num_dense_layers": 2}, (2, 1, 2, 12, 1),
     3 * (A + 32 * 32) + 2 * 3 * 32 * 40 + ROUTER + 3 * 3 * 32 * 12 + HEAD),
    # Solar Open: no intermediate_size at all, as every layer holds experts
    ("solar_open", {"n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
                    "moe_intermediate_size": 12, "intermediate_size": None}, (0, 3, 2, 12, 1),
     3 * (A + ROUTER + 3 * 3 * 32 * 12) + HEAD),
    # Aria: moe_num_experts and moe_topk; experts and shared ones intermediate_size wide
    ("aria_text", {"moe_num_experts": 4, "moe_topk": 2, "moe_num_shared_experts": 1},
     (0, 3, 2, 40, 1), 3 * (A + ROUTER + 3 * 3 * 32 * 40) + HEAD),
    # ERNIE 4.5: experts on every 2nd layer from index 1 to 4 of 6 (layers 1 and 3), moe_k;
    # tied by its class, so the head's weight is the embedding's
    ("ernie4_5_moe", {"num_hidden_layers": 6, "moe_num_experts": 4, "moe_k": 2,
                      "moe_num_shared_experts": 2, "moe_intermediate_size": 12,
                      "moe_layer_start_index": 1, "moe_layer_end_index": 4,
                      "moe_layer_interval": 2}, (4, 2, 2, 12, 2),
     6 * A + 4 * 3 * 32 * 40 + 2 * (ROUTER + 4 * 3 * 32 * 12) + HEAD),
]


@pytest.mark.parametrize("model_type, fields, read, active", MOE_LAYOUTS,
                         ids=[row[0] for row in MOE_LAYOUTS])
def test_a_moe_layout_under_a_familys_own_names_is_read_as_transformers_builds_it(
        model_type, fields, read, active):
    sizes = {k: v for k, v in {**SMALL_TEXT, "num_hidden_layers": 3, **fields}.items()
             if v is not None}
    cfg, truth = built(model_type, **sizes)
    m = shape(cfg)
    assert (m.dense_layers, m.moe_layers, m.experts_per_token, m.moe_intermediate,
            m.shared_experts) == read
    assert costs.matmul_params(m) == active == hf_oracle.active_linear(truth, read[2])
    assert costs.total_params(m) == truth["total"]


@pytest.mark.parametrize("topk, says", [
    ([2, 2, 1], ("moe_topk: lists a different top-k for some layers (1 on one, 2 on another); "
                 "this version reads one top-k for every layer")),
    ([2, 2], ("moe_topk: lists 2 top-k values for 3 layers: give one value, or one for each "
              "layer")),
    ([2, "2", 2], 'moe_topk: must be a positive integer, got "2"'),
])
def test_a_per_layer_top_k_that_is_not_one_value_is_refused_by_name(topk, says):
    cfg = {**SMALL_TEXT, "model_type": "hunyuan_v1_moe", "num_hidden_layers": 3,
           "num_experts": 4, "moe_topk": topk}
    with pytest.raises(costs.ConfigError) as refused:
        shape(cfg)
    assert str(refused.value) == says


def test_a_per_layer_top_k_is_read_only_where_there_are_experts():
    m = shape({**SMALL_TEXT, "model_type": "hunyuan_v1_moe", "num_experts": 0,
               "moe_topk": [1]})  # no experts: no top-k read, short list or not
    assert (m.num_experts, m.experts_per_token) == (0, 0)


def test_an_experts_width_a_class_ignores_is_said_and_not_read():
    cfg = {**SMALL_TEXT, "model_type": "hunyuan_v1_moe", "num_experts": 4, "moe_topk": 2,
           "moe_intermediate_size": 3072}
    m = shape(cfg)
    assert m.moe_intermediate == 40
    assert "moe_intermediate_size is 3072: not read, as Transformers' class for this model " \
        "type has no such field; each expert is intermediate_size (40) wide." in m.notes


def test_ernie_builds_no_shared_mlp_for_no_shared_experts():
    """ERNIE 4.5 with use_bias: each MoE layer's shared MLP has biases, but with
    moe_num_shared_experts 0 there is no shared MLP and so none of its biases either."""
    fields = {**SMALL_TEXT, "num_hidden_layers": 6, "moe_num_experts": 4, "moe_k": 2,
              "moe_intermediate_size": 12, "moe_layer_start_index": 1,
              "moe_layer_end_index": 4, "moe_layer_interval": 2, "use_bias": True}
    totals = {}
    for shared in (0, 2):
        cfg, truth = built("ernie4_5_moe", **fields, moe_num_shared_experts=shared)
        totals[shared] = costs.total_params(shape(cfg))
        assert totals[shared] == truth["total"], shared
    # 2 MoE layers: a shared MLP 24 wide, its biases (24 + 24 + 32)
    assert totals[2] - totals[0] == 2 * (3 * 32 * 24 + 24 + 24 + 32)


@pytest.mark.parametrize("fields, says", [
    ({"moe_k": 5}, r"moe_k: \(5\) is more than the 4 experts"),
    ({"moe_layer_end_index": "last"}, "moe_layer_end_index: must be a non-negative integer"),
    ({"moe_layer_interval": 0}, "moe_layer_interval: must be a positive integer")])
def test_a_malformed_ernie_layout_is_refused_by_name(fields, says):
    cfg = {"model_type": "ernie4_5_moe", **SMALL_TEXT, "moe_num_experts": 4, "moe_k": 2,
           "moe_intermediate_size": 12, **fields}
    with pytest.raises(costs.ConfigError, match=says):
        shape(cfg)


def test_minimaxs_linear_attention_layers_hold_their_own_projections():
    """MiniMax's layer_types mixes full attention with linear (lightning) attention, which keeps
    no KV cache. A linear layer holds, in place of q, k, v and o: one projection to queries,
    keys and values for every head (no grouped KV heads), an output gate, a projection out and
    a norm one head-row wide. Its derived row fits that per layer without attention."""
    h, heads, hd, i, e, k, vocab = 32, 4, 8, 40, 4, 2, 300
    kinds = ["full_attention", "linear_attention", "linear_attention", "full_attention"]
    full = h * heads * hd + 2 * h * 2 * hd + heads * hd * h  # q, k and v (2 KV heads), o
    linear = 3 * heads * hd * h + heads * hd * h + heads * hd * h  # qkv, output gate, out
    moe = h * e + e * 3 * h * i  # router, experts
    total = (2 * full + 2 * (linear + heads * hd) + len(kinds) * (moe + 2 * h) + h
             + 2 * vocab * h)
    active = 2 * full + 2 * linear + len(kinds) * (h * e + k * 3 * h * i) + vocab * h
    cfg, truth = built("minimax", **{**SMALL_TEXT, "num_hidden_layers": len(kinds)},
                       layer_types=kinds, num_local_experts=e, num_experts_per_tok=k)
    m = shape(cfg)
    assert (m.attention_layers, m.uncached_layers) == (2, 2)
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, active)
    assert (total, active) == (truth["total"], hf_oracle.active_linear(truth, k))


def test_granite_moes_shared_mlp_is_shared_intermediate_size_wide():
    """Granite MoE (shared): beside its experts, each as wide as intermediate_size, a shared MLP
    shared_intermediate_size wide (input_linear to twice that, output_linear back), on every
    layer; with 0 there is none. Its draws had kept the class's 0, so a row had been shown
    exact without it."""
    h, i, s, e, k, vocab = 32, 40, 24, 4, 2, 300
    attention = h * 32 + 2 * h * 16 + 32 * h
    for shared in (0, s):
        cfg, truth = built("granitemoeshared", **SMALL_TEXT, num_local_experts=e,
                           num_experts_per_tok=k, shared_intermediate_size=shared)
        m = shape(cfg)
        assert (m.shared_experts, m.shared_intermediate) == ((1, s) if shared else (0, 0))
        active = 2 * (attention + h * e + k * 3 * h * i + 3 * h * shared) + vocab * h
        assert costs.matmul_params(m) == active == hf_oracle.active_linear(truth, k)
        assert costs.total_params(m) == truth["total"], shared


# OPT-350m (facebook/opt-350m's config.json, its sizes): its token table is 512 wide, projected
# in to the layers' 1,024 and back out before a 512-wide lm_head; post-norm, no final norm
OPT_350M = {"model_type": "opt", "num_hidden_layers": 24, "hidden_size": 1024,
            "word_embed_proj_dim": 512, "ffn_dim": 4096, "num_attention_heads": 16,
            "vocab_size": 50272, "max_position_embeddings": 2048, "do_layer_norm_before": False,
            "enable_bias": True, "tie_word_embeddings": True}


@pytest.mark.parametrize("tied", [True, False])
def test_opt_350m_counts_its_narrow_token_table_and_its_projections(tied):
    h, p, f, vocab, layers = 1024, 512, 4096, 50272, 24
    attention, mlp = 4 * h * h, 2 * h * f
    biases, norms = 4 * h + f + h, 2 * 2 * h
    table, positions, projections = vocab * p, (2048 + 2) * h, 2 * h * p
    total = (layers * (attention + mlp + biases + norms) + table + positions + projections
             + (0 if tied else vocab * p))
    matmul = layers * (attention + mlp) + projections + vocab * p
    m = shape({**OPT_350M, "tie_word_embeddings": tied})
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, matmul)
    if tied:
        assert total == 331_196_416  # the figure its model card's 350 M rounds
    sizes = {k: v for k, v in OPT_350M.items() if k != "model_type"}
    cfg, truth = built("opt", **{**sizes, "tie_word_embeddings": tied})
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == hf_oracle.active_linear(truth, 0)
    # a file that leaves word_embed_proj_dim out: as wide as hidden, as OPTConfig makes it
    assert costs.lm_head_params(shape({**OPT_350M, "word_embed_proj_dim": None})) == vocab * h


def test_a_hand_written_row_not_shown_exact_says_so_in_one_line(monkeypatch):
    """A row typed by hand is checked by the derivation like a derived one; where a count was
    not shown equal to Transformers' own model, the core says so in one line, naming the rule
    as written by hand (a derived row's line names its derivation), and the CLI's JSON carries
    it."""
    import transformers

    from attention_core import config_families
    version = transformers.__version__
    bert_row = config_families.FAMILIES["bert"]
    assert "derived" not in bert_row
    monkeypatch.setitem(config_families.FAMILIES, "bert",
                        {**bert_row, "exact": {"kv": False, "matmul": True, "total": True}})
    said = (f"'bert' is counted by a rule written by hand; on random configs its KV cache was "
            f"not shown to match Transformers {version}'s own model, so it may be off.")
    notes = shape({**SMALL, "model_type": "bert", "is_decoder": True}).notes
    assert sum(said in n for n in notes) == 1
    # a derived row not shown exact (MiniMax-M3's: its dense layers' own width), through the
    # CLI: its line names the derivation
    assert config_families.FAMILIES["minimax_m3_vl_text"]["exact"] == {
        "kv": True, "matmul": False, "total": False}
    derived = (f"'minimax_m3_vl_text' is counted by a rule derived from Transformers "
               f"{version}'s own model; on random configs its total parameters and matmul "
               "parameters were not shown to match that model, so they may be off.")
    cfg = {**SMALL, "model_type": "minimax_m3_vl_text"}
    text = cli(cfg)
    assert text.returncode == 0, text.stderr
    assert sum(derived in line for line in text.stdout.splitlines()) == 1
    assert sum(derived in n for n in json.loads(cli(cfg, "--json").stdout)["notes"]) == 1
    assert not any("counted by a rule" in n for n in json.loads(
        cli({**SMALL, "model_type": "llama"}, "--json").stdout)["notes"])


def test_gemma_4s_top_k_is_read_under_its_own_name():
    """Gemma 4 names its top-k top_k_experts. No rule counts Gemma 4 yet (per-layer inputs,
    global layers of another head width): its MoE file is counted as a generic decoder with
    the line that says so, not refused for a top-k it has."""
    cfg = {**SMALL_TEXT, "model_type": "gemma4_text", "enable_moe_block": True,
           "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 12}
    m = shape(cfg)
    assert (m.num_experts, m.experts_per_token, m.moe_intermediate) == (8, 2, 12)
    assert any("'gemma4_text' is a Transformers" in n and "may be off" in n for n in m.notes)
    with pytest.raises(costs.ConfigError, match="num_experts_per_tok: is missing"):
        shape({k: v for k, v in cfg.items() if k != "top_k_experts"})


def test_a_bert_like_file_without_is_decoder_is_told_its_model_keeps_no_cache():
    """BertLMHeadModel keeps a cache only with is_decoder set; without it, it attends both
    ways and returns none. The KV figures stay those of the causal LM, and a file that does
    not set it is told so in one line; one that sets it is not."""
    from attention_core import config_families
    assert config_families.caches_if("bert") == "is_decoder"
    said = "is_decoder is not set to true in this file"
    bare, decoder = ({**SMALL, "model_type": "bert", **extra}
                     for extra in ({}, {"is_decoder": True}))
    assert sum(said in n for n in shape(bare).notes) == 1
    assert not any(said in n for n in shape(decoder).notes)
    assert not any(said in n for n in shape({**SMALL, "model_type": "llama"}).notes)
    assert costs.kv_bytes_per_token(shape(bare)) == costs.kv_bytes_per_token(shape(decoder))
    notes = json.loads(cli(bare, "--json").stdout)["notes"]
    assert sum(said in n for n in notes) == 1
    with pytest.raises(costs.ConfigError, match="is_decoder: must be true or false"):
        shape({**bare, "is_decoder": "yes"})
    # the cache a decoder keeps is what the figures count: 2 x layers x hidden a token
    from transformers import AutoConfig
    truth = hf_oracle.truth(AutoConfig.for_model("bert", is_decoder=True, **SMALL))
    widths = sum(k + v for k, v in truth["kv_widths"])
    assert widths == 2 * 2 * 64 == costs.kv_bytes_per_token(shape(decoder), 1)


def test_a_model_that_keeps_no_cache_is_told_so_in_one_line():
    """GPT-1's causal LM returns no cache: each step reruns the whole prefix. Its files are
    told so in one line, in the core and the CLI's JSON; GPT-2's, whose model keeps one, are
    not. The figures stay the cache a standard decoder of its sizes would keep: one key and
    one value of the model's width a layer."""
    from transformers import AutoConfig

    from attention_core import config_families
    said = "Transformers' causal-LM class for model_type 'openai-gpt' keeps no KV cache"
    config = AutoConfig.for_model("openai-gpt", n_layer=2, n_embd=32, n_head=4, vocab_size=300)
    model = hf_oracle.build(config, device="cpu")
    import torch
    out = model.eval()(input_ids=torch.zeros((1, 3), dtype=torch.long), use_cache=True)
    assert getattr(out, "past_key_values", None) is None
    cfg = {**hf_oracle.written(config), "model_type": "openai-gpt"}
    assert sum(said in n for n in shape(cfg).notes) == 1
    assert sum(said in n for n in json.loads(cli(cfg, "--json").stdout)["notes"]) == 1
    # and not "its KV cache was not shown to match" beside it: there is none to match
    assert not any("KV cache was not shown" in n for n in shape(cfg).notes)
    assert costs.kv_bytes_per_token(shape(cfg), 1) == 2 * 2 * 32
    gpt2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 4, "vocab_size": 300}
    assert not any("keeps no KV cache" in n for n in shape(gpt2).notes)
    assert config_families.keeps_no_cache("openai-gpt")


# FacebookAI/xlm-roberta-base's config.json (the sizes; its class ties the decoder)
XLM_R_BASE = {"model_type": "xlm-roberta", "hidden_size": 768, "intermediate_size": 3072,
              "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 250002,
              "max_position_embeddings": 514, "type_vocab_size": 1, "is_decoder": True}


@pytest.mark.parametrize("types", [1, 2])
def test_xlm_roberta_counts_its_token_type_table_and_its_prediction_head(types):
    h, f, vocab, layers, positions = 768, 3072, 250002, 12, 514
    layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 2 * 2 * h  # q k v o, biases, MLP, 2 norms
    embedding = vocab * h + positions * h + types * h + 2 * h  # tied with the decoder
    head = h * h + h + 2 * h + vocab  # dense, its bias, a norm, the decoder's bias
    m = shape({**XLM_R_BASE, "type_vocab_size": types})
    assert costs.total_params(m) == layers * layer + embedding + head
    assert costs.matmul_params(m) == layers * (4 * h * h + 2 * h * f) + h * h + vocab * h
    cfg, truth = built("xlm-roberta", **{k: v for k, v in XLM_R_BASE.items()
                                         if k != "model_type"} | {"type_vocab_size": types})
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == hf_oracle.active_linear(truth, 0)


# ai21labs/Jamba-v0.1's config.json (the sizes and layouts)
JAMBA = {"model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "vocab_size": 65536, "num_experts": 16, "num_experts_per_tok": 2,
         "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8,
         "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
         "mamba_dt_rank": 256, "mamba_conv_bias": True, "mamba_proj_bias": False,
         "tie_word_embeddings": False}


def test_jamba_counts_its_mamba_layers_and_its_experts_every_other_layer():
    """Jamba: attention on layer i where i % 8 == 4 (4 of 32), Mamba on the other 28; 16
    experts, each intermediate_size wide, on the odd layers, a dense MLP on the even ones."""
    h, f, vocab, experts, k = 4096, 14336, 65536, 16, 2
    inner, state, kernel, rank = 2 * h, 16, 4, 256
    attention = h * 32 * 128 + 2 * h * 8 * 128 + 32 * 128 * h
    mamba_matmul = h * 2 * inner + inner * (rank + 2 * state) + rank * inner + inner * h
    mamba_stored = inner + inner * kernel + inner + inner * state + inner + rank + 2 * state
    routed, router, dense = experts * 3 * h * f, h * experts, 3 * h * f
    total = (4 * attention + 28 * (mamba_matmul + mamba_stored) + 16 * (routed + router)
             + 16 * dense + 32 * 2 * h + h + 2 * vocab * h)
    active = (4 * attention + 28 * mamba_matmul + 16 * (k * 3 * h * f + router) + 16 * dense
              + vocab * h)
    m = shape(JAMBA)
    assert (m.attention_layers, m.moe_layers, m.state_layers) == (4, 16, 28)
    assert (costs.total_params(m), costs.matmul_params(m)) == (total, active)
    cfg, truth = built("jamba", **{k_: v for k_, v in JAMBA.items() if k_ != "model_type"})
    assert costs.total_params(shape(cfg)) == truth["total"]
    assert costs.matmul_params(shape(cfg)) == hf_oracle.active_linear(truth, k)
    # a file without its layouts has its class's (Jamba-v0.1's): the same counts, said
    bare = shape({k: v for k, v in JAMBA.items() if not k.startswith(("attn_", "expert_"))})
    assert (costs.total_params(bare), bare.attention_layers, bare.moe_layers) == (total, 4, 16)
    assert any("attn_layer_period 8" in n for n in bare.notes)
    # one expert builds a dense MLP; an offset past its period is refused by name
    assert shape({**JAMBA, "num_experts": 1}).moe_layers == 0
    with pytest.raises(costs.ConfigError, match="expert_layer_offset: is 2; it must be smaller"):
        shape({**JAMBA, "expert_layer_offset": 2})
    with pytest.raises(costs.ConfigError, match="attn_layer_offset: is 8; it must be from 0"):
        shape({**JAMBA, "attn_layer_offset": 8})


@pytest.mark.parametrize("rank", ["auto", None, "absent"])
def test_jambas_step_rank_left_to_its_class_is_a_sixteenth_of_the_width(rank):
    """JambaConfig makes mamba_dt_rank "auto" (its default) ceil(hidden / 16): 4,096 -> 256,
    here 72 -> 5, as Transformers builds it."""
    sizes = {"hidden_size": 72, "intermediate_size": 40, "num_hidden_layers": 4,
             "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
             "num_experts": 2, "attn_layer_period": 2, "attn_layer_offset": 1}
    cfg = {"model_type": "jamba", **sizes, "mamba_dt_rank": rank}
    if rank == "absent":
        del cfg["mamba_dt_rank"]
    _, truth = built("jamba", **sizes)
    m = shape(cfg)
    assert costs.total_params(m) == truth["total"]
    assert costs.total_params(m) - costs.total_params(shape({**cfg, "mamba_dt_rank": 4})) == (
        2 * (2 * 144 + 1))  # two Mamba layers, each one rank more: x_proj, dt_proj, dt norm


# Granite 4's hybrid, small: Mamba-2 on layers 0 and 2, attention on 1 and 3, as Hub files
# spell their layer_types
GRANITE_HYBRID = {"model_type": "granitemoehybrid", "hidden_size": 64, "intermediate_size": 24,
                  "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                  "vocab_size": 300, "shared_intermediate_size": 40, "mamba_n_heads": 4,
                  "mamba_d_head": 32, "mamba_n_groups": 1, "mamba_d_state": 8,
                  "mamba_d_conv": 4, "mamba_expand": 2, "tie_word_embeddings": True,
                  "layer_types": ["mamba", "attention", "mamba", "attention"]}


@pytest.mark.parametrize("experts", [0, 4])
def test_granite_4_hybrids_dense_mlp_is_its_shared_one(experts):
    """With no experts, Granite 4's hybrid runs only its shared MLP, shared_intermediate_size
    wide (intermediate_size is then unused); with experts, those are intermediate_size wide
    beside it. Two Mamba-2 layers (projections in and out, convolution, decays, norm) and two
    attention layers, as Transformers builds them."""
    h, s, f, vocab, inner, heads, state, kernel = 64, 40, 24, 300, 128, 4, 8, 4
    attention = h * 4 * 16 + 2 * h * 2 * 16 + 4 * 16 * h
    conv = inner + 2 * state
    mamba_matmul = h * (2 * inner + 2 * state + heads) + inner * h
    mamba_stored = conv * kernel + conv + 3 * heads + inner
    mlp = 3 * h * s + (experts * 3 * h * f + h * experts if experts else 0)
    active = 3 * h * s + (2 * 3 * h * f + h * experts if experts else 0)
    norms = 4 * 2 * h + h
    cfg = {**GRANITE_HYBRID, "num_local_experts": experts, "num_experts_per_tok": 2}
    m = shape(cfg)
    assert (m.attention_layers, m.state_layers) == (2, 2)
    assert costs.total_params(m) == (2 * attention + 2 * (mamba_matmul + mamba_stored)
                                     + 4 * mlp + norms + vocab * h)
    assert costs.matmul_params(m) == 2 * attention + 2 * mamba_matmul + 4 * active + vocab * h
    _, truth = built("granitemoehybrid", **{k: v for k, v in cfg.items() if k != "model_type"})
    assert costs.total_params(m) == truth["total"]
    assert costs.matmul_params(m) == hf_oracle.active_linear(truth, 2 if experts else 0)


@pytest.mark.parametrize("rms_norm", [True, False])
def test_falcon_h1_runs_mamba_2_beside_attention_in_every_layer(rms_norm):
    """Falcon-H1: each layer holds attention, a Mamba-2 mixer mamba_d_ssm wide and a gated
    MLP; the mixer's norm exists only with mamba_rms_norm. Its cache is the attention's and
    its state the mixer's, in every layer."""
    h, f, vocab, layers, d, heads, groups, state, kernel = 64, 96, 300, 2, 64, 4, 1, 8, 4
    attention = h * 4 * 16 + 2 * h * 2 * 16 + 4 * 16 * h
    conv = d + 2 * groups * state
    mixer_matmul = h * (2 * d + 2 * groups * state + heads) + d * h
    mixer_stored = conv * kernel + conv + 3 * heads + (d if rms_norm else 0)
    layer_matmul = attention + 3 * h * f + mixer_matmul
    cfg = {"model_type": "falcon_h1", "hidden_size": h, "intermediate_size": f,
           "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2,
           "head_dim": 16, "vocab_size": vocab, "mamba_d_ssm": d, "mamba_n_heads": heads,
           "mamba_d_head": 16, "mamba_n_groups": groups, "mamba_d_state": state,
           "mamba_d_conv": kernel, "mamba_rms_norm": rms_norm, "tie_word_embeddings": False}
    m = shape(cfg)
    assert (m.attention_layers, m.state_layers) == (2, 2)
    assert costs.total_params(m) == (layers * (layer_matmul + mixer_stored + 2 * h) + h
                                     + 2 * vocab * h)
    assert costs.matmul_params(m) == layers * layer_matmul + vocab * h
    _, truth = built("falcon_h1", **{k: v for k, v in cfg.items() if k != "model_type"})
    assert (costs.total_params(m), costs.matmul_params(m)) == (truth["total"], truth["linear"])


# state-spaces/mamba-130m-hf's config.json (the sizes)
MAMBA_130M = {"model_type": "mamba", "hidden_size": 768, "intermediate_size": 1536,
              "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16,
              "conv_kernel": 4, "expand": 2, "time_step_rank": 48, "use_bias": False,
              "use_conv_bias": True, "tie_word_embeddings": True}


@pytest.mark.parametrize("model_type", ["mamba", "falcon_mamba"])
def test_mamba_has_no_attention_no_mlp_and_a_fixed_state_instead_of_a_cache(model_type):
    """Each of Mamba's layers is a norm and a mixer 1,536 wide: projections in (2 x 1,536),
    to the step's rank (48) and B and C (16 each), up from the step and out; a convolution of
    4 with a bias, a step bias, decays (1,536 x 16) and skips. No layer attends, so no KV
    cache: each keeps 1,536 x 4 convolution and 1,536 x 16 recurrent values a user."""
    h, i, rank, state, kernel, vocab, layers = 768, 1536, 48, 16, 4, 50280, 24
    matmul = h * 2 * i + i * (rank + 2 * state) + rank * i + i * h
    stored = i * kernel + i + i + i * state + i + h
    cfg = {**MAMBA_130M, "model_type": model_type}
    m = shape(cfg)
    assert costs.total_params(m) == layers * (matmul + stored) + h + vocab * h
    assert costs.matmul_params(m) == layers * matmul + vocab * h
    assert (m.attention_layers, m.state_layers, m.state_per_layer) == (
        0, 24, i * kernel + i * state)
    assert costs.kv_cache_bytes(m, 4096) == 0
    # a decode step reads every weight once and each user's state (bf16: 2 bytes a value)
    per_user = layers * (i * kernel + i * state) * 2
    assert costs.state_bytes(m, 3) == 3 * per_user
    assert costs.decode_step_bytes(m, 4096, 3) == costs.weight_bytes_read(m) + 3 * per_user
    _, truth = built(model_type, **{k: v for k, v in cfg.items() if k != "model_type"})
    assert (costs.total_params(m), costs.matmul_params(m)) == (truth["total"], truth["linear"])
    # the step's rank left to the class: ceil(768 / 16) = 48 again
    assert costs.total_params(shape({**cfg, "time_step_rank": "auto"})) == truth["total"]


def test_a_model_with_no_attention_is_told_why_it_has_no_cache():
    """Mamba's cache convention and its crossover name the reason there is no cache (no
    layer attends), not a window; a model with one KV head says "head"."""
    m = shape(MAMBA_130M)
    assert costs.cache_convention(m) == (
        "No layer attends, so there is no KV cache; each layer keeps a fixed state instead, "
        "its own figure.")
    assert ("All 24 layers (mamba) hold no KV cache, so the KV figures, the attention FLOPs "
            "and the crossover are zero; the fixed state they keep is its own figure.") in m.notes
    text = cli(MAMBA_130M)
    assert text.returncode == 0, text.stderr
    assert "cache outweighs weights at   never (no layer attends, so there is no KV cache)" in (
        text.stdout)
    for line in ("FLOPs per (query, key) pair  none (no layer attends)",
                 "crossover                    never (no layer attends)",
                 "decode arithmetic intensity  none (no attention, no cache to read)"):
        assert line in text.stdout
    one = shape({**SMALL, "model_type": "llama", "num_key_value_heads": 1})
    assert "keys and values of 1 KV head per layer" in costs.cache_convention(one)
    assert "of 4 KV heads per layer" in costs.cache_convention(shape({**SMALL,
                                                                     "model_type": "llama"}))
