"""Where the n² lives, as small multiples: prefill's square against decode's row, n = 3…8.

For each length of the worked example, prefill scores n queries against n keys: an n × n
square of dot products, every cell computed. A decode step scores one query, the newest,
against the same n keys: one row of n cells. Drawn side by side at one scale, the squares grow
by area while the rows grow by length, which is the whole difference between the two phases.
Every count is the core's (the ladder panel's ladder_counts, from attention_core's head), and
the length the panel is set to is framed.
"""

from app.chapters.drawings import svg
from app.panels.ladder import DECODE, LENGTHS, PREFILL, ladder_counts

CELL = 9  # one dot product, in units: the same in every multiple, so areas compare
COLUMNS = 3
COLUMN_W = svg.W / COLUMNS
LEGEND_H = 44
GAP = 5  # between a square and its row
BELOW = GAP + CELL + 20 + 12  # under a line of squares: the gap, the rows, the lengths, margin


def cells(x, y, rows, cols, colour, phase, n):
    # -> SVG of rows × cols filled cells with their grid, the outline carrying its size
    w, h = cols * CELL, rows * CELL
    grid = "".join(f"M{x + c * CELL:g} {y:g}v{h:g}" for c in range(1, cols))
    grid += "".join(f"M{x:g} {y + r * CELL:g}h{w:g}" for r in range(1, rows))
    return (svg.box(x, y, w, h, colour=colour, opacity=0.55, outline=False)
            + (f'<path d="{grid}" class="m" fill="none" stroke-opacity="0.5"/>' if grid else "")
            + svg.box(x, y, w, h, data={"phase": phase, "n": n, "rows": rows, "cols": cols}))


def multiple(n, prefill, decode, x, y, side, current):
    # -> SVG of one length's square and row, in a line of multiples `side` units tall
    # the squares stand on one baseline, their rows under it and the length under those:
    # read across, the squares grow by area and the rows by length
    out = []
    if current:  # the panel's length: framed, so the figure says which state it is
        out.append(svg.box(x + 1, y - 6, COLUMN_W - 4, side + BELOW - 6, dash="3 2"))
    base = y + side
    out.append(cells(x + 6, base - n * CELL, n, n, PREFILL, "prefill", n))
    # the counts sit right of their cells, at the cells' middle
    out.append(svg.text(x + 10 + n * CELL, base - n * CELL / 2, str(prefill), bold=current,
                        data={"step": "prefill", "n": n}))
    out.append(cells(x + 6, base + GAP, 1, n, DECODE, "decode", n))
    out.append(svg.text(x + 10 + n * CELL, base + GAP + CELL / 2, str(decode), bold=current,
                        data={"step": "decode", "n": n}))
    out.append(svg.text(x + 6, base + GAP + CELL + 12, f"n = {n}", bold=True,
                        data={"step": "n", "n": n}))
    return "".join(out)


def draw(length):  # -> (height, body, label)
    counts = ladder_counts()  # {phase: (dot products for n = 3..8)}
    out = []
    for i, (phase, colour, words) in enumerate((
            ("prefill", PREFILL, "prefill: n queries × n keys = n²"),
            ("decode", DECODE, "decode: 1 query × n keys = n"))):
        y = 8 + 18 * i
        out.append(svg.box(4, y - 5, 10, 10, colour=colour, opacity=0.55, outline=False))
        out.append(svg.text(20, y, words, data={"legend": phase}))
    y = LEGEND_H
    for first in range(0, len(LENGTHS), COLUMNS):  # a line of multiples as tall as its largest
        line = range(first, min(first + COLUMNS, len(LENGTHS)))
        side = max(LENGTHS[i] for i in line) * CELL
        for i in line:
            x = round((i - first) * COLUMN_W)  # whole units: the grid lines meet the outline
            out.append(multiple(LENGTHS[i], counts["prefill"][i], counts["decode"][i], x, y,
                                side, LENGTHS[i] == length))
        y += side + BELOW
    label = ("Prefill against decode, dot products for n = "
             + ", ".join(f"{n}: {p} and {d}" for n, p, d in
                         zip(LENGTHS, counts["prefill"], counts["decode"])))
    return y - 10, "".join(out), label  # the frame's stroke inside the view box
