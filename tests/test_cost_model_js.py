"""static/cost_model.js, the browser's twin of attention_core/costs.py, gives the same answers.

Every case runs in both languages: the JavaScript in one node process (the cases go in as one
JSON array on stdin, tests/js/cost_model_cases.js), the Python here. Expected values are the
Python core's; the JavaScript is the independent implementation under test. Compared: the
shape read (every figure, the name, the notes), every public closed form at several lengths,
users and dtypes, and for a config either language refuses, the error's type, field and
words. Integers (Python int, JavaScript BigInt) must agree exactly, floats to 1e-12 relative.
A disagreement fails the test and prints the config.
"""

import base64
import copy
import dataclasses
import json
import math
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from app.hosting import cost_model_data
from attention_core import config_families, costs
from tests import js_twin
from tests.test_costs import BASES
from tests.test_hostile_input import HOSTILE_CONFIGS

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "static" / "cost_model.js"
# the model's three parts, in the order a page (and the harness) loads them
PARTS = [ROOT / "static" / name
         for name in ("cost_model_text.js", "cost_model_families.js", "cost_model.js")]
HARNESS = ROOT / "tests" / "js" / "cost_model_cases.js"
SEED = 20261203
RTOL = 1e-12


def node() -> str:
    return js_twin.node(JS.name)


def run_js(cases: list, scripts: list = PARTS) -> list:  # every case through the JavaScript
    job = json.dumps({"table": cost_model_data.table(), "cases": cases})
    out = subprocess.run([node(), str(HARNESS), *map(str, scripts)], input=job,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout)
    assert len(results) == len(cases)
    return results


# --- the Python side of the protocol (tests/js/cost_model_cases.js is the other) ---------

def shape_dict(m: costs.ModelShape) -> dict:
    d = dataclasses.asdict(m)
    d["notes"] = list(m.notes)
    d["moe_layers"] = m.moe_layers
    d["attention_layers"] = m.attention_layers
    return d


def encode(v):  # a Python result -> what the harness writes for the JavaScript's
    if isinstance(v, costs.ModelShape):
        return shape_dict(v)
    if isinstance(v, costs.GPU):
        return {"name": v.name, "peak_flops": encode(v.peak_flops),
                "bandwidth": encode(v.bandwidth), "ridge_point": encode(v.ridge_point)}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return {"i": str(v)}
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "nan"
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, np.ndarray):
        return [encode(float(x)) for x in v.ravel()]
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    raise TypeError(f"cannot encode {type(v).__name__}")


def failure(e: Exception) -> dict:
    return {"error": {"type": type(e).__name__, "message": str(e),
                      "field": getattr(e, "field", None), "problem": getattr(e, "problem", None)}}


def decode_arg(a, m):
    if a == "M":
        return m
    if isinstance(a, dict) and "i" in a:
        return int(a["i"])
    return a


def python_input(spec: dict):
    if "text" in spec:
        return spec["text"]
    if "b64" in spec:
        return base64.b64decode(spec["b64"])
    return spec["value"]


def run_py(case: dict) -> dict:
    out: dict = {}
    m = None
    try:
        m = costs.ModelShape.from_config(costs.parse_config_text(python_input(case["input"])),
                                         name=case.get("name"))
        out["shape"] = shape_dict(m)
    except ValueError as e:  # ConfigError and JSONDecodeError are ValueErrors
        out.update(failure(e))
    calls = []
    for name, *args in case.get("calls", []):
        if m is None and "M" in args:
            calls.append(None)
            continue
        if name.startswith("."):
            calls.append({"value": encode(getattr(costs, name[1:]))})
            continue
        kw = {}
        if args and isinstance(args[-1], dict) and "kw" in args[-1]:
            kw = {k: decode_arg(v, m) for k, v in args.pop()["kw"].items()}
        try:
            value = getattr(costs, name)(*[decode_arg(a, m) for a in args], **kw)
            calls.append({"value": encode(value)})
        except ValueError as e:
            calls.append(failure(e))
    out["calls"] = calls
    return out


def differences(py, js, where="") -> list[str]:  # -> what differs, each with its path
    if isinstance(py, float) or (isinstance(js, float) and isinstance(py, int)
                                 and not isinstance(py, bool)):
        if isinstance(js, bool) or not isinstance(js, (int, float)):
            return [f"{where}: python {py!r}, javascript {js!r}"]
        js = float(js)  # JSON.stringify writes 1e20 as 100000000000000000000
        if py == js or abs(py - js) <= RTOL * max(abs(py), abs(js)):
            return []
        return [f"{where}: python {py!r}, javascript {js!r}"]
    if isinstance(py, dict) and isinstance(js, dict):
        if py.keys() != js.keys():
            return [f"{where}: keys {sorted(py)} vs {sorted(js)}"]
        return [d for k in py for d in differences(py[k], js[k], f"{where}.{k}")]
    if isinstance(py, list) and isinstance(js, list) and len(py) == len(js):
        return [d for i, (a, b) in enumerate(zip(py, js))
                for d in differences(a, b, f"{where}[{i}]")]
    if type(py) is not type(js) or py != js:  # ints, strings, booleans, None: exactly
        return [f"{where}: python {py!r}, javascript {js!r}"]
    return []


def shape_differences(py: dict, js: dict) -> list[str]:  # figures are ints both sides
    if json.dumps(py, sort_keys=True) == json.dumps(js, sort_keys=True):
        return []
    return [f".shape.{k}: python {py.get(k)!r}, javascript {js.get(k)!r}"
            for k in sorted(set(py) | set(js)) if py.get(k) != js.get(k)
            or type(py.get(k)) is not type(js.get(k))] or [".shape: differs"]


