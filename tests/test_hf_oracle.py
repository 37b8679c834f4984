"""The cost core against Hugging Face Transformers' own model code: every count exact.

tests/hf_oracle.py writes random small configs with Transformers' config classes (each family
the core claims and Transformers defines; every other one also in Transformers 4's field
names), builds each model on the meta device and reads the truth off it: total parameters,
matmul weights, and the cache of a real forward. Hand-typed Hub files
(tests/fixtures/configs/) are built at full size the same way. The conventions where the core
counts differently are in hf_oracle's docstring; each is checked as an exact conversion.
"""

import json
from collections import Counter
from pathlib import Path

import hf_oracle  # tests/ is on sys.path; without torch or transformers this fails, not skips
import pytest

from attention_core import config_families, costs

PER_FAMILY = 15
SEED = 37
CONFIGS = Path(__file__).parent / "fixtures" / "configs"
# families the core claims that Transformers does not define (remote code, or old names of
# Falcon's first uploads): read like their relatives, and not checked here
NOT_IN_TRANSFORMERS = {"internlm2", "yi", "RefinedWebModel", "RefinedWeb", "kimi_k2"}
# multimodal wrappers: their text_config's types (gemma3_text, llama4_text) are checked
WRAPPERS = {"gemma3", "llama4"}

pytestmark = pytest.mark.xdist_group("hf_oracle")


@pytest.fixture(scope="module")
def records():
    return hf_oracle.generate(PER_FAMILY, SEED)


def test_every_claimed_family_is_generated():
    # the hand-written rows; the derived ones are checked by test_families_derived.py
    claimed = set(config_families.HAND_FAMILIES) - NOT_IN_TRANSFORMERS - WRAPPERS
    assert claimed == set(hf_oracle.GENERATORS)


def test_at_least_500_configs_in_both_spellings(records):
    assert len(records) >= 500
    forms = Counter(r["form"] for r in records)
    assert forms["v4"] >= 200 and forms["v5"] >= 200
    # the spellings that differ between Transformers 4 and 5 are both exercised
    v5 = [json.dumps(r["config"]) for r in records if r["form"] == "v5"]
    v4 = [json.dumps(r["config"]) for r in records if r["form"] == "v4"]
    for five, four in (('"dtype"', '"torch_dtype"'), ('"rope_parameters"', '"rope_theta"'),
                       ('"num_local_experts"', '"num_experts"')):
        assert any(five in c for c in v5) and any(four in c for c in v4), (five, four)


def test_the_core_equals_transformers_on_every_generated_config(records):
    misses = {}
    for i, rec in enumerate(records):
        diff = hf_oracle.differences(rec)
        if diff:
            misses[f"{i} {rec['family']} ({rec['form']})"] = diff
    assert not misses, json.dumps(misses, indent=1)[:4000]


def test_sliding_windows_moe_and_mla_are_among_them(records):
    shapes = [costs.ModelShape.from_config(r["config"]) for r in records]
    assert sum(1 for m in shapes if m.sliding_layers and m.sliding_layers < m.layers) >= 10
    assert sum(1 for m in shapes if m.num_experts and m.dense_layers) >= 10
    assert sum(1 for m in shapes if m.mla and m.q_lora_rank is None) >= 3
    assert sum(1 for m in shapes if m.small_params == 0) >= 1  # OLMo: weightless norms


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.stem)
def test_hand_typed_hub_files(path):
    [truth] = hf_oracle.check_files([str(path)])
    cfg = json.loads(path.read_text())
    family = cfg["model_type"] if cfg["model_type"] != "gemma3" else "gemma3_text"
    rec = {"family": family, "config": cfg, "truth": truth["truth"]}
    assert hf_oracle.differences(rec) == {}


# --- the misses the audit found, each by name ------------------------------------------------

def _qwen3_moe_v5() -> dict:  # Qwen3-30B-A3B as Transformers 5 writes it
    return {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144,
            "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
            "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
            "num_local_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
            "mlp_only_layers": [], "tie_word_embeddings": False}


def test_qwen3_moe_as_transformers_5_writes_it():
    v5 = costs.ModelShape.from_config(_qwen3_moe_v5())
    v4_cfg = {k if k != "num_local_experts" else "num_experts": v
              for k, v in _qwen3_moe_v5().items()}
    v4 = costs.ModelShape.from_config(v4_cfg)
    assert v5.moe_intermediate == 768  # not intermediate_size, Mixtral's reading
    assert costs.total_params(v5) == costs.total_params(v4)
    assert costs.matmul_params(v5) == costs.matmul_params(v4)
    assert round(costs.total_params(v5) / 1e9, 1) == 30.5  # the model card: 30.5B in total


@pytest.mark.parametrize("model_type", ["gpt_bigcode", "codegen"])
def test_null_n_inner_is_four_times_n_embd(model_type):
    cfg = {"model_type": model_type, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": None,
           "vocab_size": 100, "n_positions": 128}
    assert costs.ModelShape.from_config(cfg).intermediate == 256


def test_mpt_is_counted_as_transformers_builds_it_and_says_so():
    cfg = {"model_type": "mpt", "d_model": 64, "n_layers": 2, "n_heads": 4, "vocab_size": 100,
           "expansion_ratio": 2, "no_bias": False, "attn_config": {"kv_n_heads": 2}}
    m = costs.ModelShape.from_config(cfg)
    assert (m.intermediate, m.kv_heads) == (256, 4)
    said = " ".join(m.notes)
    for field in ("expansion_ratio", "attn_config.kv_n_heads", "no_bias"):
        assert f"{field} is" in said


