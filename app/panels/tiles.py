"""FlashAttention, tile by tile: the worked example's eight words through the tiled forward pass.

The 8 × 8 square of scores is cut into tiles of B_r query rows by B_c keys. The kernel walks
the query blocks one at a time and, inside each, the key blocks; each step computes one tile
of scores, updates the rows' running max m and sum ℓ, rescales the output accumulator and
adds the tile's share. The square itself is never stored: the panel colours the tiles done,
the one now, those still to come and, under the causal mask, those skipped. After a row
block's last tile its rows are divided by ℓ and are final; after the last tile the output
equals softmax(QKᵀ/√5)V. Every number is attention_core.flash's, on the worked example's own
Q, K and V.

The panel has the one shape (app/kit/states.py). Controls: B_r and B_c (2 or 4), the causal
mask and the step; a step past the last tile shows the last. Two parts: the cells masked inside
the tiles the diagonal crosses (blocks, mask), and the tiles, the tile now and its numbers.
"""

import functools

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class, scroll_box
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import flash, worked_example

N = worked_example.MAX_LENGTH  # 8 words
BLOCKS = (2, 4)
MOST_STEPS = (N // min(BLOCKS)) ** 2  # 16 tiles at 2 × 2
ROWS_SHOWN = max(BLOCKS)  # the readout's table holds a tile's rows
HEIGHT = 330
# Okabe-Ito: the tile now, the tiles done; a skipped tile is left pale and crossed out
NOW, DONE = "#E69F00", "#56B4E9"
WAITING, SKIPPED, HIDDEN = "#E8ECF0", "#FFFFFF", "#D9D9D9"


def num(x, digits=3):  # a number in the stepper: −∞ spelled out, real minus signs
    return fmt.sig_figures(float(x), digits)


@functools.lru_cache(maxsize=8)
def run(block_rows, block_cols, causal):  # -> flash.TiledRun on the worked example's Q, K, V
    h = worked_example.run(N, causal=causal)
    return flash.tiled_forward(h.q, h.k, h.v, block_rows=block_rows, block_cols=block_cols,
                               causal=causal)


@functools.lru_cache(maxsize=2)
def reference(causal):  # -> (output, lse): softmax(QKᵀ/√5)V on the whole square, float64
    h = worked_example.run(N, causal=causal)
    return flash.reference(h.q, h.k, h.v, causal=causal)


def tile_colour(kind, at, now):  # -> a tile's paint at this step
    if kind == flash.SKIPPED:
        return SKIPPED
    return NOW if at == now else DONE if at < now else WAITING


def cells_state(block_rows, block_cols, causal, step):  # the tiles, the tile now, its scores
    r = run(block_rows, block_cols, causal)
    now = min(step, len(r.steps)) - 1
    s = r.steps[now]
    visit = {(t.row_block, t.col_block): t.index for t in r.steps}
    tiles = {c: [] for c in ("x", "y", "w", "h", "lx", "ly", "colour", "label")}
    for i, rows in enumerate(flash.blocks(N, block_rows)):
        for j, cols in enumerate(flash.blocks(N, block_cols)):
            kind, at = r.kinds[i][j], visit.get((i, j))
            for c, v in (("x", (cols[0] + cols[1]) / 2), ("y", (rows[0] + rows[1]) / 2),
                         ("w", cols[1] - cols[0] - 0.08), ("h", rows[1] - rows[0] - 0.08),
                         # a visit's number in the tile's bottom-left cell, which the mask never
                         # hides; "skipped" across the tile
                         ("lx", (cols[0] + cols[1]) / 2 if kind == flash.SKIPPED
                          else cols[0] + 0.5),
                         ("ly", (rows[0] + rows[1]) / 2 if kind == flash.SKIPPED
                          else rows[1] - 0.5),
                         ("colour", tile_colour(kind, at, now)),
                         ("label", "skipped" if kind == flash.SKIPPED else
                          "" if at == now else str(at + 1))):
                tiles[c].append(v)
    scores = [(q, k) for q in range(*s.rows) for k in range(*s.cols)]
    count = flash.tile_count(N, worked_example.D_K, block_rows, block_cols, causal)
    return {
        "source:tiles": tiles,
        "source:scores": {"x": [k + 0.5 for _, k in scores], "y": [q + 0.5 for q, _ in scores],
                          "label": [num(s.scores[q - s.rows[0], k - s.cols[0]], 2)
                                    for q, k in scores]},
        "source:tile": {"x": [(s.cols[0] + s.cols[1]) / 2], "y": [(s.rows[0] + s.rows[1]) / 2],
                        "w": [s.cols[1] - s.cols[0]], "h": [s.rows[1] - s.rows[0]]},
        "holes:step": step_holes(r, s, count),
    }


def hidden_state(block_rows, block_cols, causal):  # the cells masked inside diagonal tiles
    kinds = run(block_rows, block_cols, causal).kinds
    cells = [(q, k) for i, rows in enumerate(flash.blocks(N, block_rows))
             for j, cols in enumerate(flash.blocks(N, block_cols))
             if kinds[i][j] == flash.DIAGONAL
             for q in range(*rows) for k in range(max(q + 1, cols[0]), cols[1])]
    return {"source:hidden": {"x": [k + 0.5 for _, k in cells], "y": [q + 0.5 for q, _ in cells]}}


def step_holes(r, s, count):  # -> {hole: text} of the readout for the tile now
    words = worked_example.WORDS
    kind = {flash.FULL: "every key is at or before every row",
            flash.DIAGONAL: "the diagonal crosses it: keys after a row are −∞ for that row"}
    out = {
        "k": str(s.index + 1), "of": str(len(r.steps)),
        "rows": f"{s.rows[0]}–{s.rows[1] - 1}", "cols": f"{s.cols[0]}–{s.cols[1] - 1}",
        "kind": kind[s.kind],
        "skipped": (f"{count.skipped} of {count.tiles} tiles lie above the diagonal and are "
                    "never computed." if r.causal else
                    f"No mask: all {count.tiles} tiles are computed."),
    }
    for at in range(ROWS_SHOWN):
        row = {c: "" for c in ("word", "max", "m", "rescale", "l", "o")}
        if at < s.rows[1] - s.rows[0]:
            so_far = s.new_acc[at] / s.new_sum[at]
            row = {"word": f"{s.rows[0] + at} {words[s.rows[0] + at]}",
                   "max": num(s.tile_max[at]),
                   "m": f"{num(s.old_max[at])} → {num(s.new_max[at])}",
                   "rescale": "—" if s.col_block == first_col(r, s) else num(s.rescale[at]),
                   "l": f"{num(s.old_sum[at])} → {num(s.new_sum[at])}",
                   "o": ", ".join(num(x, 2) for x in so_far)}
        out.update({f"{c}{at}": v for c, v in row.items()})
    out["end"] = end_text(r, s)
    return out


def first_col(r, s):  # -> the first key block this row block visits (0: it holds key 0)
    return next(t.col_block for t in r.steps if t.row_block == s.row_block)


def end_text(r, s):  # -> what the tile now finishes
    if s.index == len(r.steps) - 1:
        out, lse = reference(r.causal)
        gap = max(float(np.abs(r.output - out).max()), float(np.abs(r.lse - lse).max()))
        return ("The last tile: every row is finished. The output and L = m + log ℓ differ "
                f"from the formula's softmax(QKᵀ/√5)V, computed on the whole square, by at most "
                f"{fmt.sig_figures(gap, 2)}: rounding in the last bits.")
    if s.last:
        return (f"Rows {s.rows[0]}–{s.rows[1] - 1} are finished: each is divided by its ℓ and "
                "written once; the next query block starts from m = −∞, ℓ = 0.")
    return "The rows are not finished: the shown output is O ÷ ℓ so far."


TABLE_ROWS = "".join(
    f'<tr><th scope="row">{hole(f"word{i}")}</th><td>{hole(f"max{i}")}</td>'
    f'<td>{hole(f"m{i}")}</td><td>{hole(f"rescale{i}")}</td><td>{hole(f"l{i}")}</td>'
    f'<td>{hole(f"o{i}")}</td></tr>' for i in range(ROWS_SHOWN))
STEP = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>Tile {hole("k", "b")} of {hole("of")}: query rows {hole("rows")} against keys '
    f'{hole("cols")}; {hole("kind")}.</p>'
    + scroll_box("the rows of this tile")
    + '<table class="ae-arith"><caption class="ae-sr">the tile\'s rows: its max, the running '
    'max m and sum ℓ before and after it, the rescale e^(m before − m now) and the output so '
    'far, O ÷ ℓ</caption>'
    '<thead><tr><th scope="col">row</th><th scope="col">tile max</th>'
    '<th scope="col">m</th><th scope="col">rescale</th><th scope="col">ℓ</th>'
    '<th scope="col">O ÷ ℓ</th></tr></thead>'
    f'<tbody>{TABLE_ROWS}</tbody></table></div>'
    f'{hole("end", "p")}{hole("skipped", "p", class_="ae-small")}</div>')

