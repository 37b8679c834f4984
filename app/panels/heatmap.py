"""The head: one real attention head over "the cat sat on the mat and purred".

Every cell of the heatmap is a weight the head computed; the panel under it shows the
inspected row's arithmetic step by step, checks the causal mask's promise (row i equals a
pass over the first i + 1 tokens, bit for bit) and says so when a control changes nothing.

Built once, then only what changed goes to the browser, in one small message per click:
the figure draws the weights of all 8 × 8 cells from one source whose x and y never change;
a click patches the weights and labels that changed and which cells are drawn (an index
filter). The masked cells are a layer of their own that never changes, shown or hidden
whole: the causal mask always hides the same cells, those above the diagonal, and a
hatched layer that changes costs the browser new hatch patterns every time. The text
readouts are drawn once as HTML with named slots (`Readout`); a click sends only the slots
whose text differs and the browser sets those slots' text, so nothing is re-parsed,
re-styled or laid out again beyond that text.
"""

import dataclasses
import functools
import html
import json
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import panel as pn
import param
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    FixedTicker,
    IndexFilter,
    Label,
    LinearColorMapper,
    Range1d,
)
from bokeh.palettes import Cividis256
from bokeh.plotting import figure
from panel.reactive import ReactiveHTML

from app import chrome
from attention_core import head, worked_example

MIN_LENGTH, MAX_LENGTH = 3, len(worked_example.WORDS)
HEIGHT = 330
MASK_FILL, MASK_TEXT = "#e4e4e4", "#3b3b3b"
OUTLINE = "#d55e00"  # Okabe-Ito vermillion: stands out on every Cividis shade
LOG_LINES = 4
SLIDER_WIDTH = 260
CELL_COLUMNS = ("x", "y", "weight", "label", "key", "query")
MASKED_COLUMNS = ("x", "y", "label", "key", "query")
GRID = MAX_LENGTH  # the source holds every cell of the largest sequence, row-major
# the figure's weights only pick a colour (one of 256) and a label colour: four decimals
# are plenty, and a third of the bytes of a full float on the wire
WEIGHT_DIGITS = 4


def fmt(x, digits=2):  # float -> str with a real minus sign; −∞ for masked scores
    if np.isneginf(x):
        return "−∞"
    return f"{x:.{digits}f}".replace("-", "−")


def sci(x):  # float -> "1.2e−01"
    return f"{x:.1e}".replace("-", "−")


def vector(v, digits=2):  # [d] -> "[0.12, −0.34, ...]"
    return "[" + ", ".join(fmt(x, digits) for x in v) + "]"


def tick_label(position, word):  # tokens repeat ("the" twice): the position tells them apart
    return f"{position} {word}"


