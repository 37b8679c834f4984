"""Which config.json fields each model family spells its figures with, and what applies when
a Hub config leaves one out or writes null.

Plain JSON-able data (dicts, lists, strings, numbers, booleans, None) and nothing else, so a
JavaScript port can embed the very table: `json.dumps(FAMILIES)`. costs.py interprets it.

A *rule* says how one figure is read:

    {"names": [field, ...],   tried in order; the first the config holds, even as null, is read;
                              "a.b" reads field b of the object in field a
     "default": DEFAULT,      used when no name is held or the one held is null; a rule without
                              "default" makes the figure required (a clear error names it)
     "cases": [{"if": flag, "if_absent": bool, "then": RULE}, ...]}
                              the first case whose boolean flag is true (absent or null: if_absent)
                              is read with its own RULE instead; none true: this rule

A DEFAULT is one of:

    {"value": v}                                   v itself (null: not known)
    {"same_as": figure}                            an earlier figure
    {"times": k, "of": figure}                     k x an earlier figure
    {"divide": figure, "by": figure}               their quotient, which must be exact

Figures are read in FIGURES' order, so a default may use only a figure before it. Flags
("if") are top-level fields of the config.

A family's *row*: {"mlp_matrices": 2 | 3, "tied": bool | None, "learned_positions": bool,
"figures": {figure: RULE, ...}, "window": WINDOW}. "figures" replaces BASE's rule for the
figures it names; "tied" is the tie_word_embeddings default (None: not known, assumed untied
and said so); "experts_wide": "intermediate" (a derived row, OLMoE's) makes each expert
intermediate_size wide where num_experts is set and moe_intermediate_size is not, as its class
has no such field; "window" says how a sliding (local) window is recorded:

    {"names": [...], "default": {"value": v}}      the window's width: the first name held, else
                                                   v (null: no window)
    "layer_pattern": "attention_types"             GPT-Neo: [[["global", "local"], 12]] lists the
                                                   layers; "local" ones slide
    "layer_pattern_default": [...]                 the list when the config has none
    "alternate": true                              Gemma 2: sliding, full, sliding, ...
    "pattern_default": p                           Gemma 3: every p-th layer full when the config
                                                   has no sliding_window_pattern
    "chunked": true                                Llama 4: the width is a chunk; layer_types'
                                                   "chunked_attention" layers (else no_rope_layers'
                                                   1s, else all but every no_rope_layer_interval-th)
    "rope_free": true                              SmolLM3: layer_types' sliding layers, else
                                                   no_rope_layers' 0s, else every
                                                   no_rope_layer_interval-th

A row's "tensors" list the parameters beside the big matrices costs.py counts itself (q, k, v,
o, the MLP's, the experts, the router, the embedding, a learned position table and lm_head):
norms, biases, extra projections, as Transformers' model code builds them. Each is

    {"what": text,
     "per": "model" | "layer" | "dense_layer" | "moe_layer" | "shared_layer"
            | "attention_layer" | "uncached_layer",
                                      how many of it there are (a shared layer: a MoE
                                      layer that runs a shared MLP; an uncached layer: one
                                      with no attention, layer_types' linear attention
                                      or Mamba; an attention layer: every other)
     "size": [[factor, ...], ...],        a sum of products; a factor is a figure of the
                                          ModelShape (costs.py), an int, or
                                          {"field": f, "default": v} (a config number;
                                          with no "default", the file must hold it;
                                          with "auto": [figure, k], absent, null or
                                          "auto" is ceil(figure / k))
     "matmul": true,                      a weight a token multiplies through (else stored only)
     "when": [condition, ...]}            all must hold; none: always

and a condition is {"flag": f, "default": bool} (the flag, or when absent or null the default,
is true), the same with "is": false (it is false), {"present": figure} (the figure is not
null) or {"field": f, "equals": v, "default": d} (the field, else d, equals v).

A row's "notes" are fields the model code ignores: {"field": f, "expect": v | figure,
"note": text}; when the config holds f with another value the text is said.

A default is in a row only where a published config relies on it (GPT-J's n_inner: null,
Falcon's absent MLP width, Gemma 3 4B's absent head counts); a size a config simply forgot is
an error, since a class default guessed for it would be a confident wrong answer. A field a
row reads with a default (optional_groups) that a config leaves out is first set to its type's
config class default (the derived data's "fills"), as Transformers reads it.
"""

import json
from pathlib import Path

FIGURES = ["layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab",
           "max_positions", "embedding_width"]

# What every family reads unless its row says otherwise (and what an unknown family reads).
BASE = {
    "layers": {"names": ["num_hidden_layers", "n_layer"]},
    "hidden": {"names": ["hidden_size", "n_embd"]},
    "heads": {"names": ["num_attention_heads", "n_head"]},
    "kv_heads": {"names": ["num_key_value_heads"], "default": {"same_as": "heads"}},
    "head_dim": {"names": ["head_dim"], "default": {"divide": "hidden", "by": "heads"}},
    "intermediate": {"names": ["intermediate_size", "n_inner"]},
    "vocab": {"names": ["vocab_size"]},
    "max_positions": {"names": ["max_position_embeddings", "n_positions", "n_ctx"],
                      "default": {"value": None}},
    # the token table's width (and so lm_head's inputs): the model's, but for OPT's
    # word_embed_proj_dim, projected in and out of the layers' width
    "embedding_width": {"names": [], "default": {"same_as": "hidden"}},
}
BASE_WINDOW = {"names": ["sliding_window"], "default": {"value": None}}

FOUR_X = {"times": 4, "of": "hidden"}  # the classic MLP: four times the model's width


# --- the tensors beside the big matrices ----------------------------------------------------

def _when(flag=None, default=False, is_=True):
    return [] if flag is None else [{"flag": flag, "default": default, **({} if is_ else
                                                                         {"is": False})}]


def _t(what, per, size, when=(), matmul=False):
    term = {"what": what, "per": per, "size": size, "when": list(when)}
    if matmul:
        term["matmul"] = True
    return term


