"""Softmax turns scores into weights, and float16 can break it: the overflow trap.

Each score goes through e^x and is divided by the total. In float16 the largest number is
65,504, so one score of 12 (e^12 ≈ 162,755) becomes inf and spoils the whole row.
Subtracting the row's max first gives the same weights with every exponent at most 0.
"""

import html
import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Range1d
from bokeh.plotting import figure

from app import chrome
from app.model_picker import ink
from app.panels.agreement import fmt, parse_numbers
from attention_core import numerics

MAX_SCORES = 16
LIMIT = 10_000.0  # every typed score must itself be a finite float16
BLUE, VERMILLION = "#0072B2", "#D55E00"  # Okabe-Ito
HEIGHT = 200


def big(x):  # e^x for the message: "162,755", or "2.69 × 10^43" when long
    return f"{x:,.0f}" if x < 1e7 else fmt(x, 3)


def exact_exp(x):  # e^x in float64, or inf past float64's own range
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def cell(x):  # a value in the table: 3 significant figures, inf and nan spelled out
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "−inf"
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace("-", "−")
    return fmt(x, 3)


def percent(w):  # a weight as a percentage: "66%", "0.0045%", "nan"
    w = float(w)
    if not math.isfinite(w):
        return cell(w)
    if w == 0:
        return "0%"
    return f"{100 * w:.0f}%" if 100 * w >= 0.5 else f"{100 * w:.2g}%".replace("-", "−")


@dataclass(frozen=True)
class OverflowNumbers:
    """Everything the panel shows, for one setting of the controls."""

    scores: tuple
    steps: numerics.SoftmaxSteps
    largest: float  # the chosen precision's largest finite value
    other: numerics.SoftmaxSteps  # the same precision with the max-subtraction flipped


