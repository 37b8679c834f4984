"""The bill for one decoded token: attention's operations against the bytes it must read.

Decoding one token does a few billion operations of attention but must first read the whole
key/value cache from memory. Dividing one by the other gives the arithmetic intensity, which
sits far below the ridge point where a GPU's math units could be kept busy: decode attention
waits on memory. Grouped-query attention, shown as query heads sharing KV heads, is how
models shrink that read.

The panel's own Column holds no figure directly: each figure sits inside a FlexBox. Bokeh
(3.9) gives a Row or Column that holds a figure a computed layout of its own, and a Column
so laid out inside another never lays out its children without one (a FlexBox): with the
GQA diagram straight in the panel's Column, the roofline in its FlexBox stayed 0 × 0 and the
page never finished rendering whenever the panel sat one Column deeper than the page
(`LayoutDOMView._propagate_layout`; compare bokeh/bokeh#12583). tests/test_panel_decode_bill.py
models the rule for every panel, tests/browser/test_nesting.py checks it in Chromium.
"""


import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    Label,
    Legend,
    LegendItem,
    Range1d,
    Span,
)
from bokeh.palettes import cividis
from bokeh.plotting import figure

from app import chrome
from app.model_picker import (
    CODE_CSS,
    PICKER_CSS,
    ModelPicker,
    binary_size,
    grouped,
    ink,
    link_model,
    model_selector,
    percent,
    short,
    size_text,
)
from attention_core import costs

BYTES_PER_VALUE = 2  # bf16
MAX_CONTEXT = 1_048_576
MAX_USERS = 1024
GPU_LABELS = {gpu.name: key for key, gpu in costs.GPUS.items()}
ROOF_X = (0.1, 10_000.0)  # FLOP per byte, the roofline's x range
ROOF_Y = (0.01, 10_000.0)  # TFLOP/s
MAX_DRAWN_HEADS = 128  # past this the diagram would be a smear; the text still says it
ATTENTION, WEIGHTS = "#D55E00", "#0072B2"  # Okabe-Ito; the roof and ridge take the theme's ink
HEIGHT = 320

CONVENTIONS = (
    "**How this counts.** One new token for each user, with `context` tokens already "
    "cached. A multiply-add is 2 FLOPs: each dot product of width head_dim costs 2 × "
    "head_dim, and so does adding its weighted value. Query heads do the dot products; KV "
    "heads set the cache. Weight operations are 2 × matmul parameters (every linear weight "
    "plus lm_head; the embedding lookup is free). Scaling and softmax add only a few million "
    "and are left out. Keys and values are bf16, 2 bytes each. GB = 10⁹ bytes, GiB = 2³⁰; "
    "KiB = 2¹⁰. Peaks are dense BF16 tensor-core FLOP/s and memory bandwidth from the "
    "vendors' datasheets.")


INTRO = (
    "To produce one new token, every layer's query heads score that token against every "
    "cached key and blend the cached values. That is a few billion operations, yet before "
    "any of them can run, the whole key/value cache has to travel from memory to the chip. "
    "Count both and divide: the operations per byte say whether the math units or the memory "
    "set the pace.")


def roof_data(gpu):  # GPU -> the roofline: min(peak, intensity × bandwidth), in TFLOP/s
    x = [ROOF_X[0], gpu.ridge_point, ROOF_X[1]]
    return {"x": x, "y": [min(gpu.peak_flops, i * gpu.bandwidth) / 1e12 for i in x]}


def attainable(gpu, intensity):  # FLOP/byte -> FLOP/s the roofline allows
    return min(gpu.peak_flops, intensity * gpu.bandwidth)