def _norms(per_layer, *, bias=False, final=True, when=()):  # RMSNorm: weight; LayerNorm: + bias
    width = [[2, "hidden"]] if bias else [["hidden"]]
    out = [_t(f"{per_layer} norms per layer", "layer", [[per_layer] + f for f in width], when)]
    if final:
        out.append(_t("the final norm", "model", width, when))
    return out


QKV = [["heads", "head_dim"], ["kv_heads", "head_dim"], ["kv_heads", "v_head_dim"]]


def _qkv_bias(when=()):
    return [_t("q, k, v biases", "layer", QKV, when)]


def _o_bias(when=()):
    return [_t("output projection bias", "layer", [["hidden"]], when)]


def _mlp_bias(matrices, when=()):  # gate and up (or up alone) are as wide as the MLP; down: hidden
    return [_t("MLP biases", "dense_layer", [[matrices - 1, "intermediate"], ["hidden"]], when)]


def _lm_head_bias():
    return [_t("lm_head bias", "model", [["vocab"]])]


def _qk_norm(scope):  # "head": one head_dim-wide norm for q and one for k; "all": every head's
    if scope == "head":
        return [_t("q and k norms", "layer", [[2, "head_dim"]])]
    return [_t("q and k norms", "layer", [["heads", "head_dim"], ["kv_heads", "head_dim"]])]


def _llama_like(extra=()):  # Llama's optional biases (attention_bias, mlp_bias)
    return (_norms(2) + _qkv_bias(_when("attention_bias")) + _o_bias(_when("attention_bias"))
            + _mlp_bias(3, _when("mlp_bias")) + list(extra))


def _row(mlp_matrices, tied, learned_positions=False, figures=None, window=None, tensors=None,
         notes=None):
    row = {"mlp_matrices": mlp_matrices, "tied": tied, "learned_positions": learned_positions,
           "figures": figures or {}, "tensors": _norms(2) if tensors is None else tensors,
           "notes": notes or []}
    if window is not None:
        row["window"] = window
    return row


def _gated(tied=False, figures=None, window=None, tensors=None):  # gate, up, down: SwiGLU
    return _row(3, tied, figures=figures, window=window, tensors=tensors)


def _plain(tied, learned_positions=False, figures=None, window=None, tensors=None,
           notes=None):  # up and down only
    return _row(2, tied, learned_positions, figures, window, tensors, notes)


# GPT-2 and GPT-J: n_inner null (or absent) is 4 x n_embd.
_N_INNER = {"intermediate": {"names": ["n_inner"], "default": FOUR_X},
            "max_positions": {"names": ["n_positions", "n_ctx"], "default": {"value": None}}}

# Falcon: multi_query (true unless set) means one KV head; the new decoder architecture
# (40B, 180B) reads num_kv_heads; otherwise every query head has its own.
_FALCON = {
    "layers": {"names": ["num_hidden_layers", "n_layer"]},
    "hidden": {"names": ["hidden_size", "n_embed"]},
    "heads": {"names": ["num_attention_heads", "n_head"]},
    "kv_heads": {"names": [], "default": {"same_as": "heads"}, "cases": [
        {"if": "new_decoder_architecture", "if_absent": False,
         "then": {"names": ["num_kv_heads", "n_head_kv"], "default": {"same_as": "heads"}}},
        {"if": "multi_query", "if_absent": True, "then": {"names": [], "default": {"value": 1}}},
    ]},
    "intermediate": {"names": ["ffn_hidden_size"], "default": FOUR_X},
    "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
}
# The first Falcon-40B upload (model_type RefinedWeb): always the grouped layout, n_head_kv.
_REFINED_WEB = {**_FALCON, "kv_heads": {"names": ["n_head_kv", "num_kv_heads"],
                                        "default": {"same_as": "heads"}}}

_USE_BIAS = _when("use_bias", True)  # StarCoder2: biases unless use_bias is false
_QWEN3 = _norms(2) + _qk_norm("head") + _qkv_bias(_when("attention_bias")) + _o_bias(
    _when("attention_bias"))
_GEMMA_BIAS = _qkv_bias(_when("attention_bias")) + _o_bias(_when("attention_bias"))
# DeepSeek's MLA norms its low-rank q (when q_lora_rank) and its kv latent; with
# attention_bias the projections to the latents and the output one have biases (the
# projections up from the latents, and a full-rank q, never do)
_DEEPSEEK = _gated(tensors=_norms(2) + [
    _t("q latent norm", "layer", [["q_lora_rank"]], [{"present": "q_lora_rank"}]),
    _t("kv latent norm", "layer", [["kv_lora_rank"]]),
    _t("q latent projection's bias", "layer", [["q_lora_rank"]],
       [{"present": "q_lora_rank"}] + _when("attention_bias")),
    _t("kv latent and output projections' biases", "layer",
       [["kv_lora_rank"], ["qk_rope_head_dim"], ["hidden"]], _when("attention_bias"))])
# DeepSeek-V2 alone reads mlp_bias: biases on the dense layers' MLPs and on each MoE layer's
# shared-expert MLP (built even with no shared expert: a zero-wide MLP whose down bias remains)
_DEEPSEEK_V2 = {**_DEEPSEEK, "tensors": _DEEPSEEK["tensors"] + _mlp_bias(3, _when("mlp_bias")) + [
    _t("shared experts' MLP biases", "moe_layer", [[2, "shared_intermediate"], ["hidden"]],
       _when("mlp_bias"))]}

