"""Derive the family table's data from Transformers' own models (a dev-time script).

For every model type in Transformers' causal-LM mapping, and the text model of each
image-text-to-text type, this draws random small configs with the type's own config class,
builds each on the meta device and reads every parameter off the real model (the truth that
tests/hf_oracle.py reads). It then derives what attention_core/families_derived.json holds:

- `defaults`: the config class's own default of each boolean field and of
  tie_word_embeddings (what an absent field means to Transformers);
- `fills`: the class's default of each optional field the type's row reads, and of its
  fixed state's fields (a bool, an int or a list of ints, the same whatever the other fields),
  which the core sets where a config leaves that field out, as Transformers does;
- for a type the hand-written table (config_families.FAMILIES) does not hold, a row of its
  own: the MLP's matrices (2 or 3) and the tensors beside the big matrices (norms, biases,
  sinks, shared experts, extra projections), each size fitted exactly, as integer sums of
  products of the core's figures (and of the config numbers in DRAWN_FIELDS), to what the
  builds hold; a boolean field that changes
  the model adds its own terms, taken when the field is set (or unset) against the class's
  default (fields the class accepts flipped only together, flipped and taken together);
- `caches_if`: "is_decoder" for a type whose causal LM fills a cache only with that flag set
  (BERT-likes; without it they attend both ways): such a type is drawn with it set, and the
  core says so of a file that leaves it unset;
- `keeps_no_cache`: true for a type whose causal LM keeps no cache at all (GPT-1, XLM),
  which the core says of its every file;
- `exact`: for every type, which counts (total, matmul, kv) equal the model's on fresh
  draws the fit never saw (with random flags, then each flag flipped for certain, then each
  integer size field the draws never change doubled), so the core can say which figures may
  be off; KV on the cache of a forward (on the CPU for a small model, else on meta tensors,
  each on the other where it cannot run), so where a draw's forward cannot run, on the next
  draw whose forward does.

    python scripts/derive_families.py                  # every type -> the JSON file
    python scripts/derive_families.py --type gpt_oss   # these types only, printed
    python scripts/derive_families.py --check          # exit 1 when the file is stale

The fit is exact or nothing: coefficients are solved in floating point, rounded, and then
every draw is checked in integers; where the basis's columns fill the draws' rank, the terms
are taken one at a time instead (_sparse_fit). Draws are seeded per type, so a rerun writes
the same file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import hf_oracle

from attention_core import config_families, costs

OUT = ROOT / "attention_core" / "families_derived.json"
SEED = 50
FIT_DRAWS = 28  # more draws than the basis has terms, so an exact fit is not a coincidence
CHECK_DRAWS = 6  # fresh draws the fit never saw, with a forward for the cache
KV_TRIES = 8  # draws tried, in turn, for a forward that runs (_kv_exact_where_it_runs)
# booleans that say how a model runs or what it returns, never what it stores
NOT_TOGGLED = ("tie_word_embeddings", "is_encoder_decoder")  # read by the core itself
RUNTIME_FLAGS = {"output_hidden_states", "return_dict", "is_encoder_decoder", "use_cache",
                 "output_attentions", "output_router_logits", "tie_word_embeddings",
                 "is_decoder", "add_cross_attention", "torchscript", "use_return_dict"}

# The terms a fitted row may hold: (per, product of figures). Simple terms first: when two
# columns are the same on every draw (a dense model's layer and dense_layer), the first is kept.
BASIS = [
    ("model", []), ("model", ["hidden"]), ("model", ["vocab"]), ("model", ["vocab", "hidden"]),
    ("model", ["max_positions", "hidden"]),
    ("layer", []), ("layer", ["hidden"]), ("layer", ["heads"]), ("layer", ["kv_heads"]),
    ("layer", ["head_dim"]), ("layer", ["heads", "head_dim"]), ("layer", ["kv_heads", "head_dim"]),
    ("layer", ["intermediate"]), ("layer", ["hidden", "hidden"]),
    ("layer", ["hidden", "heads", "head_dim"]), ("layer", ["hidden", "kv_heads", "head_dim"]),
    ("layer", ["hidden", "intermediate"]),
    ("dense_layer", ["hidden"]), ("dense_layer", ["intermediate"]),
    ("dense_layer", ["hidden", "intermediate"]),
    ("moe_layer", []), ("moe_layer", ["hidden"]), ("moe_layer", ["num_experts"]),
    ("moe_layer", ["hidden", "num_experts"]), ("moe_layer", ["moe_intermediate"]),
    ("moe_layer", ["hidden", "moe_intermediate"]),
    ("moe_layer", ["num_experts", "moe_intermediate"]), ("moe_layer", ["num_experts", "hidden",
                                                                        "moe_intermediate"]),
    ("moe_layer", ["shared_intermediate"]), ("moe_layer", ["hidden", "shared_intermediate"]),
    # latent attention's norms and biases (off MLA a column of 0 or None, never kept)
    ("layer", ["kv_lora_rank"]), ("layer", ["q_lora_rank"]), ("layer", ["qk_rope_head_dim"]),
    # last, so it is kept only where some draw's MoE layers run no shared MLP (ERNIE 4.5)
    ("shared_layer", ["hidden"]),
    # a prediction head's dense layer before the tied decoder (BERT-likes' LM heads)
    ("model", ["hidden", "hidden"]),
    # tables as many rows as a config number the core has no figure for: BERT-likes'
    # token types, Molmo2's tokens beside the vocabulary (a None column where a type's class
    # has no such field, so never kept there)
    ("model", [{"field": "type_vocab_size"}, "hidden"]),
    ("model", [{"field": "additional_vocab_size"}, "hidden"]),
    # a gate per head (Laguna's g_proj)
    ("layer", ["hidden", "heads"]),
    # a sparse-attention indexer (DSA: DeepSeek-V3.2, GLM-5, Mistral Large 4) on each layer
    # that runs its own: its query projection from q's latent (or from the hidden state
    # where q has no latent), its key projection and norm, and its weight per head
    ("indexer_layer", [{"field": "index_n_heads"}, {"field": "index_head_dim"},
                       "q_lora_rank"]),
    ("indexer_layer", [{"field": "index_n_heads"}, {"field": "index_head_dim"}, "hidden"]),
    ("indexer_layer", [{"field": "index_head_dim"}, "hidden"]),
    ("indexer_layer", [{"field": "index_head_dim"}]),
    ("indexer_layer", [{"field": "index_n_heads"}, "hidden"]),
    ("indexer_layer", [{"field": "index_n_heads"}]),
    ("indexer_layer", ["hidden"]),  # Mistral Large 4's norm of the indexer's input
    # a token table narrower than the layers (ELECTRA's, RoFormer's embedding_size): its
    # norms and projections' biases, its positions and token types at its own width
    ("model", ["embedding_width"]), ("model", ["max_positions", "embedding_width"]),
    ("model", [{"field": "type_vocab_size"}, "embedding_width"]),
    # RoCBert's pronunciation and glyph-shape tables, each mapped into the model's width
    ("model", [{"field": "pronunciation_vocab_size"}, {"field": "pronunciation_embed_dim"}]),
    ("model", [{"field": "shape_vocab_size"}, {"field": "shape_embed_dim"}]),
    ("model", [{"field": "pronunciation_embed_dim"}, "hidden"]),
    ("model", [{"field": "shape_embed_dim"}, "hidden"]),
]
# the config numbers in BASIS, drawn (where a class takes them) so a term of theirs is told
# apart from a constant
DRAWN_FIELDS = {"type_vocab_size": (1, 4), "additional_vocab_size": (1, 40),
                # (low, high, step): an indexer's head as wide as RoPE's pairs need
                "index_n_heads": (1, 4), "index_head_dim": (2, 4, 4),
                "embedding_size": (2, 6, 4),  # read as the figure embedding_width
                "pronunciation_vocab_size": (5, 40), "pronunciation_embed_dim": (2, 12),
                "shape_vocab_size": (5, 40), "shape_embed_dim": (2, 12)}
# tried only where BASIS fits nothing: a hybrid's layers without attention (MiniMax's linear
# attention) hold other projections in place of q, k, v and o (more columns than a 28-draw
# fit of a plain model can take and stay exact)
HYBRID_BASIS = [
    ("uncached_layer", []), ("uncached_layer", ["hidden"]), ("uncached_layer", ["heads"]),
    ("uncached_layer", ["heads", "head_dim"]), ("uncached_layer", ["kv_heads", "head_dim"]),
    ("uncached_layer", ["hidden", "heads", "head_dim"]),
    ("uncached_layer", ["hidden", "kv_heads", "head_dim"]),
    ("uncached_layer", ["hidden", "hidden"]),
]


# --- which types, and random configs in their own classes ------------------------------------

def text_models() -> dict[str, str]:  # image-text-to-text type -> its text model's type
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )
    out = {}
    for outer in sorted(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                text = getattr(CONFIG_MAPPING[outer]().text_config, "model_type", None)
        except Exception:  # noqa: BLE001, S112 - no text_config, or no defaults: none to read
            continue
        if text and text != outer:
            out[outer] = text
    return out


def model_types() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return sorted(set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(text_models().values()))


def _fields(cls) -> set[str]:
    import inspect
    return set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}


def _sizes(r: random.Random) -> dict:
    heads = r.choice([2, 3, 4, 6, 8])
    kv = r.choice([d for d in range(1, heads + 1) if heads % d == 0])
    head_dim = r.choice([4, 8, 12, 16])
    experts = r.randint(3, 8)
    out = {
        "num_hidden_layers": r.randint(2, 6), "num_attention_heads": heads,
        "num_key_value_heads": kv, "head_dim": head_dim,
        "hidden_size": heads * head_dim if r.random() < 0.5 else r.choice([16, 24, 32, 40, 48]),
        "intermediate_size": r.randint(9, 97), "vocab_size": r.randint(200, 400),
        "max_position_embeddings": r.choice([64, 128, 256]),
        "num_local_experts": experts, "num_experts": experts, "n_routed_experts": experts,
        "num_experts_per_tok": r.randint(1, experts), "moe_intermediate_size": r.randint(5, 41),
        "shared_expert_intermediate_size": r.randint(5, 41), "n_shared_experts": r.randint(1, 2),
    }
    out["num_shared_experts"] = out["n_shared_experts"]  # EXAONE MoE's, HY-V3's name for it
    return out


def _with_mamba2(kwargs: dict, r: random.Random, fields: set[str]) -> dict:
    # Mamba-2 beside attention (Bamba, Granite 4 hybrid, Falcon-H1): its heads must split
    # expand x hidden (and Falcon-H1's mamba_d_ssm be heads x head width), which its class
    # checks; other classes' sizes are left as drawn
    if "mamba_n_heads" not in fields:
        return kwargs
    heads, expand = r.choice([2, 4]), r.choice([1, 2])
    hidden = kwargs["hidden_size"]
    heads = heads if expand * hidden % heads == 0 else 1
    kwargs.update(mamba_n_heads=heads, mamba_expand=expand, mamba_d_head=expand * hidden // heads,
                  mamba_n_groups=r.choice([1, 2]), mamba_d_state=r.choice([4, 8]),
                  mamba_d_conv=r.choice([2, 4]), mamba_chunk_size=4)
    if "mamba_d_ssm" in fields:
        kwargs["mamba_d_ssm"] = heads * kwargs["mamba_d_head"]
    return kwargs


# the MoE fields of ERNIE 4.5, Aria, Hunyuan, AFMoE and Granite MoE (and _mla_sizes, latent
# attention's ranks and head widths): drawn only where a class takes them, so every other
# type's draws stay as they were
MOE_LAYOUT = {"moe_num_experts", "moe_topk", "moe_k", "moe_num_shared_experts",
              "num_dense_layers", "moe_layer_start_index", "moe_layer_end_index",
              "moe_layer_interval", "shared_intermediate_size"}


def _moe_layout(r: random.Random, kwargs: dict, fields: set[str]) -> dict:
    layers = kwargs.get("num_hidden_layers", 2)
    experts = kwargs.get("num_experts") or kwargs.get("n_routed_experts") or r.randint(3, 8)
    start = r.randint(0, layers - 1)
    out = {"moe_num_experts": experts, "moe_topk": r.randint(1, experts),
           "moe_num_shared_experts": r.randint(0, 2), "num_dense_layers": r.randint(0, layers),
           "moe_layer_start_index": start, "moe_layer_end_index": r.choice(
               [-1, r.randint(start, layers - 1)]), "moe_layer_interval": r.randint(1, 3)}
    out["moe_k"] = out["moe_topk"]
    out["shared_intermediate_size"] = r.choice([0, r.randint(5, 41)])  # Granite MoE's
    return {k: v for k, v in out.items() if k in fields}


def _mla_sizes(r: random.Random) -> dict:  # latent ranks and head widths (RoPE's even)
    return {"kv_lora_rank": r.randint(4, 24), "q_lora_rank": r.randint(4, 24),
            "qk_nope_head_dim": r.choice([4, 8]), "qk_rope_head_dim": r.choice([2, 4]),
            "v_head_dim": r.choice([4, 8, 12])}


def _nested_text_class(model_type: str, fields: set[str]):
    """The config class of a wrapper's text model, where the wrapper itself takes no sizes
    (Gemma 4, Mllama, Fuyu: hidden_size lives in text_config), else None."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    if "hidden_size" in fields or "text_config" not in fields:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return type(CONFIG_MAPPING[model_type]().text_config)
    except Exception:  # noqa: BLE001 - a wrapper with no default text model: sizes stay out
        return None


