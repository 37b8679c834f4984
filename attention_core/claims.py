"""The claims ledger: every number the two documents quote, recomputed here.

Each claim holds the document's figure as it is written, the value this package
computes, and the rule that decides whether the two agree (rounding to the digits
the document shows, or a stated tolerance for its "≈"). `attention-explorable numbers`
prints the table and exits 1 if any row disagrees.
"""

import math
from dataclasses import dataclass

import numpy as np

from . import costs, dot_product, numerics, online_softmax, sqrt_dk, worked_example

SDPA = "scaled-dot-product-attention"
MATH = "dot-products-softmax-attention-math"


@dataclass(frozen=True)
class Claim:
    source: str
    what: str
    document: str  # the figure as the document writes it
    computed: float
    shown: str  # the computed value, formatted like the document's
    rule: str
    ok: bool


def rounds_to(source, what, document, value, expected, digits, scale=1.0, unit=""):
    # the computed value, in the document's unit, rounds to the document's figure
    v = value / scale
    shown = f"{v:,.{max(digits, 0)}f}{unit}"
    return Claim(source, what, document, float(value), shown, f"rounds to {digits} dp",
                 round(v, digits) == expected)


def within(source, what, document, value, expected, rel, scale=1.0, unit="", digits=2):
    v = value / scale
    return Claim(source, what, document, float(value), f"{v:,.{digits}f}{unit}",
                 f"within {rel:.0%}" if rel >= 0.01 else f"within {rel:.0e} relative",
                 abs(v / expected - 1) <= rel)


def exactly(source, what, document, value, expected, unit=""):
    shown = f"{value:,}{unit}" if isinstance(value, int) else f"{value!r}{unit}"
    return Claim(source, what, document, float(value), shown, "exact", value == expected)


def head_claims():
    s = SDPA
    on = worked_example.run(6)
    off = worked_example.run(6, causal=False)
    raw = worked_example.run(6, scaled=False)
    n8 = worked_example.run(8)
    n8_off = worked_example.run(8, causal=False)
    truncate_mismatches = sum(
        not worked_example.truncate(n, i, scaled=sc).equal
        for n in range(1, 9) for i in range(n) for sc in (True, False))
    unmasked_mismatches = sum(not worked_example.truncate(n, i, causal=False).equal
                              for n in range(2, 9) for i in range(n - 1))
    ladder_prefill = [worked_example.run(n).dot_products for n in range(3, 9)]
    ladder_decode = [worked_example.run(n, phase="decode").dot_products for n in range(3, 9)]
    decode_on = worked_example.run(8, phase="decode")
    decode_off = worked_example.run(8, phase="decode", causal=False)
    return [
        rounds_to(s, "row 2 (sat), mask on: weight on cat", "0.77", on.weights[2, 1], 0.77, 2),
        rounds_to(s, "row 2, mask on: weight on the", "0.07", on.weights[2, 0], 0.07, 2),
        rounds_to(s, "row 2, mask on: effective tokens attended", "1.98",
                  on.effective_tokens[2], 1.98, 2),
        rounds_to(s, "row 2, mask off: weight on mat", "0.23", off.weights[2, 5], 0.23, 2),
        exactly(s, "mask off: largest |row 0 − row 4| (both 'the')", "identical",
                float(np.abs(off.weights[0] - off.weights[4]).max()), 0.0),
        rounds_to(s, "row 2, divisor off: weight on cat", "0.97", raw.weights[2, 1], 0.97, 2),
        rounds_to(s, "row 2, divisor off: effective tokens attended", "1.17",
                  raw.effective_tokens[2], 1.17, 2),
        exactly(s, "length 8, mask on: pairs computed then discarded", "28",
                n8.pairs_discarded, 28),
        exactly(s, "length 8: dot products", "64", n8.dot_products, 64),
        exactly(s, "length 8, mask off: pairs discarded", "0", n8_off.pairs_discarded, 0),
        exactly(s, "prefill ladder, lengths 3..8", "9, 16, 25, 36, 49, 64",
                int(ladder_prefill == [9, 16, 25, 36, 49, 64]), 1, " (1 = same list)"),
        exactly(s, "decode ladder, lengths 3..8", "3, 4, 5, 6, 7, 8",
                int(ladder_decode == [3, 4, 5, 6, 7, 8]), 1, " (1 = same list)"),
        exactly(s, "decode: outputs with mask on vs off differ by", "nothing changes",
                float(np.abs(decode_on.output - decode_off.output).max()), 0.0),
        exactly(s, "mask on: truncate mismatches over lengths 1-8, every row, ±divisor",
                "bit-for-bit (0)", truncate_mismatches, 0),
        exactly(s, "mask off: truncate mismatches (lengths 2-8, rows before the last)", "mismatch reported", unmasked_mismatches, 28),  # noqa: E501
        rounds_to(s, "√5, the divisor of a d_k = 5 head", "2.24", math.sqrt(worked_example.D_K),
                  2.24, 2),
    ]


