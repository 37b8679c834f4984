"""Property-based fuzzing (hypothesis) of the two parsers that take text from strangers:
the config.json parser and the URL-state parser. Whatever comes in, the answer is a value
or a clear error (ConfigError / a note), never another exception, never a hang, and a value
that comes out is always one the page can show."""

import json
import math
import time

import param
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.kit import url_state
from app.panels.model_picker import read_config
from attention_core import costs

FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
SECONDS = 2.0  # any one input: parsed or refused within this

FIELDS = ["num_hidden_layers", "n_layer", "hidden_size", "n_embd", "num_attention_heads",
          "n_head", "num_key_value_heads", "head_dim", "intermediate_size", "n_inner",
          "vocab_size", "max_position_embeddings", "tie_word_embeddings", "model_type",
          "_name_or_path", "sliding_window", "use_sliding_window", "layer_types",
          "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_routed_experts",
          "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
          "text_config", "num_local_experts", "first_k_dense_replace", "mlp_only_layers"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**15, max_value=10**15),
    st.integers(min_value=1, max_value=200), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30), st.sampled_from(["llama", "gpt2", "qwen3_moe", "deepseek_v3",
                                           "<script>x</script>", "sliding_attention"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=30)
configs = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=14)


def assert_config_result(text):
    t0 = time.perf_counter()
    try:
        shape, cfg = read_config(text)
    except costs.ConfigError as e:
        assert isinstance(e.field, str) and e.field and isinstance(e.problem, str) and e.problem
        assert len(str(e)) < 1_000, "an error message that echoes the input"
    else:
        assert isinstance(cfg, dict)
        for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab"):
            value = getattr(shape, name)
            assert isinstance(value, int) and value >= 1, (name, value)
        assert shape.heads % shape.kv_heads == 0
        for n in (1, 4096):  # the numbers the cost panel shows are finite
            assert math.isfinite(float(costs.prefill_attention_share(shape, n)))
            assert math.isfinite(float(costs.kv_cache_bytes(shape, n)))
    assert time.perf_counter() - t0 < SECONDS


@FUZZ
@given(st.binary(max_size=2_000))
def test_any_bytes(data):
    assert_config_result(data)


@FUZZ
@given(st.text(max_size=2_000))
def test_any_text(text):
    assert_config_result(text)


@FUZZ
@given(configs)
def test_config_shaped_json(cfg):
    assert_config_result(json.dumps(cfg))


@FUZZ
@given(configs, st.sampled_from(FIELDS), st.sampled_from(
    ["NaN", "Infinity", "-Infinity", "1e999", "-0", "1e-999", "9" * 5000, '"\\ud800"', "[[[[[[",
     "[" * 3000 + "]" * 3000, '"\\u0000"', "true", "{}"]))
def test_config_with_a_hostile_token(cfg, field, token):
    text = json.dumps({**cfg, field: 0}).replace(f'"{field}": 0', f'"{field}": {token}', 1)
    assert_config_result(text)


@FUZZ
@given(configs)
def test_a_valid_base_with_fuzzed_fields_still_parses_or_names_a_field(cfg):
    base = dict(costs.PRESETS["llama-3-8b"])
    try:
        text = json.dumps({**base, **cfg})
    except (TypeError, ValueError):
        return
    assert_config_result(text)


# --- the URL state --------------------------------------------------------------------------

class Target(param.Parameterized):
    flag = param.Boolean(default=True)
    count = param.Integer(default=6, bounds=(3, 8))
    ratio = param.Number(default=0.5, bounds=(0.0, 1.0))
    open_int = param.Integer(default=1)  # no bounds
    choice = param.Selector(default="prefill", objects=["prefill", "decode"])
    words = param.String(default="2, 1, 0.1")
    stuff = param.List(default=[])  # not settable from a URL

    keys = ("flag", "count", "ratio", "open_int", "choice", "words", "stuff")


raw_values = st.one_of(
    st.text(max_size=300), st.binary(max_size=300),
    st.sampled_from(["nan", "inf", "-inf", "1e999", "-1e999", "1e308", "0x10", "1_000", " 7 ",
                     "on", "OFF", "Decode", "9" * 400, "3.5", "-0", "", "\x00", "<script>"]))
queries = st.dictionaries(st.sampled_from(Target.keys + ("other", "theme")),
                          st.lists(raw_values, min_size=1, max_size=4), max_size=8)


@FUZZ
@given(queries)
def test_any_query_restores_in_bounds_or_is_noted(args):
    target = Target()
    t0 = time.perf_counter()
    repairs = url_state.restore(target, list(Target.keys), args)
    assert time.perf_counter() - t0 < SECONDS
    assert all(isinstance(n, str) and len(n) < 300 for n in repairs)
    assert isinstance(target.flag, bool)
    assert 3 <= target.count <= 8 and isinstance(target.count, int)
    assert 0.0 <= target.ratio <= 1.0 and math.isfinite(target.ratio)
    assert isinstance(target.open_int, int)
    assert target.choice in ("prefill", "decode")
    assert isinstance(target.words, str) and len(target.words) <= url_state.MAX_VALUE_CHARS
    assert target.stuff == []
    for key, values in args.items():
        if key in Target.keys and len(values) > 1:
            assert any(f"{key} given {len(values)} times" in n for n in repairs)


@FUZZ
@given(st.sampled_from(["flag", "count", "ratio", "open_int", "choice", "words", "stuff"]),
       st.text(max_size=500))
def test_coerce_never_raises(name, raw):
    value, repair = url_state.coerce(Target.param[name], name, raw)
    assert repair is None or (isinstance(repair, str) and len(repair) < 300)
    if value is not None:
        Target(**{name: value})  # whatever comes back, the parameter accepts
