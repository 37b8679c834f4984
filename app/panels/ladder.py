"""Where the n² lives: prefill runs n queries against n keys (n² dot products), a decode step
runs one query against n keys (n). R response tokens after P prompt tokens sum such steps:
R·P + R(R − 1)/2, quadratic only once R passes 2P.

The panel has the one shape (app/kit/states.py). Four controls: sequence length and phase (on
the article these are the head's own widgets: the ladder follows the head), and prompt and
response tokens on power-of-two stops, 1 to 65,536 (the documents' 256-token prompt and
4,096-token response are on them). The state has four parts: the n² and n curves (no
control), the ladder (length, phase), the response curve (prompt) and the response's sum
(prompt, response). The figures are built once; a state sets their sources and the text of
two `chrome.Readout`s.
"""

import functools
import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    Legend,
    LegendItem,
    Range1d,
)
from bokeh.plotting import figure

from app.kit import chrome, fmt, model_code, registry, resources
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import head, worked_example

MIN_LENGTH, MAX_LENGTH = 3, len(worked_example.WORDS)
LENGTHS = tuple(range(MIN_LENGTH, MAX_LENGTH + 1))
MAX_CONTEXT = 131_072
MAX_TOKENS = MAX_CONTEXT // 2
# prompt and response tokens: every power of two 1..65,536; the sliders move over exponents
TOKEN_EXPONENTS = tuple(range(int(math.log2(MAX_TOKENS)) + 1))
TOKEN_STOPS = tuple(2 ** e for e in TOKEN_EXPONENTS)
CURVE_POINTS = 120
PREFILL, DECODE, RESPONSE = "#0072B2", "#E69F00", "#D55E00"  # Okabe-Ito
HEIGHT = 300


@functools.lru_cache(maxsize=1)
def ladder_counts():  # -> {phase: (dot products for n = 3..8)}, from the worked example's head
    return {phase: tuple(worked_example.run(n, phase=phase).dot_products for n in LENGTHS)
            for phase in head.PHASES}


def decode_total(prompt, response):  # Σ_{t=prompt}^{prompt+response-1} t, exact int
    # step t runs one query against t keys; the closed form is the arithmetic series
    return response * (2 * prompt + response - 1) // 2


def context_points():  # -> [m] ints: about 120 context lengths, log-spaced over 1..131,072
    return np.unique(np.geomspace(1, MAX_CONTEXT, CURVE_POINTS).round().astype(np.int64))


# --- the state: four parts, each a pure function of some of the controls --------------------

def curves_state():  # the n² and n curves over context length: no control moves them
    ns = [int(n) for n in context_points()]
    return {"source:curves": {"n": ns, "prefill": [n * n for n in ns], "decode": ns}}


def ladder_state(length, phase):  # the bars, the head's markers and the ladder's text
    counts = ladder_counts()
    i = LENGTHS.index(length)
    columns = {k: [] for k in ("x", "top", "colour", "phase", "line_width", "alpha", "label",
                               "label_y")}
    for bar_phase, offset, colour in (("prefill", -0.2, PREFILL), ("decode", 0.2, DECODE)):
        for n, count in zip(LENGTHS, counts[bar_phase]):
            columns["x"].append(n + offset)
            columns["top"].append(count)
            columns["colour"].append(colour)
            columns["phase"].append(bar_phase)
            # the bar for the current length and phase is outlined, its length's pair bright
            columns["line_width"].append(3 if (n, bar_phase) == (length, phase) else 0)
            columns["alpha"].append(1.0 if n == length else 0.45)
            columns["label"].append(str(count))
            columns["label_y"].append(count + 1)
    prefill, decode = counts["prefill"][i], counts["decode"][i]
    return {
        "source:bars": columns,
        "source:head_marker": {"n": [length, length], "y": [prefill, decode],
                               "colour": [PREFILL, DECODE]},
        "holes:ladder": {
            "n": str(length), "phase": phase,
            "now": str(prefill if phase == "prefill" else decode),
            "prefill": str(prefill), "decode": str(decode),
            "prefill_all": ", ".join(map(str, counts["prefill"])),
            "decode_all": ", ".join(map(str, counts["decode"])),
        },
    }


def response_state(prompt):
    # the whole response's dot products against its final context, for every response
    # length that fits; every response stop is a point, so the marker sits on the curve
    room = MAX_CONTEXT - prompt
    ends = np.unique(np.concatenate([
        np.geomspace(1, room, CURVE_POINTS).round().astype(np.int64),
        [m for m in TOKEN_STOPS if m <= room]]))
    return {"source:response": {"n": [prompt + int(m) for m in ends],
                                "total": [decode_total(prompt, int(m)) for m in ends]}}


