"""Prefill's scratch, drawn to scale: the n × n scores of one head that a kernel writing them
out holds, against one tile of scores that a fused kernel holds at a time instead. The big
square is the prompt's length on a side; the small one the tile's, at the same scale (at
8,192 tokens a 128-wide tile is a speck: that is the point). Bytes are the memory panel's
(app/panels/memory_bill.py scratch_state), from attention_core.costs.
"""

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.memory_bill import DTYPES, TILE
from app.panels.model_picker import shape_of
from attention_core import costs

SIDE = 150  # the big square's side, in units
SCORES, TILE_COLOUR = "#E69F00", "#0072B2"  # the scores' orange (as the shapes), the tile blue


def draw(model, prompt, dtype):  # -> (height, body, label)
    m, b = shape_of(model), DTYPES[dtype]
    t = min(TILE, prompt)
    eager = costs.eager_score_matrix_bytes(m, prompt, 1, b)
    fused = t * t * m.heads * b
    tile_side = max(2.0, SIDE * t / prompt)
    out = [svg.text(4, 8, f"{m.name}, a prompt of {prompt:,} tokens", bold=True)]
    top = 24
    out.append(svg.box(4, top, SIDE, SIDE, colour=SCORES, opacity=0.35,
                       data={"matrix": "scores", "rows": prompt, "cols": prompt}))
    out.append(svg.box(4, top, tile_side, tile_side, colour=TILE_COLOUR, outline=False,
                       data={"matrix": "tile", "rows": t, "cols": t}))
    x = SIDE + 14
    out.append(svg.line(4 + tile_side, top + tile_side, x - 4, top + 8 + 15 * 6,
                        muted=True))  # a leader from the speck to its words
    lines = [(f"{prompt:,} × {prompt:,}", True), ("scores a head", False),
             (f"× {m.heads} heads × {b} bytes", False), (fmt.decimal_bytes(eager), True),
             ("a layer, written out", False), ("", False),
             (f"blue: a {t} × {t} tile", False), (f"× {m.heads} heads:", False),
             (fmt.decimal_bytes(fused), True)]
    for i, (line, bold) in enumerate(lines):
        if line:
            out.append(svg.text(x, top + 8 + 15 * i, line, bold=bold))
    y = top + SIDE + 16
    out.append(svg.text(4, y, f"{eager / fused:,.0f} times less, if each head held one tile",
                        muted=True, data={"step": "ratio", "value": repr(eager / fused)}))
    label = (f"{m.name}, {prompt:,}-token prompt: the {prompt:,} × {prompt:,} scores of one "
             f"head; over {m.heads} heads at {b} bytes, {fmt.decimal_bytes(eager)} a layer, "
             f"against one {t} × {t} tile a head, {fmt.decimal_bytes(fused)}")
    return y + 12, "".join(out), label
