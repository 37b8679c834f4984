"""Softmax turns scores into weights, and float16 can break it: the overflow trap.

Each score goes through e^x and is divided by the total. In float16 the largest number is
65,504, so one score of 12 (e^12 ≈ 162,755) becomes inf and spoils the whole row.
Subtracting the row's max first gives the same weights with every exponent at most 0.

The panel has the one shape (app/kit/states.py): three controls (the scores, from the documents'
examples and a few more that break a softmax another way; the precision; subtract the max)
and one pure part over all three. A live page also takes typed scores, computed by the same
part function.
"""

import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class, scroll_box
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from app.kit.typed_numbers import in_force, numbers_of, preset_control, scores_input
from attention_core import numerics

MAX_SCORES = 16
LIMIT = 10_000.0  # every typed score must itself be a finite float16
BLUE, VERMILLION = "#0072B2", "#D55E00"  # Okabe-Ito
HEIGHT = 200
SIXTEEN_NINES = ", ".join(["9"] * 16)
# the presets: {the text a URL and the live box carry: what the list shows}
PRESETS = {
    "2, 1, 0.1": "2, 1, 0.1: the chapter's row (66%, 24%, 10%)",
    "12, 1, 0.1": "12, 1, 0.1: e^12 ≈ 162,755 > float16's 65,504",
    "11, 1, 0.1": "11, 1, 0.1: e^11 ≈ 59,874 fits float16",
    "100, 1, 0.1": "100, 1, 0.1: past float32's e^88.7 too",
    "-20, -21, -22": "−20, −21, −22: every e^x rounds to 0 in float16",
    SIXTEEN_NINES: "sixteen 9s: each e^9 fits float16, their sum does not",
}
COLUMNS = ("x", "s", "e", "w", "p", "f")  # a table row's holes: score, shifted, e^x, weight, %, ✕


@dataclass(frozen=True)
class OverflowNumbers:
    """Everything the panel shows, for one setting of the controls."""

    scores: tuple
    steps: numerics.SoftmaxSteps
    largest: float  # the chosen precision's largest finite value
    other: numerics.SoftmaxSteps  # the same precision with the max-subtraction flipped


def scores_of(scores):  # text or numbers -> tuple of floats (ValueError if not)
    return numbers_of(scores, max_count=MAX_SCORES, limit=LIMIT, what="the scores")


def overflow_numbers(scores, precision, subtract_max):  # -> OverflowNumbers
    s = scores_of(scores)
    return OverflowNumbers(
        scores=s, steps=numerics.softmax_steps(s, precision, subtract_max),
        largest=numerics.largest_finite(precision),
        other=numerics.softmax_steps(s, precision, not subtract_max))


def exact_exp(x):  # e^x in float64, or inf past float64's own range
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


cell = fmt.sig_figures_or_whole  # a value in the table: 3 figures, inf and nan spelled out


# --- the readouts: templates of empty holes --------------------------------------------------

TABLE = (
    '<div class="ae-readout" aria-live="polite">' + scroll_box("the softmax, score by score")
    + '<table class="ae-arith"><caption class="ae-sr">each score through the softmax: '
    'shifted, exponentiated, divided by the sum</caption>'
    f"<thead><tr><th scope='col'>score</th>{hole('shift', 'th', scope='col')}"
    f"<th scope='col'>e^x ({hole('dtype')})</th><th scope='col'>weight</th>"
    "<th scope='col'>%</th><th scope='col'><span class='ae-sr'>broken</span></th></tr></thead>"
    "<tbody>"
    + "".join(
        f"<tr>{hole(f'x{i}', 'td', class_='ae-x')}{hole(f's{i}', 'td')}{hole(f'e{i}', 'td')}"
        f"{hole(f'w{i}', 'td')}<td>{hole(f'p{i}', 'b')}</td>{hole(f'f{i}', 'td', class_='ae-f')}"
        "</tr>"
        for i in range(MAX_SCORES))
    + f"<tr class='ae-sum'><th scope='row'>sum</th><td></td>{hole('total', 'td')}"
    f"{hole('weight_sum', 'td')}<td></td><td></td></tr></tbody></table></div>"
    '<div class="ae-small">weight = e^x ÷ sum, every step rounded to '
    f'{hole("dtype_note")}.</div></div>')