# types whose causal LM keeps a cache only with is_decoder set (BERT-likes: without it they
# attend both ways and return none): drawn with it set, as a causal LM runs them
_AS_DECODER: set[str] = set()


def caches_as_decoder(model_type: str) -> bool:
    """Whether a draw of this type fills a cache with is_decoder set and none without it."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reads = "is_decoder" in hf_oracle._modeling_source(CONFIG_MAPPING[model_type]())
    except Exception:  # noqa: BLE001 - a class without defaults: nothing to ask
        return False
    if not reads:
        return False
    held = []
    for is_decoder in (False, True):
        got = _draw(model_type, random.Random(0), {"is_decoder": is_decoder}, 8)
        try:
            held.append(bool(got and hf_oracle.truth(got[0])["kv_widths"]))
        except Exception:  # noqa: BLE001 - BERT's forward returns no cache to read
            held.append(False)
    return held == [False, True]


def keeps_no_cache(model_type: str) -> bool:
    """Whether this type's causal LM keeps no cache at all, asked of one draw's forward in eval
    mode (GPT-1, XLM: each step reruns the whole prefix through every layer): on the CPU for a
    small model, else on meta tensors, as hf_oracle.truth runs it. Neither the output (a
    cache, RWKV's state, XLNet's mems) nor a module (RecurrentGemma keeps its cache in its
    layers) holds one. A forward that cannot run says nothing: False."""
    got = _draw(model_type, random.Random(0), None, 8)
    if got is None:
        return False
    torch = hf_oracle._torch()[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = hf_oracle.build(got[0])
            small = sum(p.numel() for p in model.parameters()) <= hf_oracle.CPU_FORWARD_PARAMS
            device = "cpu" if small else "meta"
            if small:
                model = hf_oracle.build(got[0], device="cpu")
            else:  # as forward_cache runs on meta: no padding id to look for
                model.config.pad_token_id = None
            model.eval()  # as generation runs it (XLNet keeps its mems only in eval mode)
            with torch.no_grad():
                out = model(input_ids=torch.zeros((1, 3), dtype=torch.long, device=device),
                            use_cache=True)
    except Exception:  # noqa: BLE001 - a forward this draw cannot run
        return False
    kept = ("past_key_values", "cache_params", "state", "mems")
    return all(getattr(out, name, None) is None for name in kept) and not any(
        isinstance(v, torch.Tensor) and ("state" in k or "cache" in k)
        for module in model.modules() for k, v in vars(module).items())


# types whose class refused every draw of latent ranks (GLM-5-Next's DSA layers take no RoPE):
# drawn with the class's own ranks from then on
_KEEPS_MLA_DEFAULTS: set[str] = set()


def draw(model_type: str, r: random.Random, flags: dict | None = None, tries: int = 16):
    """A random small config of this type, built by its own class -> (config, written) or
    None when the class refuses every draw."""
    got = _draw(model_type, r, flags, tries)
    if got is None and _draws_mla(model_type):
        _KEEPS_MLA_DEFAULTS.add(model_type)
        got = _draw(model_type, r, flags, tries)
        if got is None:  # refused for another reason: ranks drawn again next time
            _KEEPS_MLA_DEFAULTS.discard(model_type)
    return got


def _sized(model_type: str):  # -> (a wrapper's text config class or None, the fields of the
    # class that takes the sizes: the text model's for a wrapper, else the type's own)
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    fields = _fields(CONFIG_MAPPING[model_type])
    nested = _nested_text_class(model_type, fields)
    return nested, (_fields(nested) if nested else fields)


# what _sizes draws for each figure a class may name otherwise
SIZE_OF = {"layers": "num_hidden_layers", "hidden": "hidden_size",
           "heads": "num_attention_heads", "intermediate": "intermediate_size",
           "max_positions": "max_position_embeddings", "head_dim": "head_dim"}
# names older classes give a figure beside those of their attribute_map (which maps only some):
# CTRL's dff, XGLM's ffn_dim, XLNet's d_inner, TrOCR's decoder_ffn_dim, CPM-Ant's dim_ff and
# dim_head
OTHER_NAMES = {"intermediate": ["dff", "ffn_dim", "d_inner", "decoder_ffn_dim", "dim_ff"],
               "head_dim": ["dim_head"]}


def drawn_as(model_type: str) -> dict[str, str]:
    """_sizes' key -> the field a class takes it as, for each figure whose usual name the
    class does not take (CTRL: num_hidden_layers as n_layer): from the class's attribute_map
    (never a head width, which there names RoPE's part of latent attention's, nor a size that
    _sizes draws itself), else OTHER_NAMES. A hand-written row's draws stay at its class's
    sizes: those classes tie sizes together in ways such draws break (GPT-J's rotary_dim past
    a small head, CodeGen's heads in groups of mp_num, GPT-Neo's attention_types)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    if model_type in HAND:
        return {}
    nested, sized = _sized(model_type)
    aliases = getattr(nested or CONFIG_MAPPING[model_type], "attribute_map", None) or {}
    out = {}
    for figure, size in SIZE_OF.items():
        if size in sized:
            continue
        alias = aliases.get(size) if figure != "head_dim" else None
        alias = alias if alias not in _SIZE_KEYS else None
        found = next((f for f in [alias, *OTHER_NAMES.get(figure, [])] if f in sized), None)
        if found:
            out[size] = found
    return out


