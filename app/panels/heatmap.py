"""The head: one real attention head over "the cat sat on the mat and purred".

Every cell of the heatmap is a weight the head computed; the panel under it shows the
inspected row's arithmetic step by step, checks the causal mask's promise (row i equals a
pass over the first i + 1 tokens, bit for bit) and says so when a control changes nothing.

The panel has the one shape (app/kit/states.py): five controls with 384 settings in all, a
pure `state()` made of three parts (where the masked layer and the position labels sit,
which depends on the length alone; the cells, which do not depend on the inspected query;
and the row), and a view built once. The text readouts are `chrome.Readout` holes. A live
session pushes a new state; a static page looks it up in the shipped table and sets the same
values in the browser.

Why the figure is drawn as it is (fixed 0..1 axes, places worked out in the browser, blank
cells over the masked ones): docs/REPAINT.md, "The head, as the worked example".
"""

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    Label,
    LinearColorMapper,
    Range1d,
    Rect,
    Text,
)
from bokeh.palettes import Cividis256
from bokeh.plotting import figure
from bokeh.transform import transform

from app.kit import chrome, fmt, registry, resources, states
from app.kit.chrome import hole, readout_class, scroll_box
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from app.kit.transforms import static_transform
from attention_core import head, worked_example

MIN_LENGTH, MAX_LENGTH = 3, len(worked_example.WORDS)
HEIGHT = 330
MASK_FILL, MASK_TEXT = "#e4e4e4", "#3b3b3b"
MASKED_LABEL = "−∞"
OUTLINE = "#d55e00"  # Okabe-Ito vermillion: stands out on every Cividis shade
LOG_LINES = 4
SLIDER_WIDTH = 260
CELL_COLUMNS = ("x", "y", "weight", "label", "key", "query")
MASKED_COLUMNS = ("x", "y", "label", "key", "query")
GRID = MAX_LENGTH  # the source holds every cell of the largest sequence, row-major
# the figure's weights only pick a colour (one of 256) and a label colour: four decimals
# are plenty, and a third of the bytes of a full float on the wire
WEIGHT_DIGITS = 4


def tick_label(position, word):  # tokens repeat ("the" twice): the position tells them apart
    return f"{position} {word}"


# each position's labels beside the matrix: its number over its word above, "2 sat" left
KEY_LABELS = [f"{p}\n{w}" for p, w in enumerate(worked_example.WORDS)]
QUERY_LABELS = [tick_label(p, w) for p, w in enumerate(worked_example.WORDS)]


def relative_luminance(colour):  # "#rrggbb" -> WCAG 2 relative luminance, 0 (black)..1
    def linear(c):
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):  # two "#rrggbb" -> their WCAG contrast ratio, 1..21
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def black_or_white(fill):  # "#rrggbb" -> black or white, whichever reads better on it
    return max(("#000000", "#ffffff"), key=lambda text: contrast(text, fill))


def text_mapper():
    # The labels' colour is mapped in the browser from the weight, like the fill, so it is
    # never sent. Cividis gets lighter monotonically: one switch from white to black, at
    # bin `dark`; a two-colour mapper centred there gives the same colour for every weight.
    colours = [black_or_white(c) for c in Cividis256]
    dark = colours.index("#000000")
    assert set(colours[:dark]) == {"#ffffff"} and set(colours[dark:]) == {"#000000"}
    t = dark / len(colours)
    return LinearColorMapper(palette=["#ffffff", "#000000"], low=t - 1, high=t + 1)


def cell_index(query, key):  # a cell's row in the source
    return query * GRID + key


ALL_CELLS = [(q, k) for q in range(GRID) for k in range(GRID)]  # the cell source's rows
ABOVE = [(q, k) for q, k in ALL_CELLS if k > q]  # the masked layer's rows: every cell the
# causal mask can hide, of the largest sequence
POSITIONS = range(GRID)  # the position labels' rows
LENGTHS = range(MIN_LENGTH, MAX_LENGTH + 1)
CELL_SIZE, MASKED_SIZE = 0.96, 0.9  # of a position's width: a gap between cells; the masked
# layer a little inside, so a cell drawn over one hides it to the edge
PLACE_DIGITS = 4  # on a 0..1 axis a few hundred pixels wide: 0.1 px at most

