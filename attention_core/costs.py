"""What a transformer's attention costs next to everything else, from its config.json.

Counting conventions (the UI states them beside every number):
- a multiply-add is 2 FLOPs;
- matmul parameters are every linear weight plus lm_head, counted even when tied to the
  embedding (tying saves memory, not work); embedding lookups are free; norms, softmax,
  RoPE and biases are left out;
- one (query, key) pair costs 2 x layers x query heads x (head_dim + v_head_dim) FLOPs,
  which is 4 x layers x heads x head_dim when the two widths agree;
- a triangular (block-skipping) prefill kernel pays n^2/2 pairs, as the documents write
  it, not n(n+1)/2; a naive kernel pays n^2.

Every function of a length n (prompt or context, in tokens) takes an int or a numpy array
of lengths and returns a float or an array of the same shape. Bytes are plain bytes;
callers say GB (1e9) or GiB (2**30) when they print them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attention_core import config_families

# --- errors and parsing ------------------------------------------------------------------

MAX_CONFIG_BYTES = 1_000_000
MAX_NESTING = 64  # real configs nest 3-4 deep; anything past this is not a model config
WHOLE_FILE = "config.json"  # the field named when the problem is the file itself


class ConfigError(ValueError):
    """A config we cannot turn into a model shape; `field` says where, `problem` says why."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem

    def __reduce__(self):  # the default would re-call __init__ with the one joined message
        return (type(self), (self.field, self.problem))


class _NonFinite:
    """Stands in for NaN/Infinity while parsing, so the error can name the field holding it."""

    def __init__(self, token: str):
        self.token = token


def _finite_float(token: str) -> float | _NonFinite:  # JSON number text -> float
    value = float(token)  # 1e400 parses to inf: as bad as a literal Infinity
    return value if math.isfinite(value) else _NonFinite(token)


def _show(value: Any, limit: int = 60) -> str:  # any value -> short JSON-ish text for a message
    try:
        text = json.dumps(value, allow_nan=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_type(value: Any) -> str:  # parsed JSON value -> its JSON type name
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, _NonFinite):
        return "a non-finite number"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _as_bytes(text: Any) -> bytes:  # str | bytes -> bytes, size-checked
    if isinstance(text, str):
        if len(text) > MAX_CONFIG_BYTES:  # every character is at least one byte
            raise ConfigError(WHOLE_FILE, f"is over the {MAX_CONFIG_BYTES:,}-byte limit")
        try:
            text = text.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(WHOLE_FILE, "holds characters that are not valid Unicode") from None
    elif isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text)
    else:
        raise ConfigError(WHOLE_FILE, f"must be text or bytes, got {type(text).__name__}")
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(WHOLE_FILE, f"is {len(text):,} bytes; the limit is {MAX_CONFIG_BYTES:,}")
    return text


# Fields Transformers itself writes as Infinity (Mamba's clamp on its step, (0, inf) by
# default, in Bamba's, Falcon-H1's, Nemotron-H's files): how a model runs, never a size, so a
# non-finite number there is read past; anywhere else it is refused, named.
NON_FINITE_FIELDS = ("time_step_limit",)


def _check_tree(cfg: dict) -> None:
    """Walk the parsed file without recursion: reject deep nesting and non-finite numbers
    (but in NON_FINITE_FIELDS)."""
    stack: list[tuple[Any, str | None, int, Any]] = [(cfg, None, 1, None)]
    while stack:
        value, path, depth, field = stack.pop()  # field: the key the value stands under
        if isinstance(value, _NonFinite):
            if field in NON_FINITE_FIELDS:
                continue
            raise ConfigError(path, f"{value.token} is not a finite number")
        if isinstance(value, (dict, list)):
            if depth > MAX_NESTING:
                raise ConfigError(WHOLE_FILE, f"nests more than {MAX_NESTING} levels deep")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(value, list):
                    name, under = f"{path}[{key}]", field
                else:
                    name = str(key) if path is None else f"{path}.{key}"
                    under = key
                stack.append((child, name, depth + 1, under))