_SIZE_KEYS = set(_sizes(random.Random(0)))


def figure_names(model_type: str) -> dict:
    """A figures rule for each figure the core's BASE would not find under its class's name
    (XGLM's d_model), and for an MLP of no named width where the class counts no experts
    (GPT-1's, XLM's: four times the model's width)."""
    base = config_families.BASE
    out = {}
    for size, field in drawn_as(model_type).items():
        figure = next(f for f, s in SIZE_OF.items() if s == size)
        if field not in base[figure]["names"]:
            out[figure] = {**base[figure], "names": [field, *base[figure]["names"]]}
    sized = _sized(model_type)[1]
    if "embedding_size" in sized:  # ELECTRA's, RoFormer's narrower token table
        out["embedding_width"] = {**base["embedding_width"], "names": ["embedding_size"]}
    counted = {f for group in config_families.EXPERT_COUNTS for f in group}
    if "intermediate" not in out and not (set(base["intermediate"]["names"]) | counted) & sized:
        out["intermediate"] = {"names": [], "default": config_families.FOUR_X}
    return out


def _takes_mla(model_type: str) -> bool:  # does the type's (text) class take latent ranks?
    return "kv_lora_rank" in _sized(model_type)[1]


def _draws_mla(model_type: str) -> bool:  # are its latent ranks and head widths drawn?
    return _takes_mla(model_type) and model_type not in _KEEPS_MLA_DEFAULTS


