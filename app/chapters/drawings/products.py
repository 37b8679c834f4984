"""The shapes as the computation: the head's matrix products drawn with their operators.

1. X × W_Q = Q, X × W_K = K, X × W_V = V: the words projected.
2. Q × Kᵀ = the scores; masked, divided and softmaxed row by row into the weights.
3. The weights × V = the output.

Every matrix is drawn to scale, a cell per number, its sizes read off the core's real
computation (attention_core.worked_example.run). In decode only the newest word is projected:
X, Q, the scores, the weights and the output have one row, and K and V hold the earlier rows
from the cache (drawn muted and marked) under the new one.
"""

from app.chapters.drawings import svg
from attention_core import worked_example

# Okabe-Ito, the shapes panel's colours: one per kind of matrix
COLOURS = {"X": "#999999", "W": "#CC79A7", "Q": "#0072B2", "K": "#D55E00", "V": "#009E73",
           "S": "#E69F00", "A": "#F0E442", "O": "#56B4E9"}
OP = 18  # the room an operator (×, =) takes
CELL = 8  # a number's cell, in units, at most


def sizes(length, phase):  # -> {matrix: (rows, columns)}, from the real computation
    r = worked_example.run(length, phase=phase)
    x_rows = r.q.shape[0]  # decode projects the newest word only
    return {"X": (x_rows, worked_example.D_MODEL), "W_Q": worked_example.W_QUERY.shape,
            "W_K": worked_example.W_KEY.shape, "W_V": worked_example.W_VALUE.shape,
            "Q": r.q.shape, "K": r.k.shape, "V": r.v.shape, "Kᵀ": r.k.T.shape,
            "S": r.scaled_scores.shape, "A": r.weights.shape, "O": r.output.shape}


def matrix(name, shape, x, y, cell, colour, *, cached_rows=0, hidden=None):
    # -> SVG of one matrix at (x, y): a cell per number, its name above, rows × columns below
    rows, cols = shape
    w, h = cols * cell, rows * cell
    out = []
    if cached_rows:
        out.append(svg.box(x, y, w, cached_rows * cell, colour=colour, opacity=0.12,
                           outline=False))
        out.append(svg.box(x, y + cached_rows * cell, w, h - cached_rows * cell, colour=colour,
                           opacity=0.45, outline=False))
    else:
        out.append(svg.box(x, y, w, h, colour=colour, opacity=0.45, outline=False))
    for r, c in hidden or ():
        out.append(svg.box(x + c * cell, y + r * cell, cell, cell, paper=True))
    grid = "".join(f"M{x + c * cell:g} {y:g}v{h:g}" for c in range(1, cols))
    grid += "".join(f"M{x:g} {y + r * cell:g}h{w:g}" for r in range(1, rows))
    if grid:
        out.append(f'<path d="{grid}" class="m" fill="none" stroke-opacity="0.35"/>')
    out.append(svg.box(x, y, w, h, data={"matrix": name, "rows": rows, "cols": cols}))
    out.append(svg.text(x + w / 2, y - 9, name, anchor="middle", bold=True))
    out.append(svg.text(x + w / 2, y + h + 9, f"{rows}×{cols}", anchor="middle", muted=True))
    return "".join(out), w, h


def op(x, y, sign):  # an operator centred in its room
    return svg.text(x + OP / 2, y, sign, anchor="middle", bold=True, data={"op": sign})


def equation(parts, x, y, cell):
    # parts: [(name, shape, colour, extra kwargs) or an operator str] -> (svg, width, height),
    # every matrix's top at y + 16 (room for its name), operators at the tallest's middle
    tallest = max(p[1][0] for p in parts if not isinstance(p, str)) * cell
    out, at = [], x
    for p in parts:
        if isinstance(p, str):
            out.append(op(at, y + 16 + tallest / 2, p))
            at += OP if len(p) == 1 else svg.text_width(p) + 10
            continue
        name, shape, colour, kw = p
        top = y + 16 + (tallest - shape[0] * cell) / 2  # centred on the operators' line
        body, w, _ = matrix(name, shape, at, top, cell, colour, **kw)
        out.append(body)
        at += w
    return "".join(out), at - x, tallest + 32


def draw(length, phase):  # -> (height, body, label)
    s = sizes(length, phase)
    decode = phase == "decode"
    n = s["K"][0]
    old = n - s["Q"][0]  # decode: the rows K and V hold from the cache
    hidden = [(r, c) for r in range(s["A"][0]) for c in range(s["A"][1])
              if c > (n - 1 if decode else r)]  # the causal mask's cells: weight 0
    out = [svg.text(4, 8, "1. Project each word" + (" (the newest)" if decode else ""),
                    bold=True)]
    y, cell = 22, CELL
    for w_name, m in (("W_Q", "Q"), ("W_K", "K"), ("W_V", "V")):
        # decode projects the new word's row only: k and v, which join the cached rows
        name, shape = (m.lower(), (1, s[m][1])) if decode and m in "KV" else (m, s[m])
        body, width, height = equation(
            [("X", s["X"], COLOURS["X"], {}), "×", (w_name, s[w_name], COLOURS["W"], {}), "=",
             (name, shape, COLOURS[m], {})], 4, y, cell)
        out.append(body)
        if name != m:
            out.append(svg.text(4 + width + 6, y + 16 + (height - 32) / 2,
                                f"joins {old} cached rows", muted=True))
        y += height + 4
    ask = "the new query against every key" if decode else "every query against every key"
    out.append(svg.text(4, y + 4, f"2. Score {ask}", bold=True))
    y += 18
    body, width, height = equation(
        [("Q", s["Q"], COLOURS["Q"], {}), "×", ("Kᵀ", s["Kᵀ"], COLOURS["K"], {}), "=",
         ("scores", s["S"], COLOURS["S"], {})], 4, y, cell)
    out.append(body)
    middle = y + 16 + (height - 32) / 2
    out.append(svg.text(4 + width + 8, middle - 8, f"÷√{s['Q'][1]}, mask,", muted=True))
    out.append(svg.text(4 + width + 8, middle + 8, "softmax", muted=True))
    y += height + 4
    out.append(svg.text(4, y + 4, "3. Mix the values by the weights", bold=True))
    y += 18
    cached = {"cached_rows": old} if decode else {}
    body, width, height = equation(
        [("weights", s["A"], COLOURS["A"], {"hidden": hidden}), "×",
         ("V", s["V"], COLOURS["V"], cached), "=", ("output", s["O"], COLOURS["O"], {})],
        4, y, cell)
    out.append(body)
    y += height
    if decode:  # which of V's rows came from the cache; Kᵀ's columns are the same tokens
        out.append(svg.text(4, y + 4, f"V: {old} rows from the cache (pale), 1 new",
                            muted=True))
        y += 16
    label = (f"{'Decode' if decode else 'Prefill'} over {n} words: "
             f"X {s['X'][0]}×{s['X'][1]} times W_Q, W_K, W_V {s['W_Q'][0]}×{s['W_Q'][1]} give "
             f"Q {s['Q'][0]}×{s['Q'][1]}"
             + (f", and a new row of K and V each, joining {old} cached rows; "
                if decode else f", K and V {n}×{s['K'][1]}; ")
             + f"Q times Kᵀ gives the scores {s['S'][0]}×{s['S'][1]}; the weights times V "
             f"({n}×{s['V'][1]}) give the output {s['O'][0]}×{s['O'][1]}")
    return y + 4, "".join(out), label