class OverflowPanel(pn.viewable.Viewer):
    """Softmax step by step in float32 or float16, with and without subtracting the max."""

    scores = param.String(default="2, 1, 0.1", label="scores",
                          doc=f"up to {MAX_SCORES} numbers separated by commas")
    precision = param.Selector(default="float16", objects=list(numerics.DTYPES),
                               label="precision", doc="the float type every step is done in")
    subtract_max = param.Boolean(default=False, label="subtract the max",
                                 doc="shift the scores so the largest is 0 before e^x")

    url_keys = ("scores", "precision", "subtract_max")

    def __init__(self, in_article=False, **params):
        # in_article: the chapter's section heading stands above, so leave out the panel's own
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self._good = (2.0, 1.0, 0.1)
        self._error = None
        self._read_scores()
        self._build_widgets()
        self._build_figure()
        self._build_readouts()
        self._update()
        self.param.watch(self._on_change, list(self.url_keys))

    # --- the numbers --------------------------------------------------------------------

    def _read_scores(self):  # parse; keep the last good scores on bad input
        values, self._error = parse_numbers(self.scores, max_count=MAX_SCORES, limit=LIMIT,
                                            what="the scores")
        if values is not None:
            self._good = values

    def numbers(self):  # pure: the last good scores, precision, toggle -> OverflowNumbers
        s = self._good
        return OverflowNumbers(
            scores=s, steps=numerics.softmax_steps(s, self.precision, self.subtract_max),
            largest=numerics.largest_finite(self.precision),
            other=numerics.softmax_steps(s, self.precision, not self.subtract_max))

    # --- building, once -----------------------------------------------------------------

    def _build_widgets(self):
        self._scores_w = pn.widgets.TextInput.from_param(
            self.param.scores, name=f"scores (up to {MAX_SCORES}, commas between)",
            max_length=100, sizing_mode="stretch_width", min_width=180, max_width=320)
        self._precision_w = pn.widgets.RadioButtonGroup.from_param(
            self.param.precision, name="precision", color="primary",
            variant="outline", width=180)
        # outlined and marked "off" when off, solid and marked "on" when on: a solid button
        # read as switched on while it was off. The mark is drawn by the stylesheet on the
        # button's own `active` state, with empty alternative text, so the button's name
        # stays "subtract the max"; the verdict below, a live region, says which is in force.
        self._subtract_w = pn.widgets.Toggle.from_param(
            self.param.subtract_max, name="subtract the max", color="primary",
            variant="outline", width=180, stylesheets=[TOGGLE_STYLE])
        precision_box = pn.Column(
            pn.pane.HTML('<span class="ae-label">precision</span>', margin=(0, 10),
                         stylesheets=[STYLE]),
            self._precision_w, margin=0)
        self._controls = pn.FlexBox(self._scores_w, precision_box, self._subtract_w,
                                    align_items="flex-end", sizing_mode="stretch_width")

    def _build_figure(self):
        self.bar_source = ColumnDataSource({"x": [], "weight": [], "label": [], "label_y": []})
        self.broken_source = ColumnDataSource({"x": [], "y": [], "text": []})  # nan / inf weights
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="",
                     toolbar_location=None, x_range=Range1d(-0.5, 2.5),
                     y_range=Range1d(0, 1.15), min_border_left=4, min_border_right=8,
                     outline_line_color=None)
        fig.vbar("x", 0.7, "weight", source=self.bar_source, fill_color=BLUE, line_color=None)
        fig.text("x", "label_y", text="label", source=self.bar_source, text_align="center",
                 text_baseline="bottom", y_offset=-2, text_font_size="11px",
                 text_color=self._ink.text)
        fig.scatter("x", "y", source=self.broken_source, marker="x", size=14,
                    line_color=VERMILLION, line_width=3)
        fig.text("x", "y", text="text", source=self.broken_source, text_align="center",
                 text_baseline="bottom", y_offset=-10, text_font_size="12px",
                 text_font_style="bold", text_color=self._ink.warm)
        fig.xaxis.ticker = FixedTicker(ticks=[])
        fig.xaxis.axis_label = "score"
        fig.yaxis.axis_label = "weight"
        chrome.quiet_axes(fig, tick_labels=True)
        fig.xgrid.visible = False
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_readouts(self):
        def html_pane(**kw):
            return chrome.readout_pane(STYLE, **kw)

        self._message = html_pane()
        self._table = html_pane()
        self._verdict = html_pane()
        self._caption = html_pane()
        table_col = pn.Column(self._table, sizing_mode="stretch_width",
                              styles={"flex": "1 1 320px", "min-width": "0"})
        chart_col = pn.Column(self._figure_pane, self._caption, sizing_mode="stretch_width",
                              styles={"flex": "1 1 300px", "min-width": "0"})
        heading = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>Softmax and the overflow trap</h3>",
                         margin=(0, 10))]
        self._layout = pn.Column(
            *heading, self._controls, self._message, self._verdict,
            pn.FlexBox(table_col, chart_col, sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])

    def __panel__(self):
        return self._layout

    # --- reacting -----------------------------------------------------------------------

    def _on_change(self, *events):
        if any(e.name == "scores" for e in events):
            self._read_scores()
        self._update()

    def _update(self):  # write the current numbers into sources and panes; never rebuild
        nums = self.numbers()
        self._numbers = nums
        w = nums.steps.weights.astype(np.float64)
        n = len(w)
        finite = np.isfinite(w)
        shown = np.where(finite, w, np.nan)  # nan / inf: no bar; the marker says why
        self.bar_source.data = {
            "x": list(range(n)), "weight": shown.tolist(),
            "label": [percent(x) if f else "" for x, f in zip(w, finite)],
            "label_y": np.where(finite, shown, 0.0).tolist()}
        broken = [i for i in range(n) if not finite[i]]
        self.broken_source.data = {"x": broken, "y": [0.06] * len(broken),
                                   "text": [cell(w[i]) for i in broken]}
        self.figure.x_range.update(start=-0.5, end=n - 0.5)
        self.figure.xaxis.ticker.ticks = list(range(n))
        self.figure.xaxis.major_label_overrides = {i: cell(s) for i, s in
                                                   enumerate(nums.scores)}
        self._message.object = self.message_html()
        self._message.visible = self._error is not None
        self._table.object = self.table_html(nums)
        self._verdict.object = self.verdict_html(nums)
        self._caption.object = self.caption_html(nums)

    # --- readouts (text) ----------------------------------------------------------------

    def message_html(self):
        if self._error is None:
            return '<div class="ae-msg" aria-live="polite"></div>'
        good = ", ".join(fmt(x) for x in self._good)
        return (f'<div class="ae-msg" role="status" aria-live="polite">'
                f'{html.escape(self._error)}; still using {html.escape(good)}</div>')

    def table_html(self, nums):
        st = nums.steps
        shift = ("score − max" if st.subtract_max else "shifted (off)")
        head = (f"<tr><th scope='col'>score</th><th scope='col'>{shift}</th>"
                f"<th scope='col'>e^x ({st.dtype})</th><th scope='col'>weight</th>"
                "<th scope='col'>%</th></tr>")
        rows = []
        for x, s, e, w in zip(st.inputs, st.shifted, st.exps, st.weights):
            bad = "" if math.isfinite(float(e)) and math.isfinite(float(w)) else " class='ae-bad'"
            rows.append(f"<tr{bad}><td>{cell(x)}</td><td>{cell(s)}</td><td>{cell(e)}</td>"
                        f"<td>{cell(w)}</td><td><b>{percent(w)}</b></td></tr>")
        rows.append(f"<tr class='ae-sum'><th scope='row'>sum</th><td></td>"
                    f"<td>{cell(st.total)}</td>"
                    f"<td>{cell(float(st.weights.astype(np.float64).sum()))}</td><td></td></tr>")
        return ('<div class="ae-readout" aria-live="polite"><div class="ae-scroll">'
                '<table class="ae-arith"><caption class="ae-sr">each score through the '
                'softmax: shifted, exponentiated, divided by the sum</caption>'
                f'<thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'
                '<div class="ae-small">weight = e^x ÷ sum, every step rounded to '
                f'{st.dtype}.</div></div>')

    def verdict_html(self, nums):
        st, largest, name = nums.steps, nums.largest, nums.steps.dtype
        ceiling = math.log(largest)
        if st.garbage and st.overflowed:
            worst = float(st.shifted[np.isinf(st.exps)].astype(np.float64).max())
            exact = exact_exp(worst)
            size = (f"≈ {big(exact)} &gt; {big(largest)}" if math.isfinite(exact) else
                    f"is past even float64's range, far beyond {big(largest)}")
            body = (f"<b>The row is garbage: e^{cell(worst)} {size}, the largest {name}.</b> "
                    "That e^x became inf, so the sum "
                    "is inf: every other weight is a number ÷ inf = 0 and the overflowed ones "
                    "are inf ÷ inf = nan. ")
            body += ("Turn on <i>subtract the max</i> to fix it." if not st.subtract_max
                     else f"Even shifted, a score gap this wide overflows {name}.")
            kind = "ae-alarm"
        elif st.garbage:
            body = ("<b>The row is garbage:</b> every e^x rounded to 0 in "
                    f"{name}, so the sum is 0 and 0 ÷ 0 = nan. Subtracting the max keeps the "
                    "largest term at e^0 = 1." if float(st.total) == 0 else
                    "<b>The row is garbage:</b> the weights no longer add up to 1.")
            kind = "ae-alarm"
        elif st.subtract_max:
            top = float(np.max(st.inputs.astype(np.float64)))
            other = nums.other
            if other.garbage:
                compare = (f"Without it this row would be garbage in {name}: the trap is "
                           "avoided, not just made rarer.")
            else:
                diff = float(np.abs(other.weights.astype(np.float64)
                                    - st.weights.astype(np.float64)).max())
                compare = (f"Without it the weights are the same (largest difference "
                           f"{fmt(diff, 2)}, rounding).")
            body = (f"Subtracting the max ({cell(top)}) makes every exponent at most 0, so "
                    f"every e^x is at most 1: nothing can overflow. {compare}")
            kind = "ae-okay"
        else:
            peak = float(np.max(st.exps.astype(np.float64)))
            body = (f"Every e^x fits: the largest is {cell(peak)}, below {big(largest)}, the "
                    f"largest {name}. Any score above ln {big(largest)} ≈ {ceiling:.2f} would "
                    "overflow it: try typing 12" + (" (in float16)." if name == "float32" else
                                                    "."))
            kind = "ae-okay"
        return f'<div class="ae-readout {kind}" role="status" aria-live="polite">{body}</div>'

    def caption_html(self, nums):
        broken = int((~np.isfinite(nums.steps.weights)).sum())
        extra = (f" {broken} weight{'s are' if broken > 1 else ' is'} not a number: marked ✕ "
                 "with no bar." if broken else "")
        return ('<p class="ae-small" aria-live="polite">Bars: the weights, which sum to 1 when '
                f'the row is healthy. Nothing gets exactly zero unless {nums.steps.dtype} '
                f'rounds it there.{extra}</p>')