# Gated DeltaNet (Qwen3-Next, Qwen3.5, OLMo-Hybrid): a layer that holds no KV cache has no
# q, k, v and o; in their place, projections to its queries and keys (key heads), its values
# and output gate (value heads), a decay and a beta per value head, and back out to the
# model's width (one fused matrix or several: the same weights), then a depthwise convolution
# over q, k and v, a decay and a bias per value head, and a norm one value head wide.
_NK, _DK = {"field": "linear_num_key_heads"}, {"field": "linear_key_head_dim"}
_NV, _DV = {"field": "linear_num_value_heads"}, {"field": "linear_value_head_dim"}
_NO_ATTENTION = _t("no q, k, v and o on a layer without attention", "uncached_layer",
                   [[-1, "hidden", "heads", "head_dim"], [-1, "hidden", "kv_heads", "head_dim"],
                    [-1, "hidden", "kv_heads", "v_head_dim"],
                    [-1, "heads", "v_head_dim", "hidden"]], matmul=True)
_GATED_DELTANET_TENSORS = [
    _NO_ATTENTION,
    _t("Gated DeltaNet's projections", "uncached_layer",
       [["hidden", 2, _NK, _DK], ["hidden", 3, _NV, _DV], ["hidden", 2, _NV]], matmul=True),
    _t("Gated DeltaNet's convolution, decays, biases and norm", "uncached_layer",
       [[2, _NK, _DK, {"field": "linear_conv_kernel_dim"}],
        [_NV, _DV, {"field": "linear_conv_kernel_dim"}], [2, _NV], [_DV]])]
# Mamba-2 (Bamba): a layer without attention has, in its place, one projection in to the
# gate and the input (each expand x hidden wide), B and C (n_groups x d_state each) and a
# step per head, and one back out; a depthwise convolution over the input, B and C (with a
# bias unless mamba_conv_bias is false), a decay, a skip and a step bias per head, and a norm
# as wide as the input
_INNER = ["hidden", {"field": "mamba_expand"}]
_GROUPS = [{"field": "mamba_n_groups"}, {"field": "mamba_d_state"}]
_MAMBA_HEADS, _KERNEL = {"field": "mamba_n_heads"}, {"field": "mamba_d_conv"}
_MAMBA2_TENSORS = [
    _NO_ATTENTION,
    _t("Mamba-2's projections in and out", "uncached_layer",
       [[2, "hidden", *_INNER], [2, "hidden", *_GROUPS], ["hidden", _MAMBA_HEADS],
        [*_INNER, "hidden"]], matmul=True),
    _t("Mamba-2's convolution, decays, skips, step biases and norm", "uncached_layer",
       [[*_INNER, _KERNEL], [2, *_GROUPS, _KERNEL], [3, _MAMBA_HEADS], _INNER]),
    _t("Mamba-2's convolution bias", "uncached_layer", [_INNER, [2, *_GROUPS]],
       _when("mamba_conv_bias", True)),
    _t("Mamba-2's projection biases", "uncached_layer",
       [[2, *_INNER], [2, *_GROUPS], [_MAMBA_HEADS], ["hidden"]], _when("mamba_proj_bias"))]

# Mamba's mixer, in place of attention on each layer it holds: a projection in to the gate and
# the input (each `inner` wide), one from the input to the step's rank and to B and C (`state`
# each), one from that rank back up to the input's width (with a bias), and one back out; a
# depthwise convolution over the input (with a bias unless `conv_bias` is false), a decay
# matrix (input x state), a skip per channel, and biases on the projections in and out under
# `proj_bias`; `extra`: norms of the same layers (Jamba's); the callers put _NO_ATTENTION
def _mamba_mixer(inner, rank, state, kernel, conv_bias, proj_bias, extra=()):
    return [
        _t("Mamba's projections in, to the step and B and C, up from the step, and out",
           "uncached_layer", [[2, "hidden", *inner], [*inner, rank], [2, *inner, state],
                              [rank, *inner], [*inner, "hidden"]], matmul=True),
        _t("Mamba's convolution, step bias, "
           + ("decays, skips and norms" if extra else "decays and skips"), "uncached_layer",
           [[*inner, kernel], inner, [*inner, state], inner, *extra]),
        _t("Mamba's convolution bias", "uncached_layer", [inner], _when(conv_bias, True)),
        _t("Mamba's projection biases", "uncached_layer", [[2, *inner], ["hidden"]],
           _when(proj_bias))]


# Jamba's Mamba layers: expand x hidden wide, with norms on the step, B and C (the step's
# rank: absent or "auto" is ceil(hidden / 16), as JambaConfig computes it; null is read the
# same here)
_STATE = {"field": "mamba_d_state"}
_RANK = {"field": "mamba_dt_rank", "auto": ["hidden", 16]}
_MAMBA_TENSORS = [_NO_ATTENTION] + _mamba_mixer(
    [{"field": "mamba_expand"}, "hidden"], _RANK, _STATE, {"field": "mamba_d_conv"},
    "mamba_conv_bias", "mamba_proj_bias", extra=([_RANK], [2, _STATE]))

# Falcon-H1: Mamba-2 beside attention in every layer, its inner width mamba_d_ssm: one
# projection in (gate and input, B and C, a step per head) and one out (with a bias under
# projectors_bias), a convolution over the input, B and C, a decay, a skip and a step bias per
# head, and a norm mamba_d_ssm wide only with mamba_rms_norm
_SSM = {"field": "mamba_d_ssm"}
_FALCON_H1_MAMBA = [
    _t("Mamba-2's projections in and out", "layer",
       [[2, "hidden", _SSM], [2, "hidden", *_GROUPS], ["hidden", _MAMBA_HEADS], [_SSM, "hidden"]],
       matmul=True),
    _t("Mamba-2's convolution, decays, skips and step biases", "layer",
       [[_SSM, _KERNEL], [2, *_GROUPS, _KERNEL], [3, _MAMBA_HEADS]]),
    _t("Mamba-2's convolution bias", "layer", [[_SSM], [2, *_GROUPS]],
       _when("mamba_conv_bias", True)),
    _t("Mamba-2's norm", "layer", [[_SSM]], _when("mamba_rms_norm")),
    _t("Mamba-2's projection in: its bias", "layer", [[2, _SSM], [2, *_GROUPS], [_MAMBA_HEADS]],
       _when("mamba_proj_bias")),
    _t("Mamba-2's projection out: its bias", "layer", [["hidden"]], _when("projectors_bias"))]

