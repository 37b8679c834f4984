"""The config.json people paste, one family at a time, against the figures its makers publish.

Each fixture under tests/fixtures/configs/ is a config.json as the Hugging Face Hub serves it,
nulls and absent fields included. The expected figures are the model card's or the paper's,
named beside each; where a card gives no figure the source says so (and what it follows).
They are never recomputed with the code under test.
"""

import copy
import json
from pathlib import Path

import pytest

from attention_core import config_families
from attention_core.config_families import BASE, FAMILIES, FIGURES
from attention_core.costs import (
    DTYPE_BYTES,
    ConfigError,
    ModelShape,
    decode_step_arithmetic_intensity,
    dtype_bytes,
    kv_bytes_per_token,
    kv_cache_bytes,
    kv_outweighs_weights_context,
    parse_config_text,
    total_params,
)

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def fixture(name: str) -> dict:  # tests/fixtures/configs/<name>.json -> dict
    return json.loads((CONFIGS / f"{name}.json").read_text())


def read(name: str, **changes) -> ModelShape:  # a fixture, fields changed, as the CLI reads it
    cfg = {**fixture(name), **changes}
    return ModelShape.from_config(parse_config_text(json.dumps(cfg)))


def error(name: str, **changes) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        read(name, **changes)
    return e.value


def without(name: str, *keys: str) -> ModelShape:
    cfg = {k: v for k, v in fixture(name).items() if k not in keys}
    return ModelShape.from_config(parse_config_text(json.dumps(cfg)))


def figures(m: ModelShape) -> tuple:
    return m.layers, m.heads, m.kv_heads, m.head_dim, m.intermediate


# --- each family: (fixture, layers, query heads, KV heads, head width, MLP width) -----------