# A cell's place on the fixed 0..1 axes is worked out in the browser from its key or query
# position and a column `n` of the same source, the length it is placed by (0: not drawn,
# a NaN place): static/model_code.js's cellCentre and cellShare; `place` is the same
# arithmetic in Python (docs/REPAINT.md).


def place(position, n):  # -> the centre of a token position on the fixed 0..1 axes
    return round((position + 0.5) / n, PLACE_DIGITS)


def centre_py(positions, data):  # cellCentre for the stills: each row's place, NaN if not drawn
    return [(p + 0.5) / n if n > 0 else math.nan for p, n in zip(positions, data["n"])]


def share_py(part, lengths, data):  # cellShare for the stills: `part` of one position's width
    return [part / n if n > 0 else 0 for n in lengths]


HERO = (
    '<div class="ae-readout ae-hero" aria-live="polite">'
    f'<span><b>dot products</b> {hole("dots", class_="ae-big")}'
    f' <small>({hole("dots_formula")})</small></span>'
    f'<span><b>pairs computed then discarded:</b> {hole("discarded")}</span>'
    f'<span><b>effective tokens attended</b> (row {hole("eff_row")}): {hole("eff")}</span>'
    '</div>')

CAPTION = (
    f'<p class="ae-caption" aria-live="polite">Row {hole("row")} puts its largest weight, '
    f'{hole("top_weight")}, on key {hole("top_key")}. Each row sums to 1; grey hatched cells '
    'are masked (−∞ before the softmax, weight exactly 0). Colour: Cividis, 0 dark to 1 '
    'light.</p>')

TABLE_COLUMNS = ("raw", "scaled", "masked", "exp", "weight")  # hole prefixes, per key row
ARITHMETIC = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div class="ae-table-title">The arithmetic of row {hole("title_row")}, d_k = '
    f'{hole("d_k")}</div>'
    + scroll_box("the arithmetic of the row") + '<table class="ae-arith">'
    '<caption class="ae-sr">scores, mask, exponentials and weights of query '
    f'{hole("caption_row")} against each key</caption>'
    "<thead><tr><th scope='col'>key</th><th scope='col'>q·k</th>"
    f"{hole('divisor', 'th', scope='col')}<th scope='col'>mask</th>"
    "<th scope='col'>exp(s\u00a0− max)</th><th scope='col'>weight</th></tr></thead><tbody>"
    + "".join(
        f"<tr>{hole(f'key{j}', 'th', scope='row')}"
        + "".join(hole(f"{c}{j}", "td") for c in TABLE_COLUMNS[:-1])
        + f"<td>{hole(f'weight{j}', 'b')}</td></tr>"
        for j in range(MAX_LENGTH))
    + "<tr class='ae-sum'><th scope='row'>sum</th><td></td><td></td><td></td>"
    f"{hole('exp_sum', 'td')}{hole('weight_sum', 'td')}</tr></tbody></table></div>"
    '<div class="ae-out">weight = exp ÷ sum. output = Σ weight × value = '
    f'{hole("output")}</div>'
    '<div class="ae-small">s is the softmax\'s input; subtracting the row\'s max changes no '
    "weight (the math chapter shows why).</div></div>")

TRUNCATE = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div><b>truncate line:</b> {hole("truncate")}</div>{hole("blas", "div", class_="ae-small")}'
    '</div>')

LOG = (
    '<div class="ae-log" aria-live="polite"><b>log</b> <small>(newest first)</small><ul>'
    + "".join(hole(f"log{i}", "li") for i in range(LOG_LINES)) + "</ul></div>")


HeroReadout = readout_class("HeroReadout", HERO, module=__name__)


# the heatmap as a table a screen reader can walk: every weight of the sequence, row by
# row; visually hidden (the figure shows the same); rows and columns past the sequence are
# empty holes, and so not shown
WEIGHTS = (  # in a hidden box: a table does not clip its own overflow
    '<div class="ae-sr"><table class="ae-weights">'
    "<caption>Attention weights of the head: one row per query, one column per key; "
    "masked cells are −∞ before the softmax, weight 0</caption>"
    "<thead><tr><th scope='col'>query, key</th>"
    + "".join(hole(f"kh{k}", "th", scope="col") for k in range(MAX_LENGTH)) + "</tr></thead>"
    "<tbody>"
    + "".join("<tr>" + hole(f"qh{q}", "th", scope="row")
              + "".join(hole(f"w{q}_{k}", "td") for k in range(MAX_LENGTH)) + "</tr>"
              for q in range(MAX_LENGTH))
    + "</tbody></table></div>")


