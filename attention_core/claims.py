"""The claims ledger: every number the two documents quote, recomputed here.

The expected side lives outside the code, in claims.toml (package data): for each row the
document, its words quoted verbatim, the figure as it stands in them, the figure parsed, and
the rule by which a computed value agrees with it (rounding to the digits the document shows,
or a tolerance with its reason, and why). This module only computes: each section below
returns {(document, what): value} in the computed value's own units (fractions, bytes,
tokens; a mean over random draws comes with its standard error, as `Sampled`), and `judge`
holds a value against its row. Rows that only test arithmetic (a square root, e¹², 8192²) are
kind "identity"; rows the worked example's vectors were fitted to reproduce
(scripts/fit_worked_example.py) are kind "fitted": they agree by construction, so both are
counted apart from the claims checked. `attention-explorable numbers` prints the table and
exits 1 if any row disagrees.
"""

import dataclasses
import functools
import importlib.resources
import math
import tomllib
from dataclasses import dataclass

import numpy as np

from . import costs, dot_product, numerics, online_softmax, sqrt_dk, worked_example

SDPA = "scaled-dot-product-attention"
MATH = "dot-products-softmax-attention-math"
DATA = "claims.toml"
KINDS = ("claim", "fitted", "identity")
# why a row's rule allows a tolerance ("abs", "sampled"): the figure's own rounding,
# the standard error of a mean over random draws, the document's own approximation, or the
# rounding of floating-point arithmetic where the document says "exactly"
REASONS = ("rounding", "standard-error", "document-approximation", "floating-point")
# why a number of the documents is not a claim (claims.toml's not_a_claim list): a section's
# number, a year, the lesson's own header, part of a name, a setting the text asks for (a
# control's value, the model or context a figure is computed at), an example of the idea, a
# formula's constant or index, a definition or premise, or a figure restated from a row
NOT_A_CLAIM_REASONS = ("section", "year", "source", "name", "setting", "example", "formula",
                       "definition", "restated")
# a unit as the ledger shows it after a number: a word-like unit after a space
UNIT_SHOWN = {"%": "%", "B": "B", "M": "M", "k": "k", "GB": " GB", "GiB": " GiB", "KB": " KB",
              "yes": " (1 = yes)", "power of ten": " (the exponent)", "million": " million",
              "1/x": " (x of 1/x)"}


@dataclass(frozen=True)
class Claim:
    source: str
    what: str
    document: str  # the figure as the document writes it
    computed: float
    shown: str  # the computed value, formatted like the document's
    rule: str
    ok: bool
    kind: str = "claim"  # or "fitted" (agrees by construction) or "identity": counted apart
    quote: str = ""  # the document's words the figure stands in
    why: str = ""  # why the rule and its tolerance
    derived: str = ""  # where the figure is words: how the value follows from them


@dataclass(frozen=True)
class Sampled:  # a mean over random draws, with its standard error from the same draws
    mean: float
    se: float


# --- the expected side: claims.toml ------------------------------------------------------


def load_rows(text):  # the data file's text -> [row dict]
    return tomllib.loads(text)["row"]


@functools.cache
def data_text():  # -> claims.toml as shipped with the package
    return importlib.resources.files(__package__).joinpath(DATA).read_text(encoding="utf-8")


def rows():  # -> {(document, what): row}
    return {(r["document"], r["what"]): r for r in load_rows(data_text())}


def display(figure):  # a figure as quoted (LaTeX and all) -> as a reader sees it
    for tex, text in (("\\mathrm{\\%}", "%"), ("\\approx", "≈"), ("\\mathrm{", "")):
        figure = figure.replace(tex, text)
    return figure.replace("}", "")


def judge(row, value):  # -> Claim: the computed value against its row of claims.toml
    rule, unit, scale = row["rule"], row.get("unit", ""), row.get("scale", 1)
    suffix = UNIT_SHOWN.get(unit, "")
    args = (row["document"], row["what"], display(row["figure"]), value, row["value"])
    if rule == "rounds":
        claim = rounds_to(*args, row["digits"], scale, suffix)
    elif rule == "abs":
        claim = near(*args, row["tolerance"], scale, suffix)
    elif rule == "sampled":
        claim = sampled(*args, row["sigmas"], row["digits"], scale, suffix)
    elif rule == "exact":
        claim = exactly(*args, suffix, scale)
    else:
        raise ValueError(f"{row['what']}: unknown rule {rule!r}")
    return dataclasses.replace(claim, kind=row["kind"], quote=row["quote"], why=row["why"],
                               derived=row.get("derived", ""))