def sum_state(prompt, response):  # the response's sum: the marker and the text
    final, total = prompt + response, decode_total(prompt, response)
    last = prompt + response - 1
    return {
        "source:marker": {"n": [final], "total": [total]},
        "holes:context": {
            "prompt": fmt.count(prompt), "prompt_prefill": fmt.count(prompt * prompt),
            "response": fmt.count(response), "last_step": fmt.count(last),
            "total": fmt.count(total), "ratio": f"{total / (final * final):.0%}",
            "final": fmt.count(final), "final_square": fmt.count(final * final),
            # the sum's two terms: R·P from the prompt, R(R − 1)/2 from the response itself
            "linear": fmt.count(response * prompt),
            "square": fmt.count(response * (response - 1) // 2),
        },
    }


LADDER = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>At n = {hole("n")}, {hole("phase")}: {hole("now", "b")} dot products. Prefill runs '
    f'{hole("n")} queries against {hole("n")} keys ({hole("prefill")}); a decode step runs '
    f'one query, the newest token, against the same {hole("n")} keys ({hole("decode")}).</p>'
    f'<p class="ae-small">Prefill: {hole("prefill_all")}. Decode: {hole("decode_all")}. The '
    'square is n queries times n keys; a decode step keeps the n keys but has one query, the '
    'keys and values of earlier tokens waiting in the KV cache.</p></div>')

CONTEXT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>Prefill of the {hole("prompt")}-token prompt: {hole("prompt_prefill")} dot products. '
    f'Then {hole("response")} decode steps, each linear: the first sees {hole("prompt")} keys, '
    f'the last {hole("last_step")}. Their sum, Σ t for t = {hole("prompt")} … '
    f'{hole("last_step")}, is {hole("total", "b")} dot products, {hole("ratio")} of n² = '
    f'{hole("final")}² = {hole("final_square")}.</p>'
    '<p class="ae-small">Each step is linear in the context. For R response tokens after P '
    f'prompt tokens the sum is R·P + R(R − 1)/2, here {hole("linear")} + {hole("square")}: '
    'the square term overtakes the linear one only once the response is more than twice the '
    f'prompt. Per layer and per head; at n = {fmt.count(MAX_CONTEXT)} a prefill is '
    f'{fmt.count(MAX_CONTEXT ** 2)} dot products against {fmt.count(MAX_CONTEXT)} for one '
    'decode step.</p></div>')


LadderReadout = readout_class("LadderReadout", LADDER, module=__name__)
ContextReadout = readout_class("ContextReadout", CONTEXT, module=__name__)


def tokens_control(name):  # a slider over exponents: stop i is 2^i tokens
    return Control(name, TOKEN_STOPS, "value", TOKEN_EXPONENTS, "number")


STYLE = resources.stylesheet("ladder.css")


