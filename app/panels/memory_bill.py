"""The memory bill: what a served model holds in memory, and what prefill needs on the side.

The weights are a fixed cost whatever the context; the cache grows by a fixed number of bytes per
token, per user, until it outweighs them. Prefill has a separate problem: a kernel that
writes out the n × n scores needs gigabytes of scratch per layer, while a fused kernel keeps
one small tile at a time and never writes the square.

The panel has the one shape (app/kit/states.py) on the cost panels' base (app/panels/cost_base.py):
model (three presets) × users (1 to 1,024), context (1 to 1,048,576) and prompt (1 to
131,072) on power-of-two stops × bytes per value. The parts: the weights and one user's
cache curve (model, bytes), the batch's cache curve and where it catches the weights
(model, users, bytes), the cache at the chosen context (model, users, context, bytes: the
same bytes for the same users × context, so the table holds each once) and the prefill
scratch (model, prompt, bytes). A live session also counts any number typed and your own
config.json, through the same parts.
"""

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
    Range1d,
    Span,
)
from bokeh.plotting import figure

from app.kit import chrome, fmt
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part
from app.panels.cost_base import CostStatePanel, power_control, rounded
from app.panels.model_picker import model_selector, shape_of
from attention_core import costs

DTYPES = {"bf16": 2, "fp8": 1, "fp32": 4}  # bytes per value
DTYPE_LABELS = {"bf16 (2 bytes)": "bf16", "fp8 (1 byte)": "fp8", "fp32 (4 bytes)": "fp32"}
DTYPE_KEYS = tuple(DTYPE_LABELS.values())  # in the buttons' order
MAX_CONTEXT = 1_048_576
MAX_USERS = 1024
MAX_PROMPT = 131_072
TILE = 128  # a fused kernel's block of queries × keys, per head
CHART_X = (64, MAX_CONTEXT)
CHART_Y = (1e-3, 1e5)  # GB
CURVE_CONTEXT = np.unique(np.geomspace(*CHART_X, 160).round())
GB_DIGITS = 4  # significant digits of a curve's GB: more than a log-log chart can show
# the readout's byte totals: 3 digits, so parameters + cache visibly add up (16.1 + 0.537)
TOTAL_DIGITS = 3
WEIGHTS, KV, ONE_USER = "#0072B2", "#D55E00", "#E69F00"  # Okabe-Ito; the crossing: theme ink
HEIGHT = 320

CONVENTIONS = (
    "The parameters are every number the model stores (embedding, every "
    "layer's matrices, norms and biases, and lm_head unless it is tied to the embedding) × "
    "bytes per value, as Transformers' model code builds them. The KV cache "
    "holds, per token and per user, 2 (K and V) × layers × KV heads × head_dim values. "
    "Sliding-window layers hold at most their window. Activations and framework overhead "
    "are left out. GB = 10⁹ bytes, GiB = 2³⁰ bytes; MB = 10⁶, MiB = 2²⁰; KiB = 2¹⁰.")

INTRO = (
    "Two things dominate the memory of a served model. Its parameters (the numbers it learned) are "
    "a fixed cost, the same for a one-word chat as for a novel. The key/value cache grows "
    "with every token of every conversation, so with enough context, or enough users, it "
    "outgrows the parameters.")

READOUT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Parameters</b>: {hole("params")} parameters × {hole("bytes")} {hole("byte_word")} = '
    f'<b data-s="weights"></b>, fixed; a decode step streams {hole("read")}, however long '
    "the conversation.</p>"
    f'<p><b>KV cache</b>: {hole("kv_token")} bytes ({hole("kv_token_binary")}) per token, per '
    f'user. For {hole("who")} at {hole("context")} tokens{hole("each")}: '
    f'<b data-s="kv_all"></b>. Parameters plus cache: {hole("total")}.{hole("window")}</p>'
    "<p><b>Where the cache catches the parameters</b>: one user's cache outweighs them "
    f'{hole("one_at")}<b data-s="one"></b>{hole("one_tokens")}{hole("one_approx")}.'
    f'{hole("all_lead")}<b data-s="all"></b>{hole("all_tail")}</p></div>')