VERDICT = (
    '<div class="ae-readout" role="status" aria-live="polite">'
    f'<div class="ae-verdict ae-alarm">{hole("alarm", "b")} {hole("alarm_more")}</div>'
    f'<div class="ae-verdict ae-okay">{hole("okay")}</div></div>')

CAPTION = (
    '<p class="ae-small" aria-live="polite">Bars: the weights, which sum to 1 when the row is '
    f'healthy, over the scores. Nothing gets exactly zero unless {hole("dtype")} rounds it '
    f'there.{hole("broken")}</p>')

MESSAGE = f'<div role="status" aria-live="polite">{hole("text", "div", class_="ae-msg")}</div>'


TableReadout = readout_class("TableReadout", TABLE, module=__name__)
VerdictReadout = readout_class("VerdictReadout", VERDICT, module=__name__)
CaptionReadout = readout_class("CaptionReadout", CAPTION, module=__name__)
MessageReadout = readout_class("MessageReadout", MESSAGE, module=__name__)


# --- the state: one part over the three controls ---------------------------------------------

def softmax_state(scores, precision, subtract_max):  # -> {target: value}
    nums = overflow_numbers(scores, precision, subtract_max)
    w = nums.steps.weights.astype(np.float64)
    n = len(w)
    finite = np.isfinite(w)
    broken = [i for i in range(n) if not finite[i]]
    return {
        # a nan or inf weight has no bar (None: a missing value); a ✕ says why
        "source:bars": {
            "x": list(range(n)),
            "weight": [float(x) if f else None for x, f in zip(w, finite)],
            "label": [fmt.weight_percent(x) if f else "" for x, f in zip(w, finite)],
            "label_y": [float(x) if f else 0.0 for x, f in zip(w, finite)],
            "score": [cell(s) for s in nums.scores]},
        "source:broken": {"x": broken, "y": [0.06] * len(broken),
                          "text": [cell(w[i]) for i in broken]},
        "prop:x_range.end": n - 0.5,
        "holes:table": table_values(nums),
        "holes:verdict": verdict_values(nums),
        "holes:caption": caption_values(nums),
    }


def table_values(nums):  # -> {hole: text}: each score's way through the softmax
    st = nums.steps
    values = {"shift": "score − max" if st.subtract_max else "shifted (off)",
              "dtype": st.dtype, "dtype_note": st.dtype, "total": cell(st.total),
              "weight_sum": cell(float(st.weights.astype(np.float64).sum()))}
    rows = list(zip(st.inputs, st.shifted, st.exps, st.weights))
    for i in range(MAX_SCORES):
        if i >= len(rows):  # no such score: the row is hidden
            values.update({f"{c}{i}": "" for c in COLUMNS})
            continue
        x, s, e, w = rows[i]
        bad = not (math.isfinite(float(e)) and math.isfinite(float(w)))
        values.update({f"x{i}": cell(x), f"s{i}": cell(s), f"e{i}": cell(e), f"w{i}": cell(w),
                       f"p{i}": fmt.weight_percent(w), f"f{i}": "✕" if bad else ""})
    return values


