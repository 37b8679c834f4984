"""Predict, then see: the questions the chapters ask before they reveal an answer.

A question's words live in its chapter's Markdown file (`::: question ID`, parsed by
app/chapters/content.py into a `content.Question`); its answer is computed here, one small pure
function per id, from attention_core alone, never typed in. `answer(question)` gives an
`Answer`: the right option's key (choice) or the number (number), the texts the question's
`{name}` placeholders are filled with, and the computed result in words.

`html(question, answer)` is the question as the static chapter and the live chapter both show
it: a fieldset with its legend, radio buttons or a number box, "Check" and "Show me" buttons
(hidden until static/questions.js runs), a polite live region for the feedback, and a
`<details>` holding the answer and why, so with scripts off the answer is still there.
`review_html(chapter)` is the list at a chapter's end of questions still to revisit.
"""

from __future__ import annotations

import functools
import html as html_lib
import json
import math
import re
from dataclasses import dataclass, field

import numpy as np

from app.chapters import content
from app.kit import fmt, resources
from attention_core import (
    costs,
    dot_product,
    flash,
    numerics,
    online_softmax,
    paged,
    sqrt_dk,
    worked_example,
)

PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
SAT = 2  # the worked example's row 2: "sat"
SWEEP_D_KS = (4, 16, 128, 512)  # the d_k the chapter quotes mean effective keys at
SWEEP_DRAWS = 2000  # the claims ledger's draws for those means


@dataclass(frozen=True)
class Answer:
    correct: object  # choice: the right option's key; number: the computed number
    values: dict  # {placeholder: formatted text}; "value" is the headline figure
    shown: str  # the computed result, in words (Markdown, inline)
    slips: dict = field(default_factory=dict)  # number only: {name: a usual wrong number};
    # an answer near one gets the question's `if name:` reply instead of "too low/high"


# --- the answers, one function per question id --------------------------------------------

def mask_off_row2():  # which key gains most in row 2 when the mask comes off
    on, off = worked_example.run(6), worked_example.run(6, causal=False)
    words = worked_example.tokens(6)
    gain = off.weights[SAT] - on.weights[SAT]
    best = int(np.argmax(gain))
    correct = words[best] if gain[best] > 0 else "none"
    mat = words.index("mat")
    values = {"value": fmt.num(off.weights[SAT, mat]), "mat": fmt.num(off.weights[SAT, mat]),
              "mat_on": fmt.short(on.weights[SAT, mat]), "cat_on": fmt.num(on.weights[SAT, 1]),
              "cat_off": fmt.num(off.weights[SAT, 1]),
              "on": fmt.num(off.weights[SAT, words.index("on")])}
    return Answer(correct, values, f"with the mask off, row 2 gives {values['mat']} to *mat* "
                                   f"(it had {values['mat_on']} with the mask on)")


def mask_off_rows_0_4():  # rows 0 and 4 ("the", "the") without the mask
    off = worked_example.run(6, causal=False)
    gap = float(np.abs(off.weights[0] - off.weights[4]).max())
    correct = "same" if gap == 0 else ("close" if gap < 1e-6 else "differ")
    top = int(np.argmax(off.weights[0]))
    values = {"value": "identical", "gap": fmt.short(gap), "top": fmt.num(off.weights[0, top]),
              "top_word": f"*{worked_example.tokens(6)[top]}*",
              "self": fmt.num(off.weights[0, 0])}
    return Answer(correct, values, f"rows 0 and 4 are identical: the largest gap between "
                                   f"them is {values['gap']}")