def parse_config_text(text: str | bytes) -> dict:  # config.json contents -> dict, or ConfigError
    data = _as_bytes(text)
    try:
        decoded = data.decode("utf-8-sig")  # tolerate a BOM; anything else non-UTF-8 is binary
    except UnicodeDecodeError as e:
        raise ConfigError(
            WHOLE_FILE, f"is not UTF-8 text (bad byte at offset {e.start}); is it a binary file?"
        ) from None
    if "\x00" in decoded:
        raise ConfigError(WHOLE_FILE, "contains NUL bytes; is it a binary file?")
    if not decoded.strip():
        raise ConfigError(WHOLE_FILE, "is empty")
    try:
        cfg = json.loads(decoded, parse_constant=_NonFinite, parse_float=_finite_float)
    except RecursionError:  # the C parser gives up around a thousand levels
        raise ConfigError(WHOLE_FILE, f"nests more than {MAX_NESTING} levels deep") from None
    except json.JSONDecodeError as e:
        raise ConfigError(
            WHOLE_FILE, f"is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})"
        ) from None
    except ValueError as e:  # e.g. an integer past Python's 4,300-digit conversion limit
        raise ConfigError(WHOLE_FILE, f"is not valid JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise ConfigError(WHOLE_FILE, f"must be a JSON object {{...}}, got {_json_type(cfg)}")
    _check_tree(cfg)
    return cfg


# --- reading fields ----------------------------------------------------------------------

# Past these no real model goes; a value beyond them is a typo or an attack on the UI.
MAX_LAYERS = 10_000
MAX_HIDDEN = 1_000_000
MAX_HEADS = 100_000
MAX_HEAD_DIM = 100_000
MAX_VOCAB = 100_000_000
MAX_INTERMEDIATE = 10_000_000
MAX_EXPERTS = 100_000
MAX_POSITIONS = 10_000_000_000

_MISSING = object()


def _lookup(cfg: dict, name: str) -> Any:  # "a.b" -> cfg["a"]["b"]; _MISSING if a step is absent
    value: Any = cfg
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _pick(cfg: dict, keys: tuple[str, ...]) -> tuple[str, Any]:  # aliases -> (name used, value)
    for key in keys:
        value = _lookup(cfg, key)
        if value is not _MISSING:
            return key, value
    return keys[0], _MISSING


def _missing(keys: tuple[str, ...]) -> ConfigError:  # none of the aliases is there
    also = f" (also looked for {', '.join(keys[1:])})" if len(keys) > 1 else ""
    return ConfigError(keys[0], f"is missing{also}")


def _present(cfg: dict, key: str) -> bool:  # set to something other than null
    return cfg.get(key) is not None


def _count(cfg: dict, keys: tuple[str, ...], limit: int, default: Any = _MISSING,
           minimum: int = 1) -> Any:  # -> a validated int, or default when absent/null
    key, value = _pick(cfg, keys)
    if value is _MISSING or value is None:
        if default is not _MISSING:
            return default
        if value is _MISSING:
            raise _missing(keys)
        raise ConfigError(key, "is null; it is required")
    kind = "positive" if minimum == 1 else "non-negative"
    if isinstance(value, bool) or not isinstance(value, int):  # bool is an int in Python
        raise ConfigError(key, f"must be a {kind} integer, got {_show(value)}")
    if value < minimum:
        raise ConfigError(key, f"must be a {kind} integer, got {_show(value)}")
    if value > limit:
        raise ConfigError(key, f"is {_show(value)}, more than any real model ({limit:,})")
    return value


def _flag(cfg: dict, key: str) -> bool | None:  # optional boolean field
    value = cfg.get(key)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false, got {_show(value)}")
    return value


EXPERT_MATRICES = 3  # every MoE family read here uses gated experts


def _language_model(cfg: dict, notes: list[str]) -> dict:  # multimodal config -> its text part
    if "num_hidden_layers" in cfg or "n_layer" in cfg or "text_config" not in cfg:
        return cfg
    text = cfg["text_config"]
    if not isinstance(text, dict):
        raise ConfigError("text_config", f"must be an object, got {_json_type(text)}")
    notes.append("Counted the language model in text_config; the vision tower is left out.")
    outer = {k: v for k, v in cfg.items() if k != "text_config"}
    merged = {**outer, **text}  # the text part's fields win, but for tying: Transformers ties
    # a wrapper's head as the wrapper's own config says
    if "tie_word_embeddings" in outer:
        merged["tie_word_embeddings"] = outer["tie_word_embeddings"]
    # a text model with no row of its own (Mllama's, Emu3's) is counted by its wrapper's row,
    # which the derivation fits to the wrapper's language model
    inner, wrapper = text.get("model_type"), outer.get("model_type")
    if (isinstance(inner, str) and isinstance(wrapper, str) and wrapper
            and not config_families.family(inner, merged)[0]
            and config_families.family(wrapper, merged)[0]):
        merged["model_type"] = wrapper
    return merged


def _model_type(cfg: dict) -> str:
    value = cfg.get("model_type", "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError("model_type", f"must be a string, got {_show(value)}")
    return value


# --- the figures, read as config_families' table says ---------------------------------------

LIMITS = {"layers": MAX_LAYERS, "hidden": MAX_HIDDEN, "heads": MAX_HEADS, "kv_heads": MAX_HEADS,
          "head_dim": MAX_HEAD_DIM, "intermediate": MAX_INTERMEDIATE, "vocab": MAX_VOCAB,
          "max_positions": MAX_POSITIONS, "embedding_width": MAX_HIDDEN}


def _case(cfg: dict, rule: dict) -> dict:  # a rule -> the rule its first true flag picks
    for case in rule.get("cases", ()):
        flag = _flag(cfg, case["if"])
        if case["if_absent"] if flag is None else flag:
            return _case(cfg, case["then"])
    return rule


def _default(cfg: dict, spec: dict, got: dict, used: dict) -> Any:
    """A table default -> its value, from the figures already read (`got`)."""
    if "value" in spec:
        return spec["value"]
    if "same_as" in spec:
        return got[spec["same_as"]]
    if "times" in spec:
        return spec["times"] * got[spec["of"]]
    if "divide" in spec:  # only head_dim: hidden / heads
        whole, part = got[spec["divide"]], got[spec["by"]]
        if whole % part:
            raise ConfigError(used[spec["by"]], f"({part}) does not divide the hidden size "
                              f"({whole}) and there is no head_dim field to say how wide a "
                              "head is")
        return whole // part
    raise ValueError(f"unknown default {spec}")  # config_families' test keeps this unreachable


def _figure(cfg: dict, figure: str, rule: dict, got: dict, used: dict) -> tuple[Any, str]:
    """One figure by its rule -> (value, the field read, else the first it would read)."""
    rule = _case(cfg, rule)
    names = tuple(rule["names"])
    key, value = _pick(cfg, names) if names else (figure, _MISSING)
    if (value is _MISSING or value is None) and "default" in rule:
        return _default(cfg, rule["default"], got, used), key
    return _count(cfg, names, LIMITS[figure]), key


def _figures(cfg: dict, row: dict, skip: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """Every figure of config_families.FIGURES, in order -> ({figure: value}, {figure: field})."""
    got: dict = {}
    used: dict = {}
    for figure in config_families.FIGURES:
        if figure not in skip:
            got[figure], used[figure] = _figure(
                cfg, figure, config_families.rule(row, figure), got, used)
    if got["heads"] % got["kv_heads"]:
        raise ConfigError(
            used["kv_heads"],
            f"({got['kv_heads']}) must divide {used['heads']} ({got['heads']}): each KV head "
            "serves a whole group of query heads")
    return got, used


def _standard_heads(got: dict) -> dict:  # -> head widths
    return {"head_dim": got["head_dim"], "v_head_dim": got["head_dim"],
            "kv_heads": got["kv_heads"]}


def _mla_heads(cfg: dict, heads: int, kv_heads: int, notes: list[str]) -> dict:
    """DeepSeek's multi-head latent attention: keys/values cached as one low-rank latent."""
    kv_rank = _count(cfg, ("kv_lora_rank",), MAX_HIDDEN)
    q_rank = _count(cfg, ("q_lora_rank",), MAX_HIDDEN, default=None)  # null: full-rank q
    nope = _count(cfg, ("qk_nope_head_dim",), MAX_HEAD_DIM, minimum=0)
    rope = _count(cfg, ("qk_rope_head_dim",), MAX_HEAD_DIM, minimum=0)
    v_dim = _count(cfg, ("v_head_dim",), MAX_HEAD_DIM)
    if nope + rope == 0:
        raise ConfigError("qk_nope_head_dim", "and qk_rope_head_dim are both 0")
    notes.append(
        f"MLA counted in its decompressed form: each of the {heads} query heads scores over "
        f"{nope + rope} dims and sums {v_dim} value dims; the cache holds the "
        f"{kv_rank + rope}-value latent once per layer (kv_lora_rank + qk_rope_head_dim).")
    return {"head_dim": nope + rope, "v_head_dim": v_dim, "kv_heads": kv_heads,
            "mla": True, "q_lora_rank": q_rank, "kv_lora_rank": kv_rank,
            "qk_rope_head_dim": rope}


TOP_K = tuple(config_families.TOP_K)  # routed experts per token, by any name


def _top_k(cfg: dict, experts: int, layers: int) -> int:  # routed experts per token
    cfg = _one_top_k(cfg, layers)
    key, _ = _pick(cfg, TOP_K)
    k = _count(cfg, TOP_K, MAX_EXPERTS)
    if k > experts:
        raise ConfigError(key, f"({k}) is more than the {experts} experts")
    return k


def _one_top_k(cfg: dict, layers: int) -> dict:
    """Hunyuan's moe_topk may list a top-k per layer (its class reads entry i on layer i): a
    list with one value for every layer reads as that value; one that differs is refused."""
    key, value = _pick(cfg, TOP_K)
    if not isinstance(value, list):
        return cfg
    if len(value) < layers:
        raise ConfigError(key, f"lists {len(value)} top-k values for {layers} layers: give "
                          "one value, or one for each layer")
    ks = [_count({key: v}, (key,), MAX_EXPERTS) for v in value[:layers]]
    if min(ks) != max(ks):
        raise ConfigError(key, f"lists a different top-k for some layers ({min(ks)} on one, "
                          f"{max(ks)} on another); this version reads one top-k for every layer")
    return {**cfg, key: ks[0]}


def _layer_indices(cfg: dict, key: str) -> set[int]:  # optional list of layer numbers
    value = cfg.get(key)
    if value is None:
        return set()
    if not isinstance(value, list) or any(
            isinstance(i, bool) or not isinstance(i, int) for i in value):
        raise ConfigError(key, "must be a list of layer numbers")
    return set(value)


def _mlp_layer_kinds(cfg: dict, layers: int, moe_layers: int) -> int:
    """The MoE layers as mlp_layer_types lists them ("dense" or "sparse" a layer: AXK, EXAONE
    MoE, GLM-4.7-Flash, Laguna, ...), which wins over a family's own layout fields; without
    it, `moe_layers` as those fields say."""
    kinds = cfg.get("mlp_layer_types")
    if kinds is None:
        return moe_layers
    if not isinstance(kinds, list) or not all(k in ("dense", "sparse") for k in kinds):
        raise ConfigError("mlp_layer_types", 'must be a list of "dense" and "sparse"')
    if len(kinds) != layers:
        raise ConfigError("mlp_layer_types", f"has {len(kinds)} entries for {layers} layers")
    return kinds.count("sparse")


def _expert_width(cfg: dict, intermediate: int, row: dict, notes: list[str]) -> int:
    # OLMoE, FlexOlmo, Hunyuan, Aria: a class with no moe_intermediate_size makes each expert
    # intermediate_size wide (the row says so, from its class's fields), whatever a file adds
    if row.get("experts_wide") != "intermediate":
        return _count(cfg, ("moe_intermediate_size",), MAX_INTERMEDIATE)
    if _present(cfg, "moe_intermediate_size"):
        notes.append(f"moe_intermediate_size is {_show(cfg['moe_intermediate_size'])}: not "
                     "read, as Transformers' class for this model type has no such field; each "
                     f"expert is intermediate_size ({intermediate:,}) wide.")
    return intermediate


def _jamba_moe(cfg: dict, layers: int, intermediate: int) -> tuple | None:
    """Jamba: experts on layer i where i % expert_layer_period == expert_layer_offset, each
    intermediate_size wide, no shared one -> (experts, top-k, width, 0, 0, MoE layers); a
    count of 1 builds a dense MLP everywhere -> None."""
    experts = _count(cfg, ("num_experts",), MAX_EXPERTS, minimum=0)
    if experts <= 1:
        return None
    every = _count(cfg, ("expert_layer_period",), MAX_LAYERS)
    offset = _count(cfg, ("expert_layer_offset",), MAX_LAYERS, default=1, minimum=0)
    if offset >= every:
        raise ConfigError("expert_layer_offset", f"is {offset}; it must be smaller than "
                          f"expert_layer_period ({every}), as Transformers' class requires")
    moe_layers = sum(1 for i in range(layers) if i % every == offset)
    return experts, _top_k(cfg, experts, layers), intermediate, 0, 0, moe_layers


def _moe(cfg: dict, layers: int, hidden: int, intermediate: int, notes: list[str],
         row: dict) -> dict:
    """Mixture of experts, read the way each family writes it. Dense models: no experts."""
    dense = {"num_experts": 0, "experts_per_token": 0, "moe_intermediate": 0,
             "shared_experts": 0, "shared_intermediate": 0, "dense_layers": layers}
    if _present(cfg, "n_routed_experts"):  # DeepSeek-V2/V3
        experts = _count(cfg, ("n_routed_experts",), MAX_EXPERTS, minimum=0)
        if not experts:
            return dense
        k = _top_k(cfg, experts, layers)
        size = _count(cfg, ("moe_intermediate_size",), MAX_INTERMEDIATE)
        shared = _count(cfg, ("n_shared_experts",), MAX_EXPERTS, default=0, minimum=0)
        first_dense = _count(cfg, ("first_k_dense_replace",), MAX_LAYERS, default=0, minimum=0)
        every = _count(cfg, ("moe_layer_freq",), MAX_LAYERS, default=1)
        moe_layers = sum(1 for i in range(layers) if i >= first_dense and i % every == 0)
        shared_width = shared * size  # each shared expert is one routed expert's size
    elif _present(cfg, "intermediate_size_mlp"):
        # Llama 4: experts on the layers moe_layers lists, else every step-th; each such layer
        # also runs one shared expert as wide as a routed one (intermediate_size); the other
        # layers' MLPs are intermediate_size_mlp wide (the figure "intermediate")
        experts = _count(cfg, ("num_local_experts",), MAX_EXPERTS, minimum=0)
        if not experts:
            return dense
        k = _top_k(cfg, experts, layers)
        size = _count(cfg, ("intermediate_size",), MAX_INTERMEDIATE)
        shared, shared_width = 1, size
        if cfg.get("moe_layers") is not None:
            listed = _layer_indices(cfg, "moe_layers")
            moe_layers = sum(1 for i in range(layers) if i in listed)
        else:
            step = _count(cfg, ("interleave_moe_layer_step",), MAX_LAYERS, default=1)
            moe_layers = len(range(step - 1, layers, step))
    elif _present(cfg, "expert_layer_period"):
        jamba = _jamba_moe(cfg, layers, intermediate)
        if jamba is None:
            return dense
        experts, k, size, shared, shared_width, moe_layers = jamba
    elif _present(cfg, "num_local_experts") and not _present(cfg, "moe_intermediate_size"):
        # Mixtral: intermediate_size is the expert size; Granite MoE's shared MLP is
        # shared_intermediate_size wide (0: none)
        experts = _count(cfg, ("num_local_experts",), MAX_EXPERTS, minimum=0)
        if not experts:
            return dense
        k, size, moe_layers = _top_k(cfg, experts, layers), intermediate, layers
        shared_width = _count(cfg, ("shared_intermediate_size",), MAX_INTERMEDIATE, default=0,
                              minimum=0)
        shared = 1 if shared_width else 0
    elif _present(cfg, "moe_num_experts"):
        # ERNIE 4.5 and Aria: one MLP for the shared experts, each as wide as a routed one;
        # experts on every interval-th layer from the start index to the end one (-1: the last)
        experts = _count(cfg, ("moe_num_experts",), MAX_EXPERTS, minimum=0)
        if not experts:
            return dense
        k = _top_k(cfg, experts, layers)
        size = _expert_width(cfg, intermediate, row, notes)
        shared = _count(cfg, ("moe_num_shared_experts",), MAX_EXPERTS, default=0, minimum=0)
        shared_width = shared * size
        start = _count(cfg, ("moe_layer_start_index",), MAX_LAYERS, default=0, minimum=0)
        end = cfg.get("moe_layer_end_index")
        end = layers - 1 if end is None or (type(end) is int and end == -1) else _count(
            cfg, ("moe_layer_end_index",), MAX_LAYERS, minimum=0)
        every = _count(cfg, ("moe_layer_interval",), MAX_LAYERS, default=1)
        moe_layers = sum(1 for i in range(layers) if start <= i <= end and (i + 1) % every == 0)
    elif _present(cfg, "num_experts") or _present(cfg, "num_local_experts"):
        # Qwen2-MoE / Qwen3-MoE: num_experts as Transformers 4 writes it, num_local_experts
        # as Transformers 5 does; each expert moe_intermediate_size wide
        experts = _count(cfg, ("num_experts", "num_local_experts"), MAX_EXPERTS, minimum=0)
        if not experts:
            return dense
        k = _top_k(cfg, experts, layers)
        size = _expert_width(cfg, intermediate, row, notes)
        shared_width = _count(cfg, ("shared_expert_intermediate_size",), MAX_INTERMEDIATE,
                              default=0, minimum=0)
        shared = 1 if shared_width else 0
        if not shared_width and _present(cfg, "num_shared_experts"):  # EXAONE MoE, HY-V3:
            # one MLP for the shared experts, each as wide as a routed one
            shared = _count(cfg, ("num_shared_experts",), MAX_EXPERTS, minimum=0)
            shared_width = shared * size
        step = _count(cfg, ("decoder_sparse_step",), MAX_LAYERS, default=1)
        dense_only = _layer_indices(cfg, "mlp_only_layers")
        first_dense = _count(cfg, ("num_dense_layers",), MAX_LAYERS, default=0, minimum=0)
        moe_layers = sum(1 for i in range(first_dense, layers)  # AFMoE: the first ones dense
                         if i not in dense_only and (i + 1) % step == 0)
    else:
        return dense
    moe_layers = _mlp_layer_kinds(cfg, layers, moe_layers)
    notes.append(
        f"Mixture of experts: {k} of {experts} routed experts active per token"
        + (f", plus {shared} shared" if shared else "")
        + f"; {layers - moe_layers} of {layers} layers have a dense MLP.")
    return {"num_experts": experts, "experts_per_token": k, "moe_intermediate": size,
            "shared_experts": shared, "shared_intermediate": shared_width,
            "dense_layers": layers - moe_layers}


def _local_layers(cfg: dict, layers: int, window: dict) -> int:
    """GPT-Neo's attention_types, [[["global", "local"], 12]] -> how many layers are local."""
    key = window["layer_pattern"]
    spec = cfg.get(key)
    if spec is None:
        spec = window["layer_pattern_default"]
    bad = ConfigError(key, 'must be a list of [["global" or "local", ...], repeat] pairs')
    if not isinstance(spec, list):
        raise bad
    total = local = 0
    for pair in spec:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], list)
                and all(t in ("global", "local") for t in pair[0])
                and isinstance(pair[1], int) and not isinstance(pair[1], bool)
                and 0 <= pair[1] <= MAX_LAYERS):
            raise bad
        total += len(pair[0]) * pair[1]
        local += pair[0].count("local") * pair[1]
    if total != layers:
        raise ConfigError(key, f"describes {total} layers for {layers} layers")
    return local