# Mamba and Falcon Mamba: every layer is a Mamba mixer and a norm, nothing else. The core's
# layer holds attention and an MLP, so both are taken back out: with no head-count field,
# heads default to 1 (head_dim = hidden), whose q, k, v and o the layers without attention
# remove, and the MLP goes too. The mixer is intermediate_size wide: a projection in to the
# gate and the input, one to the step's rank (time_step_rank; "auto": ceil(hidden / 16)) and
# B and C (state_size each), one up from the step (with a bias) and one out; a depthwise
# convolution (a bias unless use_conv_bias is false), decays and skips; biases on the
# projections in and out under use_bias
# (no layer attends: heads and KV heads are 1 whatever a file says, as its class reads none)
_ONE = {"names": [], "default": {"value": 1}}
_MAMBA_ONLY = _gated(tied=None, figures={"heads": _ONE, "kv_heads": _ONE},
                     tensors=_norms(1) + [
    _NO_ATTENTION,
    _t("no MLP: a Mamba layer has none", "dense_layer", [[-3, "hidden", "intermediate"]],
       matmul=True)] + _mamba_mixer(["intermediate"], {"field": "time_step_rank",
                                                        "auto": ["hidden", 16]},
                                    {"field": "state_size"}, {"field": "conv_kernel"},
                                    "use_conv_bias", "use_bias"))

# with attention_bias, a hybrid's attention layers alone have q, k, v and o biases
_HYBRID_ATTENTION_BIAS = [_t("q, k, v and o biases", "attention_layer", QKV + [["hidden"]],
                             _when("attention_bias"))]
# Qwen3-Next and Qwen3.5 gate their attention's output per head: q_proj is twice as wide
_GATED_ATTENTION = _HYBRID_ATTENTION_BIAS + [
    _t("attention's output gate (q_proj's second half)", "attention_layer",
       [["hidden", "heads", "head_dim"]], matmul=True),
    _t("the output gate's bias", "attention_layer", [["heads", "head_dim"]],
       _when("attention_bias")),
    _t("q and k norms", "attention_layer", [[2, "head_dim"]])]
# Qwen3-Next's layers: gated attention, Gated DeltaNet, and a MoE that gates its shared expert
_QWEN3_NEXT_TENSORS = _norms(2) + _GATED_ATTENTION + _GATED_DELTANET_TENSORS + [
    _t("shared expert's gate", "moe_layer", [["hidden"]], matmul=True)]

# Gemma 3 4B's text_config leaves out the head counts, head width and vocabulary: these are
# Gemma3TextConfig's defaults, which the published file relies on.
_GEMMA3 = _gated(tied=True, figures={
    "heads": {"names": ["num_attention_heads"], "default": {"value": 8}},
    "kv_heads": {"names": ["num_key_value_heads"], "default": {"value": 4}},
    "head_dim": {"names": ["head_dim"], "default": {"value": 256}},
    "vocab": {"names": ["vocab_size"], "default": {"value": 262208}},
}, window={**BASE_WINDOW, "pattern_default": 6},
    tensors=_norms(4) + _qk_norm("head") + _GEMMA_BIAS)

# LayerNorm families: every norm has a bias beside its weight.
_GPT2 = _norms(2, bias=True) + _qkv_bias() + _o_bias() + _mlp_bias(2)
_GPTJ = _norms(1, bias=True) + _mlp_bias(2) + _lm_head_bias()  # attention in parallel, one norm

# Falcon's norms per layer: two unless attention runs in parallel with one shared norm.
_PARALLEL = {"flag": "parallel_attn", "default": True}
_FALCON_NORMS = [
    _t("2 norms per layer", "layer", [[4, "hidden"]], [{**_PARALLEL, "is": False}]),
    _t("2 norms per layer", "layer", [[4, "hidden"]],
       [_PARALLEL, {"field": "num_ln_in_parallel_attn", "in": [2]}]),
    _t("2 norms per layer", "layer", [[4, "hidden"]],  # the new architecture's default: 2
       [_PARALLEL, {"field": "num_ln_in_parallel_attn", "in": [None]},
        {"flag": "new_decoder_architecture", "default": False}]),
    _t("1 norm per layer", "layer", [[2, "hidden"]],
       [_PARALLEL, {"field": "num_ln_in_parallel_attn", "not_in": [2, None]}]),
    _t("1 norm per layer", "layer", [[2, "hidden"]],
       [_PARALLEL, {"field": "num_ln_in_parallel_attn", "in": [None]},
        {"flag": "new_decoder_architecture", "default": False, "is": False}]),
    _t("the final norm", "model", [[2, "hidden"]]),
] + _qkv_bias(_when("bias")) + _o_bias(_when("bias")) + _mlp_bias(2, _when("bias"))

# OPT: LayerNorms with weights unless layer_norm_elementwise_affine is false; the final one
# only with pre-norm layers; biases unless enable_bias is false; its position table has two
# rows more than max_position_embeddings (padding offset).
_AFFINE = _when("layer_norm_elementwise_affine", True)
_OPT = (_norms(2, bias=True, final=False, when=_AFFINE)
        + [_t("the final norm", "model", [[2, "hidden"]], _AFFINE + _when(
            "do_layer_norm_before", True) + _when("_remove_final_layer_norm", False, False))]
        + _qkv_bias(_when("enable_bias", True)) + _o_bias(_when("enable_bias", True))
        + _mlp_bias(2, _when("enable_bias", True))
        + [_t("position table's 2 offset rows", "model", [[2, "hidden"]])])

# BERT and RoBERTa as causal LMs: post-norm layers with no final norm; a norm and a token-type
# table on the embedding; a prediction head (dense, norm, bias) before the tied decoder.
_BERT = (_norms(2, bias=True, final=False) + _qkv_bias() + _o_bias() + _mlp_bias(2) + [
    _t("embedding norm", "model", [[2, "hidden"]]),
    _t("token-type table", "model", [[{"field": "type_vocab_size", "default": 2}, "hidden"]]),
    _t("prediction head's dense weight", "model", [["hidden", "hidden"]], matmul=True),
    _t("prediction head's bias and norm", "model", [[3, "hidden"]]),
] + _lm_head_bias())

