"""What attention costs in a real model: its share of the arithmetic, prefill and decode.

Attention's (query, key) pairs grow with the square of the prompt; every other matmul grows
linearly. For a real config the learner sees how small attention's share is at ordinary
lengths, where the crossover lies, and whether the model can even reach it.

The panel has the one shape (app/kit/states.py) on the cost panels' base (app/panels/cost_base.py):
model (three presets) × prompt and tokens to generate on power-of-two stops, 1 to 131,072 ×
kernel. The state's parts: the share curves and everything fixed by the model alone, the
crossover marker (model, kernel), the line styles (kernel), prefill (model, prompt, kernel)
and the decode steps (model, prompt; model, prompt, generate). A live session also counts
any prompt length typed and your own config.json, through the same parts.
"""

import functools
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

from app.kit import chrome, fmt
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part
from app.panels.cost_base import CostStatePanel, power_control, rounded
from app.panels.model_picker import PICKER_CSS, model_selector, shape_of
from attention_core import costs

MAX_PROMPT = 131_072
CHART_MAX = 262_144
CURVE_N = np.unique(np.geomspace(1, CHART_MAX, 240).round())
KERNEL_LABELS = {"triangular: skips masked blocks, n²/2": "triangular",
                 "naive: whole square, n²": "naive"}
KERNELS = tuple(KERNEL_LABELS.values())  # in the buttons' order
# Okabe-Ito: blue for the triangular kernel, vermillion for the naive one
COLOURS = {"triangular": "#0072B2", "naive": "#D55E00"}
DASHES = {"triangular": "solid", "naive": "dashed"}
HEIGHT = 360
SHARE_DIGITS = 5  # the curves only colour a 360-px chart and a hover's 0.1%
BF16 = costs.dtype_bytes("bf16")  # the memory line's dtype, as the documents assume

DEFAULT_MODEL = "qwen3-8b"


def lm_head_note(key=DEFAULT_MODEL):  # -> how much of the count the lm_head is, for a preset
    m = costs.preset(key)
    head, matmul = costs.lm_head_params(m), costs.matmul_params(m)
    return (f"The lm_head is counted at every prompt position, as in training; serving needs "
            f"it at the last one only ({m.name}: {fmt.scale_words(head)} of its "
            f"{fmt.scale_words(matmul)} matmul parameters, {fmt.percent(head / matmul)}).")


CONVENTIONS = (
    "A multiply-add is 2 FLOPs. *Matmul parameters* are the parameters "
    "of every layer's matrices plus the output layer (lm_head), counted even when it is tied "
    f"to the embedding: tying saves memory, not work. {lm_head_note()} "
    "Looking up an embedding costs nothing; "
    "norms, softmax, RoPE and biases are left out. A triangular kernel pays n²/2 (query, key) "
    "pairs for an n-token prompt (n²/2, within n/2 of the exact n(n+1)/2); a naive "
    "kernel computes "
    "the whole n² square, masked half included. A decode step with c tokens of context pays "
    "c pairs, whatever the kernel.")

INTRO = (
    "Attention's arithmetic is its scores and its weighted sum of values, one pair of each "
    "per (query, key). Everything else (the query, key, value and output projections, the "
    "feed-forward network, the output layer) does a fixed amount of work per token, so it "
    "grows only in step with the prompt. Attention grows with the prompt's square, and "
    "the crossover is the prompt length where the two are equal.")

READOUT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Prefill</b> of a {hole("prompt")}-token prompt{hole("beyond")}: attention is '
    f'<b data-s="share"></b> of the arithmetic, everything else {hole("rest")} '
    f'({hole("kernel")}; {hole("attention")} against {hole("other")} FLOPs).</p>'
    '<p><b>One decode step</b>: attention is <b data-s="first"></b> of the first step\'s '
    f'arithmetic (context {hole("first_context")} tokens) and <b data-s="last"></b> of the '
    f'last one\'s, token {hole("token")} of {hole("generate")} (context '
    f'{hole("last_context")} tokens).</p>'
    '<p><b>Crossover</b>, where prefill attention equals everything else: '
    f'{hole("tri_at")}<b data-s="tri"></b>{hole("tri_tokens")} with the triangular kernel, '
    f'{hole("naive_at")}<b data-s="naive"></b>{hole("naive_tokens")} with the naive '
    f'one.{hole("reach")}</p>'
    f'<p><b>Matmul parameters</b>: {hole("params")} (≈ {hole("params_short")}), each doing '
    '2 FLOPs per token.</p>'
    f'<p><b>FLOPs per (query, key) pair</b>, all layers: {hole("formula")} = '
    f'<b data-s="pair_flops"></b>. Query heads, {hole("kv")}: grouped-query attention '
    'shrinks the cache, not this.</p>'
    f'<p><b>Memory</b>: the model\'s parameters take {hole("weights")}. '
    f'{hole("weight_rule")} The KV cache takes {hole("kv_token")} bytes per token, '
    f'{hole("kv_user")} for one user at the first decode step\'s context. '
    f'{hole("cache_rule")}</p></div>')

