"""The family table's derived data (attention_core/families_derived.json) against Transformers.

scripts/derive_families.py builds every causal LM Transformers ships, at random small sizes, on
the meta device and writes what it reads off them: each type's class defaults, a row for each
type the hand-written table lacks, and which counts the core gets exactly. These tests rebuild
a sample of it against the pinned Transformers (a sample: the whole run takes minutes; the
seed is printed, so a failure can be rerun), and check the counts it claims on draws it never
saw. Without torch or Transformers they fail: the dev extra is part of `make test`.
"""

import json
import random
import sys
import time
from pathlib import Path

import pytest
import transformers

from attention_core import config_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import derive_families

pytestmark = pytest.mark.xdist_group("families_derived")  # the rebuilt sample, once
COMMITTED = json.loads(derive_families.OUT.read_text())
SAMPLE = 4  # types rebuilt per run, beside the named ones


def _seed() -> int:
    seed = time.time_ns() % 100_000
    print(f"sample seed {seed}")
    return seed


def test_the_data_is_read_off_the_pinned_transformers():
    assert COMMITTED["transformers"] == transformers.__version__
    assert config_families.TRANSFORMERS == transformers.__version__


def test_every_causal_lm_transformers_ships_is_held():
    assert set(COMMITTED["types"]) == set(derive_families.model_types())
    assert len(COMMITTED["types"]) >= 180
    # the text models of image-text-to-text types are in too
    assert {"llama4_text", "qwen3_vl_text", "gemma3_text"} <= set(COMMITTED["types"])


@pytest.fixture(scope="module")
def rebuilt():
    seed = _seed()
    rows = sorted(t for t, e in COMMITTED["types"].items() if "row" in e)
    # a derived row, a hand-written one and an encoder-decoder always; a few more at random
    named = ["gpt_oss", "smollm3", "bart"]
    picked = named + random.Random(seed).sample([t for t in rows if t not in named], SAMPLE)
    return seed, derive_families.derive_all(picked, log=sys.stdout)


def test_a_sample_rebuilds_to_the_committed_entries(rebuilt):
    seed, doc = rebuilt
    assert derive_families.stale(COMMITTED, doc) == [], f"seed {seed}: rerun the script"


def test_a_hand_edited_row_is_found_stale(rebuilt):
    _, doc = rebuilt
    edited = json.loads(json.dumps(COMMITTED))
    row = edited["types"]["gpt_oss"]["row"]
    row["tensors"][0]["size"].append([1])  # one parameter more
    assert derive_families.stale(edited, doc) == ["gpt_oss"]
    edited = json.loads(json.dumps(COMMITTED))
    edited["types"]["smollm3"]["defaults"]["tie_word_embeddings"] = False
    assert derive_families.stale(edited, doc) == ["smollm3"]


def test_the_core_builds_the_committed_rows():
    for t, e in COMMITTED["types"].items():
        if "row" in e and t not in config_families.HAND_FAMILIES:
            assert config_families.FAMILIES[t] == {**e["row"], "exact": e["exact"]}, t
    for t, row in config_families.HAND_FAMILIES.items():  # the hand-written rows win
        assert config_families.FAMILIES[t]["tensors"] == row["tensors"], t


def test_every_count_claimed_exact_holds_on_fresh_draws():
    """The widened oracle: for a sample of the types with a row, random configs the fit never
    saw, with random flags; whatever the data calls exact equals Transformers' own model."""
    seed = _seed()
    typed = sorted(t for t, e in COMMITTED["types"].items()
                   if "row" in e or (t in config_families.HAND_FAMILIES and e.get("builds")))
    for t in random.Random(seed).sample(typed, 6):
        entry = COMMITTED["types"][t]
        got = derive_families.check(t, random.Random(seed), entry)
        for count, claimed in entry["exact"].items():
            assert got[count] or not claimed, f"seed {seed}: {t}'s {count} is not exact"


def test_most_types_transformers_ships_are_counted_exactly():
    built = [e for e in COMMITTED["types"].values() if e.get("builds")]
    exact = [e for e in built if all(e["exact"].values())]
    # a floor, so a change that loses families is seen; the README states the current counts
    assert len(built) >= 160 and len(exact) >= 60, (len(built), len(exact))