def _sliding_count(cfg: dict, layers: int, window: dict, notes: list[str]) -> int:
    """How many layers use the window, in the order the families record it."""
    if "layer_pattern" in window:  # GPT-Neo
        return _local_layers(cfg, layers, window)
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise ConfigError("layer_types", "must be a list of strings")
        if len(types) != layers:
            raise ConfigError("layer_types", f"has {len(types)} entries for {layers} layers")
        kind = "chunked_attention" if window.get("chunked") else "sliding_attention"
        if set(types) - {kind, "full_attention", *UNCACHED_KINDS}:
            notes.append("Layer types other than sliding/full attention are counted as full.")
        return types.count(kind)
    if window.get("chunked") or window.get("rope_free"):
        # Llama 4 chunks the layers with RoPE (no_rope_layers' 1s), SmolLM3 slides those without
        # (its 0s); with no list, RoPE is off on every p-th layer
        listed = cfg.get("no_rope_layers")
        if listed is not None and not isinstance(listed, list) or listed and (
                len(listed) != layers or any(type(v) is not int or v not in (0, 1)
                                             for v in listed)):
            raise ConfigError("no_rope_layers", f"must be {layers} ones and zeros")
        if not listed:  # Transformers reads an empty list as absent
            every = _count(cfg, ("no_rope_layer_interval",), MAX_LAYERS, default=4)
            listed = [int((i + 1) % every != 0) for i in range(layers)]
        return sum(listed) if window.get("chunked") else listed.count(0)
    if _present(cfg, "sliding_window_pattern") or "pattern_default" in window:
        every = _count(cfg, ("sliding_window_pattern",), MAX_LAYERS,  # Gemma 3: every p-th full
                       default=window.get("pattern_default", _MISSING))
        return layers - layers // every
    if window.get("alternate"):  # Gemma 2: alternates, starting with a sliding layer
        return (layers + 1) // 2
    if cfg.get("use_sliding_window") is True and _present(cfg, "max_window_layers"):
        first = _count(cfg, ("max_window_layers",), MAX_LAYERS, minimum=0)  # Qwen2
        return max(layers - first, 0)
    return layers  # Mistral: every layer


def _window(cfg: dict, layers: int, row: dict, notes: list[str], attending: int) -> dict:
    # attending: the layers with attention (a hybrid's others hold no cache to window)
    unwindowed = {"sliding_window": None, "sliding_layers": 0}
    if _flag(cfg, "use_sliding_window") is False:  # Qwen2/3 carry a window they don't use
        return unwindowed
    rule = config_families.window_rule(row)
    names = tuple(rule["names"])
    value = _pick(cfg, names)[1]
    if value is _MISSING or value is None:
        window = rule["default"]["value"]
    else:
        window = _count(cfg, names, MAX_POSITIONS)
    if window is None:
        return unwindowed
    sliding = min(_sliding_count(cfg, layers, rule, notes), attending)
    if not sliding:
        return unwindowed
    if rule.get("chunked"):
        notes.append(
            f"Chunked attention of {window:,} tokens on {sliding} of {layers} layers: there a "
            f"query sees only its own chunk's keys and the cache holds at most {window:,} "
            f"tokens, as Transformers keeps it; the attention is counted as a sliding window "
            f"of {window:,} keys, an upper bound (about twice what a chunked query sees on "
            f"average over a long prompt).")
    else:
        notes.append(
            f"Sliding window of {window:,} tokens on {sliding} of {layers} layers: there a "
            f"query sees at most {window:,} keys and the cache holds at most {window:,} tokens.")
    return {"sliding_window": window, "sliding_layers": sliding}


# layer_types' kinds for layers that keep no keys and values (Transformers' names for Mamba,
# linear attention and recurrent layers, LFM's short convolutions, MLP-only layers)
UNCACHED_KINDS = ("linear_attention", "conv", "mamba", "recurrent", "mlp", "moe")


# the kinds that keep a fixed-size state instead (config_families.STATES says how large)
STATE_KINDS = ("linear_attention", "conv", "mamba", "recurrent")
# Nemotron-H's hybrid_override_pattern, one character a layer
PATTERN_KINDS = {"M": "mamba", "*": "full_attention", "-": "mlp", "E": "moe"}
MAX_STATE_FIELD = 1_000_000  # a state field past this is not counted (said), so that a
MAX_STATE_VALUES = 2**53 - 1  # layer's state stays exact in JavaScript too


def _layer_kinds(cfg: dict, layers: int) -> list[str] | None:
    """Each layer's kind as the config lays them out: layer_types (Nemotron-H's
    layers_block_type, or its hybrid_override_pattern), else Jamba's attn_layer_period and
    attn_layer_offset, Bamba's attn_layer_indices or Qwen3-Next's full_attention_interval, as
    their config classes expand them; None when none says (or says it malformed)."""
    for key in ("layer_types", "layers_block_type"):
        types = cfg.get(key)
        if isinstance(types, list) and len(types) == layers and all(
                isinstance(t, str) for t in types):
            return types
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == layers and set(pattern) <= set(PATTERN_KINDS):
        return [PATTERN_KINDS[c] for c in pattern]
    period, offset = cfg.get("attn_layer_period"), cfg.get("attn_layer_offset")
    if _whole(period) and period >= 1 and _whole(offset):
        if not 0 <= offset < period:  # no layer would attend; Transformers refuses it too
            raise ConfigError("attn_layer_offset", f"is {offset}; it must be from 0 to one "
                              f"less than attn_layer_period ({period})")
        return ["full_attention" if i % period == offset else "mamba" for i in range(layers)]
    indices = cfg.get("attn_layer_indices")
    if isinstance(indices, list) and all(_whole(i) for i in indices):
        return ["full_attention" if i in indices else "mamba" for i in range(layers)]
    every = cfg.get("full_attention_interval")
    if _whole(every) and every >= 1:
        return ["full_attention" if (i + 1) % every == 0 else "linear_attention"
                for i in range(layers)]
    return None


def _uncached_layers(kinds: list[str] | None, layers: int, stated: bool,
                     notes: list[str]) -> int:
    uncached = sum(t in UNCACHED_KINDS for t in kinds or ())
    if uncached:
        shown = ", ".join(k for k in UNCACHED_KINDS if k in kinds)
        rest = layers - uncached
        state = ("the fixed state they keep is its own figure" if stated else
                 "any fixed state they keep is not counted")
        if not rest:  # Mamba: none attends
            notes.append(f"All {layers} layers ({shown}) hold no KV cache, so the KV figures, "
                         f"the attention FLOPs and the crossover are zero; {state}.")
        else:
            notes.append(f"{uncached} of {layers} layers ({shown}) hold no KV cache: the KV "
                         "figures, the attention FLOPs and the crossover count the other "
                         f"{rest} layer{'' if rest == 1 else 's'}; {state}.")
    return uncached


