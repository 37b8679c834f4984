"""The bill for one decoded token: attention's operations against the bytes it must read.

Decoding one token does a few billion operations of attention but must first read the whole
key/value cache from memory. Dividing one by the other gives the arithmetic intensity, which
sits far below the ridge point where a GPU's math units could be kept busy: decode attention
waits on memory. Grouped-query attention, shown as query heads sharing KV heads, is how
models shrink that read.

The panel has the one shape (app/kit/states.py) on the cost panels' base (app/panels/cost_base.py):
model (three presets) × context (1 to 1,048,576) and users (1 to 1,024) on power-of-two
stops × GPU. The parts: the GQA diagram and the per-token bytes (model), the operations
(model, context), the whole cache (model, context, users), the roofline and ridge point
(GPU), the verdict (model, GPU), the weight matmuls (model, users; model, users, GPU), the
least time per step and the batch that turns it compute-bound (model, context, GPU). A
live session also counts any number typed and your own config.json, through the same parts.

The panel's own Column holds no figure directly: each figure sits inside a FlexBox. Bokeh
(3.9) gives a Row or Column that holds a figure a computed layout of its own, and a Column
so laid out inside another never lays out its children without one (a FlexBox): with the
GQA diagram straight in the panel's Column, the roofline in its FlexBox stayed 0 × 0 and the
page never finished rendering whenever the panel sat one Column deeper than the page
(`LayoutDOMView._propagate_layout`; compare bokeh/bokeh#12583). tests/test_panel_decode_bill.py
models the rule for every panel, tests/browser/test_nesting.py checks it in Chromium.
"""

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

from app.kit import chrome, fmt
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part
from app.panels.cost_base import CostStatePanel, power_control
from app.panels.model_picker import model_selector, shape_of
from attention_core import costs

BYTES_PER_VALUE = 2  # bf16
MAX_CONTEXT = 1_048_576
MAX_USERS = 1024
GPU_LABELS = {gpu.name: key for key, gpu in costs.GPUS.items()}
GPU_KEYS = tuple(GPU_LABELS.values())  # in the buttons' order
ROOF_X = (0.1, 10_000.0)  # FLOP per byte, the roofline's x range
ROOF_Y = (0.01, 10_000.0)  # TFLOP/s
MAX_DRAWN_HEADS = 128  # past this the diagram would be a smear; the text still says it
ATTENTION, WEIGHTS = "#D55E00", "#0072B2"  # Okabe-Ito; the roof and ridge take the theme's ink
HEIGHT = 320
GQA_HEIGHT = 140
DEFAULT_MODEL, DEFAULT_CONTEXT = "llama-3-8b", 4096
# per score: scale, max, subtract, exp, add to the sum, divide
SOFTMAX_OPS_PER_SCORE = 6


def softmax_note(key=DEFAULT_MODEL, context=DEFAULT_CONTEXT):  # -> what leaving it out costs
    m = costs.preset(key)
    left_out = SOFTMAX_OPS_PER_SCORE * costs.decode_dot_products(m, context)
    attention = costs.decode_score_flops(m, context) + costs.decode_value_flops(m, context)
    return (f"Scaling and softmax, about {SOFTMAX_OPS_PER_SCORE} operations per score (scale, "
            f"max, subtract, exp, add, divide), are left out: for {m.name} at {context:,} "
            f"tokens, {fmt.scale_words(left_out)} against attention's "
            f"{fmt.scale_words(attention)} ({fmt.percent(left_out / attention)}).")


CONVENTIONS = (
    "One new token for each user, with `context` tokens already "
    "cached. A multiply-add is 2 FLOPs: each dot product of width head_dim costs 2 × "
    "head_dim, and so does adding its weighted value. Query heads do the dot products; KV "
    "heads set the cache. The parameter matmuls (the matrix products with the model's "
    "parameters) cost 2 × the parameters in them (every linear layer's matrix plus lm_head; "
    f"the embedding lookup is free). {softmax_note()} Keys and values are bf16, 2 bytes each. "
    "GB = 10⁹ bytes, GiB = 2³⁰; "
    "KiB = 2¹⁰. Peaks are dense BF16 tensor-core FLOP/s and memory bandwidth from the "
    "vendors' datasheets.")

