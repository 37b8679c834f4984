"""The tiled kernel drawn: the square of scores cut into tiles, and one tile's arithmetic.

`grid` draws the worked example's 8 × 8 square of scores cut into tiles of B_r rows by B_c
keys, each tile numbered in the order the kernel visits it; under the causal mask the tiles
wholly above the diagonal are left blank (never computed) and in the tiles it crosses each
key after its row shows −∞. `step` draws one tile's arithmetic, a row a query:
its scores, the tile's max, the running max m before and after, the rescale e^(m_old − m_new),
the running sum ℓ before and after and the output row so far. `check` is a table: each row's
log-sum-exp and output at the end, against the formula on the whole square. Every number is
attention_core.flash's, through the tiles panel's `run`.
"""

import html

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.tiles import DONE, NOW, N, num, reference, run
from attention_core import flash, worked_example

CELL = 24
LEFT = 56  # room for the query words


def grid(block_rows, block_cols, causal, step):  # -> (height, body, label)
    r = run(block_rows, block_cols, causal)
    now = step - 1 if step <= len(r.steps) else None  # past the last tile: every tile done
    order = {(t.row_block, t.col_block): t.index for t in r.steps}
    top, out = 16, []
    for k in range(N):
        out.append(svg.text(LEFT + k * CELL + CELL / 2, top - 8, str(k), anchor="middle",
                            muted=True))
    for q, word in enumerate(worked_example.WORDS):
        out.append(svg.text(LEFT - 6, top + q * CELL + CELL / 2, f"{q} {word}", anchor="end",
                            muted=True))
    for i, rows in enumerate(flash.blocks(N, block_rows)):
        for j, cols in enumerate(flash.blocks(N, block_cols)):
            kind = r.kinds[i][j]
            x, y = LEFT + cols[0] * CELL, top + rows[0] * CELL
            w, h = (cols[1] - cols[0]) * CELL, (rows[1] - rows[0]) * CELL
            data = {"row-block": i, "col-block": j, "kind": kind}
            if kind == flash.SKIPPED:
                out.append(svg.box(x + 1, y + 1, w - 2, h - 2, dash="2 3", data=data))
                continue
            at = order[(i, j)]
            out.append(svg.box(x + 1, y + 1, w - 2, h - 2, colour=NOW if at == now else DONE,
                               opacity=0.85 if at == now else 0.45, outline=False, data=data))
            hidden = [(q, k) for q in range(*rows) for k in range(*cols)
                      if kind == flash.DIAGONAL and k > q]  # keys after their row: −∞
            for q, k in hidden:
                out.append(svg.box(LEFT + k * CELL + 2, top + q * CELL + 2, CELL - 4, CELL - 4,
                                   paper=True, outline=False)
                           + svg.text(LEFT + k * CELL + CELL / 2, top + q * CELL + CELL / 2, "−∞",
                                      anchor="middle", muted=True))
            # the visit number in a cell the mask leaves alone: the bottom-left one
            out.append(svg.text(x + CELL / 2, y + h - CELL / 2, str(at + 1), anchor="middle",
                                bold=True, data={"visit": at + 1}))
    count = flash.tile_count(N, worked_example.D_K, block_rows, block_cols, causal)
    y = top + N * CELL + 14
    note = (f"{count.tiles - count.skipped} tiles computed, {count.skipped} skipped"
            if causal else f"all {count.tiles} tiles computed")
    out.append(svg.text(4, y, note, muted=True))
    label = (f"The 8 by 8 square of scores in tiles of {block_rows} rows by {block_cols} keys, "
             f"numbered in visit order: {note}.")
    return y + 10, "".join(out), label


def step(block_rows, block_cols, causal, at):  # -> (height, body, label): tile `at`'s rows,
    # three lines a row: its scores and the tile's max; m, the rescale and ℓ; the output so far
    r = run(block_rows, block_cols, causal)
    s = r.steps[min(at, len(r.steps)) - 1]
    words = worked_example.WORDS
    out = [svg.text(4, 8, f"Tile {s.index + 1}: rows {s.rows[0]}–{s.rows[1] - 1}, keys "
                          f"{s.cols[0]}–{s.cols[1] - 1}", bold=True)]
    first = s.index == next(t.index for t in r.steps if t.row_block == s.row_block)
    y = 14
    for a in range(s.rows[1] - s.rows[0]):
        row = s.rows[0] + a
        raised = not first and s.new_max[a] > s.old_max[a]
        data = {"row": row}
        y += 22
        out.append(svg.line(0, y - 11, svg.W, y - 11, muted=True))
        out.append(svg.text(4, y, f"{row} {words[row]}", bold=True))
        scores = ", ".join(num(v) for v in s.scores[a])
        out.append(svg.text(62, y, f"scores {scores}", data={**data, "step": "scores"}))
        out.append(svg.text(svg.W - 4, y, f"tile max {num(s.tile_max[a])}", anchor="end",
                            data={**data, "step": "max"}))
        y += 16
        out.append(svg.text(16, y, f"m {num(s.old_max[a])} → {num(s.new_max[a])}",
                            data={**data, "step": "m"}))
        out.append(svg.text(140, y, "rescale " + ("—" if first else num(s.rescale[a])),
                            bold=raised, data={**data, "step": "rescale"}))
        y += 16
        added = num(s.new_sum[a] - s.rescale[a] * s.old_sum[a])
        sum_text = (f"ℓ = {added}" if first else
                    f"ℓ {num(s.old_sum[a])} × {num(s.rescale[a])} + {added} = ")
        out.append(svg.text(16, y, sum_text + ("" if first else num(s.new_sum[a])),
                            data={**data, "step": "l"}))
        y += 16
        so_far = ", ".join(num(x) for x in s.new_acc[a] / s.new_sum[a])
        out.append(svg.text(16, y, f"O ÷ ℓ ({so_far})", muted=True,
                            data={**data, "step": "o"}))
    y += 24
    for note in ("rescale = e^(m before − m now), 1 where m held",
                 "ℓ = ℓ before × rescale + the tile's Σ e^(score − m)",
                 "O = O before × rescale + the tile's Σ e^(score − m) · v"):
        out.append(svg.text(4, y, note, muted=True))
        y += 16
    label = (f"Tile {s.index + 1} of the tiled pass: for each of its rows the scores, the tile's "
             "max, the running max and sum before and after it, the factor that rescales the "
             "sum and the output so far, and the output so far.")
    return y, "".join(out), label


def check(block_rows, block_cols, causal):  # -> <table>: each row's L both ways, and the
    # largest difference in its output row, tiled against the whole square
    r = run(block_rows, block_cols, causal)
    out, lse = reference(causal)
    rows = [(f"{q} {word}", [html.escape(c) for c in (
        fmt.sig_figures(float(r.lse[q]), 6), fmt.sig_figures(float(lse[q]), 6),
        fmt.sig_figures(float(abs(r.output[q] - out[q]).max()), 1))])
            for q, word in enumerate(worked_example.WORDS)]
    return svg.table("check", f"Tiles of {block_rows} × {block_cols}, "
                     f"{'causal' if causal else 'no mask'}: the tiled pass against the formula",
                     ("row", "L, tiled", "L, whole square", "largest |O difference|"), rows)