StepReadout = readout_class("StepReadout", STEP, module=__name__)
STYLE = resources.stylesheet("tiles.css")


class TilesPanel(StatePanel):
    """FlashAttention, tile by tile: the tiled forward pass on the worked example."""

    readout_css = STYLE

    block_rows = param.Selector(default=2, objects=list(BLOCKS), label="B_r, query rows a tile")
    block_cols = param.Selector(default=2, objects=list(BLOCKS), label="B_c, keys a tile")
    causal = param.Boolean(default=True, label="causal mask")
    step = param.Integer(default=1, bounds=(1, MOST_STEPS), label="tile",
                         doc="the tile the kernel computes now; past the last, the last")

    url_keys = ("block_rows", "block_cols", "causal", "step")

    @classmethod
    def controls(cls):
        return [Control.choice("block_rows", BLOCKS), Control.choice("block_cols", BLOCKS),
                Control.toggle("causal"), Control.slider("step", range(1, MOST_STEPS + 1))]

    @classmethod
    def parts(cls):
        return [Part(("block_rows", "block_cols", "causal"), hidden_state),
                Part(("block_rows", "block_cols", "causal", "step"), cells_state)]

    def build(self, state):
        paint = ink()
        self.tiles_source = ColumnDataSource(state["source:tiles"])
        self.hidden_source = ColumnDataSource(state["source:hidden"])
        self.scores_source = ColumnDataSource(state["source:scores"])
        self.tile_source = ColumnDataSource(state["source:tile"])
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(-2.2, N), y_range=Range1d(N, -0.7), min_width=240,
                     outline_line_color=None, background_fill_color=paint.paper)
        fig.rect("x", "y", "w", "h", source=self.tiles_source, fill_color="colour",
                 line_color="#999999", line_dash="dashed")
        fig.text("lx", "ly", text="label", source=self.tiles_source, text_align="center",
                 text_baseline="middle", text_font_size="12px", text_color="#000000")
        fig.rect("x", "y", 0.84, 0.84, source=self.hidden_source, fill_color=HIDDEN,
                 line_color=None)
        fig.text("x", "y", text="label", source=self.scores_source, text_align="center",
                 text_baseline="middle", text_font_size="11px", text_color="#000000")
        fig.rect("x", "y", "w", "h", source=self.tile_source, fill_alpha=0.0,
                 line_color=paint.strong, line_width=3)
        words = worked_example.WORDS
        side = {"text_font_size": "11px", "text_color": paint.text, "text_baseline": "middle"}
        fig.text([-0.15] * N, [q + 0.5 for q in range(N)],
                 text=[f"{q} {w}" for q, w in enumerate(words)], text_align="right", **side)
        fig.text([k + 0.5 for k in range(N)], [-0.35] * N, text=[str(k) for k in range(N)],
                 text_align="center", **side)
        fig.text([-0.15], [-0.35], text=["keys"], text_align="right", **side)
        fig.axis.visible = False
        fig.grid.visible = False
        self.figure = fig
        self._step_text = self.new_readout(StepReadout, state["holes:step"])
        self.widgets = {
            "block_rows": chrome.radio(self, "block_rows", 110),
            "block_cols": chrome.radio(self, "block_cols", 110),
            "causal": pn.widgets.Toggle.from_param(self.param.causal, width=130),
            "step": pn.widgets.IntSlider.from_param(self.param.step, width=260),
        }
        self.targets = {"source:tiles": self.tiles_source, "source:hidden": self.hidden_source,
                        "source:scores": self.scores_source, "source:tile": self.tile_source,
                        "holes:step": self._step_text}

        controls = [chrome.labelled(self.widgets["block_rows"], self.param.block_rows.label),
                    chrome.labelled(self.widgets["block_cols"], self.param.block_cols.label),
                    self.widgets["causal"], self.widgets["step"]]
        return chrome.chart_panel(self, registry.title_of(type(self)), controls, fig, HEIGHT,
                                  self._step_text, STYLE)