def test_a_plain_mlp_is_fitted_as_plain():
    """An MLP of two matrices (BERT's, CTRL's) fitted as a gated one would need a term of
    minus one matrix a layer, and the page would call it gated: the fit with fewer terms is
    kept, so no derived row takes a matrix back."""
    back = [t for t, e in COMMITTED["types"].items() if "row" in e and any(
        term.get("matmul") and term["per"] == "layer"
        and term["size"] == [[-1, "hidden", "intermediate"]] for term in e["row"]["tensors"])]
    assert back == []
    for model_type in ("xlm-roberta", "ctrl", "persimmon", "apertus", "nanochat"):
        assert COMMITTED["types"][model_type]["row"]["mlp_matrices"] == 2, model_type
    for model_type in ("olmo3", "exaone4"):  # SwiGLU's gate, up and down
        assert COMMITTED["types"][model_type]["row"]["mlp_matrices"] == 3, model_type


def test_a_model_that_keeps_no_cache_is_found_by_its_forward():
    """GPT-1 keeps no cache; XLNet keeps its mems (in eval mode, as generation runs it), RWKV
    returns its state and RecurrentGemma holds its cache inside its layers: only GPT-1 is a
    type that keeps none, and the data says so of GPT-1 and XLM alone."""
    found = {t: derive_families.keeps_no_cache(t)
             for t in ("openai-gpt", "xlnet", "rwkv", "recurrent_gemma", "llama")}
    assert found == {"openai-gpt": True, "xlnet": False, "rwkv": False,
                     "recurrent_gemma": False, "llama": False}
    assert sorted(t for t, e in COMMITTED["types"].items()
                  if e.get("keeps_no_cache")) == ["openai-gpt", "xlm"]


def test_each_exact_count_holds_with_the_optional_fields_left_out():
    """Hub files leave fields out. On a config with every optional field left out that its
    class reads back the same (tests/hf_oracle.py `left_out`), each count the data calls exact
    still equals Transformers' model: the core reads each absence as the class's default. And
    the same config in Transformers 4's field names (hf_oracle.as_v4) counts the same."""
    seed = _seed()
    r = random.Random(seed)
    typed = sorted(t for t, e in COMMITTED["types"].items()
                   if e.get("builds") and any(e["exact"].values()))
    shorter = 0
    for t in r.sample(typed, 6):
        entry = COMMITTED["types"][t]
        got = derive_families.draw(t, r)
        if got is None:
            continue
        config, cfg = got
        _, sparse = derive_families.hf_oracle.left_out(t, config, cfg)  # before any forward
        shorter += len(sparse) < len(cfg)
        truth, core = derive_families.truth(config), derive_families.core(sparse)
        v4 = derive_families.core(derive_families.hf_oracle.as_v4(cfg))  # Transformers 4's names
        for count in ("total", "matmul"):
            assert core[count] == truth[count] or not entry["exact"][count], (
                f"seed {seed}: {t}'s {count} with {sorted(set(cfg) - set(sparse))} left out")
            assert v4[count] == truth[count] or not entry["exact"][count], (
                f"seed {seed}: {t}'s {count} in Transformers 4's names")
        # None: this draw's forward cannot run (a size its attention code assumes), so its
        # cache says nothing either way (the data's KV is checked where the forward runs)
        assert derive_families._kv_exact(t, config, sparse) is not False \
            or not entry["exact"]["kv"], (
            f"seed {seed}: {t}'s KV cache with {sorted(set(cfg) - set(sparse))} left out")
    assert shorter >= 3, f"seed {seed}: too few configs had an optional field to leave out"


def test_a_draw_whose_rope_would_turn_an_odd_number_of_dims_is_drawn_again():
    """RoPE turns a head's dims in pairs: StableLM's partial_rotary_factor of 0.25 over a head 12
    wide asks for 3, which no real model does and whose forward caches keys 15 wide. Such a draw
    is not used; a head 16 wide (4 dims) is, and so is a type that turns every dim."""
    from transformers import AutoConfig
    sizes = {"num_hidden_layers": 2, "intermediate_size": 40, "vocab_size": 300}
    odd = AutoConfig.for_model("stablelm", hidden_size=48, num_attention_heads=4, **sizes)
    even = AutoConfig.for_model("stablelm", hidden_size=64, num_attention_heads=4, **sizes)
    whole = AutoConfig.for_model("llama", hidden_size=48, num_attention_heads=4, **sizes)
    assert [derive_families._odd_rotary(c) for c in (odd, even, whole)] == [True, False, False]
    r = random.Random(7)
    for _ in range(5):
        config, _ = derive_families.draw("stablelm", r)
        assert not derive_families._odd_rotary(config)


