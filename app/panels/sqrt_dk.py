"""The √d_k sweep: why attention divides its scores by √d_k.

A dot product of d_k unit-variance products has a spread of √d_k, so without the divisor
the softmax sharpens onto one key as the head widens; with it, how sharply the head
attends no longer depends on d_k. The learner drags d_k and watches the two rows part.
"""

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

from app import chrome
from app.model_picker import ink
from attention_core import sqrt_dk as core

# Okabe-Ito: unscaled in warm colours, scaled in cool ones; dash styles carry the same split.
# The line at the chosen d_k is the theme's grey (ink().rule).
VERMILLION, ORANGE, BLUE, GREEN = "#D55E00", "#E69F00", "#0072B2", "#009E73"

# d_k = 1..1024 in eighth-octave steps; every power of two is on it, so 4, 16, 128, 512 are.
CURVE_D_KS = tuple(int(d) for d in np.unique(np.round(2.0 ** (np.arange(81) / 8))))
MAX_EXPONENT = int(math.log2(core.MAX_D_K))

# The mean curve costs about 15 µs per (draw, key) here; 1200 of them keep a change of the
# number of keys near 20 ms even before the cache has it. Fewer keys afford more draws.
MEAN_WORK = 1200
MAX_MEAN_DRAWS = 200
MIN_MEAN_DRAWS = 4