def weights_table_values(nums):  # -> {hole: text} of the weights table
    r, words = nums.result, worked_example.WORDS
    rows = {int(q): row for row, q in enumerate(r.query_positions)}
    values = {}
    for k in range(MAX_LENGTH):
        values[f"kh{k}"] = f"{k} {words[k]}" if k < r.n else ""
    for q in range(MAX_LENGTH):
        values[f"qh{q}"] = f"{q} {words[q]}" if q < r.n else ""
        for k in range(MAX_LENGTH):
            if q >= r.n or k >= r.n:
                text = ""
            elif q not in rows:
                text = "not computed"  # decode runs the newest token's row only
            elif r.hidden[rows[q], k]:
                text = "masked"
            else:
                text = f"{r.weights[rows[q], k]:.2f}"
            values[f"w{q}_{k}"] = text
    return values


WeightsReadout = readout_class("WeightsReadout", WEIGHTS, module=__name__)
CaptionReadout = readout_class("CaptionReadout", CAPTION, module=__name__)
ArithmeticReadout = readout_class("ArithmeticReadout", ARITHMETIC, module=__name__)
TruncateReadout = readout_class("TruncateReadout", TRUNCATE, module=__name__)
LogReadout = readout_class("LogReadout", LOG, module=__name__)


@dataclass(frozen=True)
class HeadNumbers:
    """Everything the panel shows, for one setting of the controls."""

    result: head.HeadResult
    tokens: tuple
    position: int  # the inspected query's token position
    row: int  # its row in result (0 in decode)
    truncate: head.TruncateCheck
    blas: head.TruncateCheck


def _read_only(obj):  # a frozen dataclass whose arrays are shared: make them read-only
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return obj


@functools.lru_cache(maxsize=512)  # every setting of the controls fits (6·8·2·2·2 = 384)
def head_numbers(n, position, phase, mask, divide):  # -> HeadNumbers, shared by sessions
    kw = {"causal": mask, "scaled": divide}
    result = _read_only(worked_example.run(n, phase=phase, **kw))
    return HeadNumbers(
        result=result, tokens=tuple(worked_example.tokens(n)), position=position,
        row=result.row(position),
        truncate=_read_only(worked_example.truncate(n, position, **kw)),
        blas=_read_only(worked_example.truncate(n, position, exact=False, **kw)),
    )


def inspected(length, query, phase):  # -> token position whose row is shown
    return length - 1 if phase == "decode" else min(query, length - 1)


# the position labels' room beside the matrix, in pixels: two 11 px lines above it ("7" over
# "purred"), the widest "7 purred" left of it
LABEL_GAP = 4
KEY_LABELS_HEIGHT, QUERY_LABELS_WIDTH = 35, 56
SMALL = "12px"

BLANK = -1.0  # the weight of a cell that covers the masked layer with the plot's colour


def cells(nums):
    # -> ({column: [GRID² values]}, drawn cell indices): the dynamic columns of the cell
    # source and the cells drawn over the masked layer. A cell outside the sequence, masked,
    # or in a row decode does not compute is not drawn as a weight: its weight is 0.0 and
    # its label None (no text box); such a cell above the diagonal is drawn blank (weight
    # BLANK), over the masked layer beneath.
    r = nums.result
    weight, label = [0.0] * GRID * GRID, [None] * GRID * GRID
    shown, masked = [], set()
    for row, q_pos in enumerate(r.query_positions):
        for k_pos in range(r.n):
            if r.hidden[row, k_pos]:
                masked.add((int(q_pos), k_pos))
                continue
            i = cell_index(int(q_pos), k_pos)
            shown.append(i)
            w = float(r.weights[row, k_pos])
            weight[i] = round(w, WEIGHT_DIGITS)  # for the colour only
            label[i] = f"{w:.2f}"
    # the masked layer holds every cell above the diagonal: it shows exactly when those
    # are the masked cells of this sequence (prefill, mask on), and nothing is masked else
    above = {(q, k) for q in range(r.n) for k in range(q + 1, r.n)}
    if masked not in (above, set()):
        raise AssertionError(f"masked cells {sorted(masked)} are neither none nor all the "
                             "cells above the diagonal; the masked layer cannot draw them")
    if not masked:  # nothing masked: cover the masked layer where no weight already does
        blank = {cell_index(q, k) for q, k in above} - set(shown)
        for i in blank:
            weight[i] = BLANK
        shown.extend(blank)
    return {"weight": weight, "label": label}, sorted(shown)


