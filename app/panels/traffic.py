"""What the tiles save: bytes moved between GPU memory and the chip, for one layer of a real model.

The standard implementation writes the scores S and the weights P to GPU memory and reads
each back (4 n² values a head); the tiled kernel reads Q once, reads K and V again for every
block of query rows, and writes O and the log-sum-exp once. At Llama-3-8B's sizes (32 heads
of head_dim 128, bf16: Llama 3.1 8B, which has Llama 3 8B's shape and reads up to 131,072
tokens) and FlashAttention-2's tiles for head_dim 128 (128 query rows by 64 keys), the panel
counts both as prompts grow, with and without the causal mask, which lets the tiled kernel skip
the tiles above the diagonal. Every count is attention_core.flash's.

The panel has the one shape (app/kit/states.py). Controls: the prompt (powers of two, 512 to
131,072 tokens) and the causal mask. Two parts: the curves (mask) and the marker with its
text (prompt, mask).
"""

import functools

import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Legend, LegendItem, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import costs, flash

MODEL = "llama-3-8b"  # the shape of Llama 3.1 8B too, which reads up to 131,072 tokens
MODEL_NAME = "Llama 3.1 8B"
# FlashAttention-2's forward tiles for head_dim 128 on A100 and H100 (flash-attention's
# csrc/flash_attn/src/flash_fwd_launch_template.h, run_mha_fwd_hdim128): kBlockM × kBlockN
KERNEL_ROWS, KERNEL_COLS = 128, 64
ON_CHIP_KB = 192  # an A100 unit's (SM's) on-chip SRAM, as the FlashAttention paper counts it
BYTES = 2  # bf16
PROMPTS = tuple(2 ** e for e in range(9, 18))  # 512 .. 131,072
STANDARD, TILED = "#D55E00", "#0072B2"  # Okabe-Ito
HEIGHT = 300


@functools.lru_cache(maxsize=1)
def shape():  # -> (heads, head_dim) of the model
    m = costs.preset(MODEL)
    return m.heads, m.head_dim


@functools.lru_cache(maxsize=64)
def layer_traffic(n, causal):  # -> flash.Traffic for one layer: every head's, summed
    heads, d = shape()
    t = flash.traffic(n, d, KERNEL_ROWS, KERNEL_COLS, causal=causal, bytes_per_value=BYTES)
    return flash.Traffic(*(heads * x for x in (t.standard, t.tiled, t.standard_square,
                                                t.kv_reads)))


def curves_state(causal):
    return {"source:curves": {
        "n": list(PROMPTS),
        "standard": [layer_traffic(n, causal).standard for n in PROMPTS],
        "tiled": [layer_traffic(n, causal).tiled for n in PROMPTS]}}