# Llama 4: its dense layers' MLPs are intermediate_size_mlp wide (intermediate_size is an
# expert's, read by costs._moe with the shared expert); the layers with RoPE attend in chunks
# of attention_chunk_size, which Transformers caches like a window. A fit over random configs
# saw neither: its draws had every layer a MoE one and prompts shorter than a chunk.
_LLAMA4 = _gated(figures={"intermediate": {"names": ["intermediate_size_mlp"]}},
                 window={"names": ["attention_chunk_size"], "default": {"value": None},
                         "chunked": True}, tensors=_norms(2) + _GEMMA_BIAS)

HAND_FAMILIES = {
    # --- gated MLPs (gate, up, down) ---
    "llama4_text": _LLAMA4,
    "llama4": _LLAMA4,  # a multimodal config whose text_config names no model_type
    "llama": _gated(tensors=_llama_like()),
    "mistral": _gated(),
    "ministral": _gated(),
    "mixtral": _gated(),
    "qwen2": _gated(tensors=_norms(2) + _qkv_bias()),
    "qwen3": _gated(tensors=_QWEN3),
    # Qwen2-MoE: q, k, v biases unless qkv_bias is false; a one-output gate on the shared
    # expert in every MoE layer, even when the shared expert has no width
    "qwen2_moe": _gated(tensors=_norms(2) + _qkv_bias(_when("qkv_bias", True)) + [
        _t("shared expert's gate", "moe_layer", [["hidden"]], matmul=True)]),
    "qwen3_moe": _gated(tensors=_QWEN3),
    "phi3": _gated(),
    "olmo": _gated(tensors=_GEMMA_BIAS),  # OLMo's LayerNorms have no weights at all
    "olmo2": _gated(tensors=_norms(2) + _qk_norm("all") + _GEMMA_BIAS),
    "deepseek_v2": _DEEPSEEK_V2,
    "deepseek_v3": _DEEPSEEK,
    # hybrids: attention on the layers layer_types names full_attention, Gated DeltaNet on
    # the rest (their fixed state: STATES)
    "qwen3_next": _gated(tensors=_QWEN3_NEXT_TENSORS),
    "qwen3_5_text": _gated(tensors=_norms(2) + _GATED_ATTENTION + _GATED_DELTANET_TENSORS),
    # Qwen3.5-MoE: Qwen3-Next's layers with every MLP a MoE, so its class has no dense
    # intermediate_size (0 here: no layer uses it)
    "qwen3_5_moe_text": _gated(figures={"intermediate": {"names": ["intermediate_size"],
                                                         "default": {"value": 0}}},
                               tensors=_QWEN3_NEXT_TENSORS),
    "bamba": _gated(tensors=_norms(2) + _HYBRID_ATTENTION_BIAS + _mlp_bias(3, _when("mlp_bias"))
                    + _MAMBA2_TENSORS),
    # Granite 4's hybrid: Bamba's Mamba-2 layers and attention as layer_types lists them;
    # experts intermediate_size wide beside a shared MLP (costs._moe); with no experts, the
    # shared MLP alone, shared_intermediate_size wide, is each layer's dense MLP
    "granitemoehybrid": _gated(tied=None, tensors=_norms(2) + _HYBRID_ATTENTION_BIAS
                               + _MAMBA2_TENSORS + [
        _t("the dense MLP: shared_intermediate_size wide, not intermediate_size", "dense_layer",
           [[-3, "hidden", "intermediate"], [3, "hidden", {"field": "shared_intermediate_size"}]],
           [{"field": "num_local_experts", "in": [0, None]}], matmul=True)]),
    "falcon_h1": _gated(tied=None, tensors=_norms(2) + _GEMMA_BIAS + _mlp_bias(3, _when("mlp_bias"))
                        + _FALCON_H1_MAMBA),
    "mamba": _MAMBA_ONLY,
    "falcon_mamba": _MAMBA_ONLY,
    # Jamba: attention on every attn_layer_period-th layer, Mamba on the rest; experts on
    # every expert_layer_period-th (costs._moe), each intermediate_size wide
    "jamba": _gated(tensors=_norms(2) + _MAMBA_TENSORS),
    "olmo_hybrid": _gated(tensors=_norms(2) + _HYBRID_ATTENTION_BIAS + [
        _t("q and k norms", "attention_layer", [["heads", "head_dim"], ["kv_heads", "head_dim"]])
    ] + _GATED_DELTANET_TENSORS),
    # Kimi K2: DeepSeek-V3's architecture under its own name, with remote code Transformers
    # does not ship, so no build derives it
    "kimi_k2": _DEEPSEEK,
    "gemma": _gated(tied=True, tensors=_norms(2) + _GEMMA_BIAS),
    "gemma2": _gated(tied=True, window={**BASE_WINDOW, "alternate": True},
                     tensors=_norms(4) + _GEMMA_BIAS),
    "gemma3_text": _GEMMA3,
    "gemma3": _GEMMA3,  # a multimodal config whose text_config names no model_type
    "granite": _gated(tied=None, tensors=_llama_like()),
    # Cohere: one weight-only LayerNorm per layer (attention and MLP in parallel); optional
    # per-head q and k norms
    "cohere": _gated(tied=None, tensors=_norms(1) + _GEMMA_BIAS + [
        _t("q and k norms", "layer", [["heads", "head_dim"], ["kv_heads", "head_dim"]],
           _when("use_qk_norm"))]),
    "internlm2": _gated(tied=None, tensors=_llama_like()),
    "yi": _gated(tied=None, tensors=_llama_like()),
    # SmolLM3: with use_sliding_window, its layers without RoPE slide (layer_types absent)
    "smollm3": _gated(tied=None, window={**BASE_WINDOW, "rope_free": True},
                      tensors=_llama_like()),
    "glm": _gated(tied=None, tensors=_norms(2) + _qkv_bias(_when("attention_bias", True))),
    "glm4": _gated(tied=None, tensors=_norms(4) + _qkv_bias(_when("attention_bias", True))),
    # --- two-matrix MLPs (up, down) ---
    "gpt2": _plain(True, learned_positions=True, figures=_N_INNER, tensors=_GPT2),
    "gptj": _plain(False, figures=_N_INNER, tensors=_GPTJ),
    # GPT-Neo: num_layers / num_heads; intermediate_size null is 4 x hidden; every other
    # layer attends only to the last window_size (256) tokens.
    "gpt_neo": _plain(True, learned_positions=True, figures={
        "layers": {"names": ["num_layers"]},
        "heads": {"names": ["num_heads"]},
        "intermediate": {"names": ["intermediate_size"], "default": FOUR_X},
        "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
    }, window={"names": ["window_size"], "default": {"value": 256},
               "layer_pattern": "attention_types",
               "layer_pattern_default": [[["global", "local"], 12]]},
        tensors=_norms(2, bias=True) + _o_bias() + _mlp_bias(2)),
    "gpt_neox": _plain(False, tensors=_norms(2, bias=True) + _qkv_bias(_when(
        "attention_bias", True)) + _o_bias(_when("attention_bias", True)) + _mlp_bias(2)),
    "opt": _plain(True, learned_positions=True, figures={
        "intermediate": {"names": ["ffn_dim"]},
        "embedding_width": {"names": ["word_embed_proj_dim"], "default": {"same_as": "hidden"}},
        "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
    }, tensors=_OPT),
    "falcon": _plain(True, figures=_FALCON, tensors=_FALCON_NORMS),
    "RefinedWebModel": _plain(True, figures=_FALCON, tensors=_FALCON_NORMS),
    "RefinedWeb": _plain(True, figures=_REFINED_WEB, tensors=_FALCON_NORMS),
    # BLOOM: ALiBi (no position table, no maximum), MLP 4 x hidden; its n_inner is unused; a
    # norm on the embedding.
    "bloom": _plain(True, figures={
        "layers": {"names": ["n_layer", "num_hidden_layers"]},
        "hidden": {"names": ["hidden_size", "n_embed"]},
        "heads": {"names": ["n_head", "num_attention_heads"]},
        "intermediate": {"names": [], "default": FOUR_X},
        "max_positions": {"names": [], "default": {"value": None}},
    }, tensors=_GPT2 + [_t("embedding norm", "model", [[2, "hidden"]])]),
    # MPT: its own names. Transformers' MPT builds a 4 x d_model MLP, one KV head per query
    # head and no biases whatever expansion_ratio, attn_config.kv_n_heads and no_bias say
    # (llm-foundry's own code reads them); counted as Transformers builds it, and said.
    "mpt": _plain(True, figures={
        "layers": {"names": ["n_layers"]},
        "hidden": {"names": ["d_model"]},
        "heads": {"names": ["n_heads"]},
        "kv_heads": {"names": [], "default": {"same_as": "heads"}},
        "intermediate": {"names": [], "default": FOUR_X},
        "max_positions": {"names": ["max_seq_len"], "default": {"value": 2048}},
    }, tensors=_norms(2), notes=[
        {"field": "no_bias", "expect": True,
         "note": "Transformers' MPT builds no biases whatever no_bias says; counted as it "
                 "builds (llm-foundry's own code would add them)."},
        {"field": "expansion_ratio", "expect": 4,
         "note": "Transformers' MPT builds a 4 x d_model MLP whatever expansion_ratio says; "
                 "counted as it builds (llm-foundry's own code would use expansion_ratio)."},
        {"field": "attn_config.kv_n_heads", "expect": "heads",
         "note": "Transformers' MPT gives every query head its own keys and values whatever "
                 "attn_config.kv_n_heads says; counted as it builds (llm-foundry's own code "
                 "would group them)."}]),
    # GPT-BigCode (StarCoder): one KV head unless multi_query is false
    "gpt_bigcode": _plain(True, learned_positions=True, figures={**_N_INNER, "kv_heads": {
        "names": [], "default": {"same_as": "heads"}, "cases": [
            {"if": "multi_query", "if_absent": True,
             "then": {"names": [], "default": {"value": 1}}}]}}, tensors=_GPT2),
    "phi": _plain(False, tensors=_norms(1, bias=True) + _qkv_bias() + _o_bias() + _mlp_bias(2)
                  + _lm_head_bias() + [_t("q and k norms", "layer", [[4, "head_dim"]],
                                         _when("qk_layernorm"))]),
    "starcoder2": _plain(True, tensors=_norms(2, bias=True) + _qkv_bias(_USE_BIAS)
                         + _o_bias(_USE_BIAS) + _mlp_bias(2, _USE_BIAS)),
    "codegen": _plain(False, figures=_N_INNER, tensors=_GPTJ),
    "bert": _plain(True, learned_positions=True, tensors=_BERT),
    "roberta": _plain(True, learned_positions=True, tensors=_BERT),
}