def _state(cfg: dict, model_type: str, kinds: list[str] | None, layers: int,
           notes: list[str]) -> dict:
    """-> state_layers and state_per_layer (values a user) by config_families.STATES."""
    none = {"state_layers": 0, "state_per_layer": 0}
    rule = config_families.state_rule(model_type)
    if rule is None:
        return none
    n = layers if rule.get("every_layer") else sum(k in STATE_KINDS for k in kinds or ())
    if not n:
        return none
    parts = {}
    for part in ("conv", "recurrent"):
        parts[part] = 0
        for product in rule[part]:
            value = 1
            for factor in product:
                if not isinstance(factor, str):
                    value *= factor
                    continue
                field = cfg.get(factor)
                if not (_whole(field) and 1 <= field <= MAX_STATE_FIELD):
                    why = (f"the file has no {factor}" if field is None else
                           f"{factor} is {_show(field)}, not a whole number from 1 to "
                           f"{MAX_STATE_FIELD:,}")
                    notes.append(f"The {n} {rule['kind']} layers' fixed state is not counted: "
                                 f"{why}.")
                    return none
                value *= field
            parts[part] += value
    per = parts["conv"] + parts["recurrent"]
    if per > MAX_STATE_VALUES:
        notes.append(f"The {n} {rule['kind']} layers' fixed state is not counted: {per:,} "
                     "values a layer is past what this version reads.")
        return none
    where = "beside its attention" if rule.get("every_layer") else "instead of a KV cache"
    notes.append(f"Each of the {n} {rule['kind']} layers keeps a fixed state per user {where}, "
                 f"at any context: {per:,} values a layer ({parts['conv']:,} convolution, "
                 f"{parts['recurrent']:,} recurrent), {n * per:,} in all.")
    return {"state_layers": n, "state_per_layer": per}


# the fields _layer_kinds reads a layout from
LAYOUT_FIELDS = ("layer_types", "layers_block_type", "hybrid_override_pattern",
                 "attn_layer_period", "attn_layer_offset", "attn_layer_indices",
                 "full_attention_interval")


def _unlisted_kinds(unlisted, layers: int) -> list[str]:  # a STATES rule's "unlisted": a kind
    # for every layer, or {"interval": n}: every n-th layer attends, the rest are linear
    # attention (with "last": the last attends when no other would)
    if isinstance(unlisted, str):
        return [unlisted] * layers
    every = unlisted["interval"]
    kinds = ["full_attention" if (i + 1) % every == 0 else "linear_attention"
             for i in range(layers)]
    if unlisted.get("last") and layers and "full_attention" not in kinds:
        kinds[-1] = "full_attention"
    return kinds


def _hybrid(cfg: dict, model_type: str, layers: int, notes: list[str]) -> dict:
    # -> uncached_layers, state_layers, state_per_layer
    kinds, said = _layer_kinds(cfg, layers), []
    unlisted = (config_families.state_rule(model_type) or {}).get("unlisted")
    if unlisted and all(cfg.get(k) is None for k in LAYOUT_FIELDS):  # as its class lays it out
        kinds = _unlisted_kinds(unlisted, layers)
    state = _state(cfg, model_type, kinds, layers, said)
    uncached = _uncached_layers(kinds, layers, bool(state["state_layers"]), notes)
    notes.extend(said)
    return {"uncached_layers": uncached, **state}


def _tied(cfg: dict, row: dict, notes: list[str]) -> bool:  # lm_head shares the embedding?
    tied = _flag(cfg, "tie_word_embeddings")
    if tied is not None:
        return tied
    if row["tied"] is None:  # a family whose default we do not know
        notes.append("tie_word_embeddings is absent: assumed untied (a separate lm_head).")
        return False
    return row["tied"]


def _refuse_format(cfg: dict, model_type: str) -> None:  # formats read by no rule here
    if "block_configs" in cfg:
        raise ConfigError("block_configs", "is Nemotron-NAS's format, in which each layer has "
                          "its own attention and MLP sizes; this version reads models whose "
                          "layers share one attention and MLP width")
    if "multi_query_group_num" in cfg:
        raise ConfigError("multi_query_group_num", "is ChatGLM's format (ffn_hidden_size, "
                          "kv_channels), whose model code is not in Transformers; this version "
                          "does not read it")
    if cfg.get("is_encoder_decoder") is True or config_families.encoder_decoder(model_type):
        raise ConfigError("model_type", f"{model_type or '(none)'!r} is an encoder-decoder; this "
                          "version reads decoder-only models (no encoder, no cross-attention)")


def _family(cfg: dict, model_type: str, notes: list[str]) -> dict:  # -> the row, its caveat said
    _refuse_format(cfg, model_type)
    key, row = config_families.family(model_type, cfg)
    line = (config_families.inexact_line(key, row) if key
            else config_families.unknown_line(model_type))
    if line:
        notes.append(line)
    flag = config_families.caches_if(model_type)
    if flag and _flag(cfg, flag) is not True:
        notes.append(config_families.caches_if_line(model_type, flag))
    if config_families.keeps_no_cache(model_type):
        notes.append(config_families.no_cache_line(model_type))
    return row


def _class_defaults(cfg: dict, model_type: str, row: dict, notes: list[str]) -> dict:
    # a field the file leaves out means what it means to Transformers: the class's default
    cfg, filled = config_families.with_class_defaults(model_type, row, cfg)
    if filled:
        shown = ", ".join(f"{k} {json.dumps(v)}" for k, v in filled.items())
        notes.append(f"Not in the file, so taken from Transformers "
                     f"{config_families.TRANSFORMERS}'s defaults for model_type "
                     f"{model_type!r}: {shown}.")
    return cfg


def _display_name(cfg: dict, name: Any, model_type: str) -> str:
    for candidate in (name, cfg.get("_name_or_path"), model_type):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()[:120]
    return "custom model"


# --- the tensors beside the big matrices (config_families' "tensors") -----------------------

def _same(value, wanted) -> bool:  # a config value against a table's: numbers by value only
    if isinstance(value, bool) or isinstance(wanted, bool) or value is None or wanted is None:
        return value is wanted
    if isinstance(value, (int, float)) and isinstance(wanted, (int, float)):
        return value == wanted
    return False


def _holds(cfg: dict, shape: dict, condition: dict) -> bool:  # one "when" condition
    if "flag" in condition:
        flag = _flag(cfg, condition["flag"])
        value = condition["default"] if flag is None else flag
        return value is condition.get("is", True)
    if "present" in condition:
        return shape[condition["present"]] is not None
    value = _lookup(cfg, condition["field"])
    value = None if value is _MISSING else value
    if "in" in condition:
        return any(_same(value, v) for v in condition["in"])
    return not any(_same(value, v) for v in condition["not_in"])


