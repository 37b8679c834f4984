"""The dot product as agreement: multiply pair by pair, add, and read the sign of the total.

Two three-number vectors show the products, their sum and the angle between the vectors
(aligned, perpendicular or opposed). Then vectors of d = 128 numbers: their raw scores
swing to about ±11 and softmax crowns one key; divided by √d they sit near ±1 and blend.
"""

import html
import math
import re
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import Arrow, ColumnDataSource, FixedTicker, Legend, LegendItem, Range1d, VeeHead
from bokeh.plotting import figure

from app import chrome
from app.model_picker import ink
from attention_core import dot_product
from attention_core.sqrt_dk import effective_count

LENGTH = 3  # numbers per editable vector
LIMIT = 1e6  # largest magnitude accepted in a typed number
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
N_KEYS = 8  # keys in the 128-number demonstration
MAX_D = 4096
# Okabe-Ito: categories stay apart under every common colour-vision deficiency. Vector a
# is drawn in the theme's strongest ink (black on white, near-white on dark), b in its blue.
BLUE, VERMILLION, GREEN, YELLOW, ORANGE = "#0072B2", "#D55E00", "#009E73", "#F0E442", "#E69F00"
LEGEND = {"orientation": "horizontal", "location": "top_left", "label_text_font_size": "11px",
          "padding": 2, "spacing": 8, "margin": 0, "border_line_color": None}
ZONES = (  # verdict, start°, end°, fill: dot_product.agreement calls 80°-100° perpendicular
    ("aligned", 0, 80, GREEN),
    ("perpendicular", 80, 100, YELLOW),
    ("opposed", 100, 180, VERMILLION),
)


def fmt(x, digits=6):  # float -> shortest readable text, with a real minus sign
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa} × 10^{int(exponent)}"
    return text.replace("-", "−")


def factor(x):  # a factor inside a product: negatives in brackets, "(−1) × 4"
    return f"({fmt(x)})" if x < 0 else fmt(x)


def parse_numbers(text, *, count=None, max_count=None, limit=LIMIT, what="the list"):
    # str -> (tuple of floats, None) or (None, message): comma-separated finite numbers
    text = str(text).replace("−", "-").strip()
    if not text:
        return None, f"{what} is empty; type numbers separated by commas"
    items = [item.strip() for item in text.split(",")]
    values = []
    for i, item in enumerate(items, start=1):
        if not item:
            return None, f"entry {i} of {what} is empty"
        if not NUMBER.match(item):  # plain decimals only: no nan, inf, 1_000 or 0x1p3
            shown = item if len(item) <= 12 else item[:12] + "…"
            return None, f"“{shown}” (entry {i} of {what}) is not a number"
        value = float(item)
        if not math.isfinite(value):
            return None, f"entry {i} of {what} is not a finite number"
        if abs(value) > limit:
            return None, f"entry {i} of {what} is beyond ±{fmt(limit)}"
        values.append(value + 0.0)  # −0.0 -> 0.0
    if count is not None and len(values) != count:
        return None, f"{what} needs exactly {count} numbers, got {len(values)}"
    if max_count is not None and len(values) > max_count:
        return None, f"{what} takes at most {max_count} numbers, got {len(values)}"
    return tuple(values), None


@dataclass(frozen=True)
class AgreementNumbers:
    """Everything the panel shows, for one setting of the controls."""

    a: tuple
    b: tuple
    products: tuple  # a_i × b_i
    score: float  # a · b
    angle: float  # degrees; nan when a vector is zero
    verdict: str
    norm_a: float
    norm_b: float
    d: int
    demo: dot_product.ScaleDemo
    effective_raw: float
    effective_scaled: float
    operations: int


