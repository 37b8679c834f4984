"""How many blocks fit: a GPU's memory shared between the weights, the rest and the KV cache.

vLLM's arithmetic, step by step: the share of the GPU it may use (gpu_memory_utilization),
less the weights and the other memory its profile run finds (here an assumed 2 GiB), is the
cache; one block of one layer holds 2 × 16 × KV heads × head_dim × 2 bytes; the number of
blocks is the cache // that // layers. The "GPU KV cache size" vLLM logs is blocks × 16 token
slots, and the users it can serve at once at a context length follow. Every figure is
attention_core.paged's, on Qwen3-8B's or Llama-3-8B's config.

The panel has the one shape (app/kit/states.py). Controls: the model, the GPU's memory, the
utilization and the context a request holds. Two parts: the bar of memory (model, GPU,
utilization) and the readout (all four).
"""

import functools

import param
from bokeh.models import ColumnDataSource, Legend, LegendItem, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import costs, paged

MODELS = ("qwen3-8b", "llama-3-8b")
GIB = 1 << 30
GPU_GIB = (24, 48, 80)  # nominal memory of an L4, an L40S, an H100 (CUDA reports a little less)
UTILIZATIONS = (0.8, 0.9, 0.95)  # vLLM's default is 0.9
CONTEXTS = (1024, 4096, 8192, 32768)
OTHER_GIB = 2  # activations and the rest, which vLLM measures; assumed here
BLOCK = paged.VLLM_BLOCK_SIZE
BF16 = 2
# Okabe-Ito: weights, the rest, the cache, held back
PARTS = (("weights", "#0072B2"), ("activations and the rest", "#999999"),
         ("KV cache", "#009E73"), ("held back", "#F0F0F0"))
HEIGHT = 150


@functools.lru_cache(maxsize=8)
def sizes(model):  # -> (name, layers, KV heads, head_dim, weight bytes in bf16)
    m = costs.preset(model)
    return m.name, m.layers, m.kv_heads, m.head_dim, costs.total_params(m) * BF16


def fit(model, gpu, utilization):  # -> (total, weights, other, cache, held back, page, blocks)
    _, layers, kv_heads, head_dim, weights = sizes(model)
    total = gpu * GIB
    cache = paged.available_kv_memory(total, utilization, weights, OTHER_GIB * GIB)
    page = paged.page_size_bytes(BLOCK, kv_heads, head_dim, BF16)
    blocks = paged.num_blocks(cache, page, layers)
    return total, weights, OTHER_GIB * GIB, max(cache, 0), total * (1 - utilization), page, blocks


def bar_state(model, gpu, utilization):
    total, *parts, _, _ = fit(model, gpu, utilization)
    left, out = 0.0, {c: [] for c in ("x", "w", "colour", "part")}
    for (name, colour), size in zip(PARTS, parts):
        share = size / total
        for c, v in (("x", left + share / 2), ("w", share), ("colour", colour), ("part", name)):
            out[c].append(v)
        left += share
    return {"source:bar": out}


def requests_at_once(blocks, context):  # -> whole requests of `context` tokens the pool holds
    return int(paged.max_concurrency(blocks, BLOCK, context))


def gib(nbytes):  # -> "59.04 GiB": the GPU's memory is counted in GiB, as vLLM logs it
    return f"{nbytes / GIB:.2f} GiB"


def text_state(model, gpu, utilization, context):
    total, weights, other, cache, _, page, blocks = fit(model, gpu, utilization)
    name, layers, kv_heads, head_dim, _ = sizes(model)
    per_request = paged.blocks_for(context, BLOCK)
    cached, recomputed = step_flops(model, context)
    return {"holes:fit": {
        "name": name, "gpu": f"{gpu} GiB", "util": f"{utilization:g}",
        "usable": gib(total * utilization), "weights": gib(weights),
        "other": gib(other), "cache": gib(cache),
        "page": fmt.count(page), "kv_heads": str(kv_heads), "head_dim": str(head_dim),
        "layers": str(layers), "blocks": fmt.count(blocks),
        "tokens": fmt.count(paged.logged_tokens(blocks, BLOCK)),
        "context": fmt.count(context), "per_request": fmt.count(per_request),
        "users": fmt.count(requests_at_once(blocks, context)),
        "concurrency": f"{paged.max_concurrency(blocks, BLOCK, context):.2f}",
        "per_token": fmt.count(paged.kv_bytes(1, layers, kv_heads, head_dim, BF16)),
        "with": fmt.scale_words(cached), "without": fmt.scale_words(recomputed),
        "ratio": f"{recomputed / cached:,.0f}",
    }}