# --- the state: three parts, each a pure function of some of the controls --------------------

def places_state(length):  # where the masked layer and the position labels sit
    n = length
    return {  # each row's `n`: the length it is placed by, 0 past the sequence (not drawn)
        **{f"prop:masked_layer_{m}.visible": m == n for m in LENGTHS},
        # and a row past it holds no text: Bokeh makes and measures a box for every string
        "source:masked": {"n": [n if k < n else 0 for _, k in ABOVE],
                          "label": [MASKED_LABEL if k < n else None for _, k in ABOVE]},
        "source:positions": {"n": [n if p < n else 0 for p in POSITIONS],
                             "key_label": [KEY_LABELS[p] if p < n else None for p in POSITIONS],
                             "query_label": [QUERY_LABELS[p] if p < n else None
                                             for p in POSITIONS]},
        "prop:decode_label.y": round((n - 1) / (2 * n), PLACE_DIGITS),  # between the last two rows
        "prop:query_widget.end": n - 1,
    }


def cells_state(length, mask, divide, phase):  # the weights drawn, and the query control
    nums = head_numbers(length, length - 1, phase, mask, divide)
    columns, shown = cells(nums)
    drawn = set(shown)
    return {
        # n: the length a drawn cell is placed by, 0 for a cell not drawn (see cellCentre)
        "source:cells": {**columns, "n": [length if i in drawn else 0
                                          for i in range(len(ALL_CELLS))]},
        "holes:weights_table": weights_table_values(nums),
        "prop:decode_label.visible": phase == "decode",
        "prop:query_widget.disabled": phase == "decode",
    }


def row_state(length, query, mask, divide, phase):  # the inspected row and every text
    position = inspected(length, query, phase)
    nums = head_numbers(length, position, phase, mask, divide)
    return {
        "source:row": {"y": [place(position, length)], "height": [round(1 / length, PLACE_DIGITS)]},
        "holes:hero": hero_values(nums, phase),
        "holes:caption": caption_values(nums),
        "holes:arithmetic": arithmetic_values(nums, divide),
        "holes:truncate": truncate_values(nums, mask),
        "log:log": log_entries(nums, query, mask, divide, phase),
    }


def hero_values(nums, phase):  # -> {hole: text} of the hero line
    r = nums.result
    return {
        "dots": str(r.dot_products),
        "dots_formula": f"n² = {r.n}²" if phase == "prefill" else f"n = {r.n}",
        "discarded": f"{r.pairs_discarded} of {r.dot_products}",
        "eff_row": f"{nums.position}, {nums.tokens[nums.position]}",
        "eff": f"{r.effective_tokens[nums.row]:.2f}",
    }


def caption_values(nums):  # -> {hole: text} of the caption under the heatmap
    weights = nums.result.weights[nums.row]
    top = int(np.argmax(weights))
    return {
        "row": f"{nums.position} ({nums.tokens[nums.position]})",
        "top_weight": f"{weights[top]:.2f}",
        "top_key": f"{top} ({nums.tokens[top]})",
    }


