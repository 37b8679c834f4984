"""Weights as a quantized checkpoint stores them, from its config's quantization_config.

Each expected size is the sum of the tensors the method writes for every linear layer, listed
here by name and shape as the method's own layer classes create them (AutoAWQ's WQLinear_GEMM,
GPTQ's QuantLinear, the fine-grained FP8 layer's weight and weight_scale_inv, FBGEMM's
per-channel weight_scale, bitsandbytes' Linear4bit and Linear8bitLt state dicts); everything else
stays at the weight dtype. docs/config-families.md states the same rules in words.
"""

import json
import math

import pytest

from attention_core import costs

LLAMA = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1408,
         "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2,
         "vocab_size": 1000, "tie_word_embeddings": False}
INT32, FP16, FP32, FP8 = 4, 2, 4, 1


def linears(cfg) -> list[tuple[int, int]]:  # (inputs, outputs) of every projection, by hand
    h, i = cfg["hidden_size"], cfg["intermediate_size"]
    d = h // cfg["num_attention_heads"]
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d
    per_layer = [(h, q), (h, kv), (h, kv), (q, h), (h, i), (h, i), (i, h)]
    return per_layer * cfg["num_hidden_layers"]


def unquantized_bytes(cfg, bytes_per_value=2) -> int:  # embedding, lm_head, norms
    h, layers, v = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    return bytes_per_value * (2 * v * h + (2 * layers + 1) * h)