def ink(fill):  # "#rrggbb" -> black on a light fill, white on a dark one
    r, g, b = (int(fill[i:i + 2], 16) / 255 for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if luminance > 0.4 else "#ffffff"


def palette_index(weight, size=256):  # the bin Bokeh's LinearColorMapper(0, 1) draws
    return min(int(weight * size), size - 1)


def text_colour(weight):  # the label's colour on the cell's own Cividis shade
    return ink(Cividis256[palette_index(weight)])


def text_mapper():
    # The labels' colour is mapped in the browser from the weight, like the fill, so it is
    # never sent. Cividis gets lighter monotonically: one switch from white to black, at
    # bin `dark`; a two-colour mapper centred there gives the same colour for every weight.
    inks = [ink(c) for c in Cividis256]
    dark = inks.index("#000000")
    assert set(inks[:dark]) == {"#ffffff"} and set(inks[dark:]) == {"#000000"}
    t = dark / len(inks)
    return LinearColorMapper(palette=["#ffffff", "#000000"], low=t - 1, high=t + 1)


def cell_index(query, key):  # a cell's row in the source
    return query * GRID + key


SLOT = re.compile(r'data-s="([\w-]+)"')
SLOT_ELEMENT = re.compile(r'(<(\w+)[^>]*?\sdata-s="([\w-]+)"[^>]*>)(</\2>)')


class Readout(ReactiveHTML):
    """Text drawn once from an HTML template; afterwards only the text of its slots changes.

    Every element `<tag data-s="NAME"></tag>` in a subclass's `template` is a slot: empty
    in the template, its text is `values[NAME]`. The template and the first values (`base`)
    reach the browser once, with the page. A change sends `patch`: the slots whose text now
    differs from `base`; the browser sets `textContent` where that differs from what is
    shown. So a change sends a few short strings and replaces a few text nodes: no HTML is
    parsed and no stylesheet applied again. `patch` is relative to `base`, not to the
    previous change, so a view drawn later (a re-render) shows the same as one that saw
    every change; it never grows past one copy of the values.

    A ReactiveHTML, not a JSComponent: the server's Content-Security-Policy allows the
    'unsafe-eval' these scripts need, not the blob: module a JSComponent loads. The
    template travels inside the class's render script, not as a parameter (Panel strips
    the attributes, class, aria-live and data-s, from HTML in string parameters) nor as
    Panel's `_template` (parsed again for every session, then rendered through a virtual
    DOM in the browser); the script sets it as innerHTML once.
    """

    base = param.Dict(default={}, constant=True, doc="each slot's text when first drawn")
    patch = param.Dict(default={}, doc="the slots whose text differs from base: their text")

    template = ""  # subclasses: the HTML, every slot empty; and `_scripts = scripts(template)`

    _template = '<div id="box"></div>'

    @staticmethod
    def scripts(template):  # -> the `_scripts` of a subclass drawing `template`
        return {
            "render": f"""
                box.innerHTML = {json.dumps(template)}
                state.slots = [...box.querySelectorAll("[data-s]")].map((e) => [e.dataset.s, e])
                self.patch()
            """,
            "patch": """
                const get = (o, k) => (o instanceof Map ? o.get(k) : o[k])
                for (const [name, e] of state.slots) {
                  const text = get(data.patch, name) ?? get(data.base, name) ?? ""
                  if (e.textContent !== text) { e.textContent = text }
                }
            """,
        }

    def __init__(self, values, **params):
        slots = SLOT.findall(self.template)
        if len(SLOT_ELEMENT.findall(self.template)) != len(slots) or set(slots) != set(values):
            raise ValueError(f"the template's empty slots {slots} must be the values' keys "
                             f"{sorted(values)}")
        super().__init__(base=dict(values), **params)
        self.values = dict(values)

    def show(self, values):  # {slot: text}: send only the slots that differ from base
        self.values = dict(values)
        patch = {k: v for k, v in self.values.items() if v != self.base[k]}
        if patch != self.patch:
            self.patch = patch

    def filled(self):  # -> the template with each slot's current text, as the page shows it
        def fill(m):
            return m.group(1) + html.escape(self.values[m.group(3)], quote=False) + m.group(4)

        return SLOT_ELEMENT.sub(fill, self.template)

    def text(self):  # -> what a reader sees, without tags
        return html.unescape(re.sub(r"<[^>]+>", "", self.filled()))


def slot(name, tag="span", **attrs):  # -> an empty slot element for a Readout template
    extra = "".join(f' {k.rstrip("_")}="{v}"' for k, v in attrs.items())
    return f'<{tag}{extra} data-s="{name}"></{tag}>'


HERO = (
    '<div class="ae-readout ae-hero" aria-live="polite">'
    f'<span><b>dot products</b> {slot("dots", class_="ae-big")}'
    f' <small>({slot("dots_formula")})</small></span>'
    f'<span><b>pairs computed then discarded:</b> {slot("discarded")}</span>'
    f'<span><b>effective tokens attended</b> (row {slot("eff_row")}): {slot("eff")}</span>'
    '</div>')

CAPTION = (
    f'<p class="ae-caption" aria-live="polite">Row {slot("row")} puts its largest weight, '
    f'{slot("top_weight")}, on key {slot("top_key")}. Each row sums to 1; grey hatched cells '
    'are masked (−∞ before the softmax, weight exactly 0). Colour: Cividis, 0 dark to 1 '
    'light.</p>')

TABLE_COLUMNS = ("raw", "scaled", "masked", "exp", "weight")  # slot prefixes, per key row
ARITHMETIC = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div class="ae-table-title">The arithmetic of row {slot("title_row")}, d_k = '
    f'{slot("d_k")}</div>'
    '<div class="ae-scroll"><table class="ae-arith">'
    '<caption class="ae-sr">scores, mask, exponentials and weights of query '
    f'{slot("caption_row")} against each key</caption>'
    "<thead><tr><th scope='col'>key</th><th scope='col'>q·k</th>"
    f"{slot('divisor', 'th', scope='col')}<th scope='col'>mask</th>"
    "<th scope='col'>exp(s\u00a0− max)</th><th scope='col'>weight</th></tr></thead><tbody>"
    + "".join(
        f"<tr>{slot(f'key{j}', 'th', scope='row')}"
        + "".join(slot(f"{c}{j}", "td") for c in TABLE_COLUMNS[:-1])
        + f"<td>{slot(f'weight{j}', 'b')}</td></tr>"
        for j in range(MAX_LENGTH))
    + "<tr class='ae-sum'><th scope='row'>sum</th><td></td><td></td><td></td>"
    f"{slot('exp_sum', 'td')}{slot('weight_sum', 'td')}</tr></tbody></table></div>"
    '<div class="ae-out">weight = exp ÷ sum. output = Σ weight × value = '
    f'{slot("output")}</div></div>')