def verdict_values(nums):  # -> {alarm, alarm_more, okay}: what happened to the row, and why
    st, largest, name = nums.steps, nums.largest, nums.steps.dtype
    big = fmt.big_number
    alarm = more = okay = ""
    if st.garbage and st.overflowed:
        worst = float(st.shifted[np.isinf(st.exps)].astype(np.float64).max())
        exact = exact_exp(worst)
        size = (f"≈ {big(exact)} > {big(largest)}" if math.isfinite(exact) else
                f"is past even float64's range, far beyond {big(largest)}")
        alarm = f"The row is garbage: e^{cell(worst)} {size}, the largest {name}."
        more = ("That e^x became inf, so the sum is inf: every other weight is a number ÷ inf "
                "= 0 and the overflowed ones are inf ÷ inf = nan. "
                + ("Turn on subtract the max to fix it." if not st.subtract_max
                   else f"Even shifted, a score gap this wide overflows {name}."))
    elif st.garbage and float(st.total) == 0:
        alarm = "The row is garbage:"
        more = (f"every e^x rounded to 0 in {name}, so the sum is 0 and 0 ÷ 0 = nan. "
                "Subtracting the max keeps the largest term at e^0 = 1.")
    elif st.garbage and math.isinf(float(st.total)):
        peak = float(np.max(st.exps.astype(np.float64)))
        exact = float(np.exp(st.shifted.astype(np.float64)).sum())
        alarm = f"The row is garbage: the sum overflowed {name}."
        more = (f"Every e^x fits (the largest is {cell(peak)}, below {big(largest)}), but their "
                f"sum, {big(exact)}, does not: it became inf, and every weight is a number ÷ inf "
                "= 0. Subtracting the max makes every term at most 1, so the sum is at most "
                "the number of scores.")
    elif st.garbage:
        alarm = "The row is garbage:"
        more = "the weights no longer add up to 1."
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
                       f"{fmt.sig_figures(diff, 2)}, rounding).")
        okay = (f"Subtracting the max ({cell(top)}) makes every exponent at most 0, so every "
                f"e^x is at most 1: nothing can overflow. {compare}")
    else:
        peak = float(np.max(st.exps.astype(np.float64)))
        ceiling = math.log(largest)
        okay = (f"Every e^x fits: the largest is {cell(peak)}, below {big(largest)}, the "
                f"largest {name}. Any score above ln {big(largest)} ≈ {ceiling:.2f} would "
                "overflow it, as the scores 12, 1, 0.1 do"
                + (" (in float16)." if name == "float32" else "."))
    return {"alarm": alarm, "alarm_more": more, "okay": okay}


def caption_values(nums):  # -> {hole: text} of the caption under the bars
    broken = int((~np.isfinite(nums.steps.weights)).sum())
    extra = (f" {broken} weight{'s are' if broken > 1 else ' is'} not a number: marked ✕ "
             "with no bar." if broken else "")
    return {"dtype": nums.steps.dtype, "broken": extra}


# Text keeps the theme's own colour (light on dark, dark on light); boxes are tinted with a
# translucent Okabe-Ito colour, which reads on either background.
STYLE = resources.stylesheet("overflow.css")

# the toggle: outlined when off, solid when on, with "off" / "on" beside its name. The state
# is styled on the button's own `active` class: changing the widget's variant instead would
# change its CSS classes, and Bokeh lays the whole page out again after every such change.
TOGGLE_STYLE = resources.stylesheet("toggle.css") + resources.stylesheet("toggle-on-off.css")