def _factor(cfg: dict, shape: dict, factor) -> int:  # a figure, an int or a config number
    if isinstance(factor, int):
        return factor
    if isinstance(factor, str):
        return shape[factor]
    if "auto" in factor and cfg.get(factor["field"]) in (None, "auto"):  # Jamba's step rank:
        figure, by = factor["auto"]  # absent, null or "auto" is ceil(figure / by), as its
        return -(-shape[figure] // by)  # class computes it
    return _count(cfg, (factor["field"],), MAX_VOCAB, default=factor.get("default", _MISSING))


MAX_TENSOR_PARAMS = 2**53 - 1  # the tensors beside the big matrices, past which no real
# model goes (and a JavaScript number would not stay exact)


def indexer_layers(cfg: dict, layers: int) -> int:
    """The layers that run their own sparse-attention indexer (DSA): each attending layer,
    unless indexer_types marks it "shared" (GLM-5's reuse the last full layer's top-k)."""
    shared, kinds = (cfg.get(f) if isinstance(cfg.get(f), list) else []
                     for f in ("indexer_types", "layer_types"))
    return sum(not (i < len(shared) and shared[i] == "shared")
               and not (i < len(kinds) and kinds[i] in UNCACHED_KINDS) for i in range(layers))


def _tensors(cfg: dict, row: dict, shape: dict) -> tuple[int, int]:
    """A family's small tensors -> (stored only, matmul weights a token multiplies through)."""
    per = {"model": 1, "layer": shape["layers"], "dense_layer": shape["dense_layers"],
           "moe_layer": shape["layers"] - shape["dense_layers"],
           # a MoE layer that runs a shared MLP (ERNIE 4.5 and Aria build none for 0 shared)
           "shared_layer": (shape["layers"] - shape["dense_layers"]
                            if shape["shared_intermediate"] else 0),
           "attention_layer": shape["layers"] - shape["uncached_layers"],
           "uncached_layer": shape["uncached_layers"],
           "indexer_layer": indexer_layers(cfg, shape["layers"])}
    stored = matmul = 0
    for term in row["tensors"]:
        if not all(_holds(cfg, shape, c) for c in term["when"]):
            continue
        size = sum(math.prod(_factor(cfg, shape, f) for f in product)
                   for product in term["size"])
        if term.get("matmul"):
            matmul += per[term["per"]] * size
        else:
            stored += per[term["per"]] * size
        if max(stored, matmul) > MAX_TENSOR_PARAMS:
            fields = [f["field"] for product in term["size"] for f in product
                      if isinstance(f, dict)]
            raise ConfigError(fields[0] if fields else WHOLE_FILE,
                              f"makes the {term['what']} more than any real model's "
                              f"({MAX_TENSOR_PARAMS:,} weights)")
    return stored, matmul


def _ignored_fields(cfg: dict, row: dict, got: dict, notes: list[str]) -> None:
    for rule in row["notes"]:
        value = _lookup(cfg, rule["field"])
        expect = rule["expect"]
        expect = got[expect] if isinstance(expect, str) else expect
        if value is not _MISSING and value is not None and not _same(value, expect):
            notes.append(f"{rule['field']} is {_show(value)}: {rule['note']}")


# --- quantization_config: how a checkpoint stores its linear weights -----------------------

QUANT_METHODS = ("fp8", "fbgemm_fp8", "awq", "gptq", "mxfp4", "compressed-tensors",
                 "bitsandbytes")
NOT_QUANTIZED = {"quant_method": None, "quant_bits": 0, "quant_group": 0,
                 "quant_block_out": 0, "quant_block_in": 0, "quant_zero_point": False,
                 "quant_format": "", "quant_strategy": "", "quant_double": False,
                 "quant_dtype": ""}
# bitsandbytes 4-bit: a float32 absmax per 64 values (bnb's blocksize); double quantization
# stores it in 8 bits with a float32 absmax per 256 blocks and a 256-value code; every linear
# also keeps a 16-value code and its quant state as JSON text, whose one data-dependent field
# (nested_offset, a float32 mean written by Python) is taken as this many characters
BNB_BLOCK, BNB_NESTED_BLOCK, BNB_OFFSET_CHARS = 64, 256, 19
BNB_DTYPES = ("bfloat16", "float16", "float32")
# compressed-tensors: the formats counted (pack-quantized packs 4- or 8-bit ints in int32
# words; the others store one byte a weight) and the scale strategies
CT_FORMATS = ("pack-quantized", "int-quantized", "float-quantized", "naive-quantized")
CT_STRATEGIES = ("tensor", "channel", "group")


def _quantization(cfg: dict, notes: list[str]) -> dict:
    """quantization_config -> the quant_* fields; a method we do not count is said, not guessed.

    fp8: one byte a weight, and a float32 scale per weight_block_size block (DeepSeek-V3,
    Qwen3-FP8) or per tensor; fbgemm_fp8: a float32 scale per output channel; awq and gptq:
    `bits` packed into int32 words, an fp16 scale per group of group_size inputs (and packed
    zeros: AWQ's when zero_point, GPTQ's always; GPTQ's int32 g_idx per input). Embeddings,
    lm_head, norms, biases and MoE routers stay unquantized (the methods' defaults).
    """
    q = cfg.get("quantization_config")
    if q is None:
        return dict(NOT_QUANTIZED)
    if not isinstance(q, dict):
        raise ConfigError("quantization_config", f"must be an object, got {_json_type(q)}")
    method = q.get("quant_method")
    if method not in QUANT_METHODS:
        notes.append(f"quantization_config's quant_method {_show(method)} is not one counted "
                     f"here ({', '.join(QUANT_METHODS)}): every weight is billed at the "
                     "weight dtype chosen.")
        return dict(NOT_QUANTIZED)
    out = {**NOT_QUANTIZED, "quant_method": method, "quant_bits": 8}
    if method == "fp8":
        block = q.get("weight_block_size")
        if block is not None:
            if not (isinstance(block, list) and len(block) == 2
                    and all(_whole(b) and 1 <= b <= MAX_HIDDEN for b in block)):
                raise ConfigError("quantization_config.weight_block_size",
                                  f"must be two positive integers, got {_show(block)}")
            out["quant_block_out"], out["quant_block_in"] = block
        return _said(out, notes)
    if method == "fbgemm_fp8":
        return _said(out, notes)
    if method == "mxfp4":  # gpt-oss: the routed experts only, 4-bit, a scale per 32 inputs
        return _said({**out, "quant_bits": 4, "quant_group": MXFP4_BLOCK}, notes)
    if method == "compressed-tensors":
        return _compressed_tensors(q, out, notes)
    if method == "bitsandbytes":
        return _bitsandbytes(cfg, q, out, notes)
    bits = q.get("bits", q.get("w_bit"))
    if not (_whole(bits) and bits in (2, 3, 4, 8)):
        raise ConfigError("quantization_config.bits", f"must be 2, 3, 4 or 8, got {_show(bits)}")
    group = q.get("group_size", q.get("q_group_size", 128))
    if not (_whole(group) and (group == -1 or 1 <= group <= MAX_INTERMEDIATE)):
        raise ConfigError("quantization_config.group_size",
                          f"must be a positive integer or -1, got {_show(group)}")
    zero = q.get("zero_point", True)
    if method == "awq" and not isinstance(zero, bool):
        raise ConfigError("quantization_config.zero_point",
                          f"must be true or false, got {_show(zero)}")
    # -1: one group over each weight's whole input; GPTQ stores zeros whatever sym says
    out.update(quant_bits=bits, quant_group=max(group, 0),
               quant_zero_point=method == "gptq" or zero)
    return _said(out, notes)


def _compressed_tensors(q: dict, out: dict, notes: list[str]) -> dict:
    """One config group of weights in a format counted here -> the quant_* fields; anything
    else (several groups, sparsity, nvfp4, block scales) is said and billed at the dtype."""
    groups = q.get("config_groups")
    weights = ([g.get("weights") for g in groups.values() if isinstance(g, dict)
                and g.get("weights") is not None] if isinstance(groups, dict) else [])
    w = weights[0] if len(weights) == 1 and isinstance(weights[0], dict) else {}
    fmt, bits, strategy = q.get("format"), w.get("num_bits"), w.get("strategy")
    group = w.get("group_size")
    packed = fmt == "pack-quantized"
    if not (fmt in CT_FORMATS and strategy in CT_STRATEGIES and _whole(bits)
            and bits in ((4, 8) if packed else (8,))
            and (strategy != "group" or _whole(group) and 1 <= group <= MAX_INTERMEDIATE)):
        notes.append(f"quantization_config (compressed-tensors, format {_show(fmt)}) is not "
                     "one counted here (one config group of 4- or 8-bit weights, pack-, int- "
                     "or float-quantized, per tensor, channel or group): every weight is "
                     "billed at the weight dtype chosen.")
        return dict(NOT_QUANTIZED)
    out.update(quant_bits=bits, quant_format=fmt, quant_strategy=strategy,
               quant_group=group if strategy == "group" else 0,
               quant_zero_point=w.get("symmetric", True) is False)
    return _said(out, notes)


def _bitsandbytes(cfg: dict, q: dict, out: dict, notes: list[str]) -> dict:
    """load_in_4bit (nf4 or fp4, double quantization or not) or load_in_8bit -> the fields."""
    four, eight = q.get("load_in_4bit"), q.get("load_in_8bit")
    if (four is True) == (eight is True):
        raise ConfigError("quantization_config.load_in_4bit",
                          "and load_in_8bit: exactly one must be true for bitsandbytes")
    dtype = cfg.get("dtype", cfg.get("torch_dtype"))  # the weights' dtype when quantized
    out["quant_dtype"] = dtype if dtype in BNB_DTYPES else "bfloat16"
    if eight is True:  # int8 weights, a float32 scale per output row (SCB)
        return _said({**out, "quant_format": "int8"}, notes)
    fmt = q.get("bnb_4bit_quant_type", "fp4")
    if fmt not in ("nf4", "fp4"):
        raise ConfigError("quantization_config.bnb_4bit_quant_type",
                          f"must be nf4 or fp4, got {_show(fmt)}")
    double = q.get("bnb_4bit_use_double_quant", False)
    if not isinstance(double, bool):
        raise ConfigError("quantization_config.bnb_4bit_use_double_quant",
                          f"must be true or false, got {_show(double)}")
    return _said({**out, "quant_bits": 4, "quant_format": fmt, "quant_group": BNB_BLOCK,
                  "quant_double": double}, notes)


def _bnb_bytes(m: ModelShape, inputs: int, outputs: int) -> int:  # one linear, as bnb stores it
    if m.quant_bits == 8:  # weight int8 [out, in], SCB float32 [out], weight_format uint8 []
        return inputs * outputs + 4 * outputs + 1
    n = inputs * outputs
    blocks = _ceil_div(n, BNB_BLOCK)
    # the quant state's JSON text, as json.dumps writes it
    state = (len('{"quant_type": "", "blocksize": 64, "dtype": "", "shape": [, ]}')
             + len(m.quant_format) + len(m.quant_dtype) + len(str(outputs)) + len(str(inputs)))
    if m.quant_double:  # absmax in 8 bits, nested_absmax, nested_quant_map
        absmax = blocks + 4 * _ceil_div(blocks, BNB_NESTED_BLOCK) + 4 * 256
        state += len(', "nested_blocksize": 256, "nested_dtype": "float32", '
                     '"nested_offset": ') + BNB_OFFSET_CHARS
    else:
        absmax = 4 * blocks
    return _ceil_div(n, 2) + absmax + 4 * 16 + state  # values two a byte, quant_map


def _said(q: dict, notes: list[str]) -> dict:  # the quant_* fields -> the same, the rule noted
    method = q["quant_method"]
    if method == "fp8":
        scale = (f"a float32 scale per {q['quant_block_out']} x {q['quant_block_in']} block"
                 if q["quant_block_out"] else "a float32 scale per tensor")
        how = f"1 byte a weight and {scale}"
    elif method == "fbgemm_fp8":
        how = "1 byte a weight and a float32 scale per output channel"
    elif method == "compressed-tensors":
        per = {"tensor": "tensor", "channel": "output channel",
               "group": f"{q['quant_group']:,} inputs"}[q["quant_strategy"]]
        values = (f"{q['quant_bits']}-bit values packed in int32 words (and each weight's "
                  "shape)" if q["quant_format"] == "pack-quantized" else "1 byte a weight")
        how = (f"{q['quant_format']}: {values}, a 16-bit scale"
               f"{' and a zero point' if q['quant_zero_point'] else ''} per {per}")
    elif method == "bitsandbytes":
        if q["quant_bits"] == 8:
            how = "int8, 1 byte a weight and a float32 scale per output row"
        else:
            scales = ("an 8-bit scale per 64 weights and a float32 one per 256 of those "
                      "(double quantization)" if q["quant_double"] else
                      "a float32 scale per 64 weights")
            how = (f"{q['quant_format']}, 4 bits a weight, {scales}, and a few hundred bytes "
                   "of metadata per matrix (exact to a few bytes)")
        notes.append(f"Linear weights as bitsandbytes stores them: {how}. Embeddings, lm_head, "
                     "norms, biases and routers at the weight dtype chosen.")
        return q
    elif method == "mxfp4":
        notes.append("Routed experts' weights counted as quantization_config (mxfp4) stores "
                     "them: 4-bit values, two a byte, and an 8-bit scale per 32 inputs. "
                     "Attention, routers, embeddings, lm_head, norms and biases at the weight "
                     "dtype chosen.")
        return q
    else:
        group = f"{q['quant_group']:,} inputs" if q["quant_group"] else "each weight's input"
        zeros = " and a packed zero" if q["quant_zero_point"] else ""
        g_idx = "; an int32 group index per input" if method == "gptq" else ""
        how = (f"{q['quant_bits']}-bit values packed in int32 words, an fp16 scale{zeros} "
               f"per {group}{g_idx}")
    notes.append(f"Linear weights counted as quantization_config ({method}) stores them: {how}. "
                 "Embeddings, lm_head, norms, biases and routers at the weight dtype chosen.")
    return q


def _whole(value) -> bool:  # a JSON integer (not a boolean, not 4.0)
    return isinstance(value, int) and not isinstance(value, bool)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def stack_linears(m: ModelShape) -> list[tuple[int, int, int]]:
    """-> [(count, inputs, outputs)] of every linear weight in the layers, routers left out.

    Their parameters add up to the stack's share of total_params (a test holds them to it):
    the weights a quantization method packs.
    """
    h, L = m.hidden, m.layers
    if m.mla:
        nope = m.head_dim - m.qk_rope_head_dim
        q = ([(L, h, m.heads * m.head_dim)] if m.q_lora_rank is None else
             [(L, h, m.q_lora_rank), (L, m.q_lora_rank, m.heads * m.head_dim)])
        attention = q + [(L, h, m.kv_lora_rank + m.qk_rope_head_dim),
                         (L, m.kv_lora_rank, m.heads * (nope + m.v_head_dim))]
    else:
        attention = [(L, h, m.heads * m.head_dim), (L, h, m.kv_heads * m.head_dim),
                     (L, h, m.kv_heads * m.v_head_dim)]
    attention.append((L, m.heads * m.v_head_dim, h))
    dense = [(m.dense_layers, h, m.intermediate)] * (m.mlp_matrices - 1) + [
        (m.dense_layers, m.intermediate, h)]
    moe = []
    if m.moe_layers:
        experts = m.moe_layers * m.num_experts
        moe = [(experts, h, m.moe_intermediate)] * 2 + [(experts, m.moe_intermediate, h)]
        if m.shared_intermediate:
            moe += [(m.moe_layers, h, m.shared_intermediate)] * 2 + [
                (m.moe_layers, m.shared_intermediate, h)]
    return [t for t in attention + dense + moe if t[0] and t[1] and t[2]]


MXFP4_BLOCK = 32  # inputs per 8-bit scale; the values 4 bits each, 16 bytes a block


def packed_linears(m: ModelShape) -> list[tuple[int, int, int]]:  # -> the ones a method packs
    if m.quant_method == "bitsandbytes":  # nn.Linear layers only: not the fused routed experts
        return stack_linears(replace(m, num_experts=0))
    if m.quant_method != "mxfp4":
        return stack_linears(m)
    experts = m.moe_layers * m.num_experts  # mxfp4 packs the routed experts alone
    out = [(experts, m.hidden, m.moe_intermediate)] * 2 + [(experts, m.moe_intermediate,
                                                             m.hidden)]
    return [t for t in out if t[0] and t[1] and t[2]]


def _compressed_tensors_bytes(m: ModelShape, inputs: int, outputs: int) -> int:
    # a 16-bit scale each (the weights' dtype); "group" always has quant_group >= 1
    scales = {"tensor": 1, "channel": outputs,
              "group": outputs * _ceil_div(inputs, m.quant_group or 1)}[m.quant_strategy]
    if m.quant_format != "pack-quantized":  # int8 or fp8 weights; a zero point per scale
        return inputs * outputs + 2 * scales + (scales if m.quant_zero_point else 0)
    per_word = 32 // m.quant_bits
    stored = 4 * outputs * _ceil_div(inputs, per_word) + 2 * scales + 16  # + int64 [2] shape
    if m.quant_zero_point:  # packed along the outputs for channel and group, else one int8
        stored += (4 * _ceil_div(outputs, per_word) * (scales // outputs)
                   if m.quant_strategy != "tensor" else 1)
    return stored


def _packed_bytes(m: ModelShape, inputs: int, outputs: int) -> int:  # one linear, as stored
    if m.quant_method == "compressed-tensors":
        return _compressed_tensors_bytes(m, inputs, outputs)
    if m.quant_method == "bitsandbytes":
        return _bnb_bytes(m, inputs, outputs)
    if m.quant_method == "mxfp4":  # [out, in/32, 16] uint8 blocks and [out, in/32] scales
        return outputs * _ceil_div(inputs, MXFP4_BLOCK) * (MXFP4_BLOCK // 2 + 1)
    if m.quant_method == "fp8":
        if m.quant_block_out:
            blocks = (_ceil_div(outputs, m.quant_block_out)
                      * _ceil_div(inputs, m.quant_block_in))
            return inputs * outputs + 4 * blocks
        return inputs * outputs + 4  # one float32 scale for the tensor
    if m.quant_method == "fbgemm_fp8":
        return inputs * outputs + 4 * outputs  # a float32 scale per output channel
    bits = m.quant_bits
    groups = _ceil_div(inputs, m.quant_group) if m.quant_group else 1
    if m.quant_method == "awq":  # qweight [in, out*bits/32], qzeros [groups, out*bits/32]
        words = _ceil_div(outputs * bits, 32)
        packed = 4 * inputs * words + 2 * groups * outputs
        return packed + (4 * groups * words if m.quant_zero_point else 0)
    # gptq: qweight [in*bits/32, out], qzeros [groups, out*bits/32], scales, g_idx [in]
    return (4 * _ceil_div(inputs * bits, 32) * outputs + 4 * groups * _ceil_div(outputs * bits, 32)
            + 2 * groups * outputs + 4 * inputs)


def quantized_params(m: ModelShape) -> int:  # -> parameters a quantization method packs
    if not m.quant_method:
        return 0
    return sum(c * i * o for c, i, o in packed_linears(m))


# --- the model shape ---------------------------------------------------------------------

@dataclass(frozen=True)
class ModelShape:
    """The few numbers of a config.json that the cost model needs."""

    name: str
    layers: int
    hidden: int
    intermediate: int  # dense MLP width
    heads: int  # query heads
    kv_heads: int
    head_dim: int  # width of q and k per head (MLA: nope + rope)
    v_head_dim: int
    vocab: int
    tied: bool = False  # lm_head shares the embedding's weights
    # the token table's width where it is not hidden (OPT-350m: 512, with a projection in
    # and one out); None: hidden
    embedding_width: int | None = None
    max_positions: int | None = None
    mlp_matrices: int = 3  # 2: up/down (GPT-2); 3: gate/up/down
    num_experts: int = 0  # 0 = dense
    experts_per_token: int = 0
    moe_intermediate: int = 0
    shared_experts: int = 0
    shared_intermediate: int = 0  # total width of the shared experts
    dense_layers: int | None = None  # layers with a dense MLP; None: all, or none if MoE
    sliding_window: int | None = None
    sliding_layers: int = 0  # layers that use the window; the rest attend to everything
    uncached_layers: int = 0  # layers with no KV cache: linear attention, Mamba, convolution
    state_layers: int = 0  # layers keeping a fixed-size state (config_families.STATES)
    state_per_layer: int = 0  # values of that state in one layer, for one user
    mla: bool = False
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    learned_positions: bool = False  # a max_positions x hidden table, stored but never a matmul
    small_params: int = 0  # norms, biases, small tables: stored, never a matmul
    extra_matmul_params: int = 0  # projections beside q, k, v, o, the MLP and lm_head
    quant_method: str | None = None  # quantization_config's: "fp8", "awq", ... None: none
    quant_bits: int = 0
    quant_group: int = 0  # inputs per scale (AWQ, GPTQ); 0: one group per weight's input
    quant_block_out: int = 0  # FP8 block scales: outputs x inputs per block; 0: per tensor
    quant_block_in: int = 0
    quant_zero_point: bool = False
    quant_format: str = ""  # compressed-tensors: its format ("pack-quantized", ...);
    # bitsandbytes: nf4, fp4 or int8
    quant_strategy: str = ""  # compressed-tensors: a scale per "tensor", "channel" or "group"
    quant_double: bool = False  # bitsandbytes 4-bit: its absmax quantized again
    quant_dtype: str = ""  # bitsandbytes: the weights' dtype named in each quant state
    notes: tuple[str, ...] = ()  # approximations made, in words for the UI

    def __post_init__(self):
        if self.dense_layers is None:
            object.__setattr__(self, "dense_layers", 0 if self.num_experts else self.layers)
        if self.sliding_window is None:
            object.__setattr__(self, "sliding_layers", 0)
        if self.embedding_width is None:
            object.__setattr__(self, "embedding_width", self.hidden)

    @property
    def moe_layers(self) -> int:  # layers whose MLP is a mixture of experts
        return self.layers - self.dense_layers

    @property
    def attention_layers(self) -> int:  # layers that attend over a cache of keys and values
        return self.layers - self.uncached_layers

    @classmethod
    def from_config(cls, cfg: dict, name: str | None = None) -> ModelShape:
        """A Hugging Face config.json dict -> ModelShape, or ConfigError naming the field."""
        if not isinstance(cfg, dict):
            raise ConfigError(WHOLE_FILE, f"must be a JSON object, got {_json_type(cfg)}")
        notes: list[str] = []
        cfg = _language_model(cfg, notes)
        model_type = _model_type(cfg)
        row = _family(cfg, model_type, notes)
        cfg = _class_defaults(cfg, model_type, row, notes)
        mla = _present(cfg, "kv_lora_rank")
        got, _ = _figures(cfg, row, skip=("head_dim",) if mla else ())
        layers, hidden, heads = got["layers"], got["hidden"], got["heads"]
        if mla:
            attention = _mla_heads(cfg, heads, got["kv_heads"], notes)
        else:
            attention = _standard_heads(got)
        tied = _tied(cfg, row, notes)
        experts = _moe(cfg, layers, hidden, got["intermediate"], notes, row)
        said: list[str] = []  # the hybrid's notes, said after the window's
        hybrid = _hybrid(cfg, model_type, layers, said)
        window = _window(cfg, layers, row, notes, layers - hybrid["uncached_layers"])
        notes.extend(said)
        fields = dict(
            name=_display_name(cfg, name, model_type),
            layers=layers, hidden=hidden, intermediate=got["intermediate"], heads=heads,
            vocab=got["vocab"], tied=tied, max_positions=got["max_positions"],
            embedding_width=got["embedding_width"],
            mlp_matrices=row["mlp_matrices"] or 3,  # unknown: a gated MLP, said in its line
            learned_positions=row["learned_positions"],
            **attention, **experts, **window, **hybrid,
        )
        fields.update(_quantization(cfg, notes))
        if fields["quant_method"] == "bitsandbytes" and fields["num_experts"]:
            notes.append("Routed experts stay at the weight dtype chosen: Transformers keeps "
                         "them fused in 3-D tensors, which bitsandbytes does not quantize.")
        fields.setdefault("q_lora_rank", None)
        fields.setdefault("kv_lora_rank", 0)
        fields["small_params"], fields["extra_matmul_params"] = _tensors(cfg, row, fields)
        _ignored_fields(cfg, row, got, notes)
        return cls(**fields, notes=tuple(notes))


# --- the documents' models ---------------------------------------------------------------

PRESETS: dict[str, dict] = {
    # Qwen/Qwen3-8B config.json
    "qwen3-8b": {
        "architectures": ["Qwen3ForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
        "initializer_range": 0.02, "intermediate_size": 12288,
        "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
        "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000,
        "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0", "use_cache": True, "use_sliding_window": False,
        "vocab_size": 151936,
    },
    # openai-community/gpt2 config.json (n_inner null spelled out: GPT2Config's default)
    "gpt2": {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
        "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
        "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_inner": None, "n_layer": 12,
        "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
        "summary_type": "cls_index", "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": 50257,
    },
    # meta-llama/Meta-Llama-3-8B config.json (no head_dim field: 4096 / 32 = 128)
    "llama-3-8b": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001,
        "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
        "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
        "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
        "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.40.0.dev0", "use_cache": True, "vocab_size": 128256,
    },
}
PRESET_NAMES = {"qwen3-8b": "Qwen3-8B", "gpt2": "GPT-2 small", "llama-3-8b": "Llama-3-8B"}


def preset(key: str) -> ModelShape:  # "qwen3-8b" -> ModelShape
    if not isinstance(key, str) or key not in PRESETS:
        raise ConfigError("model", f"unknown preset {_show(key)}; choose one of "
                          + ", ".join(sorted(PRESETS)))
    return ModelShape.from_config(PRESETS[key], name=PRESET_NAMES[key])


# --- parameters (exact ints) -------------------------------------------------------------

def attention_params(m: ModelShape) -> int:  # -> weights in one layer's q, k, v, o
    if m.mla:
        return _mla_params(m)
    q = m.hidden * m.heads * m.head_dim
    k = m.hidden * m.kv_heads * m.head_dim
    v = m.hidden * m.kv_heads * m.v_head_dim
    o = m.heads * m.v_head_dim * m.hidden
    return q + k + v + o


def _mla_params(m: ModelShape) -> int:  # -> weights in one MLA layer (low-rank q and kv)
    if m.q_lora_rank is None:
        q = m.hidden * m.heads * m.head_dim
    else:
        q = m.hidden * m.q_lora_rank + m.q_lora_rank * m.heads * m.head_dim
    kv_a = m.hidden * (m.kv_lora_rank + m.qk_rope_head_dim)  # down to the cached latent
    nope = m.head_dim - m.qk_rope_head_dim
    kv_b = m.kv_lora_rank * m.heads * (nope + m.v_head_dim)  # latent back up to k and v
    o = m.heads * m.v_head_dim * m.hidden
    return q + kv_a + kv_b + o


def dense_mlp_params(m: ModelShape) -> int:  # -> weights in one dense MLP
    return m.mlp_matrices * m.hidden * m.intermediate


def _router_and_shared(m: ModelShape) -> int:  # -> weights every token of a MoE layer uses
    router = m.hidden * m.num_experts
    shared = EXPERT_MATRICES * m.hidden * m.shared_intermediate
    return router + shared


def moe_active_params(m: ModelShape) -> int:  # -> weights one token uses in one MoE layer
    routed = m.experts_per_token * EXPERT_MATRICES * m.hidden * m.moe_intermediate
    return _router_and_shared(m) + routed


def moe_stored_params(m: ModelShape) -> int:  # -> weights stored for one MoE layer
    routed = m.num_experts * EXPERT_MATRICES * m.hidden * m.moe_intermediate
    return _router_and_shared(m) + routed


def lm_head_params(m: ModelShape) -> int:  # -> vocab x the embedding's width (its size too)
    return m.vocab * m.embedding_width


def embedding_projection_params(m: ModelShape) -> int:  # a narrower token table is projected
    # into the layers' width and back out before lm_head (OPT's project_in and project_out)
    return 0 if m.embedding_width == m.hidden else 2 * m.hidden * m.embedding_width


def matmul_params(m: ModelShape) -> int:  # -> weights that do a multiply-add per token
    per_stack = (m.layers * attention_params(m) + m.dense_layers * dense_mlp_params(m)
                 + m.moe_layers * moe_active_params(m))
    return (per_stack + m.extra_matmul_params + embedding_projection_params(m)
            + lm_head_params(m))  # lm_head works when tied


def total_params(m: ModelShape) -> int:  # -> every weight stored (the memory bill)
    stack = (m.layers * attention_params(m) + m.dense_layers * dense_mlp_params(m)
             + m.moe_layers * moe_stored_params(m))
    embedding = lm_head_params(m)  # the token table: lm_head's shape
    if m.learned_positions and m.max_positions:
        embedding += m.max_positions * m.hidden
    lm_head = 0 if m.tied else lm_head_params(m)
    return (stack + m.extra_matmul_params + embedding_projection_params(m) + embedding
            + lm_head + m.small_params)


# --- vectorised helpers ------------------------------------------------------------------

KERNELS = ("naive", "triangular")


def _lengths(n) -> np.ndarray:  # int | array of tokens -> float64 array (no int64 overflow)
    return np.asarray(n, dtype=np.float64)


def _out(x):  # 0-d array -> float; arrays pass through
    return float(x) if np.ndim(x) == 0 else x


def _layer_mean(m: ModelShape, full, sliding):  # per-layer counts -> mean over the stack
    s, a = m.sliding_layers, m.attention_layers  # only called with s > 0, so a > 0
    return ((a - s) * full + s * sliding) / a


def _share(part, rest):  # FLOPs, FLOPs -> part / (part + rest), 0 where both are 0
    total = part + rest
    return _out(np.divide(part, total, out=np.zeros_like(total), where=total > 0))


# --- prefill -----------------------------------------------------------------------------

def pair_flops(m: ModelShape) -> int:  # -> FLOPs for one (query, key) pair, all layers
    # score q.k (2 per dim) plus adding weight x value (2 per dim), for every query head
    return 2 * m.attention_layers * m.heads * (m.head_dim + m.v_head_dim)


def prefill_pairs(m: ModelShape, n, kernel: str = "triangular"):
    """n prompt tokens -> (query, key) pairs paid per layer, averaged over the layers.

    So attention_flops_prefill = pair_flops x prefill_pairs, window or not.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be 'naive' or 'triangular', got {kernel!r}")
    n = _lengths(n)
    if kernel == "naive":  # computes the whole square, masked or not (windows too)
        return _out(n * n)
    full = n * n / 2  # the documents' n^2/2, not n(n+1)/2
    if not m.sliding_layers:
        return _out(full)
    w = m.sliding_window
    head = np.minimum(n, w)
    band = head * head / 2 + np.maximum(n - w, 0) * w  # a triangle, then w keys per query
    return _out(_layer_mean(m, full, band))


def attention_flops_prefill(m: ModelShape, n, kernel: str = "triangular"):  # n -> FLOPs
    return _out(pair_flops(m) * _lengths(prefill_pairs(m, n, kernel)))


def other_flops_prefill(m: ModelShape, n):  # n -> FLOPs in every matmul (linear in n)
    return _out(2.0 * matmul_params(m) * _lengths(n))


def prefill_attention_share(m: ModelShape, n, kernel: str = "triangular"):  # n -> [0, 1]
    return _share(_lengths(attention_flops_prefill(m, n, kernel)),
                  _lengths(other_flops_prefill(m, n)))


# --- decode ------------------------------------------------------------------------------

def decode_pairs(m: ModelShape, n):  # n tokens of context -> keys one query sees, layer mean
    n = _lengths(n)
    if not m.sliding_layers:
        return _out(n)
    return _out(_layer_mean(m, n, np.minimum(n, m.sliding_window)))


def attention_flops_decode(m: ModelShape, n):  # context n -> FLOPs for one new token
    return _out(pair_flops(m) * _lengths(decode_pairs(m, n)))


def other_flops_decode(m: ModelShape) -> int:  # -> FLOPs in every matmul for one token
    return 2 * matmul_params(m)


def decode_attention_share(m: ModelShape, n):  # context n -> [0, 1]
    return _share(_lengths(attention_flops_decode(m, n)), float(other_flops_decode(m)))


def decode_dot_products(m: ModelShape, n):  # context n -> q.k products for one new token
    return _out(m.attention_layers * m.heads * _lengths(decode_pairs(m, n)))


def decode_score_flops(m: ModelShape, n):  # context n -> FLOPs for the scores q.k
    return _out(2.0 * m.head_dim * _lengths(decode_dot_products(m, n)))


def decode_value_flops(m: ModelShape, n):  # context n -> FLOPs for the weighted sum of values
    return _out(2.0 * m.v_head_dim * _lengths(decode_dot_products(m, n)))


# --- the crossover -----------------------------------------------------------------------

def crossover_tokens(m: ModelShape, kernel: str = "triangular") -> float:
    """Prompt length where prefill attention FLOPs equal everything else's (inf: never).

    Attention grows as pair_flops x pairs, the rest as 2 x matmul_params x n. Without a
    window that is n = matmul_params / (2 x layers x heads x head_dim), doubled for a
    triangular kernel. With one, sliding layers grow only linearly past the window, so
    solve the piecewise quadratic; if every layer slides, attention may never catch up.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be 'naive' or 'triangular', got {kernel!r}")
    pf, rest = float(pair_flops(m)), 2.0 * matmul_params(m)
    if not pf:  # no layer attends
        return math.inf
    unwindowed = rest / pf if kernel == "naive" else 2 * rest / pf
    w = m.sliding_window
    if kernel == "naive" or not m.sliding_layers or unwindowed <= w:
        return unwindowed
    # past w: pf/L x [(L-s) n^2/2 + s(n w - w^2/2)] = rest x n, i.e. a n^2 + b n + c = 0
    s, L = m.sliding_layers, m.attention_layers
    a = (L - s) / 2
    b = s * w - rest * L / pf
    c = -s * w * w / 2
    if a == 0:  # every layer slides: attention per token tops out at pf x w
        return s * w * w / (2 * b) if b > 0 else math.inf
    root = math.sqrt(b * b - 4 * a * c)  # c < 0 < a: one positive root
    return (-b + root) / (2 * a) if b <= 0 else -2 * c / (b + root)  # no cancellation


# --- dtypes ------------------------------------------------------------------------------

# Bytes per stored value for the dtypes a cache or the weights are served in.
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp32": 4}
DEFAULT_DTYPE = "bf16"  # what every number in the documents assumes


def dtype_bytes(name: str) -> int:  # "int8" -> 1, or ValueError naming the choices
    if not isinstance(name, str) or name not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}, got {name!r}")
    return DTYPE_BYTES[name]


# --- memory ------------------------------------------------------------------------------

def kv_bytes_per_token_per_layer(m: ModelShape, bytes_per_value: float = 2):  # -> bytes
    if m.mla:  # one shared latent plus the rotary key part, not per-head k and v
        return (m.kv_lora_rank + m.qk_rope_head_dim) * bytes_per_value
    return m.kv_heads * (m.head_dim + m.v_head_dim) * bytes_per_value  # 2 x kv x d x bytes


def kv_bytes_per_token(m: ModelShape, bytes_per_value: float = 2):  # -> bytes, all layers
    return m.attention_layers * kv_bytes_per_token_per_layer(m, bytes_per_value)


def kv_cache_bytes(m: ModelShape, context, users=1, bytes_per_value: float = 2):
    """context tokens per user, users -> bytes of keys and values held.

    Sliding-window layers keep only the last `window` tokens.
    """
    tokens_per_layer = _lengths(decode_pairs(m, context))  # cached = what a query can see
    return _out(_lengths(users) * kv_bytes_per_token(m, bytes_per_value) * tokens_per_layer)


def decode_arithmetic_intensity(m: ModelShape, context, bytes_per_value: float = 2):
    """context -> decode attention FLOPs per byte of K/V read, for one new token.

    Both grow with the keys read, so the ratio is the same at every context (and every
    batch: each user reads their own cache).
    """
    if not m.attention_layers:  # no layer attends: no attention and no cache to read
        return _out(np.full(np.shape(context), 0.0))
    ratio = pair_flops(m) / kv_bytes_per_token(m, bytes_per_value)
    return _out(np.full(np.shape(context), ratio))


def decode_step_arithmetic_intensity(m: ModelShape, context, users=1, *,
                                     kv_bytes_per_value: float = 2,
                                     weight_bytes_per_value: float = 2):
    """context per user -> FLOPs per byte read for one decode step of a batch of users.

    The whole step: every matmul and attention, for each user, over every weight read once
    for the batch plus each user's own cache and fixed state (in the cache's dtype). Small
    batches sit near `users` FLOP/B in bf16 (2 FLOPs per weight per user, 2 bytes per
    weight); int8 weights double it.
    """
    flops = _lengths(decode_step_flops(m, context, users))
    cache = (_lengths(kv_cache_bytes(m, context, users, kv_bytes_per_value))
             + _lengths(state_bytes(m, users, kv_bytes_per_value)))
    return _out(flops / (float(weight_bytes(m, weight_bytes_per_value)) + cache))


def weight_bytes(m: ModelShape, bytes_per_value: float = 2):  # -> bytes of stored weights
    """Every parameter at bytes_per_value, except the linear weights a quantization_config packs,
    which count as its method stores them (stack_linears, _packed_bytes)."""
    if not m.quant_method:
        return total_params(m) * bytes_per_value
    packed = sum(c * _packed_bytes(m, i, o) for c, i, o in packed_linears(m))
    return packed + (total_params(m) - quantized_params(m)) * bytes_per_value


def kv_outweighs_weights_context(m: ModelShape, users=1, bytes_per_value: float = 2, *,
                                 weight_bytes_per_value: float | None = None):
    """users -> context per user where their caches equal the weights (inf: never).

    bytes_per_value is the cache's dtype; the weights' is weight_bytes_per_value, the same
    unless given (an int8 cache beside bf16 weights takes twice the context to catch up).
    """
    users = _lengths(users)
    if weight_bytes_per_value is None:
        weight_bytes_per_value = bytes_per_value
    weights = float(weight_bytes(m, weight_bytes_per_value))
    per_layer = float(kv_bytes_per_token_per_layer(m, bytes_per_value)) * users
    with np.errstate(divide="ignore"):  # zero users: never
        linear = weights / (m.attention_layers * per_layer)  # every layer still growing
    if not m.sliding_layers:
        return _out(linear)
    w = m.sliding_window
    full = m.attention_layers - m.sliding_layers
    at_window = m.attention_layers * per_layer * w  # once the sliding layers stop growing
    if full:  # past the window only the full layers keep growing
        with np.errstate(divide="ignore", invalid="ignore"):
            beyond = w + (weights - at_window) / (full * per_layer)
    else:  # every layer slides: the cache stops growing at the window
        beyond = np.full(np.shape(linear), np.inf)
    return _out(np.where(linear <= w, linear, beyond))


# --- time: the bound on one decode step --------------------------------------------------------

def weight_bytes_read(m: ModelShape, bytes_per_value: float = 2):
    """-> bytes of weights one decode step streams from memory: every matmul weight a token
    uses (lm_head included; a MoE layer's routed experts, k of them) and the norms and biases.
    The embedding table is not streamed: a step reads its one row."""
    return (matmul_params(m) + m.small_params) * bytes_per_value


def decode_step_bytes(m: ModelShape, context, users=1, bytes_per_value: float = 2):
    """context per user -> bytes one decode step must read: the weights once for the whole
    batch, and each user's own cache and fixed state (a hybrid's, or Mamba's)."""
    return _out(float(weight_bytes_read(m, bytes_per_value))
                + _lengths(kv_cache_bytes(m, context, users, bytes_per_value))
                + _lengths(state_bytes(m, users, bytes_per_value)))


def decode_step_flops(m: ModelShape, context, users=1):  # context per user -> FLOPs of a step
    return _out(_lengths(users) * (other_flops_decode(m)
                                   + _lengths(attention_flops_decode(m, context))))


def decode_step_seconds(m: ModelShape, gpu: GPU, context, users=1,
                        bytes_per_value: float = 2):
    """context per user -> the least time one decode step can take on `gpu`:
    max(bytes ÷ bandwidth, FLOPs ÷ peak). Real kernels take longer; none can take less."""
    memory = _lengths(decode_step_bytes(m, context, users, bytes_per_value)) / gpu.bandwidth
    compute = _lengths(decode_step_flops(m, context, users)) / gpu.peak_flops
    return _out(np.maximum(memory, compute))


def decode_tokens_per_second(m: ModelShape, gpu: GPU, context, users=1,
                             bytes_per_value: float = 2):  # -> the most tokens a second
    seconds = _lengths(decode_step_seconds(m, gpu, context, users, bytes_per_value))
    return _out(_lengths(users) / seconds)


def compute_bound_batch(m: ModelShape, gpu: GPU, context, bytes_per_value: float = 2):
    """context per user -> the batch at which a decode step's FLOPs take as long as its bytes
    (inf: never). Below it memory sets the pace. With no context it is the ridge point times
    (weight bytes ÷ weight FLOPs per token), about the ridge in bf16; each user's cache adds
    bytes faster than FLOPs, so the batch grows with the context, and past some context no
    batch turns the step compute-bound."""
    weights = float(weight_bytes_read(m, bytes_per_value)) / gpu.bandwidth
    per_user = (_lengths(decode_step_flops(m, context)) / gpu.peak_flops
                - _lengths(kv_cache_bytes(m, context, 1, bytes_per_value)) / gpu.bandwidth)
    with np.errstate(divide="ignore"):
        return _out(np.where(per_user > 0, weights / np.where(per_user > 0, per_user, 1),
                             np.inf))


def cache_convention(m: ModelShape) -> str:  # -> how kv_cache_bytes counts, in words
    if m.mla:
        latent = m.kv_lora_rank + m.qk_rope_head_dim
        held = [(f"a {latent:,}-value latent per layer (multi-head latent attention, MLA), "
                 "not each head's keys and values")]
    elif not m.attention_layers:  # Mamba: every layer keeps a state instead
        state = ("each layer keeps a fixed state instead, its own figure" if m.state_layers
                 else "any fixed state the layers keep is not counted")
        return f"No layer attends, so there is no KV cache; {state}."
    else:
        heads = f"{m.kv_heads:,} KV head{'' if m.kv_heads == 1 else 's'}"
        held = [f"keys and values of {heads} per layer"]
    if m.sliding_layers:
        held.append(f"{m.sliding_layers:,} of {m.layers:,} layers keep only their last "
                    f"{m.sliding_window:,} tokens")
    if m.uncached_layers:
        state = ("they keep a fixed state, its own figure" if m.state_layers else
                 "any fixed state they keep is not counted")
        held.append(f"{m.uncached_layers:,} of {m.layers:,} layers hold no KV cache ({state})")
    return "As a serving engine holds it: " + "; ".join(held) + "."


def state_bytes(m: ModelShape, users=1, bytes_per_value: float = 2):
    """users -> bytes of the hybrid layers' fixed-size state: the same at any context."""
    return _out(_lengths(users) * (m.state_layers * m.state_per_layer * bytes_per_value))


def weight_convention(m: ModelShape, dtype: str) -> str:  # -> how weight_bytes counts, in words
    tied = "; lm_head tied to the embedding, counted once" if m.tied else ""
    if m.quant_method:
        which = ("routed experts' weights" if m.quant_method == "mxfp4" else
                 "linear weights but the routed experts" if m.quant_method == "bitsandbytes"
                 and m.num_experts else "linear weights")
        return (f"As the checkpoint stores them: {which} packed by {m.quant_method} "
                f"({m.quant_bits}-bit), everything else {dtype}{tied}.")
    return f"Every parameter in {dtype}{tied}."


def eager_score_matrix_bytes(m: ModelShape, n, batch=1, bytes_per_value: float = 2):
    """n prompt tokens -> bytes of one layer's n x n score matrix, all heads, when written out."""
    n = _lengths(n)
    return _out(_lengths(batch) * m.heads * n * n * bytes_per_value)


# --- GPUs --------------------------------------------------------------------------------

@dataclass(frozen=True)
class GPU:
    name: str
    peak_flops: float  # dense BF16 tensor-core FLOP/s
    bandwidth: float  # memory bytes/s

    @property
    def ridge_point(self) -> float:  # FLOP per byte below which a kernel waits on memory
        return self.peak_flops / self.bandwidth


GPUS: dict[str, GPU] = {
    # NVIDIA A100 Tensor Core GPU datasheet: BF16 312 TFLOPS dense; 80GB SXM 2,039 GB/s
    "a100-80gb": GPU("A100 80GB SXM", 312e12, 2.039e12),
    # NVIDIA H100 Tensor Core GPU datasheet, SXM: BF16 1,979 TFLOPS sparse = 989 dense; 3.35 TB/s
    "h100-sxm": GPU("H100 SXM", 989e12, 3.35e12),
    # NVIDIA H200 Tensor Core GPU datasheet: BF16 989 TFLOPS dense; 4.8 TB/s
    "h200": GPU("H200", 989e12, 4.8e12),
    # NVIDIA HGX B200 datasheet: BF16 2.25 PFLOPS dense per GPU; 8 TB/s
    "b200": GPU("B200", 2250e12, 8.0e12),
    # NVIDIA Ada Lovelace architecture whitepaper: RTX 4090 BF16 165 TFLOPS with FP32
    # accumulate (330 with FP16 accumulate); 1,008 GB/s GDDR6X
    "rtx-4090": GPU("RTX 4090", 165e12, 1.008e12),
}