# Hybrids' fixed-size state, per layer and user, as Transformers 5's cache holds it (its
# LinearAttentionLayer): a convolution state (channels x kernel) and a recurrent state. Each is
# a sum of products of ints and config fields, every field required (one missing: the state
# is not counted, and said). The layers are those whose kind keeps a state (costs.STATE_KINDS),
# or, with "every_layer", all of them (Falcon-H1 runs attention and Mamba side by side).
_GATED_DELTANET = {"kind": "Gated DeltaNet", "conv": [
    [2, "linear_num_key_heads", "linear_key_head_dim", "linear_conv_kernel_dim"],
    ["linear_num_value_heads", "linear_value_head_dim", "linear_conv_kernel_dim"]],
    "recurrent": [["linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim"]]}
_MAMBA2 = {"kind": "Mamba-2", "conv": [  # its inner width is heads x head width
    ["mamba_n_heads", "mamba_d_head", "mamba_d_conv"],
    [2, "mamba_n_groups", "mamba_d_state", "mamba_d_conv"]],
    "recurrent": [["mamba_n_heads", "mamba_d_head", "mamba_d_state"]]}
# "unlisted": the layout a type's class gives a file that lists none (no layer_types nor
# any other spelling): a kind for every layer, or every n-th layer attending (and, with
# "last": true, the last layer when no other would)
# Qwen3-Next's and Qwen3.5's classes attend every full_attention_interval-th layer (4)
_EVERY_4TH_ATTENDS = {**_GATED_DELTANET, "unlisted": {"interval": 4}}
_MAMBA_ONLY_STATE = {"kind": "Mamba", "conv": [["intermediate_size", "conv_kernel"]],
                     "recurrent": [["intermediate_size", "state_size"]], "unlisted": "mamba"}
