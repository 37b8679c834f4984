"""What attention costs in a real model: its share of the arithmetic, prefill and decode.

Attention's (query, key) pairs grow with the square of the prompt; every other matmul grows
linearly. For a real config the learner sees how small attention's share is at ordinary
lengths, where the crossover lies, and whether the model can even reach it.
"""

import html
import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Label,
    Legend,
    LegendItem,
    NumeralTickFormatter,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from app import chrome
from app.model_picker import (
    CODE_CSS,
    PICKER_CSS,
    ModelPicker,
    at_tokens,
    grouped,
    ink,
    link_model,
    model_selector,
    percent,
    short,
    tokens,
)
from attention_core import costs

MAX_PROMPT = 131_072
CHART_MAX = 262_144
CURVE_N = np.unique(np.geomspace(1, CHART_MAX, 240).round())
KERNEL_LABELS = {"triangular: skips masked blocks, n²/2": "triangular",
                 "naive: whole square, n²": "naive"}
# Okabe-Ito: blue for the triangular kernel, vermillion for the naive one
COLOURS = {"triangular": "#0072B2", "naive": "#D55E00"}
DASHES = {"triangular": "solid", "naive": "dashed"}
HEIGHT = 360

CONVENTIONS = (
    "**How this counts.** A multiply-add is 2 FLOPs. *Matmul parameters* are every linear "
    "weight of every layer plus the output layer (lm_head), counted even when it is tied to "
    "the embedding: tying saves memory, not work. Looking up an embedding costs nothing; "
    "norms, softmax, RoPE and biases are left out. A triangular kernel pays n²/2 (query, key) "
    "pairs for an n-token prompt (the documents' n²/2, not n(n+1)/2); a naive kernel computes "
    "the whole n² square, masked half included. A decode step with c tokens of context pays "
    "c pairs, whatever the kernel.")

INTRO = (
    "Attention's arithmetic is its scores and its weighted sum of values, one pair of each "
    "per (query, key). Everything else (the query, key, value and output projections, the "
    "feed-forward network, the output layer) does a fixed amount of work per token, so it "
    "grows only in step with the prompt. Attention grows with the prompt's square, and "
    "the crossover is the prompt length where the two are equal.")


def pair_formula(m):  # ModelShape -> "4 × 36 layers × 32 query heads × 128 head_dim"
    if m.head_dim == m.v_head_dim:
        return (f"4 × {m.layers:,} layers × {m.heads:,} query heads × {m.head_dim:,} "
                "head_dim")
    return (f"2 × {m.layers:,} layers × {m.heads:,} query heads × ({m.head_dim:,} query/key "
            f"dims + {m.v_head_dim:,} value dims)")


def curve_data(m):  # ModelShape -> the share of prefill for both kernels over CURVE_N
    return {"n": CURVE_N, **{k: costs.prefill_attention_share(m, CURVE_N, k)
                             for k in costs.KERNELS}}