def mean_draws(keys):  # int -> how many fresh draws the mean curve averages over
    return int(min(MAX_MEAN_DRAWS, max(MIN_MEAN_DRAWS, MEAN_WORK // keys)))


def curve_data(keys, draws):  # -> columns over CURVE_D_KS: this draw and the mean, both rows
    draw_raw, draw_scaled = core.effective_curve(CURVE_D_KS, keys)
    mean = core.expectation(CURVE_D_KS, keys, draws)
    return {"d_k": list(CURVE_D_KS), "draw_raw": draw_raw, "draw_scaled": draw_scaled,
            "mean_raw": mean.effective_raw, "mean_scaled": mean.effective_scaled}


def bar_data(point):  # SweepPoint -> one row per key, both softmaxes of the same scores
    n = point.raw_scores.size
    return {"key": np.arange(1, n + 1), "raw": point.raw_scores, "scaled": point.scaled_scores,
            "w_raw": point.weights_raw, "w_scaled": point.weights_scaled}


def swing_text(d_k):  # int -> HTML: the ±3σ swing and the ratio of exponentials across it
    swing = core.three_sigma_range(d_k)
    power = core.exp_ratio_log10(d_k)
    ratio = f"{10 ** power:,.0f}" if power < 6 else f"10<sup>{power:.0f}</sup>"
    return (f"Three standard deviations either side, raw scores at d_k = {d_k} swing about "
            f"±{swing:.0f}, so across that range the largest e<sup>score</sup> is "
            f"e<sup>6√d_k</sup> = e<sup>{2 * swing:.0f}</sup> ≈ {ratio} times the smallest.")


def readout_html(point):  # SweepPoint -> HTML of the readouts (numbers only, nothing user-typed)
    n = point.raw_scores.size
    return (
        '<div class="ae-readout" aria-live="polite">'
        f"<p><b>Without the divisor</b>: <b>{point.effective_raw:.2f}</b> effective keys of {n}."
        f"<br><b>Divided by √d_k</b>: <b>{point.effective_scaled:.2f}</b> effective keys of {n}."
        "</p>"
        f"<p>Measured spread of the raw scores: <b>{point.spread:.2f}</b> against "
        f"√{point.d_k} = <b>{point.sqrt_d_k:.2f}</b>.</p>"
        f"<p>{swing_text(point.d_k)}</p>"
        "</div>")


def curve_note_html(d_k, keys, draws):
    return ('<div class="ae-readout" aria-live="polite"><p>Effective keys for every d_k from 1 '
            f"to {core.MAX_D_K} with {keys} keys (log axis); raw means without the divisor. "
            "Solid and dotted lines: the one draw shown above. Dashed and dash-dot lines: the "
            f"mean over {draws} fresh draws. "
            f"The markers and the grey line sit at d_k = {d_k}.</p></div>")


INTRO = (
    "A query and a set of keys whose components are each drawn on their own, mean 0 and "
    "variance 1, from one fixed random seed. A head of width d_k uses the first d_k "
    "components of every vector, so moving d_k changes only how many products each dot "
    "product adds up. Both rows of bars softmax the very same dot products; the second "
    "divides them by √d_k first.")

LOOK_FOR = (
    "**What to look for:** push d_k up and the top row piles nearly all its weight onto a "
    "single key, while the divided row looks much the same at every d_k. The spread of the "
    "raw scores grows like √d_k, and the divisor cancels exactly that.")

EFFECTIVE_KEYS = (
    "*Effective keys* is e raised to the entropy of the weights: 1 when one key takes "
    "everything, the number of keys when all share equally. The measured spread is the "
    "standard deviation of this one draw's raw scores; with a few keys it is a rough "
    "estimate, so expect it to land a few percent off √d_k.")


def _bar_figure(source, column, title, colour):
    fig = figure(title=title, height=170, sizing_mode="stretch_width", min_width=200,
                 x_range=Range1d(0.5, core.DEFAULT_KEYS + 0.5), y_range=Range1d(0, 1.02),
                 tools="", toolbar_location=None)
    fig.vbar(x="key", top=column, width=0.8, source=source, fill_color=colour,
             line_color=colour)
    fig.add_tools(HoverTool(tooltips=[("key", "@key"), ("raw score q·k", "@raw{0.00}"),
                                      ("score / √d_k", "@scaled{0.00}"),
                                      ("weight", f"@{column}{{0.000}}")]))
    fig.xaxis.axis_label = "key"
    fig.yaxis.axis_label = "weight"
    fig.xgrid.grid_line_color = None
    fig.title.text_font_size = "13px"
    return fig


class SqrtDkPanel(pn.viewable.Viewer):
    """Softmax of the same random scores with and without the √d_k divisor, swept over d_k."""

    d_k = param.Integer(default=128, bounds=(1, core.MAX_D_K), label="d_k", doc="""
        Head width: how many components each dot product sums over.""")
    keys = param.Integer(default=core.DEFAULT_KEYS, bounds=(2, core.MAX_KEYS),
                         label="number of keys", doc="How many keys the query is scored against.")

    url_keys = ("d_k", "keys")

    def __init__(self, mean_draws=None, in_article=False, **params):
        # mean_draws: fix the mean curve's number of draws (tests); None = budget by keys.
        # in_article: the article's section heading and prose already say what the panel's
        # own heading and introduction say, so leave those out there.
        self._fixed_draws = mean_draws
        self.in_article = in_article
        self._syncing = False
        self._curve_keys = None
        super().__init__(**params)
        self.bar_source = ColumnDataSource(bar_data(core.sweep_point(self.d_k, self.keys)))
        self.curve_source = ColumnDataSource({k: [] for k in ("d_k", "draw_raw", "draw_scaled",
                                                               "mean_raw", "mean_scaled")})
        self.marker_source = ColumnDataSource({"d_k": [], "raw": [], "scaled": []})
        self.raw_figure = _bar_figure(self.bar_source, "w_raw",
                                      "Without the divisor: softmax(q·k)", VERMILLION)
        self.scaled_figure = _bar_figure(self.bar_source, "w_scaled",
                                         "Divided: softmax(q·k / √d_k)", BLUE)
        self.scaled_figure.x_range = self.raw_figure.x_range
        self.curve_figure, self.marker_span = self._curve_figure()
        self.readout = pn.pane.HTML("", sizing_mode="stretch_width")
        self.curve_note = pn.pane.HTML("", sizing_mode="stretch_width")
        self._build_widgets()
        self._update()
        self.param.watch(self._update, ["d_k", "keys"])
        self._layout = self._build_layout()

    # ---- the numbers: pure in the parameters ----
    def draws(self):  # -> how many draws the mean curve averages over at the current keys
        return self._fixed_draws or mean_draws(self.keys)

    def numbers(self):  # -> everything shown, for the current d_k and keys
        point = core.sweep_point(self.d_k, self.keys)
        return {"point": point, "bars": bar_data(point), "readout": readout_html(point),
                "marker": {"d_k": [point.d_k], "raw": [point.effective_raw],
                           "scaled": [point.effective_scaled]},
                "curve_note": curve_note_html(self.d_k, self.keys, self.draws())}

    # ---- writing them into the figures and panes ----
    def _update(self, *events):
        out = self.numbers()
        with pn.io.hold():  # one message to the browser per interaction, not one per change
            self.readout.object = out["readout"]
            self.curve_note.object = out["curve_note"]
            if self._curve_keys != self.keys:  # the curves depend on keys only, not on d_k
                self.curve_source.data = curve_data(self.keys, self.draws())
                self._curve_keys = self.keys
                self.raw_figure.x_range.update(start=0.5, end=self.keys + 0.5)
                self.curve_figure.y_range.update(start=0, end=self.keys * 1.05)
            self.bar_source.data = out["bars"]
            self.marker_source.data = out["marker"]
            self.marker_span.location = self.d_k
            self._sync_widgets()

    def _curve_figure(self):
        fig = figure(title="Effective keys as the head widens", height=360,
                     sizing_mode="stretch_width", min_width=200, x_axis_type="log",
                     x_range=Range1d(0.88, core.MAX_D_K * 1.14),  # room for the markers
                     y_range=Range1d(0, self.keys * 1.05), tools="", toolbar_location=None)
        styles = [("draw_raw", "raw, this draw", VERMILLION, "solid"),
                  ("mean_raw", "raw, mean", ORANGE, "dashed"),
                  ("draw_scaled", "÷√d_k, this draw", BLUE, "dotted"),
                  ("mean_scaled", "÷√d_k, mean", GREEN, "dashdot")]
        items = []
        for column, label, colour, dash in styles:
            line = fig.line("d_k", column, source=self.curve_source, line_color=colour,
                            line_dash=dash, line_width=2.5)
            items.append(LegendItem(label=label, renderers=[line]))
        span = Span(location=self.d_k, dimension="height", line_color=ink().rule,
                    line_dash="dotted", line_width=1.5)
        fig.add_layout(span)
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
        fig.xaxis.ticker = FixedTicker(ticks=[2 ** e for e in range(MAX_EXPONENT + 1)])
        fig.xaxis.formatter = BasicTickFormatter()
        fig.xaxis.major_label_policy = NoOverlap(min_distance=10)
        fig.xaxis.axis_label = "d_k (log scale)"
        fig.yaxis.axis_label = "effective keys"
        fig.title.text_font_size = "13px"
        return fig, span

    # ---- controls ----
    def _build_widgets(self):
        # The handle moves over log2 exponents, so its own value is not d_k: it is hidden, and
        # the input beside it shows the exact d_k and takes any value (e.g. one from the URL).
        self.d_k_slider = pn.widgets.IntSlider(
            label="d_k, in powers of two", start=0, end=MAX_EXPONENT, show_value=False,
            value=self._exponent(), sizing_mode="stretch_width", min_width=180, max_width=340)
        self.d_k_input = pn.widgets.IntInput.from_param(
            self.param.d_k, label=f"d_k, any value 1–{core.MAX_D_K}", width=170)
        self.keys_slider = pn.widgets.IntSlider(
            label="number of keys", start=2, end=core.MAX_KEYS, value=self.keys,
            sizing_mode="stretch_width", min_width=180, max_width=340)
        # Bokeh's slider handle has no accessible name; this input names the same value.
        self.keys_input = pn.widgets.IntInput.from_param(
            self.param.keys, label=f"number of keys, 2–{core.MAX_KEYS}", width=170)
        self.d_k_slider.param.watch(self._on_exponent, "value")
        # Changing keys recomputes the curves: act when the handle is let go, not per step.
        self.keys_slider.param.watch(self._on_keys, "value_throttled")

    def _exponent(self):
        return round(math.log2(self.d_k))

    def _on_exponent(self, event):
        if not self._syncing:
            self.d_k = 2 ** event.new

    def _on_keys(self, event):
        self.keys = event.new

    def _sync_widgets(self):
        self._syncing = True
        try:
            self.d_k_slider.value = self._exponent()
            self.keys_slider.value = self.keys
        finally:
            self._syncing = False

    def __panel__(self):
        return self._layout

    def _build_layout(self):
        controls = pn.FlexBox(self.d_k_slider, self.d_k_input, self.keys_slider, self.keys_input,
                              align_items="flex-end", sizing_mode="stretch_width")
        own = [] if self.in_article else [
            pn.pane.Markdown("## The √d_k sweep", sizing_mode="stretch_width"),
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width")]
        return pn.Column(
            *own, controls,
            pn.pane.Markdown(LOOK_FOR, sizing_mode="stretch_width"),
            self.readout,
            pn.pane.Bokeh(self.raw_figure, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.scaled_figure, sizing_mode="stretch_width"),
            pn.pane.Markdown(EFFECTIVE_KEYS, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.curve_figure, sizing_mode="stretch_width"),
            self.curve_note,
            css_classes=["ae-panel"], sizing_mode="stretch_width")


def page():
    return chrome.single_page(SqrtDkPanel(), "The √d_k sweep")


# The default view's mean curve is shared by every session: compute it once, at import.
curve_data(core.DEFAULT_KEYS, mean_draws(core.DEFAULT_KEYS))