STATES = {
    "qwen3_next": _EVERY_4TH_ATTENDS, "qwen3_5_text": _EVERY_4TH_ATTENDS,
    "qwen3_5_moe_text": _EVERY_4TH_ATTENDS,
    "olmo_hybrid": {**_GATED_DELTANET, "unlisted": {"interval": 4, "last": True}},
    # Bamba lists its attention layers in attn_layer_indices; with none listed (absent or
    # null, its class's default) Transformers builds every layer as Mamba-2
    "bamba": {**_MAMBA2, "unlisted": "mamba"}, "granitemoehybrid": _MAMBA2,
    "falcon_h1": {**_MAMBA2, "every_layer": True, "conv": [
        ["mamba_d_ssm", "mamba_d_conv"], [2, "mamba_n_groups", "mamba_d_state", "mamba_d_conv"]]},
    "nemotron_h": {"kind": "Mamba-2", "conv": [
        ["mamba_num_heads", "mamba_head_dim", "conv_kernel"],
        [2, "n_groups", "ssm_state_size", "conv_kernel"]],
        "recurrent": [["mamba_num_heads", "mamba_head_dim", "ssm_state_size"]]},
    # Mamba and Falcon Mamba: every layer (no layout field)
    "mamba": _MAMBA_ONLY_STATE, "falcon_mamba": _MAMBA_ONLY_STATE,
    "jamba": {"kind": "Mamba", "conv": [["mamba_expand", "hidden_size", "mamba_d_conv"]],
              "recurrent": [["mamba_expand", "hidden_size", "mamba_d_state"]]},
}


def state_fields(model_type: str) -> list[str]:  # -> the fields of the type's STATES rule
    # that a file may leave to its class's default (not the model's own sizes, BASE's names)
    rule = state_rule(model_type) or {}
    sizes = {name for r in BASE.values() for name in r["names"]}
    return sorted({f for part in ("conv", "recurrent") for product in rule.get(part, ())
                   for f in product if isinstance(f, str)} - sizes)


def state_rule(model_type: str) -> dict | None:  # -> the type's STATES rule (an image-text
    # type's: its text model's), or None
    return STATES.get(model_type) or STATES.get(DERIVED["text_of"].get(model_type, ""))


# What scripts/derive_families.py read off Transformers' own models: each model type's class
# defaults, a row for each type the hand-written table lacks, and which counts are exact.
DERIVED = json.loads(Path(__file__).with_name("families_derived.json").read_text())


# --- a field left out reads as its config class's default, as Transformers reads it ---------
# Fields costs.py reads as optional outside the rules (MoE layout, MLA, windows). A field the
# core requires (the sizes) is refused when left out, never filled; the experts' count and
# top-k are filled where the type's class keeps a constant default (a Mixtral file without
# num_local_experts builds 8 experts in Transformers, not a dense MLP).
# the experts' count and top-k (the derivation keeps their fills for exact types alone)
EXPERT_COUNTS = [["num_experts", "num_local_experts"], ["n_routed_experts"], ["moe_num_experts"]]
# the top-k's names: most families'; Hunyuan's and Aria's; ERNIE 4.5's; Gemma 4's
TOP_K = ["num_experts_per_tok", "moe_topk", "moe_k", "top_k_experts"]
MOE_COUNTS = [*EXPERT_COUNTS, TOP_K]
OPTIONAL_READS = [*MOE_COUNTS,
                  ["first_k_dense_replace"], ["n_shared_experts"], ["num_shared_experts"],
                  ["moe_num_shared_experts"], ["num_dense_layers"], ["moe_layer_start_index"],
                  ["moe_layer_end_index"], ["moe_layer_interval"], ["shared_intermediate_size"],
                  ["decoder_sparse_step"],
                  ["moe_layer_freq"], ["interleave_moe_layer_step"], ["max_window_layers"],
                  ["use_sliding_window"], ["no_rope_layer_interval"], ["sliding_window_pattern"],
                  ["q_lora_rank"], ["mlp_only_layers"], ["expert_layer_period"],
                  ["expert_layer_offset"], ["attn_layer_period"], ["attn_layer_offset"]]


def optional_groups(row: dict) -> list[list[str]]:
    """The groups of synonymous fields a row reads with a default when all are absent: the
    names of each rule with a default (the row's, else BASE's), each flag of a case or a
    condition, each config number in a size, and OPTIONAL_READS."""
    groups = [list(g) for g in OPTIONAL_READS]

    def rule(r):
        if r.get("default") is not None and r["names"]:
            groups.append(list(r["names"]))
        for case in r.get("cases", ()):
            groups.append([case["if"]])
            rule(case["then"])

    for figure in FIGURES:
        rule(row["figures"].get(figure, BASE[figure]))
    rule(row.get("window", BASE_WINDOW))
    for term in row["tensors"]:
        groups.extend([f["field"]] for product in term["size"] for f in product
                      if isinstance(f, dict))
        groups.extend([c.get("flag") or c.get("field") or c["present"]] for c in term["when"])
    return groups  # the first group holding a field is its own: repeats change nothing


