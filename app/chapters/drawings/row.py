"""The worked row: one query of the head, step by step, drawn beside the formula.

For each key of the inspected query (a table row per key), the formula's steps in order: the
score q·k, the score after the divisor, after the mask (−∞ where hidden), e^(s − m) with m the
row's largest score, and the attention weight, e^(s − m) over the row's sum; then the row's
sum and the output, Σ w·v. Every number is the core's (attention_core.worked_example.run),
formatted as the head panel formats it. Decode draws the newest token's row and says whether
it equals prefill's row for that token, bit for bit.
"""

import numpy as np

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.heatmap import inspected  # the head panel's: the row it shows
from attention_core import worked_example

KEY_COLUMN = 66  # the key's label, then five number columns, each right-aligned at its edge
WIDTHS = (46, 46, 46, 62, 52)  # q·k, ÷√d_k, mask, e^(s−m), weight
EDGES = tuple(KEY_COLUMN + sum(WIDTHS[:c + 1]) - 2 for c in range(len(WIDTHS)))
STEPS = ("raw", "scaled", "masked", "exp", "weight")
ROW_H = 16
WEIGHT = "#0072B2"  # the weight's bar: the heatmap's blue


def numbers(length, query, mask, divide, phase):  # -> (HeadResult, row index, position)
    r = worked_example.run(length, causal=mask, scaled=divide, phase=phase)
    position = inspected(length, query, phase)
    return r, r.row(position), position


def cell_texts(r, i):  # -> {step: [text per key]}, plus the row's sum and output
    return {"raw": [fmt.num(x) for x in r.raw_scores[i]],
            "scaled": [fmt.num(x) for x in r.scaled_scores[i]],
            "masked": [fmt.num(x) for x in r.masked_scores[i]],
            "exp": [fmt.num(x, 3) for x in r.exps[i]],
            "weight": [fmt.num(x) for x in r.weights[i]],
            "sum": fmt.num(r.sums[i], 3), "max": fmt.num(np.max(r.masked_scores[i])),
            "output": fmt.vector(r.output[i])}


def same_as_prefill(length, mask, divide):  # decode's row against prefill's last row
    d = worked_example.run(length, causal=mask, scaled=divide, phase="decode")
    p = worked_example.run(length, causal=mask, scaled=divide, phase="prefill")
    return (np.array_equal(d.weights[0], p.weights[-1])
            and np.array_equal(d.output[0], p.output[-1]))


def draw(length, query, mask, divide, phase):  # -> (height, body, label)
    r, i, position = numbers(length, query, mask, divide, phase)
    texts, words = cell_texts(r, i), worked_example.tokens(length)
    divisor = f"÷√{r.d_k}" if divide else "÷ 1"
    heads = ("q·k", divisor, "mask", "e^(s−m)", "weight")
    what = "the newest token" if phase == "decode" else "one query"
    out = [svg.text(4, 8, f"Query {position} ({words[position]}), {what}", bold=True)]
    y = 30
    out.append(svg.text(4, y, "key", muted=True))
    for c, head in enumerate(heads):
        out.append(svg.text(EDGES[c], y, head, anchor="end", muted=True))
    out.append(svg.line(0, y + 9, svg.W, y + 9, muted=True))
    top = int(np.argmax(r.weights[i]))
    for j in range(r.n):
        y = 50 + ROW_H * j
        hidden = bool(r.hidden[i, j])
        out.append(svg.text(4, y, f"{j} {words[j]}", muted=hidden, bold=j == top))
        w = float(r.weights[i, j])
        if w > 0:
            out.append(svg.box(EDGES[3] + 6, y - 6, max(1.0, (WIDTHS[4] - 6) * w), 12,
                               colour=WEIGHT, opacity=0.3, outline=False))
        for c, step in enumerate(STEPS):
            out.append(svg.text(EDGES[c], y, texts[step][j],
                                anchor="end", muted=hidden, bold=(step == "weight" and j == top),
                                data={"step": step, "key": j}))
    y = 50 + ROW_H * r.n - 6
    out.append(svg.line(0, y, svg.W, y, muted=True))
    y += 12
    out.append(svg.text(4, y, f"m = {texts['max']}", data={"step": "max"}))
    out.append(svg.text(EDGES[2], y, "sum", anchor="end", muted=True))
    out.append(svg.text(EDGES[3], y, texts["sum"], anchor="end",
                        data={"step": "sum"}))
    out.append(svg.text(EDGES[4], y, fmt.num(r.weights[i].sum()),
                        anchor="end", data={"step": "weight-sum"}))
    y += 20
    out.append(svg.text(4, y, f"Σ w·v, the output ({r.v.shape[1]} numbers):", muted=True))
    y += 16
    out.append(svg.text(4, y, texts["output"], data={"step": "output"}))
    if phase == "decode":
        y += 18
        same = same_as_prefill(length, mask, divide)
        note = (f"= prefill's row {position}, bit for bit" if same
                else f"≠ prefill's row {position}")
        out.append(svg.text(4, y, note, bold=True, data={"step": "same-as-prefill"}))
    label = (f"Query {position} ({words[position]}): weights "
             + ", ".join(f"{words[j]} {texts['weight'][j]}" for j in range(r.n)
                         if not r.hidden[i, j])
             + f"; output {texts['output']}")
    return y + 12, "".join(out), label