def gqa_data(m):  # ModelShape -> (query head squares, KV head bars, links), coloured by group
    group = m.heads // m.kv_heads
    palette = cividis(max(m.kv_heads, 3))[: m.kv_heads] if m.kv_heads <= 256 else []
    colours = [palette[i // group] for i in range(m.heads)] if palette else []
    centres = [(g * group + (group - 1) / 2) for g in range(m.kv_heads)]
    queries = {"x": list(range(m.heads)), "y": [1.0] * m.heads, "colour": colours}
    kv = {"x": centres, "y": [0.0] * m.kv_heads, "width": [group - 0.2] * m.kv_heads,
          "colour": palette}
    links = {"x0": list(range(m.heads)), "y0": [0.8] * m.heads,
             "x1": [centres[i // group] for i in range(m.heads)], "y1": [0.2] * m.heads,
             "colour": colours}
    return queries, kv, links


def figure_box(pane):  # a Bokeh pane -> the same inside a FlexBox (see the module docstring)
    return pn.FlexBox(pane, sizing_mode="stretch_width", margin=0)


def factor_text(x):  # 73.8 -> "~74"; 3.2 -> "~3.2"
    return f"~{x:.0f}" if x >= 10 else f"~{x:.1f}"


class DecodeBillPanel(pn.viewable.Viewer):
    """Ops against bytes for one decoded token, and where that lands on a GPU's roofline."""

    model = model_selector("llama-3-8b")
    context = param.Integer(default=4096, bounds=(1, MAX_CONTEXT), label="context tokens",
                            doc="Tokens already in the KV cache when the new token is decoded.")
    users = param.Integer(default=1, bounds=(1, MAX_USERS), label="users (batch)",
                          doc="Sequences decoded together, each with its own cache.")
    gpu = param.Selector(default="h100-sxm", objects=dict(GPU_LABELS), label="GPU",
                         doc="Whose peak FLOP/s and memory bandwidth draw the roofline.")

    url_keys = ("model", "context", "users", "gpu")

    def __init__(self, in_article=False, **params):
        # in_article: the article's section heading and prose already say what the panel's
        # own heading and introduction say, so leave those out there
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self.picker = ModelPicker(model=self.model)
        link_model(self, self.picker)
        self._build_roofline()
        self._build_gqa()
        self._build_widgets()
        self.readout = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self.bytes_readout = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                          stylesheets=[PICKER_CSS])
        self.verdict = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self.gqa_text = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                     stylesheets=[PICKER_CSS])
        self.caption = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        self._gqa_for = None
        self._update()
        self.param.watch(lambda *e: self._update(), ["context", "users", "gpu"])
        self.picker.param.watch(lambda *e: self._update(), "shape")
        self._layout = self._build_layout()

    # ---- the numbers: pure in the parameters --------------------------------------------

    def numbers(self):  # -> every number shown, for the current model and controls
        m, c, u, b = self.picker.shape, self.context, self.users, BYTES_PER_VALUE
        gpu = costs.GPUS[self.gpu]
        scores = costs.decode_score_flops(m, c)
        values = costs.decode_value_flops(m, c)
        intensity = float(costs.decode_arithmetic_intensity(m, c, b))
        own = m.heads * (m.head_dim + m.v_head_dim) * b  # bytes/token/layer, a KV head per query
        per_layer = costs.kv_bytes_per_token_per_layer(m, b)
        weights_intensity = costs.other_flops_decode(m) * u / (costs.matmul_params(m) * b)
        return {
            "shape": m, "context": c, "users": u, "gpu": gpu,
            "dot_products": costs.decode_dot_products(m, c),
            "scores": scores, "values": values, "attention": scores + values,
            "weight_ops": costs.other_flops_decode(m), "matmul_params": costs.matmul_params(m),
            "share": costs.decode_attention_share(m, c),
            "kv_layer": per_layer, "kv_token": costs.kv_bytes_per_token(m, b),
            "kv_all": costs.kv_cache_bytes(m, c, u, b),
            "kv_one_user": costs.kv_cache_bytes(m, c, 1, b),
            "intensity": intensity, "ridge": gpu.ridge_point,
            "attainable": attainable(gpu, intensity),
            "weights_intensity": weights_intensity,
            "weights_attainable": attainable(gpu, weights_intensity),
            "group": m.heads // m.kv_heads, "kv_if_own": own, "gqa_saving": own / per_layer,
        }

    def ops_html(self, n):
        m, u = n["shape"], n["users"]
        if m.sliding_layers:
            dots = (f"{m.layers:,} layers × {m.heads:,} query heads × the keys each layer sees "
                    f"({m.sliding_layers} layers see at most {m.sliding_window:,})")
        else:
            dots = f"{m.layers:,} layers × {m.heads:,} query heads × {n['context']:,} keys"
        one = n["share"]
        users = ""
        if u > 1:
            users = (f"<p>For all {u:,} users: {short(n['attention'] * u)} attention FLOPs and "
                     f"{short(n['weight_ops'] * u)} weight FLOPs this step.</p>")
        return (
            '<div class="ae-readout" aria-live="polite">'
            "<p><b>Operations for one new token</b> (per user):</p><ul>"
            f"<li>Dot products: {dots} = <b>{grouped(n['dot_products'])}</b></li>"
            f"<li>Scores q·k: {grouped(n['dot_products'])} × 2 × {m.head_dim:,} = "
            f"{grouped(n['scores'])} FLOPs (≈ <b>{short(n['scores'])}</b>)</li>"
            f"<li>Weighted sum of values: {grouped(n['dot_products'])} × 2 × "
            f"{m.v_head_dim:,} = {grouped(n['values'])} FLOPs (≈ <b>{short(n['values'])}</b>)"
            "</li>"
            f"<li>Attention in all: ≈ <b>{short(n['attention'])}</b> FLOPs</li>"
            f"<li>Weights: 2 × {grouped(n['matmul_params'])} matmul parameters = "
            f"{grouped(n['weight_ops'])} FLOPs (≈ <b>{short(n['weight_ops'])}</b>)</li></ul>"
            f"<p>Attention is <b>{percent(one, 3)}</b> of this token's arithmetic "
            f"(about 1/{max(round(1 / one), 1) if one > 0 else '∞'}).</p>{users}</div>")

    def bytes_html(self, n):
        m, u = n["shape"], n["users"]
        if m.mla:
            layer = (f"({m.kv_lora_rank:,} latent + {m.qk_rope_head_dim:,} rotary key values) × "
                     f"{BYTES_PER_VALUE} bytes")
        else:
            layer = (f"2 (K and V) × {m.kv_heads:,} KV heads × {m.head_dim:,} × "
                     f"{BYTES_PER_VALUE} bytes")
        window = ""
        if m.sliding_layers:
            window = (f" (sliding-window layers hold at most {m.sliding_window:,} tokens, "
                      "so fewer)")
        return (
            '<div class="ae-readout" aria-live="polite">'
            "<p><b>Bytes read from the KV cache</b> (bf16):</p><ul>"
            f"<li>Per token per layer: {layer} = <b>{grouped(n['kv_layer'])} bytes</b> "
            f"({binary_size(n['kv_layer'])})</li>"
            f"<li>Per token, × {m.layers:,} layers: <b>{grouped(n['kv_token'])} bytes</b> "
            f"({binary_size(n['kv_token'])})</li>"
            f"<li>Whole context, × {n['context']:,} tokens × {u:,} "
            f"user{'s' if u != 1 else ''}{window}: {grouped(n['kv_all'])} bytes ≈ "
            f"<b>{size_text(n['kv_all'])}</b></li></ul></div>")

    def verdict_html(self, n):
        gpu, i, ridge = n["gpu"], n["intensity"], n["ridge"]
        head = (f"<p><b>Arithmetic intensity</b>: {short(n['attention'])} FLOPs ÷ "
                f"{size_text(n['kv_one_user'])} ≈ <b>{i:.1f} FLOP/byte</b>, the same at every "
                f"context and batch (each user reads their own cache). The {gpu.name}'s "
                f"<b>ridge point</b>: {gpu.peak_flops / 1e12:,.0f} TFLOP/s ÷ "
                f"{gpu.bandwidth / 1e12:.3g} TB/s ≈ <b>{ridge:.0f} FLOP/byte</b>.</p>")
        if i < ridge:
            verdict = (f"<p><b>Memory-bound by a factor of {factor_text(ridge / i)}</b>: decode "
                       f"attention can use at most {short(n['attainable'] / 1e12)} TFLOP/s of the "
                       f"{gpu.peak_flops / 1e12:,.0f}; the math units mostly wait for "
                       "the cache to arrive.</p>")
        else:
            verdict = (f"<p><b>Compute-bound</b> by a factor of {factor_text(i / ridge)}: the "
                       "math units, not memory, set the pace.</p>")
        w = n["weights_intensity"]
        if n["users"] == 1:
            reuse = "with one user, each weight read does one multiply-add"
        else:
            reuse = f"each weight read is used by all {n['users']:,} users of the batch"
        weights = (f"<p class=\"ae-hint\">For comparison, the weight matmuls: {reuse}, "
                   f"≈ {w:.3g} FLOP/byte (activations ignored). Batching raises that; it "
                   "cannot raise attention's.</p>")
        return f'<div class="ae-readout" aria-live="polite">{head}{verdict}{weights}</div>'

    def gqa_html(self, n):
        m = n["shape"]
        if m.mla:
            return ('<div class="ae-readout" aria-live="polite"><p>Multi-head latent attention: '
                    f"all {m.heads:,} query heads read one shared latent per layer, "
                    f"{grouped(n['kv_layer'])} bytes per token instead of "
                    f"{grouped(n['kv_if_own'])} if each query head cached its own keys and "
                    f"values: <b>×{n['gqa_saving']:.1f}</b> smaller.</p></div>")
        g = n["group"]
        if m.kv_heads == m.heads:
            share = (f"<p>{m.heads:,} query heads, {m.kv_heads:,} KV heads: each query head "
                     "has its own keys and values (no grouping), so no cache saving.</p>")
        else:
            share = (f"<p><b>{m.heads:,} query heads share {m.kv_heads:,} KV heads: {g} per "
                     f"group.</b> Each query head still does its own dot products, so the "
                     f"FLOPs are unchanged; the cache holds {grouped(n['kv_layer'])} bytes per "
                     f"token per layer instead of {grouped(n['kv_if_own'])} (if KV heads = "
                     f"query heads): <b>×{n['gqa_saving']:g}</b> less to store and to read.</p>")
        drawn = "" if m.heads <= MAX_DRAWN_HEADS else (
            f"<p class=\"ae-hint\">Too many heads to draw ({m.heads:,}).</p>")
        return f'<div class="ae-readout" aria-live="polite">{share}{drawn}</div>'

    # ---- writing them out ---------------------------------------------------------------

    def _update(self):
        n = self.numbers()
        gpu = n["gpu"]
        self.roof_source.data = roof_data(gpu)
        i = float(np.clip(n["intensity"], *ROOF_X))
        w = float(np.clip(n["weights_intensity"], *ROOF_X))
        self.point_source.data = {"x": [i], "y": [n["attainable"] / 1e12]}
        self.weights_source.data = {"x": [w], "y": [n["weights_attainable"] / 1e12]}
        self.ridge_span.location = n["ridge"]
        self.ridge_label.x = n["ridge"]
        self.ridge_label.text = f"ridge {n['ridge']:.0f}"
        self.point_label.x, self.point_label.y = i, n["attainable"] / 1e12
        self.point_label.text = f"decode attention {n['intensity']:.1f}"
        self.caption.object = (f'<p class="ae-caption" aria-live="polite">The {gpu.name}\'s '
                               "roofline, log-log: the most FLOP/s a kernel of a given "
                               "arithmetic intensity can reach</p>")
        self._update_gqa(n["shape"])
        self.readout.object = self.ops_html(n)
        self.bytes_readout.object = self.bytes_html(n)
        self.verdict.object = self.verdict_html(n)
        self.gqa_text.object = self.gqa_html(n)

    def _update_gqa(self, m):
        if self._gqa_for is m:
            return
        self._gqa_for = m
        drawn = m.heads <= MAX_DRAWN_HEADS and not m.mla
        self.gqa_pane.visible = drawn
        if not drawn:
            return
        queries, kv, links = gqa_data(m)
        self.query_source.data, self.kv_source.data, self.link_source.data = queries, kv, links
        self.gqa_figure.x_range.update(start=-0.6, end=m.heads - 0.4)
        self.gqa_figure.title.text = f"{m.heads} query heads (top), {m.kv_heads} KV heads"

    def _build_roofline(self):
        self.roof_source = ColumnDataSource({"x": [], "y": []})
        self.point_source = ColumnDataSource({"x": [], "y": []})
        self.weights_source = ColumnDataSource({"x": [], "y": []})
        fig = figure(title=None, height=HEIGHT, sizing_mode="stretch_width", min_width=240,
                     tools="", toolbar_location=None, x_axis_type="log", y_axis_type="log",
                     x_range=Range1d(*ROOF_X), y_range=Range1d(*ROOF_Y),
                     outline_line_color=None, min_border_right=12)
        paint = self._ink
        roof = fig.line("x", "y", source=self.roof_source, line_color=paint.strong,
                        line_width=2.5)
        attention = fig.scatter("x", "y", source=self.point_source, size=12, marker="circle",
                                fill_color=ATTENTION, line_color="#000000")
        weights = fig.scatter("x", "y", source=self.weights_source, size=11, marker="square",
                              fill_color=WEIGHTS, line_color="#000000")
        self.ridge_span = Span(location=1, dimension="height", line_color=paint.rule,
                               line_dash="dashed", line_width=1.5)
        self.ridge_label = Label(x=1, y=ROOF_Y[1] / 4, text="", text_font_size="11px",
                                 text_color=paint.muted, x_offset=4,
                                 background_fill_color=paint.paper, background_fill_alpha=0.8)
        self.point_label = Label(x=1, y=1, text="", text_font_size="11px",
                                 text_color=paint.warm, x_offset=8, y_offset=-4,
                                 text_baseline="top")
        for model in (self.ridge_span, self.ridge_label, self.point_label):
            fig.add_layout(model)
        fig.add_layout(Legend(items=[
            LegendItem(label="roof: min(peak, intensity × bandwidth)", renderers=[roof]),
            LegendItem(label="decode attention", renderers=[attention]),
            LegendItem(label="weight matmuls, this batch", renderers=[weights]),
        ], location="bottom_right", label_text_font_size="11px", background_fill_alpha=0.85,
            padding=4, spacing=0))
        ticks = [0.1, 1, 10, 100, 1000, 10000]
        fig.xaxis.ticker = FixedTicker(ticks=ticks)
        fig.yaxis.ticker = FixedTicker(ticks=[0.01, 0.1, 1, 10, 100, 1000, 10000])
        labels = {0.01: "0.01", 0.1: "0.1", 1: "1", 10: "10", 100: "100", 1000: "1,000",
                  10000: "10,000"}
        fig.xaxis.major_label_overrides = labels
        fig.yaxis.major_label_overrides = labels
        fig.xaxis.axis_label = "arithmetic intensity, FLOP per byte (log)"
        fig.yaxis.axis_label = "attainable TFLOP/s (log)"
        chrome.quiet_axes(fig)
        self.roofline = fig

    def _build_gqa(self):
        self.query_source = ColumnDataSource({"x": [], "y": [], "colour": []})
        self.kv_source = ColumnDataSource({"x": [], "y": [], "width": [], "colour": []})
        self.link_source = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": [],
                                             "colour": []})
        fig = figure(height=140, sizing_mode="stretch_width", min_width=240, tools="",
                     toolbar_location=None, x_range=Range1d(-0.6, 31.6),
                     y_range=Range1d(-0.35, 1.35), outline_line_color=None)
        fig.segment("x0", "y0", "x1", "y1", source=self.link_source, line_color="colour",
                    line_width=1.2)
        fig.rect("x", "y", width=0.8, height=0.4, source=self.query_source,
                 fill_color="colour", line_color="#000000", line_width=0.5)
        fig.rect("x", "y", width="width", height=0.4, source=self.kv_source,
                 fill_color="colour", line_color="#000000", line_width=0.5)
        fig.xaxis.visible = False
        fig.yaxis.ticker = FixedTicker(ticks=[0, 1])
        fig.yaxis.major_label_overrides = {0: "KV", 1: "query"}
        fig.grid.visible = False
        fig.title.text_font_size = "12px"
        self.gqa_figure = fig
        # a FlexBox, not the bare pane: see the module's docstring; and a Bokeh pane's own
        # `visible` does not hide its figure, the box's does
        self.gqa_pane = figure_box(pn.pane.Bokeh(fig, height=140, sizing_mode="stretch_width",
                                                 min_width=240))

    # ---- controls -----------------------------------------------------------------------

    def _build_widgets(self):
        self.context_slider = chrome.power_of_two_slider(
            self, "context", "context, powers of two", MAX_CONTEXT, sizing_mode="stretch_width",
            min_width=180, max_width=360)
        self.context_input = pn.widgets.IntInput.from_param(
            self.param.context, label=f"context tokens (1–{MAX_CONTEXT:,})", step=256, width=210)
        self.users_input = pn.widgets.IntInput.from_param(
            self.param.users, label=f"users / batch (1–{MAX_USERS:,})", width=170)
        self.gpu_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.gpu, color="primary", variant="outline",
            orientation="vertical", width=160)

    def __panel__(self):
        return self._layout

    def _build_layout(self):
        controls = pn.FlexBox(self.context_slider, self.context_input, self.users_input,
                              align_items="flex-end", sizing_mode="stretch_width")
        roof = pn.FlexBox(
            pn.Column(pn.pane.HTML("GPU", margin=(0, 10)), self.gpu_buttons, margin=0),
            pn.Column(self.caption,
                      pn.pane.Bokeh(self.roofline, height=HEIGHT, sizing_mode="stretch_width",
                                    min_width=240), self.verdict, sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            sizing_mode="stretch_width")
        own = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>The bill for one decoded token</h3>",
                         margin=(0, 10)),
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width")]
        return pn.Column(
            *own, self.picker, controls, self.readout, self.bytes_readout, self.gqa_text,
            self.gqa_pane, roof,
            pn.pane.Markdown(CONVENTIONS, sizing_mode="stretch_width", stylesheets=[CODE_CSS]),
            css_classes=["ae-panel"], sizing_mode="stretch_width",
            stylesheets=[chrome.CSS, PICKER_CSS])


def page():
    return chrome.single_page(DecodeBillPanel(), "The bill for one decoded token")
