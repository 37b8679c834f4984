"""Where the n² lives: prefill runs n queries against n keys (n² dot products), a decode step
runs one query against n keys (n). Generating a response is a sum of such linear steps,
which is quadratic in total although no single step is.
"""

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Legend, LegendItem, Range1d
from bokeh.plotting import figure

from app import chrome
from app.model_picker import ink
from attention_core import head, worked_example

MIN_LENGTH, MAX_LENGTH = 3, len(worked_example.WORDS)
LENGTHS = tuple(range(MIN_LENGTH, MAX_LENGTH + 1))
MAX_CONTEXT = 131_072
PREFILL, DECODE, RESPONSE = "#0072B2", "#E69F00", "#D55E00"  # Okabe-Ito
HEIGHT = 300


def ladder_counts():  # -> {phase: [dot products for n = 3..8]}, from the worked example's head
    return {phase: [worked_example.run(n, phase=phase).dot_products for n in LENGTHS]
            for phase in head.PHASES}


def decode_total(prompt, response):  # Σ_{t=prompt}^{prompt+response-1} t, exact int
    # step t runs one query against t keys; the closed form is the arithmetic series
    return response * (2 * prompt + response - 1) // 2


def grouped(n):  # 12345 -> "12,345"
    return f"{n:,}"


class LadderPanel(pn.viewable.Viewer):
    """Where the n² lives: dot products per phase, and a response as a sum of linear steps."""

    length = param.Integer(default=6, bounds=(MIN_LENGTH, MAX_LENGTH), label="sequence length")
    phase = param.Selector(default="prefill", objects=list(head.PHASES), label="phase")
    prompt = param.Integer(default=256, bounds=(1, MAX_CONTEXT // 2), label="prompt tokens",
                           doc="tokens in the prompt, processed once by prefill")
    response = param.Integer(default=4096, bounds=(1, MAX_CONTEXT // 2),
                             label="response tokens", doc="tokens generated, one decode step each")

    url_keys = ("length", "phase", "prompt", "response")

    def __init__(self, head=None, in_article=False, **params):
        # in_article: the article's section heading stands above, so leave out the panel's own
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self.head = head
        if head is not None:
            # on the article the head's controls drive this panel; the URL belongs to the head
            self.url_keys = ("prompt", "response")
            self.param.update(length=head.length, phase=head.phase)
            head.param.watch(self._follow_head, ["length", "phase"])
        self.counts = ladder_counts()
        self._build_ladder()
        self._build_context()
        self._build_layout()
        self._update()
        self.param.watch(lambda *events: self._update(), ["length", "phase", "prompt",
                                                          "response"])

    def _follow_head(self, *events):
        self.param.update(**{e.name: e.new for e in events})

    # --- the numbers --------------------------------------------------------------------

    def numbers(self):  # pure: parameters -> dict of every number shown
        n, p, m = self.length, self.prompt, self.response
        final = p + m
        total = decode_total(p, m)
        return {
            "n": n, "phase": self.phase,
            "prefill": self.counts["prefill"][LENGTHS.index(n)],
            "decode": self.counts["decode"][LENGTHS.index(n)],
            "prompt": p, "response": m, "final": final,
            "first_step": p, "last_step": p + m - 1,
            "decode_total": total, "final_square": final * final,
            "ratio": total / (final * final),
            "prompt_prefill": p * p,
        }

    def ladder_data(self, nums):  # -> ColumnDataSource dict for the 3..8 bars
        xs, tops, colours, phases, lines, alphas, labels = [], [], [], [], [], [], []
        for phase, offset, colour in (("prefill", -0.2, PREFILL), ("decode", 0.2, DECODE)):
            for n, count in zip(LENGTHS, self.counts[phase]):
                current = n == nums["n"] and phase == nums["phase"]
                xs.append(n + offset)
                tops.append(count)
                colours.append(colour)
                phases.append(phase)
                lines.append(3 if current else 0)
                alphas.append(1.0 if n == nums["n"] else 0.45)
                labels.append(str(count))
        return {"x": xs, "top": tops, "colour": colours, "phase": phases, "line_width": lines,
                "alpha": alphas, "label": labels, "label_y": [t + 1 for t in tops]}

    def context_data(self, nums):  # -> (curves dict, response curve dict, marker dict)
        ns = np.unique(np.geomspace(1, MAX_CONTEXT, 120).round().astype(np.int64))
        curves = {"n": ns.tolist(), "prefill": (ns.astype(np.float64) ** 2).tolist(),
                  "decode": ns.astype(np.float64).tolist()}
        p = nums["prompt"]
        ends = np.unique(np.concatenate([
            np.geomspace(1, MAX_CONTEXT - p, 120).round().astype(np.int64), [nums["response"]]]))
        resp = {"n": (p + ends).tolist(),
                "total": [float(decode_total(p, int(m))) for m in ends]}
        marker = {"n": [nums["final"]], "total": [float(nums["decode_total"])]}
        return curves, resp, marker

    # --- building, once -----------------------------------------------------------------

    def _build_ladder(self):
        self.ladder_source = ColumnDataSource({k: [] for k in (
            "x", "top", "colour", "phase", "line_width", "alpha", "label", "label_y")})
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(MIN_LENGTH - 0.6, MAX_LENGTH + 0.6),
                     y_range=Range1d(0, MAX_LENGTH ** 2 * 1.15), min_border_right=8,
                     outline_line_color=None)
        # the bar for the current length and phase is outlined in the theme's strongest ink
        fig.vbar(x="x", top="top", width=0.38, source=self.ladder_source, fill_color="colour",
                 fill_alpha="alpha", line_color=self._ink.strong, line_width="line_width")
        fig.text(x="x", y="label_y", text="label", source=self.ladder_source,
                 text_align="center", text_baseline="bottom", text_font_size="11px",
                 text_color=self._ink.text)
        fig.xaxis.ticker = FixedTicker(ticks=list(LENGTHS))
        fig.xaxis.axis_label = "sequence length n"
        fig.yaxis.axis_label = "dot products"
        fig.xgrid.visible = False
        legend = Legend(items=[
            LegendItem(label="prefill: n²", renderers=[fig.renderers[0]], index=0),
            LegendItem(label="one decode step: n", renderers=[fig.renderers[0]],
                       index=len(LENGTHS)),
        ], location="top_left", label_text_font_size="11px", background_fill_alpha=0.8)
        fig.add_layout(legend)
        chrome.quiet_axes(fig)
        self.ladder_figure = fig

    def _build_context(self):
        self.curve_source = ColumnDataSource({"n": [], "prefill": [], "decode": []})
        self.response_source = ColumnDataSource({"n": [], "total": []})
        self.marker_source = ColumnDataSource({"n": [], "total": []})
        self.head_marker_source = ColumnDataSource({"n": [], "y": [], "colour": []})
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_axis_type="log", y_axis_type="log",
                     x_range=Range1d(1, MAX_CONTEXT * 1.2),
                     y_range=Range1d(1, float(MAX_CONTEXT) ** 2 * 3),
                     min_border_right=12, outline_line_color=None)
        prefill = fig.line("n", "prefill", source=self.curve_source, line_color=PREFILL,
                           line_width=2.5)
        decode = fig.line("n", "decode", source=self.curve_source, line_color=DECODE,
                          line_width=2.5)
        response = fig.line("n", "total", source=self.response_source, line_color=RESPONSE,
                            line_width=2.5, line_dash="dashed")
        fig.scatter("n", "total", source=self.marker_source, size=9, fill_color=RESPONSE,
                    line_color="#000000")
        fig.scatter("n", "y", source=self.head_marker_source, size=7, fill_color="colour",
                    line_color="#000000", marker="square")
        fig.xaxis.axis_label = "tokens in context n (log scale)"
        fig.yaxis.axis_label = "dot products (log scale)"
        fig.xaxis.ticker = FixedTicker(ticks=[1, 16, 256, 4096, 65536])
        fig.yaxis.ticker = FixedTicker(ticks=[1, 1e3, 1e6, 1e9])
        fig.xaxis.major_label_overrides = {1: "1", 16: "16", 256: "256", 4096: "4,096",
                                           65536: "65,536"}
        fig.yaxis.major_label_overrides = {1: "1", 1000: "10³", 1000000: "10⁶",
                                           1000000000: "10⁹"}
        fig.add_layout(Legend(items=[
            LegendItem(label="prefill of n tokens: n²", renderers=[prefill]),
            LegendItem(label="one decode step at n: n", renderers=[decode]),
            LegendItem(label="whole response: Σ of steps", renderers=[response]),
        ], location="top_left", label_text_font_size="11px", background_fill_alpha=0.8))
        chrome.quiet_axes(fig)
        self.context_figure = fig

    def _build_layout(self):
        self._ladder_text = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                         stylesheets=[STYLE])
        self._context_text = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                          stylesheets=[STYLE])
        own_controls = []
        if self.head is None:
            own_controls = [
                pn.widgets.IntSlider.from_param(self.param.length, width=260),
                pn.Column(pn.pane.HTML("phase", margin=(0, 10)),
                          pn.widgets.RadioButtonGroup.from_param(
                              self.param.phase, color="primary", variant="outline",
                              width=180), margin=0),
            ]
        self._ladder_controls = pn.FlexBox(*own_controls, align_items="flex-end",
                                           sizing_mode="stretch_width")
        self._context_controls = pn.FlexBox(
            pn.widgets.IntInput.from_param(self.param.prompt, step=256, width=150),
            pn.widgets.IntInput.from_param(self.param.response, step=256, width=150),
            sizing_mode="stretch_width")
        ladder = pn.Column(self._ladder_controls,
                           pn.pane.Bokeh(self.ladder_figure, height=HEIGHT,
                                         sizing_mode="stretch_width", min_width=240),
                           self._ladder_text, sizing_mode="stretch_width",
                           styles={"flex": "1 1 340px", "min-width": "0"})
        context = pn.Column(self._context_controls,
                            pn.pane.Bokeh(self.context_figure, height=HEIGHT,
                                          sizing_mode="stretch_width", min_width=240),
                            self._context_text, sizing_mode="stretch_width",
                            styles={"flex": "1 1 340px", "min-width": "0"})
        heading = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>Where the n² lives</h3>", margin=(0, 10))]
        self._layout = pn.Column(
            *heading, pn.FlexBox(ladder, context, sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])

    def __panel__(self):
        return self._layout

    # --- reacting -----------------------------------------------------------------------

    def _update(self):  # write into sources and panes; the figures stay as built
        nums = self.numbers()
        self.ladder_source.data = self.ladder_data(nums)
        curves, resp, marker = self.context_data(nums)
        self.curve_source.data = curves
        self.response_source.data = resp
        self.marker_source.data = marker
        n = nums["n"]
        self.head_marker_source.data = {"n": [n, n], "y": [float(n * n), float(n)],
                                        "colour": [PREFILL, DECODE]}
        self._ladder_text.object = self.ladder_html(nums)
        self._context_text.object = self.context_html(nums)

    def ladder_html(self, nums):
        n = nums["n"]
        now = nums["prefill"] if nums["phase"] == "prefill" else nums["decode"]
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<p>At n = {n}, {nums["phase"]}: <b>{now}</b> dot products. Prefill runs {n} '
            f'queries against {n} keys ({nums["prefill"]}); a decode step runs one query, the '
            f'newest token, against the same {n} keys ({nums["decode"]}).</p>'
            f'<p class="ae-small">Prefill: {", ".join(map(str, self.counts["prefill"]))}. '
            f'Decode: {", ".join(map(str, self.counts["decode"]))}. The square comes from how '
            'many queries run at once, not from how long the context is; the keys and values '
            'of earlier tokens wait in the KV cache.</p></div>')

    def context_html(self, nums):
        p, m = nums["prompt"], nums["response"]
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<p>Prefill of the {grouped(p)}-token prompt: {grouped(nums["prompt_prefill"])} '
            f'dot products. Then {grouped(m)} decode steps, each linear: the first sees '
            f'{grouped(nums["first_step"])} keys, the last {grouped(nums["last_step"])}. '
            f'Their sum, Σ t for t = {grouped(p)} … {grouped(nums["last_step"])}, is '
            f'<b>{grouped(nums["decode_total"])}</b> dot products, {nums["ratio"]:.0%} of '
            f'n² = {grouped(nums["final"])}² = {grouped(nums["final_square"])}.</p>'
            '<p class="ae-small">Each step is linear in the context; the sum over a response '
            'grows with its square. Per layer and per head; at n = 131,072 a prefill is '
            f'{grouped(MAX_CONTEXT ** 2)} dot products against {grouped(MAX_CONTEXT)} for one '
            'decode step.</p></div>')


STYLE = """
.ae-small { font-size: 0.85em; opacity: 0.8; }
.ae-readout p { margin: 4px 0; }
"""


def page():
    return chrome.single_page(LadderPanel(), "Where the n² lives")