def _draw(model_type: str, r: random.Random, flags: dict | None, tries: int):
    from transformers import AutoConfig
    nested, sized = _sized(model_type)
    draws_mla = _draws_mla(model_type)
    refused = 0  # draws the class refused; a draw of odd rotary width is drawn again apart
    for _ in range(8 * tries):
        if refused == tries:
            break
        sizes = _sizes(r)
        if "head_dim" not in sized:  # the class takes hidden / heads: a whole number here
            sizes["hidden_size"] = sizes["num_attention_heads"] * sizes["head_dim"]
        kwargs = {k: v for k, v in sizes.items() if k in sized}
        for size, field in drawn_as(model_type).items():  # older classes' own names
            kwargs[field] = sizes[size]
        kwargs = _with_mamba2(kwargs, r, sized)
        if "mamba_n_heads" in sized and "attn_layer_indices" in sized:  # Bamba: some
            # layers attend (none by default: a forward over such a cache cannot run)
            layers = kwargs.get("num_hidden_layers", 2)
            kwargs["attn_layer_indices"] = sorted(r.sample(range(layers), r.randint(1, layers)))
        if "mamba_n_heads" in sized and "layer_types" in sized:  # Granite 4's hybrid: its
            # class makes every layer Mamba-2 by default; some attend here, the last always
            layers = kwargs.get("num_hidden_layers", 2)
            kwargs["layer_types"] = [r.choice(["linear_attention", "full_attention"])
                                     for _ in range(layers - 1)] + ["full_attention"]
        if "pad_token_id" in sized:  # a class default past a small vocabulary
            kwargs["pad_token_id"] = 0
        if "mlp_layer_types" in sized:  # dense and MoE layers in any order, so a term per
            # dense layer is told apart from one per model (the class's default: 1 dense)
            kwargs["mlp_layer_types"] = [r.choice(["dense", "sparse"])
                                         for _ in range(kwargs["num_hidden_layers"])]
        if MOE_LAYOUT & sized:  # experts counted and laid out under other names
            kwargs.update(_moe_layout(r, kwargs, sized))
        if draws_mla:
            kwargs.update({k: v for k, v in _mla_sizes(r).items() if k in sized})
        for field, (low, high, *step) in DRAWN_FIELDS.items():
            if field in sized:
                kwargs[field] = r.randint(low, high) * (step[0] if step else 1)
        if "indexer_types" in sized:  # GLM-5: some layers reuse the last full one's top-k
            kwargs["indexer_types"] = ["full"] + [r.choice(["full", "shared"]) for _ in range(
                kwargs.get("num_hidden_layers", 2) - 1)]
        if model_type in _AS_DECODER:
            kwargs["is_decoder"] = True
        if nested:  # a multimodal wrapper: the sizes go to its text model
            kwargs = {"text_config": {"model_type": nested.model_type, **kwargs}}
        kwargs.update(flags or {})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                config = AutoConfig.for_model(model_type, **kwargs)
        except Exception:  # noqa: BLE001 - a shape this class refuses: draw again
            refused += 1
            continue
        if _odd_rotary(config):
            continue
        try:
            hf_oracle.build(config)
        except Exception:  # noqa: BLE001 - a shape this class refuses: draw again
            refused += 1
            continue
        return config, hf_oracle.written(config)
    return None