def compare(cases, py_results, js_results) -> list[str]:  # -> one report per case that differs
    bad = []
    for case, py, js in zip(cases, py_results, js_results):
        found = []
        if "shape" in py or "shape" in js:
            found += shape_differences(py.get("shape"), js.get("shape"))
        found += differences(py.get("error"), js.get("error"), ".error")
        if len(py["calls"]) != len(js["calls"]):
            found.append(f".calls: {len(py['calls'])} in Python, {len(js['calls'])} in JS")
        for (name, *args), a, b in zip(case.get("calls", []), py["calls"], js["calls"]):
            found += differences(a, b, f".{name}{json.dumps(args)[:80]}")
        if found:
            shown = json.dumps(case["input"])[:1500]
            bad.append(f"case {case['id']} ({case['kind']}): {shown}\n  " + "\n  ".join(found[:8]))
    return bad


# --- the cases ------------------------------------------------------------------------------

def text_case(kind, cfg_or_text, calls=None, name=None) -> dict:
    text = cfg_or_text if isinstance(cfg_or_text, str) else json.dumps(cfg_or_text)
    case = {"kind": kind, "input": {"text": text}, "calls": calls or []}
    if name is not None:
        case["name"] = name
    return case


def length_calls(rng: random.Random, window=None) -> list:
    """The closed forms: at several lengths, users and dtypes (a JSON int: a Python int)."""
    ns = [0, 1, 2, 7, 256, 4096, 4097, rng.randint(1, 10**6), rng.randint(1, 10**12), 2**53]
    if window:
        ns += [window - 1, window, window + 1, 2 * window + rng.randint(0, 99)]
    n = rng.choice(ns[1:])
    users = [0, 1, 3, rng.randint(1, 4096)]
    ints = [{"i": str(v)} for v in (1, 2, 4)]
    calls = [[f, "M"] for f in ("attention_params", "dense_mlp_params", "moe_active_params",
                                "moe_stored_params", "lm_head_params", "matmul_params",
                                "total_params", "pair_flops", "other_flops_decode",
                                "stack_linears", "quantized_params", "cache_convention")]
    calls += [["weight_convention", "M", "bf16"], ["weight_convention", "M", "fp8"]]
    for bpv in [*ints, 2.0, 0.5]:
        calls += [["weight_bytes", "M", bpv], ["kv_bytes_per_token_per_layer", "M", bpv],
                  ["kv_bytes_per_token", "M", bpv]]
    calls += [["weight_bytes", "M"], ["kv_bytes_per_token", "M"]]
    for kernel in ("naive", "triangular"):
        calls += [["prefill_pairs", "M", ns, kernel], ["attention_flops_prefill", "M", ns, kernel],
                  ["prefill_attention_share", "M", ns, kernel], ["crossover_tokens", "M", kernel],
                  ["prefill_attention_share", "M", n, kernel]]
    calls += [["crossover_tokens", "M"], ["prefill_pairs", "M", n]]
    for f in ("other_flops_prefill", "decode_pairs", "attention_flops_decode",
              "decode_attention_share", "decode_dot_products", "decode_score_flops",
              "decode_value_flops", "kv_cache_bytes", "decode_arithmetic_intensity",
              "eager_score_matrix_bytes"):
        calls += [[f, "M", ns], [f, "M", n]]
    kv, w = rng.choice(ints + [1.0]), rng.choice(ints)
    calls += [
        ["kv_cache_bytes", "M", ns, rng.choice(users), kv], ["kv_cache_bytes", "M", n, users],
        ["decode_arithmetic_intensity", "M", n, kv],
        ["eager_score_matrix_bytes", "M", ns, rng.randint(1, 64), kv],
        ["decode_step_arithmetic_intensity", "M", n], ["decode_step_arithmetic_intensity", "M",
                                                       ns, rng.choice(users[1:])],
        ["decode_step_arithmetic_intensity", "M", n, users,
         {"kw": {"kv_bytes_per_value": kv, "weight_bytes_per_value": w}}],
        ["state_bytes", "M"], ["state_bytes", "M", users, kv],
        ["kv_outweighs_weights_context", "M"], ["kv_outweighs_weights_context", "M", users, kv],
        ["kv_outweighs_weights_context", "M", rng.choice(users), kv,
         {"kw": {"weight_bytes_per_value": w}}],
        ["kv_outweighs_weights_context", "M", users, 2.0, {"kw": {"weight_bytes_per_value": None}}],
    ]
    return calls


SIZES = [1, 2, 3, 4, 6, 8, 12, 16, 32, 40, 64, 96, 128, 256, 512, 1000, 4096, 8192, 10_000]