def test_a_cache_meta_tensors_cannot_fill_is_read_off_a_forward_on_the_cpu():
    """BioGPT's positions ask a tensor for its value, which a meta tensor cannot give: its cache
    is read off the same small model with real weights on the CPU, and equals the core's,
    which by hand is 2 x hidden per layer and token (4 layers, 32 wide)."""
    import hf_oracle
    from transformers import AutoConfig

    from attention_core import costs
    config = AutoConfig.for_model("biogpt", hidden_size=32, num_attention_heads=4,
                                  num_hidden_layers=4, intermediate_size=40, vocab_size=300)
    model = hf_oracle.build(config)
    with pytest.raises(Exception, match="meta"):
        hf_oracle.forward_cache(model, hf_oracle.SHORT)
    truth = hf_oracle.truth(config)
    assert truth["kv_widths"] == [[32, 32]] * 4
    m = costs.ModelShape.from_config({**hf_oracle.written(config), "model_type": "biogpt"})
    assert costs.kv_bytes_per_token(m, 1) == 4 * 2 * 32


def test_a_size_the_draws_never_change_is_doubled_and_must_move_the_core_too():
    """MiniMax-M3's dense layers have their own width (dense_intermediate_size), which its
    derived row does not read: the draws keep the class's value, which the fit took as a
    constant. Doubled, Transformers' total moves and the core's does not: it is not shown
    exact. OPT's word_embed_proj_dim (OPT-350m: a 512-wide table in a 1,024-wide model), which
    the core reads, Llama's every size, and DeepSeek-V3.2's indexer and RoCBert's
    pronunciation and shape tables (their sizes drawn, and read by their rows) hold: they
    stay exact."""
    for model_type, holds in (("minimax_m3_vl_text", False), ("opt", True), ("llama", True),
                              ("deepseek_v32", True), ("roc_bert", True)):
        exact = {"total": True, "matmul": True, "kv": True}
        derive_families._undrawn_sizes_hold(model_type, random.Random(1), exact)
        assert exact["total"] is holds, model_type
        assert COMMITTED["types"][model_type]["exact"]["total"] is holds, model_type


def test_a_fit_whose_columns_fill_the_draws_rank_is_found_term_by_term():
    """GLM-4.7-Flash-lite (MoE, latent attention, dense and MoE layers in any order): 28 of
    the basis's columns are independent on its 28 draws, so the one least-squares solve over
    them fits anything, in fractions. Its norms, 2 x hidden a layer, the final one, and
    q_a_layernorm and kv_a_layernorm (q_lora_rank and kv_lora_rank wide, a layer), are then
    found a column at a time. Without that second try, nothing fits."""
    r = random.Random(derive_families.SEED * 1_000_003 + 1)
    draws = derive_families._draws("glm4_moe_lite", r, derive_families.FIT_DRAWS)
    truths = [derive_families.truth(c) for c, _ in draws]
    row = derive_families._row(3, derive_families.class_defaults("glm4_moe_lite"), [], {})
    shapes, d_matmul, d_total = derive_families._residuals(draws, truths, row, "glm4_moe_lite")
    stored = [t - m for t, m in zip(d_total, d_matmul)]
    by_hand = [s["layers"] * (2 * s["hidden"] + s["q_lora_rank"] + s["kv_lora_rank"])
               + s["hidden"] for s in shapes]
    assert stored == by_hand
    assert sorted(derive_families.fit(shapes, stored)) == [
        ("layer", ["hidden"], 2), ("layer", ["kv_lora_rank"], 1), ("layer", ["q_lora_rank"], 1),
        ("model", ["hidden"], 1)]
    saved = derive_families._sparse_fit
    derive_families._sparse_fit = lambda *a: None
    try:
        assert derive_families.fit(shapes, stored) is None  # the one solve alone fails
    finally:
        derive_families._sparse_fit = saved
    assert COMMITTED["types"]["glm4_moe_lite"]["exact"] == {"kv": True, "matmul": True,
                                                            "total": True}
