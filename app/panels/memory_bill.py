"""The memory bill: fixed weights against a key/value cache that grows with every token.

The weights cost the same at any context; the cache grows by a fixed number of bytes per
token, per user, until it outweighs them. Prefill has a separate problem: a kernel that
writes out the n × n scores needs gigabytes of scratch per layer, while a fused kernel keeps
one small tile at a time and never writes the square.
"""

import html
import math

import numpy as np
import panel as pn
import param
from bokeh.core.properties import value
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

from app import chrome
from app.model_picker import (
    CODE_CSS,
    PICKER_CSS,
    ModelPicker,
    at_tokens,
    binary_size,
    grouped,
    ink,
    link_model,
    model_selector,
    short,
    size_text,
    tokens,
)
from attention_core import costs

DTYPES = {"bf16": 2, "fp8": 1, "fp32": 4}  # bytes per value
DTYPE_LABELS = {"bf16 (2 bytes)": "bf16", "fp8 (1 byte)": "fp8", "fp32 (4 bytes)": "fp32"}
MAX_CONTEXT = 1_048_576
MAX_USERS = 1024
MAX_PROMPT = 131_072
TILE = 128  # a fused kernel's block of queries × keys, per head
CHART_X = (64, MAX_CONTEXT)
CHART_Y = (1e-3, 1e5)  # GB
CURVE_CONTEXT = np.unique(np.geomspace(*CHART_X, 160).round())
WEIGHTS, KV, ONE_USER = "#0072B2", "#D55E00", "#E69F00"  # Okabe-Ito; the crossing: theme ink
HEIGHT = 320

CONVENTIONS = (
    "**How this counts.** Weights are every stored parameter (embedding, every layer, the "
    "norms, and lm_head unless it is tied to the embedding) × bytes per value. The KV cache "
    "holds, per token and per user, 2 (K and V) × layers × KV heads × head_dim values. "
    "Sliding-window layers hold at most their window. Activations and framework overhead "
    "are left out. GB = 10⁹ bytes, GiB = 2³⁰ bytes; MB = 10⁶, MiB = 2²⁰; KiB = 2¹⁰.")


INTRO = (
    "Serving a model holds two things in memory. The weights are a fixed cost, the same for "
    "a one-word chat as for a novel. The key/value cache grows with every token of every "
    "conversation, so with enough context, or enough users, it outgrows the weights.")


def curve_data(m, users, nbytes):  # -> weights and caches over CURVE_CONTEXT, in GB
    weights = float(costs.weight_bytes(m, nbytes)) / 1e9
    return {"context": CURVE_CONTEXT,
            "weights": np.full(CURVE_CONTEXT.shape, weights),
            "kv": costs.kv_cache_bytes(m, CURVE_CONTEXT, users, nbytes) / 1e9,
            "kv_one": costs.kv_cache_bytes(m, CURVE_CONTEXT, 1, nbytes) / 1e9}