def family_config(rng: random.Random, family: str, whole: bool = False) -> dict:
    """A random config spelled the way the table says `family` spells it, nulls and gaps too
    (none when `whole`: each figure written, so the family is read at least once)."""
    row = config_families.FAMILIES.get(family, config_families.UNKNOWN)
    cfg: dict = {} if family == "" else {"model_type": family}
    # the caps (100,000 heads, widths of 10 M) only where the family may be read later too
    heads = rng.choice([1, 2, 4, 8, 12, 16, 32, 64, 128] + ([] if whole else [100_000]))
    kv = rng.choice([k for k in (1, 2, 4, 8, heads) if heads % k == 0])
    head_dim = rng.choice([8, 64, 80, 128, 256])
    hidden = rng.choice([heads * head_dim, heads * head_dim, rng.choice(SIZES) * 64])
    values = {"layers": rng.choice([1, 2, 12, 24, 32, 61, 80, 10_000]), "hidden": hidden,
              "heads": heads, "kv_heads": kv, "head_dim": head_dim,
              "intermediate": rng.choice([4 * hidden, 11008, 14336, 1]
                                         + ([] if whole else [10_000_000])),
              "vocab": rng.choice([1000, 32000, 50257, 151936]
                                  + ([] if whole else [100_000_000])),
              "max_positions": rng.choice([1024, 2048, 131072, 10_000_000_000]),
              # picked without a draw, so that the seed's other cases stay as they were
              "embedding_width": (hidden, 512, 768)[(heads + head_dim) % 3]}
    if hidden > 1_000_000:
        values["hidden"] = rng.choice(SIZES) * 64
    for figure in config_families.FIGURES:
        rule = config_families.rule(row, figure)
        names = rule["names"] or ["ffn_hidden_size"]
        roll, rate = rng.random(), (0.1 if "default" in rule else 0.01)
        if whole:
            roll = 1.0
        if roll < rate:
            continue  # absent: the default, or "is missing"
        if roll < 2 * rate:
            cfg[rng.choice(names)] = None  # null: the default, or "is null; it is required"
        else:
            name = names[0] if rng.random() < 0.8 else rng.choice(names)
            if "." in name:
                outer, inner = name.split(".")
                cfg.setdefault(outer, {})[inner] = values[figure]
            else:
                cfg[name] = values[figure]
    if whole:  # and each config number a tensor's size reads (Bamba's Mamba-2 heads), so
        # the first round reads every family whatever the other rounds draw
        for term in row["tensors"]:
            for product in term["size"]:
                for f in product:
                    if isinstance(f, dict) and "default" not in f:
                        cfg.setdefault(f["field"], 4)
    for flag in ("multi_query", "new_decoder_architecture", "tie_word_embeddings", "is_decoder"):
        if rng.random() < 0.3:
            cfg[flag] = rng.choice([True, False, None])
    window = config_families.window_rule(row)
    if "layer_pattern" in window and rng.random() < 0.7:  # GPT-Neo: its layers' own list,
        # else the default's 24 layers, which the drawn count rarely is
        n = values["layers"]
        cfg[window["layer_pattern"]] = ([[["global", "local"], n // 2]] if n % 2 == 0
                                        else [[["global"], n]])
    if family in ("falcon", "RefinedWebModel", "RefinedWeb") and rng.random() < 0.5:
        cfg[rng.choice(["num_kv_heads", "n_head_kv"])] = kv
    if family.startswith("llama4"):  # experts, dense layers of their own width, chunks
        cfg.update(num_local_experts=rng.choice([16, 128, 16, 0]), num_experts_per_tok=1,
                   intermediate_size=rng.choice([8192, 8192, 8192, None]),
                   attention_chunk_size=rng.choice([8192, 8192, None, 3]))
        layers = cfg.get("num_hidden_layers")
        pick = rng.random()
        if pick < 0.3:
            cfg["interleave_moe_layer_step"] = rng.choice([1, 2, 4, 0])
        elif pick < 0.5:
            cfg["moe_layers"] = rng.choice([[1, 3, 5], [], None, "x"])
        if isinstance(layers, int) and layers <= 200 and rng.random() < 0.4:
            cfg["no_rope_layers"] = rng.choice([[1, 0] * (layers // 2) + [1] * (layers % 2),
                                                [1] * layers, [], [2] * layers, None])
        elif rng.random() < 0.3:
            cfg["no_rope_layer_interval"] = rng.choice([4, 1, 0, None])
    if family == "mpt" and rng.random() < 0.7:
        cfg["expansion_ratio"] = rng.choice([4, 2.5, 8 / 3, 1e-9, 0, -1, True, "4", 1e308, 3.0])
    fills = config_families.DERIVED["types"].get(family, {}).get("fills", {})
    counts = {name for names in config_families.EXPERT_COUNTS for name in names}
    if counts & set(fills) and (whole or rng.random() < 0.8):  # the experts' count is the
        # class's (ERNIE 4.5's moe_num_experts too): a width
        cfg["moe_intermediate_size"] = rng.choice([8, 1408, 2048])
        if not set(config_families.TOP_K) & set(fills):  # and a top-k where the class has
            # none fixed
            cfg["num_experts_per_tok"] = 1
    return cfg


def with_window(rng: random.Random, cfg: dict) -> dict:  # windows and mixed layer types
    layers = cfg.get("num_hidden_layers") or cfg.get("n_layer") or cfg.get("num_layers")
    layers = layers if isinstance(layers, int) and layers <= 200 else None
    window = rng.choice([1, 64, 256, 4096, 32768, 10_000_000_000])
    pick = rng.random()
    if cfg.get("model_type") == "gpt_neo":
        cfg["window_size"] = rng.choice([window, None])
        if layers and rng.random() < 0.8:
            local = rng.randint(0, layers)
            cfg["attention_types"] = [[["local"], local], [["global"], layers - local]]
        elif rng.random() < 0.5:
            cfg["attention_types"] = rng.choice([[[["global", "local"], 6]], "x", [[["x"], 1]]])
        return cfg
    cfg["sliding_window"] = window
    if pick < 0.3 and layers:
        cfg["layer_types"] = [rng.choice(["sliding_attention", "full_attention", "chunked",
                                          "linear_attention", "conv", "hybrid"])
                              for _ in range(layers)]
    elif pick < 0.45:
        cfg["sliding_window_pattern"] = rng.choice([1, 2, 6, None, 0])
    elif pick < 0.6:
        cfg["use_sliding_window"] = rng.choice([True, False, None, "yes"])
        cfg["max_window_layers"] = rng.choice([0, 4, 28, 10_000, None])
    elif pick < 0.65 and layers:
        cfg["layer_types"] = ["sliding_attention"] * (layers + 1)
    return cfg


def with_moe(rng: random.Random, cfg: dict) -> dict:
    experts = rng.choice([0, 1, 8, 60, 128, 256, 100_000])
    k = rng.choice([1, 2, 8, experts + 1])
    kind = rng.choice(["deepseek", "mixtral", "qwen", "ernie"])
    # top-k under any of its names (Hunyuan's moe_topk, ERNIE's moe_k), sometimes two at once
    for name in rng.sample(["num_experts_per_tok", "moe_topk", "moe_k"], rng.choice([1, 1, 2])):
        cfg[name] = k
    if kind == "deepseek":
        cfg.update(n_routed_experts=experts, moe_intermediate_size=rng.choice([768, 2048]),
                   n_shared_experts=rng.choice([0, 1, 2, None]),
                   first_k_dense_replace=rng.choice([0, 1, 3, None]),
                   moe_layer_freq=rng.choice([1, 2, None]))
    elif kind == "mixtral":  # Granite MoE's shared MLP beside, sometimes
        cfg["num_local_experts"] = experts
        cfg["shared_intermediate_size"] = rng.choice([0, 1024, None, -1])
        if cfg["shared_intermediate_size"] is None:
            del cfg["shared_intermediate_size"]
    elif kind == "ernie":  # ERNIE 4.5, Aria: each field sometimes absent or malformed
        cfg.update(moe_num_experts=experts, moe_intermediate_size=rng.choice([12, 1536, None]),
                   moe_num_shared_experts=rng.choice([0, 1, 2, None, -1]),
                   moe_layer_start_index=rng.choice([0, 1, 5, None, -1]),
                   moe_layer_end_index=rng.choice([-1, 0, 3, 99, None, -2, 2.0, "x"]),
                   moe_layer_interval=rng.choice([1, 2, 3, None, 0]))
    else:
        cfg.update(num_experts=experts, moe_intermediate_size=rng.choice([768, 1408]),
                   shared_expert_intermediate_size=rng.choice([0, 5632, None]),
                   decoder_sparse_step=rng.choice([1, 2, None]),
                   mlp_only_layers=rng.choice([[], [0, 1], [0, 3, 99], None, [True], "0"]),
                   num_dense_layers=rng.choice([0, 1, 3, 99, None, -1]),
                   num_shared_experts=rng.choice([None, 1, 2, 0, -1]))
        if cfg["num_shared_experts"] is None:
            del cfg["num_shared_experts"]
    if rng.random() < 0.3:  # each layer's MLP listed (AXK, EXAONE MoE, ...), some malformed
        layers = cfg.get("num_hidden_layers")
        layers = min(max(layers, 0), 64) if isinstance(layers, int) else 4
        cfg["mlp_layer_types"] = rng.choice([
            [rng.choice(["dense", "sparse"]) for _ in range(layers)],
            ["dense"] + ["sparse"] * max(layers - 1, 0), ["sparse"] * (layers + 1),
            ["moe"] * layers, "sparse", None])
    if rng.random() < 0.2:  # which layers run their own DSA indexer (GLM-5), some malformed
        layers = cfg.get("num_hidden_layers")
        layers = min(max(layers, 0), 64) if isinstance(layers, int) else 4
        cfg["indexer_types"] = rng.choice([
            [rng.choice(["full", "shared"]) for _ in range(layers)], ["shared"] * (layers + 2),
            "full", [None, 3], None])
    return cfg


QUANT_CONFIGS = [
    {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    {"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": False},
    {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
    {"quant_method": "gptq", "bits": 3, "group_size": -1},
    {"quant_method": "gptq", "bits": 8, "group_size": 32},
    {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"},
    {"quant_method": "fp8", "activation_scheme": "static"},
    {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0},
    {"quant_method": "mxfp4", "modules_to_not_convert": ["lm_head"]}, {"quant_method": "mxfp4"},
    {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "group_0": {"targets": ["Linear"], "weights": {
            "num_bits": 4, "strategy": "group", "group_size": 128, "symmetric": False}}}},
    {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {
        "g": {"weights": {"num_bits": 8, "strategy": "channel", "type": "float"}}}},
    {"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {
        "g": {"weights": {"num_bits": 8, "strategy": "tensor", "symmetric": False}}}},
    {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {
        "g": {"weights": {"num_bits": 4, "strategy": "group", "group_size": 0}}}},
    {"quant_method": "compressed-tensors", "format": "sparse-24", "config_groups": []},
    {"quant_method": "bitsandbytes", "load_in_4bit": True},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False,
     "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True},
    {"quant_method": "bitsandbytes", "load_in_8bit": True},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": True},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "int4"},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": 1},
    {"quant_method": None}, {},
    {"quant_method": "awq", "bits": 5}, {"quant_method": "gptq", "bits": 4.0},
    {"quant_method": "gptq", "bits": 4, "group_size": 0},
    {"quant_method": "awq", "bits": 4, "group_size": True},
    {"quant_method": "awq", "bits": 4, "zero_point": "yes"},
    {"quant_method": "fp8", "weight_block_size": [128]},
    {"quant_method": "fp8", "weight_block_size": [128, 0]}, "awq", 4, [1],
]


def with_quant(rng: random.Random, cfg: dict) -> dict:
    cfg["quantization_config"] = copy.deepcopy(rng.choice(QUANT_CONFIGS))
    return cfg


def _table_fields() -> set:  # every config field a family's tensors or notes read
    out = set()
    for row in config_families.FAMILIES.values():
        for term in row["tensors"]:
            out |= {c.get("flag") or c.get("field") for c in term["when"]} - {None}
            out |= {f["field"] for p in term["size"] for f in p if isinstance(f, dict)}
        out |= {n["field"] for n in row["notes"]}
    return out


STATE_VALUES = [1, 2, 4, 16, 128, 1_000_000, 1_000_001, 0, -1, None, True, 4.0, "8"]


def with_hybrid(rng: random.Random, cfg: dict) -> dict:  # a state rule's type, its fields, and
    # a layer layout in one of the spellings the core reads (some malformed)
    cfg["model_type"] = rng.choice([*config_families.STATES, "qwen3_vl", "llama"])
    rules = [config_families.state_rule(t) or {} for t in config_families.STATES]
    fields = {f for r in rules for part in ("conv", "recurrent") for p in r.get(part, ())
              for f in p if isinstance(f, str)}
    for f in fields - {"hidden_size"}:  # the model's own width stays as drawn
        if rng.random() < 0.95:
            cfg[f] = rng.choice(STATE_VALUES[:5]) if rng.random() < 0.9 else rng.choice(
                STATE_VALUES)
    layers = cfg.get("num_hidden_layers") if isinstance(cfg.get("num_hidden_layers"), int) else 4
    layers = min(max(layers, 0), 64)
    kind = rng.randrange(7)
    if kind == 0:
        cfg["layer_types"] = [rng.choice(["linear_attention", "full_attention", "mamba", "mlp"])
                              for _ in range(layers)]
    elif kind == 1:
        cfg["layers_block_type"] = [rng.choice(["linear_attention", "moe", "full_attention"])
                                    for _ in range(layers + rng.choice([0, 0, 1]))]
    elif kind == 2:
        cfg["hybrid_override_pattern"] = "".join(rng.choice("M*-E") for _ in range(layers)) + \
            rng.choice(["", "", "x"])
    elif kind == 3:
        cfg.update(attn_layer_period=rng.choice([1, 2, 8, 0, None]),
                   attn_layer_offset=rng.choice([0, 1, 4, -1, None]))
    elif kind == 4:
        cfg["attn_layer_indices"] = rng.choice([[1], [0, 3], [], [True], "1"])
    elif kind == 5:
        cfg["full_attention_interval"] = rng.choice([1, 4, 0, None, 4.0])
    return cfg


def with_mla(rng: random.Random, cfg: dict) -> dict:
    cfg.update(kv_lora_rank=rng.choice([512, 1, 1_000_000]),
               q_lora_rank=rng.choice([1536, None, 0]),
               qk_nope_head_dim=rng.choice([128, 0]), qk_rope_head_dim=rng.choice([64, 0]),
               v_head_dim=rng.choice([128, 1, 100_000]))
    return cfg


BAD_VALUES = [0, -4, 32.0, 32.5, True, "32", None, [32], {"n": 32}, 2**63, 10**12, 1e-300,
              -0.0, 1e16, 123456789.123, "x" * 200, "<script>", "\u00e9\U0001F600",
              [[["global", "local"], 12]], ["sliding_attention"], 1e300]
FIELDS = sorted({name for rule in config_families.BASE.values() for name in rule["names"]}
                | {"model_type", "tie_word_embeddings", "text_config", "_name_or_path",
                   "sliding_window", "use_sliding_window", "layer_types", "max_window_layers",
                   "sliding_window_pattern", "num_local_experts", "num_experts",
                   "n_routed_experts", "num_experts_per_tok", "kv_lora_rank", "expansion_ratio",
                   "attention_types", "window_size", "multi_query", "new_decoder_architecture",
                   "attn_config", "mlp_only_layers", "ffn_dim", "n_embed", "d_model",
                   "moe_intermediate_size", "quantization_config", "block_configs",
                   "multi_query_group_num", "is_encoder_decoder", "intermediate_size_mlp",
                   "interleave_moe_layer_step", "moe_layers", "no_rope_layers",
                   "no_rope_layer_interval", "attention_chunk_size", "mlp_layer_types",
                   "num_shared_experts", "moe_topk", "moe_k", "moe_num_experts",
                   "moe_num_shared_experts", "num_dense_layers", "moe_layer_start_index",
                   "moe_layer_end_index", "moe_layer_interval", "shared_intermediate_size",
                   "q_lora_rank"} | _table_fields())
# beside the rows: types Transformers ships that no row counts, an encoder-decoder, and others
MODEL_TYPES = [*config_families.FAMILIES, "qwen3_next", "jamba", "bart", "t5", "", "mystery",
               "it's", 'say "hi"', "a\nb\tc\\",
               "\u00e9t\u00e9", "\u0378\u200b\ufeff", "\U0001F600", "__proto__", "constructor",
               "toString", "x" * 300, None, 3]


def generated_cases(count: int) -> list[dict]:
    rng = random.Random(SEED)
    families = [*config_families.FAMILIES, ""]
    cases = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.55 or i < 4 * len(families):  # every family a few times, then at random
            cfg = family_config(rng, families[i % len(families)], whole=i < len(families))
            kind = f"family {families[i % len(families)] or '(none)'}"
        else:
            cfg = copy.deepcopy(rng.choice(BASES))
            kind = "published config, changed"
        if i < len(families):  # the first round as the family writes it, nothing added
            cases.append(text_case(kind, cfg, length_calls(rng)))
            continue
        if rng.random() < 0.3:
            cfg, kind = with_window(rng, cfg), kind + ", window"
        if rng.random() < 0.2:
            cfg, kind = with_moe(rng, cfg), kind + ", MoE"
        if rng.random() < 0.12:
            cfg, kind = with_mla(rng, cfg), kind + ", MLA"
        if rng.random() < 0.15:
            cfg, kind = with_quant(rng, cfg), kind + ", quantized"
        if i >= 4 * len(families) and rng.random() < 0.15:  # the cycled families kept
            cfg, kind = with_hybrid(rng, cfg), kind + ", hybrid"
        for _ in range(rng.choice([0, 0, 0, 0, 1, 2]) if i >= len(families) else 0):
            cfg[rng.choice(FIELDS)] = rng.choice(BAD_VALUES)  # the first round read whole
        if rng.random() < 0.05:
            cfg["model_type"] = rng.choice(MODEL_TYPES)
        if rng.random() < 0.08:  # multimodal: the text model inside
            outer = {"model_type": rng.choice(["gemma3", "llava", None]),
                     "tie_word_embeddings": rng.choice([True, False]), "vision_config": {}}
            cfg = {**outer, "text_config": cfg} if rng.random() < 0.9 else {**outer,
                                                                               "text_config": 5}
            kind += ", text_config"
        if rng.random() < 0.1:
            cfg["_name_or_path"] = rng.choice(["  org/model  ", "\u3000", "\u00a0x\u2003",
                                               "\U0001F600" * 130, "", 7])
        window = cfg.get("sliding_window") if isinstance(cfg.get("sliding_window"), int) else None
        name = rng.choice([None, None, None, " Named ", "\t", "\U0001F600" * 200])
        cases.append(text_case(kind, cfg, length_calls(rng, window), name))
    return cases


def malformed_cases(rng: random.Random) -> list[dict]:  # text that is not quite JSON
    good = json.dumps({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                       "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 1000,
                       "s": "a\u00e9\U0001F600\\u00e9", "l": [1, 2.5, None]})
    texts = ["{not json", "[1, 2]", '"llama"', "32", "null", "", "   \n\t ", "\u00a0\u3000",
             "\u200b", "\ufeff", "\ufeff\ufeff{}", "\ufeff{}", "{}", "{} x", '{"a":1,}', "[1,]",
             '{"a" 1}', "{'a':1}", '{"a":"\\q"}', '{"a":"\\u12"}', '{"a":"\\u12x4"}',
             '{"a":"\x01"}', '{"a":"abc', '{"a":-}', '{"a": 1.}', '{"a": 01}', '{"a": 1e}',
             '{"a": 1e5x}', '{"a": -Infinity, "b": -NaN}', '{"a":"\\ud800\\u"}',
             '{"a":"\\ud800\\udc00"', '{"a":"\\ud800\\udc00', '{"a":"\\ud83d\\ude00"}',
             '{"a":"\\ud800\\u0041"}', '{"a":"\\ud800"}', '{"a":"\\u12\U0001F600"}',
             '{"\U0001F600": 1, "\U0001F600": NaN}', "\n\n  {\n \"a\": \U0001F600}",
             '{"a": 1, "a": 2, "b": [NaN, Infinity]}', '{"a": 1e400, "b": -1e400}',
             '{"a": ' + "9" * 4300 + "}", '{"a": -' + "9" * 4301 + "}",
             '{"a": ' + "9" * 4301 + ".5}", '{"__proto__": {"x": NaN}}', '{"a": "\ud800"}',
             "{" + '"a": {' * 63 + "}" * 64, "{" + '"a": {' * 64 + "}" * 65,
             "{" + '"a": [' * 70 + "]" * 70 + "} x", '{"a": ' + "[" * 500 + "]" * 499 + "}",
             "[" * 100 + "]" * 100, '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}",
             "{" * 5000, "[" * 800, "x" * 1_000_001, "\u00e9" * 500_001,
             '{"pad": "' + "\u00e9" * 499_990 + '"}']
    escapes = ('{"s": "\\ud800\\udc00\\u0041\\"\\\\\\/\\b\\f\\n\\r\\t", "n": -0, '
               '"e": 1E+2, "f": 0.5e-1}')
    goods = [good, escapes, '[{"a":[]},{},[[]],-Infinity,NaN,Infinity,"\U0001F600"]']
    alphabet = '{}[]",:\\ u0123abcdefABCDEFnNI-+.eE\n\t\r\x00\x1f\x7f\U0001F600\ud83d\ude00xlrs'
    for _ in range(2000):  # a good text with characters dropped, swapped or added, or cut
        t = list(rng.choice(goods))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(t) + 1)
            what = rng.random()
            if what < 0.3 and at < len(t):
                del t[at]
            elif what < 0.7:
                t.insert(at, rng.choice(alphabet))
            elif at < len(t):
                t[at] = rng.choice(alphabet)
        text = "".join(t)
        text = text[: rng.randint(0, len(text))] if rng.random() < 0.3 else text
        texts.append('{"k": ' + text + "}" if rng.random() < 0.3 else text)
    cases = [text_case("malformed text", t) for t in texts]
    blobs = [b"", b"\xef\xbb\xbf{}", b"\xef\xbb\xbf\xff", b"ab\xe4\x00", b"\xed\xa0\x80",
             b'{"a": "\xc3\xa9"}', b'{"a": "\xc3"}', b"\xf4\x90\x80\x80", b"\xf0\x8f\xbf\xbf",
             b"\xc0\xaf", b"\xe0\x80\xaf", b"{\xe2\x82", bytes(range(256)), b"\x00{}",
             b"\xff" * 1_000_001, good.encode("utf-8")]
    cases += [{"kind": "bytes", "input": {"b64": base64.b64encode(b).decode()}} for b in blobs]
    cases += [{"kind": "not text", "input": {"value": v}} for v in (None, 5, 1.5, True, [], {})]
    return cases


def hostile_cases() -> list[dict]:  # tests/test_hostile_input.py's list, and the CLI tests'
    cases = []
    for what, text, _ in HOSTILE_CONFIGS:
        spec = ({"text": text} if isinstance(text, str)
                else {"b64": base64.b64encode(text).decode()})
        cases.append({"kind": f"hostile: {what}", "input": spec})
    cli = [('{"num_hidden_layers": -3, "hidden_size": 4096, "num_attention_heads": 32,'
            ' "intermediate_size": 11008, "vocab_size": 32000}'),
           json.dumps({"model_type": "opt", "num_hidden_layers": 2, "hidden_size": 8,
                       "num_attention_heads": 2, "vocab_size": 10}),
           '{"model_type": "mpt", "d_model": 8, "n_heads": 2, "vocab_size": 10}']
    cases += [text_case("CLI test", t) for t in cli]
    fixtures = sorted((ROOT / "tests" / "fixtures" / "configs").glob("*.json"))
    rng = random.Random(SEED + 1)
    cases += [text_case(f"fixture {p.stem}", p.read_text(), length_calls(rng)) for p in fixtures]
    return cases


def edge_cases(rng: random.Random) -> list[dict]:  # the corners, each named
    mpt = {"model_type": "mpt", "n_layers": 2, "d_model": 64, "n_heads": 4, "vocab_size": 100}
    llama = {"model_type": "llama", "num_hidden_layers": 10_000, "hidden_size": 1_000_000,
             "num_attention_heads": 100_000, "num_key_value_heads": 100_000, "head_dim": 100_000,
             "intermediate_size": 10_000_000, "vocab_size": 100_000_000,
             "max_position_embeddings": 10_000_000_000}
    moe = {**llama, "num_experts": 100_000, "num_experts_per_tok": 100_000,
           "moe_intermediate_size": 10_000_000, "shared_expert_intermediate_size": 10_000_000}
    bert = {"model_type": "bert", "num_hidden_layers": 2, "hidden_size": 64,
            "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8}
    jamba = {**bert, "model_type": "jamba", "num_hidden_layers": 4, "expert_layer_period": 2}
    configs = [
        ("MPT ratio 1e308: the width overflows, and is no real model's", {
            **mpt, "expansion_ratio": 1e308}),
        ("MPT ratio a 400-digit int", {**mpt, "expansion_ratio": 10**400}),
        ("MPT ratio 8/3", {**mpt, "expansion_ratio": 8 / 3}),
        ("MPT ratio too small", {**mpt, "expansion_ratio": 1e-3}),
        ("every cap at once: integers far past 2^53", llama),
        ("MoE at the caps", moe),
        ("MLA at the caps", {**llama, "kv_lora_rank": 1_000_000, "q_lora_rank": 1_000_000,
                             "qk_nope_head_dim": 100_000, "qk_rope_head_dim": 100_000,
                             "v_head_dim": 100_000}),
        ("every layer slides, a wide window", {**costs.PRESETS["llama-3-8b"],
                                                "sliding_window": 10_000_000_000}),
        ("every layer slides, a narrow window", {**costs.PRESETS["llama-3-8b"],
                                                  "sliding_window": 1}),
        ("mixed layer types and an unknown one", {
            **costs.PRESETS["llama-3-8b"], "sliding_window": 4096,
            "layer_types": ["sliding_attention", "full_attention", "chunked_attention",
                            "sliding_attention"] * 8}),
        ("text_config inside, tying outside", {
            "model_type": "gemma3", "tie_word_embeddings": False, "text_config": {
                "num_hidden_layers": 34, "hidden_size": 2560, "intermediate_size": 10240}}),
        ("no model_type, GPT-2's n_embd", {"n_layer": 2, "n_embd": 64, "n_head": 4,
                                           "vocab_size": 10}),
        ("duplicate keys: the last wins, the first's place", (
            '{"model_type": "llama", "num_hidden_layers": 0, "hidden_size": 64, '
            '"num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, '
            '"num_hidden_layers": 3}')),
        ("Bamba: Infinity in its step clamp is read past, elsewhere refused", (
            '{"model_type": "bamba", "num_hidden_layers": 4, "hidden_size": 64, '
            '"num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 8, '
            '"vocab_size": 8, "attn_layer_indices": [1], "mamba_n_heads": 4, '
            '"mamba_d_head": 32, "mamba_n_groups": 1, "mamba_d_state": 8, "mamba_d_conv": 4, '
            '"mamba_expand": 2, "time_step_limit": [0.0, Infinity]}')),
        ("Bamba with no attention layer listed: all Mamba-2", (
            '{"model_type": "bamba", "num_hidden_layers": 4, "hidden_size": 64, '
            '"num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, '
            '"mamba_n_heads": 4, "mamba_d_head": 32, "mamba_expand": 2, '
            '"text_config": null, "time_step_limit": [NaN, -Infinity]}')),
        ("ERNIE 4.5 with biases and no shared experts: no shared MLP, none of its biases", {
            "model_type": "ernie4_5_moe", "num_hidden_layers": 6, "hidden_size": 32,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 40,
            "vocab_size": 300, "use_bias": True, "moe_num_experts": 4, "moe_k": 2,
            "moe_intermediate_size": 12, "moe_num_shared_experts": 0}),
        ("ERNIE 4.5 with biases and 2 shared experts", {
            "model_type": "ernie4_5_moe", "num_hidden_layers": 6, "hidden_size": 32,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 40,
            "vocab_size": 300, "use_bias": True, "moe_num_experts": 4, "moe_k": 2,
            "moe_intermediate_size": 12, "moe_num_shared_experts": 2}),
        ("OPT-350m: a 512-wide token table projected in and out of 1,024", {
            "model_type": "opt", "num_hidden_layers": 24, "hidden_size": 1024,
            "word_embed_proj_dim": 512, "ffn_dim": 4096, "num_attention_heads": 16,
            "vocab_size": 50272, "do_layer_norm_before": False}),
        ("OPT-350m untied: lm_head as narrow as the table", {
            "model_type": "opt", "num_hidden_layers": 24, "hidden_size": 1024,
            "word_embed_proj_dim": 512, "ffn_dim": 4096, "num_attention_heads": 16,
            "vocab_size": 50272, "tie_word_embeddings": False}),
        ("Hunyuan: one top-k a layer, and an experts' width its class ignores", {
            "model_type": "hunyuan_v1_moe", "num_hidden_layers": 3, "hidden_size": 32,
            "num_attention_heads": 4, "intermediate_size": 40, "vocab_size": 300,
            "num_experts": 4, "moe_topk": [2, 2, 2, 9], "moe_intermediate_size": [12] * 3}),
        ("Hunyuan: a top-k that differs between layers", {
            "model_type": "hunyuan_v1_moe", "num_hidden_layers": 3, "hidden_size": 32,
            "num_attention_heads": 4, "intermediate_size": 40, "vocab_size": 300,
            "num_experts": 4, "moe_topk": [2, 3, 1]}),
        ("Hunyuan: fewer top-k values than layers", {
            "model_type": "hunyuan_v1_moe", "num_hidden_layers": 3, "hidden_size": 32,
            "num_attention_heads": 4, "intermediate_size": 40, "vocab_size": 300,
            "num_experts": 4, "moe_topk": [2]}),
        ("Hunyuan with no experts: a short top-k list is not read", {
            "model_type": "hunyuan_v1_moe", "num_hidden_layers": 3, "hidden_size": 32,
            "num_attention_heads": 4, "intermediate_size": 40, "vocab_size": 300,
            "num_experts": 0, "moe_topk": [1]}),
        ("Gemma 4: its top-k as top_k_experts", {
            "model_type": "gemma4_text", "num_hidden_layers": 3, "hidden_size": 32,
            "num_attention_heads": 4, "intermediate_size": 40, "vocab_size": 300,
            "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 12}),
        ("BERT without is_decoder: its model keeps no cache, said", {**bert}),
        ("BERT as a decoder", {**bert, "is_decoder": True}),
        ("Jamba-v0.1: Mamba layers, experts on the odd layers", {
            "model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "vocab_size": 65536, "num_experts": 16, "num_experts_per_tok": 2,
            "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8,
            "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4,
            "mamba_expand": 2, "mamba_dt_rank": 256}),
        ("Jamba: an expert offset past its period", {
            **jamba, "num_experts": 4, "expert_layer_offset": 2}),
        ("Jamba: one expert is a dense MLP", {**jamba, "num_experts": 1}),
        ("Infinity beside the step clamp", (
            '{"model_type": "bamba", "num_hidden_layers": 4, "hidden_size": 64, '
            '"num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, '
            '"time_step_limit": [0.0, 1.0], "time_step_max": Infinity}')),
    ]
    small = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
             "intermediate_size": 8, "vocab_size": 8}
    configs += [(f"model_type {t!r}: repr() in the note", {**small, "model_type": t})
                for t in MODEL_TYPES]  # quotes, escapes, unassigned and invisible characters
    return [text_case(f"edge: {what}", cfg, length_calls(rng)) for what, cfg in configs]


def module_case(rng) -> dict:  # the tables and the argument checks, once
    calls = [[".DTYPE_BYTES"], [".DEFAULT_DTYPE"], [".KERNELS"], [".GPUS"]]
    calls += [["dtype_bytes", name] for name in [*costs.DTYPE_BYTES, "fp4", "", "BF16", None,
                                                  "it's", "\u00e9"]]
    calls += [["preset", key] for key in [*costs.PRESETS, "gpt5", None, "<b>x</b>"]]
    calls += [["prefill_pairs", "M", 10, k] for k in ("flash", None, "na\u00efve", 'a"b')]
    calls += [["crossover_tokens", "M", "flash"]]
    return text_case("the module", costs.PRESETS["llama-3-8b"], calls + length_calls(rng))


def all_cases() -> list[dict]:
    rng = random.Random(SEED + 2)
    cases = [module_case(rng), *edge_cases(rng), *hostile_cases(), *malformed_cases(rng),
             *generated_cases(1700)]
    for i, case in enumerate(cases):
        case["id"] = i
    return cases


@pytest.fixture(scope="module")
def both():  # -> (cases, Python's results, JavaScript's results)
    cases = all_cases()
    return cases, [run_py(c) for c in cases], run_js(cases)


def test_javascript_and_python_agree_on_every_case(both):
    cases, py, js = both
    bad = compare(cases, py, js)
    assert not bad, f"{len(bad)} of {len(cases)} cases differ:\n" + "\n".join(bad[:10])


def test_the_cases_cover_every_family_and_both_outcomes(both):
    cases, py, _ = both
    read = [c for c, r in zip(cases, py) if "shape" in r]
    refused = [r["error"] for r in py if "error" in r]
    assert len(read) >= 1000, len(read)
    assert len(refused) >= 300, len(refused)
    families = {json.loads(c["input"]["text"]).get("model_type") for c in read
                if c["kind"].startswith("family")}
    assert set(config_families.FAMILIES) <= families, set(config_families.FAMILIES) - families
    shapes = [r["shape"] for r in py if "shape" in r]
    assert any(s["mla"] for s in shapes) and any(s["num_experts"] for s in shapes)
    assert any(0 < s["sliding_layers"] < s["layers"] for s in shapes)  # mixed layer types
    assert any(s["sliding_layers"] == s["layers"] for s in shapes)
    assert any(0 < s["uncached_layers"] < s["layers"] for s in shapes)  # hybrids
    assert sum(s["state_layers"] > 0 for s in shapes) >= 10  # their fixed state counted
    assert any(s["state_layers"] == s["layers"] for s in shapes)  # Falcon-H1: every layer
    assert any(s["kv_heads"] == 1 < s["heads"] for s in shapes)  # MQA
    assert any(1 < s["kv_heads"] < s["heads"] for s in shapes)  # GQA
    assert {True, False} <= {s["tied"] for s in shapes}
    assert set(costs.QUANT_METHODS) <= {s["quant_method"] for s in shapes}  # each method read
    # integers past 2^53, where a double would round: the BigInt path is exercised
    big = [v for r in py for call in r["calls"] if call and isinstance(call.get("value"), dict)
           for v in [int(call["value"].get("i", 0))] if v > 2**53]
    assert len(big) >= 50, len(big)
    problems = {e["problem"].split(" (")[0][:30] for e in refused if e["problem"]}
    assert len(problems) >= 40, sorted(problems)


MUTANTS = [  # (what, the text in one part of the model, what it becomes)
    ("pair FLOPs count 3 per dim", "return 2n * B(m.attention_layers) * B(m.heads)",
     "return 3n * B(m.attention_layers) * B(m.heads)"),
    ("messages quote 59 characters", "const SHOW_LIMIT = 60;", "const SHOW_LIMIT = 59;"),
    ("a narrower embedding projected one way only", "e === m.hidden ? 0n : 2n *",
     "e === m.hidden ? 0n : 1n *"),
]


@pytest.mark.parametrize("what, old, new", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_changed_constant_is_caught(both, tmp_path, what, old, new):
    cases, py, _ = both
    [part] = [p for p in PARTS if old in p.read_text()]
    changed = [js_twin.mutant(part, tmp_path, old, new) if p == part else p for p in PARTS]
    assert compare(cases, py, run_js(cases, changed)), f"the mutant ({what}) passed"


def test_the_table_the_page_gets_is_pythons():
    script = cost_model_data.table_script()
    assert script.startswith("AE.costModel.receive(") and script.endswith(");\n")
    assert "</" not in script
    table = json.loads(script[len("AE.costModel.receive("):-len(");\n")])
    assert table["FAMILIES"] == config_families.FAMILIES
    assert table["BASE"] == config_families.BASE and table["FIGURES"] == config_families.FIGURES
    assert {k: json.loads(v) for k, v in table["PRESETS"].items()} == costs.PRESETS
    assert table["LIMITS"] == costs.LIMITS and table["DTYPE_BYTES"] == costs.DTYPE_BYTES


def test_one_global_and_no_modules():
    for part in PARTS:  # classic scripts
        source = part.read_text()
        assert "import " not in source and "export " not in source, part.name
    probe = ("const vm = require('vm'); const ctx = {}; ctx.window = ctx; "
             "vm.createContext(ctx); for (const f of process.argv.slice(1)) "
             "vm.runInContext(require('fs').readFileSync(f, 'utf8'), ctx); "
             "console.log(JSON.stringify(Object.keys(ctx)), "
             "JSON.stringify(Object.keys(ctx.AE)), JSON.stringify(Object.keys(ctx.AE.costModel)))")
    out = subprocess.run([node(), "-e", probe, *map(str, PARTS)], capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.split() == ['["window","AE"]', '["costModelParts","costModel"]',
                                  '["create","table","receive"]']