def sqrt_dk_claims():
    s = SDPA
    d_ks = (4, 16, 128, 512)
    mean = sqrt_dk.expectation(d_ks, draws=2000)
    rows = []
    for d, raw_doc, scaled_doc, r, c in zip(d_ks, (6.68, 2.84, 1.44, 1.19),
                                            (11.19, 10.96, 10.71, 10.76),
                                            mean.effective_raw, mean.effective_scaled):
        rows.append(within(s, f"d_k = {d}: unscaled effective keys (mean of 2000 draws)",
                           f"{raw_doc}", r, raw_doc, 0.05))
        rows.append(within(s, f"d_k = {d}: scaled effective keys (mean of 2000 draws)",
                           f"{scaled_doc}", c, scaled_doc, 0.05))
    for d, spread_doc, root_doc in ((4, 1.82, 2.00), (128, 10.72, 11.31), (512, 21.48, 22.63)):
        i = d_ks.index(d)
        rows.append(within(s, f"d_k = {d}: measured spread of 16 scores (mean of draws)",
                           f"{spread_doc}", mean.spread[i], spread_doc, 0.05))
        rows.append(rounds_to(s, f"√{d}", f"{root_doc:.2f}", math.sqrt(d), root_doc, 2))
    rows += [
        rounds_to(s, "d_k = 128: three standard deviations of unscaled scores", "±34",
                  sqrt_dk.three_sigma_range(128), 34, 0),
        exactly(s, "e^68 ≈ 10^x: x (whole part)", "10²⁹",
                math.floor(sqrt_dk.exp_ratio_log10(128)), 29),
    ]
    return rows


