"""The bytes the tiles save, drawn: two bars to one scale, and a table as prompts grow.

`bars` draws one layer's traffic between GPU memory and the chip at one prompt length (the
traffic panel's `prompt`, Llama 3.1 8B's sizes): the standard way's bar split into Q, K, V
and O against S and P written and read back, the tiled kernel's into Q, O and L against K and
V read again per query block; or the standard way's bar alone. `table` lists both, their
ratio and the standard way's scratch for prompts from 1,024 to 131,072 tokens. Every count
is attention_core.flash's, through the traffic panel's `layer_traffic`.
"""

import html

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.traffic import BYTES, MODEL_NAME, STANDARD, TILED, layer_traffic, shape

BAR_H = 22
LEFT = 4


def bars(prompt, causal, standard_only=False):  # -> (height, body, label)
    t = layer_traffic(prompt, causal)
    scale = (svg.W - 2 * LEFT) / t.standard
    out, y = [], 8
    parts = (
        ("standard", STANDARD, ((t.standard - t.standard_square, "Q, K, V, O"),
                                (t.standard_square, "S and P, written and read back"))),
        ("tiled", TILED, ((t.tiled - t.kv_reads, "Q, O, L"),
                          (t.kv_reads, "K and V, once per query block"))))
    for name, colour, pieces in parts[:1] if standard_only else parts:
        total = sum(size for size, _ in pieces)
        out.append(svg.text(LEFT, y, f"{name}: {fmt.decimal_bytes(total)}", bold=True))
        y += 12
        x = LEFT
        for k, (size, what) in enumerate(pieces):
            w = size * scale
            out.append(svg.box(x, y, max(w, 0.5), BAR_H, colour=colour,
                               opacity=0.35 if k == 0 else 0.8, outline=False,
                               data={"bar": name, "part": what, "bytes": size}))
            x += w
        out.append(svg.box(LEFT, y, total * scale, BAR_H, data={"bar": name}))
        y += BAR_H + 12
        for size, what in reversed(pieces):
            out.append(svg.text(LEFT + 8, y, f"{what}: {fmt.decimal_bytes(size)}", muted=True))
            y += 15
        y += 10
    label = (f"One layer at {fmt.count(prompt)} tokens: the standard way moves "
             f"{fmt.decimal_bytes(t.standard)}" + ("." if standard_only else
                                                   f", the tiled kernel "
                                                   f"{fmt.decimal_bytes(t.tiled)}."))
    return y - 10, "".join(out), label


PROMPTS = (1024, 4096, 8192, 16384, 65536, 131072)


def table(causal):  # -> <table>: traffic and scratch as prompts grow
    heads, _ = shape()
    rows = []
    for n in PROMPTS:
        t = layer_traffic(n, causal)
        rows.append((fmt.count(n), [html.escape(c) for c in (
            fmt.decimal_bytes(t.standard), fmt.decimal_bytes(t.tiled),
            f"{t.standard / t.tiled:.1f}×", fmt.decimal_bytes(heads * n * n * BYTES))]))
    return svg.table("traffic", f"One layer of {MODEL_NAME}, {'causal' if causal else 'no mask'}: "
                     "bytes moved and the standard way's scratch",
                     ("prompt", "standard", "tiled", "less", "scores held"), rows)