def judged(values):  # {(document, what): value} -> [Claim], in the order computed
    table = rows()
    return [judge(table[key], value) for key, value in values.items()]


# the rules: a computed value in its own units, the document's figure in the document's unit
# (`scale` of the computed units), and whether they agree


def rounds_to(source, what, document, value, expected, digits, scale=1.0, unit=""):
    # the computed value, in the document's unit, rounds to the document's figure (digits < 0:
    # to tens, hundreds, ..., where the figure ends in zeros: "~120k", "~300")
    v = value / scale
    shown = f"{v:,.{max(digits, 0)}f}{unit}".replace("-", "−")  # the documents' minus
    rule = f"rounds to {digits} dp" if digits >= 0 else f"rounds to the nearest {10 ** -digits:,}"
    return Claim(source, what, document, float(value), shown, rule,
                 round(v, digits) == expected)


def near(source, what, document, value, expected, tol, scale=1.0, unit=""):
    # the computed value, in the document's unit, is within `tol` of the figure (absolute)
    v = value / scale
    return Claim(source, what, document, float(value), f"{v:.1e}{unit}", f"within {tol:.0e}",
                 abs(v - expected) <= tol)


def sampled(source, what, document, value, expected, sigmas, digits, scale=1.0, unit=""):
    # a mean over random draws (Sampled): the document's figure lies within `sigmas` standard
    # errors of it (the standard error measured from the draws themselves), widened by half a
    # unit in the last digit the document shows
    if not isinstance(value, Sampled):
        raise TypeError(f"{what}: a sampled row needs a Sampled value, got {value!r}")
    v, se = value.mean / scale, value.se / scale
    tol = sigmas * se + 0.5 * 10.0 ** -digits
    return Claim(source, what, document, float(value.mean), f"{v:,.{digits}f}{unit}",
                 f"within {sigmas:g} SE (±{tol:.{digits}f})", abs(v - expected) <= tol)


def exactly(source, what, document, value, expected, unit="", scale=1):
    if isinstance(value, (list, tuple)):  # a list of counts: the same list
        return Claim(source, what, document, tuple(value), ", ".join(map(str, value)), "exact",
                     list(value) == list(expected))
    v = value / scale if scale != 1 else value
    shown = (f"{int(v):,}" if float(v).is_integer() else repr(float(v))).replace("-", "−") + unit
    return Claim(source, what, document, float(value), shown, "exact", v == expected)


# --- the computed side ---------------------------------------------------------------------


def head_values():  # the worked example's head
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
    decode_on = worked_example.run(8, phase="decode")
    decode_off = worked_example.run(8, phase="decode", causal=False)
    return {
        (s, "row 2 (sat), mask on: weight on cat"): on.weights[2, 1],
        (s, "row 2, mask on: weight on the"): on.weights[2, 0],
        (s, "row 2, mask on: weight on the, as a percentage"): on.weights[2, 0],
        (s, "row 2, mask on: effective tokens attended"): on.effective_tokens[2],
        (s, "row 2, mask off: weight on mat"): off.weights[2, 5],
        (s, "mask off: largest |row 0 − row 4| (both 'the')"):
            float(np.abs(off.weights[0] - off.weights[4]).max()),
        (s, "row 2, divisor off: weight on cat"): raw.weights[2, 1],
        (s, "row 2, divisor off: effective tokens attended"): raw.effective_tokens[2],
        (s, "length 8, mask on: pairs computed then discarded"): n8.pairs_discarded,
        (s, "length 8: dot products"): n8.dot_products,
        (s, "length 8, mask off: pairs discarded"): n8_off.pairs_discarded,
        (s, "prefill ladder, lengths 3..8"):
            [worked_example.run(n).dot_products for n in range(3, 9)],
        (s, "decode ladder, lengths 3..8"):
            [worked_example.run(n, phase="decode").dot_products for n in range(3, 9)],
        (s, "decode: outputs with mask on vs off differ by"):
            float(np.abs(decode_on.output - decode_off.output).max()),
        (s, "mask on: truncate mismatches over lengths 1-8, every row, ±divisor"):
            truncate_mismatches,
        (s, "mask off: truncate mismatches (lengths 2-8, rows before the last)"):
            unmasked_mismatches,
        (s, "√5, the divisor of a d_k = 5 head"): math.sqrt(worked_example.D_K),
        (s, "exp(−∞), a masked score's exponential"): math.exp(-math.inf),
    }


