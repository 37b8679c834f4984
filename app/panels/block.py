"""Many heads, one block: where one head's attention sits in a whole model.

Two diagrams of a real model's config. The first is the model: the token embedding
(vocab × d_model) puts each token on the residual stream; each of L layers reads the stream
through a norm into attention and adds the result back, then through a norm into the MLP
(d_model → d_ff → d_model) and adds that back; a final norm and lm_head (d_model → vocab) give
the logits. The second opens attention: h query heads, each n × d_k; K and V heads, each shared
by h ÷ kv_heads query heads (grouped-query attention); the heads' outputs side by side,
n × (h·d_k), and W_O back to n × d_model, added to the stream.

The panel has the one shape (app/kit/states.py): one control, `model`, over the documents'
three presets (in the first chapter its URL key is block_model: the cost panel's `model` keeps
its name, `url_yields`). Every size and parameter count is read from the preset's config
through attention_core.costs; the drawing is fixed pixels, so its 12 px labels read the same
on a phone, in the build's still and at 1280 px.
"""

import functools
import itertools

import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import CODE_CSS, ink
from attention_core import costs

MODELS = tuple(costs.PRESETS)  # "qwen3-8b", "gpt2", "llama-3-8b"
LABELS = {costs.PRESET_NAMES[key]: key for key in MODELS}  # the buttons' texts
DEFAULT_MODEL = "qwen3-8b"  # the cost panel's default: the page's models open alike
# Okabe-Ito: one colour per kind of part
VOCAB, NORM, ATTENTION, MLP = "#CC79A7", "#999999", "#0072B2", "#E69F00"
Q, K, V, OUT = "#0072B2", "#D55E00", "#009E73", "#56B4E9"
# fixed pixels: 320 wide fits a phone's panel and is the still's own width (app/chapters/
# stills.py draws a fixed figure up to 320 units wide as it is, 12 px type included)
WIDTH, MODEL_HEIGHT, HEADS_HEIGHT = 320, 392, 372
STRIP_LEFT, STRIP_WIDTH = 10, 300  # px: where the widest row of figure two sits
GROUP_GAP = 3  # px between the query heads of two KV groups


@functools.cache
def sizes(model):  # a preset's key -> every figure the panel shows, from its config
    m = costs.preset(model)
    attention, mlp = costs.attention_params(m), costs.dense_mlp_params(m)
    embedding = m.vocab * m.embedding_width
    positions = m.max_positions * m.hidden if m.learned_positions and m.max_positions else 0
    lm_head = 0 if m.tied else costs.lm_head_params(m)
    layers = m.layers * (attention + mlp)
    total = costs.total_params(m)
    return {"name": m.name, "layers": m.layers, "d_model": m.hidden, "heads": m.heads,
            "kv_heads": m.kv_heads, "head_dim": m.head_dim, "d_ff": m.intermediate,
            "vocab": m.vocab, "tied": m.tied, "max_positions": m.max_positions,
            "attention": attention, "mlp": mlp, "w_q": m.hidden * m.heads * m.head_dim,
            "w_k": m.hidden * m.kv_heads * m.head_dim,
            "w_v": m.hidden * m.kv_heads * m.v_head_dim, "w_o": m.heads * m.v_head_dim * m.hidden,
            "embedding": embedding, "positions": positions, "lm_head": lm_head,
            "lm_head_work": costs.lm_head_params(m), "stack": layers, "total": total,
            # norms and biases: what the total holds besides the matrices counted here
            "rest": total - layers - embedding - positions - lm_head}


class Drawing:
    """Boxes, lines and centred labels in pixels from the top; -> a figure's columns."""

    def __init__(self, height):
        self.height = height
        self.box = {k: [] for k in ("x", "y", "w", "h", "fill", "alpha", "line")}
        self.label = {"x": [], "y": [], "text": []}
        self.line = {"x0": [], "y0": [], "x1": [], "y1": []}

    def rect(self, left, top, w, h, fill, alpha=0.3, line=True):  # line: outlined in fill
        for column, value in zip(self.box, (left + w / 2, self.height - top - h / 2, w, h,
                                            fill, alpha, fill if line else None)):
            self.box[column].append(value)

    def text(self, x, top, text):  # a 12 px line centred on (x, top + 7)
        self.label["x"].append(x)
        self.label["y"].append(self.height - top - 7)
        self.label["text"].append(text)

    def part(self, top, h, fill, lines, left=12, w=296):  # a box with its lines centred in it
        self.rect(left, top, w, h, fill)
        first = top + h / 2 - 8 * len(lines)
        for i, line in enumerate(lines):
            self.text(left + w / 2, first + 1 + 16 * i, line)

    def path(self, *points):  # a polyline through (x, top) points
        for (x0, t0), (x1, t1) in itertools.pairwise(points):
            for column, value in zip(self.line, (x0, self.height - t0, x1, self.height - t1)):
                self.line[column].append(value)