def awq_tensors(inputs, outputs, bits, group, zero_point=True) -> dict:
    pack = 32 // bits
    tensors = {"qweight": (INT32, inputs, outputs // pack),
               "scales": (FP16, inputs // group, outputs)}
    if zero_point:
        tensors["qzeros"] = (INT32, inputs // group, outputs // pack)
    return tensors


def gptq_tensors(inputs, outputs, bits, group) -> dict:
    groups = 1 if group == -1 else math.ceil(inputs / group)
    return {"qweight": (INT32, inputs * bits // 32, outputs),
            "qzeros": (INT32, groups, outputs * bits // 32),
            "scales": (FP16, groups, outputs), "g_idx": (INT32, inputs)}


def fp8_block_tensors(inputs, outputs, block) -> dict:
    return {"weight": (FP8, outputs, inputs),
            "weight_scale_inv": (FP32, math.ceil(outputs / block[0]), math.ceil(inputs / block[1]))}


def stored(tensors_of) -> int:  # (element bytes, *dims) per tensor, every linear, + the rest
    return sum(element * math.prod(dims) for i, o in linears(LLAMA)
               for element, *dims in tensors_of(i, o).values()) + unquantized_bytes(LLAMA)


def shape(cfg, q):
    return costs.ModelShape.from_config({**cfg, "quantization_config": q})


@pytest.mark.parametrize("group", [128, 64])
def test_awq_4_bit(group):
    q = {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True,
         "version": "gemm"}
    expected = stored(lambda i, o: awq_tensors(i, o, 4, group))
    assert costs.weight_bytes(shape(LLAMA, q), 2) == expected


def test_awq_without_zero_points():
    q = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": False}
    expected = stored(lambda i, o: awq_tensors(i, o, 4, 128, zero_point=False))
    assert costs.weight_bytes(shape(LLAMA, q), 2) == expected


@pytest.mark.parametrize("bits, group", [(4, 128), (8, 32), (4, -1)])
def test_gptq(bits, group):
    q = {"quant_method": "gptq", "bits": bits, "group_size": group, "desc_act": False}
    expected = stored(lambda i, o: gptq_tensors(i, o, bits, group))
    assert costs.weight_bytes(shape(LLAMA, q), 2) == expected


def test_fp8_block_scales_and_bf16_embeddings():
    q = {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"}
    m = shape(LLAMA, q)
    assert costs.weight_bytes(m, 2) == stored(lambda i, o: fp8_block_tensors(i, o, (128, 128)))
    # not billed as bf16 any more: the bug other calculators' users report
    assert costs.weight_bytes(m, 2) < 0.6 * costs.total_params(m) * 2


def test_fbgemm_fp8_per_channel_scales():
    q = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}
    expected = stored(lambda i, o: {"weight": (FP8, o, i), "weight_scale": (FP32, o, 1)})
    assert costs.weight_bytes(shape(LLAMA, q), 2) == expected


def test_a_70b_fp8_model_is_not_billed_as_bf16():
    llama_70b = {"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672,
                 "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
                 "vocab_size": 128256, "tie_word_embeddings": False}
    m = shape(llama_70b, {"quant_method": "fbgemm_fp8"})
    bf16 = costs.total_params(m) * 2
    assert 0.5 < costs.weight_bytes(m, 2) / bf16 < 0.53  # about half: 1 byte a weight


def test_the_rule_is_said_and_an_uncounted_method_is_said_too():
    awq = shape(LLAMA, {"quant_method": "awq", "bits": 4, "group_size": 128})
    assert any("quantization_config (awq)" in n and "128 inputs" in n for n in awq.notes)
    hqq = shape(LLAMA, {"quant_method": "hqq", "nbits": 4})
    assert costs.weight_bytes(hqq, 2) == costs.total_params(hqq) * 2
    assert any('"hqq" is not one counted' in n for n in hqq.notes)


@pytest.mark.parametrize("q, field", [
    ({"quant_method": "awq", "bits": 5}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "quantization_config.weight_block_size"),
    ({"quant_method": "awq", "bits": 4, "zero_point": "yes"}, "quantization_config.zero_point"),
    ("awq", "quantization_config"),
])
def test_a_malformed_quantization_config_names_its_field(q, field):
    with pytest.raises(costs.ConfigError) as e:
        shape(LLAMA, q)
    assert e.value.field == field


def test_the_linears_a_method_packs_are_the_stacks_weights():
    for cfg in (LLAMA, {**LLAMA, "model_type": "mixtral", "num_local_experts": 4,
                        "num_experts_per_tok": 2}):
        m = costs.ModelShape.from_config(cfg)
        router = m.hidden * m.num_experts * m.moe_layers
        stack = (m.layers * costs.attention_params(m) + m.dense_layers * costs.dense_mlp_params(m)
                 + m.moe_layers * costs.moe_stored_params(m)) - router
        assert sum(c * i * o for c, i, o in costs.stack_linears(m)) == stack


# --- widths that are not a multiple of the group --------------------------------------------
#
# Hidden 576 (9 heads of 64, 3 KV heads: k and v 192 wide) and MLP 4,104: neither is a multiple
# of 128, so the last group of inputs is a partial one and still gets its scale (and zero):
#   576 inputs / 128 = 4.5    -> 5 groups      576 / 32 = 18 groups
#   4,104 inputs / 128 = 32.06 -> 33 groups    4,104 / 32 = 128.25 -> 129 groups
# (every output count is a multiple of 8, so 4-bit and 8-bit values pack into whole int32s).
ODD = {"model_type": "llama", "hidden_size": 576, "intermediate_size": 4104,
       "num_hidden_layers": 2, "num_attention_heads": 9, "num_key_value_heads": 3,
       "vocab_size": 1000, "tie_word_embeddings": False}
# (inputs, outputs, groups of 128 inputs, groups of 32 inputs) of each layer's linears
ODD_LINEARS = [(576, 576, 5, 18), (576, 192, 5, 18), (576, 192, 5, 18), (576, 576, 5, 18),
               (576, 4104, 5, 18), (576, 4104, 5, 18), (4104, 576, 33, 129)]
# embedding and lm_head 2 x 1,000 x 576 + norms (2 x 2 + 1) x 576, in bf16
ODD_REST = 2 * (2 * 1000 * 576 + 5 * 576)


def test_odd_rest_by_hand():
    assert ODD_REST == 2_309_760


def test_awq_groups_round_up_past_a_partial_group():
    # AWQ 4-bit, group 128, zero points; per linear:
    #   qweight [in, out / 8] int32, scales [groups, out] fp16, qzeros [groups, out / 8] int32
    # down_proj: 4 x 4,104 x 72 + 2 x 33 x 576 + 4 x 33 x 72 = 1,181,952 + 38,016 + 9,504
    #          = 1,229,472 (32 groups would leave its last 8 inputs without a scale)
    per_layer = sum(4 * i * (o // 8) + 2 * g * o + 4 * g * (o // 8)
                    for i, o, g, _ in ODD_LINEARS)
    assert 4 * 4104 * 72 + 2 * 33 * 576 + 4 * 33 * 72 == 1_229_472
    expected = 2 * per_layer + ODD_REST
    assert expected == 10_624_848
    q = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    assert costs.weight_bytes(shape(ODD, q), 2) == expected


@pytest.mark.parametrize("bits, group, expected", [(4, 128, 10_685_328), (8, 32, 19_821_312)])
def test_gptq_groups_round_up_past_a_partial_group(bits, group, expected):
    # GPTQ: qweight [in x bits / 32, out] int32, qzeros [groups, out x bits / 32] int32,
    # scales [groups, out] fp16, g_idx [in] int32. down_proj, 4-bit, group 128:
    #   4 x 513 x 576 + 4 x 33 x 72 + 2 x 33 x 576 + 4 x 4,104
    #   = 1,181,952 + 9,504 + 38,016 + 16,416 = 1,245,888
    assert 4 * 513 * 576 + 4 * 33 * 72 + 2 * 33 * 576 + 4 * 4104 == 1_245_888
    per_layer = 0
    for i, o, g128, g32 in ODD_LINEARS:
        g = g128 if group == 128 else g32
        per_layer += (4 * (i * bits // 32) * o + 4 * g * (o * bits // 32) + 2 * g * o + 4 * i)
    assert 2 * per_layer + ODD_REST == expected
    q = {"quant_method": "gptq", "bits": bits, "group_size": group, "desc_act": False}
    assert costs.weight_bytes(shape(ODD, q), 2) == expected


def test_fp8_without_blocks_stores_one_float32_scale_per_tensor():
    # per-tensor FP8: each linear's weight at 1 byte, and one float32 weight scale beside it.
    # weights per layer: 576 x 576 x 2 + 576 x 192 x 2 + 576 x 4,104 x 3 = 7,976,448;
    # two layers 15,952,896 bytes; 14 scales x 4 bytes = 56; + the bf16 rest 2,309,760
    assert sum(i * o for i, o, _, _ in ODD_LINEARS) == 7_976_448
    q = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    m = shape(ODD, q)
    assert (m.quant_block_out, m.quant_block_in) == (0, 0)
    assert costs.weight_bytes(m, 2) == 2 * 7_976_448 + 14 * FP32 + ODD_REST == 18_262_712
    assert any("a float32 scale per tensor" in n for n in m.notes)


# openai/gpt-oss-20b's config.json: its routed experts stored in mxfp4, the rest in bf16
GPT_OSS_20B = {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
               "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
               "head_dim": 64, "vocab_size": 201088, "num_local_experts": 32,
               "num_experts_per_tok": 4, "sliding_window": 128, "attention_bias": True,
               "tie_word_embeddings": False, "layer_types": ["sliding_attention",
                                                             "full_attention"] * 12,
               "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
                   "model.layers.*.self_attn", "model.layers.*.mlp.router",
                   "model.embed_tokens", "lm_head"]}}
UINT8, BF16 = 1, 2


def mxfp4_expert_tensors(experts, hidden, inter) -> dict:  # one layer, as the checkpoint holds
    return {"gate_up_proj_blocks": (UINT8, experts, 2 * inter, hidden // 32, 16),
            "gate_up_proj_scales": (UINT8, experts, 2 * inter, hidden // 32),
            "down_proj_blocks": (UINT8, experts, hidden, inter // 32, 16),
            "down_proj_scales": (UINT8, experts, hidden, inter // 32)}


def test_mxfp4_stores_the_routed_experts_in_blocks_and_scales():
    m = costs.ModelShape.from_config(GPT_OSS_20B)
    layers, experts, h, i = 24, 32, 2880, 2880
    packed = layers * sum(e * math.prod(d) for e, *d in mxfp4_expert_tensors(experts, h,
                                                                               i).values())
    expert_weights = layers * experts * 3 * h * i  # the values the blocks hold
    rest = costs.total_params(m) - expert_weights  # attention, router, biases, embeddings
    assert costs.quantized_params(m) == expert_weights
    assert costs.weight_bytes(m, BF16) == packed + BF16 * rest
    as_bf16 = costs.weight_bytes(costs.ModelShape.from_config(
        {**GPT_OSS_20B, "quantization_config": None}), BF16)
    assert as_bf16 == 2 * costs.total_params(m) and round(as_bf16 / 1e9, 1) == 41.8  # the miss
    assert costs.weight_bytes(m, BF16) < as_bf16 / 3
    assert any(n.startswith("Routed experts' weights counted as quantization_config (mxfp4)")
               for n in m.notes)
    assert "routed experts' weights packed by mxfp4" in costs.weight_convention(m, "bf16")


# compressed-tensors, as its compressors write each quantized Linear (compressed_tensors:
# PackedQuantizationCompressor and NaiveQuantizationCompressor; scales in the weights' dtype,
# bf16 here, shaped by the strategy; a zero point only when asymmetric)
INT64, INT8, BF16_SCALE = 8, 1, 2


def ct_config(fmt, bits, strategy, group=None, symmetric=True) -> dict:
    weights = {"num_bits": bits, "type": "int", "symmetric": symmetric, "strategy": strategy}
    if group:
        weights["group_size"] = group
    return {"quant_method": "compressed-tensors", "format": fmt, "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}}}


def ct_scale_shape(inputs, outputs, strategy, group) -> tuple:
    return {"tensor": (1,), "channel": (outputs, 1),
            "group": (outputs, math.ceil(inputs / group) if group else 1)}[strategy]


def ct_pack_tensors(inputs, outputs, bits, strategy, group=None, symmetric=True) -> dict:
    per_word = 32 // bits
    scale = ct_scale_shape(inputs, outputs, strategy, group)
    tensors = {"weight_packed": (INT32, outputs, math.ceil(inputs / per_word)),
               "weight_shape": (INT64, 2), "weight_scale": (BF16_SCALE, *scale)}
    if not symmetric:  # packed along the outputs, one column per scale column
        tensors["weight_zero_point"] = (INT32, math.ceil(outputs / per_word), scale[-1])
    return tensors


def ct_naive_tensors(inputs, outputs, strategy, symmetric=True) -> dict:
    scale = ct_scale_shape(inputs, outputs, strategy, None)
    tensors = {"weight": (INT8, outputs, inputs), "weight_scale": (BF16_SCALE, *scale)}
    if not symmetric:
        tensors["weight_zero_point"] = (INT8, *scale)
    return tensors


@pytest.mark.parametrize("bits, strategy, group, symmetric", [
    (4, "group", 128, True), (4, "group", 100, False), (8, "channel", None, True),
    (4, "channel", None, False), (4, "tensor", None, True)])
def test_compressed_tensors_pack_quantized(bits, strategy, group, symmetric):
    m = costs.ModelShape.from_config({**LLAMA, "quantization_config": ct_config(
        "pack-quantized", bits, strategy, group, symmetric)})
    assert costs.weight_bytes(m, 2) == stored(
        lambda i, o: ct_pack_tensors(i, o, bits, strategy, group, symmetric))
    assert any("pack-quantized: " in n for n in m.notes)


@pytest.mark.parametrize("fmt", ["int-quantized", "float-quantized"])
@pytest.mark.parametrize("strategy, symmetric", [("channel", True), ("tensor", False)])
def test_compressed_tensors_one_byte_a_weight(fmt, strategy, symmetric):
    m = costs.ModelShape.from_config({**LLAMA, "quantization_config": ct_config(
        fmt, 8, strategy, symmetric=symmetric)})
    assert costs.weight_bytes(m, 2) == stored(
        lambda i, o: ct_naive_tensors(i, o, strategy, symmetric))


@pytest.mark.parametrize("q", [
    {**ct_config("pack-quantized", 4, "group", 128), "config_groups": {
        "a": {"weights": {"num_bits": 4, "strategy": "group", "group_size": 128}},
        "b": {"weights": {"num_bits": 8, "strategy": "channel"}}}},
    ct_config("nvfp4-pack-quantized", 4, "tensor_group", 16),
    ct_config("pack-quantized", 3, "group", 128), ct_config("int-quantized", 4, "channel")])
def test_a_compressed_tensors_layout_not_counted_is_said(q):
    m = costs.ModelShape.from_config({**LLAMA, "quantization_config": q})
    assert costs.weight_bytes(m, 2) == 2 * costs.total_params(m)
    assert any("(compressed-tensors, format" in n and "is not one counted here" in n
               for n in m.notes)


# --- bitsandbytes, as its layers' state dicts hold each quantized Linear ----------------------
# (bitsandbytes 0.50: Linear4bit's weight and its QuantState.as_dict(packed=True); Linear8bitLt's
# weight, SCB and weight_format). Transformers converts nn.Linear layers only: lm_head stays, and
# so do a MoE's routed experts, fused into 3-D tensors.
UINT8, INT8_, BNB_BLOCK = 1, 1, 64
OFFSET = 0.05017438903450966  # a float32 absmax mean as Python writes it: 19 characters


def bnb_4bit_tensors(inputs, outputs, fmt, double, dtype="bfloat16") -> dict:
    n = inputs * outputs
    blocks = math.ceil(n / BNB_BLOCK)
    state = {"quant_type": fmt, "blocksize": BNB_BLOCK, "dtype": dtype, "shape": [outputs, inputs]}
    tensors = {"weight": (UINT8, math.ceil(n / 2), 1), "weight.quant_map": (FP32, 16)}
    if double:
        state.update(nested_blocksize=256, nested_dtype="float32", nested_offset=OFFSET)
        tensors.update({"weight.absmax": (UINT8, blocks),
                        "weight.nested_absmax": (FP32, math.ceil(blocks / 256)),
                        "weight.nested_quant_map": (FP32, 256)})
    else:
        tensors["weight.absmax"] = (FP32, blocks)
    tensors[f"weight.quant_state.bitsandbytes__{fmt}"] = (UINT8, len(json.dumps(state)))
    return tensors


def bnb_8bit_tensors(inputs, outputs) -> dict:
    return {"weight": (INT8_, outputs, inputs), "SCB": (FP32, outputs), "weight_format": (UINT8,)}


def bnb(four=True, fmt="nf4", double=False) -> dict:
    q = {"quant_method": "bitsandbytes", "load_in_4bit": four, "load_in_8bit": not four,
         "bnb_4bit_quant_type": fmt, "bnb_4bit_use_double_quant": double,
         "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_storage": "uint8",
         "llm_int8_skip_modules": None}
    return q


@pytest.mark.parametrize("fmt, double", [("nf4", True), ("nf4", False), ("fp4", False)])
def test_bitsandbytes_4_bit(fmt, double):
    m = shape({**LLAMA, "dtype": "bfloat16"}, bnb(fmt=fmt, double=double))
    assert costs.weight_bytes(m, 2) == stored(lambda i, o: bnb_4bit_tensors(i, o, fmt, double))
    assert any(f"Linear weights as bitsandbytes stores them: {fmt}, 4 bits a weight" in n
               for n in m.notes)


def test_bitsandbytes_8_bit():
    m = shape(LLAMA, bnb(four=False))
    assert costs.weight_bytes(m, 2) == stored(bnb_8bit_tensors)


def test_bitsandbytes_blocks_round_up_and_odd_widths_pack_a_half_byte():
    # widths whose products are odd and not a multiple of 64: partial blocks, half a byte over
    odd = {"model_type": "llama", "hidden_size": 205, "intermediate_size": 333,
           "num_hidden_layers": 2, "num_attention_heads": 5, "num_key_value_heads": 1,
           "vocab_size": 100, "tie_word_embeddings": False, "torch_dtype": "float16"}
    m = shape(odd, bnb(double=True))
    expected = sum(e * math.prod(d) for i, o in linears(odd)
                   for e, *d in bnb_4bit_tensors(i, o, "nf4", True, "float16").values())
    rest = 2 * (2 * 100 * 205 + (2 * 2 + 1) * 205)
    assert costs.weight_bytes(m, 2) == expected + rest
    assert (205 * 41) % 2 == 1 and (205 * 333) % 64  # the cases the rounding is for


def test_bitsandbytes_leaves_a_moes_routed_experts_as_they_are():
    moe = {"model_type": "qwen2_moe", "hidden_size": 256, "intermediate_size": 512,
           "moe_intermediate_size": 96, "shared_expert_intermediate_size": 160,
           "num_experts": 4, "num_experts_per_tok": 2, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
           "tie_word_embeddings": False, "dtype": "bfloat16"}
    plain = costs.ModelShape.from_config(moe)
    m = shape(moe, bnb(double=True))
    h, e = 256, 96
    routed = 2 * 4 * 3 * h * e  # layers x experts x (gate, up, down)
    packed = [(h, 256), (h, 128), (h, 128), (256, h), (h, 160), (h, 160), (160, h)] * 2
    as_stored = sum(el * math.prod(d) for i, o in packed
                    for el, *d in bnb_4bit_tensors(i, o, "nf4", True).values())
    unpacked = costs.total_params(plain) - sum(i * o for i, o in packed)
    assert costs.weight_bytes(m, 2) == as_stored + 2 * unpacked
    assert unpacked > routed  # the experts are among the weights billed at the dtype
    assert any("Routed experts stay at the weight dtype chosen" in n for n in m.notes)
    assert "linear weights but the routed experts packed by bitsandbytes" in \
        costs.weight_convention(m, "bf16")


@pytest.mark.parametrize("q, field", [
    ({"quant_method": "bitsandbytes"}, "quantization_config.load_in_4bit"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": True},
     "quantization_config.load_in_4bit"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "int4"},
     "quantization_config.bnb_4bit_quant_type"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": "yes"},
     "quantization_config.bnb_4bit_use_double_quant")])
def test_a_malformed_bitsandbytes_config_names_its_field(q, field):
    with pytest.raises(costs.ConfigError) as e:
        shape(LLAMA, q)
    assert str(e.value).startswith(field)
