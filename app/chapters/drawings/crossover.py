"""The crossover as a line crossing a line: prefill's attention FLOPs against everything else.

On log-log axes over the prompt's length, attention's FLOPs (per-pair FLOPs × n²/2 pairs for
a triangular kernel, × n² for a naive one) climb with slope 2, and the weight matmuls' (2 ×
their parameters per token × n) with slope 1; the two lines cross once, at the crossover,
where attention starts to cost more than all the rest. A dashed line marks the model's max
position: a crossover right of it is one the model never reaches. Every number is
attention_core.costs' (pair FLOPs, prefill FLOPs and crossover_tokens), for the cost panel's
model and kernel.
"""

import math

import numpy as np

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.cost import CHART_MAX, COLOURS
from app.panels.model_picker import shape_of
from attention_core import costs

LOW = 256  # the prompts drawn: 256 to CHART_MAX (262,144) tokens, 2⁸ to 2¹⁸
LEFT, RIGHT, TOP, BOTTOM = 40, 290, 58, 238  # the plot's box
POINTS = 61  # log-spaced samples: straight lines need two, a sliding window's bend more
SUPERSCRIPT = str.maketrans("0123456789−", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def lines(m, kernel):  # -> (prompts [POINTS], attention FLOPs, everything else's FLOPs)
    n = np.geomspace(LOW, CHART_MAX, POINTS)
    return (n, np.asarray(costs.attention_flops_prefill(m, n, kernel)),
            np.asarray(costs.other_flops_prefill(m, n)))


def power(e):  # 16 -> "10¹⁶"
    return "10" + str(e).replace("-", "−").translate(SUPERSCRIPT)


def path(xs, ys, name, colour=None):  # -> one polyline, its name a data attribute
    d = "".join(f"{'L' if i else 'M'}{x:.1f} {y:.1f}" for i, (x, y) in enumerate(zip(xs, ys)))
    paint = f'stroke="{colour}"' if colour else 'class="k"'
    return f'<path d="{d}" {paint} stroke-width="2" fill="none" data-line="{name}"/>'


def draw(model, kernel):  # -> (height, body, label)
    m = shape_of(model)
    n, attention, other = lines(m, kernel)
    cross = costs.crossover_tokens(m, kernel)
    lo = math.floor(math.log10(min(attention.min(), other.min())))
    hi = math.ceil(math.log10(max(attention.max(), other.max())))

    def x_of(tokens):  # prompt tokens -> x, log scale
        return LEFT + (RIGHT - LEFT) * math.log(tokens / LOW) / math.log(CHART_MAX / LOW)

    def y_of(flops):  # FLOPs -> y, log scale
        return BOTTOM - (BOTTOM - TOP) * (math.log10(flops) - lo) / (hi - lo)

    pairs = "n²/2 pairs" if kernel == "triangular" else "n² pairs"
    out = [svg.text(4, 8, f"Prefill FLOPs of {m.name}, log-log", bold=True)]
    for y, colour, words in ((26, COLOURS[kernel], f"attention ({kernel}, {pairs}): ∝ n²"),
                             (42, None, "everything else (weight matmuls): ∝ n")):
        out.append(path((4, 20), (y, y), "key", colour))
        out.append(svg.text(24, y, words))
    out.append(svg.line(LEFT, TOP, LEFT, BOTTOM, muted=True))
    out.append(svg.line(LEFT, BOTTOM, RIGHT, BOTTOM, muted=True))
    every = 1 if (BOTTOM - TOP) / (hi - lo) >= 16 else 2  # room for a label per decade
    for e in range(lo, hi + 1, every):
        out.append(svg.line(LEFT - 3, y_of(10.0 ** e), LEFT, y_of(10.0 ** e), muted=True))
        out.append(svg.text(LEFT - 5, y_of(10.0 ** e), power(e), anchor="end", muted=True))
    for e in range(math.ceil(math.log10(LOW)), math.floor(math.log10(CHART_MAX)) + 1):
        x = x_of(10 ** e)
        out.append(svg.line(x, BOTTOM, x, BOTTOM + 3, muted=True))
        out.append(svg.text(x, BOTTOM + 12, fmt.count(10 ** e), anchor="middle", muted=True))
    if m.max_positions and LOW <= m.max_positions <= CHART_MAX:
        x, value = x_of(m.max_positions), fmt.thousands(m.max_positions)
        out.append(svg.line(x, TOP, x, BOTTOM, muted=True, dash="4 3"))
        # two short lines beside the dashed one, on its left where they fit: the lines climb
        # to the plot's top right corner
        left = x - 4 - svg.text_width("max position") >= LEFT + 4
        tx, anchor = (x - 4, "end") if left else (x + 4, "start")
        out.append(svg.text(tx, TOP + 6, "max position", anchor=anchor, muted=True))
        out.append(svg.text(tx, TOP + 20, value, anchor=anchor, muted=True,
                            data={"step": "max-position", "value": m.max_positions}))
    xs = [x_of(t) for t in n]
    out.append(path(xs, [y_of(f) for f in other], "other"))
    out.append(path(xs, [y_of(f) for f in attention], "attention", COLOURS[kernel]))
    y = BOTTOM + 30
    text = f"crossover: {fmt.tokens_or_never(cross)} tokens"
    if not math.isfinite(cross):
        text, x = "no crossover: attention never catches up", (LEFT + RIGHT) / 2
    elif LOW <= cross <= CHART_MAX:
        x, flops = x_of(cross), float(costs.other_flops_prefill(m, cross))
        out.append(svg.line(x, y_of(flops), x, BOTTOM, muted=True, dash="1 2"))
        out.append(f'<circle cx="{x:.1f}" cy="{y_of(flops):.1f}" r="4" '
                   f'fill="{COLOURS[kernel]}" class="k" data-point="crossover"/>')
    else:
        text, x = text + ", off the chart", (LEFT + RIGHT) / 2
    half = svg.text_width(text) / 2
    out.append(svg.text(min(max(x, 4 + half), svg.W - 4 - half), y, text, anchor="middle",
                        bold=True, data={"step": "crossover", "value": repr(cross)}))
    out.append(svg.text(RIGHT, y + 18, "prompt tokens, log scale", anchor="end", muted=True))
    label = (f"Prefill FLOPs of {m.name} against prompt length, log-log: attention with a "
             f"{kernel} kernel grows as n², everything else as n; they cross at "
             f"{fmt.tokens_or_never(cross)} tokens"
             + (f"; the max position is {m.max_positions:,}" if m.max_positions else ""))
    return y + 28, "".join(out), label