def _odd_rotary(config) -> bool:
    """Whether RoPE would turn an odd number of each head's dims (partial_rotary_factor of 0.25
    and a head 12 wide: 3), which no real model does (RoPE turns dims in pairs) and which
    StableLM's attention then caches at a width of neither its keys nor its values."""
    text = hf_oracle.text_config(config)
    factor = (getattr(text, "rope_parameters", None) or {}).get("partial_rotary_factor")
    if not isinstance(factor, float) or factor >= 1:
        return False
    head_dim = getattr(text, "head_dim", None)
    if not head_dim:
        hidden, heads = (getattr(text, f, None) for f in ("hidden_size", "num_attention_heads"))
        if not isinstance(hidden, int) or not isinstance(heads, int) or not heads:
            return False
        head_dim = hidden // heads
    return isinstance(head_dim, int) and int(head_dim * factor) % 2 == 1


def truth(config) -> dict:  # total and matmul (k of E experts) as the model holds them (of a
    # multimodal wrapper, its language model and head: hf_oracle.counted_part)
    t = hf_oracle.parameters(hf_oracle.build(config))
    # a multimodal config (Llama 4's) holds its top-k in its text config
    text = hf_oracle.text_config(config)
    k = next((getattr(text, f) for f in costs.TOP_K if getattr(text, f, None)), 0)
    return {"total": t["total"], "matmul": hf_oracle.active_linear(t, k) if t["experts"]
            else t["linear"] + t["router_params"]}


# --- the core, with a provisional row ---------------------------------------------------------

@contextlib.contextmanager
def provisional(model_type: str, row: dict):
    saved = config_families.FAMILIES.get(model_type)
    config_families.FAMILIES[model_type] = row
    try:
        yield
    finally:
        if saved is None:
            del config_families.FAMILIES[model_type]
        else:
            config_families.FAMILIES[model_type] = saved


def shape(cfg: dict) -> dict:  # the core's figures for a written config
    m = costs.ModelShape.from_config(costs.parse_config_text(json.dumps(cfg)))
    return {**m.__dict__, "moe_layers": m.moe_layers, "_m": m,
            "_text": _text_part(cfg)}


def _text_part(cfg: dict) -> dict:  # a written config's text model's fields (a wrapper's
    # text_config where the wrapper itself takes no sizes)
    text = cfg.get("text_config")
    return text if isinstance(text, dict) and "hidden_size" not in cfg else cfg


def core(cfg: dict) -> dict:
    s = shape(cfg)
    return {"total": costs.total_params(s["_m"]), "matmul": costs.matmul_params(s["_m"]),
            "shape": s}


# --- the exact fit ----------------------------------------------------------------------------

def _column(s: dict, per: str, product: list) -> int | None:  # a factor: a figure, or
    # {"field": f}, a config number of the draw's text model
    count = {"model": 1, "layer": s["layers"], "dense_layer": s["dense_layers"],
             "moe_layer": s["moe_layers"],
             "shared_layer": s["moe_layers"] if s["shared_intermediate"] else 0,
             "uncached_layer": s["uncached_layers"],
             "indexer_layer": costs.indexer_layers(s["_text"], s["layers"])}[per]
    value = count
    for f in product:
        v = s["_text"].get(f["field"]) if isinstance(f, dict) else s.get(f)
        if v is None or isinstance(f, dict) and not isinstance(v, int):
            return None
        value *= v
    return value


def fit(shapes: list[dict], target: list[int],
        basis=BASIS) -> list[tuple[str, list[str], int]] | None:
    """Integer c_j with sum_j c_j * column_j(draw) == target(draw) on every draw, or None."""
    if not any(target):
        return []
    columns = []  # (term, its column) for each term known and not 0 on every draw
    for per, product in basis:
        col = [_column(s, per, product) for s in shapes]
        if not any(v is None for v in col) and any(col):
            columns.append(((per, product), col))
    cols, kept = [], []
    for term, col in columns:
        trial = np.array(cols + [col], dtype=float).T
        trial = trial / np.abs(trial).max(axis=0)
        if np.linalg.matrix_rank(trial, tol=1e-9) > len(cols):  # adds something new
            cols.append(col)
            kept.append(term)
    if not cols:
        return None
    got = _integer_fit(cols, target)
    if got is None:  # as many independent columns as draws: any target fits, in fractions
        return _sparse_fit(columns, target)
    return [(per, product, c) for (per, product), c in zip(kept, got) if c]


def _integer_fit(cols: list[list[int]], target: list[int]) -> list[int] | None:
    a = np.array(cols, dtype=float).T
    coef, *_ = np.linalg.lstsq(a, np.array(target, dtype=float), rcond=None)
    ints = [round(float(c)) for c in coef]
    for i in range(len(target)):  # exact, in integers, on every draw
        if sum(c * col[i] for c, col in zip(ints, cols)) != target[i]:
            return None
    return ints


SPARSE_TERMS = 10  # at most, so that a fit to 28 draws still says something


def _sparse_fit(columns, target):
    """fit's second try, where the columns fill the draws' rank (a MoE model with latent
    attention: GLM-4.7-Flash-lite): of fit's (term, column) pairs, columns added one at a
    time, each the one that leaves the least unexplained beside those already taken, until
    the sum is exact in integers; or None."""
    want = np.array(target, dtype=float)

    def unexplained(taken: list[int]) -> float:
        a = np.array([columns[j][1] for j in taken], dtype=float).T
        coef, *_ = np.linalg.lstsq(a, want, rcond=None)
        return float(np.linalg.norm(want - a @ coef))

    chosen: list[int] = []
    for _ in range(min(SPARSE_TERMS, len(columns))):
        chosen.append(min((j for j in range(len(columns)) if j not in chosen),
                          key=lambda j: unexplained([*chosen, j])))
        got = _integer_fit([columns[j][1] for j in chosen], target)
        if got is not None:
            return [(*columns[j][0], c) for j, c in zip(chosen, got) if c]
    return None


def terms(fitted, what: str, matmul: bool, when=()) -> list[dict]:
    out = []
    for per, product, c in fitted:
        # a learned position table needs max_positions, which a config may leave unknown; a
        # q_lora_rank of null is a full-rank q, with no q_a_layernorm
        known = [{"present": f} for f in ("max_positions", "q_lora_rank") if f in product]
        term = {"what": what, "per": per, "size": [[c, *product] if c != 1 else list(product)
                                                   or [1]], "when": list(when) + known}
        if matmul:
            term["matmul"] = True
        out.append(term)
    return out