CAPTION = (f'<p class="ae-caption" aria-live="polite">{hole("model_name")}: attention\'s share of '
           "prefill arithmetic against prompt length</p>")

CostReadout = readout_class("CostReadout", READOUT, module=__name__)
CostCaption = readout_class("CostCaption", CAPTION, module=__name__)


def pair_formula(m):  # ModelShape -> "4 × 36 layers × 32 query heads × 128 head_dim"
    if not m.attention_layers:  # Mamba
        return "no layer attends, so no pairs"
    # a hybrid's layers without attention do no pairs: the attention layers alone
    layers = (f"{m.layers:,} layers" if m.attention_layers == m.layers else
              f"{m.attention_layers:,} attention layers")
    if m.head_dim == m.v_head_dim:
        return f"4 × {layers} × {m.heads:,} query heads × {m.head_dim:,} head_dim"
    return (f"2 × {layers} × {m.heads:,} query heads × ({m.head_dim:,} query/key "
            f"dims + {m.v_head_dim:,} value dims)")


@functools.lru_cache(maxsize=64)
def curve_data(m):  # ModelShape -> {kernel: (share of prefill over CURVE_N)}, cached per model
    return {k: tuple(rounded(costs.prefill_attention_share(m, CURVE_N, k), SHARE_DIGITS))
            for k in KERNELS}


def at_tokens(n):  # tokens -> (before, bold, after): "at <b>51,324</b> tokens" or "<b>never</b>"
    return ("", "never", "") if not math.isfinite(n) else ("at ", f"{round(n):,}", " tokens")


def marker(name, x, text):  # a vertical marker and its label; hidden when off the chart
    shown = x is not None and math.isfinite(x) and 1 <= x <= CHART_MAX
    right = shown and x > 2048  # labels left of the line near the right edge
    return {
        f"prop:{name}_span.location": float(x) if shown else 1.0,
        f"prop:{name}_span.visible": shown,
        f"prop:{name}_label.x": float(x) if shown else 1.0,
        f"prop:{name}_label.text": text if shown else "",
        f"prop:{name}_label.visible": shown,
        f"prop:{name}_label.text_align": "right" if right else "left",
        f"prop:{name}_label.x_offset": -4 if right else 4,
    }


# --- the state: parts, each a pure function of some of the controls ---------------------------
# `model` is a preset's key (the table) or your config's Model (live): shape_of reads either

def model_state(model):  # the curves, the max position, and the text fixed by the model
    m = shape_of(model)
    curves = curve_data(m)
    tri, naive = (costs.crossover_tokens(m, k) for k in ("triangular", "naive"))
    params, pairs = costs.matmul_params(m), costs.pair_flops(m)
    kv = ("which this model has none of" if not m.attention_layers else
          f"not the {m.kv_heads:,} KV heads" if m.kv_heads != m.heads
          else "which here equal the KV heads")
    (tri_at, tri_n, tri_tokens), (naive_at, naive_n, naive_tokens) = map(at_tokens, (tri, naive))
    return {
        "source:curve": {k: list(v) for k, v in curves.items()},
        "holes:caption": {"model_name": m.name},
        **marker("maxpos", m.max_positions, f"max position {fmt.thousands(m.max_positions or 0)}"),
        "holes:crossover": {"tri_at": tri_at, "tri": tri_n, "tri_tokens": tri_tokens,
                            "naive_at": naive_at, "naive": naive_n,
                            "naive_tokens": naive_tokens},
        "holes:params": {"params": fmt.thousands(params), "params_short": fmt.scale_words(params)},
        "holes:pairs": {"formula": pair_formula(m), "pair_flops": fmt.thousands(pairs), "kv": kv},
        "holes:memory": {
            "weights": fmt.gb_and_gib(costs.weight_bytes(m, BF16)),
            "weight_rule": costs.weight_convention(m, "bf16"),
            "kv_token": fmt.thousands(costs.kv_bytes_per_token(m, BF16)),
            "cache_rule": costs.cache_convention(m)},
    }