class LadderPanel(StatePanel):
    """Where the n² lives: dot products per phase, and a response as a sum of linear steps."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    length = param.Integer(default=6, bounds=(MIN_LENGTH, MAX_LENGTH), label="sequence length")
    phase = param.Selector(default="prefill", objects=list(head.PHASES), label="phase")
    prompt = param.Integer(default=256, bounds=(1, MAX_TOKENS), label="prompt tokens",
                           doc="tokens in the prompt, processed once by prefill")
    response = param.Integer(default=4096, bounds=(1, MAX_TOKENS), label="response tokens",
                             doc="tokens generated, one decode step each")

    url_keys = ("length", "phase", "prompt", "response")

    def __init__(self, head=None, **params):
        # head: on the article the head's controls drive this panel; the URL keys length and
        # phase belong to the head
        self.head = head
        self._ink = ink()
        if head is not None:
            self.url_keys = ("prompt", "response")
            params.update(length=head.length, phase=head.phase)
        super().__init__(**params)
        if head is not None:  # a live session follows the head through its parameters
            head.param.watch(self._follow_head, ["length", "phase"])

    def _follow_head(self, *events):
        self.param.update(**{e.name: e.new for e in events})

    @classmethod
    def controls(cls):
        return [Control.slider("length", LENGTHS), Control.choice("phase", head.PHASES),
                tokens_control("prompt"), tokens_control("response")]

    @classmethod
    def parts(cls):
        return [Part((), curves_state), Part(("length", "phase"), ladder_state),
                Part(("prompt",), response_state), Part(("prompt", "response"), sum_state)]

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self.curve_source = ColumnDataSource(state["source:curves"])
        self.ladder_source = ColumnDataSource(state["source:bars"])
        self.head_marker_source = ColumnDataSource(state["source:head_marker"])
        self.response_source = ColumnDataSource(state["source:response"])
        self.marker_source = ColumnDataSource(state["source:marker"])
        self._build_ladder()
        self._build_context()
        self._ladder_text = self.new_readout(LadderReadout, state["holes:ladder"])
        self._context_text = self.new_readout(ContextReadout, state["holes:context"])
        self._build_widgets()
        self.targets = {
            "source:curves": self.curve_source, "source:bars": self.ladder_source,
            "source:head_marker": self.head_marker_source, "holes:ladder": self._ladder_text,
            "source:response": self.response_source, "source:marker": self.marker_source,
            "holes:context": self._context_text,
        }
        return self._build_layout()

    def _build_widgets(self):
        if self.head is not None:  # the head's own widgets: in a static page they drive both
            self.widgets = {"length": self.head.widgets["length"],
                            "phase": self.head.widgets["phase"]}
            self._ladder_controls = []
        else:
            self.widgets = {
                "length": pn.widgets.IntSlider.from_param(self.param.length, width=260),
                "phase": pn.widgets.RadioButtonGroup.from_param(
                    self.param.phase, color="primary", variant="outline", width=180)}
            self._ladder_controls = [
                self.widgets["length"],
                pn.Column(pn.pane.HTML("phase", margin=(0, 10)), self.widgets["phase"],
                          margin=0)]
        self._context_controls = []
        for name in ("prompt", "response"):
            # the handle lands on powers of two and shows the tokens, not 2's power; its
            # title shows them on a static page, where no number box stands beside it
            slider = chrome.power_of_two_slider(self, name, self.param[name].label, MAX_TOKENS,
                                                width=220)
            labels = [fmt.count(v) for v in TOKEN_STOPS]
            slider.param.update(show_value=self.static, format=model_code.tick_formatter(
                "stopLabelTick", labels=labels))
            self.widgets[name] = slider
            self._context_controls.append(slider)
        if not self.static:  # a live page also takes any count, typed
            self._context_controls += [
                pn.widgets.IntInput.from_param(self.param.prompt, step=256, width=140),
                pn.widgets.IntInput.from_param(self.param.response, step=256, width=140)]

    def _build_ladder(self):
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(MIN_LENGTH - 0.6, MAX_LENGTH + 0.6),
                     y_range=Range1d(0, MAX_LENGTH ** 2 * 1.15), min_border_right=8,
                     outline_line_color=None)
        # the bar for the current length and phase is outlined in the theme's strongest ink
        fig.vbar(x="x", top="top", width=0.38, source=self.ladder_source, fill_color="colour",
                 fill_alpha="alpha", line_color=self._ink.strong, line_width="line_width")
        fig.text(x="x", y="label_y", text="label", source=self.ladder_source,
                 text_align="center", text_baseline="bottom", text_font_size="12px",
                 text_color=self._ink.text)
        fig.xaxis.ticker = FixedTicker(ticks=list(LENGTHS))
        fig.xaxis.axis_label = "sequence length n"
        fig.yaxis.axis_label = "dot products"
        fig.xgrid.visible = False
        # the legend's swatches come from two glyphs of their own, one flat bar each, off the
        # axis: a swatch drawn from a real bar takes its outline and fading as the state moves
        swatches = [fig.vbar(x=[0], top=[0], width=0.38, fill_color=colour, line_color=None)
                    for colour in (PREFILL, DECODE)]
        legend = Legend(items=[
            LegendItem(label="prefill: n²", renderers=[swatches[0]]),
            LegendItem(label="one decode step: n", renderers=[swatches[1]]),
        ], location="top_left", label_text_font_size="12px", background_fill_alpha=0.8)
        fig.add_layout(legend)
        chrome.quiet_axes(fig)
        self.ladder_figure = fig

    def _build_context(self):
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
        ], location="top_left", label_text_font_size="12px", background_fill_alpha=0.8))
        chrome.quiet_axes(fig)
        self.context_figure = fig

    def _build_layout(self):
        def half(controls, fig, text):  # its controls, its figure, its readout
            return pn.Column(pn.FlexBox(*controls, align_items="flex-end",
                                        sizing_mode="stretch_width"),
                             pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                           min_width=240),
                             text, sizing_mode="stretch_width",
                             styles={"flex": "1 1 340px", "min-width": "0"})

        ladder = half(self._ladder_controls, self.ladder_figure, self._ladder_text)
        context = half(self._context_controls, self.context_figure, self._context_text)
        heading = self.own(
            chrome.heading(registry.title_of(type(self))))
        return pn.Column(
            *heading, self.url_note, pn.FlexBox(ladder, context, sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])