def arithmetic_values(nums, divide):  # -> {hole: text} of the inspected row's arithmetic
    r, i, pos = nums.result, nums.row, nums.position
    values = {
        "title_row": f"{pos} ({nums.tokens[pos]})", "d_k": str(r.d_k),
        "caption_row": str(pos), "divisor": f"÷√{r.d_k}" if divide else "÷ 1",
        "exp_sum": fmt.num(r.sums[i], 3), "weight_sum": fmt.num(r.weights[i].sum()),
        "output": fmt.vector(r.output[i]),
    }
    for j in range(MAX_LENGTH):  # keys past the sequence: empty, and the row is hidden
        inside = j < r.n
        values[f"key{j}"] = f"{j} {nums.tokens[j]}" if inside else ""
        values[f"raw{j}"] = fmt.num(r.raw_scores[i, j]) if inside else ""
        values[f"scaled{j}"] = fmt.num(r.scaled_scores[i, j]) if inside else ""
        values[f"masked{j}"] = fmt.num(r.masked_scores[i, j]) if inside else ""
        values[f"exp{j}"] = fmt.num(r.exps[i, j], 3) if inside else ""
        values[f"weight{j}"] = fmt.num(r.weights[i, j]) if inside else ""
    return values


def truncate_values(nums, mask):  # -> {hole: text}: the truncate line and the BLAS line
    t, b, pos = nums.truncate, nums.blas, nums.position
    if t.equal:
        truncate = f"row {pos} matches a pass over the first {pos + 1} tokens, bit for bit"
    else:
        truncate = (f"row {pos} against a pass over the first {pos + 1} tokens: mismatch: "
                    f"largest disagreement {fmt.sci(t.largest_disagreement)}")
    if not mask and not b.equal:
        blas = ("a BLAS matmul path (numpy's optimised matrix products): mismatch too, but "
                "here the missing mask already explains it")
    elif b.equal:
        blas = ("a BLAS matmul path (numpy's optimised matrix products): bit for bit at this "
                "row (its sums may not be elsewhere)")
    else:
        blas = ("a BLAS matmul path (numpy's optimised matrix products): largest disagreement "
                f"{fmt.sci(b.largest_disagreement)}: "
                "its sums regroup with the array's shape, so results can differ in the last "
                "digits between runs of different sizes")
    return {"truncate": truncate, "blas": blas}


def log_entries(nums, query, mask, divide, phase):
    # -> {control: the line a change of it adds to the log}: what it did, or why nothing
    r, pos, n = nums.result, nums.position, nums.result.n
    word = nums.tokens[pos]
    eff = f"{r.effective_tokens[nums.row]:.2f}"
    past = (f"; inspect query {query} is past the last token, so row {pos} ({word}) is shown"
            if phase == "prefill" and query > n - 1 else "")
    lines = {
        "length": (f"sequence length {n}: {r.dot_products} dot products, "
                   f"{r.pairs_discarded} of them discarded" + past),
        "query": f"inspect query {pos} ({word}): effective tokens attended {eff}" + past,
    }
    if phase == "decode":
        lines["phase"] = (f"phase decode: {r.dot_products} dot products (one query, the newest "
                          f"token, against every key); the only query is the newest token, "
                          f"so row {pos} ({word}) is shown")
    else:
        lines["phase"] = (f"phase prefill: {r.dot_products} dot products (every query against "
                          f"every key); inspect query {pos} ({word}) again" + past)
    state = "on" if mask else "off"
    if phase == "decode":
        lines["mask"] = f"causal mask {state}: no weight changed, because {r.mask_note}"
    elif mask:
        lines["mask"] = (f"causal mask on: {r.pairs_discarded} of {r.dot_products} scores are "
                         "paid for, then set to −∞ before the softmax")
    else:
        lines["mask"] = ("causal mask off: every query now also sees the keys after it; "
                         "nothing is discarded")
    factor = np.sqrt(r.d_k)
    # q·k itself never changes; the switch scales what the softmax gets. A row that sees one
    # key keeps its weight of 1 either way.
    visible = int((~r.hidden[nums.row]).sum())
    sharper = (f"but row {pos} sees one key, so its weight stays 1" if visible == 1
               else "so it is sharper")
    lines["divide"] = (f"divide scores by √d_k {'on' if divide else 'off'}: the softmax's "
                       + (f"inputs are q·k ÷ √{r.d_k} ≈ q·k ÷ {factor:.2f}" if divide
                          else f"inputs are q·k itself, {factor:.2f}× larger, {sharper}")
                       + f"; row {pos} attends {eff} tokens")
    return lines


STYLE = resources.stylesheet("heatmap.css").replace("LOG_LINES_HERE", str(LOG_LINES))

# a toggle that is on looks like Panel's solid (pressed) button; off, like its outline one
TOGGLE_STYLE = resources.stylesheet("toggle.css")