def pairs_discarded_8():  # scores a naive masked prefill of 8 tokens computes, then drops
    n8 = worked_example.run(8)
    kept = n8.dot_products - n8.pairs_discarded
    values = {"value": fmt.count(n8.pairs_discarded), "total": fmt.count(n8.dot_products),
              "kept": fmt.count(kept), "first_row": fmt.count(n8.n - 1)}
    # the usual slips: the kept pairs, all of them, both triangles, the diagonal, half the
    # square, none (as if a plain kernel skipped them)
    slips = {"kept": kept, "total": n8.dot_products, "both": n8.dot_products - n8.n,
             "diagonal": n8.n, "half": n8.dot_products // 2, "none": 0}
    return Answer(n8.pairs_discarded, values,
                  f"{values['value']} of the {values['total']} pairs are computed, then thrown "
                  "away", slips)


def decode_mask():  # what toggling the mask does to a decode step
    on = worked_example.run(8, phase="decode")
    off = worked_example.run(8, phase="decode", causal=False)
    moved = float(max(np.abs(on.weights - off.weights).max(),
                      np.abs(on.output - off.output).max()))
    correct = "nothing" if moved == 0 else "moves"
    values = {"value": "no weight moves" if moved == 0 else "the weights move",
              "moved": fmt.short(moved), "keys": fmt.count(on.n),
              "self_weight": fmt.num(on.weights[-1, -1])}
    return Answer(correct, values, f"{values['value']}: the largest change in a weight or in "
                                   f"the output is {values['moved']}")


def decode_growth():  # dot products of one decode step as the length grows
    lengths = range(3, 9)
    counts = [worked_example.run(n, phase="decode").dot_products for n in lengths]
    if counts == list(lengths):
        correct = "linear"
    elif counts == [n * n for n in lengths]:
        correct = "square"
    elif set(counts) == {1}:
        correct = "one"
    else:
        correct = "other"
    text = ", ".join(fmt.count(c) for c in counts)
    values = {"value": text, "prefill": ", ".join(
        fmt.count(worked_example.run(n).dot_products) for n in lengths)}
    return Answer(correct, values, f"lengths 3 to 8 give {text} dot products in decode")


def cost_share_4096():  # attention's share of a 4,096-token Qwen3-8B prefill
    m = costs.preset("qwen3-8b")
    share = costs.prefill_attention_share(m, 4096)
    naive = costs.prefill_attention_share(m, 4096, "naive")
    values = {"value": fmt.percent(share), "rest": fmt.percent(1 - share, 2),
              "per_token": fmt.scale_words(costs.other_flops_decode(m), 3),
              "per_pair": fmt.count(costs.pair_flops(m)),
              "share_32k": fmt.percent(costs.prefill_attention_share(m, 32768)),
              "naive": fmt.percent(naive),
              "share_1k": fmt.percent(costs.prefill_attention_share(m, 1024))}
    # the slips: every pair counted (a naive kernel), and the rest's share for attention's
    slips = {"naive": float(naive * 100),
             "complement": float((1 - share) * 100)}
    return Answer(float(share * 100), values,
                  f"attention is {values['value']} of the prefill arithmetic", slips)


def first_crossover():  # which model's attention catches up with the rest soonest
    keys = ("qwen3-8b", "gpt2", "llama-3-8b")
    at = {key: costs.crossover_tokens(costs.preset(key), "triangular") for key in keys}
    first = min(keys, key=at.get)
    correct = "same" if len(set(at.values())) == 1 else first
    values = {"value": fmt.tokens_or_never(at[first]), "gpt2": fmt.tokens_or_never(at["gpt2"]),
              "qwen": fmt.tokens_or_never(at["qwen3-8b"]),
              "llama": fmt.tokens_or_never(at["llama-3-8b"]),
              "times": fmt.significant(at["qwen3-8b"] / at["gpt2"], 2),
              "first": costs.PRESET_NAMES[first]}
    return Answer(correct, values,
                  f"the crossover comes at {values['gpt2']} tokens for GPT-2 small, "
                  f"{values['qwen']} for Qwen3-8B and {values['llama']} for Llama-3-8B")


def divisor_off():  # row 2 with the √d_k divisor switched off
    on, raw = worked_example.run(6), worked_example.run(6, scaled=False)
    w_on, w_raw = on.weights[SAT, 1], raw.weights[SAT, 1]
    e_on, e_raw = on.effective_tokens[SAT], raw.effective_tokens[SAT]
    if w_raw > w_on and e_raw < e_on:
        correct = "sharper"
    elif w_raw < w_on and e_raw > e_on:
        correct = "flatter"
    elif w_raw == w_on and e_raw == e_on:
        correct = "same"
    else:
        correct = "mixed"
    values = {"value": fmt.num(w_raw), "cat": fmt.num(w_raw), "cat_on": fmt.num(w_on),
              "eff": fmt.num(e_raw), "eff_on": fmt.num(e_on),
              "root": fmt.num(math.sqrt(worked_example.D_K))}
    return Answer(correct, values,
                  f"the weight on *cat* goes from {values['cat_on']} to {values['cat']}, and "
                  f"effective tokens attended from {values['eff_on']} to {values['eff']}")


def effective_keys_128():  # the undivided softmax over 16 keys at d_k = 128, on average
    mean = sqrt_dk.expectation(SWEEP_D_KS, draws=SWEEP_DRAWS)
    i = SWEEP_D_KS.index(128)
    raw, scaled = float(mean.effective_raw[i]), float(mean.effective_scaled[i])
    keys = sqrt_dk.DEFAULT_KEYS
    values = {"value": fmt.num(raw, 1), "scaled": fmt.num(scaled, 1),
              "keys": fmt.count(keys), "spread": fmt.num(float(mean.spread[i]), 1),
              "root": fmt.num(math.sqrt(128), 1)}
    # the slips: a one-hot row, the divided row's count, a uniform row
    slips = {"one": 1.0, "scaled": scaled, "uniform": float(keys)}
    return Answer(raw, values, f"about {values['value']} effective keys of "
                               f"{values['keys']}, on average over {fmt.count(SWEEP_DRAWS)} draws",
                  slips)


def agreement_perpendicular():  # (2, −1, 0.5) · (1, 2, 0)
    a, b = (2, -1, 0.5), (1, 2, 0)
    verdict = dot_product.agreement(a, b)
    score = dot_product.dot(a, b)
    products = [fmt.short(x * y) for x, y in zip(a, b)]
    values = {"value": verdict, "score": fmt.short(score),
              "products": f"{', '.join(products[:-1])} and {products[-1]}"}
    return Answer(verdict, values, f"the products are {values['products']}, the score is "
                                   f"{values['score']}: {verdict}")


def fp16_overflow():  # float16 softmax of 12, 1, 0.1 without subtracting the max
    scores = (12, 1, 0.1)
    half = numerics.softmax_steps(scores, "float16", subtract_max=False)
    single = numerics.softmax_steps(scores, "float32", subtract_max=False)
    if half.garbage:
        correct = "garbage"
    elif np.allclose(half.weights, single.weights, atol=1e-3):
        correct = "same"
    else:
        correct = "off"
    weights = ", ".join(fmt.sig_figures_or_whole(w) for w in half.weights)
    values = {"value": weights,
              "overflow": fmt.sig_figures_or_whole(half.exps[0]),
              "exp": fmt.sig_figures_or_whole(single.exps[0]),
              "exact_top": fmt.weight_percent(single.weights[0]),
              "largest32": fmt.big_number(numerics.largest_finite("float32")),
              "largest": fmt.count(numerics.largest_finite("float16")),
              "weights": weights}
    return Answer(correct, values, f"e<sup>12</sup> becomes {values['overflow']} in float16 "
                                   f"and the weights come out {values['weights']}")


LLAMA = "llama-3-8b"


def decode_intensity():  # operations per byte of one decode step's attention
    m = costs.preset(LLAMA)
    x = float(costs.decode_arithmetic_intensity(m, 4096))
    ridge = costs.GPUS["h100-sxm"].ridge_point
    values = {"value": fmt.significant(x, 2), "ridge": fmt.significant(ridge, 3),
              "ops": fmt.scale_words(costs.attention_flops_decode(m, 4096), 2),
              "bytes": fmt.gb_and_gib(costs.kv_cache_bytes(m, 4096)),
              "group": fmt.count(m.heads // m.kv_heads), "layers": fmt.count(m.layers)}
    # the slips: the scores alone, one layer's bytes, the GPU's ridge point, bytes per
    # operation, a cache of every query head (no grouping)
    slips = {"scores": x / 2, "one_layer": x * m.layers, "ridge": float(ridge),
             "inverted": 1 / x, "no_gqa": x * m.kv_heads / m.heads}
    return Answer(x, values, f"{values['value']} operations per byte, against the "
                             f"{values['ridge']} an H100 SXM needs to keep busy", slips)


def decode_batch():  # the same intensity with 64 users
    m, context = costs.preset(LLAMA), 4096

    def per_byte(users):
        return float(costs.attention_flops_decode(m, context) * users
                     / costs.kv_cache_bytes(m, context, users=users))

    one, many = per_byte(1), per_byte(64)
    if math.isclose(one, many):
        correct = "same"
    elif math.isclose(many, 64 * one):
        correct = "up64"
    else:
        correct = "up" if many > one else "down"
    weights_one = costs.other_flops_decode(m) / (costs.matmul_params(m) * 2)
    values = {"value": fmt.significant(many, 2), "one": fmt.significant(one, 2),
              "weights": fmt.significant(64 * weights_one, 2),
              "ridge": fmt.significant(costs.GPUS["h100-sxm"].ridge_point, 3)}
    return Answer(correct, values, f"{values['value']} operations per byte with 64 users, as "
                                   f"with one")


def kv_one_user():  # context at which one conversation's cache outweighs the weights
    m = costs.preset(LLAMA)
    n = float(costs.kv_outweighs_weights_context(m))
    values = {"value": fmt.count(math.floor(n)),
              "per_token": fmt.binary_bytes(costs.kv_bytes_per_token(m)),
              "per_layer": fmt.binary_bytes(costs.kv_bytes_per_token_per_layer(m)),
              "weights": f"{fmt.significant(costs.weight_bytes(m) / 1e9, 2)} GB",
              "weights_exact": f"{fmt.significant(costs.weight_bytes(m) / 1e9, 4)} GB",
              "params": f"{fmt.significant(costs.total_params(m) / 1e9, 3)} billion",
              "per_token_bytes": fmt.count(costs.kv_bytes_per_token(m)),
              "limit": fmt.count(m.max_positions), "layers": fmt.count(m.layers),
              "kv_heads": fmt.count(m.kv_heads), "heads": fmt.count(m.heads)}
    # the slips: keys only (no values), one layer's bytes, the model's context limit, a
    # cache of every query head (no grouping), 4 bytes a number
    slips = {"keys_only": 2 * n, "one_layer": n * m.layers, "limit": float(m.max_positions),
             "no_gqa": n * m.kv_heads / m.heads, "fp32": n / 2}
    return Answer(n, values, f"{values['value']} tokens", slips)


def kv_32_users():  # 32 users at 4,096 tokens: cache against parameters
    m = costs.preset(LLAMA)
    kv, weights = costs.kv_cache_bytes(m, 4096, users=32), costs.weight_bytes(m)
    correct = "cache" if kv > weights else "weights"
    values = {"value": f"{fmt.significant(kv / 1e9, 2)} GB",
              "weights": f"{fmt.significant(weights / 1e9, 2)} GB",
              "per_token": fmt.binary_bytes(costs.kv_bytes_per_token(m)),
              "one_user": fmt.gb_and_gib(costs.kv_cache_bytes(m, 4096))}
    return Answer(correct, values, f"{values['value']} of keys and values against "
                                   f"{values['weights']} of parameters")


def online_sum():  # the running sum after blocks [2, 1] and [3, 0]
    scores = [2, 1, 3, 0]
    walk = online_softmax.online_softmax(scores, block_size=2)
    first = walk.steps[0].new_sum
    second = sum(math.exp(x - max(scores)) for x in scores[2:])
    values = {"value": fmt.num(walk.running_sum), "full": fmt.num(walk.full_sum),
              "long": fmt.num(walk.running_sum, 3), "full_long": fmt.num(walk.full_sum, 3),
              "first": fmt.num(first, 3), "second": fmt.num(second, 3)}
    # the slips: the old sum not rescaled; exponentials taken without subtracting any max;
    # everything kept relative to the first block's max; the new block's small term dropped
    slips = {"no_rescale": first + second,
             "no_max": sum(math.exp(x) for x in scores),
             "old_max": sum(math.exp(x - max(scores[:2])) for x in scores),
             "dropped": first * math.exp(max(scores[:2]) - max(scores)) + 1.0}
    return Answer(float(walk.running_sum), values,
                  f"a running sum of {values['long']}, the same as the whole row's "
                  f"{values['full_long']}", slips)


def flash_rescale():  # the factor row 4's sum and output shrink by at tile 5 (2 × 2, causal)
    from app.panels.tiles import run

    s = run(2, 2, True).steps[4]
    old, new = float(s.old_max[0]), float(s.new_max[0])
    factor = math.exp(old - new)
    values = {"value": fmt.num(factor, 3), "old": fmt.num(old), "new": fmt.num(new)}
    # the slips: the erratum's inverse factor, and no rescale at all
    return Answer(factor, values, f"a factor of {values['value']}",
                  {"inverse": 1 / factor, "one": 1.0})


def flash_skip():  # the share of tiles a causal kernel skips: Llama-3-8B, 8,192 tokens
    from app.panels.traffic import KERNEL_COLS, KERNEL_ROWS

    n, d = 8192, costs.preset("llama-3-8b").head_dim
    count = flash.tile_count(n, d, KERNEL_ROWS, KERNEL_COLS, causal=True)
    share = count.skipped / count.tiles
    correct = ("none" if share < 0.05 else "quarter" if share < 0.375
               else "half" if share < 0.625 else "most")
    values = {"value": fmt.percent(share), "share": fmt.percent(share), "n": fmt.count(n),
              "rows": str(KERNEL_ROWS), "cols": str(KERNEL_COLS),
              "skipped": fmt.count(count.skipped), "tiles": fmt.count(count.tiles)}
    return Answer(correct, values, f"{values['skipped']} of {values['tiles']} tiles, "
                                   f"{values['share']}")


def flash_finished():  # which rows are final after tile 3 of the 2 × 2 causal walk
    from app.panels.tiles import run

    steps = run(2, 2, True).steps
    done = sorted(q for t in steps[:3] if t.last for q in range(*t.rows))
    keys = {(0, 1, 2, 3): "first_four", (2, 3): "block", (): "none",
            tuple(range(8)): "all"}
    tile = steps[2]
    values = {"value": f"rows {done[0]}–{done[-1]}" if done else "none",
              "rows": f"{tile.rows[0]}–{tile.rows[1] - 1}",
              "cols": f"{tile.cols[0]}–{tile.cols[1] - 1}",
              "first": f"{steps[0].rows[0]}–{steps[0].rows[1] - 1}"}
    return Answer(keys.get(tuple(done), "other"), values,
                  f"{values['value']} are final after tile 3")


def flash_computed():  # tiles of 4 × 4 under the causal mask: how many of the four are computed
    count = flash.tile_count(worked_example.MAX_LENGTH, worked_example.D_K, 4, 4, causal=True)
    computed = count.tiles - count.skipped
    values = {"value": str(computed), "tiles": str(count.tiles), "skipped": str(count.skipped),
              "diagonal": str(count.diagonal)}
    # the slips: every tile computed, as a generic mask would; only the tiles below the
    # diagonal, the diagonal's own left out
    return Answer(computed, values, f"{computed} of {count.tiles} tiles",
                  {"all": count.tiles, "below": count.full})


def flash_traffic():  # how many times fewer bytes without the mask: Llama-3-8B, 8,192 tokens
    from app.panels.traffic import BYTES, layer_traffic, shape

    n = 8192
    t = layer_traffic(n, False)
    heads, d = shape()
    ratio = t.standard / t.tiled
    once = heads * (4 * n * d * BYTES + n * 4)  # K and V read only once: no re-reads counted
    values = {"value": fmt.num(ratio, 1), "standard": fmt.decimal_bytes(t.standard),
              "tiled": fmt.decimal_bytes(t.tiled), "kv": fmt.decimal_bytes(t.kv_reads),
              "blocks": fmt.count(n // 128)}
    return Answer(ratio, values, f"{values['value']} times fewer bytes",
                  {"read_once": t.standard / once})


def kv_recompute():  # one step at 8,192 tokens of Llama-3-8B, with the cache and without
    from app.panels.fit import step_flops

    context = 8192
    with_, without = step_flops("llama-3-8b", context)
    ratio = without / with_
    correct = ("same" if ratio < 1.5 else "twice" if ratio < 4 else
               "thousands" if 1000 <= ratio < 1e6 else "context")
    values = {"value": f"{ratio:,.0f} times", "ratio": f"{ratio:,.0f}",
              "context": fmt.count(context), "with": fmt.sig_figures(with_, 3),
              "without": fmt.sig_figures(without, 3)}
    return Answer(correct, values, f"{values['ratio']} times the arithmetic")


def kv_kinds():  # multi-query against a 4,096-token window, at 32,768 tokens
    from app.chapters.drawings import kv

    sizes = {name: size(kv.CONTEXT) for name, _, size in kv.KINDS}
    mqa, sliding = sizes["multi-query (MQA)"], sizes["sliding window, 4,096"]
    correct = "same" if mqa == sliding else "mqa" if mqa < sliding else "window"
    values = {"value": "the same" if mqa == sliding else "different",
              "mqa": fmt.decimal_bytes(mqa), "sliding": fmt.decimal_bytes(sliding),
              "context": fmt.count(kv.CONTEXT), "window": fmt.count(4096),
              "heads": str(sizes["grouped-query (GQA)"] // mqa),
              "tokens": str(kv.CONTEXT // 4096)}
    return Answer(correct, values, f"{values['mqa']} against {values['sliding']}")


def kv_waste():  # empty slots in the last block of a 1,001-token request, blocks of 16
    tokens, size = 1001, paged.VLLM_BLOCK_SIZE
    pool = paged.BlockPool(num_blocks=paged.blocks_for(tokens, size), block_size=size)
    pool.add("request", tokens)
    empty = pool.empty_slots("request")
    full = tokens // size
    values = {"value": str(empty), "tokens": fmt.count(tokens), "size": str(size),
              "full": str(full), "full_tokens": fmt.count(full * size),
              "filled": str(tokens - full * size), "most": str(size - 1)}
    return Answer(empty, values, f"{empty} empty slots", {"remainder": tokens % size})


def kv_fork():  # what a fork copies at once
    from app.panels.blocks import pool_after

    before, after = pool_after(4, 4), pool_after(4, 5)
    copied = after.copies - before.copies
    blocks = len(after.tables["Ben"])
    values = {"value": f"{copied} blocks copied", "tokens": fmt.count(after.lengths["Ben"]),
              "blocks": str(blocks), "refs": str(max(after.refs[b] for b in after.tables["Ben"]))}
    correct = "none" if copied == 0 else "last" if copied == 1 else "all"
    return Answer(correct, values, f"{copied} blocks copied at the fork")


def kv_users():  # requests of 8,192 tokens on Llama-3-8B, 80 GiB, utilization 0.9
    from app.panels.fit import BLOCK, fit, requests_at_once, sizes

    blocks, context = fit("llama-3-8b", 80, 0.9)[-1], 8192
    layers = sizes("llama-3-8b")[1]
    per_request = paged.blocks_for(context, BLOCK)
    users = requests_at_once(blocks, context)
    values = {"value": fmt.count(users), "blocks": fmt.count(blocks),
              "context": fmt.count(context), "per_request": fmt.count(per_request),
              "layers": str(layers)}
    return Answer(users, values, f"{values['value']} requests",
                  {"per_layer": blocks * layers // per_request})


ANSWERS = {name.replace("_", "-"): fn for name, fn in {
    "mask_off_row2": mask_off_row2, "mask_off_rows_0_4": mask_off_rows_0_4,
    "pairs_discarded_8": pairs_discarded_8, "decode_mask": decode_mask,
    "decode_growth": decode_growth, "cost_share_4096": cost_share_4096,
    "first_crossover": first_crossover, "divisor_off": divisor_off,
    "effective_keys_128": effective_keys_128, "agreement_perpendicular": agreement_perpendicular,
    "fp16_overflow": fp16_overflow, "decode_intensity": decode_intensity,
    "decode_batch": decode_batch, "kv_one_user": kv_one_user, "kv_32_users": kv_32_users,
    "online_sum": online_sum, "flash_rescale": flash_rescale,
    "flash_skip": flash_skip, "flash_finished": flash_finished,
    "flash_computed": flash_computed, "flash_traffic": flash_traffic,
    "kv_recompute": kv_recompute, "kv_kinds": kv_kinds, "kv_waste": kv_waste,
    "kv_fork": kv_fork, "kv_users": kv_users}.items()}


@functools.cache
def answer_for(qid):  # id -> Answer (every answer is a pure function of attention_core)
    if qid not in ANSWERS:
        raise KeyError(f"no answer function for the question {qid!r}: add one to "
                       "app/chapters/questions.py's ANSWERS")
    return ANSWERS[qid]()


def answer(question):  # content.Question -> Answer
    return answer_for(question.id)


# --- the HTML -------------------------------------------------------------------------------

def fill(text, values, qid):  # "{mat}" -> "0.23"; an unknown name is an error, named
    def one(match):
        if match.group(1) not in values:
            raise KeyError(f"question {qid!r}: no computed value for {{{match.group(1)}}} "
                           f"(known: {', '.join(sorted(values))})")
        return values[match.group(1)]

    return PLACEHOLDER.sub(one, text)


def inline(text):  # Markdown (inline HTML allowed) -> HTML without a surrounding <p>
    return content.markdown_parser().renderInline(text)


def plain(text):  # Markdown -> its words, for a link's text
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", "", inline(text))).split())


def correct_text(question, ans):  # -> the right answer as HTML: its option, or the number
    if question.kind == "choice":
        return inline(fill(dict(question.options)[ans.correct], ans.values, question.id))
    return inline(ans.shown)


def answer_html(question, ans):  # -> the answer and why, as the <details> and feedback hold it
    why = inline(fill(question.why, ans.values, question.id))
    if question.kind == "choice":
        return (f'<p class="ae-q-solution"><strong>Answer:</strong> '
                f"{correct_text(question, ans)}. Computed: {inline(ans.shown)}.</p><p>{why}</p>")
    return (f'<p class="ae-q-solution"><strong>Answer:</strong> {inline(ans.shown)}.</p>'
            f"<p>{why}</p>")


def within(value, correct, band):  # the bands questions.js judges a number by, in Python
    kind, amount = band
    if kind == "order":
        if value <= 0 or correct <= 0:
            return value == correct
        return value / correct <= amount and correct / value <= amount
    slack = 1e-9 * max(1.0, abs(correct))  # a typed 1.55 is 1.55, not 1.5500...1
    if kind == "relative":
        return abs(value - correct) <= amount * abs(correct) + slack
    return abs(value - correct) <= amount + slack


SLIP_ORDER_BAND = ("relative", 0.1)  # how near a slip counts, where the answer's band is a factor


def slip_band(band):  # the question's band -> the band a slip is recognised within
    return SLIP_ORDER_BAND if band[0] == "order" else band


def verdict(question, ans, given):  # an option key or a number -> (right, the reply's key)
    if question.kind == "choice":
        return given == ans.correct, given
    value = float(given)
    if within(value, float(ans.correct), question.band):
        return True, None
    for name, slip in ans.slips.items():
        if within(value, float(slip), slip_band(question.band)):
            return False, name
    return False, "low" if value < float(ans.correct) else "high"


def replies(question, ans):  # -> {key: reply HTML}, every reply filled with its numbers
    return {key: inline(fill(text, ans.values, question.id)) for key, text in question.replies}


def check_replies(question, ans):  # every wrong answer has a reply of its own, or ValueError
    keys, qid = set(dict(question.replies)), question.id
    wrong = ([key for key, _ in question.options if key != ans.correct]
             if question.kind == "choice" else ["low", "high", *ans.slips])
    missing = [key for key in wrong if key not in keys]
    if missing:
        raise ValueError(f"question {qid!r}: no 'if {missing[0]}:' reply; every wrong answer "
                         "names its own misconception")
    stray = sorted(keys - set(wrong) - {ans.correct})
    if question.kind == "number" and stray:
        raise ValueError(f"question {qid!r}: 'if {stray[0]}:' names no slip its answer "
                         f"computes (known: {', '.join(ans.slips) or 'none'})")


def slip_label(value):  # 36 -> "36"; 2.4177 -> "2.42"; 245064.9 -> "245,065"
    value = float(value)
    return fmt.count(round(value)) if value == round(value) or abs(value) >= 1000 \
        else fmt.significant(value, 3)


def reasons_html(question, ans, said):  # said: its replies() -> why each wrong answer
    # fails, for the <details>
    if question.kind == "choice":
        options = dict(question.options)
        rows = [(inline(fill(options[key], ans.values, question.id)), said[key])
                for key, _ in question.options if key != ans.correct]
        title = "Why the other answers fail"
    else:
        rows = [(f"About {slip_label(value)}", said[name]) for name, value in ans.slips.items()]
        rows += [("Too low", said["low"]), ("Too high", said["high"])]
        title = "If your number was off"
    items = "".join(f"<li><strong>{label}</strong>: {text}</li>" for label, text in rows)
    return f'<p class="ae-q-reasons-title">{title}:</p><ul class="ae-q-reasons">{items}</ul>'


def band_text(band):  # ("relative", 0.05) -> the sentence under a number box saying what counts
    kind, amount = band
    if kind == "order":
        return f"Anything within a factor of {fmt.short(amount)} counts as right."
    if kind == "relative":
        return f"Anything within {fmt.short(amount * 100)}% counts as right."
    if amount == 0:
        return "Only the exact number counts."
    return f"Anything within ±{fmt.short(amount)} counts as right."


def _attr(value):
    return html_lib.escape(str(value), quote=True)


def _number(x):  # a float for a data attribute or JSON: the shortest text that reads back
    return repr(float(x))


def html(question, ans):  # content.Question, Answer -> the question's HTML
    q, qid = question, question.id
    base = f"q-{qid}"
    ask = inline(fill(q.ask, ans.values, qid))
    check_replies(q, ans)
    said = replies(q, ans)
    if q.kind == "choice":
        if ans.correct not in dict(q.options):
            raise ValueError(f"question {qid!r}: the computed answer {ans.correct!r} is none "
                             f"of its options ({', '.join(k for k, _ in q.options)})")
        correct = str(ans.correct)
        rows = "\n".join(
            f'<div class="ae-q-option"><input type="radio" name="{base}" id="{base}-{key}" '
            f'value="{_attr(key)}"><label for="{base}-{key}">'
            f"{inline(fill(text, ans.values, qid))}</label></div>" for key, text in q.options)
        inputs = f'<div class="ae-q-options">\n{rows}\n</div>'
    else:
        if not math.isfinite(float(ans.correct)):
            raise ValueError(f"question {qid!r}: the computed answer {ans.correct!r} is not "
                             "a finite number")
        correct = _number(ans.correct)
        unit = (f' <span class="ae-q-unit" id="{base}-unit">{_attr(q.unit)}</span>'
                if q.unit else "")
        described = " ".join(([f"{base}-unit"] if q.unit else []) + [f"{base}-band"])
        inputs = (f'<div class="ae-q-number"><label for="{base}-n">Your answer</label> '
                  f'<input type="number" id="{base}-n" step="any" inputmode="decimal" '
                  f'autocomplete="off" aria-describedby="{described}">{unit}</div>\n'
                  f'<p class="ae-q-band" id="{base}-band">{_attr(band_text(q.band))}</p>')
    data = {"id": qid, "kind": q.kind, "correct": ans.correct if q.kind == "choice"
            else float(ans.correct), "band": list(q.band), "answer": answer_html(q, ans),
            "options": {key: inline(fill(text, ans.values, qid)) for key, text in q.options},
            "replies": said,
            "slips": [[name, float(value)] for name, value in ans.slips.items()]}
    data_json = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    band = f' data-band="{_attr(q.band[0])}:{_number(q.band[1])}"' if q.band else ""
    return (
        f'<fieldset class="ae-question" id="{base}" data-question="{_attr(qid)}" '
        f'data-kind="{q.kind}" data-correct="{_attr(correct)}"{band}>\n'
        f'<legend><span class="ae-q-label">Predict</span> {ask}</legend>\n'
        f"{inputs}\n"
        f'<div class="ae-q-actions" hidden><button type="button" class="ae-q-check">Check'
        f'</button> <button type="button" class="ae-q-show" data-slot="{_attr(q.show_slot)}" '
        f"data-params=\"{_attr(json.dumps(q.show_params, ensure_ascii=False))}\">Show me"
        f"</button></div>\n"
        f'<div class="ae-q-feedback" id="{base}-feedback" aria-live="polite"></div>\n'
        f'<details class="ae-q-answer"><summary>Answer</summary>\n{answer_html(q, ans)}\n'
        f"{reasons_html(q, ans, said)}\n</details>\n"
        f'<script type="application/json" class="ae-q-data">{data_json}</script>\n'
        f"</fieldset>")


def questions_of(chapter):  # Chapter -> its Questions, in page order
    return [item for item in chapter.sections if isinstance(item, content.Question)]


def review_html(chapter):  # Chapter -> the review at its end: every question, as links
    items = "\n".join(
        f'<li data-question="{_attr(q.id)}"><a href="#q-{_attr(q.id)}">'
        f"{html_lib.escape(plain(fill(q.ask, answer(q).values, q.id)))}</a></li>"
        for q in questions_of(chapter))
    return ('<section class="ae-review" aria-labelledby="ae-review-title">\n'
            '<h2 id="ae-review-title">Questions to revisit</h2>\n'
            '<p class="ae-review-status">Each question of this chapter, with its answer '
            "where it stands:</p>\n"
            f'<ul class="ae-review-list">\n{items}\n</ul>\n</section>')


# the live chapters show a question in a pane of its own (a shadow root): its own styles
LIVE_CSS = resources.stylesheet("questions-live.css")