FAMILY_FIGURES = [
    # Llama 3 paper (The Llama 3 Herd of Models), Table 3, 70B: 80 layers, model dimension
    # 8,192, FFN dimension 28,672, 64 attention heads, 8 key/value heads (8192 / 64 = 128)
    ("llama-3-70b", 80, 64, 8, 128, 28_672),
    # Mistral 7B paper, Table 1: n_layers 32, n_heads 32, n_kv_heads 8, head_dim 128,
    # hidden_dim 14336
    ("mistral-7b-v0.1", 32, 32, 8, 128, 14_336),
    # Qwen3-8B model card: 36 layers, 32 query heads and 8 KV heads. The card gives no widths;
    # the config's head_dim (128) and intermediate_size (12,288) are what it publishes.
    ("qwen3-8b", 36, 32, 8, 128, 12_288),
    # Qwen2.5 technical report, Table 1, 7B: 28 layers, 28 query heads and 4 KV heads; the
    # AWQ upload's config keeps the widths (3,584 / 28 = 128; intermediate 18,944)
    ("qwen2.5-7b-instruct-awq", 28, 28, 4, 128, 18_944),
    # Gemma paper (2024), Table 1, 7B: 28 layers, 16 heads, 16 KV heads, head size 256,
    # feedforward hidden dims 49,152, which counts the gate and the up projection: 2 x 24,576
    ("gemma-7b", 28, 16, 16, 256, 49_152 // 2),
    # Gemma 2 paper, Table 1, 9B: 42 layers, 16 heads, 8 KV heads, head size 256,
    # feedforward dim 28,672 (gate and up: 2 x 14,336)
    ("gemma-2-9b", 42, 16, 8, 256, 28_672 // 2),
    # Gemma 3 1B (google/gemma-3-1b-it): the published config's own figures; the Gemma 3
    # report's parameter counts for it are checked below
    ("gemma-3-1b-it", 26, 4, 1, 256, 6_912),
    # Gemma 3 4B (google/gemma-3-4b-it): its text_config gives only 34 layers, hidden 2,560 and
    # MLP 10,240; heads 8, KV heads 4 and head width 256 are Gemma3TextConfig's defaults, which
    # the report's 3,209M non-embedding parameters (below) confirm
    ("gemma-3-4b-it", 34, 8, 4, 256, 10_240),
    # Phi-3 technical report: phi-3-mini has 32 layers, 32 heads, hidden dimension 3,072
    # (3072 / 32 = 96 wide heads, one KV head each); MLP 8,192 is the published config's
    ("phi-3-mini-4k-instruct", 32, 32, 32, 96, 8_192),
    # OLMo paper (Groeneveld et al. 2024), Table 1, 7B: d_model 4096, 32 heads, 32 layers,
    # MLP hidden size 22,016 (SwiGLU: gate and up, 2 x 11,008)
    ("olmo-7b-hf", 32, 32, 32, 128, 22_016 // 2),
    # GPT-2 small (Radford et al. 2019; the openai-community/gpt2 card): 12 layers, 12 heads,
    # d_model 768; n_inner absent means 4 x 768
    ("gpt2", 12, 12, 12, 64, 4 * 768),
    # GPT-J-6B model card: n_layers 28, n_heads 16, d_head 256, d_ff 16,384
    ("gpt-j-6b", 28, 16, 16, 256, 16_384),
    # GPT-Neo 1.3B (EleutherAI/gpt-neo-1.3B): 24 layers and 16 heads of a 2,048-wide model,
    # as its config names them (num_layers, num_heads); GPT-3's 4 x d_model MLP
    ("gpt-neo-1.3b", 24, 16, 16, 128, 4 * 2048),
    # OPT paper (Zhang et al. 2022), Table 1, 13B: 40 layers, 40 heads, d_model 5,120;
    # OPT's FFN is GPT-3's 4 x d_model (ffn_dim 20,480)
    ("opt-13b", 40, 40, 40, 128, 4 * 5120),
    # Pythia paper (Biderman et al. 2023), Table 1, 1.4B: 24 layers, model dim 2,048, 16 heads;
    # GPT-NeoX's 4 x d_model MLP
    ("pythia-1.4b", 24, 16, 16, 128, 4 * 2048),
    # Falcon-7B model card: 32 layers, d_model 4,544, head_dim 64 (71 heads), multiquery: one
    # KV head; Falcon's MLP is 4 x d_model
    ("falcon-7b", 32, 4544 // 64, 1, 64, 4 * 4544),
    # Falcon-40B model card: 60 layers, d_model 8,192, head_dim 64 (128 heads); the Falcon
    # series paper's multigroup attention: 8 KV heads
    ("falcon-40b", 60, 8192 // 64, 8, 64, 4 * 8192),
    # BLOOM-560m model card: 24 layers, 16 attention heads, hidden layers 1,024-dimensional;
    # BLOOM's MLP is 4 x hidden
    ("bloom-560m", 24, 16, 16, 64, 4 * 1024),
    # MPT-7B model card: n_layers 32, n_heads 32, d_model 4,096; expansion_ratio 4
    ("mpt-7b", 32, 32, 32, 128, 4 * 4096),
]


@pytest.mark.parametrize("name, layers, heads, kv_heads, head_dim, mlp", FAMILY_FIGURES,
                         ids=[f[0] for f in FAMILY_FIGURES])
def test_each_family_reads_its_published_figures(name, layers, heads, kv_heads, head_dim, mlp):
    assert figures(read(name)) == (layers, heads, kv_heads, head_dim, mlp)


def test_every_fixture_has_a_figures_row():
    assert {f[0] for f in FAMILY_FIGURES} == {p.stem for p in CONFIGS.glob("*.json")}


@pytest.mark.parametrize("name, hidden, vocab", [
    ("falcon-7b", 4544, 65_024), ("falcon-40b", 8192, 65_024),  # the Falcon cards
    ("mpt-7b", 4096, 50_432),  # the MPT-7B card: vocab size 50,432
    ("gpt-j-6b", 4096, 50_400),  # the GPT-J card: n_vocab 50,257 / 50,400 (padded)
    ("phi-3-mini-4k-instruct", 3072, 32_064),  # the Phi-3 report: vocabulary 32,064
])
def test_hidden_and_vocab(name, hidden, vocab):
    m = read(name)
    assert (m.hidden, m.vocab) == (hidden, vocab)


@pytest.mark.parametrize("name, total, rel", [
    ("bloom-560m", 559_214_592, 0),  # the BLOOM-560m card, to the parameter
    # the GPT-J-6B card; Transformers' model holds 6,050,882,784 (tests/test_hf_oracle.py),
    # 2,498,560 fewer than the card counts
    ("gpt-j-6b", 6_053_381_344, 1e-3),
    ("phi-3-mini-4k-instruct", 3.8e9, 0.01),  # the Phi-3 report: 3.8B
])
def test_published_totals(name, total, rel):
    assert total_params(read(name)) == pytest.approx(total, rel=rel)


@pytest.mark.parametrize("name, non_embedding, rel", [
    ("gemma-7b", 7_751_248_896, 1e-6),  # Gemma paper, Table 2: 7B non-embedding parameters
    ("gemma-2-9b", 8_324_201_984, 1e-3),  # Gemma 2 paper, Table 2: 9B
    ("gemma-3-4b-it", 3_209e6, 1e-3),  # Gemma 3 report, Table 1: 4B, 3,209M non-embedding
    ("gemma-3-1b-it", 698e6, 1e-3),  # Gemma 3 report, Table 1: 1B, 698M
])
def test_gemma_non_embedding_parameters(name, non_embedding, rel):
    m = read(name)
    assert m.tied  # Gemma ties lm_head to the embedding (absent field: the family default)
    assert total_params(m) - m.vocab * m.hidden == pytest.approx(non_embedding, rel=rel)


def test_pythia_non_embedding_parameters():
    # Pythia paper (Biderman et al. 2023), Table 1: 1.4B has 1,208,602,624 non-embedding
    # parameters, biases and norms included; untied, so the embedding and lm_head both go
    m = read("pythia-1.4b")
    embeddings = 2 * m.vocab * m.hidden
    assert total_params(m) - embeddings == 1_208_602_624


# --- the defaults each family relies on -----------------------------------------------------

def test_tied_embeddings_follow_the_family_default_when_absent():
    # OPT, Falcon, BLOOM, MPT and GPT-Neo share lm_head with the embedding; GPT-NeoX does not
    for name in ("opt-13b", "falcon-7b", "bloom-560m", "mpt-7b", "gpt-neo-1.3b", "gemma-7b"):
        assert "tie_word_embeddings" not in fixture(name)
        m = read(name)
        assert m.tied, name
        assert not any("tie_word_embeddings" in note for note in m.notes), name  # no guess
    assert not without("pythia-1.4b", "tie_word_embeddings").tied
    assert not without("llama-3-70b", "tie_word_embeddings").tied


# bigcode/starcoder2-3b config.json, the fields read, use_bias left out: Starcoder2Config's
# default is use_bias=True (and tie_word_embeddings=True), so a config without it has biases
STARCODER2_3B = {"model_type": "starcoder2", "hidden_size": 3072, "intermediate_size": 12288,
                 "num_attention_heads": 24, "num_key_value_heads": 2, "num_hidden_layers": 30,
                 "vocab_size": 49152, "max_position_embeddings": 16384,
                 "sliding_window": 4096}


def test_starcoder2_counts_biases_unless_use_bias_is_false():
    # by hand, head_dim 3,072 / 24 = 128, KV width 2 x 128 = 256:
    #   attention weights: q 3,072 x 3,072 + k, v 2 x 3,072 x 256 + o 3,072 x 3,072
    #                      = 9,437,184 + 1,572,864 + 9,437,184          =    20,447,232
    #   MLP (c_fc, c_proj): 2 x 3,072 x 12,288                          =    75,497,472
    #   30 layers: 30 x 95,944,704                                      = 2,878,341,120
    #   embedding, lm_head tied: 49,152 x 3,072                         =   150,994,944
    #   LayerNorms, weight and bias: 30 x 2 x 2 x 3,072 + final 2 x 3,072 =     374,784
    #   biases per layer: q 3,072 + k 256 + v 256 + o 3,072 + c_fc 12,288 + c_proj 3,072
    #                     = 22,016; 30 layers                           =       660,480
    biases = 30 * (3072 + 256 + 256 + 3072 + 12288 + 3072)
    assert biases == 660_480
    with_biases = 2_878_341_120 + 150_994_944 + 374_784 + 660_480
    assert with_biases == 3_030_371_328  # "3B": StarCoder2-3B
    assert "use_bias" not in STARCODER2_3B
    assert total_params(ModelShape.from_config(STARCODER2_3B)) == with_biases
    assert total_params(ModelShape.from_config({**STARCODER2_3B, "use_bias": True})) == with_biases
    assert (total_params(ModelShape.from_config({**STARCODER2_3B, "use_bias": False}))
            == with_biases - biases == 3_029_710_848)


def test_falcon_kv_heads_follow_falcon_config():
    assert read("falcon-7b").kv_heads == 1  # multi_query
    assert without("falcon-7b", "multi_query").kv_heads == 1  # FalconConfig: multi_query=True
    plain = read("falcon-7b", multi_query=False, num_kv_heads=8)
    assert plain.kv_heads == 71  # neither flag: one KV head per query head (3 x hidden qkv)
    assert read("falcon-40b").kv_heads == 8  # new_decoder_architecture reads num_kv_heads
    assert without("falcon-40b", "num_kv_heads").kv_heads == 128  # FalconConfig's default
    assert read("falcon-40b", multi_query=True).kv_heads == 8  # the new layout wins
    assert error("falcon-40b", num_kv_heads=7).field == "num_kv_heads"


def test_falcon_first_uploads():
    # tiiuae/falcon-40b before Transformers took Falcon in: model_type RefinedWeb, n_head_kv
    old = {k: v for k, v in fixture("falcon-40b").items()
           if k not in ("num_kv_heads", "new_decoder_architecture", "num_attention_heads",
                        "num_hidden_layers")}
    old.update(model_type="RefinedWeb", n_head=128, n_head_kv=8, n_layer=60)
    m = ModelShape.from_config(old)
    assert figures(m) == (60, 128, 8, 64, 4 * 8192)
    old7 = {**fixture("falcon-7b"), "model_type": "RefinedWebModel"}
    assert ModelShape.from_config(old7).kv_heads == 1


def test_falcon_ffn_hidden_size_when_given():
    assert read("falcon-7b", ffn_hidden_size=16_384).intermediate == 16_384


def test_gpt_j_and_gpt_neo_null_widths_are_four_times_hidden():
    assert fixture("gpt-j-6b")["n_inner"] is None
    assert read("gpt-j-6b", n_inner=8192).intermediate == 8192
    assert fixture("gpt-neo-1.3b")["intermediate_size"] is None
    assert without("gpt-neo-1.3b", "intermediate_size").intermediate == 4 * 2048


def test_gpt_neo_local_layers_are_a_256_token_window():
    m = read("gpt-neo-1.3b")  # GPT-Neo alternates global and local attention, window 256
    assert (m.sliding_window, m.sliding_layers) == (256, 12)
    assert without("gpt-neo-1.3b", "window_size").sliding_window == 256  # GPTNeoConfig's
    all_global = read("gpt-neo-1.3b", attention_types=[[["global"], 24]])
    assert all_global.sliding_window is None
    assert error("gpt-neo-1.3b", attention_types=[[["global", "local"], 6]]).field == (
        "attention_types")
    assert error("gpt-neo-1.3b", attention_types=[["local", 24]]).field == "attention_types"


def test_mpt_names_and_what_transformers_ignores():
    m = read("mpt-7b")
    assert (m.hidden, m.max_positions, m.mlp_matrices) == (4096, 2048, 2)
    assert not any("Transformers' MPT" in n for n in m.notes)  # the published file: nothing
    attn = {**fixture("mpt-7b")["attn_config"], "kv_n_heads": 8}
    grouped = read("mpt-7b", attn_config=attn)  # llm-foundry's GQA, which Transformers ignores
    assert grouped.kv_heads == 32 and any("kv_n_heads is 8" in n for n in grouped.notes)
    assert read("mpt-7b", expansion_ratio=None).intermediate == 4 * 4096
    narrow = read("mpt-7b", expansion_ratio=2.5)
    assert narrow.intermediate == 4 * 4096 and any("expansion_ratio is 2.5" in n
                                                   for n in narrow.notes)
    assert not any("expansion_ratio" in n for n in read("mpt-7b", expansion_ratio=4.0).notes)


def test_bloom_ignores_its_n_inner():
    assert fixture("bloom-560m")["n_inner"] is None
    m = read("bloom-560m", n_inner=123)  # BloomConfig has no such field: 4 x hidden
    assert m.intermediate == 4 * 1024 and m.max_positions is None  # ALiBi: no table


def test_gemma_3_4b_multimodal_reads_its_text_config():
    m = read("gemma-3-4b-it")
    assert any("text_config" in note for note in m.notes)
    # the Gemma 3 report: five local layers per global one, local window 1,024 tokens
    assert (m.sliding_window, m.sliding_layers) == (1024, 34 - 34 // 6)
    assert m.vocab == 262_208  # Gemma3TextConfig's default: the file has no vocab_size


def test_gemma_2_alternates_local_and_global():
    m = read("gemma-2-9b")  # Gemma 2 paper: local sliding window 4096 every other layer
    assert (m.sliding_window, m.sliding_layers) == (4096, 21)


# --- the errors a config that truly lacks a figure gets ---------------------------------------

ALSO_N_LAYER = "num_hidden_layers: is missing (also looked for n_layer)"
ALSO_N_INNER = "intermediate_size: is missing (also looked for n_inner)"


@pytest.mark.parametrize("name, drop, message", [
    ("opt-13b", "ffn_dim", "ffn_dim: is missing"),
    ("mpt-7b", "d_model", "d_model: is missing"),
    ("mpt-7b", "n_layers", "n_layers: is missing"),
    ("gpt-neo-1.3b", "num_heads", "num_heads: is missing"),
    ("bloom-560m", "n_layer", "n_layer: is missing (also looked for num_hidden_layers)"),
    ("falcon-7b", "hidden_size", "hidden_size: is missing (also looked for n_embed)"),
    ("llama-3-70b", "num_hidden_layers", ALSO_N_LAYER),
    ("llama-3-70b", "intermediate_size", ALSO_N_INNER),
    ("gpt-j-6b", "vocab_size", "vocab_size: is missing"),
])
def test_a_missing_figure_names_the_field_and_the_names_tried(name, drop, message):
    with pytest.raises(ConfigError) as e:
        without(name, drop)
    assert str(e.value) == message


def test_a_null_required_figure_says_so():
    assert str(error("opt-13b", ffn_dim=None)) == "ffn_dim: is null; it is required"


def test_flags_must_be_booleans():
    e = error("falcon-7b", multi_query="yes")
    assert str(e) == 'multi_query: must be true or false, got "yes"'


# --- the table itself: data a JavaScript port can embed --------------------------------------

DEFAULT_KINDS = ({"value"}, {"same_as"}, {"times", "of"}, {"divide", "by"})


CONDITION_KINDS = ({"flag", "default"}, {"flag", "default", "is"}, {"present"},
                   {"field", "in"}, {"field", "not_in"})


def test_every_tensor_term_is_well_formed():
    import dataclasses
    figures = {f.name for f in dataclasses.fields(ModelShape)}
    for name, row in {**FAMILIES, "(unknown)": config_families.UNKNOWN}.items():
        # every hand-written family has at least its norms; a derived row may fit none
        assert row["tensors"] or row.get("derived"), name
        for term in row["tensors"]:
            assert set(term) <= {"what", "per", "size", "when", "matmul"}, (name, term)
            assert term["per"] in ("model", "layer", "dense_layer", "moe_layer",
                                   "shared_layer", "attention_layer", "uncached_layer",
                                   "indexer_layer"), (
                name, term)
            for product in term["size"]:
                for f in product:
                    assert (isinstance(f, int) or isinstance(f, str) and f in figures
                            or isinstance(f, dict) and set(f) in ({"field", "default"},
                                                                  {"field"}, {"field", "auto"})
                            ), (name, f)
                    if isinstance(f, dict) and "auto" in f:  # ceil(figure / k)
                        assert f["auto"][0] in figures and f["auto"][1] >= 1, (name, f)
            for c in term["when"]:
                assert set(c) in CONDITION_KINDS, (name, c)
        for note in row["notes"]:
            assert set(note) == {"field", "expect", "note"}, (name, note)
    assert FAMILIES["olmo"]["tensors"] and not any(  # OLMo: biases only, no norm weights
        "norm" in t["what"] for t in FAMILIES["olmo"]["tensors"])


def rules_of(rule):  # a rule and every rule its cases lead to
    yield rule
    for case in rule.get("cases", ()):
        assert set(case) == {"if", "if_absent", "then"} and isinstance(case["if_absent"], bool)
        yield from rules_of(case["then"])


def test_the_table_is_plain_json():
    table = {"FIGURES": FIGURES, "BASE": BASE, "FAMILIES": FAMILIES}
    assert json.loads(json.dumps(table)) == copy.deepcopy(table)


def test_every_rule_is_well_formed():
    rows = [{"figures": BASE}, *FAMILIES.values()]
    for row in rows:
        for figure, rule in row["figures"].items():
            earlier = FIGURES[:FIGURES.index(figure)]
            for r in rules_of(rule):
                assert set(r) <= {"names", "default", "cases"} and isinstance(r["names"], list)
                assert r["names"] or "default" in r, (figure, r)  # something to name or use
                if "default" in r:
                    d = r["default"]
                    assert set(d) in DEFAULT_KINDS, d
                    used = [d[k] for k in ("same_as", "of", "divide", "by") if k in d]
                    assert all(u in earlier for u in used), (figure, d)
    for row in FAMILIES.values():
        assert row["mlp_matrices"] in (2, 3) and row["tied"] in (True, False, None)
        window = config_families.window_rule(row)
        assert set(window["default"]) == {"value"} and window["names"]
        assert set(window) <= {"names", "default", "layer_pattern", "layer_pattern_default",
                               "alternate", "pattern_default", "chunked", "rope_free"}


def test_the_families_people_paste_are_in_the_table():
    wanted = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3",
              "olmo", "olmo2", "gpt2", "gptj", "gpt_neo", "opt", "gpt_neox", "falcon", "bloom",
              "mpt", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"}
    assert wanted <= set(FAMILIES)


def test_an_unknown_family_reads_the_base_names_and_says_what_it_assumed():
    cfg = {**fixture("llama-3-70b"), "model_type": "mystery"}
    del cfg["tie_word_embeddings"]
    m = ModelShape.from_config(cfg)
    assert figures(m) == (80, 64, 8, 128, 28_672)
    assert any("'mystery' is not one this version knows" in n for n in m.notes)
    assert any("assumed untied" in n for n in m.notes)
    assert config_families.family("", {"n_embd": 768})[0] == "gpt2"  # GPT-2 without a type


# --- the KV cache in the dtype you serve ------------------------------------------------------

def test_scaling_book_llama_3_70b_kv_bytes_per_token():
    # "How to Scale Your Model" (jax-ml Scaling Book), inference chapter: LLaMA-3-70B holds
    # 327,680 bytes per token of KV cache in bf16, 163,840 in int8
    m = read("llama-3-70b")
    assert kv_bytes_per_token(m, dtype_bytes("bf16")) == 327_680
    assert kv_bytes_per_token(m, dtype_bytes("int8")) == 163_840


def test_vllm_paper_opt_13b_kv_bytes_per_token():
    # Kwon et al. 2023, "Efficient Memory Management for Large Language Model Serving with
    # PagedAttention": OPT-13B's KV cache takes 800 KB per token in fp16 (2 x 5120 x 40 x 2 B)
    m = read("opt-13b")
    assert kv_bytes_per_token(m, dtype_bytes("fp16")) == 819_200 == 800 * 1024


def test_dtypes():
    assert DTYPE_BYTES == {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp32": 4}
    with pytest.raises(ValueError, match="bf16, fp16, fp8, int8, fp32"):
        dtype_bytes("fp4")


def test_a_smaller_cache_takes_longer_to_outweigh_the_same_weights():
    m = read("llama-3-70b")  # no window: the cache grows linearly, so half the bytes per
    bf16 = kv_outweighs_weights_context(m)  # token doubles the context
    int8 = kv_outweighs_weights_context(m, 1, 1, weight_bytes_per_value=2)
    assert int8 == pytest.approx(2 * bf16)
    assert kv_outweighs_weights_context(m, 1, 1) == pytest.approx(bf16)  # both int8: as before
    assert kv_cache_bytes(m, 4096, bytes_per_value=1) * 2 == kv_cache_bytes(m, 4096)


def test_decode_step_intensity_is_about_the_batch_in_bf16():
    # Scaling Book, inference chapter: a decode step reads every weight once for the batch and
    # does 2 FLOPs per weight per sequence, so with short contexts its intensity is about B
    # FLOPs per byte in bf16, and int8 weights double it
    m = read("llama-3-70b")
    for users in (1, 8, 32):
        assert decode_step_arithmetic_intensity(m, 1, users) == pytest.approx(users, rel=0.02)
        assert decode_step_arithmetic_intensity(m, 1, users, weight_bytes_per_value=1) == (
            pytest.approx(2 * users, rel=0.02))
    # long contexts: each user's cache is read too, so the step moves toward memory
    assert decode_step_arithmetic_intensity(m, 100_000, 32) < 16