def marker_state(prompt, causal):
    heads, d = shape()
    t = layer_traffic(prompt, causal)
    count = flash.tile_count(prompt, d, KERNEL_ROWS, KERNEL_COLS, causal)
    rule_rows, rule_cols = flash.block_sizes(ON_CHIP_KB * 1024 // BYTES, d)
    return {
        "source:marker": {"n": [prompt, prompt], "bytes": [t.standard, t.tiled],
                          "colour": [STANDARD, TILED]},
        "holes:traffic": {
            "n": fmt.count(prompt), "standard": fmt.decimal_bytes(t.standard),
            "square": fmt.decimal_bytes(t.standard_square), "tiled": fmt.decimal_bytes(t.tiled),
            "kv": fmt.decimal_bytes(t.kv_reads), "ratio": f"{t.standard / t.tiled:.1f}",
            "blocks": fmt.count(-(-prompt // KERNEL_ROWS)),
            "upto": ", each up to its diagonal" if causal else "",
            "scratch": fmt.decimal_bytes(heads * prompt * prompt * BYTES),
            "skip": (f"The mask lets the kernel skip {fmt.count(count.skipped)} of "
                     f"{fmt.count(count.tiles)} tiles ({count.skipped / count.tiles:.0%}), and "
                     f"{1 - count.flops_visited / count.flops_square:.0%} of the FLOPs; the "
                     "standard way computes every score, then masks." if causal else
                     "No mask: every tile is computed."),
            "rule": f"{rule_rows} × {rule_cols}",
        }}


TRAFFIC = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>A prompt of {hole("n")} tokens, one layer of {MODEL_NAME} ({shape()[0]} query heads, '
    f'head_dim {shape()[1]}, bf16). The standard way moves {hole("standard", "b")}, of which '
    f'{hole("square")} is S and P written and read back. The tiled kernel moves '
    f'{hole("tiled", "b")}, of which {hole("kv")} is K and V, read again for each of the '
    f'{hole("blocks")} blocks of {KERNEL_ROWS} query rows{hole("upto")}: {hole("ratio")} '
    'times fewer bytes.</p>'
    f'{hole("skip", "p")}'
    f'<p class="ae-small">The standard way also holds {hole("scratch")} of scores at once '
    "(n² a head), the eager kernel's scratch; each unit of the tiled kernel holds one block of "
    f"{KERNEL_ROWS} queries and {KERNEL_COLS} keys on the chip, whatever the length. "
    "FlashAttention's rule for an on-chip memory of M values, B_c = ⌈M / 4d⌉ and "
    f'B_r = min(B_c, d), gives {hole("rule")} for {ON_CHIP_KB} KB of bf16 (an A100 '
    f"unit's); FlashAttention-2 runs {KERNEL_ROWS} × {KERNEL_COLS} at head_dim "
    f"{shape()[1]}.</p></div>")

TrafficReadout = readout_class("TrafficReadout", TRAFFIC, module=__name__)
STYLE = resources.stylesheet("tiles.css")


class TrafficPanel(StatePanel):
    """What the tiles save: bytes moved, standard against tiled, as the prompt grows."""

    readout_css = STYLE

    prompt = param.Integer(default=8192, bounds=(PROMPTS[0], PROMPTS[-1]), label="prompt tokens")
    causal = param.Boolean(default=True, label="causal mask")

    url_keys = ("prompt", "causal")

    @classmethod
    def controls(cls):
        return [Control.stop_slider("prompt", PROMPTS), Control.toggle("causal")]

    @classmethod
    def parts(cls):
        return [Part(("causal",), curves_state), Part(("prompt", "causal"), marker_state)]

    def build(self, state):
        paint = ink()
        self.curve_source = ColumnDataSource(state["source:curves"])
        self.marker_source = ColumnDataSource(state["source:marker"])
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_axis_type="log", y_axis_type="log",
                     x_range=Range1d(PROMPTS[0] / 1.3, PROMPTS[-1] * 1.3),
                     y_range=Range1d(1e7, 1e13), min_border_right=12, min_width=240,
                     outline_line_color=None)
        standard = fig.line("n", "standard", source=self.curve_source, line_color=STANDARD,
                            line_width=2.5)
        tiled = fig.line("n", "tiled", source=self.curve_source, line_color=TILED, line_width=2.5)
        fig.scatter("n", "bytes", source=self.marker_source, size=9, fill_color="colour",
                    line_color=paint.strong)
        fig.xaxis.axis_label = "prompt tokens n (log scale)"
        fig.yaxis.axis_label = "bytes moved, one layer (log scale)"
        fig.xaxis.ticker = FixedTicker(ticks=[512, 4096, 32768, 131072])
        fig.xaxis.major_label_overrides = {512: "512", 4096: "4,096", 32768: "32,768",
                                           131072: "131,072"}
        fig.yaxis.ticker = FixedTicker(ticks=[1e7, 1e9, 1e11, 1e13])
        fig.yaxis.major_label_overrides = {10_000_000: "10 MB", 1_000_000_000: "1 GB",
                                           100_000_000_000: "100 GB",
                                           10_000_000_000_000: "10 TB"}
        fig.add_layout(Legend(items=[
            LegendItem(label="standard: S and P through GPU memory", renderers=[standard]),
            LegendItem(label="tiled: K and V again per query block", renderers=[tiled]),
        ], location="top_left", label_text_font_size="12px", background_fill_alpha=0.8))
        chrome.quiet_axes(fig)
        self.figure = fig
        self._text = self.new_readout(TrafficReadout, state["holes:traffic"])
        self.widgets = {
            "prompt": chrome.stop_slider(self, "prompt", PROMPTS, "prompt tokens", width=260),
            "causal": pn.widgets.Toggle.from_param(self.param.causal, width=130)}
        self.targets = {"source:curves": self.curve_source, "source:marker": self.marker_source,
                        "holes:traffic": self._text}
        controls = [self.widgets["prompt"], self.widgets["causal"]]
        return chrome.chart_panel(self, registry.title_of(type(self)), controls, fig, HEIGHT,
                                  self._text, STYLE)