def crossover_state(model, kernel):  # the chosen kernel's crossover: marker and its reach
    m = shape_of(model)
    here = costs.crossover_tokens(m, kernel)
    reach = ""
    if m.max_positions:
        where = "beyond" if here > m.max_positions else "within"
        reach = (f" The config's max position is {m.max_positions:,}: the {kernel} "
                 f"kernel's crossover lies {where} it.")
    return {"holes:reach": {"reach": reach},
            **marker("cross", here, f"crossover {fmt.tokens_or_never(here)}")}


def kernel_state(kernel):  # the chosen kernel's line stands out; the dot takes its colour
    out = {}
    for k in KERNELS:
        out[f"prop:{k}_line.line_width"] = 3.5 if k == kernel else 1.5
        out[f"prop:{k}_line.line_alpha"] = 1.0 if k == kernel else 0.6
    out["prop:marker.fill_color"] = COLOURS[kernel]
    return out


def prefill_state(model, prompt, kernel):  # the prompt's dot on the curve, and prefill's text
    m = shape_of(model)
    share = float(costs.prefill_attention_share(m, prompt, kernel))
    beyond = ""
    if m.max_positions and prompt > m.max_positions:
        beyond = (f" (longer than the model's max position of {m.max_positions:,}: counted "
                  "anyway, as arithmetic)")
    return {
        "source:marker": {"n": [prompt], "share": [share]},
        "holes:prefill": {
            "prompt": fmt.thousands(prompt), "beyond": beyond, "share": fmt.percent(share),
            "rest": fmt.percent(1 - share),
            "kernel": ("triangular kernel, n²/2 pairs" if kernel == "triangular"
                       else "naive kernel, n² pairs"),
            "attention": fmt.scale_words(costs.attention_flops_prefill(m, prompt, kernel)),
            "other": fmt.scale_words(costs.other_flops_prefill(m, prompt))},
    }


def first_step_state(model, prompt):  # the first decode step sees the prompt
    m = shape_of(model)
    return {"holes:first_step": {
        "first": fmt.percent(costs.decode_attention_share(m, prompt)),
        "first_context": fmt.thousands(prompt),
        "kv_user": fmt.gb_and_gib(costs.kv_cache_bytes(m, prompt, 1, BF16))}}


def last_step_state(model, prompt, generate):
    # the last decode step sees the prompt and every earlier new token
    m, last = shape_of(model), prompt + generate - 1
    return {"holes:last_step": {
        "last": fmt.percent(costs.decode_attention_share(m, last)),
        "token": fmt.thousands(generate), "generate": fmt.thousands(generate),
        "last_context": fmt.thousands(last)}}