NOTES = (  # the truncate line and the log
    '<div class="ae-readout" aria-live="polite">'
    f'<div><b>truncate line:</b> {slot("truncate")}</div>{slot("blas", "div", class_="ae-small")}'
    '</div>'
    '<div class="ae-log" aria-live="polite"><b>log</b> <small>(newest first)</small><ul>'
    + "".join(slot(f"log{i}", "li") for i in range(LOG_LINES)) + "</ul></div>")


# one class per template: Panel reads a ReactiveHTML's scripts from its class
class HeroReadout(Readout):
    template = HERO
    _scripts: ClassVar[dict] = Readout.scripts(HERO)


class CaptionReadout(Readout):
    template = CAPTION
    _scripts: ClassVar[dict] = Readout.scripts(CAPTION)


class ArithmeticReadout(Readout):
    template = ARITHMETIC
    _scripts: ClassVar[dict] = Readout.scripts(ARITHMETIC)


class NotesReadout(Readout):
    template = NOTES
    _scripts: ClassVar[dict] = Readout.scripts(NOTES)


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


class HeadPanel(pn.viewable.Viewer):
    """The head: the worked example's attention weights and the arithmetic of one row."""

    length = param.Integer(default=6, bounds=(MIN_LENGTH, MAX_LENGTH), label="sequence length",
                           doc="how many of the eight words are in the sequence")
    # bounds stay 0..7 so a URL carrying length=8&query=7 is not clamped before length lands;
    # the panel clamps query to length - 1 itself and says so in the log.
    query = param.Integer(default=2, bounds=(0, MAX_LENGTH - 1), label="inspect query",
                          doc="which row's arithmetic is shown (in decode: the last token)")
    mask = param.Boolean(default=True, label="causal mask",
                         doc="set scores of future keys to −∞ before the softmax")
    divide = param.Boolean(default=True, label="divide scores by √d_k",
                           doc="scale scores by 1/√d_k before the softmax")
    phase = param.Selector(default="prefill", objects=list(head.PHASES), label="phase",
                           doc="prefill runs every query; decode runs only the newest token")

    url_keys = ("length", "query", "mask", "divide", "phase")

    def __init__(self, **params):
        super().__init__(**params)
        self._log = []
        self._adjusting = False
        self._prefill_query = self.query
        self._settle()
        self._numbers = self.numbers()
        self._build_widgets()
        self._build_figure()
        self._build_readouts()
        self._update()
        self.param.watch(self._on_change, list(self.url_keys))

    # --- the numbers --------------------------------------------------------------------

    def inspected(self):  # -> token position whose row is shown
        return self.length - 1 if self.phase == "decode" else min(self.query, self.length - 1)

    def numbers(self):  # pure: parameters -> HeadNumbers, all from attention_core
        return head_numbers(self.length, self.inspected(), self.phase, self.mask, self.divide)

    def cells(self, nums):
        # -> ({column: [GRID² values]}, weight cell indices, masked cells shown?): the
        # dynamic columns of the cell source, the cells drawn as weights, and whether the
        # masked layer shows. A cell outside the sequence, masked, or in a row decode does
        # not compute is not drawn as a weight: its weight is 0.0 and its label empty.
        r = nums.result
        weight, label = [0.0] * GRID * GRID, [""] * GRID * GRID
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
        return {"weight": weight, "label": label}, sorted(shown), bool(masked)

    def drawn(self, kind="weight"):  # -> {column: values} of the cells drawn as `kind`
        if kind == "weight":
            data, indices = self.cell_source.data, self.shown_filter.indices
            return {k: [data[k][i] for i in indices] for k in CELL_COLUMNS}
        data, n = self.masked_source.data, self._numbers.result.n
        indices = [i for i, (x, y) in enumerate(zip(data["x"], data["y"])) if x < n and y < n]
        if not self._masked_renderers[0].visible:
            indices = []
        return {k: [data[k][i] for i in indices] for k in MASKED_COLUMNS}

    # --- building, once -----------------------------------------------------------------

    def _build_widgets(self):
        self._length_w = pn.widgets.IntSlider.from_param(self.param.length, width=SLIDER_WIDTH)
        self._query_w = pn.widgets.IntSlider.from_param(
            self.param.query, end=self.length - 1, disabled=self.phase == "decode",
            width=SLIDER_WIDTH)
        # solid when on, outlined when off, by a stylesheet on the button's own `active`
        # state: changing the variant instead changes the widget's CSS classes, and Bokeh
        # lays the whole page out again after every such change (about 18 ms a click)
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
        # every cell of the largest sequence, row-major: x, y, key and query never change
        cells = [(q, k) for q in range(GRID) for k in range(GRID)]
        words = worked_example.WORDS
        self.cell_source = ColumnDataSource({
            "x": [k for _, k in cells], "y": [q for q, _ in cells],
            "weight": [0.0] * len(cells), "label": [""] * len(cells),
            "key": [words[k] for _, k in cells], "query": [words[q] for q, _ in cells]})
        self.shown_filter = IndexFilter(indices=[])
        shown = CDSView(filter=self.shown_filter)
        above = [(q, k) for q in range(GRID) for k in range(q + 1, GRID)]  # never changes
        self.masked_source = ColumnDataSource({
            "x": [k for _, k in above], "y": [q for q, _ in above], "label": ["−∞"] * len(above),
            "key": [words[k] for _, k in above], "query": [words[q] for q, _ in above]})
        self.row_source = ColumnDataSource({"x": [0.0], "y": [0], "width": [1]})
        mapper = LinearColorMapper(palette=Cividis256, low=0.0, high=1.0)
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_axis_location="above", x_range=Range1d(-0.5, 0.5),
                     y_range=Range1d(0.5, -0.5), min_border_left=4, min_border_right=8,
                     min_border_top=4, min_border_bottom=4, outline_line_color=None)
        fig.rect("x", "y", 0.96, 0.96, source=self.cell_source, view=shown, line_color=None,
                 fill_color={"field": "weight", "transform": mapper})
        masked_cells = fig.rect("x", "y", 0.96, 0.96, source=self.masked_source,
                                fill_color=MASK_FILL, line_color=None, hatch_pattern="/",
                                hatch_color="#b5b5b5", hatch_scale=8, hatch_weight=1)
        fig.text("x", "y", text="label", source=self.cell_source, view=shown,
                 text_color={"field": "weight", "transform": text_mapper()},
                 text_align="center", text_baseline="middle", text_font_size="11px")
        masked_labels = fig.text("x", "y", text="label", source=self.masked_source,
                                 text_color=MASK_TEXT, text_align="center",
                                 text_baseline="middle", text_font_size="11px")
        self._masked_renderers = (masked_cells, masked_labels)
        fig.rect("x", "y", "width", 1.0, source=self.row_source, fill_alpha=0.0,
                 line_color=OUTLINE, line_width=3)
        self.decode_label = Label(x=0, y=0, text="decode: only the newest token's row is computed",
                                  text_align="center", text_baseline="middle",
                                  text_font_size="11px", text_color="#888888", visible=False)
        fig.add_layout(self.decode_label)
        # a tick and its label for every position of the longest sequence, set once: the
        # ranges decide which show, so a new length moves the ranges and nothing else
        fig.xaxis[0].major_label_overrides = {i: f"{i}\n{w}" for i, w in enumerate(words)}
        fig.yaxis[0].major_label_overrides = {i: tick_label(i, w) for i, w in enumerate(words)}
        for axis, title in ((fig.xaxis[0], "keys"), (fig.yaxis[0], "queries")):
            axis.ticker = FixedTicker(ticks=list(range(GRID)))
            axis.axis_label = title
            axis.axis_label_text_font_size = "11px"
            axis.axis_label_text_font_style = "normal"
            axis.major_label_text_font_size = "11px"
            axis.major_tick_line_color = None
            axis.minor_tick_line_color = None
            axis.axis_line_color = None
        fig.grid.visible = False
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_readouts(self):
        nums = self._numbers

        def readout(cls, values, **kw):  # its own shadow root: it needs the stylesheet
            return cls(values, sizing_mode="stretch_width", stylesheets=[STYLE], **kw)

        self._hero = readout(HeroReadout, self.hero_values(nums), margin=(4, 10))
        self._caption = readout(CaptionReadout, self.caption_values(nums), margin=(0, 10))
        self._arithmetic = readout(ArithmeticReadout, self.arithmetic_values(nums),
                                   margin=(0, 10))
        self._notes = readout(NotesReadout, self.notes_values(nums), margin=(0, 10))
        heatmap_col = pn.Column(self._figure_pane, self._caption, sizing_mode="stretch_width",
                                styles={"flex": "1 1 360px", "min-width": "0"})
        table_col = pn.Column(self._arithmetic, sizing_mode="stretch_width",
                              styles={"flex": "1 1 320px", "min-width": "0"})
        body = pn.FlexBox(heatmap_col, table_col, sizing_mode="stretch_width")
        self._layout = pn.Column(
            pn.pane.HTML("<h3 style='margin:0'>The head</h3>", margin=(0, 10)),
            self._controls, self._hero, body, self._notes,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])

    def __panel__(self):
        return self._layout

    # --- reacting -----------------------------------------------------------------------

    def _settle(self):  # clamp / pin the query; -> notes for the log
        notes, last = [], self.length - 1
        if self.phase == "decode":
            if self.query != last:
                notes.append(f"in decode the only query is the newest token, so inspect query "
                             f"is {last} ({worked_example.WORDS[last]})")
                self.query = last
        elif self.query > last:
            notes.append(f"inspect query {self.query} is past the last token; moved to {last}")
            self.query = last
        return notes

    def _on_change(self, *events):
        if self._adjusting:
            return
        changed = {e.name: e for e in events}
        before = self._numbers
        self._adjusting, notes = True, []
        try:
            if "phase" in changed and self.phase == "decode":
                self._prefill_query = self.query  # given back when prefill returns
            if "phase" in changed and self.phase == "prefill" and "query" not in changed:
                self.query = min(self._prefill_query, self.length - 1)
                notes.append(f"inspect query back to {self.query}, where it was before decode")
            self._query_w.end = self.length - 1
            self._query_w.disabled = self.phase == "decode"
            notes += self._settle()
        finally:
            self._adjusting = False
        self._numbers = self.numbers()
        self._log_events(changed, before, self._numbers, notes)
        self._update()

    def _log_events(self, changed, before, after, notes):
        r, pos = after.result, after.position
        word = after.tokens[pos]
        lines = []
        if "phase" in changed:
            lines.append(f"phase {self.phase}: {r.dot_products} dot products "
                         + ("(one query, the newest token, against every key)"
                            if self.phase == "decode" else "(every query against every key)"))
        if "length" in changed:
            lines.append(f"sequence length {self.length}: {r.dot_products} dot products, "
                         f"{r.pairs_discarded} of them discarded")
        if "query" in changed and not notes:
            lines.append(f"inspect query {pos} ({word}): effective tokens attended "
                         f"{r.effective_tokens[after.row]:.2f}")
        for name, label in (("mask", "causal mask"), ("divide", "divide scores by √d_k")):
            if name not in changed:
                continue
            state = "on" if getattr(self, name) else "off"
            same = (before.result.weights.shape == r.weights.shape
                    and np.array_equal(before.result.weights, r.weights))
            if same and name == "mask":
                lines.append(f"{label} {state}: no weight changed, because {r.mask_note}")
            elif same:
                lines.append(f"{label} {state}: no weight changed")
            elif name == "mask" and self.mask:
                lines.append(f"{label} on: {r.pairs_discarded} of {r.dot_products} scores are "
                             "paid for, then set to −∞ before the softmax")
            elif name == "mask":
                lines.append(f"{label} off: every query now also sees the keys after it; "
                             "nothing is discarded")
            else:
                factor = np.sqrt(r.d_k)
                lines.append(f"{label} {state}: scores are "
                             + (f"divided by √{r.d_k} ≈ {factor:.2f}" if self.divide
                                else f"{factor:.2f}× larger, so the softmax is sharper")
                             + f"; row {pos} attends {r.effective_tokens[after.row]:.2f} tokens")
        lines.extend(notes)
        self._log = (lines[::-1] + self._log)[:LOG_LINES]

    def _update(self):
        # write the current numbers where they show, sending only what changed: the text
        # readouts first (what a reader reads), then the figure. Never rebuild.
        nums = self._numbers
        self._hero.show(self.hero_values(nums))
        self._caption.show(self.caption_values(nums))
        self._arithmetic.show(self.arithmetic_values(nums))
        self._notes.show(self.notes_values(nums))
        self._update_figure(nums)

    def _update_figure(self, nums):
        n, fig = nums.result.n, self.figure
        columns, shown, masked = self.cells(nums)
        self._write_columns(columns)
        if self.shown_filter.indices != shown:
            self.shown_filter.indices = shown
        for renderer in self._masked_renderers:  # shown or hidden whole, never redrawn
            if renderer.visible != masked:
                renderer.visible = masked
        row = {"x": [(n - 1) / 2], "y": [nums.position], "width": [n]}
        if dict(self.row_source.data) != row:
            self.row_source.data = row
        decode = {"x": (n - 1) / 2, "y": (n - 2) / 2, "visible": self.phase == "decode"}
        if any(getattr(self.decode_label, k) != v for k, v in decode.items()):
            self.decode_label.update(**decode)
        if fig.x_range.end != n - 0.5:  # the ranges only move with the length
            fig.x_range.update(start=-0.5, end=n - 0.5)
            fig.y_range.update(start=n - 0.5, end=-0.5)

    def _write_columns(self, columns):
        # {column: values} -> the cell source: cells that changed as a patch when that is
        # the shorter message, else the changed columns whole; nothing if nothing changed
        data, patches, whole = self.cell_source.data, {}, {}
        for name, new in columns.items():
            old = data[name]
            changed = [(i, v) for i, (u, v) in enumerate(zip(old, new)) if u != v]
            if not changed:
                continue
            if len(changed) * 2 < len(new):
                patches[name] = changed
            else:
                whole[name] = new
        if whole:
            data.update(whole)
        if patches:
            self.cell_source.patch(patches)

    # --- readouts (text) ----------------------------------------------------------------

    def hero_values(self, nums):  # -> {slot: text} of the hero line
        r = nums.result
        prefill = self.phase == "prefill"
        return {
            "dots": str(r.dot_products),
            "dots_formula": f"n² = {r.n}²" if prefill else f"n = {r.n}",
            "discarded": f"{r.pairs_discarded} of {r.dot_products}",
            "eff_row": f"{nums.position}, {nums.tokens[nums.position]}",
            "eff": f"{r.effective_tokens[nums.row]:.2f}",
        }

    def caption_values(self, nums):  # -> {slot: text} of the caption under the heatmap
        weights = nums.result.weights[nums.row]
        top = int(np.argmax(weights))
        return {
            "row": f"{nums.position} ({nums.tokens[nums.position]})",
            "top_weight": f"{weights[top]:.2f}",
            "top_key": f"{top} ({nums.tokens[top]})",
        }

    def arithmetic_values(self, nums):  # -> {slot: text} of the inspected row's arithmetic
        r, i, pos = nums.result, nums.row, nums.position
        values = {
            "title_row": f"{pos} ({nums.tokens[pos]})", "d_k": str(r.d_k),
            "caption_row": str(pos), "divisor": f"÷√{r.d_k}" if self.divide else "÷ 1",
            "exp_sum": fmt(r.sums[i], 3), "weight_sum": fmt(r.weights[i].sum()),
            "output": vector(r.output[i]),
        }
        for j in range(MAX_LENGTH):  # keys past the sequence: empty, and the row is hidden
            inside = j < r.n
            values[f"key{j}"] = f"{j} {nums.tokens[j]}" if inside else ""
            values[f"raw{j}"] = fmt(r.raw_scores[i, j]) if inside else ""
            values[f"scaled{j}"] = fmt(r.scaled_scores[i, j]) if inside else ""
            values[f"masked{j}"] = fmt(r.masked_scores[i, j]) if inside else ""
            values[f"exp{j}"] = fmt(r.exps[i, j], 3) if inside else ""
            values[f"weight{j}"] = fmt(r.weights[i, j]) if inside else ""
        return values

    def notes_values(self, nums):  # -> {slot: text} of the truncate line and the log
        t, b, pos = nums.truncate, nums.blas, nums.position
        if t.equal:
            truncate = (f"row {pos} matches a pass over the first {pos + 1} tokens, "
                        "bit for bit")
        else:
            truncate = (f"row {pos} against a pass over the first {pos + 1} tokens: mismatch: "
                        f"largest disagreement {sci(t.largest_disagreement)}")
        if not self.mask and not b.equal:
            blas = ("a BLAS matmul path: mismatch too, but here the missing mask "
                    "already explains it")
        elif b.equal:
            blas = "a BLAS matmul path: bit for bit at this row (its sums may not be elsewhere)"
        else:
            blas = (f"a BLAS matmul path: largest disagreement {sci(b.largest_disagreement)}: "
                    "its sums regroup with the array's shape, which is why inference engines "
                    "want batch-invariant kernels")
        log = self._log or ["change a control; what it did (or why it did nothing) shows here"]
        values = {"truncate": truncate, "blas": blas}
        for i in range(LOG_LINES):  # an empty line is not shown
            values[f"log{i}"] = log[i] if i < len(log) else ""
        return values