class CostPanel(pn.viewable.Viewer):
    """Attention's share of prefill and decode arithmetic for a real model's config."""

    model = model_selector("qwen3-8b")
    prompt = param.Integer(default=4096, bounds=(1, MAX_PROMPT), label="prompt tokens",
                           doc="Tokens in the prompt, all processed at once by prefill.")
    generate = param.Integer(default=4096, bounds=(1, MAX_PROMPT), label="tokens to generate",
                             doc="Tokens produced one decode step at a time after the prompt.")
    kernel = param.Selector(default="triangular", objects=dict(KERNEL_LABELS), label="kernel",
                            doc="Triangular skips the masked blocks (n²/2); naive does n².")

    url_keys = ("model", "prompt", "generate", "kernel")

    def __init__(self, in_article=False, **params):
        # in_article: the article's section heading and prose already say what the panel's
        # own heading and introduction say, so leave those out there
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self.picker = ModelPicker(model=self.model)
        link_model(self, self.picker)
        self._build_figure()
        self._build_widgets()
        self.readout = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self.caption = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self._curve_for = None
        self._update()
        self.param.watch(lambda *e: self._update(), ["prompt", "generate", "kernel"])
        self.picker.param.watch(lambda *e: self._update(), "shape")
        self._layout = self._build_layout()

    # ---- the numbers: pure in the parameters --------------------------------------------

    def numbers(self):  # -> every number shown, for the current model and controls
        m, p, g, k = self.picker.shape, self.prompt, self.generate, self.kernel
        last = p + g - 1  # the last decode step sees the prompt and every earlier new token
        return {
            "shape": m, "prompt": p, "generate": g, "kernel": k, "last_context": last,
            "prefill_share": costs.prefill_attention_share(m, p, k),
            "decode_first": costs.decode_attention_share(m, p),
            "decode_last": costs.decode_attention_share(m, last),
            "crossover": costs.crossover_tokens(m, k),
            "crossovers": {kk: costs.crossover_tokens(m, kk) for kk in costs.KERNELS},
            "matmul_params": costs.matmul_params(m),
            "pair_flops": costs.pair_flops(m),
            "attention_prefill": costs.attention_flops_prefill(m, p, k),
            "other_prefill": costs.other_flops_prefill(m, p),
            "max_positions": m.max_positions,
        }

    def readout_html(self, nums):
        m = nums["shape"]
        share = nums["prefill_share"]
        kernel = ("triangular kernel, n²/2 pairs" if nums["kernel"] == "triangular"
                  else "naive kernel, n² pairs")
        tri, naive = nums["crossovers"]["triangular"], nums["crossovers"]["naive"]
        maxpos = nums["max_positions"]
        reach = ""
        if maxpos:
            here = nums["crossover"]
            where = "beyond" if here > maxpos else "within"
            reach = (f" The config's max position is {maxpos:,}: the {nums['kernel']} "
                     f"kernel's crossover lies {where} it.")
        beyond = ""
        if maxpos and nums["prompt"] > maxpos:
            beyond = (f" (longer than the model's max position of {maxpos:,}: counted anyway, "
                      "as arithmetic)")
        kv = (f"not the {m.kv_heads:,} KV heads" if m.kv_heads != m.heads
              else "which here equal the KV heads")
        return (
            '<div class="ae-readout" aria-live="polite">'
            f"<p><b>Prefill</b> of a {grouped(nums['prompt'])}-token prompt{beyond}: attention "
            f"is <b>{percent(share)}</b> of the arithmetic, everything else "
            f"{percent(1 - share)} ({kernel}; {short(nums['attention_prefill'])} against "
            f"{short(nums['other_prefill'])} FLOPs).</p>"
            f"<p><b>One decode step</b>: attention is <b>{percent(nums['decode_first'])}</b> "
            f"of the first step's arithmetic (context {grouped(nums['prompt'])} tokens) and "
            f"<b>{percent(nums['decode_last'])}</b> of the last one's, token "
            f"{grouped(nums['generate'])} of {grouped(nums['generate'])} (context "
            f"{grouped(nums['last_context'])} tokens).</p>"
            f"<p><b>Crossover</b>, where prefill attention equals everything else: "
            f"{at_tokens(tri)} with the triangular kernel, {at_tokens(naive)} with the naive "
            f"one.{reach}</p>"
            f"<p><b>Matmul parameters</b>: {grouped(nums['matmul_params'])} "
            f"(≈ {short(nums['matmul_params'])}), each doing 2 FLOPs per token.</p>"
            f"<p><b>FLOPs per (query, key) pair</b>, all layers: {pair_formula(m)} = "
            f"<b>{grouped(nums['pair_flops'])}</b>. Query heads, {kv}: grouped-query "
            "attention shrinks the cache, not this.</p></div>")

    # ---- writing them out ---------------------------------------------------------------

    def _update(self):
        nums = self.numbers()
        m, k = nums["shape"], nums["kernel"]
        if self._curve_for is not m:
            self.curve_source.data = curve_data(m)
            self._curve_for = m
        self.marker_source.data = {"n": [nums["prompt"]], "share": [nums["prefill_share"]]}
        for name, line in self.lines.items():
            line.glyph.line_width = 3.5 if name == k else 1.5
            line.glyph.line_alpha = 1.0 if name == k else 0.6
        self.marker.glyph.fill_color = COLOURS[k]
        self._place(self.cross_span, self.cross_label, nums["crossover"],
                    f"crossover {tokens(nums['crossover'])}")
        self._place(self.maxpos_span, self.maxpos_label, nums["max_positions"],
                    f"max position {grouped(nums['max_positions'] or 0)}")
        self.caption.object = (f'<p class="ae-caption" aria-live="polite">'
                               f"{html.escape(m.name)}: attention's share of prefill "
                               "arithmetic against prompt length</p>")
        self.readout.object = self.readout_html(nums)

    @staticmethod
    def _place(span, label, x, text):  # a vertical marker and its label, hidden off the chart
        shown = x is not None and math.isfinite(x) and 1 <= x <= CHART_MAX
        span.visible = label.visible = shown
        if shown:
            span.location = x
            label.x = x
            label.text = text
            # labels left of the line near the right edge, right of it otherwise
            label.text_align = "right" if x > 2048 else "left"
            label.x_offset = -4 if x > 2048 else 4

    def _build_figure(self):
        self.curve_source = ColumnDataSource({"n": [], "triangular": [], "naive": []})
        self.marker_source = ColumnDataSource({"n": [], "share": []})
        fig = figure(title=None, height=HEIGHT, sizing_mode="stretch_width", min_width=240,
                     tools="",
                     toolbar_location=None, x_axis_type="log",
                     x_range=Range1d(1, CHART_MAX), y_range=Range1d(0, 1.0),
                     outline_line_color=None, min_border_right=12)
        half = Span(location=0.5, dimension="width", line_color="#999999", line_dash="dotted",
                    line_width=1)
        fig.add_layout(half)
        self.lines = {}
        items = []
        for name, label in (("triangular", "triangular (n²/2 pairs)"),
                            ("naive", "naive (n² pairs)")):
            line = fig.line("n", name, source=self.curve_source, line_color=COLOURS[name],
                            line_dash=DASHES[name], line_width=2)
            self.lines[name] = line
            items.append(LegendItem(label=label, renderers=[line]))
        self.marker = fig.scatter("n", "share", source=self.marker_source, size=11,
                                  fill_color=COLOURS["triangular"], line_color="#000000",
                                  line_width=1.5)
        items.append(LegendItem(label="your prompt", renderers=[self.marker]))
        # the crossover in the theme's strongest ink (black on white), the max position grey
        paint = self._ink
        self.cross_span = Span(location=1, dimension="height", line_color=paint.strong,
                               line_dash="dashed", line_width=1.5)
        self.maxpos_span = Span(location=1, dimension="height", line_color=paint.rule,
                                line_dash="dotdash", line_width=1.5)
        self.cross_label = Label(x=1, y=0.93, text="", text_font_size="11px",
                                 text_color=paint.strong, background_fill_color=paint.paper,
                                 background_fill_alpha=0.8)
        self.maxpos_label = Label(x=1, y=0.78, text="", text_font_size="11px",
                                  text_color=paint.muted, background_fill_color=paint.paper,
                                  background_fill_alpha=0.8)
        for model in (self.cross_span, self.maxpos_span, self.cross_label, self.maxpos_label):
            fig.add_layout(model)
        fig.add_tools(HoverTool(renderers=[self.lines["triangular"]], mode="vline", tooltips=[
            ("prompt", "@n{0,0} tokens"), ("triangular", "@triangular{0.0%}"),
            ("naive", "@naive{0.0%}")]))
        fig.add_layout(Legend(items=items, ncols=2, label_text_font_size="11px",
                              border_line_alpha=0, padding=2, spacing=0), "below")
        fig.xaxis.ticker = FixedTicker(ticks=[1, 16, 256, 4096, 65536])
        fig.xaxis.major_label_overrides = {1: "1", 16: "16", 256: "256", 4096: "4,096",
                                           65536: "65,536"}
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.xaxis.axis_label = "prompt length, tokens (log scale)"
        fig.yaxis.axis_label = "attention's share of prefill FLOPs"
        chrome.quiet_axes(fig)
        self.figure = fig

    # ---- controls -----------------------------------------------------------------------

    def _build_widgets(self):
        self.prompt_slider = chrome.power_of_two_slider(
            self, "prompt", "prompt length, powers of two", MAX_PROMPT, sizing_mode="stretch_width",
            min_width=180, max_width=360)
        self.prompt_input = pn.widgets.IntInput.from_param(
            self.param.prompt, label=f"prompt tokens (1–{MAX_PROMPT:,})", step=256, width=200)
        self.generate_input = pn.widgets.IntInput.from_param(
            self.param.generate, label=f"tokens to generate (1–{MAX_PROMPT:,})", step=256,
            width=200)
        self.kernel_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.kernel, color="primary", variant="outline",
            orientation="vertical", width=260)

    def __panel__(self):
        return self._layout

    def _build_layout(self):
        controls = pn.FlexBox(
            self.prompt_slider, self.prompt_input, self.generate_input,
            pn.Column(pn.pane.HTML("kernel", margin=(0, 10)), self.kernel_buttons, margin=0),
            align_items="flex-end", sizing_mode="stretch_width")
        own = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>What attention costs in a real model</h3>",
                         margin=(0, 10)),
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", stylesheets=[CODE_CSS])]
        return pn.Column(
            *own, self.picker, controls, self.readout, self.caption,
            pn.pane.Bokeh(self.figure, height=HEIGHT, sizing_mode="stretch_width",
                          min_width=240),
            pn.pane.HTML('<p class="ae-hint">The chart: attention\'s share of prefill '
                         "arithmetic for every prompt length, both kernels. The dashed vertical "
                         "line marks the crossover for the chosen kernel, the grey dash-dot "
                         "line the model's max position, the dot your prompt; the dotted "
                         "line is 50%.</p>", sizing_mode="stretch_width", margin=(0, 10),
                         stylesheets=[PICKER_CSS]),
            pn.pane.Markdown(CONVENTIONS, sizing_mode="stretch_width", stylesheets=[CODE_CSS]),
            css_classes=["ae-panel"], sizing_mode="stretch_width",
            stylesheets=[chrome.CSS, PICKER_CSS])


def page():
    return chrome.single_page(CostPanel(), "What attention costs in a real model")
