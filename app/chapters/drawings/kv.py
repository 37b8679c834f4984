"""The KV cache drawn: the block pool with its tables, a GPU's memory as one bar, the bytes a
token takes by kind of attention, and a decode step with and without the cache.

`pool` draws the blocks panel's sixteen blocks at one event of its story, each in its holder's
colour (shared ones in the shared colour, with how many tables hold them), and under it each
sequence's block table as a row of boxes, its last box filled as far as its tokens go. `bar`
draws the fit panel's GPU memory to scale: weights, the rest, the cache, what is held back,
then the blocks arithmetic. `kinds` is a table: the bytes one token's keys and values take in
one shape (32 layers, 32 query heads of 128) under each kind of attention, and what 32,768
tokens hold. `recompute` is a table: one decode step and a whole response with the cache and
without. Every number is attention_core.paged's (and costs' for the model's FLOPs).
"""

import html

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.blocks import COLOURS, COLUMNS, FREE, POOL, SEQUENCES, SHARED, holders, pool_after
from app.panels.fit import PARTS, fit, gib, sizes, step_flops
from attention_core import costs, paged

CELL = svg.W / COLUMNS
BOX = 22


def pool(block_size, event):  # -> (height, body, label)
    p = pool_after(block_size, event)
    out, y = [], 0
    for block in range(POOL):
        held = holders(p, block)
        x, y = (block % COLUMNS) * CELL, (block // COLUMNS) * 34
        colour = FREE if not held else SHARED if len(held) > 1 else COLOURS[held[0]]
        out.append(svg.box(x + 2, y + 2, CELL - 4, 30, colour=colour, opacity=0.8,
                           data={"block": block, "refs": p.refs[block]}))
        out.append(svg.text(x + CELL / 2, y + 11, str(block), anchor="middle"))
        if p.refs[block] > 1:
            out.append(svg.text(x + CELL / 2, y + 24, f"×{p.refs[block]}", anchor="middle",
                                bold=True))
    y += 50
    for seq in SEQUENCES:
        if seq not in p.tables:
            continue
        out.append(svg.text(4, y + BOX / 2, seq, bold=True))
        for k, block in enumerate(p.tables[seq]):
            x = 74 + k * (BOX + 4)
            last = k == len(p.tables[seq]) - 1
            filled = (block_size - p.empty_slots(seq)) / block_size if last else 1.0
            colour = SHARED if p.refs[block] > 1 else COLOURS[seq]
            out.append(svg.box(x, y, BOX * filled, BOX, colour=colour, opacity=0.6,
                               outline=False)
                       + svg.box(x, y, BOX, BOX, data={"seq": seq, "block": block})
                       + svg.text(x + BOX / 2, y + BOX / 2, str(block), anchor="middle"))
        out.append(svg.text(svg.W - 4, y + BOX / 2, f"{p.lengths[seq]} tokens", anchor="end",
                            muted=True))
        y += BOX + 8
    y += 6
    out.append(svg.text(4, y, f"{p.used()} of {POOL} blocks in use, {p.copies} copied; "
                              f"blocks of {block_size}", muted=True))
    label = (f"The pool of {POOL} blocks after event {event}: {p.used()} in use; the block "
             f"tables of {', '.join(s for s in SEQUENCES if s in p.tables)}.")
    return y + 10, "".join(out), label


def bar(model, gpu, utilization):  # -> (height, body, label)
    total, weights, other, cache, back, page, blocks = fit(model, gpu, utilization)
    name, layers, kv_heads, head_dim, _ = sizes(model)
    out, x, y = [svg.text(4, 8, f"{name} on {gpu} GiB, utilization {utilization:g}",
                          bold=True)], 4.0, 22
    width = svg.W - 8
    for (part, colour), size in zip(PARTS, (weights, other, cache, back)):
        w = width * size / total
        out.append(svg.box(x, y, w, 26, colour=colour, opacity=0.85,
                           data={"part": part, "bytes": int(size)}))
        x += w
    y += 44
    for (part, _), size in zip(PARTS, (weights, other, cache, back)):
        out.append(svg.text(4, y, part, muted=True) + svg.text(svg.W - 4, y, gib(size),
                                                                 anchor="end"))
        y += 16
    y += 8
    for line in ((f"a block of one layer: 2 × 16 × {kv_heads} × {head_dim} × 2 = "
                 f"{fmt.count(page)} bytes"),
                 (f"{gib(cache)} ÷ {fmt.count(page)} ÷ {layers} layers = "
                 f"{fmt.count(blocks)} blocks"),
                 f"logged: {fmt.count(paged.logged_tokens(blocks, 16))} token slots"):
        out.append(svg.text(4, y, line, data={"line": line.split(":")[0][:12]}))
        y += 16
    label = (f"{name} on a {gpu} GiB GPU at utilization {utilization:g}: {gib(cache)} for "
             f"the cache, {fmt.count(blocks)} blocks of 16 tokens.")
    return y, "".join(out), label


# one shape, every kind: 32 layers, 32 query heads of 128, bf16 (Llama 3 8B's but for its
# KV heads), and the kinds' own sizes: DeepSeek-V3's latent (512 + 64 rotary), Mistral 7B
# v0.1's 4,096-token window, Llama 4's 8,192-token chunks on three layers in four
LAYERS, HEADS, HEAD_DIM = 32, 32, 128
CONTEXT = 32_768
KINDS = (
    ("multi-head (MHA)", "a K and V head for every query head",
     lambda n: paged.kv_bytes(n, LAYERS, HEADS, HEAD_DIM, 2)),
    ("grouped-query (GQA)", "8 K and V heads, 4 query heads to each",
     lambda n: paged.kv_bytes(n, LAYERS, 8, HEAD_DIM, 2)),
    ("multi-query (MQA)", "one K and V head for all 32",
     lambda n: paged.kv_bytes(n, LAYERS, 1, HEAD_DIM, 2)),
    ("latent (MLA)", "one 512 + 64 vector a token and layer",
     lambda n: paged.mla_bytes(n, LAYERS, 512, 64, 2)),
    ("sliding window, 4,096", "GQA; every layer keeps the last 4,096 tokens",
     lambda n: paged.kv_bytes(n, LAYERS, 8, HEAD_DIM, 2, window=4096, windowed_layers=LAYERS)),
    ("chunked, 8,192", "GQA; 3 layers in 4 keep at most a chunk",
     lambda n: paged.kv_bytes(n, LAYERS, 8, HEAD_DIM, 2, window=8192,
                              windowed_layers=LAYERS * 3 // 4)),
)


def kinds():  # -> <table>: bytes a token, and what 32,768 tokens hold, by kind
    rows = [(name, [html.escape(c) for c in (how, fmt.count(size(1)),
                                             fmt.decimal_bytes(size(CONTEXT)))])
            for name, how, size in KINDS]
    return svg.table("kinds", f"One shape ({LAYERS} layers, {HEADS} query heads of {HEAD_DIM}, "
                     "bf16) under each kind of attention",
                     ("attention", "what it caches", "bytes for one token",
                      f"{fmt.count(CONTEXT)} tokens"), rows)


PROMPT, RESPONSE = 256, 4096  # the documents' example: a 256-token prompt, 4,096 answered


def power_html(x):  # 1.93e10 -> "1.93 × 10<sup>10</sup>": a count too big for words
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{float(mantissa):.3g} × 10<sup>{int(exponent)}</sup>"


def recompute(model, context):  # -> <table>: one step at `context`, and a whole response
    m = costs.preset(model)
    w, a = costs.other_flops_decode(m), costs.pair_flops(m)
    rows = [(f"one step at {fmt.count(context)} tokens", step_flops(model, context)),
            (f"{fmt.count(RESPONSE)} tokens after a {PROMPT}-token prompt",
             (paged.response_flops(w, a, PROMPT, RESPONSE),
              paged.response_flops(w, a, PROMPT, RESPONSE, cached=False)))]
    return svg.table("recompute", f"{m.name}: FLOPs with the cache and without it",
                     ("decoding", "with the cache", "recomputing the context", "more"),
                     [(what, [power_html(with_), power_html(without),
                              f"{without / with_:,.0f}×"]) for what, (with_, without) in rows])