STYLE = """
.ae-readout { font-variant-numeric: tabular-nums; }
.ae-hero { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: baseline; }
.ae-big { font-size: 1.6em; font-weight: 600; }
.ae-label { font-size: 0.9em; }
.ae-caption { font-size: 0.85em; color: inherit; opacity: 0.8; margin: 2px 0; }
.ae-table-title { font-weight: 600; margin-bottom: 4px; }
.ae-scroll { overflow-x: auto; max-width: 100%; }
.ae-arith { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; }
.ae-arith th, .ae-arith td { padding: 2px 5px; text-align: right; white-space: nowrap; }
.ae-arith thead th { border-bottom: 1px solid #888; font-weight: 600; white-space: normal;
                     vertical-align: bottom; }
.ae-arith tbody th { text-align: left; font-weight: normal; }
.ae-arith tbody tr:has(> th:empty) { display: none; }
.ae-arith .ae-sum th, .ae-arith .ae-sum td { border-top: 1px solid #888; }
.ae-out { font-size: 0.85em; margin-top: 4px; overflow-wrap: anywhere; }
.ae-small { font-size: 0.85em; color: inherit; opacity: 0.8; }
.ae-log { font-size: 0.85em; }
.ae-log ul { margin: 2px 0; padding-left: 18px; }
.ae-log li:empty { display: none; }
.ae-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
"""

# a toggle that is on looks like Panel's solid (pressed) button; off, like its outline one
TOGGLE_STYLE = """
:host(.outline) .bk-btn-primary.bk-active,
:host(.outline) .bk-btn-primary.bk-active:hover {
  background-color: var(--primary-color);
  color: var(--button-primary-text-color);
  border-color: transparent;
  box-shadow: inset 0px 3px 5px rgb(0 0 0 / 25%);
}
"""


def page():
    return chrome.single_page(HeadPanel(), "The head")