# --- one type -----------------------------------------------------------------------------

def class_defaults(model_type: str) -> dict:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = CONFIG_MAPPING[model_type]().to_dict()
    return {k: v for k, v in sorted(d.items()) if isinstance(v, bool) and (
        k not in RUNTIME_FLAGS or k in NOT_TOGGLED)}


def _fill_value(v) -> bool:  # a default the table can carry: a bool, an int, a list of ints
    return isinstance(v, int) or isinstance(v, list) and all(
        type(x) is int for x in v)


def class_fills(model_type: str, row: dict) -> dict:
    """The class's default of each optional field the type's row reads: a bool, an int or a list
    of ints that the class sets the same whatever the other fields (one it computes from them,
    Llama's head_dim from hidden / heads, is left to the row's rule)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    cls = CONFIG_MAPPING[model_type]
    fields = _fields(cls)

    def made(**kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return cls(**kwargs).to_dict()
            except Exception:  # noqa: BLE001 - sizes this class refuses: another draw
                return None

    base = made()
    wanted = ({f for g in config_families.optional_groups(row) for f in g}
              | set(config_families.state_fields(model_type))) & fields
    r = random.Random(zlib.crc32(model_type.encode()))
    draws = [{k: v for k, v in _sizes(r).items() if k in fields} for _ in range(4)]
    # and with Mamba-2's sizes drawn as its class checks them (Bamba refuses the plain ones;
    # Falcon-H1 takes both, and the plain ones show its heads' defaults)
    draws += [_with_mamba2(dict(d), r, fields) for d in draws] if "mamba_n_heads" in fields \
        else []
    out = {}
    for name in sorted(wanted):
        value = base.get(name)
        if not _fill_value(value):
            continue
        for some in (draws[:4], draws[4:]):
            others = [made(**{k: v for k, v in d.items() if k != name}) for d in some]
            others = [o for o in others if o is not None]
            if len(others) >= 2 and all(o.get(name) == value for o in others):
                out[name] = value
                break
    return out


def _row(mlp: int, defaults: dict, tensors: list[dict], wide: dict) -> dict:
    return {"mlp_matrices": mlp, "tied": defaults.get("tie_word_embeddings", False),
            "learned_positions": False, "figures": {}, "tensors": tensors, "notes": [],
            "derived": True, **wide}


def experts_wide(model_type: str) -> dict:
    """{"experts_wide": "intermediate"} for a type whose config class counts its experts
    (num_experts or num_local_experts) and has no moe_intermediate_size: each expert is then
    intermediate_size wide (OLMoE, FlexOlmo), which the core reads only where a row says so."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    fields = _fields(CONFIG_MAPPING[model_type])
    counted = {"num_experts", "num_local_experts", "moe_num_experts"} & fields
    return {"experts_wide": "intermediate"} if counted and \
        "moe_intermediate_size" not in fields else {}


def no_dense_mlp(model_type: str) -> dict:
    """A figures rule for a type whose config class has no intermediate_size (Solar Open: every
    layer's MLP a mixture of experts): no dense MLP, so a width of 0 where the file has none."""
    fields = _sized(model_type)[1]  # a wrapper: its text model's fields
    names = config_families.BASE["intermediate"]["names"]
    counted = {f for group in config_families.EXPERT_COUNTS for f in group}
    if set(names) & fields or not counted & fields:
        return {}
    return {"figures": {"intermediate": {"names": names, "default": {"value": 0}}}}


def _residuals(draws, truths, row, model_type):
    with provisional(model_type, row):
        cores = [core(cfg) for _, cfg in draws]
    shapes = [c["shape"] for c in cores]
    return (shapes, [t["matmul"] - c["matmul"] for t, c in zip(truths, cores)],
            [t["total"] - c["total"] for t, c in zip(truths, cores)])


def _fitted_tensors(draws, truths, row, model_type, when=()):
    """-> the tensors that make the row exact on these draws, or None."""
    try:
        shapes, d_matmul, d_total = _residuals(draws, truths, row, model_type)
    except costs.ConfigError:
        return None
    stored_target = [t - m for t, m in zip(d_total, d_matmul)]
    for basis in (BASIS, BASIS + HYBRID_BASIS):
        matmul, stored = fit(shapes, d_matmul, basis), fit(shapes, stored_target, basis)
        if matmul is not None and stored is not None:
            break
    else:
        return None
    return _with_field_defaults(
        terms(matmul, "projections found in Transformers' model", True, when)
        + terms(stored, "norms, biases and small tensors found in Transformers' model", False,
                when), model_type)