def with_class_defaults(model_type: str, row: dict, cfg: dict) -> tuple[dict, dict]:
    """A config -> (it with each optional field it leaves out set to its type's class default,
    {field: value} so set). A field counts as written when any of its synonyms is; a field the
    row requires (a size) is never filled: a size a config forgot is an error."""
    types = DERIVED["types"]
    fills = types.get(model_type, {}).get("fills")
    if fills is None:
        fills = types.get(DERIVED["text_of"].get(model_type, ""), {}).get("fills", {})
    groups = optional_groups(row) + [[f] for f in state_fields(model_type)]
    filled = {}
    for field, value in fills.items():
        group = next((g for g in groups if field in g), None)
        if group is not None and not any(name in cfg for name in group):
            filled[field] = value
    return ({**cfg, **filled} if filled else cfg), filled


def _with_class_default(model_type: str, row: dict) -> dict:  # tied as the class says
    defaults = DERIVED["types"].get(model_type, {}).get("defaults", {})
    if row["tied"] is None and "tie_word_embeddings" in defaults:
        return {**row, "tied": defaults["tie_word_embeddings"]}
    return row


def _checked(model_type: str, row: dict) -> dict:  # a hand-written row, with which of its
    # counts the derivation found equal to Transformers' own model (none: not built there)
    exact = DERIVED["types"].get(model_type, {}).get("exact")
    return {**row, "exact": exact} if exact else row


def families() -> dict:  # -> every row: the derived ones, and the hand-written ones over them
    # the hand-written rows win: they read figures a fit cannot see (other field names,
    # windows, defaults a published config relies on)
    return {**{t: {**e["row"], "exact": e["exact"]} for t, e in DERIVED["types"].items()
               if "row" in e},
            **{t: _checked(t, _with_class_default(t, row)) for t, row in HAND_FAMILIES.items()}}


FAMILIES = families()

# A config with no model_type but GPT-2's n_embd is read as GPT-2; anything else unknown
# reads BASE, with a gated MLP and untied embeddings assumed and said so.
UNKNOWN = _row(None, None)
GPT2_HINT = "n_embd"


def family(model_type: str, cfg: dict) -> tuple[str, dict]:  # -> (row's key or "", row)
    # an image-text-to-text type whose text fields sit at the top (Qwen2-VL's published
    # files): its text model's row
    if model_type not in FAMILIES:
        model_type = DERIVED["text_of"].get(model_type, model_type)
    if model_type in FAMILIES:
        return model_type, FAMILIES[model_type]
    if not model_type and GPT2_HINT in cfg:
        return "gpt2", FAMILIES["gpt2"]
    return "", _with_class_default(model_type, UNKNOWN)


def caches_if(model_type: str) -> str | None:  # -> the flag without which the type's causal
    # LM keeps no cache (BERT-likes' is_decoder), or None
    types = DERIVED["types"]
    entry = types.get(model_type) or types.get(DERIVED["text_of"].get(model_type, ""), {})
    return entry.get("caches_if")


def caches_if_line(model_type: str, flag: str) -> str:  # said when a file leaves that flag unset
    return (f"{flag} is not set to true in this file: Transformers' causal-LM class for "
            f"model_type {model_type!r} then attends in both directions and keeps no KV cache. "
            f"The KV figures are the cache it would keep with {flag} true.")


def keeps_no_cache(model_type: str) -> bool:  # whether the type's causal LM (or its text
    # model's) returns no cache at all (GPT-1, XLM, XLNet)
    types = DERIVED["types"]
    text = DERIVED["text_of"].get(model_type, "")
    return any(types.get(t, {}).get("keeps_no_cache") for t in (model_type, text))


def no_cache_line(model_type: str) -> str:  # said of such a type's every file
    return (f"Transformers' causal-LM class for model_type {model_type!r} keeps no KV cache: "
            "each new token reruns the whole prefix through every layer. The KV figures are "
            "what a standard decoder with these layers, KV heads and head widths would cache.")


TRANSFORMERS = DERIVED["transformers"]
COUNTS = {"total": "total parameters", "matmul": "matmul parameters", "kv": "KV cache"}


def encoder_decoder(model_type: str) -> bool:  # a type whose class is an encoder-decoder
    return bool(DERIVED["types"].get(model_type, {}).get("defaults", {}).get(
        "is_encoder_decoder"))


def unknown_line(model_type: str) -> str:  # -> the one line said when no row counts a type
    shown = repr(model_type or "(none)")
    where = (f"a Transformers {TRANSFORMERS} model this version has no rule for"
             if model_type in DERIVED["types"] else
             f"not one this version knows (nor Transformers {TRANSFORMERS})")
    return (f"model_type {shown} is {where}: counted as a generic decoder (Llama's layer: "
            "q, k, v, o, a gated MLP, two weight-only norms a layer and a final one, no "
            "biases), so its total and matmul parameters may be off wherever its layers "
            "differ from that, and its KV cache by any layer that is not plain attention "
            "unless its config lists its layers' kinds.")


def inexact_line(model_type: str, row: dict) -> str | None:  # a row's known misses (the
    # cache of a type that keeps none is said by no_cache_line instead)
    off = [COUNTS[c] for c in COUNTS if not row.get("exact", {}).get(c, True)
           and not (c == "kv" and keeps_no_cache(model_type))]
    if not off:
        return None
    rule, model = (("a rule written by hand", f"Transformers {TRANSFORMERS}'s own model")
                   if not row.get("derived") else
                   (f"a rule derived from Transformers {TRANSFORMERS}'s own model", "that model"))
    were, they = ("were", "they") if len(off) > 1 else ("was", "it")
    return (f"model_type {model_type!r} is counted by {rule}; on random configs its "
            f"{' and '.join(off)} {were} not shown to match {model}, so {they} may be off.")


def rule(row: dict, figure: str) -> dict:  # a row's rule for a figure, else BASE's
    return row["figures"].get(figure, BASE[figure])


def window_rule(row: dict) -> dict:
    return row.get("window", BASE_WINDOW)