# --- figure one: the model, top to bottom ----------------------------------------------------
STREAM = 22  # px: x of the residual stream
CENTRE = 176  # px: x of the column of parts inside a layer
ADDS = (180, 264)  # px from the top: where attention's and the MLP's outputs join the stream


def model_state(model):  # the whole model's parts, their sizes and parameters
    s = sizes(model)
    d = Drawing(MODEL_HEIGHT)
    d.part(26, 36, VOCAB, [f"token embedding: {s['vocab']:,} × {s['d_model']:,}",
                           f"{s['embedding']:,} parameters"])
    d.text(125, 66, f"residual stream: n × {s['d_model']:,}")
    d.rect(8, 84, 304, 192, NORM, alpha=0.08)  # the layer, repeated
    d.text(262, 88, f"× {s['layers']} layers")
    for top, add, fill, lines in (
            (134, ADDS[0], ATTENTION, [f"attention: {s['heads']} heads",
                                       f"{s['attention']:,} parameters"]),
            (218, ADDS[1], MLP, [f"MLP: {s['d_model']:,} → {s['d_ff']:,} → {s['d_model']:,}",
                                 f"{s['mlp']:,} parameters"])):
        d.part(top - 28, 20, NORM, ["norm"], left=CENTRE - 40, w=80)
        d.path((STREAM, top - 18), (CENTRE - 40, top - 18))  # the stream feeds the norm
        d.path((CENTRE, top - 8), (CENTRE, top))
        d.part(top, 36, fill, lines, left=48, w=256)
        d.path((CENTRE, top + 36), (CENTRE, add), (STREAM, add))  # and takes its output
    d.path((STREAM, 62), (STREAM, 296), (CENTRE - 45, 296))
    d.part(286, 20, NORM, ["final norm"], left=CENTRE - 45, w=90)
    d.path((CENTRE, 306), (CENTRE, 316))
    d.part(316, 36, VOCAB, [f"lm_head: {s['d_model']:,} → {s['vocab']:,}",
                            f"tied: the embedding's {s['embedding']:,}" if s["tied"]
                            else f"{s['lm_head']:,} parameters"])
    d.path((CENTRE, 352), (CENTRE, 362))
    d.text(CENTRE, 364, f"logits: n × {s['vocab']:,}")
    return {"source:model_boxes": d.box, "source:model_labels": d.label,
            "source:model_lines": d.line}


# --- figure two: inside attention --------------------------------------------------------------

def head_columns(heads, kv_heads):  # -> [(left, width)] per query head, [(left, width)] per
    # KV head: the query heads of one group side by side, a gap between groups, the whole
    # STRIP_WIDTH wide; a KV head spans its group's query heads
    group = heads // kv_heads
    width = (STRIP_WIDTH - GROUP_GAP * (kv_heads - 1)) / heads
    query, kv = [], []
    for g in range(kv_heads):
        left = STRIP_LEFT + g * (group * width + GROUP_GAP)
        kv.append((left, group * width))
        query += [(left + i * width, width) for i in range(group)]
    return query, kv


def sharing(heads, kv_heads):  # -> how the query heads share K and V, in words
    if kv_heads == heads:
        return "one K, V head per query head"
    if kv_heads == 1:
        return f"one K, V head serves all {heads}"
    return f"each K, V head serves {heads // kv_heads} query heads"


