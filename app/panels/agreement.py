"""The dot product as agreement: multiply pair by pair, add, and read the sign of the total.

Two three-number vectors show the products, their sum and the angle between the vectors
(aligned, leaning together, perpendicular, leaning apart or opposed). Then vectors of d = 128
numbers: their raw scores swing to about ±11 and softmax crowns one key; divided by √d they
sit near ±1 and blend.

The panel has the one shape (app/kit/states.py). Its controls are the documents' vectors and a
few more that teach something (a vector twice as long, its opposite, the zero vector), and d
over the powers of two from 1 to 4,096. The state has two parts: the pair of vectors (the
arithmetic, the verdict, the gauge) and d (the 128-number demonstration, the operations). A
live page also takes typed vectors; it computes them with the same part functions.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import (
    Arrow,
    ColumnDataSource,
    FixedTicker,
    Legend,
    LegendItem,
    Range1d,
    VeeHead,
)
from bokeh.plotting import figure

from app.kit import chrome, fmt, model_code, registry, resources
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from app.kit.typed_numbers import parse_numbers, preset_control, preset_list
from attention_core import dot_product
from attention_core.sqrt_dk import effective_count

LENGTH = 3  # numbers per vector
N_KEYS = 8  # keys in the 128-number demonstration
MAX_D = 4096
D_STOPS = tuple(2 ** i for i in range(13))  # d: 1, 2, 4, ..., 4096
# the presets: {the text a URL and the live box carry: what the list shows}
A_PRESETS = {
    "2, -1, 0.5": "(2, −1, 0.5): the chapter's a",
    "1, 0, 0": "(1, 0, 0): along the first axis",
    "4, -2, 1": "(4, −2, 1): the chapter's a, twice as long",
    "0, 0, 0": "(0, 0, 0): the zero vector",
}
B_PRESETS = {
    "3, 4, 2": "(3, 4, 2): the chapter's b",
    "1, 2, 0": "(1, 2, 0)",
    "-3, -4, -2": "(−3, −4, −2): minus the chapter's b",
    "-2, 1, -0.5": "(−2, 1, −0.5): minus the chapter's a",
    "6, 8, 4": "(6, 8, 4): the chapter's b, twice as long",
    "0, 1, 0": "(0, 1, 0): along the second axis",
}
# Okabe-Ito: categories stay apart under every common colour-vision deficiency. Vector a
# is drawn in the theme's strongest ink (black on white, near-white on dark), b in its blue.
BLUE, VERMILLION, GREEN, YELLOW = "#0072B2", "#D55E00", "#009E73", "#F0E442"
LEGEND = {"orientation": "horizontal", "location": "top_left", "label_text_font_size": "12px",
          "padding": 2, "spacing": 8, "margin": 0, "border_line_color": None}
# the gauge's zones are dot_product.agreement's own; a leaning zone is a paler shade of the
# end it leans to
FILLS = {"aligned": (GREEN, 0.34), "leaning together": (GREEN, 0.14),
         "perpendicular": (YELLOW, 0.28), "leaning apart": (VERMILLION, 0.14),
         "opposed": (VERMILLION, 0.34)}
ZONES = tuple((verdict, start, end, *FILLS[verdict])
              for verdict, start, end in dot_product.AGREEMENT_ZONES)
LABELS = {"leaning together": "leaning\ntogether", "leaning apart": "leaning\napart"}


def why(verdict):  # -> the verdict's reason, from its zone's edges
    edges = {v: (f"{start:g}°", f"{end:g}°") for v, start, end in dot_product.AGREEMENT_ZONES}
    start, end = edges[verdict]
    return {
        "aligned": f"the angle is under {end}: they point nearly the same way",
        "leaning together": (f"the angle is {start} to {end}: more with each other than "
                             "against, but far from the same way"),
        "perpendicular": (f"the angle is {start} to {end}, about a right angle: they neither "
                          "agree nor disagree"),
        "leaning apart": (f"the angle is {start} to {end}: more against each other than with, "
                          "but far from opposite"),
        "opposed": f"the angle is over {start}: they point nearly opposite ways",
    }[verdict]


def zone_labels():  # -> each zone's name inside its wedge; the narrow perpendicular
    # wedge's above the gauge, higher than b's label reaches at any angle (its top is about
    # 1.12). A leaning label sits nearer its end of the gauge, clear of b at the documents'
    # 75.9°.
    radius = {"aligned": 0.6, "leaning together": 0.75, "perpendicular": 1.22,
              "leaning apart": 0.75, "opposed": 0.6}
    along = {"leaning together": 0.35, "leaning apart": 0.65}  # of the way from start to end
    x, y, text = [], [], []
    for verdict, start, end, *_fill in ZONES:
        middle = math.radians(start + along.get(verdict, 0.5) * (end - start))
        x.append(round(radius[verdict] * math.cos(middle), 3))
        y.append(round(radius[verdict] * math.sin(middle), 3))
        text.append(LABELS.get(verdict, verdict))
    return {"x": x, "y": y, "text": text}


def vector(v, name="the vector"):  # text or numbers -> tuple of 3 floats (ValueError if not)
    if isinstance(v, str):
        values, error = parse_numbers(v, count=LENGTH, what=name)
        if error:
            raise ValueError(error)
        return values
    return tuple(float(x) + 0.0 for x in v)


@dataclass(frozen=True)
class VectorNumbers:
    """The pair: products, score, angle and verdict."""

    a: tuple
    b: tuple
    products: tuple  # a_i × b_i
    score: float  # a · b
    angle: float  # degrees; nan when a vector is zero
    verdict: str
    norm_a: float
    norm_b: float


@dataclass(frozen=True)
class ScaleNumbers:
    """The d-number demonstration and the operations per dot product."""

    d: int
    demo: dot_product.ScaleDemo
    effective_raw: float
    effective_scaled: float
    operations: int


@dataclass(frozen=True)
class AgreementNumbers(VectorNumbers, ScaleNumbers):
    """Everything the panel shows, for one setting of the controls."""


def vector_numbers(a, b):  # [3], [3] -> VectorNumbers
    a, b = vector(a, "vector a"), vector(b, "vector b")
    return VectorNumbers(
        a=a, b=b, products=tuple(x * y + 0.0 for x, y in zip(a, b)),
        score=dot_product.dot(a, b) + 0.0, angle=dot_product.angle_degrees(a, b),
        verdict=dot_product.agreement(a, b),
        norm_a=float(np.linalg.norm(a)), norm_b=float(np.linalg.norm(b)))


@functools.lru_cache(maxsize=64)
def scale_numbers(d):  # int -> ScaleNumbers (one fixed draw per d, shared by sessions)
    demo = dot_product.scale_demo(d=d, n_keys=N_KEYS)
    return ScaleNumbers(d=d, demo=demo, effective_raw=float(effective_count(demo.weights_raw)),
                        effective_scaled=float(effective_count(demo.weights_scaled)),
                        operations=dot_product.operations(d))


# --- the readouts: templates of empty holes --------------------------------------------------

ARITHMETIC = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div>a = ({hole("a")}), b = ({hole("b")})</div>'
    '<div class="ae-small">multiply pair by pair, then add:</div>'
    f'<div class="ae-eq">a · b = {hole("pairs")}</div>'
    f'<div class="ae-eq">= {hole("terms")} = {hole("score", class_="ae-big")}</div></div>')

VERDICT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div class="ae-if">angle between them: {hole("angle", "b")} (|a| = {hole("norm_a")}, '
    f'|b| = {hole("norm_b")}, cos = a·b ÷ (|a| |b|) = {hole("cos")})</div>'
    f'<div class="ae-if">verdict: {hole("verdict", "b")}: the score is {hole("sign")}; '
    f'{hole("why")}.</div>{hole("zero", "div")}'
    '<div class="ae-small">The gauge draws a along the horizontal and b at that angle, both at '
    'length 1, in the flat plane the two vectors share.</div></div>')

DEMO = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>A query and {N_KEYS} keys of d = {hole("d")} random numbers each (mean 0, variance 1, '
    'one fixed draw). Each score adds up d products of variance 1, so the scores spread with '
    'a standard deviation of about √d.</p><ul class="ae-list">'
    f'<li>raw scores q·k: measured spread <b>±{hole("spread_raw")}</b> (√{hole("d")} ≈ '
    f'{hole("root")}); softmax gives key k{hole("winner")} {hole("winner_weight", "b")}: '
    f'{hole("eff_raw", "b")} effective keys: {hole("raw_says")}</li>'
    f'<li>scaled q·k ÷ √{hole("d")}: spread <b>±{hole("spread_scaled")}</b>; the biggest '
    f'weight is {hole("top_scaled")}: {hole("eff_scaled", "b")} effective keys of {N_KEYS}: '
    f'{hole("scaled_says")}</li></ul>'
    '<p class="ae-small">Effective keys = e^(entropy of the weights): 1 when one key takes '
    f'everything, {N_KEYS} when all share equally. Dividing costs one multiply per score, and '
    'fast kernels fold it into work they already do.</p></div>')

OPS = (
    '<div class="ae-readout" aria-live="polite">'
    f'<b>Operations per dot product: {hole("ops")} at {hole("d")} numbers</b> '
    f'({hole("d")} multiplies and {hole("adds")} adds; a multiply-add counts as 2, '
    f'so 2 × {hole("d")}).</div>')

MESSAGE = ('<div class="ae-msgs" role="status" aria-live="polite">'
           f'{hole("a", "div", class_="ae-msg")}{hole("b", "div", class_="ae-msg")}</div>')


ArithmeticReadout = readout_class("ArithmeticReadout", ARITHMETIC, module=__name__)
VerdictReadout = readout_class("VerdictReadout", VERDICT, module=__name__)
DemoReadout = readout_class("DemoReadout", DEMO, module=__name__)
OpsReadout = readout_class("OpsReadout", OPS, module=__name__)
MessageReadout = readout_class("MessageReadout", MESSAGE, module=__name__)


# --- the state: two parts, each a pure function of some of the controls ----------------------

def vectors_state(a, b):  # the pair (texts or numbers) -> {target: value}
    nums = vector_numbers(a, b)
    ok = not math.isnan(nums.angle)
    theta = math.radians(nums.angle) if ok else 0.0
    bx, by = math.cos(theta), math.sin(theta)
    return {
        "holes:arithmetic": arithmetic_values(nums),
        "holes:verdict": verdict_values(nums),
        "source:gauge": {"x": [1.02, bx * 1.02], "y": [0.0, by * 1.02],
                         "label": ["a", "b"] if ok else ["", ""]},
        "source:arc": {"end": [theta]},
        "prop:arrow_a.visible": bool(nums.norm_a),
        "prop:arrow_b.x_end": bx,
        "prop:arrow_b.y_end": by,
        "prop:arrow_b.visible": ok,  # with a zero vector there is no angle to draw b at
    }


def score_ticks(reach):  # -> (values, texts): round scores, at most 2-3 either side of 0
    step = 10 ** math.floor(math.log10(reach / 2))
    step *= next((m for m in (1, 2, 5, 10) if reach / (step * m) <= 3), 10)
    decimals = max(0, -math.floor(math.log10(step)))
    values = [k * step for k in range(-int(reach // step), int(reach // step) + 1)]
    return values, [f"{v:.{decimals}f}".replace("-", "−") for v in values]


def scale_state(d):  # d -> {target: value}: the d-number demonstration and the operations
    # The scores' chart keeps its axes for every d: bar heights are scores over the reach
    # (the largest score, with room), and the score axis's numbers are drawn with the bars,
    # so a change of d redraws the bars and numbers alone (docs/REPAINT.md).
    nums = scale_numbers(d)
    demo = nums.demo
    reach = float(np.abs(np.concatenate([demo.raw, demo.scaled])).max()) * 1.15 or 1.0
    ticks, texts = score_ticks(reach)
    return {
        "source:demo": {"raw": demo.raw.tolist(), "scaled": demo.scaled.tolist(),
                        "raw_h": [round(float(v) / reach, 6) for v in demo.raw],
                        "scaled_h": [round(float(v) / reach, 6) for v in demo.scaled],
                        "w_raw": demo.weights_raw.tolist(),
                        "w_scaled": demo.weights_scaled.tolist()},
        "source:score_ticks": {"y": [round(t / reach, 6) for t in ticks], "text": texts},
        "holes:demo": demo_values(nums),
        "holes:ops": {"ops": fmt.count(nums.operations), "d": fmt.count(d),
                      "adds": fmt.count(d - 1)},
    }


def arithmetic_values(nums):  # -> {hole: text}: the products and their sum
    terms = fmt.sig_figures(nums.products[0])
    for p in nums.products[1:]:
        terms += f" − {fmt.sig_figures(-p)}" if p < 0 else f" + {fmt.sig_figures(p)}"
    return {
        "a": ", ".join(fmt.sig_figures(x) for x in nums.a),
        "b": ", ".join(fmt.sig_figures(x) for x in nums.b),
        "pairs": " + ".join(f"{fmt.bracket_negative(x)} × {fmt.bracket_negative(y)}"
                            for x, y in zip(nums.a, nums.b)),
        "terms": terms, "score": fmt.sig_figures(nums.score),
    }


def verdict_values(nums):  # -> {hole: text}: the angle and the verdict, or why there is none
    if math.isnan(nums.angle):
        return {"angle": "", "norm_a": "", "norm_b": "", "cos": "", "verdict": "", "sign": "",
                "why": "",
                "zero": "One vector is all zeros: it points nowhere, so there is no angle, and "
                        "its score with anything is 0."}
    cos = nums.score / (nums.norm_a * nums.norm_b)
    return {
        "angle": f"{nums.angle:.1f}°", "norm_a": fmt.sig_figures(nums.norm_a, 3),
        "norm_b": fmt.sig_figures(nums.norm_b, 3), "cos": fmt.sig_figures(cos, 3),
        "verdict": nums.verdict,
        "sign": "positive" if nums.score > 0 else "negative" if nums.score < 0 else "zero",
        "why": why(nums.verdict), "zero": "",
    }


def demo_values(nums):  # -> {hole: text}: raw against scaled scores, and their weights
    demo, d = nums.demo, nums.d
    winner = int(np.argmax(demo.weights_raw))

    def says(effective):  # does the softmax pick one key or blend several?
        return "it picks one" if effective < 1.5 else "it blends"

    return {
        "d": fmt.count(d), "spread_raw": f"{demo.spread_raw:.1f}", "root": f"{math.sqrt(d):.1f}",
        "winner": str(winner), "winner_weight": f"{demo.weights_raw[winner]:.0%}",
        "eff_raw": f"{nums.effective_raw:.2f}", "raw_says": says(nums.effective_raw),
        "spread_scaled": f"{demo.spread_scaled:.2f}",
        "top_scaled": f"{demo.weights_scaled.max():.0%}",
        "eff_scaled": f"{nums.effective_scaled:.2f}", "scaled_says": says(nums.effective_scaled),
    }


def message_values(errors, good):  # live: {a, b: what is wrong with the typed vector, or ""}
    return {k: (f"{errors[k]}; still using {k} = ({', '.join(fmt.sig_figures(x) for x in good[k])})"
                if k in errors else "") for k in ("a", "b")}


STYLE = resources.stylesheet("agreement.css")


class AgreementPanel(StatePanel):
    """The dot product as an agreement score, and what 128 numbers do to its size."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    a = param.String(default="2, -1, 0.5", label="vector a",
                     doc="three numbers separated by commas")
    b = param.String(default="3, 4, 2", label="vector b",
                     doc="three numbers separated by commas")
    d = param.Integer(default=128, bounds=(1, MAX_D), label="d (numbers per vector)",
                      doc="length of the query and key vectors in the demonstration")

    url_keys = ("a", "b", "d")

    @classmethod
    def controls(cls):
        return [preset_control("a", A_PRESETS), preset_control("b", B_PRESETS),
                Control("d", D_STOPS, "value", tuple(range(len(D_STOPS))), "number")]

    @classmethod
    def parts(cls):
        return [Part(("a", "b"), vectors_state), Part(("d",), scale_state)]

    def __init__(self, **params):
        self._ink = ink()
        self._good = {"a": vector("2, -1, 0.5"), "b": vector("3, 4, 2")}
        self._errors = {}
        super().__init__(**params)

    # --- the numbers --------------------------------------------------------------------

    def current_state(self):
        # a live page also takes typed vectors: one that does not parse leaves the last good
        # vector in force, and the message says so
        for name in ("a", "b"):
            values, error = parse_numbers(getattr(self, name), count=LENGTH,
                                          what=f"vector {name}")
            if error:
                self._errors[name] = error
            else:
                self._errors.pop(name, None)
                self._good[name] = values
        state = self.state(a=self._good["a"], b=self._good["b"], d=self.d)
        state["holes:message"] = message_values(self._errors, self._good)
        return state

    def numbers(self):  # -> AgreementNumbers of the vectors in force and d
        v, s = vector_numbers(self._good["a"], self._good["b"]), scale_numbers(self.d)
        return AgreementNumbers(**{f: getattr(v, f) for f in VectorNumbers.__dataclass_fields__},
                                **{f: getattr(s, f) for f in ScaleNumbers.__dataclass_fields__})

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self._build_widgets()
        self._build_figures()
        self._build_readouts(state)
        self.widgets = {"a": self._a_pick, "b": self._b_pick, "d": self._d_w}
        self.targets = {
            "holes:arithmetic": self._arithmetic, "holes:verdict": self._verdict,
            "source:gauge": self.gauge_source, "source:arc": self.arc_source,
            "prop:arrow_a.visible": self.arrow_a, "prop:arrow_b.x_end": self.arrow_b,
            "prop:arrow_b.y_end": self.arrow_b, "prop:arrow_b.visible": self.arrow_b,
            "source:demo": self.demo_source, "source:score_ticks": self.score_tick_source,
            "holes:demo": self._demo, "holes:ops": self._ops, "holes:message": self._message,
        }
        return self._layout

    def _build_widgets(self):
        static = self.static
        self._a_pick, self._b_pick = (
            preset_list(self, name, presets, static=static, label=f"vector {name}",
                        typed_label="your own (typed below)", sizing_mode="stretch_width",
                        min_width=150, max_width=320)
            for name, presets in (("a", A_PRESETS), ("b", B_PRESETS)))
        picks = [self._a_pick, self._b_pick]
        if static:  # typing needs Python: the live page takes it
            route = registry.route_of(type(self))
            typed = [chrome.live_button(route, "Type your own vectors (live explorable)")]
        else:
            typed = [pn.widgets.TextInput.from_param(
                self.param[name], label=f"vector {name} (3 numbers, commas between)",
                max_length=100, sizing_mode="stretch_width", min_width=150, max_width=260)
                for name in ("a", "b")]
            self._a_w, self._b_w = typed
        self._inputs = pn.FlexBox(*picks, *typed, align_items="flex-end",
                                  sizing_mode="stretch_width")
        self._d_w = chrome.power_of_two_slider(self, "d", "d (numbers per vector)", MAX_D,
                                               width=260, margin=(4, 10))
        # the slider holds the exponent; its readout shows the power of two
        self._d_w.format = model_code.tick_formatter("powerOfTwoTick")
        self._d_w.show_value = True

    def _build_figures(self):
        # the gauge: a lies along the horizontal, b at the true angle between them (the two
        # vectors span a plane; this is that plane), both drawn at unit length
        paint = self._ink
        self.gauge_source = ColumnDataSource({"x": [1.02, 0.0], "y": [0.0, 1.02],
                                              "label": ["a", "b"],
                                              "color": [paint.strong, paint.cool]})
        self.arc_source = ColumnDataSource({"end": [0.0]})
        g = figure(width=300, height=200, tools="", toolbar_location=None,  # 1:1 units
                   x_range=Range1d(-1.2, 1.2), y_range=Range1d(-0.22, 1.3),
                   min_border=4, outline_line_color=None)
        for _verdict, start, end, colour, alpha in ZONES:
            g.annular_wedge(0, 0, inner_radius=0.0, outer_radius=1.0, start_angle=start,
                            end_angle=end, start_angle_units="deg", end_angle_units="deg",
                            fill_color=colour, fill_alpha=alpha, line_color=paint.paper)
        zone_text = zone_labels()
        g.text("x", "y", text="text", source=ColumnDataSource(zone_text), text_align="center",
               text_baseline="middle", text_font_size="12px", text_color=paint.text)
        g.arc(0, 0, radius=0.24, start_angle=0.0, end_angle="end", source=self.arc_source,
              direction="anticlock", line_color=paint.strong, line_width=1.5)
        self.arrow_a = Arrow(end=VeeHead(size=9, fill_color=paint.strong,
                                         line_color=paint.strong),
                             x_start=0, y_start=0, x_end=1, y_end=0, line_color=paint.strong,
                             line_width=3)
        self.arrow_b = Arrow(end=VeeHead(size=9, fill_color=paint.cool, line_color=paint.cool),
                             x_start=0, y_start=0, x_end=0, y_end=1, line_color=paint.cool,
                             line_width=3)
        g.add_layout(self.arrow_a)
        g.add_layout(self.arrow_b)
        g.text("x", "y", text="label", source=self.gauge_source, text_color="color",
               text_font_size="13px", text_font_style="bold", x_offset=4, y_offset=-4)
        g.axis.visible = False
        g.grid.visible = False
        self.gauge = g

        # raw against scaled scores, and their softmax weights; the keys' places never change
        keys = list(range(N_KEYS))
        self.demo_source = ColumnDataSource({
            "x": keys, "x_raw": [k - 0.2 for k in keys], "x_scaled": [k + 0.2 for k in keys],
            **{name: [0.0] * N_KEYS
               for name in ("raw", "scaled", "raw_h", "scaled_h", "w_raw", "w_scaled")}})
        self.score_tick_source = ColumnDataSource({"y": [], "text": []})
        common = {"height": 220, "sizing_mode": "stretch_width", "tools": "",
                  "toolbar_location": None, "x_range": Range1d(-0.6, N_KEYS - 0.4),
                  "min_border_left": 4, "min_border_right": 8, "outline_line_color": None}
        s = figure(y_range=Range1d(-1, 1), **{**common, "min_border_left": 40})
        raw_r = s.vbar("x_raw", 0.38, "raw_h", source=self.demo_source, fill_color=VERMILLION,
                       line_color=None)
        scaled_r = s.vbar("x_scaled", 0.38, "scaled_h", source=self.demo_source,
                          fill_color=BLUE, line_color=None)
        # the score axis's ticks and numbers, drawn with the bars (their places change with d)
        left = common["x_range"].start
        s.scatter(left, "y", source=self.score_tick_source, marker="dash", size=7,
                  line_color=self._ink.text, angle=0)
        s.text(left, "y", text="text", source=self.score_tick_source, x_offset=-6,
               text_align="right", text_baseline="middle", text_font_size="12px",
               text_color=self._ink.text)
        s.yaxis.ticker = FixedTicker(ticks=[])
        s.yaxis.axis_label_standoff = 30
        s.add_layout(Legend(items=[LegendItem(label="raw q·k", renderers=[raw_r]),
                                   LegendItem(label="q·k ÷ √d", renderers=[scaled_r])],
                            **LEGEND), "above")
        s.yaxis.axis_label = "score"
        w = figure(y_range=Range1d(0, 1.08), **common)
        w_raw = w.vbar("x_raw", 0.38, "w_raw", source=self.demo_source, fill_color=VERMILLION,
                       line_color=None)
        w_scaled = w.vbar("x_scaled", 0.38, "w_scaled", source=self.demo_source,
                          fill_color=BLUE, line_color=None)
        w.add_layout(Legend(items=[LegendItem(label="softmax(raw)", renderers=[w_raw]),
                                   LegendItem(label="softmax(scaled)", renderers=[w_scaled])],
                            **LEGEND), "above")
        w.yaxis.axis_label = "weight"
        for fig in (s, w):
            fig.xaxis.ticker = FixedTicker(ticks=keys)
            fig.xaxis.major_label_overrides = {i: f"k{i}" for i in keys}
            fig.xaxis.axis_label = "key"
            chrome.quiet_axes(fig, tick_labels=True)
            fig.xgrid.visible = False
        self.scores_figure, self.weights_figure = s, w
        self._gauge_pane = pn.pane.Bokeh(g, width=300, height=185, margin=(4, 10))
        self._scores_pane = pn.pane.Bokeh(s, height=220, sizing_mode="stretch_width",
                                          min_width=240)
        self._weights_pane = pn.pane.Bokeh(w, height=220, sizing_mode="stretch_width",
                                           min_width=240)

    def _build_readouts(self, state):
        self._message = self.new_readout(MessageReadout, {"a": "", "b": ""})
        self._arithmetic = self.new_readout(ArithmeticReadout, state["holes:arithmetic"])
        self._verdict = self.new_readout(VerdictReadout, state["holes:verdict"])
        self._demo = self.new_readout(DemoReadout, state["holes:demo"])
        self._ops = self.new_readout(OpsReadout, state["holes:ops"])
        arithmetic = pn.Column(self._arithmetic, self._verdict, sizing_mode="stretch_width",
                               styles={"flex": "1 1 300px", "min-width": "0",
                                       "max-width": "640px"})
        pair = pn.FlexBox(arithmetic, self._gauge_pane, sizing_mode="stretch_width")
        charts = pn.FlexBox(
            pn.Column(self._scores_pane, sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            pn.Column(self._weights_pane, sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            sizing_mode="stretch_width")
        heading = self.own(
            chrome.heading(registry.title_of(type(self))))
        self._layout = pn.Column(
            *heading, self.url_note, self._inputs, self._message, pair,
            chrome.heading("Why divide by √d", 1, titled=not self.in_chapter),
            self._d_w, self._demo, charts, self._ops,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])