class CostPanel(CostStatePanel):
    """Attention's share of prefill and decode arithmetic for a real model's config."""

    model = model_selector(DEFAULT_MODEL)
    prompt = param.Integer(default=4096, bounds=(1, MAX_PROMPT), label="prompt tokens",
                           doc="Tokens in the prompt, all processed at once by prefill.")
    generate = param.Integer(default=4096, bounds=(1, MAX_PROMPT), label="tokens to generate",
                             doc="Tokens produced one decode step at a time after the prompt.")
    kernel = param.Selector(default="triangular", objects=dict(KERNEL_LABELS), label="kernel",
                            doc="Triangular skips the masked blocks (n²/2); naive does n².")

    calculator = True
    intro = INTRO
    conventions = CONVENTIONS

    own_controls = (power_control("prompt", MAX_PROMPT), power_control("generate", MAX_PROMPT),
                    Control.choice("kernel", KERNELS))
    own_parts = (Part(("model",), model_state), Part(("model", "kernel"), crossover_state),
                 Part(("kernel",), kernel_state),
                 Part(("model", "prompt", "kernel"), prefill_state),
                 Part(("model", "prompt"), first_step_state),
                 Part(("model", "prompt", "generate"), last_step_state))

    # ---- what tests and the article read -----------------------------------------------

    def numbers(self):  # -> the headline numbers for the current model and controls
        m, p, k = shape_of(self.params()["model"]), self.prompt, self.kernel
        return {"shape": m, "prefill_share": costs.prefill_attention_share(m, p, k),
                "crossover": costs.crossover_tokens(m, k),
                "decode_first": costs.decode_attention_share(m, p),
                "decode_last": costs.decode_attention_share(m, p + self.generate - 1)}

    # ---- the view, built once from the first state -------------------------------------

    def build_body(self, state):
        self._build_figure(state)
        self.targets.update({
            "source:curve": self.curve_source, "source:marker": self.marker_source,
            "prop:marker.fill_color": self.marker.glyph,
            **{f"prop:{k}_line.{a}": self.lines[k].glyph for k in KERNELS
               for a in ("line_width", "line_alpha")},
            **{f"prop:{name}_{kind}.{a}": model
               for name, span, label in (("cross", self.cross_span, self.cross_label),
                                         ("maxpos", self.maxpos_span, self.maxpos_label))
               for kind, model, attrs in (("span", span, ("location", "visible")),
                                          ("label", label, ("x", "text", "visible",
                                                            "text_align", "x_offset")))
               for a in attrs}})
        self.readout = self.add_readout(
            CostReadout, state, "holes:prefill", "holes:first_step", "holes:last_step",
            "holes:crossover", "holes:reach", "holes:params", "holes:pairs", "holes:memory")
        self.caption = self.add_readout(CostCaption, state, "holes:caption")
        self.prompt_slider = self.power_slider(
            "prompt", "prompt tokens, powers of two", MAX_PROMPT, sizing_mode="stretch_width",
            min_width=180, max_width=320)
        self.generate_slider = self.power_slider(
            "generate", "tokens to generate, powers of two", MAX_PROMPT,
            sizing_mode="stretch_width", min_width=180, max_width=320)
        self.prompt_input = self.number_box("prompt", f"prompt tokens (1–{MAX_PROMPT:,})",
                                            step=256, width=200)
        self.generate_input = self.number_box(
            "generate", f"tokens to generate (1–{MAX_PROMPT:,})", step=256, width=200)
        self.kernel_buttons = self.choice_buttons("kernel", orientation="vertical", width=260)
        controls = self.row(self.prompt_slider, self.prompt_input, self.generate_slider,
                            self.generate_input, self.labelled("kernel", self.kernel_buttons))
        hint = pn.pane.HTML(
            '<p class="ae-hint">The chart: attention\'s share of prefill arithmetic for every '
            "prompt length, both kernels. The dashed vertical line marks the crossover for the "
            "chosen kernel, the grey dash-dot line the model's max position, the dot your "
            "prompt; the dotted line is 50%.</p>", sizing_mode="stretch_width", margin=(0, 10),
            stylesheets=[PICKER_CSS])
        return [controls, self.readout, self.caption,
                pn.pane.Bokeh(self.figure, height=HEIGHT, sizing_mode="stretch_width",
                              min_width=240), hint]

    def _build_figure(self, state):
        # the x column never changes; a state sets the shares, the dot, the markers
        self.curve_source = ColumnDataSource({"n": CURVE_N.tolist(), **state["source:curve"]})
        self.marker_source = ColumnDataSource(state["source:marker"])
        fig = figure(title=None, height=HEIGHT, sizing_mode="stretch_width", min_width=240,
                     tools="", toolbar_location=None, x_axis_type="log",
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
        self.cross_label = Label(x=1, y=0.93, text="", text_font_size="12px",
                                 text_color=paint.strong, background_fill_color=paint.paper,
                                 background_fill_alpha=0.8)
        self.maxpos_label = Label(x=1, y=0.78, text="", text_font_size="12px",
                                  text_color=paint.muted, background_fill_color=paint.paper,
                                  background_fill_alpha=0.8)
        for model in (self.cross_span, self.maxpos_span, self.cross_label, self.maxpos_label):
            fig.add_layout(model)
        fig.add_tools(HoverTool(renderers=[self.lines["triangular"]], mode="vline", tooltips=[
            ("prompt", "@n{0,0} tokens"), ("triangular", "@triangular{0.0%}"),
            ("naive", "@naive{0.0%}")]))
        fig.add_layout(Legend(items=items, ncols=2, label_text_font_size="12px",
                              border_line_alpha=0, padding=2, spacing=0), "below")
        fig.xaxis.ticker = FixedTicker(ticks=[1, 16, 256, 4096, 65536])
        fig.xaxis.major_label_overrides = {1: "1", 16: "16", 256: "256", 4096: "4,096",
                                           65536: "65,536"}
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.xaxis.axis_label = "prompt length, tokens (log scale)"
        fig.yaxis.axis_label = "attention's share of prefill FLOPs"
        chrome.quiet_axes(fig)
        self.figure = fig