SCRATCH = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Prefill scratch</b>, prompt of {hole("prompt")} tokens. A kernel that writes the '
    f'scores out makes an n × n square per head: {hole("prompt_squared")}² = '
    f'{hole("scores")} scores (≈ <b data-s="scores_short"></b>); × {hole("heads")} heads × '
    f'{hole("scratch_bytes")} = <b data-s="eager"></b> of scratch per layer.</p>'
    "<p>A fused kernel never writes the square. As an illustration, if each head held one "
    f'{hole("tile")} × {hole("tile_w")} tile of scores at a time: {hole("tile_scores")} '
    f'scores × {hole("tile_heads")} heads × {hole("tile_bytes")} = <b data-s="fused"></b>, '
    f'{hole("ratio")} times less. Real kernels choose their own tile shapes, run many tiles '
    "at once across the GPU's cores and keep them on chip in float32; the chapter "
    '<a href="../flash/">FlashAttention: attention without the square</a> counts the bytes '
    "it saves.</p></div>")

CAPTION = (f'<p class="ae-caption" aria-live="polite">{hole("model_name")}, {hole("dtype")}: '
           "parameters against the KV cache as the context grows (log-log)</p>")

MemoryReadout = readout_class("MemoryReadout", READOUT, module=__name__)
ScratchReadout = readout_class("MemoryScratchReadout", SCRATCH, module=__name__)
CaptionReadout = readout_class("MemoryCaptionReadout", CAPTION, module=__name__)


def byte_word(b):  # 1 -> "byte", 2 -> "bytes"
    return "byte" if b == 1 else "bytes"


def at_tokens(n):  # tokens -> (before, bold, after): "at <b>N</b> tokens" or "<b>never</b>"
    return ("", "never", "") if not math.isfinite(n) else ("at ", f"{round(n):,}", " tokens")


def gb(nbytes):  # bytes (scalar or array) -> GB, rounded for the chart
    return rounded(np.atleast_1d(nbytes) / 1e9, GB_DIGITS)


def numbers(m, users, context, prompt, dtype):  # -> the headline numbers (tests, the article)
    b = DTYPES[dtype]
    return {"shape": m, "users": users, "context": context, "prompt": prompt, "bytes": b,
            "weights": costs.weight_bytes(m, b),
            "kv_all": costs.kv_cache_bytes(m, context, users, b),
            "cross_one": costs.kv_outweighs_weights_context(m, 1, b),
            "cross_users": costs.kv_outweighs_weights_context(m, users, b),
            "eager": costs.eager_score_matrix_bytes(m, prompt, 1, b),
            "fused": min(TILE, prompt) ** 2 * m.heads * b}


# --- the state: parts, each a pure function of some of the controls ---------------------------
# `model` is a preset's key (the table) or your config's Model (live): shape_of reads either

def window_state(model):  # what a sliding window does to the cache, if the model has one
    m = shape_of(model)
    window = ""
    if m.sliding_layers:
        window = (f" Sliding-window layers stop growing at {m.sliding_window:,} tokens, so "
                  "the cache grows more slowly past it.")
    return {"holes:window": {"window": window}}


def read_per_step(m, b):  # -> what a decode step streams of the parameters, in words
    where = "every matrix a token multiplies; a lookup table gives one row"
    if m.quant_method:  # weight_bytes_read does not count packing: no number
        return f"the part of them a token uses ({where})"
    return f"{fmt.gb_and_gib(costs.weight_bytes_read(m, b), TOTAL_DIGITS)} of them ({where})"