def _with_field_defaults(tensors: list[dict], model_type: str) -> list[dict]:
    """Each config number in a fitted size given its class's default (what a file that
    leaves it out builds)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    for term in tensors:
        if any(isinstance(f, dict) for product in term["size"] for f in product):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                text = hf_oracle.text_config(CONFIG_MAPPING[model_type]())
            term["size"] = [[{"field": f["field"], "default": getattr(text, f["field"])}
                             if isinstance(f, dict) else f for f in product]
                            for product in term["size"]]
    return tensors


def _draws(model_type, r, n, flags=None):
    out = []
    for _ in range(n):
        got = draw(model_type, r, flags)
        if got is None:
            break
        out.append(got)
    return out


def derive(model_type: str) -> dict:
    _KEEPS_MLA_DEFAULTS.discard(model_type)  # each derivation as from a fresh process
    _AS_DECODER.discard(model_type)
    r = random.Random(SEED * 1_000_003 + zlib.crc32(model_type.encode()))
    entry: dict = {}
    try:
        entry["defaults"] = class_defaults(model_type)
    except Exception as e:  # noqa: BLE001 - a class that cannot make its own defaults
        return {"builds": False, "why": f"{type(e).__name__}: its config class has no defaults"}
    if entry["defaults"].get("is_encoder_decoder"):  # refused by the core, so never fitted
        return {**entry, "builds": False, "why": "an encoder-decoder"}
    if caches_as_decoder(model_type):
        _AS_DECODER.add(model_type)
        entry["caches_if"] = "is_decoder"
    draws = _draws(model_type, r, FIT_DRAWS)
    if len(draws) < FIT_DRAWS:
        return {**entry, "builds": False, "why": "no random small config of it builds"}
    truths = [truth(c) for c, _ in draws]
    if len({(t["total"], t["matmul"]) for t in truths}) == 1:  # a row fitted to this would
        # be constants, right for one size only
        return {**entry, "builds": False, "why": "its random sizes do not reach the model"}
    entry["builds"] = True
    if "caches_if" not in entry and keeps_no_cache(model_type):
        entry["keeps_no_cache"] = True
    hand = model_type in HAND
    if not hand:
        dense = no_dense_mlp(model_type)
        wide = {**experts_wide(model_type), **dense, "figures": {
            **figure_names(model_type), **dense.get("figures", {})}}
        # the MLP's matrices: gated (3) or plain (2), whichever leaves fewer terms to fit (a
        # plain MLP fitted as gated needs a term taking one matrix back; a tie: gated)
        fits = [(mlp, _fitted_tensors(draws, truths, _row(mlp, entry["defaults"], [], wide),
                                      model_type)) for mlp in (3, 2)]
        fits = [(mlp, tensors) for mlp, tensors in fits if tensors is not None]
        mlp, tensors = min(fits, key=lambda f: len(f[1])) if fits else (3, None)
        if tensors is not None:
            tensors += _flag_tensors(model_type, r, entry["defaults"],
                                     _row(mlp, entry["defaults"], tensors, wide))
            entry["row"] = _row(mlp, entry["defaults"], tensors, wide)
    entry["exact"] = check(model_type, r, entry)
    counted_by = HAND.get(model_type) or entry.get("row") or config_families.UNKNOWN
    entry["fills"] = class_fills(model_type, counted_by)
    if not entry["exact"]["total"]:  # an experts' count the core's reading of this type is not
        # shown to use as the model does (Nemotron-H's experts sit on its E layers alone): a
        # file without it stays dense rather than gaining the class's experts everywhere
        counts = {f for group in config_families.MOE_COUNTS for f in group}
        entry["fills"] = {k: v for k, v in entry["fills"].items() if k not in counts}
    return entry


def _flag_tensors(model_type, r, defaults, row) -> list[dict]:
    """Terms for each boolean field that changes what the model stores, taken when it is set
    against its class default."""
    out = []
    base = draw(model_type, random.Random(r.random()))
    if base is None:
        return out
    _each_flip(defaults, lambda flags: _fit_flipped(model_type, r, row, flags, out))
    return out


def _each_flip(defaults: dict, flip) -> None:
    """flip({flag: its class default}) for each flag the derivation toggles, alone; then, where
    the class refused more than one alone (flip returned False: InternLM3's attention_bias and
    mlp_bias must agree), for those together."""
    refused = [f for f in defaults if f not in NOT_TOGGLED and not flip({f: defaults[f]})]
    if len(refused) > 1:
        flip({f: defaults[f] for f in refused})


def _fit_flipped(model_type, r, row, flags: dict, out: list) -> bool:
    """Adds to `out` the terms that `flags` (each flipped against its class default, given
    here) add to the model. -> False where the class refuses that flip."""
    flipped_to = {f: not d for f, d in flags.items()}
    flipped = draw(model_type, random.Random(r.random()), flipped_to)
    if flipped is None:
        return False
    with provisional(model_type, row):
        try:
            before = truth(flipped[0])["total"] - core(flipped[1])["total"]
        except costs.ConfigError:
            return True
    if before == 0:  # the flags change nothing the row does not already count
        return True
    draws = _draws(model_type, r, FIT_DRAWS, flipped_to)
    if len(draws) < FIT_DRAWS:
        return True
    when = [{"flag": f, "default": d, **({"is": False} if d else {})} for f, d in flags.items()]
    out += _fitted_tensors(draws, [truth(c) for c, _ in draws], row, model_type, when) or []
    return True


def check(model_type: str, r: random.Random, entry: dict) -> dict:
    """Which counts the core gets exactly on fresh draws, with random flags: {count: bool}."""
    if entry.get("caches_if"):  # drawn as the derivation drew it (a test calls this alone)
        _AS_DECODER.add(model_type)
    exact = {"total": True, "matmul": True, "kv": True}
    ran = False
    row = entry.get("row")
    ctx = provisional(model_type, row) if row else contextlib.nullcontext()
    flags = [f for f in entry["defaults"] if f not in NOT_TOGGLED]
    with ctx:
        for _ in range(CHECK_DRAWS):
            got = draw(model_type, r, {f: r.random() < 0.5 for f in flags if r.random() < 0.3})
            if got is None:
                got = draw(model_type, r)
            if got is None:
                return {"total": False, "matmul": False, "kv": False}
            config, cfg = got
            if not _counts_hold(config, cfg, exact):
                return exact
            kv = _kv_exact_where_it_runs(model_type, r, config, cfg)
            if kv is not None:
                exact["kv"] &= kv
                ran = True
        # and each flag flipped against its class default, for certain
        _each_flip(entry["defaults"], lambda flipped: _flipped_exact(model_type, r, flipped,
                                                                      exact))
        if exact["total"] or exact["matmul"]:
            _undrawn_sizes_hold(model_type, r, exact)
    exact["kv"] &= ran  # shown exact only on caches that a forward filled
    return exact


# a config field that may size a tensor: each the draws leave at its class default is doubled
SIZE_FIELD = re.compile(r"size|dim|num_|^n_|rank|expert|heads|width|inner|ffn|(^|_)d_")


def _undrawn_sizes_hold(model_type: str, r: random.Random, exact: dict) -> None:
    """`exact` and-ed, for total and matmul, with a draw in which each integer size field the
    draws never change is doubled, one at a time: where Transformers builds it and its counts
    move, the core's must move with them. A width the core does not read (Granite MoE's
    shared_intermediate_size, OPT's word_embed_proj_dim) would otherwise be fitted as a
    constant and shown exact. A doubled value the core refuses (more KV heads than heads)
    says nothing."""
    got = draw(model_type, r)
    if got is None:
        return
    config, _ = got
    text = hf_oracle.text_config(config)
    nested = text is not config
    drawn = set(_sizes(random.Random(0))) | MOE_LAYOUT
    if _draws_mla(model_type):
        drawn |= set(_mla_sizes(random.Random(0)))
    base = truth(config)
    for name in sorted(_fields(type(text)) - drawn):
        value = getattr(text, name, None)
        if type(value) is not int or not SIZE_FIELD.search(name):
            continue
        whole = config.to_dict()
        (whole["text_config"] if nested else whole)[name] = 2 * value if value > 0 else 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doubled = type(config).from_dict(whole)
                model_truth = truth(doubled)
        except Exception:  # noqa: BLE001, S112 - a value this class refuses: nothing to hold
            continue
        if (model_truth["total"], model_truth["matmul"]) == (base["total"], base["matmul"]):
            continue
        try:
            c = core(hf_oracle.written(doubled))
        except costs.ConfigError:
            continue
        exact["total"] &= c["total"] == model_truth["total"]
        exact["matmul"] &= c["matmul"] == model_truth["matmul"]


def _counts_hold(config, cfg, exact) -> bool:  # `exact` and-ed with this draw's total and
    # matmul; where the core refuses the draw, nothing is exact -> False
    try:
        t, c = truth(config), core(cfg)
    except costs.ConfigError:
        exact.update(total=False, matmul=False, kv=False)
        return False
    exact["total"] &= t["total"] == c["total"]
    exact["matmul"] &= t["matmul"] == c["matmul"]
    return True


def _flipped_exact(model_type, r, defaults, exact) -> bool:  # a draw with these flags flipped
    # against their `defaults`: `exact` and-ed with its counts -> False where none builds
    got = draw(model_type, r, {f: not d for f, d in defaults.items()})
    if got is None:
        return False
    config, cfg = got
    if _counts_hold(config, cfg, exact):
        exact["kv"] &= _kv_exact(model_type, config, cfg) is not False
    return True


def _kv_exact_where_it_runs(model_type, r, config, cfg) -> bool | None:
    """Whether the core's KV equals the cache of this draw's forward; where that forward
    cannot run (a size its attention code assumes and its config class does not check, such
    as MLA's key heads equal to its query heads), of the next draw whose forward runs, up to
    KV_TRIES. None runs: None (this draw says nothing either way)."""
    for _ in range(KV_TRIES):
        verdict = _kv_exact(model_type, config, cfg)
        if verdict is not None:
            return verdict
        got = draw(model_type, r)
        if got is None:
            return None
        config, cfg = got
    return None


def _kv_exact(model_type, config, cfg) -> bool | None:  # None: the forward cannot run
    try:
        truth = hf_oracle.truth(config)
    except Exception:  # noqa: BLE001 - a forward meta tensors cannot run on these sizes
        return None
    try:
        diff = hf_oracle.differences({"family": model_type, "config": cfg, "truth": truth})
    except Exception:  # noqa: BLE001 - the core refuses what Transformers ran: not exact
        return False
    return not ({"kv elements per token", "tokens held past the window", "MLA latent"}
                & set(diff))


HAND = config_families.HAND_FAMILIES


@contextlib.contextmanager
def fresh_core(version: str):
    """The core with the hand-written rows and each type's class defaults only, never the
    committed file's rows, so a rerun writes the same file whatever the old one held; put back
    as it was afterwards (a test runs this inside a process that goes on using the core)."""
    saved = config_families.DERIVED, dict(config_families.FAMILIES)
    config_families.DERIVED = {"transformers": version, "text_of": {}, "types": {}}
    for t in model_types():
        with contextlib.suppress(Exception):  # a class with no defaults: none held
            config_families.DERIVED["types"][t] = {"defaults": class_defaults(t)}
    config_families.FAMILIES.clear()
    config_families.FAMILIES.update(config_families.families())
    try:
        yield
    finally:
        config_families.DERIVED = saved[0]
        config_families.FAMILIES.clear()
        config_families.FAMILIES.update(saved[1])


def derive_all(types, log=sys.stderr) -> dict:
    import transformers
    out = {"transformers": transformers.__version__, "seed": SEED,
           "text_of": {o: t for o, t in text_models().items() if t in types}, "types": {}}
    with fresh_core(out["transformers"]):
        for t in types:
            start = time.perf_counter()
            try:
                e = out["types"][t] = derive(t)
            except Exception as err:  # noqa: BLE001 - one type's failure is its entry's
                e = out["types"][t] = {"builds": False, "why": f"{type(err).__name__} in a build"}
            print(f"{t:32s} {time.perf_counter() - start:5.1f} s  "
                  f"{'row' if 'row' in e else 'hand' if t in HAND else '-':4s} "
                  f"{e.get('exact', e.get('why'))}", file=log)
    return out


def stale(committed: dict, derived: dict) -> list[str]:  # -> the types whose entries differ
    return sorted(t for t in derived["types"]
                  if committed["types"].get(t) != derived["types"][t])


def text(doc: dict) -> str:
    return json.dumps(doc, indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--type", action="append", help="only these model types (printed)")
    p.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    a = p.parse_args(argv)
    hf_oracle._torch()  # quiet Transformers' logging
    if a.type:
        print(text(derive_all(a.type)))
        return 0
    doc = derive_all(model_types())
    if a.check:
        committed = json.loads(OUT.read_text())
        off = stale(committed, doc) + (["(version)"] if committed["transformers"] != doc[
            "transformers"] else [])
        print(f"stale: {', '.join(off)}" if off else "current", file=sys.stderr)
        return 1 if off else 0
    OUT.write_text(text(doc))
    print(f"{len(doc['types'])} types -> {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