class HeadPanel(StatePanel):
    """The head: the worked example's attention weights and the arithmetic of one row."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    length = param.Integer(default=6, bounds=(MIN_LENGTH, MAX_LENGTH), label="sequence length",
                           doc="how many of the eight words are in the sequence")
    # the query keeps its own value when the length shrinks below it or in decode (the row
    # shown is clamped instead), so it is where it was when the length grows or prefill
    # returns; bounds stay 0..7 so a URL carrying length=8&query=7 is never clamped
    query = param.Integer(default=2, bounds=(0, MAX_LENGTH - 1), label="inspect query",
                          doc="which row's arithmetic is shown (in decode: the last token)")
    mask = param.Boolean(default=True, label="causal mask",
                         doc="set scores of future keys to −∞ before the softmax")
    divide = param.Boolean(default=True, label="divide scores by √d_k",
                           doc="scale scores by 1/√d_k before the softmax")
    phase = param.Selector(default="prefill", objects=list(head.PHASES), label="phase",
                           doc="prefill runs every query; decode runs only the newest token")

    url_keys = ("length", "query", "mask", "divide", "phase")
    log_lines = LOG_LINES
    log_empty = "change a control; what it did (or why it did nothing) shows here"

    @classmethod
    def controls(cls):
        return [Control.slider("length", range(MIN_LENGTH, MAX_LENGTH + 1)),
                Control.slider("query", range(MAX_LENGTH)),
                Control.toggle("mask"), Control.toggle("divide"),
                Control.choice("phase", head.PHASES)]

    @classmethod
    def parts(cls):
        return [Part(("length",), places_state),
                Part(("length", "mask", "divide", "phase"), cells_state),
                Part(("length", "query", "mask", "divide", "phase"), row_state)]

    # --- what tests and the article read --------------------------------------------------

    def inspected(self):  # -> token position whose row is shown
        return inspected(self.length, self.query, self.phase)

    def numbers(self):  # -> HeadNumbers of the current setting, all from attention_core
        return head_numbers(self.length, self.inspected(), self.phase, self.mask, self.divide)

    def drawn(self, kind="weight"):  # -> {column: values} of the cells seen as `kind`
        # x and y: the cell's key and query positions (the browser places them on 0..1)
        data = self.cell_source.data
        shown = [i for i, n in enumerate(data["n"]) if n]
        if kind == "weight":  # the blank cells over the masked layer are no weights
            indices = [i for i in shown if data["weight"][i] != BLANK]
        else:  # the masked layer shown, less the cells drawn over it
            covered = {(data["q"][i], data["k"][i]) for i in shown}
            data = self.masked_source.data
            indices = [i for i, (q, k, n) in enumerate(zip(data["q"], data["k"], data["n"]))
                       if n and (q, k) not in covered]
        columns = {"x": "k", "y": "q"}
        return {c: [data[columns.get(c, c)][i] for i in indices]
                for c in (CELL_COLUMNS if kind == "weight" else MASKED_COLUMNS)}

    def shown_length(self):  # -> the length the masked layer and the labels are placed by
        lengths = {n for source in (self.masked_source, self.position_source)
                   for n in source.data["n"] if n}
        shown = {m for m, r in self.masked_layers.items() if r.visible}
        assert len(lengths) == 1 and shown == lengths, (lengths, shown)
        return lengths.pop()

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self._build_widgets()
        self._build_figure()
        self._build_readouts(state)
        self.widgets = {"length": self._length_w, "query": self._query_w, "mask": self._mask_w,
                        "divide": self._divide_w, "phase": self._phase_w}
        self.targets = {
            **{f"prop:masked_layer_{m}.visible": r for m, r in self.masked_layers.items()},
            "source:masked": self.masked_source, "source:positions": self.position_source,
            "source:cells": self.cell_source,
            "prop:decode_label.y": self.decode_label,
            "prop:decode_label.visible": self.decode_label,
            "prop:query_widget.end": self._query_w, "prop:query_widget.disabled": self._query_w,
            "source:row": self.row_source, "holes:hero": self._hero,
            "holes:caption": self._caption, "holes:arithmetic": self._arithmetic,
            "holes:weights_table": self._weights_table,
            "holes:truncate": self._truncate, "log:log": self._log_view,
        }
        return self._layout

    def _build_widgets(self):
        self._length_w = pn.widgets.IntSlider.from_param(self.param.length, width=SLIDER_WIDTH)
        self._query_w = pn.widgets.IntSlider.from_param(
            self.param.query, end=self.length - 1, disabled=self.phase == "decode",
            width=SLIDER_WIDTH)
        # solid when on, outlined when off, by a stylesheet on the button's `active` state,
        # not by its variant (a change of CSS classes lays the page out: docs/REPAINT.md)
        self._mask_w = pn.widgets.Toggle.from_param(
            self.param.mask, name="causal mask", color="primary", variant="outline",
            width=150, stylesheets=[TOGGLE_STYLE])
        self._divide_w = pn.widgets.Toggle.from_param(
            self.param.divide, name="divide scores by √d_k", color="primary",
            variant="outline", width=190, stylesheets=[TOGGLE_STYLE])
        self._phase_w = pn.widgets.RadioButtonGroup.from_param(
            self.param.phase, name="phase", color="primary", variant="outline",
            width=180)
        phase_box = pn.Column(pn.pane.HTML('<span class="ae-label">phase</span>', margin=(0, 10)),
                              self._phase_w, margin=0)
        self._controls = pn.FlexBox(
            self._length_w, self._query_w, self._mask_w, self._divide_w, phase_box,
            align_items="flex-end", sizing_mode="stretch_width")

    def _build_figure(self):
        # every cell of the largest sequence, row-major; the state says how many are placed
        words = worked_example.WORDS
        self.cell_source = ColumnDataSource({
            "k": [k for _, k in ALL_CELLS], "q": [q for q, _ in ALL_CELLS],
            "n": [GRID] * len(ALL_CELLS), "weight": [0.0] * len(ALL_CELLS),
            "label": [None] * len(ALL_CELLS), "key": [words[k] for _, k in ALL_CELLS],
            "query": [words[q] for q, _ in ALL_CELLS]})
        self.row_source = ColumnDataSource({"y": [0.0], "height": [0.0]})

        def centre(column, source=self.cell_source):  # a row's key or query position -> its
            # place on the 0..1 axis, for the length in the source's column `n`
            return transform(column, static_transform("cellCentre", centre_py, source=source))

        def share(part):  # a length -> that share of one position's width
            return transform("n", static_transform("cellShare", functools.partial(share_py, part),
                                                   share=part))

        paint = ink()  # the theme's colours for what the canvas draws
        mapper = LinearColorMapper(palette=Cividis256, low=0.0, high=1.0, low_color=paint.paper)
        # the axes span 0..1 for every length; the borders hold the position labels
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_axis_location="above", x_range=Range1d(0, 1), y_range=Range1d(1, 0),
                     min_border_left=QUERY_LABELS_WIDTH + 18, min_border_right=8,
                     min_border_top=KEY_LABELS_HEIGHT + 16, min_border_bottom=4,
                     outline_line_color=None, background_fill_color=paint.paper)
        # the masked layer and the position labels, at level "annotation" (with the axes);
        # the weights and the blank cells are drawn over them
        self._build_places(fig, paint, centre)
        x, y, source = centre("k"), centre("q"), self.cell_source
        fig.rect(x, y, share(CELL_SIZE), share(CELL_SIZE), source=source, line_color=None,
                 fill_color={"field": "weight", "transform": mapper})
        fig.text(x, y, text="label", source=source,
                 text_color={"field": "weight", "transform": text_mapper()},
                 text_align="center", text_baseline="middle", text_font_size=SMALL)
        fig.rect(0.5, "y", 1.0, "height", source=self.row_source, fill_alpha=0.0,
                 line_color=OUTLINE, line_width=3)
        self.decode_label = Label(x=0.5, y=0,  # the state sets y
                                  # two lines: one is wider than a phone's frame
                                  text="decode: only the newest\ntoken's row is computed",
                                  text_align="center", text_baseline="middle",
                                  text_font_size=SMALL, text_color="#888888", visible=False)
        fig.add_layout(self.decode_label)
        # no axes: their titles are text in the borders (docs/REPAINT.md)
        fig.axis.visible = False
        title = {"text_font_size": SMALL, "text_color": paint.text, "level": "annotation",
                 "text_align": "center", "text_baseline": "bottom"}
        fig.text([0.5], [0.0], text=["keys"], y_offset=-KEY_LABELS_HEIGHT, **title)
        fig.text([0.0], [0.5], text=["queries"], angle=math.pi / 2,
                 x_offset=-QUERY_LABELS_WIDTH, **title)
        fig.grid.visible = False
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_places(self, fig, paint, centre):
        # the hatched cells: one layer per length, shown by the length (a hatch pattern is
        # made again whenever its glyph's data is set: 2-3 ms a change)
        self.masked_layers = {n: self._build_masked_layer(fig, n) for n in LENGTHS}
        # the −∞ on every cell the mask can hide (above the diagonal) and every position's
        # number and word beside the matrix, where axis ticks would be; the state's column
        # `n` places them for the length and leaves those past it undrawn
        words = worked_example.WORDS
        masked = self.masked_source = ColumnDataSource({
            "q": [q for q, _ in ABOVE], "k": [k for _, k in ABOVE], "n": [0] * len(ABOVE),
            "label": [None] * len(ABOVE), "key": [words[k] for _, k in ABOVE],
            "query": [words[q] for q, _ in ABOVE]})
        positions = self.position_source = ColumnDataSource({
            "p": list(POSITIONS), "n": [0] * len(POSITIONS),
            "key_label": [None] * len(POSITIONS), "query_label": [None] * len(POSITIONS)})
        # built as glyph models, not with figure.rect/text, which make a selected, an
        # unselected and a muted copy of each glyph that states.draw_changes_on_overlay
        # then drops
        x, y, at = centre("k", masked), centre("q", masked), centre("p", positions)
        text = {"text_font_size": SMALL}
        for source, glyph in (
                (masked, Text(x=x, y=y, text="label", text_color=MASK_TEXT,
                              text_align="center", text_baseline="middle", **text)),
                (positions, Text(x=at, y=0.0, text="key_label", text_align="center",
                                 text_baseline="bottom", y_offset=-LABEL_GAP,
                                 text_color=paint.text, **text)),
                (positions, Text(x=0.0, y=at, text="query_label", text_align="right",
                                 text_baseline="middle", x_offset=-LABEL_GAP,
                                 text_color=paint.text, **text))):
            states.add_renderer(fig, source, glyph, level="annotation")

    def _build_masked_layer(self, fig, n):  # -> the renderer of one length's hatched cells
        above = [(q, k) for q, k in ABOVE if k < n]
        source = ColumnDataSource({"x": [place(k, n) for _, k in above],
                                   "y": [place(q, n) for q, _ in above]})
        size = round(MASKED_SIZE / n, PLACE_DIGITS)
        return states.add_renderer(fig, source, Rect(
            x="x", y="y", width=size, height=size, fill_color=MASK_FILL, line_color=None,
            hatch_pattern="/", hatch_color="#b5b5b5", hatch_scale=8, hatch_weight=1),
            level="annotation", visible=False)

    def _build_readouts(self, state):
        self._hero = self.new_readout(HeroReadout, state["holes:hero"], margin=(4, 10))
        self._caption = self.new_readout(CaptionReadout, state["holes:caption"])
        self._weights_table = self.new_readout(WeightsReadout, state["holes:weights_table"],
                                               margin=0)
        self._arithmetic = self.new_readout(ArithmeticReadout, state["holes:arithmetic"])
        self._truncate = self.new_readout(TruncateReadout, state["holes:truncate"])
        self._log_view = self.new_readout(LogReadout, {f"log{i}": "" for i in range(LOG_LINES)},
                                 margin=(0, 10))
        heatmap_col = pn.Column(self._figure_pane, self._caption, self._weights_table,
                                sizing_mode="stretch_width",
                                styles={"flex": "1 1 360px", "min-width": "0"})
        table_col = pn.Column(self._arithmetic, sizing_mode="stretch_width",
                              styles={"flex": "1 1 320px", "min-width": "0"})
        body = pn.FlexBox(heatmap_col, table_col, sizing_mode="stretch_width")
        self._layout = pn.Column(
            chrome.heading(registry.title_of(type(self))), self.url_note,
            self._controls, self._hero, body, self._truncate, self._log_view,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])