def weights_state(model, dtype):  # the parameters, one user's cache: per token, curve, crossing
    m, b = shape_of(model), DTYPES[dtype]
    weights, per_token = costs.weight_bytes(m, b), costs.kv_bytes_per_token(m, b)
    one = costs.kv_outweighs_weights_context(m, 1, b)
    one_at, one_n, one_tokens = at_tokens(one)
    return {
        "holes:weights": {"params": fmt.thousands(costs.total_params(m)), "bytes": str(b),
                          "byte_word": byte_word(b),
                          "weights": fmt.gb_and_gib(weights, TOTAL_DIGITS),
                          "read": read_per_step(m, b),
                          "kv_token": fmt.thousands(per_token),
                          "kv_token_binary": fmt.binary_bytes(per_token)},
        "holes:one_user": {"one_at": one_at, "one": one_n, "one_tokens": one_tokens,
                           "one_approx": (f" (≈ {fmt.scale_words(one, 2)})" if math.isfinite(one)
                                          else ": the window caps the cache below the "
                                               "parameters" if m.attention_layers else
                                          ": no layer attends, so there is no KV cache")},
        "source:curve_one": {"weights": gb(np.full(CURVE_CONTEXT.shape, weights)),
                             "kv_one": gb(costs.kv_cache_bytes(m, CURVE_CONTEXT, 1, b))},
        "holes:caption": {"model_name": m.name, "dtype": dtype},
    }


def batch_state(model, users, dtype):  # where the batch's caches catch the weights
    m, b = shape_of(model), DTYPES[dtype]
    cross = costs.kv_outweighs_weights_context(m, users, b)
    all_lead = all_n = all_tail = ""
    if users > 1:
        all_at, all_n, all_tokens = at_tokens(cross)
        each = " each" if math.isfinite(cross) else ""
        all_lead = (f" With {users:,} users their caches together outweigh the parameters "
                    f"{all_at}")
        all_tail = f"{all_tokens}{each}."
    shown = math.isfinite(cross) and CHART_X[0] <= cross <= CHART_X[1]
    # the label goes left of the line past the first 30% of the (log) axis: a label of about
    # 28 characters right of the line would run past a phone's frame there
    lo, hi = (math.log(x) for x in CHART_X)
    right = shown and (math.log(cross) - lo) / (hi - lo) > 0.3
    return {
        "holes:all_users": {"all_lead": all_lead, "all": all_n, "all_tail": all_tail},
        "prop:cross_span.location": float(cross) if shown else float(CHART_X[0]),
        "prop:cross_span.visible": shown,
        "prop:cross_label.x": float(cross) if shown else float(CHART_X[0]),
        "prop:cross_label.text": (f"cache = parameters at {fmt.tokens_or_never(cross)}"
                                  if shown else ""),
        "prop:cross_label.visible": shown,
        "prop:cross_label.text_align": "right" if right else "left",
        "prop:cross_label.x_offset": -4 if right else 4,
    }


def batch_curve_state(model, users, dtype):
    # the batch's cache over the context axis: the same curve for the same users × bytes,
    # so the table holds each once
    m, b = shape_of(model), DTYPES[dtype]
    return {"source:curve_kv": {"kv": gb(costs.kv_cache_bytes(m, CURVE_CONTEXT, users, b))}}


def users_state(users):  # whose cache the chart and the text count
    return {
        "holes:who": {"who": "one user" if users == 1 else f"{users:,} users",
                      "each": " each" if users > 1 else ""},
        "prop:kv_item.label": {"value": "KV cache, one user" if users == 1
                               else f"KV cache, {users:,} users"},
        "prop:one_line.visible": users != 1, "prop:one_item.visible": users != 1,
    }


def context_state(context):  # the dot's place on the context axis
    return {"holes:context": {"context": f"{context:,}"},
            "source:marker_x": {"context": [min(max(float(context), CHART_X[0]), CHART_X[1])]}}


def cache_state(model, users, context, dtype):
    # the cache at the chosen context: the same for the same users × context (and bytes), so
    # the table holds each value once
    m, b = shape_of(model), DTYPES[dtype]
    kv = costs.kv_cache_bytes(m, context, users, b)
    return {"holes:cache": {"kv_all": fmt.gb_and_gib(kv, TOTAL_DIGITS),
                            "total": fmt.gb_and_gib(costs.weight_bytes(m, b) + kv,
                                                    TOTAL_DIGITS)}}


def marker_state(model, users, context, dtype):  # the dot: the cache at the chosen context
    m, b = shape_of(model), DTYPES[dtype]
    x = min(max(float(context), CHART_X[0]), CHART_X[1])
    return {"source:marker_kv": {"kv": [float(costs.kv_cache_bytes(m, x, users, b)) / 1e9]}}