# Text keeps the theme's own colour (light on dark, dark on light); boxes are tinted with a
# translucent Okabe-Ito colour, which reads on either background.
STYLE = """
.ae-label { font-size: 0.9em; }
.ae-small { font-size: 0.85em; opacity: 0.8; margin: 2px 0; }
.ae-scroll { overflow-x: auto; max-width: 100%; }
.ae-arith { border-collapse: collapse; font-size: 0.9em; font-variant-numeric: tabular-nums; }
.ae-arith th, .ae-arith td { padding: 2px 8px; text-align: right; white-space: nowrap; }
.ae-arith thead th { border-bottom: 1px solid #888; font-weight: 600; }
.ae-arith .ae-sum th, .ae-arith .ae-sum td { border-top: 1px solid #888; }
.ae-arith .ae-bad td { font-weight: 600; background: rgb(213 94 0 / 0.2); }
.ae-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.ae-msg { background: rgb(230 159 0 / 0.16); border-left: 3px solid #e69f00;
          padding: 4px 8px; overflow-wrap: anywhere; }
.ae-msg:empty { display: none; }
.ae-alarm { background: rgb(213 94 0 / 0.14); border-left: 4px solid #d55e00; padding: 6px 8px; }
.ae-okay { background: rgb(0 114 178 / 0.14); border-left: 4px solid #0072b2; padding: 6px 8px; }
"""

# the toggle: outlined when off, solid when on, with "off" / "on" beside its name. The state
# is styled on the button's own `active` class: changing the widget's variant instead would
# change its CSS classes, and Bokeh lays the whole page out again after every such change.
TOGGLE_STYLE = """
:host(.outline) .bk-btn-primary.bk-active,
:host(.outline) .bk-btn-primary.bk-active:hover {
  background-color: var(--primary-color);
  color: var(--button-primary-text-color);
  border-color: transparent;
  box-shadow: inset 0px 3px 5px rgb(0 0 0 / 25%);
}
.bk-btn::after {
  content: "off" / "";
  display: inline-block; margin-left: 0.6em; padding: 0 0.35em; border-radius: 3px;
  border: 1px solid currentColor; font-size: 0.8em; line-height: 1.3; font-weight: 600;
}
.bk-btn.bk-active::after { content: "on" / ""; }
"""


def page():
    return chrome.single_page(OverflowPanel(), "Softmax and the overflow trap")
