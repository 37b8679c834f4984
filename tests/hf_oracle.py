"""Hugging Face Transformers as the outside oracle for the cost core (tests/test_hf_oracle.py).

For every family attention_core.config_families claims that Transformers defines, this
writes random small configs with Transformers' own config classes, in the form
`save_pretrained` writes them (the diff against the class defaults), builds each model on the
meta device (no weights, no memory) and reads the truth off the real model:

- total: every parameter, a tied lm_head counted once (`model.parameters()`);
- linear: every nn.Linear / Conv1D weight, lm_head counted even when tied (the matmul
  parameters' convention), and fused expert tensors apart (`experts`: a 3-D parameter per
  MoE layer in Transformers 5), with the router's own weight apart (`router`);
- kv: the cache a real forward returns: per layer, the key and value widths per token
  (numel / tokens) and how many tokens it holds after a long prompt (a sliding layer keeps
  only its window). A small model runs that forward on the CPU with real weights (faster
  than meta tensors, whose ops run as Python), a large one on meta tensors; each on the other
  device where the first cannot run it.

Each config is also written with Transformers 4's field names where they differ
(`torch_dtype`, `rope_theta`, Qwen-MoE's `num_experts`), and the v4 form is read back through
the same class to check that it builds the same model.

    python tests/hf_oracle.py [--per-family N] [--seed S] [--out FILE]   # the records as JSON
    python tests/hf_oracle.py --check FILE ...   # the truth for hand-typed config.json files

Where the core counts differently from Transformers' model code, `differences` states the
convention and checks the conversion exactly:
- total parameters: the model's `parameters()`, a tied lm_head once. Equal.
- matmul parameters (a token's multiply-adds): every Linear / Conv1D weight, lm_head even
  when tied; a MoE layer's fused expert tensors count k of their E experts (the routed ones a
  token uses), which is the core's "active" convention. Equal.
- KV: the widths a real forward cached per token. For MLA, Transformers 5 caches the latent
  (kv_lora_rank + qk_rope_head_dim per layer), as a serving engine does and as the core
  counts; it must also equal the width kv_a_proj_with_mqa writes.
- tokens held after a LONG-token prompt: a sliding layer keeps its window, less the one slot
  of the next token (Transformers keeps window - 1 keys, and the next query adds itself),
  so the core's `min(n, window)` held at context n is Transformers' at n - 1 plus one.
  GPT-Neo is the exception: Transformers' cache keeps every token in its local layers too
  (it masks them), where a server needs only the window; the core counts the window.
- Falcon's new decoder architecture: Transformers broadcasts each KV head's keys and values to
  its whole group of query heads before caching them (heads x head_dim per layer); a serving
  engine holds the kv_heads, as the core counts. The check scales the core by heads/kv_heads.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
import warnings
from pathlib import Path

from attention_core import config_families, costs

SHORT, LONG = 3, 40  # prompt lengths of the two forwards: under every window, then past it


def _torch():
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.pytorch_utils import Conv1D
    transformers.logging.set_verbosity_error()  # token ids past a tiny vocabulary: expected
    return torch, AutoConfig, AutoModelForCausalLM, Conv1D


# --- random shapes, in each family's own field names ----------------------------------------

def _heads(r: random.Random) -> tuple[int, int, int]:  # -> (heads, kv heads, head_dim)
    heads = r.choice([1, 2, 3, 4, 6, 8])
    kv = r.choice([d for d in range(1, heads + 1) if heads % d == 0])
    return heads, kv, r.choice([4, 8, 12, 16])


def _common(r: random.Random, *, kv: bool = True, head_dim: bool = True) -> dict:
    heads, kv_heads, hd = _heads(r)
    hidden = heads * hd if not head_dim or r.random() < 0.5 else r.choice([8, 16, 24, 32])
    out = {"vocab_size": r.randint(16, 300), "hidden_size": hidden,
           "intermediate_size": r.randint(8, 96), "num_hidden_layers": r.randint(1, 5),
           "num_attention_heads": heads, "max_position_embeddings": r.choice([64, 128, 512]),
           "tie_word_embeddings": r.random() < 0.3}
    if kv:
        out["num_key_value_heads"] = kv_heads
    if head_dim and hidden != heads * hd:
        out["head_dim"] = hd
    return out


def _gen_llama(r):
    return {**_common(r), "attention_bias": r.random() < 0.3, "mlp_bias": r.random() < 0.3}


def _gen_plain_gated(r):  # families with only the common fields
    return _common(r)


def _gen_no_head_dim(r):
    return _common(r, head_dim=False)


def _gen_window(r, *, layer_types=False):
    c = _common(r)
    c["sliding_window"] = r.choice([None, 4, 8, 16])
    if layer_types:  # Ministral reads head_dim and derives none, and always builds a window
        c["head_dim"] = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
        c["sliding_window"] = c["sliding_window"] or 8
        c["layer_types"] = [r.choice(["sliding_attention", "full_attention"])
                            for _ in range(c["num_hidden_layers"])]
    return c


def _gen_qwen2(r):
    c = _common(r, head_dim=False)
    if r.random() < 0.5:
        c.update(use_sliding_window=True, sliding_window=r.choice([4, 8, 16]),
                 max_window_layers=r.randint(0, c["num_hidden_layers"]))
    return c


def _gen_qwen3(r):
    c = _common(r)
    c["attention_bias"] = r.random() < 0.3
    if r.random() < 0.4:
        c.update(use_sliding_window=True, sliding_window=r.choice([4, 8, 16]),
                 max_window_layers=r.randint(0, c["num_hidden_layers"]))
    return c


def _gen_llama4(r):  # experts on some layers, a shared one in each; chunks shorter than LONG
    c = _common(r)
    layers = c["num_hidden_layers"]
    c.update(num_local_experts=r.randint(2, 6), num_experts_per_tok=1,
             intermediate_size_mlp=r.randint(8, 96), attention_chunk_size=r.choice([4, 8, 16]),
             attention_bias=r.random() < 0.3)
    pick = r.random()
    if pick < 0.4:
        c["interleave_moe_layer_step"] = r.randint(1, 3)
    elif pick < 0.7:
        c["moe_layers"] = _moe_layers(r, layers)
    if r.random() < 0.5:
        c["no_rope_layers"] = [r.randint(0, 1) for _ in range(layers)]
    else:
        c["no_rope_layer_interval"] = r.randint(1, 4)
    return c


def _moe_layers(r, layers):
    return sorted(r.sample(range(layers), r.randint(0, layers // 2)))


def _gen_qwen2_moe(r):
    c = _common(r, head_dim=False)
    e = r.randint(2, 8)
    c.update(num_experts=e, num_experts_per_tok=r.randint(1, e),
             moe_intermediate_size=r.randint(4, 48),
             shared_expert_intermediate_size=r.choice([0, r.randint(4, 48)]),
             decoder_sparse_step=r.choice([1, 1, 2]),
             mlp_only_layers=_moe_layers(r, c["num_hidden_layers"]))
    return c


def _gen_qwen3_moe(r):
    c = _common(r)
    e = r.randint(2, 8)
    c.update(num_experts=e, num_experts_per_tok=r.randint(1, e),
             moe_intermediate_size=r.randint(4, 48), decoder_sparse_step=r.choice([1, 1, 2]),
             mlp_only_layers=_moe_layers(r, c["num_hidden_layers"]),
             attention_bias=r.random() < 0.3)
    return c


def _gen_mixtral(r):
    c = _common(r)
    # not 8, MixtralConfig's default: a file without num_local_experts is read as dense by the
    # core, where Transformers builds 8 experts (a known limit, docs/config-families.md)
    e = r.randint(2, 7)
    c.update(num_local_experts=e, num_experts_per_tok=r.randint(1, e),
             sliding_window=r.choice([None, 8]))
    return c


def _gen_deepseek(r, v3):
    c = _common(r, kv=False, head_dim=False)  # MLA: every query head has its own k and v
    c["num_key_value_heads"] = c["num_attention_heads"]
    layers = c["num_hidden_layers"]
    e = r.randint(2, 8)
    c.update(kv_lora_rank=r.choice([4, 8, 16]), q_lora_rank=r.choice([None, 8, 16]),
             qk_nope_head_dim=r.choice([4, 8]), qk_rope_head_dim=r.choice([2, 4]),
             v_head_dim=r.choice([4, 8, 12]), n_routed_experts=e,
             num_experts_per_tok=r.randint(1, e), moe_intermediate_size=r.randint(4, 32),
             n_shared_experts=r.choice([0, 1, 2]), first_k_dense_replace=r.randint(0, layers),
             n_group=1, topk_group=1, attention_bias=r.random() < 0.3)
    if not v3:  # V2 alone reads mlp_bias (dense and shared-expert MLPs)
        c.update(topk_method="greedy", mlp_bias=r.random() < 0.3)
    return c


def _gen_gemma(r, window=None):
    c = _common(r)
    if window == "gemma2":
        c["sliding_window"] = r.choice([4, 8, 16])
    elif window == "gemma3":
        c["sliding_window"] = r.choice([4, 8, 16])
        if r.random() < 0.5:
            c["layer_types"] = [r.choice(["sliding_attention", "full_attention"])
                                for _ in range(c["num_hidden_layers"])]
    c["attention_bias"] = r.random() < 0.2
    return c


def _gen_cohere(r):
    return {**_common(r, head_dim=False), "use_qk_norm": r.random() < 0.5,
            "attention_bias": r.random() < 0.3}


def _gen_olmo(r):
    return {**_common(r, head_dim=False), "attention_bias": r.random() < 0.3}


def _gen_smollm3(r):
    c = {**_common(r, head_dim=False), "attention_bias": r.random() < 0.3,
         "mlp_bias": r.random() < 0.3}
    if r.random() < 0.4:
        c.update(use_sliding_window=True, sliding_window=r.choice([4, 8, 16]))
    return c


def _gen_glm(r):
    return {**_common(r), "attention_bias": r.random() < 0.7}


def _gen_gpt2_like(r, n_inner_null=True):
    heads, _, hd = _heads(r)
    return {"vocab_size": r.randint(16, 300), "n_embd": heads * hd, "n_layer": r.randint(1, 5),
            "n_head": heads, "n_positions": r.choice([64, 128]),
            "n_inner": None if n_inner_null and r.random() < 0.5 else r.randint(8, 96),
            "tie_word_embeddings": r.random() < 0.7}


def _gen_gptj(r):
    c = _gen_gpt2_like(r)
    c["rotary_dim"] = r.choice([None, 2, 4])
    return c


def _gen_codegen(r):
    c = _gen_gptj(r)
    heads = r.choice([4, 8])  # its fused qkv splits into 4 parts, each a whole number of heads
    c.update(n_head=heads, n_embd=heads * r.choice([4, 8, 16]))
    c["n_ctx"] = c["n_positions"]
    return c


def _gen_bigcode(r):
    return {**_gen_gpt2_like(r), "multi_query": r.random() < 0.6}


def _gen_gpt_neo(r):
    heads, _, hd = _heads(r)
    layers = r.choice([2, 4])
    return {"vocab_size": r.randint(16, 300), "hidden_size": heads * hd, "num_layers": layers,
            "num_heads": heads, "intermediate_size": r.choice([None, r.randint(8, 96)]),
            "attention_types": [[["global", "local"], layers // 2]],
            "window_size": r.choice([4, 8, 16]), "max_position_embeddings": r.choice([64, 128]),
            "tie_word_embeddings": r.random() < 0.7}


def _gen_gpt_neox(r):
    c = _common(r, kv=False, head_dim=False)
    c.update(attention_bias=r.random() < 0.7, use_parallel_residual=r.random() < 0.5)
    return c


def _gen_opt(r):
    heads, _, hd = _heads(r)
    hidden = heads * hd
    return {"vocab_size": r.randint(16, 300), "hidden_size": hidden,
            "num_hidden_layers": r.randint(1, 5), "num_attention_heads": heads,
            "ffn_dim": r.randint(8, 96), "max_position_embeddings": r.choice([64, 128]),
            "do_layer_norm_before": r.random() < 0.8, "enable_bias": r.random() < 0.8,
            "layer_norm_elementwise_affine": r.random() < 0.8,
            "tie_word_embeddings": r.random() < 0.8}


def _gen_falcon(r):
    heads, kv, hd = _heads(r)
    new = r.random() < 0.5
    c = {"vocab_size": r.randint(16, 300), "hidden_size": heads * hd,
         "num_hidden_layers": r.randint(1, 5), "num_attention_heads": heads,
         "new_decoder_architecture": new, "bias": r.random() < 0.3,
         "parallel_attn": True if new else r.random() < 0.6,
         "ffn_hidden_size": r.choice([None, r.randint(8, 96)]),
         "tie_word_embeddings": r.random() < 0.7, "alibi": False}
    if new:
        c["num_kv_heads"] = kv
        c["num_ln_in_parallel_attn"] = r.choice([None, 1, 2])
    else:
        c["multi_query"] = r.random() < 0.6
    return c


def _gen_bloom(r):
    heads, _, hd = _heads(r)
    return {"vocab_size": r.randint(16, 300), "hidden_size": heads * hd,
            "n_layer": r.randint(1, 5), "n_head": heads, "tie_word_embeddings": r.random() < 0.8}


def _gen_mpt(r):
    heads, _, hd = _heads(r)
    return {"vocab_size": r.randint(16, 300), "d_model": heads * hd, "n_layers": r.randint(1, 5),
            "n_heads": heads, "expansion_ratio": r.choice([1, 2, 4, 1.5]),
            "max_seq_len": r.choice([64, 128]), "no_bias": r.random() < 0.7,
            "tie_word_embeddings": r.random() < 0.8}


def _gen_phi(r):
    c = _common(r, head_dim=False)
    c.update(qk_layernorm=r.random() < 0.4)
    return c


def _gen_starcoder2(r):
    c = _common(r, head_dim=False)
    c.update(use_bias=r.random() < 0.7, sliding_window=r.choice([None, 4, 8, 16]))
    return c


def _gen_bert(r):
    c = _common(r, kv=False, head_dim=False)
    c.update(is_decoder=True, type_vocab_size=r.choice([1, 2]), tie_word_embeddings=True)
    return c


def _layout(r, layers, attend, other):  # a hybrid's layer kinds, the last one attending (a
    # forward over a cache with no attention layer cannot run)
    return [r.choice([attend, other]) for _ in range(layers - 1)] + [attend]


def _gen_gated_deltanet(r, moe=False):  # Qwen3-Next, Qwen3.5, OLMo-Hybrid
    c = _common(r)
    c["num_hidden_layers"] = max(c["num_hidden_layers"], 2)
    k = r.choice([1, 2])
    c.update(linear_num_key_heads=k, linear_num_value_heads=k * r.choice([1, 2]),
             linear_key_head_dim=r.choice([4, 8]), linear_value_head_dim=r.choice([4, 6]),
             linear_conv_kernel_dim=r.choice([2, 3, 4]), attention_bias=r.random() < 0.3,
             layer_types=_layout(r, c["num_hidden_layers"], "full_attention",
                                 "linear_attention"))
    if moe:
        e = r.randint(2, 8)
        c.update(num_experts=e, num_experts_per_tok=r.randint(1, e),
                 moe_intermediate_size=r.randint(4, 48),
                 shared_expert_intermediate_size=r.randint(4, 48), decoder_sparse_step=1,
                 mlp_only_layers=[])
    return c


def _gen_qwen3_5_moe(r):  # every MLP a MoE: no dense width, no sparse step, no dense layers
    c = _gen_gated_deltanet(r, moe=True)
    for field in ("intermediate_size", "decoder_sparse_step", "mlp_only_layers"):
        c.pop(field, None)
    return c


def _gen_olmo_hybrid(r):  # OLMo-Hybrid's class computes the linear sizes it is not given
    # from the heads and the width, which the core does not (it refuses a file without them,
    # as it does one without a size): drawn apart from those, so none reads as left out
    c = _gen_gated_deltanet(r)
    heads, hidden = c["num_attention_heads"], c["hidden_size"]
    nk = r.choice([k for k in (1, 2, 3) if k != heads])
    c["linear_num_key_heads"] = nk
    c["linear_num_value_heads"] = nk * r.choice([m for m in (1, 2, 3) if nk * m != heads])
    c["linear_key_head_dim"] = r.choice([d for d in (4, 8) if d != int(0.75 * hidden / nk)])
    return c  # linear_value_head_dim, 4 or 6, is never twice the key width (8 or 16)


def _gen_bamba(r):
    c = _common(r)
    c["num_hidden_layers"] = layers = max(c["num_hidden_layers"], 2)
    heads, expand, hidden = r.choice([2, 4]), r.choice([1, 2]), r.choice([16, 32])
    c.update(hidden_size=hidden, mamba_expand=expand, mamba_n_heads=heads,
             mamba_d_head=expand * hidden // heads, mamba_n_groups=r.choice([1, 2]),
             mamba_d_state=r.choice([4, 8]), mamba_d_conv=r.choice([2, 4]), mamba_chunk_size=4,
             attention_bias=r.random() < 0.3, mlp_bias=r.random() < 0.3,
             mamba_conv_bias=r.random() < 0.7, mamba_proj_bias=r.random() < 0.3,
             attn_layer_indices=sorted(r.sample(range(layers - 1), r.randint(0, layers - 1))
                                       + [layers - 1]))
    c.pop("head_dim", None)  # the width is hidden / heads here
    drawn = c["num_attention_heads"]  # attention's heads, not Mamba's above
    c["num_attention_heads"] = next(h for h in (drawn, 4, 2, 1) if hidden % h == 0)
    c["num_key_value_heads"] = 1
    return c


def _gen_granite_hybrid(r):  # Bamba's Mamba-2 beside attention (layer_types, the last
    # attending), experts or none beside a shared MLP
    c = _gen_bamba(r)
    layers = c["num_hidden_layers"]
    del c["attn_layer_indices"], c["mlp_bias"]
    experts = r.choice([0, 2, 4])
    c.update(layer_types=[r.choice(["mamba", "attention"]) for _ in range(layers - 1)]
             + ["attention"], num_local_experts=experts,
             num_experts_per_tok=r.randint(1, max(experts, 1)),
             shared_intermediate_size=r.randint(8, 64))
    return c


def _gen_falcon_h1(r):  # Mamba-2 beside attention in every layer, its biases and norm drawn
    c = _common(r)
    heads, width = r.choice([2, 4]), r.choice([4, 8])
    c.update(mamba_n_heads=heads, mamba_d_head=width, mamba_d_ssm=heads * width,
             mamba_n_groups=r.choice([1, 2]), mamba_d_state=r.choice([4, 8]),
             mamba_d_conv=r.choice([2, 4]), mamba_chunk_size=4,
             mamba_conv_bias=r.random() < 0.7, mamba_proj_bias=r.random() < 0.3,
             mamba_rms_norm=r.random() < 0.5, projectors_bias=r.random() < 0.3,
             attention_bias=r.random() < 0.3, mlp_bias=r.random() < 0.3)
    return c


def _gen_mamba(r):  # Mamba and Falcon Mamba: no attention, no MLP, a mixer in each layer
    hidden, expand = r.choice([8, 16, 24, 32]), r.choice([1, 2])
    return {"vocab_size": r.randint(16, 300), "hidden_size": hidden,
            "num_hidden_layers": r.randint(1, 5), "intermediate_size": expand * hidden,
            "expand": expand, "state_size": r.choice([4, 8, 16]), "conv_kernel": r.choice([2, 4]),
            "time_step_rank": r.choice(["auto", r.randint(1, 8)]),
            "use_bias": r.random() < 0.3, "use_conv_bias": r.random() < 0.7,
            "tie_word_embeddings": r.random() < 0.7}


def _gen_jamba(r):  # Mamba beside attention (some layer attends), experts every n-th layer
    c = _common(r, head_dim=False)
    layers, experts = c["num_hidden_layers"], r.choice([1, 2, 4])
    period, every = r.randint(1, layers), r.randint(1, 3)
    c.update(attn_layer_period=period, attn_layer_offset=r.randrange(period),
             num_experts=experts, num_experts_per_tok=r.randint(1, experts),
             expert_layer_period=every, expert_layer_offset=r.randrange(every),
             mamba_d_state=r.choice([4, 8]), mamba_d_conv=r.choice([2, 4]),
             mamba_expand=r.choice([1, 2]), mamba_dt_rank=r.randint(1, 8),
             mamba_conv_bias=r.random() < 0.7, mamba_proj_bias=r.random() < 0.3)
    return c


GENERATORS = {
    "qwen3_next": lambda r: _gen_gated_deltanet(r, moe=True),
    "qwen3_5_text": _gen_gated_deltanet, "qwen3_5_moe_text": _gen_qwen3_5_moe,
    "olmo_hybrid": _gen_olmo_hybrid,
    "bamba": _gen_bamba, "jamba": _gen_jamba, "granitemoehybrid": _gen_granite_hybrid,
    "falcon_h1": _gen_falcon_h1, "mamba": _gen_mamba, "falcon_mamba": _gen_mamba,
    "llama": _gen_llama, "llama4_text": _gen_llama4, "mistral": lambda r: _gen_window(r),
    "ministral": lambda r: _gen_window(r, layer_types=True), "mixtral": _gen_mixtral,
    "qwen2": _gen_qwen2, "qwen3": _gen_qwen3, "qwen2_moe": _gen_qwen2_moe,
    "qwen3_moe": _gen_qwen3_moe, "phi3": _gen_no_head_dim, "olmo": _gen_olmo,
    "olmo2": _gen_olmo, "deepseek_v2": lambda r: _gen_deepseek(r, False),
    "deepseek_v3": lambda r: _gen_deepseek(r, True), "gemma": _gen_gemma,
    "gemma2": lambda r: _gen_gemma(r, "gemma2"), "gemma3_text": lambda r: _gen_gemma(r, "gemma3"),
    "granite": _gen_llama, "cohere": _gen_cohere, "smollm3": _gen_smollm3, "glm": _gen_glm,
    "glm4": _gen_glm, "gpt2": _gen_gpt2_like, "gptj": _gen_gptj, "gpt_neo": _gen_gpt_neo,
    "gpt_neox": _gen_gpt_neox, "opt": _gen_opt, "falcon": _gen_falcon, "bloom": _gen_bloom,
    "mpt": _gen_mpt, "gpt_bigcode": _gen_bigcode, "phi": _gen_phi,
    "starcoder2": _gen_starcoder2, "codegen": _gen_codegen, "bert": _gen_bert,
    "roberta": _gen_bert,
}


# --- the truth off the model -----------------------------------------------------------------

def _causal(config) -> bool:  # does Transformers have a causal-LM class for this type?
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def build(config, device: str = "meta"):  # a Transformers config -> the causal LM, on the meta
    # device unless asked
    from transformers import AutoModel
    torch, _, auto_model, _ = _torch()
    # the text model of an image-text-to-text type has no causal-LM class of its own: its
    # base model, whose lm_head parameters() adds as the type's ForConditionalGeneration holds it
    auto = auto_model if _causal(config) else AutoModel
    with torch.device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # eager experts: the grouped-matmul kernel refuses meta tensors of odd sizes
        return auto.from_config(config, experts_implementation="eager")


def _cache_layers(cache) -> list:  # Transformers 5's Cache -> [(keys, values)] per layer
    # an EncoderDecoderCache (MegatronBERT's, even with no cross-attention): its own part
    cache = getattr(cache, "self_attention_cache", cache)
    if hasattr(cache, "layers"):
        return [(getattr(layer, "keys", None), getattr(layer, "values", None))
                for layer in cache.layers]
    return list(cache)


def _pass_through(hidden_states, *args, **kwargs):
    return hidden_states


def pass_moe_through(model) -> None:
    # MoE routing asks which tokens chose which expert, which meta tensors cannot answer; the
    # cache's shapes do not depend on the MLP, so a MoE block passes its input through here
    for module in model.modules():
        if hasattr(module, "experts") and hasattr(module, "gate"):
            module.forward = _pass_through
        elif hasattr(module, "experts") and hasattr(module, "router"):  # returns (out, scores)
            module.experts.forward = _pass_through


def output_cache(out):  # a forward's output -> its cache (Mamba's output names it cache_params)
    return out.past_key_values if hasattr(out, "past_key_values") else out.cache_params


def forward_cache(model, tokens: int, device: str = "meta") -> list[list[int]]:
    """A forward of `tokens` tokens -> per layer [key numel, value numel, tokens held]; a
    layer that keeps no keys (a hybrid's linear-attention or Mamba layer) holds [0, 0, 0]."""
    import inspect
    torch = _torch()[0]
    pass_moe_through(model)
    ids = torch.zeros((1, tokens), dtype=torch.long, device=device)
    extra = {}
    if "cache_position" in inspect.signature(model.forward).parameters:
        # a hybrid's cache whose first layer keeps no keys cannot say its own length
        extra["cache_position"] = torch.arange(tokens, device=device)
    with torch.no_grad():
        if device == "meta":
            # with no padding id no model asks whether the ids hold it, which meta tensors
            # cannot answer (a mask given instead makes the causal mask ask if it is all ones)
            model.config.pad_token_id = None
        out = model(input_ids=ids, use_cache=True, **extra)
    held = []
    for keys, values in _cache_layers(output_cache(out)):
        held.append([0, 0, 0] if keys is None else
                    [keys.numel(), values.numel(), keys.shape[-2]])
    return held


def text_config(config):  # -> the config of the text decoder (itself, unless multimodal)
    return config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config


def counted_part(model):
    """-> the part of a built model the core counts: the model itself, or for a multimodal
    wrapper (its config holds a text config apart from itself: Gemma 3, Gemma 4, Mllama, ...)
    its language model and the head over it. The core counts text_config and says that the
    vision tower is left out; the tower runs per image, never per generated token."""
    torch, _, _, _ = _torch()
    if text_config(model.config) is model.config:
        return model
    parts = {"language_model": model.get_decoder()}
    head = model.get_output_embeddings()
    if head is not None:
        parts["lm_head"] = head
    return torch.nn.ModuleDict(parts)


# a router held as a bare weight (not a Linear, which `linear` counts already): a token
# multiplies through it; Granite MoE's sits in block_sparse_moe, Jamba's in feed_forward
ROUTERS = ("mlp.gate.weight", "mlp.router.weight", "block_sparse_moe.router.weight",
           "feed_forward.router.weight")


def parameters(model) -> dict:  # -> the counts read off a built model's parameters
    torch, _, _, conv1d = _torch()
    config, model = model.config, counted_part(model)
    total = sum(p.numel() for p in model.parameters())
    linear = router = 0
    for name, module in model.named_modules():
        if isinstance(module, (torch.nn.Linear, conv1d)):
            linear += module.weight.numel()
    experts = []  # [experts, numel] of each fused tensor
    latent = None  # MLA: the width kv_a_proj_with_mqa writes, the latent a server caches
    for name, module in model.named_modules():
        if name.endswith("kv_a_proj_with_mqa"):
            latent = module.weight.shape[0]
    for name, p in model.named_parameters(remove_duplicate=False):
        if ".experts." in name and p.dim() == 3:  # fused gate_up / down: [experts, out, in]
            experts.append([p.shape[0], p.numel()])
        elif name.endswith(ROUTERS) and p.dim() == 2:  # a router
            owner = model.get_submodule(name.rsplit(".", 1)[0])
            if not isinstance(owner, (torch.nn.Linear, conv1d)):
                router += p.numel()
    if not _causal(config):  # a base text model: the lm_head its wrapper holds
        head = config.vocab_size * config.hidden_size
        total += 0 if getattr(config, "tie_word_embeddings", False) else head
        linear += head
    return {"total": total, "linear": linear, "experts": experts, "router_params": router,
            "mla_latent": latent}


def _mrope_sized(config):
    # A multimodal RoPE's sections (Qwen2-VL, GLM-4V) must add up to half the rotary width,
    # which the config class does not check and its default fits only the published head
    # width: a random small config's forward stops there. The sections change no parameter
    # and no cache shape; here they are split to fit, on a copy.
    rope = getattr(config, "rope_parameters", None)
    source = _modeling_source(config)
    if not isinstance(rope, dict) or "mrope_section" not in source:
        return config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    half = int(head_dim * rope.get("partial_rotary_factor", 1.0)) // 2
    first = half // 4
    second = (half - first) // 2
    config = config.__class__.from_dict(config.to_dict())
    config.rope_parameters = {**rope, "mrope_section": [first, second, half - first - second]}
    return config


_SOURCES: dict[str, str] = {}


def _modeling_source(config) -> str:  # the text of the type's modeling module ("" if none)
    import importlib
    name = type(config).__module__.replace(".configuration_", ".modeling_")
    if name not in _SOURCES:
        try:
            _SOURCES[name] = Path(importlib.import_module(name).__file__).read_text()
        except Exception:  # noqa: BLE001 - no modeling module of that name: nothing to size
            _SOURCES[name] = ""
    return _SOURCES[name]


# A model of at most this many parameters, all its parts counted (a wrapper's vision tower at
# its class's full size too), runs its forwards on the CPU with real weights: meta tensors run
# PyTorch's Python reference of each op, and the oracle's 500 small draws spent most of their
# time there. A larger model (a full-size file) stays on meta.
CPU_FORWARD_PARAMS = 2_000_000


def _cache_of(config, model, device):  # -> (short, long) forwards' caches, on `device`
    if device == "cpu":
        model = build(config, device="cpu")
    return forward_cache(model, SHORT, device), forward_cache(model, LONG, device)


def truth(config) -> dict:  # -> what the model itself says
    config = _mrope_sized(config)
    model = build(config)
    counts = parameters(model)
    # the other device where the first cannot run the forward (BioGPT's positions ask a
    # tensor's value on meta; Emu3's class refuses a null padding id); one that fails on both
    # raises
    small = sum(p.numel() for p in model.parameters()) <= CPU_FORWARD_PARAMS
    first, then = ("cpu", "meta") if small else ("meta", "cpu")
    try:
        short, long = _cache_of(config, model, first)
    except Exception:  # noqa: BLE001 - the other device's forward, as said above
        short, long = _cache_of(config, model, then)
    return {**counts,
            "kv_widths": [[k // SHORT, v // SHORT] for k, v, _ in short],
            "held_after_long": [t for _, _, t in long]}


# --- configs as written -----------------------------------------------------------------------

def written(config) -> dict:  # a config object -> config.json as save_pretrained writes it
    out = config.to_diff_dict()
    return json.loads(json.dumps(out))  # plain JSON types


V4_RENAMES = {"dtype": "torch_dtype"}


def as_v4(cfg: dict) -> dict:
    """Transformers 5's field names -> Transformers 4's where they differ."""
    out = {}
    for key, value in cfg.items():
        if key == "rope_parameters" and isinstance(value, dict):
            if "rope_theta" in value:
                out["rope_theta"] = value["rope_theta"]
            if value.get("rope_type", "default") != "default":
                out["rope_scaling"] = {k: v for k, v in value.items() if k != "rope_theta"}
            continue
        if key == "num_local_experts" and cfg.get("model_type") in ("qwen2_moe", "qwen3_moe"):
            out["num_experts"] = value
            continue
        out[V4_RENAMES.get(key, key)] = value
    out["transformers_version"] = "4.57.1"
    return out


def make(family: str, r: random.Random):  # -> (config object, written dict) or None
    from huggingface_hub.errors import StrictDataclassError
    _, auto_config, _, _ = _torch()
    kwargs = GENERATORS[family](r)
    kwargs["dtype"] = r.choice(["bfloat16", "float16", "float32"])
    # some classes' default padding id (32000, 151329, ...) lies past a small vocabulary
    kwargs["pad_token_id"] = r.randrange(min(kwargs["vocab_size"], 16))
    try:
        config = auto_config.for_model(family, **kwargs)
    except (ValueError, StrictDataclassError):  # a shape its class refuses: draw again
        return None
    if family == "gemma3_text":
        config.architectures = ["Gemma3ForCausalLM"]
    return config, written(config)


def record(family: str, config, cfg: dict, form: str) -> dict:
    return {"family": family, "form": form, "config": cfg, "truth": truth(config)}


# written with every default, as Transformers 5 writes; Hub files often leave fields out
UNCOMPARED = {"transformers_version"}


def _read_as(config) -> dict:  # a config object -> what its class made of it
    return {k: v for k, v in config.to_dict().items() if k not in UNCOMPARED}


def left_out(family: str, config, cfg: dict) -> tuple[list[str], dict]:
    """The fields of a written config that its class fills in the same when they are left out
    (each alone), and the config with all of them left out, as a Hub file may be written.

    No model is built: the class reading the shorter file into the same config is the same
    model, so the record's truth stands for each."""
    from huggingface_hub.errors import StrictDataclassError
    _, auto_config, _, _ = _torch()
    want = _read_as(config)

    def same(cfg_):
        try:
            again = auto_config.for_model(family, **{k: v for k, v in cfg_.items()
                                                     if k != "model_type"})
        except (ValueError, TypeError, StrictDataclassError):  # a class that needs the field
            return False
        return _read_as(again) == want

    keys = [k for k in cfg if k not in ("model_type", *UNCOMPARED)
            and same({x: v for x, v in cfg.items() if x != k})]
    # all at once, only the fields the core reads as optional (it refuses a file without a
    # size, where Transformers would build its class's default model)
    optional = optional_fields(family, cfg)
    sparse = {k: v for k, v in cfg.items() if k not in keys or k not in optional}
    if not same(sparse):  # two fields whose defaults lean on each other: leave out fewer
        sparse = dict(cfg)
        for key in keys:
            fewer = {k: v for k, v in sparse.items() if k != key}
            sparse = fewer if key in optional and same(fewer) else sparse
    return keys, sparse


def optional_fields(family: str, cfg: dict) -> set[str]:  # the fields the core reads with a
    # default when a file leaves them out (config_families.optional_groups), less a size with
    # no default that the type's class does not fill with a constant (OLMo-Hybrid's linear
    # heads, which its class computes from other sizes): the core refuses a file without it
    key, row = config_families.family(family, cfg)
    _, filled = config_families.with_class_defaults(key or family, row, {})
    required = {f["field"] for term in row["tensors"] for product in term["size"]
                for f in product if isinstance(f, dict) and not {"default", "auto"} & set(f)}
    return {f for g in config_families.optional_groups(row) for f in g} - (required - set(filled))


def generate(per_family: int, seed: int, families=None) -> list[dict]:
    _, auto_config, _, _ = _torch()
    r = random.Random(seed)
    records = []
    for family in families or GENERATORS:
        made = 0
        while made < per_family:
            drawn = make(family, r)
            if drawn is None:
                continue
            config, cfg = drawn
            dropped = left_out(family, config, cfg)  # before the forward, which sets the
            rec = record(family, config, cfg, "v5")  # config's padding id to None
            rec["left_out"], rec["sparse"] = dropped
            records.append(rec)
            made += 1
            if made % 2 == 0:  # every other one also in Transformers 4's spelling
                v4 = as_v4(cfg)
                again = auto_config.for_model(family, **{k: v for k, v in v4.items()
                                                         if k != "model_type"})
                t = truth(again)
                if t != rec["truth"]:
                    raise SystemExit(f"{family}: the v4 spelling builds another model:\n{v4}")
                records.append({**rec, "form": "v4", "config": v4, "left_out": [],
                                "sparse": None})
                made += 1
    return records


def check_files(paths: list[str]) -> list[dict]:  # hand-typed config.json -> their truth
    _, auto_config, _, _ = _torch()
    out = []
    for path in paths:
        cfg = json.loads(Path(path).read_text())
        config = auto_config.for_model(cfg["model_type"],
                                       **{k: v for k, v in cfg.items() if k != "model_type"})
        if cfg["model_type"] == "gemma3":
            config = config.text_config
        out.append({"file": Path(path).name, "truth": truth(config)})
    return out


def active_linear(truth: dict, top_k: int) -> int:  # stored expert tensors -> the k a token uses
    active = 0
    for experts, numel in truth["experts"]:
        assert numel * top_k % experts == 0
        active += numel * top_k // experts
    return truth["linear"] + truth["router_params"] + active


def _falcon_broadcasts(cfg: dict) -> bool:
    return bool(cfg.get("new_decoder_architecture"))


def differences(rec: dict) -> dict:
    """One record -> {what: (core, Transformers)} for every count that differs."""
    cfg, truth = rec["config"], rec["truth"]
    m = costs.ModelShape.from_config(costs.parse_config_text(json.dumps(cfg)))
    out = {}

    def check(what, core, real):
        if core != real:
            out[what] = (core, real)

    check("total", costs.total_params(m), truth["total"])
    check("matmul", costs.matmul_params(m), active_linear(truth, m.experts_per_token))
    widths = sum(k + v for k, v in truth["kv_widths"])
    core_kv = costs.kv_bytes_per_token(m, 1)
    if rec["family"] == "falcon" and _falcon_broadcasts(rec["config"]):
        core_kv = core_kv * m.heads // m.kv_heads  # what Transformers' Falcon holds
    check("kv elements per token", core_kv, widths)
    if m.mla:
        check("MLA latent", m.kv_lora_rank + m.qk_rope_head_dim, truth["mla_latent"])
    held = sum(truth["held_after_long"])
    if rec["family"] == "gpt_neo":  # Transformers keeps every token; the core the window
        m = dataclasses.replace(m, sliding_window=None)
    core_held = costs.decode_pairs(m, LONG + 1) * m.attention_layers - m.attention_layers
    check("tokens held past the window", round(core_held), held)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--per-family", type=int, default=14)
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--family", action="append", help="only these families")
    p.add_argument("--out", type=Path, default=Path("hf_oracle.json"))
    p.add_argument("--check", nargs="+", help="hand-typed config.json files instead")
    a = p.parse_args(argv)
    import transformers
    start = time.perf_counter()
    if a.check:
        json.dump(check_files(a.check), sys.stdout, indent=1)
        return 0
    records = generate(a.per_family, a.seed, a.family)
    doc = {"transformers": transformers.__version__, "seed": a.seed, "records": records}
    a.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"{len(records)} configs in {time.perf_counter() - start:.1f} s -> {a.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