class MemoryBillPanel(pn.viewable.Viewer):
    """Weights against the KV cache as context and users grow; prefill's n × n scratch."""

    model = model_selector("llama-3-8b")
    users = param.Integer(default=1, bounds=(1, MAX_USERS), label="users",
                          doc="Conversations held at once, each with its own cache.")
    context = param.Integer(default=4096, bounds=(1, MAX_CONTEXT), label="context tokens",
                            doc="Tokens in each user's conversation so far.")
    prompt = param.Integer(default=8192, bounds=(1, MAX_PROMPT), label="prompt tokens",
                           doc="Prompt length for the prefill scratch comparison.")
    dtype = param.Selector(default="bf16", objects=dict(DTYPE_LABELS), label="bytes per value",
                           doc="How weights, keys and values are stored.")

    url_keys = ("model", "users", "context", "prompt", "dtype")

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
        self.scratch = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self.caption = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self._update()
        self.param.watch(lambda *e: self._update(), ["users", "context", "prompt", "dtype"])
        self.picker.param.watch(lambda *e: self._update(), "shape")
        self._layout = self._build_layout()

    # ---- the numbers: pure in the parameters --------------------------------------------

    def numbers(self):  # -> every number shown, for the current model and controls
        m, u, c, p = self.picker.shape, self.users, self.context, self.prompt
        b = DTYPES[self.dtype]
        tile = min(TILE, p)
        return {
            "shape": m, "users": u, "context": c, "prompt": p, "dtype": self.dtype, "bytes": b,
            "params": costs.total_params(m), "weights": costs.weight_bytes(m, b),
            "kv_token": costs.kv_bytes_per_token(m, b),
            "kv_all": costs.kv_cache_bytes(m, c, u, b),
            "kv_one": costs.kv_cache_bytes(m, c, 1, b),
            "cross_one": costs.kv_outweighs_weights_context(m, 1, b),
            "cross_users": costs.kv_outweighs_weights_context(m, u, b),
            "scores_per_head": float(p) * p,
            "eager": costs.eager_score_matrix_bytes(m, p, 1, b),
            "tile": tile, "fused": tile * tile * m.heads * b,
        }

    def readout_html(self, n):
        m, u, c = n["shape"], n["users"], n["context"]
        who = "one user" if u == 1 else f"{u:,} users"
        total = n["weights"] + n["kv_all"]
        cross_users = ""
        if u > 1:
            each = " each" if math.isfinite(n["cross_users"]) else ""
            cross_users = (f" With {u:,} users their caches together outweigh the weights "
                           f"{at_tokens(n['cross_users'])}{each}.")
        approx = (f" (≈ {short(n['cross_one'], 2)})" if math.isfinite(n["cross_one"]) else
                  ": the window caps the cache below the weights")
        window = ""
        if m.sliding_layers:
            window = (f" Sliding-window layers stop growing at {m.sliding_window:,} tokens, so "
                      "the cache grows more slowly past it.")
        return (
            '<div class="ae-readout" aria-live="polite">'
            f"<p><b>Weights</b>: {grouped(n['params'])} parameters × {n['bytes']} "
            f"byte{'s' if n['bytes'] != 1 else ''} = <b>{size_text(n['weights'])}</b>, "
            "fixed, and read once per decode step however long the conversation.</p>"
            f"<p><b>KV cache</b>: {grouped(n['kv_token'])} bytes "
            f"({binary_size(n['kv_token'])}) per token, per user. For {who} at "
            f"{c:,} tokens{' each' if u > 1 else ''}: <b>{size_text(n['kv_all'])}</b>. "
            "Weights plus cache: "
            f"{size_text(total)}.{window}</p>"
            f"<p><b>Where the cache catches the weights</b>: one user's cache outweighs them "
            f"{at_tokens(n['cross_one'])}{approx}."
            f"{cross_users}</p></div>")

    def scratch_html(self, n):
        m, p, b, t = n["shape"], n["prompt"], n["bytes"], n["tile"]
        ratio = n["eager"] / n["fused"]
        return (
            '<div class="ae-readout" aria-live="polite">'
            f"<p><b>Prefill scratch</b>, prompt of {p:,} tokens. A kernel that writes the "
            f"scores out makes an n × n square per head: {p:,}² = "
            f"{grouped(n['scores_per_head'])} scores (≈ <b>{short(n['scores_per_head'], 2)}"
            f"</b>); × {m.heads:,} heads × {b} byte{'s' if b != 1 else ''} = "
            f"<b>{size_text(n['eager'])}</b> of scratch per layer.</p>"
            f"<p>A fused kernel keeps one {t} × {t} tile per head at a time and never writes "
            f"the square: {t * t:,} scores × {m.heads:,} heads × {b} byte{'s' if b != 1 else ''} = "
            f"<b>{size_text(n['fused'])}</b>, held on chip: {ratio:,.0f} times "
            "less.</p></div>")

    # ---- writing them out ---------------------------------------------------------------

    def _update(self):
        n = self.numbers()
        m = n["shape"]
        self.curve_source.data = curve_data(m, n["users"], n["bytes"])
        x = float(np.clip(n["context"], *CHART_X))
        self.marker_source.data = {
            "context": [x], "kv": [float(costs.kv_cache_bytes(m, x, n["users"], n["bytes"]))
                                   / 1e9]}
        cross = n["cross_users"]
        shown = math.isfinite(cross) and CHART_X[0] <= cross <= CHART_X[1]
        self.cross_span.visible = self.cross_label.visible = shown
        if shown:
            self.cross_span.location = cross
            self.cross_label.x = cross
            self.cross_label.text = f"cache = weights at {tokens(cross)}"
            self.cross_label.text_align = "right" if cross > 4096 else "left"
            self.cross_label.x_offset = -4 if cross > 4096 else 4
        self.kv_item.label = value("KV cache, one user" if n["users"] == 1
                                   else f"KV cache, {n['users']:,} users")
        self.one_line.visible = self.one_item.visible = n["users"] != 1
        self.caption.object = (f'<p class="ae-caption" aria-live="polite">'
                               f"{html.escape(m.name)}, {n['dtype']}: weights against the KV "
                               "cache as the context grows (log-log)</p>")
        self.readout.object = self.readout_html(n)
        self.scratch.object = self.scratch_html(n)

    def _build_figure(self):
        self.curve_source = ColumnDataSource({"context": [], "weights": [], "kv": [],
                                              "kv_one": []})
        self.marker_source = ColumnDataSource({"context": [], "kv": []})
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
                                 text_font_size="11px", text_color=paint.text,
                                 background_fill_color=paint.paper, background_fill_alpha=0.8)
        fig.add_layout(self.cross_span)
        fig.add_layout(self.cross_label)
        self.kv_item = LegendItem(label="KV cache", renderers=[kv])
        self.one_item = LegendItem(label="KV cache, one user", renderers=[self.one_line])
        fig.add_layout(Legend(items=[
            LegendItem(label="weights", renderers=[weights]), self.kv_item,
            self.one_item,
            LegendItem(label="your context", renderers=[marker]),
        ], location="top_left", label_text_font_size="11px", background_fill_alpha=0.85,
            padding=4, spacing=0))
        fig.add_tools(HoverTool(renderers=[kv], mode="vline", tooltips=[
            ("context", "@context{0,0} tokens"), ("KV cache", "@kv{0.00} GB"),
            ("weights", "@weights{0.0} GB")]))
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

    # ---- controls -----------------------------------------------------------------------

    def _build_widgets(self):
        self.context_slider = chrome.power_of_two_slider(
            self, "context", "context, powers of two", MAX_CONTEXT, sizing_mode="stretch_width",
            min_width=180, max_width=360)
        self.context_input = pn.widgets.IntInput.from_param(
            self.param.context, label=f"context tokens (1–{MAX_CONTEXT:,})", step=1024,
            width=210)
        self.users_input = pn.widgets.IntInput.from_param(
            self.param.users, label=f"users (1–{MAX_USERS:,})", width=150)
        self.dtype_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.dtype, color="primary", variant="outline",
            sizing_mode="stretch_width", max_width=380)
        self.prompt_input = pn.widgets.IntInput.from_param(
            self.param.prompt, label=f"prompt tokens (1–{MAX_PROMPT:,})", step=1024, width=200)

    def __panel__(self):
        return self._layout

    def _build_layout(self):
        controls = pn.FlexBox(
            self.context_slider, self.context_input, self.users_input,
            pn.Column(pn.pane.HTML("bytes per value", margin=(0, 10)), self.dtype_buttons,
                      sizing_mode="stretch_width", max_width=400, margin=0),
            align_items="flex-end", sizing_mode="stretch_width")
        own = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>The memory bill</h3>", margin=(0, 10)),
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width", stylesheets=[CODE_CSS])]
        return pn.Column(
            *own, self.picker, controls, self.readout, self.caption,
            pn.pane.Bokeh(self.figure, height=HEIGHT, sizing_mode="stretch_width",
                          min_width=240),
            pn.FlexBox(self.prompt_input, sizing_mode="stretch_width"), self.scratch,
            pn.pane.Markdown(CONVENTIONS, sizing_mode="stretch_width", stylesheets=[CODE_CSS]),
            css_classes=["ae-panel"], sizing_mode="stretch_width",
            stylesheets=[chrome.CSS, PICKER_CSS])


def page():
    return chrome.single_page(MemoryBillPanel(), "The memory bill")