class AgreementPanel(pn.viewable.Viewer):
    """The dot product as an agreement score, and what 128 numbers do to its size."""

    a = param.String(default="2, -1, 0.5", label="vector a",
                     doc="three numbers separated by commas")
    b = param.String(default="3, 4, 2", label="vector b",
                     doc="three numbers separated by commas")
    d = param.Integer(default=128, bounds=(1, MAX_D), label="d (numbers per vector)",
                      doc="length of the query and key vectors in the demonstration")

    url_keys = ("a", "b", "d")

    def __init__(self, in_article=False, **params):
        # in_article: the chapter's section heading stands above, so leave out the panel's own
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self._good = {"a": (2.0, -1.0, 0.5), "b": (3.0, 4.0, 2.0)}
        self._errors = {}
        self._read_vectors()
        self._build_widgets()
        self._build_figures()
        self._build_readouts()
        self._update()
        self.param.watch(self._on_change, list(self.url_keys))

    # --- the numbers --------------------------------------------------------------------

    def _read_vectors(self):  # parse a and b; keep the last good value of each on bad input
        for name in ("a", "b"):
            values, error = parse_numbers(getattr(self, name), count=LENGTH,
                                          what=f"vector {name}")
            if error:
                self._errors[name] = error
            else:
                self._errors.pop(name, None)
                self._good[name] = values

    def numbers(self):  # pure: the last good vectors and d -> AgreementNumbers
        a, b = self._good["a"], self._good["b"]
        demo = dot_product.scale_demo(d=self.d, n_keys=N_KEYS)
        return AgreementNumbers(
            a=a, b=b, products=tuple(x * y + 0.0 for x, y in zip(a, b)),
            score=dot_product.dot(a, b), angle=dot_product.angle_degrees(a, b),
            verdict=dot_product.agreement(a, b),
            norm_a=float(np.linalg.norm(a)), norm_b=float(np.linalg.norm(b)), d=self.d,
            demo=demo, effective_raw=float(effective_count(demo.weights_raw)),
            effective_scaled=float(effective_count(demo.weights_scaled)),
            operations=dot_product.operations(self.d))

    # --- building, once -----------------------------------------------------------------

    def _build_widgets(self):
        self._a_w = pn.widgets.TextInput.from_param(
            self.param.a, name="vector a (3 numbers, commas between)", max_length=100,
            sizing_mode="stretch_width", min_width=150, max_width=260)
        self._b_w = pn.widgets.TextInput.from_param(
            self.param.b, name="vector b (3 numbers, commas between)", max_length=100,
            sizing_mode="stretch_width", min_width=150, max_width=260)
        self._d_w = pn.widgets.IntInput.from_param(
            self.param.d, start=1, end=MAX_D, width=190)

    def _build_figures(self):
        # the gauge: a lies along the horizontal, b at the true angle between them (the two
        # vectors span a plane; this is that plane), both drawn at unit length
        paint = self._ink
        self.gauge_source = ColumnDataSource({"x": [1.0, 0.0], "y": [0.0, 0.0],
                                              "label": ["a", "b"],
                                              "color": [paint.strong, paint.cool]})
        self.arc_source = ColumnDataSource({"end": [0.0]})
        g = figure(width=300, height=185, tools="", toolbar_location=None,
                   x_range=Range1d(-1.2, 1.2), y_range=Range1d(-0.22, 1.18),
                   min_border=4, outline_line_color=None)
        for verdict, start, end, colour in ZONES:
            g.annular_wedge(0, 0, inner_radius=0.0, outer_radius=1.0, start_angle=start,
                            end_angle=end, start_angle_units="deg", end_angle_units="deg",
                            fill_color=colour, fill_alpha=0.28, line_color=paint.paper)
        zone_text = {"x": [0.52, 0.0, -0.58], "y": [0.2, 1.05, 0.2],
                     "text": ["aligned", "perpendicular", "opposed"]}
        g.text("x", "y", text="text", source=ColumnDataSource(zone_text), text_align="center",
               text_baseline="middle", text_font_size="11px", text_color=paint.text)
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

        # raw against scaled scores, and their softmax weights
        self.demo_source = ColumnDataSource({name: [] for name in (
            "x", "x_raw", "x_scaled", "raw", "scaled", "w_raw", "w_scaled")})
        common = {"height": 220, "sizing_mode": "stretch_width", "tools": "",
                  "toolbar_location": None, "x_range": Range1d(-0.6, N_KEYS - 0.4),
                  "min_border_left": 4, "min_border_right": 8, "outline_line_color": None}
        s = figure(y_range=Range1d(-25, 25), **common)
        raw_r = s.vbar("x_raw", 0.38, "raw", source=self.demo_source, fill_color=VERMILLION,
                       line_color=None)
        scaled_r = s.vbar("x_scaled", 0.38, "scaled", source=self.demo_source,
                          fill_color=BLUE, line_color=None)
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
            fig.xaxis.ticker = FixedTicker(ticks=list(range(N_KEYS)))
            fig.xaxis.major_label_overrides = {i: f"k{i}" for i in range(N_KEYS)}
            fig.xaxis.axis_label = "key"
            chrome.quiet_axes(fig, tick_labels=True)
            fig.xgrid.visible = False
        self.scores_figure, self.weights_figure = s, w
        self._gauge_pane = pn.pane.Bokeh(g, width=300, height=185, margin=(4, 10))
        self._scores_pane = pn.pane.Bokeh(s, height=220, sizing_mode="stretch_width",
                                          min_width=240)
        self._weights_pane = pn.pane.Bokeh(w, height=220, sizing_mode="stretch_width",
                                           min_width=240)

    def _build_readouts(self):
        def html_pane(**kw):
            return chrome.readout_pane(STYLE, **kw)

        self._message = html_pane()
        self._arithmetic = html_pane()
        self._verdict = html_pane()
        self._demo = html_pane()
        self._ops = html_pane()
        inputs = pn.FlexBox(self._a_w, self._b_w, align_items="flex-end",
                            sizing_mode="stretch_width")
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
        heading = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>The dot product: an agreement score</h3>",
                         margin=(0, 10))]
        self._layout = pn.Column(
            *heading, inputs, self._message, pair,
            pn.pane.HTML("<h4 style='margin:8px 0 0'>Why divide by √d</h4>", margin=(0, 10)),
            pn.FlexBox(self._d_w, sizing_mode="stretch_width"),
            self._demo, charts, self._ops,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])

    def __panel__(self):
        return self._layout

    # --- reacting -----------------------------------------------------------------------

    def _on_change(self, *events):
        self._read_vectors()
        self._update()

    def _update(self):  # write the current numbers into sources and panes; never rebuild
        nums = self.numbers()
        self._numbers = nums
        ok = not math.isnan(nums.angle)
        theta = math.radians(nums.angle) if ok else 0.0
        bx, by = math.cos(theta), math.sin(theta)
        self.arrow_a.visible = bool(nums.norm_a)
        self.arrow_b.update(x_end=bx, y_end=by, visible=bool(nums.norm_b))
        self.gauge_source.data = {"x": [1.02, bx * 1.02], "y": [0.0, by * 1.02],
                                  "label": ["a", "b"] if ok else ["", ""],
                                  "color": [self._ink.strong, self._ink.cool]}
        self.arc_source.data = {"end": [theta]}
        demo = nums.demo
        keys = np.arange(N_KEYS)
        self.demo_source.data = {"x": keys, "x_raw": keys - 0.2, "x_scaled": keys + 0.2,
                                 "raw": demo.raw, "scaled": demo.scaled,
                                 "w_raw": demo.weights_raw, "w_scaled": demo.weights_scaled}
        reach = float(np.abs(np.concatenate([demo.raw, demo.scaled])).max()) * 1.15 or 1.0
        self.scores_figure.y_range.update(start=-reach, end=reach)
        self._message.object = self.message_html()
        self._message.visible = bool(self._errors)
        self._arithmetic.object = self.arithmetic_html(nums)
        self._verdict.object = self.verdict_html(nums)
        self._demo.object = self.demo_html(nums)
        self._ops.object = self.ops_html(nums)

    # --- readouts (text) ----------------------------------------------------------------

    def message_html(self):
        if not self._errors:
            return '<div class="ae-msg" aria-live="polite"></div>'
        lines = "".join(f"<div>{html.escape(self._errors[k])}; still using {k} = "
                        f"({html.escape(', '.join(fmt(x) for x in self._good[k]))})</div>"
                        for k in sorted(self._errors))
        return f'<div class="ae-msg" role="status" aria-live="polite">{lines}</div>'

    def arithmetic_html(self, nums):
        pairs = " + ".join(f"{factor(x)} × {factor(y)}" for x, y in zip(nums.a, nums.b))
        terms = fmt(nums.products[0])
        for p in nums.products[1:]:
            terms += f" − {fmt(-p)}" if p < 0 else f" + {fmt(p)}"
        vec = ", ".join
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<div>a = ({vec(fmt(x) for x in nums.a)}), b = ({vec(fmt(x) for x in nums.b)})</div>'
            '<div class="ae-small">multiply pair by pair, then add:</div>'
            f'<div class="ae-eq">a · b = {pairs}</div>'
            f'<div class="ae-eq">= {terms} = <span class="ae-big">{fmt(nums.score)}</span></div>'
            '</div>')

    def verdict_html(self, nums):
        if math.isnan(nums.angle):
            return ('<div class="ae-readout" aria-live="polite">One vector is all zeros: it '
                    'points nowhere, so there is no angle, and its score with anything is 0.'
                    '</div>')
        cos = nums.score / (nums.norm_a * nums.norm_b)
        sign = ("positive" if nums.score > 0 else "negative" if nums.score < 0 else "zero")
        why = {
            "aligned": "they point more the same way than not",
            "perpendicular": "they are within 10° of a right angle: neither agree nor disagree",
            "opposed": "they point more against each other than with",
        }[nums.verdict]
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<div>angle between them: <b>{nums.angle:.1f}°</b> '
            f'(|a| = {fmt(nums.norm_a, 3)}, |b| = {fmt(nums.norm_b, 3)}, '
            f'cos = a·b ÷ (|a| |b|) = {fmt(cos, 3)})</div>'
            f'<div>verdict: <b>{nums.verdict}</b>: the score is {sign}; {why}.</div>'
            '<div class="ae-small">The gauge draws a along the horizontal and b at that angle, '
            'both at length 1, in the flat plane the two vectors share.</div></div>')

    def demo_html(self, nums):
        demo, d = nums.demo, nums.d
        winner = int(np.argmax(demo.weights_raw))
        root = math.sqrt(d)
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<p>A query and {N_KEYS} keys of d = {d} random numbers each (mean 0, variance 1, '
            'one fixed draw). Each score adds up d products of variance 1, so the scores '
            'spread with a standard deviation of about √d.</p>'
            '<ul class="ae-list">'
            f'<li>raw scores q·k: measured spread <b>±{demo.spread_raw:.1f}</b> '
            f'(√{d} ≈ {root:.1f}); softmax gives key k{winner} '
            f'<b>{demo.weights_raw[winner]:.0%}</b>: '
            f'<b>{nums.effective_raw:.2f}</b> effective keys: it picks one</li>'
            f'<li>scaled q·k ÷ √{d}: spread <b>±{demo.spread_scaled:.2f}</b>; the biggest '
            f'weight is {demo.weights_scaled.max():.0%}: <b>{nums.effective_scaled:.2f}</b> '
            f'effective keys of {N_KEYS}: it blends</li></ul>'
            '<p class="ae-small">Effective keys = e^(entropy of the weights): 1 when one key '
            f'takes everything, {N_KEYS} when all share equally. Dividing costs one multiply '
            'per score, and fast kernels fold it into work they already do.</p></div>')

    def ops_html(self, nums):
        d = nums.d
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<b>Operations per dot product: {nums.operations:,} at {d:,} numbers</b> '
            f'({d:,} multiplies and {d - 1:,} adds; a multiply-add counts as 2, '
            f'so 2 × {d:,}).</div>')


STYLE = """
.ae-big { font-size: 1.5em; font-weight: 600; }
.ae-eq { font-size: 1.05em; overflow-wrap: anywhere; }
.ae-small { font-size: 0.85em; opacity: 0.8; }
.ae-msg { background: rgb(230 159 0 / 0.16); border-left: 3px solid #e69f00;
          padding: 4px 8px; overflow-wrap: anywhere; }
.ae-msg:empty { display: none; }
.ae-list { margin: 2px 0; padding-left: 18px; }
.ae-readout p { margin: 4px 0; }
"""


def page():
    return chrome.single_page(AgreementPanel(), "The dot product: an agreement score")