INTRO = (
    "To produce one new token, every layer's query heads score that token against every "
    "cached key and blend the cached values. That is a few billion operations, yet the step "
    "cannot finish before the whole key/value cache has travelled from memory to the chip. "
    "Count both and divide: the operations per byte say whether the math units or the memory "
    "set the pace.")

OPS = (  # one line shown; the count step by step folded (chrome.folded's <details>)
    '<div class="ae-readout" aria-live="polite">'
    '<p><b>One new token</b> (per user): attention ≈ <b data-s="attention"></b> FLOPs, '
    '<b data-s="share"></b> of its arithmetic (about '
    f'1/{hole("about")}).</p>'
    '<details class="ae-fold"><summary>The operations, step by step</summary><ul>'
    f'<li>Dot products: {hole("dots_formula")} = <b data-s="dots"></b></li>'
    f'<li>Scores q·k: {hole("dots_s")} × 2 × {hole("head_dim")} = {hole("scores")} FLOPs '
    '(≈ <b data-s="scores_short"></b>)</li>'
    f'<li>Weighted sum of values: {hole("dots_v")} × 2 × {hole("v_head_dim")} = '
    f'{hole("values")} FLOPs (≈ <b data-s="values_short"></b>)</li>'
    f'<li>Parameters: 2 × {hole("matmul")} parameters in matrix products = '
    f'{hole("weight_ops")} FLOPs '
    '(≈ <b data-s="weight_short"></b>)</li></ul></details>'
    f'{hole("users", "p")}</div>')

BYTES = (
    '<div class="ae-readout" aria-live="polite">'
    '<p><b>Keys and values read</b> (bf16): <b data-s="kv_all_size"></b> for the whole '
    "context.</p>"
    '<details class="ae-fold"><summary>The bytes, step by step</summary><ul>'
    f'<li>Per token per layer: {hole("layer_formula")} = <b>{hole("kv_layer")} bytes</b> '
    f'({hole("kv_layer_binary")})</li>'
    f'<li>Per token, × {hole("layers")} layers: <b>{hole("kv_token")} bytes</b> '
    f'({hole("kv_token_binary")})</li>'
    f'<li>Whole context, × {hole("context")} tokens × {hole("users_count")} '
    f'{hole("user_word")}{hole("window")}: {hole("kv_all")} bytes</li></ul></details></div>')

VERDICT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Arithmetic intensity</b>: {hole("attention_short")} FLOPs ÷ {hole("kv_one")} ≈ '
    '<b><span data-s="intensity"></span> FLOP/byte</b>, the same at every context and batch '
    f'(each user reads their own cache). The {hole("gpu")}\'s <b>ridge point</b>: '
    f'{hole("peak")} TFLOP/s ÷ {hole("bandwidth")} TB/s ≈ <b><span data-s="ridge"></span> '
    "FLOP/byte</b>.</p>"
    f'<p><b data-s="verdict"></b>{hole("verdict_rest")}</p>'
    f'<p class="ae-hint">For comparison, the parameter matmuls: {hole("reuse")}, ≈ '
    f'{hole("weights_intensity")} FLOP/byte (activations ignored). Batching (decoding several '
    "users' tokens in one step) raises that; it cannot raise attention's.</p></div>")

TIME = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b>Time per token</b> on the {hole("time_gpu")}, for one user whatever the users '
    'setting: at least max(bytes ÷ '
    f'bandwidth, FLOPs ÷ peak) = max({hole("step_bytes")} ÷ {hole("time_bandwidth")} TB/s, '
    f'{hole("step_flops")} FLOPs ÷ {hole("time_peak")} TFLOP/s) = <b data-s="step_ms"></b>, so at '
    f'most <b data-s="tokens_s"></b>. {hole("bound")}</p>'
    '<p class="ae-hint">Batching shares the parameters: the parameter matmuls alone turn '
    f'compute-bound at a batch of about {hole("weights_batch")} (the ridge point, in bf16). '
    "Each user's cache is read for that user alone, so with "
    f'{hole("batch_context")}-token caches {hole("reached")}.</p>'
    "</div>")

GQA = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p><b data-s="gqa_lead"></b>{hole("gqa_body")}<b data-s="gqa_factor"></b>'
    f'{hole("gqa_tail")}</p>{hole("gqa_drawn", "p", class_="ae-hint")}</div>')

CAPTION = (f'<p class="ae-caption" aria-live="polite">The {hole("gpu_name")}\'s roofline, '
           "log-log: the most FLOP/s a kernel of a given arithmetic intensity can reach</p>")