def cost_claims():
    s, m = SDPA, MATH
    qwen, gpt2, llama = (costs.preset(k) for k in ("qwen3-8b", "gpt2", "llama-3-8b"))
    h100 = costs.GPUS["h100-sxm"]
    pct = 100.0
    cross_q = costs.crossover_tokens(qwen, "triangular")
    cross_g = costs.crossover_tokens(gpt2, "triangular")
    dec_dots = costs.decode_dot_products(llama, 4096)
    att_ops = costs.attention_flops_decode(llama, 4096)
    weight_ops = costs.other_flops_decode(llama)
    kv_ctx = costs.kv_cache_bytes(llama, 4096)
    return [
        exactly(s, "Qwen3-8B: FLOPs per (query, key) pair", "589,824",
                costs.pair_flops(qwen), 589_824),
        rounds_to(s, "Qwen3-8B, 4,096 prompt: attention share of prefill", "7.4%",
                  costs.prefill_attention_share(qwen, 4096) * pct, 7.4, 1, unit="%"),
        rounds_to(s, "Qwen3-8B, 32,768 prompt: attention share of prefill", "39%",
                  costs.prefill_attention_share(qwen, 32768) * pct, 39, 0, unit="%"),
        rounds_to(s, "Qwen3-8B, 131,072 prompt: attention share of prefill", "72%",
                  costs.prefill_attention_share(qwen, 131072) * pct, 72, 0, unit="%"),
        exactly(s, "Qwen3-8B crossover, triangular kernel (tokens)", "51,324",
                int(cross_q), 51_324),
        exactly(s, "Qwen3-8B crossover, naive kernel (tokens)", "25,662",
                int(costs.crossover_tokens(qwen, "naive")), 25_662),
        exactly(s, "GPT-2 small crossover, triangular (tokens)", "13,404", int(cross_g), 13_404),
        rounds_to(s, "Qwen3-8B / GPT-2 crossover", "3.8", cross_q / cross_g, 3.8, 1),
        rounds_to(s, "GPT-2 at its 1,024 maximum: attention share of prefill", "7.1%",
                  costs.prefill_attention_share(gpt2, gpt2.max_positions) * pct, 7.1, 1,
                  unit="%"),
        rounds_to(s, "Qwen3-8B, 256 prompt: attention share of prefill", "0.50%",
                  costs.prefill_attention_share(qwen, 256) * pct, 0.50, 2, unit="%"),
        rounds_to(s, "Qwen3-8B, context 256: attention share of a decode step", "0.99%",
                  costs.decode_attention_share(qwen, 256) * pct, 0.99, 2, unit="%"),
        rounds_to(s, "eager score matrix, 4,096 tokens, 32 heads, bf16 (GiB per layer)",
                  "1 GiB", costs.eager_score_matrix_bytes(qwen, 4096), 1, 2, scale=2**30,
                  unit=" GiB"),
        exactly(m, "Llama-3-8B, 4,096 context: dot products per decoded token", "4,194,304",
                int(dec_dots), 4_194_304),
        rounds_to(m, "Llama-3-8B: attention operations per decoded token", "≈ 2.1B", att_ops,
                  2.1, 1, scale=1e9, unit="B"),
        rounds_to(m, "… of which the scores", "≈ 1.07B", costs.decode_score_flops(llama, 4096),
                  1.07, 2, scale=1e9, unit="B"),
        rounds_to(m, "… and the weighted sum of values", "≈ 1.07B",
                  costs.decode_value_flops(llama, 4096), 1.07, 2, scale=1e9, unit="B"),
        rounds_to(m, "Llama-3-8B: weight operations per token", "≈ 15B", weight_ops, 15, 0,
                  scale=1e9, unit="B"),
        within(m, "Llama-3-8B, 4,096: attention share of a decode step", "≈ 12% (≈ 1/8)",
               costs.decode_attention_share(llama, 4096) * pct, 12, 0.05, unit="%", digits=1),
        exactly(m, "Llama-3-8B KV bytes per token per layer (bf16)", "4 KB",
                int(costs.kv_bytes_per_token_per_layer(llama)), 4096, " B"),
        exactly(m, "Llama-3-8B KV bytes per token (bf16)", "128 KB",
                int(costs.kv_bytes_per_token(llama)), 131_072, " B"),
        rounds_to(m, "Llama-3-8B keys and values at 4,096 tokens", "≈ 0.54B bytes (≈ 0.5 GB)",
                  kv_ctx, 0.54, 2, scale=1e9, unit=" GB"),
        rounds_to(m, "decode attention arithmetic intensity (FLOP/byte)", "≈ 4",
                  costs.decode_arithmetic_intensity(llama, 4096), 4, 0),
        rounds_to(m, "H100 SXM ridge point (FLOP/byte)", "≈ 295", h100.ridge_point, 295, 0),
        rounds_to(m, "Llama-3-8B weights in bf16", "16 GB", costs.weight_bytes(llama), 16, 0,
                  scale=1e9, unit=" GB"),
        within(m, "one user's cache outweighs the weights at (tokens)", "≈ 120k",
               costs.kv_outweighs_weights_context(llama), 120, 0.05, scale=1e3, unit="k",
               digits=1),
        rounds_to(m, "32 users at 4k tokens: keys and values", "≈ 17 GB",
                  costs.kv_cache_bytes(llama, 4096, users=32), 17, 0, scale=1e9, unit=" GB"),
        rounds_to(m, "8,192-token prompt: scores per head", "≈ 67M", 8192 * 8192, 67, 0,
                  scale=1e6, unit="M"),
        rounds_to(m, "8,192-token prompt: score scratch per layer (32 heads, 2 B)", "≈ 4.3 GB",
                  costs.eager_score_matrix_bytes(llama, 8192), 4.3, 1, scale=1e9, unit=" GB"),
    ]