def scratch_state(model, prompt, dtype):  # an eager kernel's n × n scores against a fused tile
    m, b = shape_of(model), DTYPES[dtype]
    t = min(TILE, prompt)
    eager, fused = costs.eager_score_matrix_bytes(m, prompt, 1, b), t * t * m.heads * b
    scores = float(prompt) * prompt
    per = f"{b} {byte_word(b)}"
    return {"holes:scratch": {
        "prompt": f"{prompt:,}", "prompt_squared": f"{prompt:,}", "scores": fmt.thousands(scores),
        "scores_short": fmt.scale_words(scores, 2), "heads": f"{m.heads:,}", "scratch_bytes": per,
        "eager": fmt.gb_and_gib(eager), "tile": str(t), "tile_w": str(t),
        "tile_scores": f"{t * t:,}", "tile_heads": f"{m.heads:,}", "tile_bytes": per,
        "fused": fmt.gb_and_gib(fused), "ratio": f"{eager / fused:,.0f}"}}


class MemoryBillPanel(CostStatePanel):
    """Parameters against the KV cache as context and users grow; prefill's n × n scratch."""

    model = model_selector("llama-3-8b")
    users = param.Integer(default=1, bounds=(1, MAX_USERS), label="users",
                          doc="Conversations held at once, each with its own cache.")
    context = param.Integer(default=4096, bounds=(1, MAX_CONTEXT), label="context tokens",
                            doc="Tokens in each user's conversation so far.")
    prompt = param.Integer(default=8192, bounds=(1, MAX_PROMPT), label="prompt tokens",
                           doc="Prompt length for the prefill scratch comparison.")
    dtype = param.Selector(default="bf16", objects=dict(DTYPE_LABELS), label="bytes per value",
                           doc="How parameters, keys and values are stored.")

    intro = INTRO
    conventions = CONVENTIONS

    own_controls = (power_control("users", MAX_USERS), power_control("context", MAX_CONTEXT),
                    power_control("prompt", MAX_PROMPT), Control.choice("dtype", DTYPE_KEYS))
    own_parts = (Part(("model",), window_state), Part(("model", "dtype"), weights_state),
                 Part(("model", "users", "dtype"), batch_state),
                 Part(("model", "users", "dtype"), batch_curve_state),
                 Part(("users",), users_state), Part(("context",), context_state),
                 Part(("model", "users", "context", "dtype"), cache_state),
                 Part(("model", "users", "context", "dtype"), marker_state),
                 Part(("model", "prompt", "dtype"), scratch_state))

    # ---- what tests and the article read -----------------------------------------------

    def numbers(self):  # -> the headline numbers for the current model and controls
        return numbers(shape_of(self.params()["model"]), self.users, self.context,
                       self.prompt, self.dtype)

    # ---- the view, built once from the first state -------------------------------------

    def build_body(self, state):
        self._build_figure(state)
        self.readout = self.add_readout(
            MemoryReadout, state, "holes:weights", "holes:who", "holes:context", "holes:cache",
            "holes:window", "holes:one_user", "holes:all_users")
        self.scratch = self.add_readout(ScratchReadout, state, "holes:scratch")
        self.caption = self.add_readout(CaptionReadout, state, "holes:caption")
        (self.context_slider, self.context_input, self.users_slider,
         self.users_input) = self.context_and_users(MAX_CONTEXT, 1024, MAX_USERS, "users",
                                                    "users", 150)
        self.dtype_buttons = self.choice_buttons("dtype", sizing_mode="stretch_width",
                                                 max_width=380)
        self.prompt_slider = self.power_slider(
            "prompt", "prompt tokens, powers of two", MAX_PROMPT, sizing_mode="stretch_width",
            min_width=180, max_width=320)
        self.prompt_input = self.number_box("prompt", f"prompt tokens (1–{MAX_PROMPT:,})",
                                            step=1024, width=200)
        controls = self.row(
            self.context_slider, self.context_input, self.users_slider, self.users_input,
            self.labelled("bytes per value", self.dtype_buttons, sizing_mode="stretch_width",
                          max_width=400))
        return [controls, self.readout, self.caption,
                pn.pane.Bokeh(self.figure, height=HEIGHT, sizing_mode="stretch_width",
                              min_width=240),
                self.row(self.prompt_slider, self.prompt_input), self.scratch]

    def _build_figure(self, state):
        # the context column never changes; a state sets the bytes (the weights and one
        # user's cache, and the batch's cache, from two parts) and the dot's two coordinates
        self.curve_source = ColumnDataSource({"context": CURVE_CONTEXT.tolist(),
                                              **state["source:curve_one"],
                                              **state["source:curve_kv"]})
        self.marker_source = ColumnDataSource({**state["source:marker_x"],
                                               **state["source:marker_kv"]})
        fig = figure(title=None, height=HEIGHT, sizing_mode="stretch_width", min_width=240,
                     tools="", toolbar_location=None, x_axis_type="log", y_axis_type="log",
                     x_range=Range1d(*CHART_X), y_range=Range1d(*CHART_Y),
                     outline_line_color=None, min_border_right=12)
        weights = fig.line("context", "weights", source=self.curve_source, line_color=WEIGHTS,
                           line_width=3)
        kv = fig.line("context", "kv", source=self.curve_source, line_color=KV, line_width=3)
        self.one_line = fig.line("context", "kv_one", source=self.curve_source,
                                 line_color=ONE_USER, line_width=2, line_dash="dashed")
        marker = fig.scatter("context", "kv", source=self.marker_source, size=11,
                             fill_color=KV, line_color="#000000")
        paint = self._ink
        self.cross_span = Span(location=CHART_X[0], dimension="height", line_color=paint.strong,
                               line_dash="dashed", line_width=1.5)
        self.cross_label = Label(x=CHART_X[0], y=CHART_Y[0] * 3, text="",
                                 text_font_size="12px", text_color=paint.text,
                                 background_fill_color=paint.paper, background_fill_alpha=0.8)
        fig.add_layout(self.cross_span)
        fig.add_layout(self.cross_label)
        self.kv_item = LegendItem(label="KV cache", renderers=[kv])
        self.one_item = LegendItem(label="KV cache, one user", renderers=[self.one_line])
        fig.add_layout(Legend(items=[
            LegendItem(label="parameters", renderers=[weights]), self.kv_item,
            self.one_item,
            LegendItem(label="your context", renderers=[marker]),
        ], location="top_left", label_text_font_size="12px", background_fill_alpha=0.85,
            padding=4, spacing=0))
        fig.add_tools(HoverTool(renderers=[kv], mode="vline", tooltips=[
            ("context", "@context{0,0} tokens"), ("KV cache", "@kv{0.00} GB"),
            ("parameters", "@weights{0.0} GB")]))
        fig.xaxis.ticker = FixedTicker(ticks=[64, 1024, 16384, 262144])
        fig.xaxis.major_label_overrides = {64: "64", 1024: "1,024", 16384: "16,384",
                                           262144: "262,144"}
        fig.yaxis.ticker = FixedTicker(ticks=[1e-3, 1e-2, 0.1, 1, 10, 100, 1e3, 1e4, 1e5])
        fig.yaxis.major_label_overrides = {0.001: "0.001", 0.01: "0.01", 0.1: "0.1", 1: "1",
                                           10: "10", 100: "100", 1000: "1,000",
                                           10000: "10,000", 100000: "100,000"}
        fig.xaxis.axis_label = "context tokens per user (log)"
        fig.yaxis.axis_label = "GB, 10⁹ bytes (log)"
        chrome.quiet_axes(fig)
        self.figure = fig
        self.targets.update({
            "source:curve_one": self.curve_source, "source:curve_kv": self.curve_source,
            "source:marker_x": self.marker_source, "source:marker_kv": self.marker_source,
            "prop:cross_span.location": self.cross_span,
            "prop:cross_span.visible": self.cross_span,
            **{f"prop:cross_label.{a}": self.cross_label
               for a in ("x", "text", "visible", "text_align", "x_offset")},
            "prop:kv_item.label": self.kv_item, "prop:one_line.visible": self.one_line,
            "prop:one_item.visible": self.one_item})