class OverflowPanel(StatePanel):
    """Softmax step by step in float32 or float16, with and without subtracting the max."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    scores = param.String(default="2, 1, 0.1", label="scores",
                          doc=f"up to {MAX_SCORES} numbers separated by commas")
    precision = param.Selector(default="float16", objects=list(numerics.DTYPES),
                               label="precision", doc="the float type every step is done in")
    subtract_max = param.Boolean(default=False, label="subtract the max",
                                 doc="shift the scores so the largest is 0 before e^x")

    url_keys = ("scores", "precision", "subtract_max")

    @classmethod
    def controls(cls):
        return [preset_control("scores", PRESETS),
                Control.choice("precision", numerics.DTYPES), Control.toggle("subtract_max")]

    @classmethod
    def parts(cls):
        return [Part(("scores", "precision", "subtract_max"), softmax_state)]

    def __init__(self, **params):
        self._ink = ink()
        self._good = (2.0, 1.0, 0.1)
        super().__init__(**params)

    # --- the numbers --------------------------------------------------------------------

    def current_state(self):
        # a live page also takes typed scores: a list that does not parse leaves the last
        # good one in force, and the message says so
        self._good, message = in_force(self.scores, self._good, fmt.sig_figures,
                                       max_count=MAX_SCORES, limit=LIMIT, what="the scores")
        state = self.state(scores=self._good, precision=self.precision,
                           subtract_max=self.subtract_max)
        state["holes:message"] = {"text": message}
        return state

    def numbers(self):  # -> OverflowNumbers of the scores in force
        return overflow_numbers(self._good, self.precision, self.subtract_max)

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self._build_widgets()
        self._build_figure()
        self._build_readouts(state)
        self.widgets = {"scores": self._scores_pick, "precision": self._precision_w,
                        "subtract_max": self._subtract_w}
        self.targets = {
            "source:bars": self.bar_source, "source:broken": self.broken_source,
            "prop:x_range.end": self.figure.x_range, "holes:table": self._table,
            "holes:verdict": self._verdict, "holes:caption": self._caption,
            "holes:message": self._message,
        }
        return self._layout

    def _build_widgets(self):
        static = self.static
        self._scores_pick, typed = scores_input(
            self, PRESETS, static=static, route=registry.route_of(type(self)),
            max_scores=MAX_SCORES, pick_width=400, box_width=320)
        self._precision_w = pn.widgets.RadioButtonGroup.from_param(
            self.param.precision, label="precision", color="primary",
            variant="outline", width=180)
        # outlined and marked "off" when off, solid and marked "on" when on: a solid button
        # read as switched on while it was off. The mark is drawn by the stylesheet on the
        # button's own `active` state, with empty alternative text, so the button's name
        # stays "subtract the max"; the verdict below, a live region, says which is in force.
        self._subtract_w = pn.widgets.Toggle.from_param(
            self.param.subtract_max, label="subtract the max", color="primary",
            variant="outline", width=180, stylesheets=[TOGGLE_STYLE])
        precision_box = pn.Column(
            pn.pane.HTML('<span class="ae-label">precision</span>', margin=(0, 10),
                         stylesheets=[STYLE]),
            self._precision_w, margin=0)
        self._controls = pn.FlexBox(self._scores_pick, typed, precision_box, self._subtract_w,
                                    align_items="flex-end", sizing_mode="stretch_width")

    def _build_figure(self):
        # the scores stand under their bars, inside the plot: their text changes with the
        # state, which an axis's label overrides cannot follow in the browser
        self.bar_source = ColumnDataSource({"x": [], "weight": [], "label": [], "label_y": [],
                                            "score": []})
        self.broken_source = ColumnDataSource({"x": [], "y": [], "text": []})  # nan / inf weights
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="",
                     toolbar_location=None, x_range=Range1d(-0.5, 2.5),
                     y_range=Range1d(-0.14, 1.15), min_border_left=4, min_border_right=8,
                     outline_line_color=None)
        paint = self._ink
        fig.vbar("x", 0.7, "weight", source=self.bar_source, fill_color=BLUE, line_color=None)
        fig.text("x", "label_y", text="label", source=self.bar_source, text_align="center",
                 text_baseline="bottom", y_offset=-2, text_font_size="12px",
                 text_color=paint.text)
        fig.text("x", 0, text="score", source=self.bar_source, text_align="center",
                 text_baseline="top", y_offset=4, text_font_size="12px", text_color=paint.text)
        fig.scatter("x", "y", source=self.broken_source, marker="x", size=14,
                    line_color=VERMILLION, line_width=3)
        fig.text("x", "y", text="text", source=self.broken_source, text_align="center",
                 text_baseline="bottom", y_offset=-10, text_font_size="12px",
                 text_font_style="bold", text_color=paint.warm)
        chrome.score_axes(fig, "weight")
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_readouts(self, state):
        self._message = self.new_readout(MessageReadout, {"text": ""})
        self._table = self.new_readout(TableReadout, state["holes:table"])
        self._verdict = self.new_readout(VerdictReadout, state["holes:verdict"])
        self._caption = self.new_readout(CaptionReadout, state["holes:caption"])
        table_col = pn.Column(self._table, sizing_mode="stretch_width",
                              styles={"flex": "1 1 320px", "min-width": "0"})
        chart_col = pn.Column(self._figure_pane, self._caption, sizing_mode="stretch_width",
                              styles={"flex": "1 1 300px", "min-width": "0"})
        heading = self.own(
            chrome.heading(registry.title_of(type(self))))
        self._layout = pn.Column(
            *heading, self.url_note, self._controls, self._message, self._verdict,
            pn.FlexBox(table_col, chart_col, sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])
