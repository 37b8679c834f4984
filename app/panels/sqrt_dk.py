"""The √d_k sweep: why attention divides its scores by √d_k.

A dot product of d_k unit-variance products has a spread of √d_k, so without the divisor
the softmax sharpens onto one key as the head widens; with it, how sharply the head
attends no longer depends on d_k. The learner drags d_k and watches the two rows part.

The panel has the one shape (app/kit/states.py): d_k on powers of two 1..1024 and the number of
keys on powers of two 2..256 (88 settings), a pure `state()` made of three parts (the
curves over d_k, which depend on the keys only; the line at d_k; the draw at d_k and keys),
and a view built once. One fixed draw is shown, with the mean over many fresh draws, all
from `attention_core.sqrt_dk`. A live page also takes any d_k and any number of keys, typed;
it computes them with the same part functions.
"""

import functools
import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTickFormatter,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    NoOverlap,
    Range1d,
    Span,
)
from bokeh.plotting import figure
from bokeh.transform import transform

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel, merge_parts
from app.kit.theme import ink
from app.kit.transforms import static_transform
from attention_core import sqrt_dk as core

# Okabe-Ito: unscaled in warm colours, scaled in cool ones; dash styles carry the same split.
# The line at the chosen d_k is the theme's grey (ink().rule).
VERMILLION, ORANGE, BLUE, GREEN = "#D55E00", "#E69F00", "#0072B2", "#009E73"

# d_k = 1..1024 in eighth-octave steps; every power of two is on it, so 4, 16, 128, 512 are.
CURVE_D_KS = tuple(int(d) for d in np.unique(np.round(2.0 ** (np.arange(81) / 8))))
MAX_EXPONENT = int(math.log2(core.MAX_D_K))
D_K_STOPS = tuple(2 ** e for e in range(MAX_EXPONENT + 1))  # 1 .. 1024
KEY_STOPS = tuple(2 ** e for e in range(1, int(math.log2(core.MAX_KEYS)) + 1))  # 2 .. 256

# The mean curve costs about 15 µs per (draw, key) here; 1200 of them keep a change of the
# number of keys near 20 ms even before the cache has it. Fewer keys afford more draws.
MEAN_WORK = 1200
MAX_MEAN_DRAWS = 200
MIN_MEAN_DRAWS = 4

# What the page needs of each number, so the table of states stays small: the bars' heights
# (weights) to 7 significant digits, so a row still sums to 1 within 10⁻⁶, and a weight
# under 10⁻⁹ as 0; scores to the hundredth their tooltip shows; curves to 6 digits.
WEIGHT_DIGITS, WEIGHT_FLOOR, SCORE_DECIMALS, CURVE_DIGITS = 7, 1e-9, 2, 6


def significant(values, digits, floor=0.0):  # [n] -> list of floats to `digits` digits
    return [0.0 if abs(v) < floor else float(f"{v:.{digits - 1}e}") for v in np.asarray(values)]