OpsReadout = readout_class("DecodeOpsReadout", OPS, module=__name__)
BytesReadout = readout_class("DecodeBytesReadout", BYTES, module=__name__)
VerdictReadout = readout_class("DecodeVerdictReadout", VERDICT, module=__name__)
GqaReadout = readout_class("DecodeGqaReadout", GQA, module=__name__)
TimeReadout = readout_class("DecodeTimeReadout", TIME, module=__name__)
CaptionReadout = readout_class("DecodeCaptionReadout", CAPTION, module=__name__)


def roof_data(gpu):  # GPU -> the roofline: min(peak, intensity × bandwidth), in TFLOP/s
    x = [ROOF_X[0], gpu.ridge_point, ROOF_X[1]]
    return {"x": x, "y": [min(gpu.peak_flops, i * gpu.bandwidth) / 1e12 for i in x]}


def attainable(gpu, intensity):  # FLOP/byte -> FLOP/s the roofline allows
    return min(gpu.peak_flops, intensity * gpu.bandwidth)


def gqa_data(m):  # ModelShape -> (query head squares, KV head bars, links), coloured by group
    # Head h sits at (h + 0.6) / (heads + 0.2) on an axis from 0 to 1 for every model (a
    # margin of 0.6 head before the first, 0.4 after the last), so a change of model redraws
    # the shapes alone, not the figure's axes (docs/REPAINT.md).
    group = m.heads // m.kv_heads
    palette = list(cividis(max(m.kv_heads, 3))[: m.kv_heads]) if m.kv_heads <= 256 else []
    colours = [palette[i // group] for i in range(m.heads)] if palette else []
    span = m.heads + 0.2

    def at(x):  # a place in heads -> its place on the 0..1 axis
        return float(f"{(x + 0.6) / span:.6g}")

    def wide(w):  # a width in heads -> the same on the 0..1 axis
        return float(f"{w / span:.6g}")

    centres = [at(g * group + (group - 1) / 2) for g in range(m.kv_heads)]
    heads = [at(h) for h in range(m.heads)]
    queries = {"x": heads, "y": [1.0] * m.heads, "width": [wide(0.8)] * m.heads,
               "colour": colours}
    kv = {"x": centres, "y": [0.0] * m.kv_heads, "width": [wide(group - 0.2)] * m.kv_heads,
          "colour": palette}
    links = {"x0": heads, "y0": [0.8] * m.heads,
             "x1": [centres[i // group] for i in range(m.heads)], "y1": [0.2] * m.heads,
             "colour": colours}
    return queries, kv, links


def figure_box(pane):  # a Bokeh pane -> the same inside a FlexBox (see the module docstring)
    return pn.FlexBox(pane, sizing_mode="stretch_width", margin=0)


def clip(x):  # FLOP/byte -> inside the roofline's x range
    return min(max(float(x), ROOF_X[0]), ROOF_X[1])


# --- the numbers, from attention_core -------------------------------------------------------

def intensity(m):  # -> decode attention's FLOP per byte read: the same at every context
    return float(costs.decode_arithmetic_intensity(m, 1, BYTES_PER_VALUE))


def weights_intensity(m, users):  # -> the weight matmuls' FLOP per weight byte, this batch
    return costs.other_flops_decode(m) * users / (costs.matmul_params(m) * BYTES_PER_VALUE)


def kv_if_own(m):  # -> bytes per token per layer if every query head cached its own K and V
    return m.heads * (m.head_dim + m.v_head_dim) * BYTES_PER_VALUE


def numbers(m, context, users, gpu_key):  # -> the headline numbers (tests, the article)
    gpu = costs.GPUS[gpu_key]
    i, w = intensity(m), weights_intensity(m, users)
    return {"shape": m, "dot_products": costs.decode_dot_products(m, context),
            "share": costs.decode_attention_share(m, context),
            "kv_all": costs.kv_cache_bytes(m, context, users, BYTES_PER_VALUE),
            "intensity": i, "ridge": gpu.ridge_point, "attainable": attainable(gpu, i),
            "weights_intensity": w, "weights_attainable": attainable(gpu, w)}


# --- the state: parts, each a pure function of some of the controls ---------------------------
# `model` is a preset's key (the table) or your config's Model (live): shape_of reads either

def model_state(model):  # the GQA diagram and its text, the weights line, bytes per token
    m = shape_of(model)
    drawn = m.heads <= MAX_DRAWN_HEADS and not m.mla and m.attention_layers > 0
    queries, kv, links = gqa_data(m) if drawn else (
        {"x": [], "y": [], "width": [], "colour": []},
        {"x": [], "y": [], "width": [], "colour": []},
        {"x0": [], "y0": [], "x1": [], "y1": [], "colour": []})
    b = BYTES_PER_VALUE
    # Mamba: no layer attends, so no layer caches (the core's stand-in head is no model's)
    per_layer = costs.kv_bytes_per_token_per_layer(m, b) if m.attention_layers else 0
    per_token = costs.kv_bytes_per_token(m, b)
    if not m.attention_layers:
        layer = "no keys or values (no layer attends)"
    elif m.mla:
        layer = (f"({m.kv_lora_rank:,} latent + {m.qk_rope_head_dim:,} rotary key values) × "
                 f"{b} bytes")
    else:
        layer = f"2 (K and V) × {m.kv_heads:,} KV heads × {m.head_dim:,} × {b} bytes"
    window = ""
    if m.sliding_layers:
        window = (f" (sliding-window layers hold at most {m.sliding_window:,} tokens, "
                  "so fewer)")
    params, weight_ops = costs.matmul_params(m), costs.other_flops_decode(m)
    return {
        "source:gqa_queries": queries, "source:gqa_kv": kv, "source:gqa_links": links,
        "prop:gqa_pane.visible": drawn,
        "holes:gqa": gqa_values(m, per_layer),
        "holes:weights_line": {"matmul": fmt.thousands(params),
                               "weight_ops": fmt.thousands(weight_ops),
                               "weight_short": fmt.scale_words(weight_ops)},
        "holes:per_token": {"layer_formula": layer, "kv_layer": fmt.thousands(per_layer),
                            "kv_layer_binary": fmt.binary_bytes(per_layer),
                            "layers": f"{m.layers:,}", "kv_token": fmt.thousands(per_token),
                            "kv_token_binary": fmt.binary_bytes(per_token), "window": window},
    }


def gqa_values(m, per_layer):  # -> {hole: text}: how the query heads share the KV heads
    if not m.attention_layers:
        return {"gqa_lead": "", "gqa_factor": "", "gqa_tail": "", "gqa_drawn": "",
                "gqa_body": ("No layer attends: this model has no query or KV heads and no "
                             "KV cache to read. Each layer keeps a fixed state instead, the "
                             "same size at any context.")}
    own = kv_if_own(m)
    saving = own / per_layer
    drawn = "" if m.heads <= MAX_DRAWN_HEADS else f"Too many heads to draw ({m.heads:,})."
    if m.mla:
        return {"gqa_lead": "", "gqa_factor": f"×{saving:.1f}", "gqa_tail": " smaller.",
                "gqa_drawn": "",
                "gqa_body": (f"Multi-head latent attention: all {m.heads:,} query heads read "
                             f"one shared latent per layer, {fmt.thousands(per_layer)} bytes "
                             f"per token instead of {fmt.thousands(own)} if each query head "
                             "cached its own keys and values: ")}
    if m.kv_heads == m.heads:
        return {"gqa_lead": "", "gqa_factor": "", "gqa_tail": "", "gqa_drawn": drawn,
                "gqa_body": (f"{m.heads:,} query heads, {m.kv_heads:,} KV heads: each query "
                             "head has its own keys and values (no grouping), so no cache "
                             "saving.")}
    return {
        "gqa_lead": (f"{m.heads:,} query heads share {m.kv_heads:,} KV heads: "
                     f"{m.heads // m.kv_heads} per group."),
        "gqa_body": (" Each query head still does its own dot products, so the FLOPs are "
                     f"unchanged; the cache holds {fmt.thousands(per_layer)} bytes per token "
                     f"per layer instead of {fmt.thousands(own)} (if KV heads = query heads): "),
        "gqa_factor": f"×{saving:g}", "gqa_tail": " less to store and to read.",
        "gqa_drawn": drawn}


def ops_state(model, context):  # one new token's operations; the intensity's division
    m = shape_of(model)
    dots = costs.decode_dot_products(m, context)
    scores, values = costs.decode_score_flops(m, context), costs.decode_value_flops(m, context)
    attention, share = scores + values, costs.decode_attention_share(m, context)
    if m.sliding_layers:
        formula = (f"{m.layers:,} layers × {m.heads:,} query heads × the keys each layer sees "
                   f"({m.sliding_layers} layers see at most {m.sliding_window:,})")
    else:
        formula = f"{m.layers:,} layers × {m.heads:,} query heads × {context:,} keys"
    one_user = costs.kv_cache_bytes(m, context, 1, BYTES_PER_VALUE)
    return {
        "holes:ops": {
            "dots_formula": formula, "dots": fmt.thousands(dots),
            "dots_s": fmt.thousands(dots), "dots_v": fmt.thousands(dots),
            "head_dim": f"{m.head_dim:,}", "v_head_dim": f"{m.v_head_dim:,}",
            "scores": fmt.thousands(scores), "scores_short": fmt.scale_words(scores),
            "values": fmt.thousands(values), "values_short": fmt.scale_words(values),
            "attention": fmt.scale_words(attention), "share": fmt.percent(share, 3),
            "about": str(max(round(1 / share), 1)) if share > 0 else "∞"},
        "holes:intensity": {"attention_short": fmt.scale_words(attention),
                            "kv_one": fmt.gb_and_gib(one_user),
                            "intensity": f"{intensity(m):.1f}"},
    }


def batch_state(model, context, users):  # the whole batch's operations this step
    m = shape_of(model)
    together = ""
    if users > 1:
        attention = (costs.decode_score_flops(m, context)
                     + costs.decode_value_flops(m, context))
        together = (f"For all {users:,} users: {fmt.scale_words(attention * users)} attention "
                    f"FLOPs and {fmt.scale_words(costs.other_flops_decode(m) * users)} "
                    "parameter FLOPs this step.")
    return {"holes:batch_ops": {"users": together}}


def cache_state(model, context, users):
    # the whole batch's cache: the same bytes for the same context × users, so the table
    # holds each value once
    kv_all = costs.kv_cache_bytes(shape_of(model), context, users, BYTES_PER_VALUE)
    return {"holes:kv_all": {"kv_all": fmt.thousands(kv_all),
                             "kv_all_size": fmt.gb_and_gib(kv_all)}}


def context_state(context):
    return {"holes:context": {"context": f"{context:,}"}}


def users_state(users):
    return {"holes:users": {"users_count": f"{users:,}",
                            "user_word": "user" if users == 1 else "users"}}


def weights_state(model, users):  # the weight matmuls' intensity: each weight read, reused
    w = weights_intensity(shape_of(model), users)
    reuse = ("with one user, each parameter read does one multiply-add" if users == 1
             else f"each parameter read is used by all {users:,} users of the batch")
    return {"holes:reuse": {"reuse": reuse, "weights_intensity": f"{w:.3g}"}}


def gpu_state(gpu):  # the roofline and its ridge point
    g = costs.GPUS[gpu]
    ridge = g.ridge_point
    return {
        "source:roof": roof_data(g),
        "prop:ridge_span.location": ridge, "prop:ridge_label.x": ridge,
        "prop:ridge_label.text": f"ridge {ridge:.0f}",
        "holes:caption": {"gpu_name": g.name},
        "holes:ridge": {"gpu": g.name, "peak": f"{g.peak_flops / 1e12:,.0f}",
                        "bandwidth": f"{g.bandwidth / 1e12:.3g}", "ridge": f"{ridge:.0f}"},
    }


def verdict_state(model, gpu):  # where decode attention lands on this GPU's roofline
    m, g = shape_of(model), costs.GPUS[gpu]
    i = intensity(m)
    reach = attainable(g, i)
    if not m.attention_layers:  # Mamba: no decode attention to place on the roofline
        return {"holes:verdict": {"verdict": "No decode attention",
                                  "verdict_rest": ": no layer attends, so no cache is read; "
                                                  "the weight matmuls below set the pace."},
                "source:point": {"x": [], "y": []},
                "prop:point_label.x": clip(g.ridge_point), "prop:point_label.y": 1.0,
                "prop:point_label.text": ""}
    if i < g.ridge_point:
        verdict = f"Memory-bound by a factor of {fmt.about_times(g.ridge_point / i)}"
        rest = (f": decode attention can use at most {fmt.scale_words(reach / 1e12)} TFLOP/s "
                f"of the {g.peak_flops / 1e12:,.0f}; the math units mostly wait for the cache "
                "to arrive.")
    else:
        verdict = "Compute-bound"
        rest = (f" by a factor of {fmt.about_times(i / g.ridge_point)}: the math units, not "
                "memory, set the pace.")
    x, y = clip(i), reach / 1e12
    return {"holes:verdict": {"verdict": verdict, "verdict_rest": rest},
            "source:point": {"x": [x], "y": [y]},
            "prop:point_label.x": x, "prop:point_label.y": y,
            "prop:point_label.text": f"decode attention {i:.1f}"}


def time_state(model, context, gpu):  # the least time one decode step takes, one user, and
    # the batch at which the step turns compute-bound with each user's cache
    m, g = shape_of(model), costs.GPUS[gpu]
    step_bytes = costs.decode_step_bytes(m, context, 1, BYTES_PER_VALUE)
    step_flops = costs.decode_step_flops(m, context)
    seconds = costs.decode_step_seconds(m, g, context, 1, BYTES_PER_VALUE)
    memory = step_bytes / g.bandwidth >= step_flops / g.peak_flops
    batch = costs.compute_bound_batch(m, g, context, BYTES_PER_VALUE)
    return {"holes:time": {
        "step_bytes": f"{step_bytes / 1e9:.3g} GB", "step_flops": fmt.scale_words(step_flops),
        "step_ms": f"{seconds * 1e3:.3g} ms", "tokens_s": f"{1 / seconds:,.0f} tokens/s",
        "bound": "Memory sets the pace." if memory else "The math units set the pace.",
        "batch_context": f"{context:,}",
        "reached": (f"the whole step turns compute-bound at about {batch:,.0f} users"
                    if batch < float("inf") else
                    "no batch makes the whole step compute-bound")}}


def time_gpu_state(gpu):  # the bound's peaks
    g = costs.GPUS[gpu]
    return {"holes:time_gpu": {"time_gpu": g.name, "time_bandwidth": f"{g.bandwidth / 1e12:.3g}",
                               "time_peak": f"{g.peak_flops / 1e12:,.0f}"}}


def weights_batch_state(model, gpu):  # the batch at which the weight matmuls alone turn
    # compute-bound (no cache): about the ridge point in bf16
    batch = costs.compute_bound_batch(shape_of(model), costs.GPUS[gpu], 0, BYTES_PER_VALUE)
    return {"holes:time_weights": {"weights_batch": f"{batch:,.0f}"}}


def weights_point_state(model, users, gpu):  # the weight matmuls' dot on the roofline
    w = weights_intensity(shape_of(model), users)
    return {"source:weights_point": {
        "x": [clip(w)], "y": [attainable(costs.GPUS[gpu], w) / 1e12]}}


class DecodeBillPanel(CostStatePanel):
    """Ops against bytes for one decoded token, and where that lands on a GPU's roofline."""

    model = model_selector(DEFAULT_MODEL)
    context = param.Integer(default=DEFAULT_CONTEXT, bounds=(1, MAX_CONTEXT),
                            label="context tokens",
                            doc="Tokens already in the KV cache when the new token is decoded.")
    users = param.Integer(default=1, bounds=(1, MAX_USERS), label="users (batch)",
                          doc="Sequences decoded together, each with its own cache.")
    gpu = param.Selector(default="h100-sxm", objects=dict(GPU_LABELS), label="GPU",
                         doc="Whose peak FLOP/s and memory bandwidth draw the roofline.")

    intro = INTRO
    conventions = CONVENTIONS

    own_controls = (power_control("context", MAX_CONTEXT), power_control("users", MAX_USERS),
                    Control.choice("gpu", GPU_KEYS))
    own_parts = (Part(("model",), model_state), Part(("model", "context"), ops_state),
                 Part(("model", "context", "users"), batch_state),
                 Part(("model", "context", "users"), cache_state),
                 Part(("context",), context_state), Part(("users",), users_state),
                 Part(("model", "users"), weights_state), Part(("gpu",), gpu_state),
                 Part(("model", "gpu"), verdict_state),
                 Part(("model", "users", "gpu"), weights_point_state),
                 Part(("model", "context", "gpu"), time_state), Part(("gpu",), time_gpu_state),
                 Part(("model", "gpu"), weights_batch_state))

    # ---- what tests and the article read -----------------------------------------------

    def numbers(self):  # -> the headline numbers for the current model and controls
        return numbers(shape_of(self.params()["model"]), self.context, self.users, self.gpu)

    # ---- the view, built once from the first state -------------------------------------

    def build_body(self, state):
        self._build_roofline(state)
        self._build_gqa(state)
        self.readout = self.add_readout(OpsReadout, state, "holes:ops", "holes:weights_line",
                                        "holes:batch_ops")
        self.bytes_readout = self.add_readout(BytesReadout, state, "holes:per_token",
                                              "holes:context", "holes:users", "holes:kv_all")
        self.verdict = self.add_readout(VerdictReadout, state, "holes:intensity",
                                        "holes:ridge", "holes:verdict", "holes:reuse")
        self.gqa_text = self.add_readout(GqaReadout, state, "holes:gqa")
        self.time = self.add_readout(TimeReadout, state, "holes:time", "holes:time_gpu",
                                     "holes:time_weights")
        self.caption = self.add_readout(CaptionReadout, state, "holes:caption")
        (self.context_slider, self.context_input, self.users_slider,
         self.users_input) = self.context_and_users(MAX_CONTEXT, 256, MAX_USERS, "users (batch)",
                                                    "users / batch", 170)
        self.gpu_buttons = self.choice_buttons("gpu", orientation="vertical", width=160)
        controls = self.row(self.context_slider, self.context_input, self.users_slider,
                            self.users_input)
        roof = pn.FlexBox(
            self.labelled("GPU", self.gpu_buttons),
            pn.Column(self.caption,
                      pn.pane.Bokeh(self.roofline, height=HEIGHT, sizing_mode="stretch_width",
                                    min_width=240), self.verdict, self.time,
                      sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            sizing_mode="stretch_width")
        return [controls, self.readout, self.bytes_readout, self.gqa_text, self.gqa_pane, roof]

    def _build_roofline(self, state):
        self.roof_source = ColumnDataSource(state["source:roof"])
        self.point_source = ColumnDataSource(state["source:point"])
        self.weights_source = ColumnDataSource(state["source:weights_point"])
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
        self.ridge_label = Label(x=1, y=ROOF_Y[1] / 4, text="", text_font_size="12px",
                                 text_color=paint.muted, x_offset=4,
                                 background_fill_color=paint.paper, background_fill_alpha=0.8)
        self.point_label = Label(x=1, y=1, text="", text_font_size="12px",
                                 text_color=paint.warm, x_offset=8, y_offset=-4,
                                 text_baseline="top")
        for model in (self.ridge_span, self.ridge_label, self.point_label):
            fig.add_layout(model)
        fig.add_layout(Legend(items=[
            LegendItem(label="roof: min(peak, intensity × bandwidth)", renderers=[roof]),
            LegendItem(label="decode attention", renderers=[attention]),
            LegendItem(label="parameter matmuls, this batch", renderers=[weights]),
        ], location="bottom_right", label_text_font_size="12px", background_fill_alpha=0.85,
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
        self.targets.update({
            "source:roof": self.roof_source, "source:point": self.point_source,
            "source:weights_point": self.weights_source,
            "prop:ridge_span.location": self.ridge_span, "prop:ridge_label.x": self.ridge_label,
            "prop:ridge_label.text": self.ridge_label, "prop:point_label.x": self.point_label,
            "prop:point_label.y": self.point_label, "prop:point_label.text": self.point_label})

    def _build_gqa(self, state):
        self.query_source = ColumnDataSource(state["source:gqa_queries"])
        self.kv_source = ColumnDataSource(state["source:gqa_kv"])
        self.link_source = ColumnDataSource(state["source:gqa_links"])
        fig = figure(height=GQA_HEIGHT, sizing_mode="stretch_width", min_width=240, tools="",
                     toolbar_location=None, x_range=Range1d(0, 1),
                     title="Query heads (top) and the KV heads they share, a colour a group",
                     y_range=Range1d(-0.35, 1.35), outline_line_color=None)
        fig.segment("x0", "y0", "x1", "y1", source=self.link_source, line_color="colour",
                    line_width=1.2)
        fig.rect("x", "y", width="width", height=0.4, source=self.query_source,
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
        self.gqa_pane = figure_box(pn.pane.Bokeh(fig, height=GQA_HEIGHT,
                                                 sizing_mode="stretch_width", min_width=240))
        self.targets.update({
            "source:gqa_queries": self.query_source, "source:gqa_kv": self.kv_source,
            "source:gqa_links": self.link_source, "prop:gqa_pane.visible": self.gqa_pane})