def sqrt_dk_values():  # the √d_k sweep: means of 2,000 draws, each with its standard error
    s = SDPA
    d_ks = (4, 16, 128, 512)
    mean = sqrt_dk.expectation(d_ks, draws=2000)
    out = {}
    for i, d in enumerate(d_ks):
        out[s, f"d_k = {d}: unscaled effective keys (mean of 2000 draws)"] = Sampled(
            float(mean.effective_raw[i]), float(mean.effective_raw_se[i]))
        out[s, f"d_k = {d}: scaled effective keys (mean of 2000 draws)"] = Sampled(
            float(mean.effective_scaled[i]), float(mean.effective_scaled_se[i]))
    for d in (4, 128, 512):
        i = d_ks.index(d)
        out[s, f"d_k = {d}: measured spread of 16 scores (mean of draws)"] = Sampled(
            float(mean.spread[i]), float(mean.spread_se[i]))
        out[s, f"√{d}"] = math.sqrt(d)
    out[s, "d_k = 128: three standard deviations of unscaled scores"] = \
        sqrt_dk.three_sigma_range(128)
    out[s, "e^68 ≈ 10^x: x (whole part)"] = math.floor(sqrt_dk.exp_ratio_log10(128))
    return out


def cost_values():  # the cost panel (first document) and the bills (second)
    s, m = SDPA, MATH
    qwen, gpt2, llama = (costs.preset(k) for k in ("qwen3-8b", "gpt2", "llama-3-8b"))
    cross_q = costs.crossover_tokens(qwen, "triangular")
    cross_g = costs.crossover_tokens(gpt2, "triangular")
    per_head = llama.layers * llama.heads  # one head of one layer, for one decoded token
    scores_1, values_1 = (costs.decode_score_flops(llama, 4096) / per_head,
                          costs.decode_value_flops(llama, 4096) / per_head)
    table = rows()
    # the document's 12% is its own rounded 2.1B over 15B + 2.1B: those two, rounded to the
    # digits their rows show
    attention_b = round(costs.attention_flops_decode(llama, 4096) / 1e9,
                        table[m, "Llama-3-8B: attention operations per decoded token"]["digits"])
    weights_b = round(costs.other_flops_decode(llama) / 1e9,
                      table[m, "Llama-3-8B: weight operations per token"]["digits"])
    return {
        (s, "Qwen3-8B: FLOPs per (query, key) pair"): costs.pair_flops(qwen),
        **{(s, f"Qwen3-8B, {n:,} prompt: attention share of prefill"):
           costs.prefill_attention_share(qwen, n) for n in (4096, 32768, 131072)},
        (s, "Qwen3-8B, 4,096 prompt: everything but attention, share of prefill"):
            1 - costs.prefill_attention_share(qwen, 4096),
        (s, "Qwen3-8B crossover, triangular kernel (tokens)"): int(cross_q),
        (s, "Qwen3-8B crossover, naive kernel (tokens)"):
            int(costs.crossover_tokens(qwen, "naive")),
        (s, "GPT-2 small crossover, triangular (tokens)"): int(cross_g),
        (s, "Qwen3-8B / GPT-2 crossover"): cross_q / cross_g,
        (s, "GPT-2 small: parameters"): costs.total_params(gpt2),
        (s, "GPT-2 at its 1,024 maximum: attention share of prefill"):
            costs.prefill_attention_share(gpt2, gpt2.max_positions),
        (s, "Qwen3-8B, 256 prompt: attention share of prefill"):
            costs.prefill_attention_share(qwen, 256),
        (s, "Qwen3-8B, context 256: attention share of a decode step"):
            costs.decode_attention_share(qwen, 256),
        (s, "Qwen3-8B, 256: both shares under 1%"):
            int(max(costs.prefill_attention_share(qwen, 256),
                    costs.decode_attention_share(qwen, 256)) < 0.01),
        (s, "Qwen3-8B: head_dim"): qwen.head_dim,
        (s, "Llama-3-8B: head_dim"): llama.head_dim,
        (s, "eager score matrix, 4,096 tokens, 32 heads, bf16 (GiB per layer)"):
            costs.eager_score_matrix_bytes(qwen, 4096),
        (m, "note: dot products per decoded token at 4,096 (millions)"):
            costs.decode_dot_products(llama, 4096),
        (m, "note: keys and values read at 4,096 tokens"): costs.kv_cache_bytes(llama, 4096),
        (m, "note: the ridge point an H100 needs"): costs.GPUS["h100-sxm"].ridge_point,
        (m, "one head, one decoded token: score operations"): scores_1,
        (m, "one head, one decoded token: weighted-sum operations"): values_1,
        (m, "one head, one decoded token: operations"): scores_1 + values_1,
        (m, "Llama-3-8B, 4,096 context: dot products per decoded token"):
            int(costs.decode_dot_products(llama, 4096)),
        (m, "Llama-3-8B: attention operations per decoded token"):
            costs.attention_flops_decode(llama, 4096),
        (m, "… of which the scores"): costs.decode_score_flops(llama, 4096),
        (m, "… and the weighted sum of values"): costs.decode_value_flops(llama, 4096),
        (m, "Llama-3-8B: weight operations per token"): costs.other_flops_decode(llama),
        (m, "Llama-3-8B: input embedding table (parameters)"): costs.lm_head_params(llama),
        (m, "Llama-3-8B: parameters that do work"): costs.matmul_params(llama),
        (m, "Llama-3-8B: parameters"): costs.total_params(llama),
        (m, "Llama-3-8B: embedding table, subtracted"): costs.lm_head_params(llama),
        (m, "Llama-3-8B, 4,096: attention share of a decode step"):
            attention_b / (weights_b + attention_b),
        (m, "Llama-3-8B, 4,096: attention share of a decode step, as 1 in x"):
            1 / costs.decode_attention_share(llama, 4096),
        (m, "Llama-3-8B: query heads"): llama.heads,
        (m, "Llama-3-8B: key/value heads"): llama.kv_heads,
        (m, "Llama-3-8B KV bytes per token per layer (bf16)"):
            int(costs.kv_bytes_per_token_per_layer(llama)),
        (m, "Llama-3-8B KV bytes per token (bf16)"): int(costs.kv_bytes_per_token(llama)),
        (m, "Llama-3-8B keys and values at 4,096 tokens"): costs.kv_cache_bytes(llama, 4096),
        (m, "the bill: keys and values at 4,096 tokens"): costs.kv_cache_bytes(llama, 4096),
        (m, "decode attention arithmetic intensity (FLOP/byte)"):
            costs.decode_arithmetic_intensity(llama, 4096),
        (m, "H100 SXM ridge point (FLOP/byte)"): costs.GPUS["h100-sxm"].ridge_point,
        (m, "Llama-3-8B weights in bf16"): costs.weight_bytes(llama),
        (m, "one user's cache outweighs the weights at (tokens)"):
            costs.kv_outweighs_weights_context(llama),
        (m, "32 users at 4k tokens: keys and values"): costs.kv_cache_bytes(llama, 4096, users=32),
        (m, "8,192-token prompt: scores per head"): 8192 * 8192,
        (m, "8,192-token prompt: score scratch per layer (32 heads, 2 B)"):
            costs.eager_score_matrix_bytes(llama, 8192),
    }


