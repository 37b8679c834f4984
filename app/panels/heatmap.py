"""The head: one real attention head over "the cat sat on the mat and purred".

Every cell of the heatmap is a weight the head computed; the panel under it shows the
inspected row's arithmetic step by step, checks the causal mask's promise (row i equals a
pass over the first i + 1 tokens, bit for bit) and says so when a control changes nothing.
"""

import html
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Label, LinearColorMapper, Range1d
from bokeh.palettes import Cividis256
from bokeh.plotting import figure

from app import chrome
from attention_core import head, worked_example

MIN_LENGTH, MAX_LENGTH = 3, len(worked_example.WORDS)
HEIGHT = 330
MASK_FILL, MASK_TEXT = "#e4e4e4", "#3b3b3b"
OUTLINE = "#d55e00"  # Okabe-Ito vermillion: stands out on every Cividis shade
LOG_LINES = 4
SLIDER_WIDTH = 260
CELL_COLUMNS = ("x", "y", "weight", "label", "text_color", "key", "query")
MASKED_COLUMNS = ("x", "y", "label", "key", "query")


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


def text_colour(weight):  # black on the light end of Cividis, white on the dark end
    r, g, b = (int(Cividis256[round(weight * 255)][i:i + 2], 16) / 255 for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if luminance > 0.4 else "#ffffff"


@dataclass(frozen=True)
class HeadNumbers:
    """Everything the panel shows, for one setting of the controls."""

    result: head.HeadResult
    tokens: tuple
    position: int  # the inspected query's token position
    row: int  # its row in result (0 in decode)
    truncate: head.TruncateCheck
    blas: head.TruncateCheck


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
        self._build_widgets()
        self._build_figure()
        self._build_readouts()
        self._numbers = self.numbers()
        self._update()
        self.param.watch(self._on_change, list(self.url_keys))

    # --- the numbers --------------------------------------------------------------------

    def inspected(self):  # -> token position whose row is shown
        return self.length - 1 if self.phase == "decode" else min(self.query, self.length - 1)

    def numbers(self):  # pure: parameters -> HeadNumbers, all from attention_core
        n, position = self.length, self.inspected()
        kw = {"causal": self.mask, "scaled": self.divide}
        result = worked_example.run(n, phase=self.phase, **kw)
        return HeadNumbers(
            result=result, tokens=tuple(worked_example.tokens(n)), position=position,
            row=result.row(position),
            truncate=worked_example.truncate(n, position, **kw),
            blas=worked_example.truncate(n, position, exact=False, **kw),
        )

    def cells(self, nums):  # -> (visible cells, masked cells) as ColumnDataSource dicts
        r = nums.result
        shown = {k: [] for k in CELL_COLUMNS}
        masked = {k: [] for k in MASKED_COLUMNS}
        for row, q_pos in enumerate(r.query_positions):
            for k_pos in range(r.n):
                if r.hidden[row, k_pos]:
                    masked["x"].append(k_pos)
                    masked["y"].append(int(q_pos))
                    masked["label"].append("−∞")
                    masked["key"].append(nums.tokens[k_pos])
                    masked["query"].append(nums.tokens[q_pos])
                    continue
                w = float(r.weights[row, k_pos])
                shown["x"].append(k_pos)
                shown["y"].append(int(q_pos))
                shown["weight"].append(w)
                shown["label"].append(f"{w:.2f}")
                shown["text_color"].append(text_colour(w))
                shown["key"].append(nums.tokens[k_pos])
                shown["query"].append(nums.tokens[q_pos])
        return shown, masked

    # --- building, once -----------------------------------------------------------------

    def _build_widgets(self):
        self._length_w = pn.widgets.IntSlider.from_param(self.param.length, width=SLIDER_WIDTH)
        self._query_w = pn.widgets.IntSlider.from_param(
            self.param.query, end=self.length - 1, disabled=self.phase == "decode",
            width=SLIDER_WIDTH)
        self._mask_w = pn.widgets.Toggle.from_param(
            self.param.mask, name="causal mask", color="primary", width=150)
        self._divide_w = pn.widgets.Toggle.from_param(
            self.param.divide, name="divide scores by √d_k", color="primary", width=190)
        self._phase_w = pn.widgets.RadioButtonGroup.from_param(
            self.param.phase, name="phase", color="primary", variant="outline",
            width=180)
        phase_box = pn.Column(pn.pane.HTML('<span class="ae-label">phase</span>', margin=(0, 10)),
                              self._phase_w, margin=0)
        self._controls = pn.FlexBox(
            self._length_w, self._query_w, self._mask_w, self._divide_w, phase_box,
            align_items="flex-end", sizing_mode="stretch_width")

    def _build_figure(self):
        self.cell_source = ColumnDataSource({k: [] for k in CELL_COLUMNS})
        self.masked_source = ColumnDataSource({k: [] for k in MASKED_COLUMNS})
        self.row_source = ColumnDataSource({"x": [0.0], "y": [0], "width": [1]})
        mapper = LinearColorMapper(palette=Cividis256, low=0.0, high=1.0)
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_axis_location="above", x_range=Range1d(-0.5, 0.5),
                     y_range=Range1d(0.5, -0.5), min_border_left=4, min_border_right=8,
                     min_border_top=4, min_border_bottom=4, outline_line_color=None)
        fig.rect("x", "y", 0.96, 0.96, source=self.cell_source, line_color=None,
                 fill_color={"field": "weight", "transform": mapper})
        fig.rect("x", "y", 0.96, 0.96, source=self.masked_source, fill_color=MASK_FILL,
                 line_color=None, hatch_pattern="/", hatch_color="#b5b5b5", hatch_scale=8,
                 hatch_weight=1)
        fig.text("x", "y", text="label", source=self.cell_source, text_color="text_color",
                 text_align="center", text_baseline="middle", text_font_size="11px")
        fig.text("x", "y", text="label", source=self.masked_source, text_color=MASK_TEXT,
                 text_align="center", text_baseline="middle", text_font_size="11px")
        fig.rect("x", "y", "width", 1.0, source=self.row_source, fill_alpha=0.0,
                 line_color=OUTLINE, line_width=3)
        self.decode_label = Label(x=0, y=0, text="decode: only the newest token's row is computed",
                                  text_align="center", text_baseline="middle",
                                  text_font_size="11px", text_color="#555555", visible=False)
        fig.add_layout(self.decode_label)
        for axis, title in ((fig.xaxis[0], "keys"), (fig.yaxis[0], "queries")):
            axis.ticker = FixedTicker(ticks=[])
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
        def html_pane(**kw):  # each pane has its own shadow root: it needs the stylesheet
            return pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[STYLE], **kw)

        self._hero = html_pane(margin=(4, 10))
        self._caption = html_pane(margin=(0, 10))
        self._arithmetic = html_pane(margin=(0, 10))
        self._checks = html_pane(margin=(0, 10))
        self._log_pane = html_pane(margin=(0, 10))
        heatmap_col = pn.Column(self._figure_pane, self._caption, sizing_mode="stretch_width",
                                styles={"flex": "1 1 360px", "min-width": "0"})
        table_col = pn.Column(self._arithmetic, sizing_mode="stretch_width",
                              styles={"flex": "1 1 320px", "min-width": "0"})
        body = pn.FlexBox(heatmap_col, table_col, sizing_mode="stretch_width")
        self._layout = pn.Column(
            pn.pane.HTML("<h3 style='margin:0'>The head</h3>", margin=(0, 10)),
            self._controls, self._hero, body, self._checks, self._log_pane,
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

    def _update(self):  # write the current numbers into sources and panes; never rebuild
        nums = self._numbers
        n = nums.result.n
        shown, masked = self.cells(nums)
        self.cell_source.data = shown
        self.masked_source.data = masked
        self.row_source.data = {"x": [(n - 1) / 2], "y": [nums.position], "width": [n]}
        for toggle in (self._mask_w, self._divide_w):  # solid when on, outlined when off
            toggle.variant = "solid" if toggle.value else "outline"
        fig = self.figure
        fig.x_range.update(start=-0.5, end=n - 0.5)
        fig.y_range.update(start=n - 0.5, end=-0.5)
        labels = {i: tick_label(i, w) for i, w in enumerate(nums.tokens)}
        for axis in (fig.xaxis[0], fig.yaxis[0]):
            axis.ticker.ticks = list(range(n))
            axis.major_label_overrides = labels
        fig.xaxis[0].major_label_overrides = {i: f"{i}\n{w}" for i, w in enumerate(nums.tokens)}
        self.decode_label.update(x=(n - 1) / 2, y=(n - 2) / 2, visible=self.phase == "decode")
        self._hero.object = self.hero_html(nums)
        self._caption.object = self.caption_html(nums)
        self._arithmetic.object = self.arithmetic_html(nums)
        self._checks.object = self.checks_html(nums)
        self._log_pane.object = self.log_html()

    # --- readouts (text) ----------------------------------------------------------------

    def hero_html(self, nums):
        r = nums.result
        return (
            '<div class="ae-readout ae-hero" aria-live="polite">'
            f'<span><b>dot products</b> <span class="ae-big">{r.dot_products}</span>'
            f' <small>({"n² = " if self.phase == "prefill" else "n = "}'
            f'{r.n}{"²" if self.phase == "prefill" else ""})</small></span>'
            f'<span><b>pairs computed then discarded:</b> {r.pairs_discarded} of '
            f'{r.dot_products}</span>'
            f'<span><b>effective tokens attended</b> (row {nums.position}, '
            f'{html.escape(nums.tokens[nums.position])}): '
            f'{r.effective_tokens[nums.row]:.2f}</span></div>')

    def caption_html(self, nums):
        r = nums.result
        weights = r.weights[nums.row]
        top = int(np.argmax(weights))
        return ('<p class="ae-caption" aria-live="polite">Row '
                f'{nums.position} ({html.escape(nums.tokens[nums.position])}) puts its largest '
                f'weight, {weights[top]:.2f}, on key {top} ({html.escape(nums.tokens[top])}). '
                'Each row sums to 1; grey hatched cells are masked (−∞ before the softmax, '
                'weight exactly 0). Colour: Cividis, 0 dark to 1 light.</p>')

    def arithmetic_html(self, nums):
        r, i = nums.result, nums.row
        divisor = f"÷√{r.d_k}" if self.divide else "÷ 1"
        head_row = ("<tr><th scope='col'>key</th><th scope='col'>q·k</th>"
                    f"<th scope='col'>{divisor}</th><th scope='col'>mask</th>"
                    "<th scope='col'>exp(s&nbsp;− max)</th><th scope='col'>weight</th></tr>")
        rows = []
        for j in range(r.n):
            rows.append(
                f"<tr><th scope='row'>{j} {html.escape(nums.tokens[j])}</th>"
                f"<td>{fmt(r.raw_scores[i, j])}</td><td>{fmt(r.scaled_scores[i, j])}</td>"
                f"<td>{fmt(r.masked_scores[i, j])}</td><td>{fmt(r.exps[i, j], 3)}</td>"
                f"<td><b>{fmt(r.weights[i, j])}</b></td></tr>")
        rows.append(f"<tr class='ae-sum'><th scope='row'>sum</th><td></td><td></td><td></td>"
                    f"<td>{fmt(r.sums[i], 3)}</td><td>{fmt(r.weights[i].sum())}</td></tr>")
        return (
            f'<div class="ae-readout" aria-live="polite"><div class="ae-table-title">'
            f'The arithmetic of row {nums.position} '
            f'({html.escape(nums.tokens[nums.position])}), d_k = {r.d_k}</div>'
            f'<div class="ae-scroll"><table class="ae-arith">'
            f'<caption class="ae-sr">scores, mask, exponentials and weights of query '
            f'{nums.position} against each key</caption>'
            f'<thead>{head_row}</thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'<div class="ae-out">weight = exp ÷ sum. output = Σ weight × value = '
            f'{vector(r.output[i])}</div></div>')

    def checks_html(self, nums):
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
        return ('<div class="ae-readout" aria-live="polite">'
                f'<div><b>truncate line:</b> {truncate}</div>'
                f'<div class="ae-small">{blas}</div></div>')

    def log_html(self):
        if not self._log:
            body = "<li>change a control; what it did (or why it did nothing) shows here</li>"
        else:
            body = "".join(f"<li>{html.escape(line)}</li>" for line in self._log)
        return (f'<div class="ae-log" aria-live="polite"><b>log</b> <small>(newest first)</small>'
                f'<ul>{body}</ul></div>')


STYLE = """
.ae-readout { font-variant-numeric: tabular-nums; }
.ae-hero { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: baseline; }
.ae-big { font-size: 1.6em; font-weight: 600; }
.ae-label { font-size: 0.9em; }
.ae-caption { font-size: 0.85em; color: #444; margin: 2px 0; }
.ae-table-title { font-weight: 600; margin-bottom: 4px; }
.ae-scroll { overflow-x: auto; max-width: 100%; }
.ae-arith { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; }
.ae-arith th, .ae-arith td { padding: 2px 5px; text-align: right; white-space: nowrap; }
.ae-arith thead th { border-bottom: 1px solid #888; font-weight: 600; white-space: normal;
                     vertical-align: bottom; }
.ae-arith tbody th { text-align: left; font-weight: normal; }
.ae-arith .ae-sum th, .ae-arith .ae-sum td { border-top: 1px solid #888; }
.ae-out { font-size: 0.85em; margin-top: 4px; overflow-wrap: anywhere; }
.ae-small { font-size: 0.85em; color: #444; }
.ae-log { font-size: 0.85em; }
.ae-log ul { margin: 2px 0; padding-left: 18px; }
.ae-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
"""


def page():
    return chrome.single_page(HeadPanel(), "The head")
