"""The bill for one decoded token: attention's operations against the bytes it reads.

One new token's attention does a few billion operations (every layer's query heads score it
against every cached key, then blend the cached values), and before any of them can finish
the whole key/value cache must come in from memory. The two bars are those two counts, on one
scale of "how many": the operations are only a few times the bytes. Their ratio, the
arithmetic intensity, is marked on a log scale beside the GPU's ridge point (peak FLOP/s over
bandwidth): left of the ridge memory sets the pace, right of it the math units do. Every
number is the decode panel's (app/panels/decode_bill.py) from attention_core.costs, for one
user: each user reads their own cache, so the bill per token is the same at any batch.
"""

import math

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.decode_bill import ATTENTION, BYTES_PER_VALUE, ROOF_X, intensity
from app.panels.model_picker import shape_of
from attention_core import costs

BAR_W = 312  # the longer bar; the other to the same scale
AXIS = (14, 290)  # the intensity scale's ends, at ROOF_X's 0.1 and 10,000 FLOP per byte
BYTES = "#0072B2"  # Okabe-Ito blue: bytes, another count than the operations' orange


def bill(model, context, gpu):  # -> {figure: value}, from the core
    m, g = shape_of(model), costs.GPUS[gpu]
    ops = costs.decode_score_flops(m, context) + costs.decode_value_flops(m, context)
    return {"shape": m, "gpu": g, "ops": float(ops),
            "bytes": float(costs.kv_cache_bytes(m, context, 1, BYTES_PER_VALUE)),
            "intensity": intensity(m), "ridge": g.ridge_point}


def at(x):  # FLOP per byte -> its place on the scale (log), clipped to the scale's ends
    lo, hi = (math.log10(v) for v in ROOF_X)
    t = (math.log10(min(max(x, ROOF_X[0]), ROOF_X[1])) - lo) / (hi - lo)
    return AXIS[0] + t * (AXIS[1] - AXIS[0])


def inside(x, body):  # -> x moved so a line of text centred on it stays in view
    half = svg.text_width(body) / 2
    return min(max(x, 4 + half), svg.W - 4 - half)


def draw(model, context, gpu):  # -> (height, body, label)
    b = bill(model, context, gpu)
    m, g = b["shape"], b["gpu"]
    out = [svg.text(4, 8, f"{m.name}: one token after {context:,} cached", bold=True)]
    scale = BAR_W / max(b["ops"], b["bytes"])
    y = 28
    for key, words, text, colour in (
            ("ops", "operations of attention", fmt.scale_words(b["ops"]), ATTENTION),
            ("bytes", "bytes of KV cache read", fmt.gb_and_gib(b["bytes"]), BYTES)):
        # a ledger's line: what is counted on the left, the count on the right
        out.append(svg.text(4, y, words, muted=True))
        out.append(svg.text(svg.W - 4, y, text, anchor="end", bold=True,
                            data={"step": key, "value": f"{b[key]:.0f}"}))
        out.append(svg.box(4, y + 9, max(1.0, b[key] * scale), 12, colour=colour, opacity=0.6,
                           outline=False, data={"bar": key}))
        y += 40
    ratio = f"{b['intensity']:.1f}"
    out.append(svg.text(4, y, "operations per byte", muted=True))
    out.append(svg.text(svg.W - 4, y, ratio, anchor="end", bold=True,
                        data={"step": "intensity", "value": repr(b["intensity"])}))
    # the scale: the memory-bound side shaded up to the ridge
    y += 26
    axis = y + 40
    ridge, point = at(b["ridge"]), at(b["intensity"])
    out.append(svg.box(AXIS[0], axis - 30, ridge - AXIS[0], 30, colour=ATTENTION, opacity=0.08,
                       outline=False))
    dot = f"decode attention {ratio}"
    out.append(svg.text(inside(point, dot), y, dot, anchor="middle"))
    out.append(svg.line(point, y + 8, point, axis, muted=True))
    out.append(f'<circle cx="{point:.1f}" cy="{axis}" r="4" fill="{ATTENTION}" class="k" '
               f'data-point="intensity"/>')
    ridge_text = f"{g.name} ridge {b['ridge']:.0f}"
    out.append(svg.text(inside(ridge, ridge_text), y + 16, ridge_text, anchor="middle",
                        bold=True, data={"step": "ridge", "value": repr(b["ridge"])}))
    out.append(svg.line(ridge, y + 24, ridge, axis + 6))
    out.append(svg.line(AXIS[0], axis, AXIS[1], axis))
    lo, hi = (round(math.log10(v)) for v in ROOF_X)
    for e in range(lo, hi + 1):
        x = at(10.0 ** e)
        out.append(svg.line(x, axis, x, axis + 4, muted=True))
        out.append(svg.text(x, axis + 12, fmt.short(10.0 ** e) if e < 0 else f"{10 ** e:,}",
                            anchor="middle", muted=True))
    y = axis + 30
    out.append(svg.text(ridge - 6, y, "memory-bound", anchor="end"))
    out.append(svg.text(ridge + 6, y, "compute-bound"))
    y += 16
    out.append(svg.text(4, y, "FLOP per byte, log scale", muted=True))
    label = (f"{m.name}, one new token after {context:,} tokens: "
             f"{fmt.scale_words(b['ops'])} operations of attention against "
             f"{fmt.gb_and_gib(b['bytes'])} of KV cache read, {ratio} per byte; the "
             f"{g.name}'s ridge point is {b['ridge']:.0f}, so decode attention is "
             + ("memory-bound" if b["intensity"] < b["ridge"] else "compute-bound"))
    return y + 10, "".join(out), label