def step_flops(model, context):  # -> FLOPs of the decode step at `context` tokens: with the
    # cache, and recomputing the context
    m = costs.preset(model)
    w, a = costs.other_flops_decode(m), costs.pair_flops(m)
    return (paged.step_flops(w, a, context),
            paged.step_flops(w, a, context, cached=False))


FIT = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>{hole("name")} on {hole("gpu")} at gpu_memory_utilization {hole("util")}: '
    f'{hole("usable")} to use, less {hole("weights")} of weights and {hole("other")} of '
    f'activations and the rest, leaves {hole("cache", "b")} for the cache.</p>'
    f'<p>A block of {BLOCK} tokens in one layer: 2 × {BLOCK} × {hole("kv_heads")} KV heads × '
    f'{hole("head_dim")} × 2 bytes = {hole("page")} bytes. The cache ÷ that ÷ '
    f'{hole("layers")} layers = {hole("blocks", "b")} blocks.</p>'
    f'<p>vLLM would log "GPU KV cache size: {hole("tokens")} tokens": {hole("blocks")} '
    f'blocks × {BLOCK} slots, not a promise that so many tokens of real requests fit. A request '
    f'of {hole("context")} tokens holds {hole("per_request")} blocks, so {hole("users", "b")} '
    f'such requests fit at once (vLLM\'s "maximum concurrency": {hole("concurrency")}x).</p>'
    f'<p class="ae-small">Each token adds {hole("per_token")} bytes of keys and values. The '
    f'decode step at {hole("context")} tokens takes {hole("with")} FLOPs with the cache and '
    f'{hole("without")} recomputing the context, {hole("ratio")} times as many.</p></div>')

FitReadout = readout_class("FitReadout", FIT, module=__name__)
STYLE = resources.stylesheet("tiles.css")


class FitPanel(StatePanel):
    """How many blocks fit: a GPU's memory, the weights, and the cache in blocks of 16 tokens."""

    readout_css = STYLE

    model = param.Selector(default="llama-3-8b", objects=list(MODELS), label="model")
    gpu = param.Selector(default=80, objects=list(GPU_GIB), label="GPU memory, GiB")
    utilization = param.Selector(default=0.9, objects=list(UTILIZATIONS),
                                 label="gpu_memory_utilization")
    context = param.Selector(default=8192, objects=list(CONTEXTS), label="tokens a request")

    url_keys = ("model", "gpu", "utilization", "context")

    @classmethod
    def controls(cls):
        return [Control.choice("model", MODELS), Control.choice("gpu", GPU_GIB),
                Control.choice("utilization", UTILIZATIONS),
                Control.choice("context", CONTEXTS)]

    @classmethod
    def parts(cls):
        return [Part(("model", "gpu", "utilization"), bar_state),
                Part(("model", "gpu", "utilization", "context"), text_state)]

    def build(self, state):
        paint = ink()
        self.bar_source = ColumnDataSource(state["source:bar"])
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(0, 1), y_range=Range1d(0, 1), min_width=240,
                     outline_line_color=None, background_fill_color=paint.paper)
        # the bar above, the legend under it
        fig.rect("x", 0.72, "w", 0.5, source=self.bar_source, fill_color="colour",
                 line_color="#666666")
        # the legend's swatches are glyphs of their own, off the range: an item drawn from the
        # bar's field would name a column, not a part, in the still
        swatches = [fig.rect(x=[-1], y=[-1], width=0.1, height=0.1, fill_color=colour,
                             line_color="#666666") for _, colour in PARTS]
        fig.add_layout(Legend(items=[LegendItem(label=name, renderers=[swatch])
                                     for (name, _), swatch in zip(PARTS, swatches)],
                              orientation="horizontal", location="bottom_left",
                              label_text_font_size="12px"))
        fig.axis.visible = False
        fig.grid.visible = False
        self.figure = fig
        self._text = self.new_readout(FitReadout, state["holes:fit"])

        self.widgets = {name: chrome.radio(self, name, width) for name, width in
                        (("model", 220), ("gpu", 150), ("utilization", 170), ("context", 260))}
        self.targets = {"source:bar": self.bar_source, "holes:fit": self._text}
        controls = [chrome.labelled(w, self.param[n].label) for n, w in self.widgets.items()]
        return chrome.chart_panel(self, registry.title_of(type(self)), controls, fig, HEIGHT,
                                  self._text, STYLE)