def math_values():  # the second document's dot product, softmax and online softmax
    m = MATH
    sm = numerics.softmax_steps([2, 1, 0.1])
    raw = numerics.softmax_steps([2, 1, 0.1], subtract_max=False)
    fp16_naive = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=False)
    fp16_fixed = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=True)
    walk = online_softmax.online_softmax([2, 1, 3, 0], block_size=2)
    spread = sqrt_dk.expectation((128,), draws=2000).spread[0]
    return {
        (m, "(2, −1, 0.5) · (3, 4, 2)"): dot_product.dot([2, -1, 0.5], [3, 4, 2]),
        (m, "operations per 128-number dot product"): dot_product.operations(128),
        (m, "d = 128: spread of raw scores (mean of draws)"): spread,
        (m, "d = 128: spread after dividing by √128"): spread / math.sqrt(128),
        (m, "√128"): math.sqrt(128),
        (m, "softmax(2, 1, 0.1): first weight"): sm.weights[0],
        (m, "softmax(2, 1, 0.1): second weight"): sm.weights[1],
        (m, "softmax(2, 1, 0.1): third weight"): sm.weights[2],
        (m, "e² (no max subtracted)"): raw.exps[0],
        (m, "e¹ (no max subtracted)"): raw.exps[1],
        (m, "e^0.1 (no max subtracted)"): raw.exps[2],
        (m, "e² + e¹ + e^0.1"): raw.total,
        (m, "largest float16"): int(numerics.largest_finite("float16")),
        (m, "e¹²"): math.exp(12),
        (m, "float16 softmax of (12, 1, 0.1), no max subtracted: garbage"):
            int(fp16_naive.overflowed and fp16_naive.garbage),
        (m, "… with the max subtracted: finite weights summing to 1"):
            int(not fp16_fixed.garbage),
        (m, "max subtracted: first score"): sm.shifted[0],
        (m, "max subtracted: second score"): sm.shifted[1],
        (m, "max subtracted: third score"): sm.shifted[2],
        (m, "max subtracted: every exponential at most 1"): int(sm.exps.max() <= 1),
        (m, "blocks [2, 1] then [3, 0]: running sum"): walk.running_sum,
        (m, "… equal to the full-row sum"): abs(walk.running_sum / walk.full_sum - 1),
    }