def strip(d, columns, top, h, fill, per_group=1):  # one box per column, 1 px apart; the
    # boxes of alternate KV groups lighter, so a group reads as one
    for i, (left, w) in enumerate(columns):
        d.rect(left, top, w - 1, h, fill, alpha=0.9 if (i // per_group) % 2 == 0 else 0.55,
               line=False)


def heads_state(model):  # the heads, their concatenation and W_O
    s = sizes(model)
    h, kv, d_k, d_model = s["heads"], s["kv_heads"], s["head_dim"], s["d_model"]
    concat = h * d_k
    # the rows n × d_model and n × h·d_k drawn to scale: the wider one fills the strip
    model_w = STRIP_WIDTH * d_model / max(d_model, concat)
    model_left = STRIP_LEFT + (STRIP_WIDTH - model_w) / 2
    query, shared = head_columns(h, kv)
    d = Drawing(HEADS_HEIGHT)
    d.text(160, 28, f"x, the stream, normalised: n × {d_model:,}")
    d.rect(model_left, 44, model_w, 12, NORM, alpha=0.9, line=False)
    d.text(160, 68, f"Q: {h} heads, n × {d_k} each")
    strip(d, query, 84, 14, Q, per_group=h // kv)
    d.text(160, 110, f"K and V: {kv} heads, n × {d_k} each")
    strip(d, shared, 126, 12, K)
    strip(d, shared, 138, 12, V)
    d.text(160, 154, sharing(h, kv))
    d.text(160, 182, f"per head: softmax(QKᵀ ÷ √{d_k}) V")
    strip(d, query, 200, 14, OUT, per_group=h // kv)
    d.text(160, 220, f"concatenated: n × ({h} × {d_k}) = n × {concat:,}")
    d.part(246, 36, ATTENTION, [f"W_O: {concat:,} × {d_model:,}", f"{s['w_o']:,} parameters"],
           left=40, w=240)
    d.path((160, 282), (160, 296))
    d.rect(model_left, 296, model_w, 12, NORM, alpha=0.9, line=False)
    d.text(160, 314, f"added to the stream: n × {d_model:,}")
    if s["w_k"] == s["w_v"]:
        d.text(160, 344, f"W_Q: {s['w_q']:,} · W_K, W_V: {s['w_k']:,} each")
    else:
        d.text(160, 344, f"W_Q: {s['w_q']:,} · W_K: {s['w_k']:,} · W_V: {s['w_v']:,}")
    return {"source:heads_boxes": d.box, "source:heads_labels": d.label,
            "source:heads_lines": d.line}


# --- the sentences ---------------------------------------------------------------------------

def share(part, whole):  # -> "19%"
    return fmt.percent(part / whole, 2)


def text_state(model):  # the structure in words, then where the parameters are
    s = sizes(model)
    h, kv, d_k, d_model = s["heads"], s["kv_heads"], s["head_dim"], s["d_model"]
    concat = h * d_k
    if concat == d_model:
        width = (f"{h} query heads × {d_k} = {concat:,} = the hidden size (d_model), so "
                 "W_O, the output projection, is square")
    else:
        width = (f"{h} query heads × {d_k} = {concat:,}, not the hidden size (d_model, "
                 f"{d_model:,}): W_O, the output projection, maps {concat:,} back to "
                 f"{d_model:,}")
    if kv == h:
        kv_text = f"{kv} KV heads, one for each query head (no sharing)"
    elif kv == 1:
        kv_text = f"1 KV head shared by all {h} query heads (multi-query attention)"
    else:
        kv_text = (f"{kv} KV heads, each shared by {h // kv} query heads "
                   "(grouped-query attention)")
    layer = s["attention"] + s["mlp"]
    structure = (f"{s['name']}: {width}; {kv_text}. A residual stream {d_model:,} wide runs "
                 f"from the token embedding through {s['layers']} layers, each adding "
                 "attention's output and then the MLP's, both computed from a normed copy of "
                 "the stream (a norm rescales each token's vector), to a final norm and "
                 f"lm_head, whose {s['vocab']:,} outputs per token are the logits: one number "
                 "per vocabulary token.")
    embedding = f"the token embedding ({s['embedding']:,})"
    if s["positions"]:
        embedding += (f", a learned position table of {s['max_positions']:,} × {d_model:,} "
                      f"({s['positions']:,})")
    if s["tied"]:
        head = "lm_head, which reuses the embedding's parameters (tied: nothing more stored)"
    else:
        head = f"lm_head ({s['lm_head']:,})"
    params = (f"Attention holds {s['attention']:,} of the {layer:,} parameters in one layer's "
              f"matrices ({share(s['attention'], layer)}), the MLP the other {s['mlp']:,}. "
              f"{s['layers']} layers ({s['stack']:,}), {embedding}, {head} and "
              f"{s['rest']:,} in small vectors (norm scales, biases) make {s['total']:,} in all.")
    return {"holes:block": {"structure": structure, "params": params}}


def block_state(model):
    return {**model_state(model), **heads_state(model), **text_state(model)}


BlockReadout = readout_class("BlockReadout", (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>{hole("structure")}</p><p>{hole("params")}</p></div>'), module=__name__)

CAPTION = (
    "The first diagram is the whole model, from the token embedding to the logits: the "
    "residual stream runs down its left edge, and every layer adds two things to it, "
    "attention's output and the MLP's. The second opens one layer's attention: each query "
    "head has its own Q; each K, V head serves a group of query heads, shaded alike (in "
    "GPT-2 small a group is one head); the heads' outputs, side by side, make one "
    "n × (h·d_k) matrix, which W_O maps back to n × d_model before it is added. Every size "
    "and parameter count is read from the model's `config.json` and counted as the cost "
    "panel counts it.")


class BlockPanel(StatePanel):
    """The whole model and one layer's multi-head attention, sized from a real config."""

    model = param.Selector(default=DEFAULT_MODEL, objects=LABELS, label="model")

    url_keys = ("model",)
    url_yields = True  # in a chapter, the cost panel's `model` keeps its name

    def __init__(self, **params):
        self._ink = ink()
        super().__init__(**params)

    @classmethod
    def controls(cls):
        return [Control.choice("model", MODELS)]

    @classmethod
    def parts(cls):
        return [Part(("model",), block_state)]

    def _figure(self, height, boxes, labels, lines, title, adds=()):  # -> a fixed diagram
        fig = figure(width=WIDTH, height=height, tools="", toolbar_location=None,
                     x_range=Range1d(0, WIDTH), y_range=Range1d(0, height), min_border=0,
                     x_axis_location=None, y_axis_location=None, outline_line_color=None,
                     tags=["diagram"])
        fig.title.text, fig.title.visible = title, False  # drawn below: it names the still
        fig.grid.visible = False
        fig.segment("x0", "y0", "x1", "y1", source=lines, line_color=self._ink.rule,
                    line_width=1.5)
        fig.rect("x", "y", width="w", height="h", source=boxes, fill_color="fill",
                 fill_alpha="alpha", line_color="line", line_width=1)
        if adds:  # the residual adds: ⊕ on the stream
            fig.scatter([STREAM] * len(adds), [height - a for a in adds], size=17,
                        marker="circle_cross", fill_color=self._ink.paper,
                        line_color=self._ink.strong, line_width=1.5)
        fig.text("x", "y", text="text", source=labels, text_font_size="12px",
                 text_align="center", text_baseline="middle", text_color=self._ink.text)
        fig.text([8], [height - 12], text=[title], text_font_size="13px",
                 text_font_style="bold", text_baseline="middle", text_color=self._ink.strong)
        return fig

    def build(self, state):
        sources = {name: ColumnDataSource(value) for name, value in state.items()
                   if name.startswith("source:")}
        self.model_figure = self._figure(
            MODEL_HEIGHT, *(sources[f"source:model_{k}"] for k in ("boxes", "labels", "lines")),
            "The whole model", adds=ADDS)
        self.heads_figure = self._figure(
            HEADS_HEIGHT, *(sources[f"source:heads_{k}"] for k in ("boxes", "labels", "lines")),
            "Inside attention, one layer")
        self.text = self.new_readout(BlockReadout, state["holes:block"])
        self.targets = {**sources, "holes:block": self.text}
        self.widgets = {"model": pn.widgets.RadioButtonGroup.from_param(
            self.param.model, color="primary", variant="outline", width=320)}
        controls = pn.Column(pn.pane.HTML("model", margin=(0, 10)), self.widgets["model"],
                             margin=0)
        figures = pn.FlexBox(*(pn.pane.Bokeh(f, width=WIDTH, height=f.height, margin=(5, 10))
                               for f in (self.model_figure, self.heads_figure)),
                             sizing_mode="stretch_width")
        heading = self.own(chrome.heading(registry.title_of(type(self))))
        return pn.Column(*heading, self.url_note, controls, figures, self.text,
                         pn.pane.Markdown(CAPTION, sizing_mode="stretch_width", margin=(0, 10),
                                          stylesheets=[CODE_CSS]),
                         sizing_mode="stretch_width", css_classes=["ae-panel"])