def test_bloom_7b1_total_is_the_model_cards():
    cfg = {"model_type": "bloom", "hidden_size": 4096, "n_layer": 30, "n_head": 32,
           "vocab_size": 250880}
    assert costs.total_params(costs.ModelShape.from_config(cfg)) == 7_069_016_064


def test_the_javascript_twin_equals_transformers_too(records):
    from tests import test_cost_model_js as twin

    calls = [["total_params", "M"], ["matmul_params", "M"], ["kv_bytes_per_token", "M"]]
    cases = [{**twin.text_case("family", r["config"], calls=calls), "id": i}
             for i, r in enumerate(records)]
    js = twin.run_js(cases)
    python = [twin.run_py(c) for c in cases]
    assert not twin.compare(cases, python, js)
    # and the Python side is the truth (the test above), so the JavaScript is too: spot-check
    # the total against the model's own count directly
    for rec, out in zip(records, js):
        assert int(out["calls"][0]["value"]["i"]) == rec["truth"]["total"], rec["config"]


# --- fields left out, as Hub files often are ---------------------------------------------------

def without(rec: dict, keys) -> dict:
    return {**rec, "config": {k: v for k, v in rec["config"].items() if k not in keys}}


def differences_or_refusal(rec: dict) -> dict:
    try:
        return hf_oracle.differences(rec)
    except costs.ConfigError as e:  # the core asks for a field the class does without
        return {"refused": str(e)}


def left_out_misses(records) -> dict:  # -> {record and field: differences} where the core
    # reads a field's absence otherwise than Transformers' class does; a size the core
    # requires may be refused instead ("a size a config forgot is an error")
    misses = {}
    for i, rec in enumerate(records):
        optional = hf_oracle.optional_fields(rec["family"], rec["config"])
        for key in rec["left_out"]:
            diff = differences_or_refusal(without(rec, {key}))
            if diff and not (key not in optional and set(diff) == {"refused"}
                             and diff["refused"].startswith(f"{key}: is missing")):
                misses[f"{i} {rec['family']} without {key}"] = diff
        if rec["sparse"] is not None:
            diff = differences_or_refusal({**rec, "config": rec["sparse"]})
            if diff:
                misses[f"{i} {rec['family']} with every default left out"] = diff
    return misses


def test_each_field_left_out_reads_as_the_class_default(records):
    # Transformers 5 writes every default (to_diff_dict); a Hub file often leaves fields out,
    # and then the core's "absent" rule must be the config class's default
    misses = left_out_misses(records)
    assert not misses, json.dumps(misses, indent=1)[:4000]


def test_the_flags_that_change_what_a_model_stores_are_left_out_somewhere(records):
    seen = {(r["family"], k) for r in records for k in r["left_out"]}
    for pair in (("starcoder2", "use_bias"), ("llama", "attention_bias"), ("llama", "mlp_bias"),
                 ("qwen3", "attention_bias"), ("phi", "qk_layernorm"), ("mpt", "no_bias"),
                 ("falcon", "multi_query"), ("gpt2", "n_inner"), ("llama", "tie_word_embeddings")):
        assert pair in seen, pair
    sparse = [r for r in records if r["sparse"] is not None]
    assert len(sparse) >= 250
    # most files lose a field or more that the core reads as optional
    assert sum(len(r["sparse"]) < len(r["config"]) for r in sparse) >= 0.6 * len(sparse)


def test_the_javascript_twin_reads_left_out_fields_as_the_core_does(records):
    from tests import test_cost_model_js as twin

    calls = [["total_params", "M"], ["matmul_params", "M"], ["kv_bytes_per_token", "M"]]
    cases = [{**twin.text_case("family", r["sparse"], calls=calls), "id": i}
             for i, r in enumerate(records) if r["sparse"] is not None]
    assert not twin.compare(cases, [twin.run_py(c) for c in cases], twin.run_js(cases))


def test_a_flipped_class_default_is_caught(records, monkeypatch):
    # positive control: StarCoder2's use_bias read as false when absent (its class default is
    # true) must miss on a record that left use_bias out
    entry = config_families.DERIVED["types"]["starcoder2"]
    assert entry["fills"]["use_bias"] is True
    monkeypatch.setitem(entry, "fills", {**entry["fills"], "use_bias": False})
    starcoder = [r for r in records if r["family"] == "starcoder2"]
    assert any("without use_bias" in k for k in left_out_misses(starcoder))


@pytest.mark.parametrize("family", ["gemma3_text", "qwen3_next", "deepseek_v3", "mixtral",
                                    "bamba"])
def test_a_small_models_cache_is_the_same_on_the_cpu_as_on_meta_tensors(family):
    # truth() runs a small model's forwards on the CPU: sliding windows, hybrid layers, latent
    # attention and experts must cache the same shapes there as on meta tensors
    import random
    r = random.Random(SEED)
    drawn = None
    while drawn is None:
        drawn = hf_oracle.make(family, r)
    config = drawn[0]
    model = hf_oracle.build(config)
    assert sum(p.numel() for p in model.parameters()) <= hf_oracle.CPU_FORWARD_PARAMS
    on_cpu = hf_oracle._cache_of(config, model, "cpu")
    assert on_cpu == hf_oracle._cache_of(config, model, "meta")
    assert any(keys for keys, _, _ in on_cpu[1])  # a layer cached keys