SECTIONS = (head_values, sqrt_dk_values, cost_values, math_values)


def head_claims():
    return judged(head_values())


def sqrt_dk_claims():
    return judged(sqrt_dk_values())


def cost_claims():
    return judged(cost_values())


def math_claims():
    return judged(math_values())


def all_claims():  # -> list[Claim]
    return head_claims() + sqrt_dk_claims() + cost_claims() + math_claims()


def counts(claims):  # -> (claims checked, fitted rows, identities)
    return tuple(sum(c.kind == kind for c in claims) for kind in KINDS)


def count_line(claims):  # -> "67 claims checked, 7 fitted, 8 identities"
    n, fitted, ids = counts(claims)
    return f"{n} claims checked, {fitted} fitted, {ids} identities"


KIND_SHOWN = {"claim": "", "fitted": " (fitted)", "identity": " (identity)"}
# how the last line names each kind's rows, and what agreement means for them
KIND_LINE = {"claim": "claims match", "fitted": "fitted rows hold", "identity": "identities hold"}


def table(claims):  # -> str: the ledger as aligned text
    width = max(len(c.what) for c in claims)
    lines = [f"{'':2} {'claim':{width}}  {'document':>28}  {'computed':>18}  rule"]
    for c in claims:
        mark = "✓" if c.ok else "✗"
        lines.append(f"{mark:2} {c.what:{width}}  {c.document:>28}  {c.shown:>18}  {c.rule}"
                     f"{KIND_SHOWN[c.kind]}")
    bad = sum(not c.ok for c in claims)
    lines.append(count_line(claims))
    parts = []
    for kind in KINDS:  # the claims first, always: "N of N claims match"
        rows = [c for c in claims if c.kind == kind]
        if rows or kind == "claim":
            parts.append(f"{sum(c.ok for c in rows)} of {len(rows)} {KIND_LINE[kind]}")
    lines.append(", ".join(parts) + ("" if not bad else f"; {bad} disagree"))
    return "\n".join(lines)