def math_claims():
    m = MATH
    sm = numerics.softmax_steps([2, 1, 0.1])
    fp16_naive = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=False)
    fp16_fixed = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=True)
    walk = online_softmax.online_softmax([2, 1, 3, 0], block_size=2)
    spread = sqrt_dk.expectation((128,), draws=2000).spread[0]
    return [
        exactly(m, "(2, −1, 0.5) · (3, 4, 2)", "3", dot_product.dot([2, -1, 0.5], [3, 4, 2]), 3.0),
        exactly(m, "operations per 128-number dot product", "256",
                dot_product.operations(128), 256),
        rounds_to(m, "d = 128: spread of raw scores (mean of draws)", "±11", spread, 11, 0),
        rounds_to(m, "d = 128: spread after dividing by √128", "±1", spread / math.sqrt(128), 1, 0),
        rounds_to(m, "√128", "≈ 11.3", math.sqrt(128), 11.3, 1),
        rounds_to(m, "softmax(2, 1, 0.1): first weight", "66%", sm.weights[0] * 100, 66, 0, unit="%"),  # noqa: E501
        rounds_to(m, "softmax(2, 1, 0.1): second weight", "24%", sm.weights[1] * 100, 24, 0, unit="%"),  # noqa: E501
        rounds_to(m, "softmax(2, 1, 0.1): third weight", "10%", sm.weights[2] * 100, 10, 0, unit="%"),  # noqa: E501
        rounds_to(m, "e² (no max subtracted)", "≈ 7.39",
                  numerics.softmax_steps([2, 1, 0.1], subtract_max=False).exps[0], 7.39, 2),
        rounds_to(m, "e² + e¹ + e^0.1", "≈ 11.2",
                  numerics.softmax_steps([2, 1, 0.1], subtract_max=False).total, 11.2, 1),
        exactly(m, "largest float16", "65,504", int(numerics.largest_finite("float16")), 65_504),
        rounds_to(m, "e¹²", "≈ 162,755", math.exp(12), 162_755, 0),
        exactly(m, "float16 softmax of (12, 1, 0.1), no max subtracted: garbage", "inf / nan",
                int(fp16_naive.overflowed and fp16_naive.garbage), 1, " (1 = yes)"),
        exactly(m, "… with the max subtracted: finite weights summing to 1", "fixed",
                int(not fp16_fixed.garbage), 1, " (1 = yes)"),
        rounds_to(m, "blocks [2, 1] then [3, 0]: running sum", "≈ 1.55", walk.running_sum, 1.55, 2),
        within(m, "… equal to the full-row sum", "exactly the full-row result",
               walk.running_sum, walk.full_sum, 1e-12, digits=12),
    ]


def all_claims():  # -> list[Claim]
    return head_claims() + sqrt_dk_claims() + cost_claims() + math_claims()


def table(claims):  # -> str: the ledger as aligned text
    width = max(len(c.what) for c in claims)
    lines = [f"{'':2} {'claim':{width}}  {'document':>28}  {'computed':>18}  rule"]
    for c in claims:
        mark = "✓" if c.ok else "✗"
        lines.append(f"{mark:2} {c.what:{width}}  {c.document:>28}  {c.shown:>18}  {c.rule}")
    bad = sum(not c.ok for c in claims)
    lines.append(f"{len(claims) - bad} of {len(claims)} claims match"
                 + ("" if not bad else f"; {bad} disagree"))
    return "\n".join(lines)