def mean_draws(keys):  # int -> how many fresh draws the mean curve averages over
    return int(min(MAX_MEAN_DRAWS, max(MIN_MEAN_DRAWS, MEAN_WORK // keys)))


def curve_data(keys, draws):  # -> columns over CURVE_D_KS: this draw and the mean, both rows
    draw_raw, draw_scaled = core.effective_curve(CURVE_D_KS, keys)
    mean = core.expectation(CURVE_D_KS, keys, draws)
    return {"d_k": list(CURVE_D_KS), "draw_raw": significant(draw_raw, CURVE_DIGITS),
            "draw_scaled": significant(draw_scaled, CURVE_DIGITS),
            "mean_raw": significant(mean.effective_raw, CURVE_DIGITS),
            "mean_scaled": significant(mean.effective_scaled, CURVE_DIGITS)}


def mean_uncertainty(keys, draws):  # -> the largest standard error of the mean curves, as a
    # share of the mean: few draws keep a change of keys quick, at this cost
    mean = core.expectation(CURVE_D_KS, keys, draws)  # cached: curve_data's own draws
    return float(max(np.max(mean.effective_raw_se / mean.effective_raw),
                     np.max(mean.effective_scaled_se / mean.effective_scaled)))


def bar_data(point):  # SweepPoint -> one row per key, both softmaxes of the same scores
    n = point.raw_scores.size
    return {"key": list(range(1, n + 1)),
            "raw": np.round(point.raw_scores, SCORE_DECIMALS).tolist(),
            "scaled": np.round(point.scaled_scores, SCORE_DECIMALS).tolist(),
            "w_raw": significant(point.weights_raw, WEIGHT_DIGITS, WEIGHT_FLOOR),
            "w_scaled": significant(point.weights_scaled, WEIGHT_DIGITS, WEIGHT_FLOOR)}


def swing_values(d_k):  # int -> {hole: text}: the ±3σ swing and the ratio of exponentials
    swing = core.three_sigma_range(d_k)
    power = core.exp_ratio_log10(d_k)
    # up to a million the ratio is written out; past it, as a power of ten
    base, exponent = (fmt.count(round(10 ** power)), "") if power < 6 else ("10", f"{power:.0f}")
    return {"swing_d_k": str(d_k), "swing": f"{swing:.0f}", "two_swing": f"{2 * swing:.0f}",
            "ratio": base, "ratio_exp": exponent}


# The curve's axes are fixed too, for any number of keys: effective keys lie between 1 and the
# number of keys, drawn on a log axis from just under 1 to past the most keys.
CURVE_Y = (0.85, core.MAX_KEYS * 1.3)

# The bars sit on a fixed axis from 0 to 1, key i of n centred at (i - ½) / n, 0.8 / n wide:
# the figure's axes then stay as they are when the number of keys changes, and only the bars
# redraw. The browser places them from the key column (the shipped states stay as small):
# static/model_code.js's keyCentre and keyWidth. (A Bokeh model belongs to one document: each
# figure gets its own.)


def key_centre_py(keys, data):  # keyCentre for the stills
    return [(k - 0.5) / len(keys) for k in keys]


def key_width_py(keys, data):  # keyWidth for the stills
    return [0.8 / len(keys) for _ in keys]


# --- the state: three parts, each a pure function of some of the controls -------------------
# `draws` fixes the mean curve's number of draws (tests); None budgets it by the keys.

def curve_state(keys, draws=None):  # the curves over d_k and the dashed line at every key
    return {"source:curve": curve_data(keys, draws or mean_draws(keys)),
            "prop:all_keys.location": keys}


def line_state(d_k):  # the grey line at the chosen d_k
    return {"prop:span.location": d_k}


def point_state(d_k, keys, draws=None):  # the draw at d_k: bars, markers and every text
    point = core.sweep_point(d_k, keys)
    draws = draws or mean_draws(keys)
    return {
        "source:bars": bar_data(point),
        "source:marker": {"d_k": [point.d_k],
                          "raw": significant([point.effective_raw], CURVE_DIGITS),
                          "scaled": significant([point.effective_scaled], CURVE_DIGITS)},
        "holes:readout": {
            "eff_raw": f"{point.effective_raw:.2f}", "eff_scaled": f"{point.effective_scaled:.2f}",
            "n": str(keys), "spread": f"{point.spread:.2f}", "d_k": str(point.d_k),
            "root": f"{point.sqrt_d_k:.2f}", **swing_values(point.d_k)},
        "holes:curve_note": {"keys": str(keys), "draws": str(draws), "d_k": str(point.d_k),
                             "error": fmt.percent(mean_uncertainty(keys, draws), 2)},
    }


READOUT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Without the divisor</b>: {hole("eff_raw", "b")} effective keys of {hole("n")}.'
    f'<br><b>Divided by √d_k</b>: {hole("eff_scaled", "b")} effective keys of {hole("n")}.'
    '</p>'
    f'<p>Measured spread of the raw scores: {hole("spread", "b")} against '
    f'√{hole("d_k")} = {hole("root", "b")}.</p>'
    f'<p>Three standard deviations either side, raw scores at d_k = {hole("swing_d_k")} swing '
    f'about ±{hole("swing")}, so across that range the largest e<sup>score</sup> is '
    f'e<sup>6√d_k</sup> = e{hole("two_swing", "sup")} ≈ {hole("ratio")}{hole("ratio_exp", "sup")}'
    ' times the smallest.</p></div>')

CURVE_NOTE = (
    '<div class="ae-readout" aria-live="polite"><p>Effective keys for every d_k from 1 to '
    f'{core.MAX_D_K} with {hole("keys")} keys (both axes logarithmic); raw means without the '
    'divisor. Solid and dotted lines: the one draw shown above. Dashed and dash-dot lines: the '
    f'mean over {hole("draws")} fresh draws, few enough that a change of keys redraws at '
    f'once, so a point of them is uncertain by up to ±{hole("error")} (one standard error); '
    "the chapter's averages use far more draws and are steadier. The markers and the grey "
    'upright line sit at '
    f'd_k = {hole("d_k")}; the grey level line at {hole("keys")}, every key weighted alike.'
    '</p></div>')


SweepReadout = readout_class("SweepReadout", READOUT, module=__name__)
CurveNote = readout_class("CurveNote", CURVE_NOTE, module=__name__)


INTRO = (
    "A query and a set of keys whose components are each drawn on their own, mean 0 and "
    "variance 1, from one fixed random seed. A head of width d_k uses the first d_k "
    "components of every vector, so moving d_k changes only how many products each dot "
    "product adds up. Both rows of bars softmax the very same dot products; the second "
    "divides them by √d_k first.")

LOOK_FOR = (
    "**What to look for:** at a larger d_k the top row piles nearly all its weight onto a "
    "single key, while the divided row looks much the same at every d_k. The spread of the "
    "raw scores grows like √d_k, and the divisor cancels exactly that.")

EFFECTIVE_KEYS = (
    "*Effective keys* is e raised to the entropy of the weights: 1 when one key takes "
    "everything, the number of keys when all share equally. The measured spread is the "
    "standard deviation of this one draw's raw scores; with a few keys it is a rough "
    "estimate, so expect it to land a few percent off √d_k.")


def _bar_figure(source, column, title, colour):
    fig = figure(title=title, height=170, sizing_mode="stretch_width", min_width=200,
                 x_range=Range1d(0, 1), y_range=Range1d(0, 1.02), tools="",
                 toolbar_location=None)
    # no outline: the bars draw over the axis (app/kit/states.py), a weight of 0 would be a line
    fig.vbar(x=transform("key", static_transform("keyCentre", key_centre_py)), top=column,
             width=transform("key", static_transform("keyWidth", key_width_py)), source=source,
             fill_color=colour, line_color=None)
    fig.add_tools(HoverTool(tooltips=[("key", "@key"), ("raw score q·k", "@raw{0.00}"),
                                      ("score / √d_k", "@scaled{0.00}"),
                                      ("weight", f"@{column}{{0.000}}")]))
    # the keys in order, first to last; no tick labels (the axis spans 0..1), the hover names
    # each bar's key
    fig.xaxis.axis_label = "keys, first to last"
    fig.xaxis.ticker = FixedTicker(ticks=[])
    fig.yaxis.axis_label = "weight"
    fig.xgrid.grid_line_color = None
    fig.title.text_font_size = "13px"
    return fig


STYLE = resources.stylesheet("sqrt-dk.css")


class SqrtDkPanel(StatePanel):
    """Softmax of the same random scores with and without the √d_k divisor, swept over d_k."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    d_k = param.Integer(default=128, bounds=(1, core.MAX_D_K), label="d_k", doc="""
        Head width: how many components each dot product sums over.""")
    keys = param.Integer(default=core.DEFAULT_KEYS, bounds=(2, core.MAX_KEYS),
                         label="number of keys", doc="How many keys the query is scored against.")

    url_keys = ("d_k", "keys")

    def __init__(self, mean_draws=None, **params):
        # mean_draws: fix the mean curve's number of draws (tests); None = budget by keys
        self._fixed_draws = mean_draws
        super().__init__(**params)

    @classmethod
    def controls(cls):
        return [Control("d_k", D_K_STOPS, "value", tuple(range(len(D_K_STOPS))), "number"),
                Control.stop_slider("keys", KEY_STOPS)]

    @classmethod
    def parts(cls, draws=None):
        return [Part(("keys",), functools.partial(curve_state, draws=draws)),
                Part(("d_k",), line_state),
                Part(("d_k", "keys"), functools.partial(point_state, draws=draws))]

    def current_state(self):  # the same parts, with the mean's draws this panel was given
        return merge_parts(self.parts(self._fixed_draws), self.params())

    def draws(self):  # -> how many draws the mean curve averages over at the current keys
        return self._fixed_draws or mean_draws(self.keys)

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self.bar_source = ColumnDataSource(state["source:bars"])
        self.curve_source = ColumnDataSource(state["source:curve"])
        self.marker_source = ColumnDataSource(state["source:marker"])
        self.raw_figure = _bar_figure(self.bar_source, "w_raw",
                                      "Without the divisor: softmax(q·k)", VERMILLION)
        self.scaled_figure = _bar_figure(self.bar_source, "w_scaled",
                                         "Divided: softmax(q·k / √d_k)", BLUE)
        self.curve_figure, self.marker_span, self.all_keys_span = self._curve_figure(state)
        self.readout = self.new_readout(SweepReadout, state["holes:readout"])
        self.curve_note = self.new_readout(CurveNote, state["holes:curve_note"])
        self._build_widgets()
        self.targets = {
            "source:curve": self.curve_source, "prop:all_keys.location": self.all_keys_span,
            "prop:span.location": self.marker_span, "source:bars": self.bar_source,
            "source:marker": self.marker_source, "holes:readout": self.readout,
            "holes:curve_note": self.curve_note,
        }
        return self._build_layout()

    def _curve_figure(self, state):
        fig = figure(title="Effective keys as the head widens", height=360,
                     sizing_mode="stretch_width", min_width=200, x_axis_type="log",
                     y_axis_type="log",
                     x_range=Range1d(0.88, core.MAX_D_K * 1.14),  # room for the markers
                     y_range=Range1d(*CURVE_Y), tools="", toolbar_location=None)
        styles = [("draw_raw", "raw, this draw", VERMILLION, "solid"),
                  ("mean_raw", "raw, mean", ORANGE, "dashed"),
                  ("draw_scaled", "÷√d_k, this draw", BLUE, "dotted"),
                  ("mean_scaled", "÷√d_k, mean", GREEN, "dashdot")]
        items = []
        for column, label, colour, dash in styles:
            line = fig.line("d_k", column, source=self.curve_source, line_color=colour,
                            line_dash=dash, line_width=2.5)
            items.append(LegendItem(label=label, renderers=[line]))
        span = Span(location=state["prop:span.location"], dimension="height",
                    line_color=ink().rule, line_dash="dotted", line_width=1.5)
        fig.add_layout(span)
        all_keys = Span(location=state["prop:all_keys.location"], dimension="width",
                        line_color=ink().rule, line_dash="dashed", line_width=1.5)
        fig.add_layout(all_keys)
        fig.scatter("d_k", "raw", source=self.marker_source, marker="circle", size=10,
                    fill_color=VERMILLION, line_color="black")
        fig.scatter("d_k", "scaled", source=self.marker_source, marker="square", size=10,
                    fill_color=BLUE, line_color="black")
        fig.add_tools(HoverTool(renderers=items[0].renderers, mode="vline", tooltips=[
            ("d_k", "@d_k"), ("raw, this draw", "@draw_raw{0.00}"),
            ("raw, mean", "@mean_raw{0.00}"), ("÷√d_k, this draw", "@draw_scaled{0.00}"),
            ("÷√d_k, mean", "@mean_scaled{0.00}")]))
        fig.add_layout(Legend(items=items, ncols=2, border_line_alpha=0, padding=4,
                              label_text_font_size="12px", spacing=14, glyph_width=28,
                              location="center"), "below")
        fig.xaxis.ticker = FixedTicker(ticks=list(D_K_STOPS))
        fig.xaxis.formatter = BasicTickFormatter()
        fig.xaxis.major_label_policy = NoOverlap(min_distance=10)
        fig.xaxis.axis_label = "d_k (log scale)"
        fig.yaxis.ticker = FixedTicker(ticks=[1, *KEY_STOPS])
        fig.yaxis.formatter = BasicTickFormatter()
        fig.yaxis.axis_label = "effective keys (log scale)"
        fig.title.text_font_size = "13px"
        return fig, span, all_keys

    def _build_widgets(self):
        # Each handle lands on a stop and its label shows the stop. A live page also has
        # number boxes that take any value (e.g. one from the URL), and name the values:
        # Bokeh's slider handle has no accessible name.
        size = {"sizing_mode": "stretch_width", "min_width": 180, "max_width": 340}
        self.d_k_slider = chrome.stop_slider(self, "d_k", D_K_STOPS, "d_k, in powers of two",
                                             **size)
        self.keys_slider = chrome.stop_slider(self, "keys", KEY_STOPS, "number of keys", **size)
        self.widgets = {"d_k": self.d_k_slider, "keys": self.keys_slider}
        if not self.static:
            self.d_k_input = pn.widgets.IntInput.from_param(
                self.param.d_k, label=f"d_k, any value 1–{core.MAX_D_K}", width=170)
            self.keys_input = pn.widgets.IntInput.from_param(
                self.param.keys, label=f"number of keys, 2–{core.MAX_KEYS}", width=170)
            self._controls = [self.d_k_slider, self.d_k_input, self.keys_slider,
                              self.keys_input]
        else:
            self._controls = [self.d_k_slider, self.keys_slider]

    def _build_layout(self):
        controls = pn.FlexBox(*self._controls, align_items="flex-end",
                              sizing_mode="stretch_width")
        own = self.own(
            chrome.heading(registry.title_of(type(self))),
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"))
        return pn.Column(
            *own, self.url_note, controls,
            pn.pane.Markdown(LOOK_FOR, sizing_mode="stretch_width"),
            self.readout,
            pn.pane.Bokeh(self.raw_figure, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.scaled_figure, sizing_mode="stretch_width"),
            pn.pane.Markdown(EFFECTIVE_KEYS, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.curve_figure, sizing_mode="stretch_width"),
            self.curve_note,
            css_classes=["ae-panel"], sizing_mode="stretch_width")


# The default view's mean curve is shared by every session: compute it once, at import.
curve_data(core.DEFAULT_KEYS, mean_draws(core.DEFAULT_KEYS))
