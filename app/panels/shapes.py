"""Shapes first: every matrix of one attention head drawn as its rows × columns.

The words X (n × d_model) are projected into queries, keys and values; the queries against
the keys make the scores (n × n in prefill); softmax turns each row into weights; the
weights mix the values into the output. In decode only the newest token asks, so Q, the
scores, the weights and the output have one row, while K and V keep all n rows: the cache.
One picture shows where the n² lives before any arithmetic.

The panel has the one shape (app/kit/states.py): sequence length (3 to 8) and phase, its own
controls (in the first chapter its URL keys are shapes_length and shapes_phase: the head's
come first). Every size is read off the
worked example's real computation (attention_core.worked_example.run), and the caption gives
the same shapes at a real model's sizes (Qwen3-8B, the cost panel's first model).
"""

import functools

import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, registry
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import costs, head, worked_example

LENGTHS = tuple(range(3, worked_example.MAX_LENGTH + 1))
REAL_MODEL = "qwen3-8b"  # the cost panel's first model: true sizes for the caption
# Okabe-Ito, one colour per kind of matrix
COLOURS = {"X": "#999999", "Q": "#0072B2", "K": "#D55E00", "V": "#009E73",
           "S": "#E69F00", "A": "#F0E442", "O": "#56B4E9"}
NAMES = {"X": "X", "Q": "Q", "K": "K", "V": "V", "S": "scores", "A": "weights",
         "O": "output"}
# where each box's top-left corner sits, in cells: two rows of boxes, read left to right
LEFT = {"X": 0, "Q": 10, "K": 17, "V": 24, "S": 0, "A": 10, "O": 24}
TOP_ROW, BOTTOM_ROW = 20.0, 9.0  # y of each row's top edge, in cells
ROW_OF = {"X": TOP_ROW, "Q": TOP_ROW, "K": TOP_ROW, "V": TOP_ROW,
          "S": BOTTOM_ROW, "A": BOTTOM_ROW, "O": BOTTOM_ROW}
X_RANGE, Y_RANGE = (-0.5, 29.5), (0.0, 21.0)
WIDTH = 560  # px at most; the height keeps every cell square


@functools.cache
def shapes(length, phase):  # -> {matrix: (rows, columns)}, read off the real computation
    r = worked_example.run(length, phase=phase)
    # decode projects only the newest word: X has Q's rows; K and V keep every row (the cache)
    x_rows = r.q.shape[0]
    return {"X": (x_rows, worked_example.D_MODEL), "Q": r.q.shape, "K": r.k.shape,
            "V": r.v.shape, "S": r.scaled_scores.shape, "A": r.weights.shape,
            "O": r.output.shape}


def shapes_state(length, phase):  # the boxes, their labels and the sentence under them
    return {**boxes_state(length, phase), **text_state(length, phase)}


def boxes_state(length, phase):  # the boxes and their labels
    dims = shapes(length, phase)
    box = {"x": [], "y": [], "w": [], "h": [], "colour": []}
    label = {"x": [], "y": [], "text": []}
    for name, (rows, cols) in dims.items():
        left, top = LEFT[name], ROW_OF[name]
        box["x"].append(left + cols / 2)
        box["y"].append(top - rows / 2)
        box["w"].append(cols)
        box["h"].append(rows)
        box["colour"].append(COLOURS[name])
        label["x"] += [left, left]
        label["y"] += [top + 0.7, top - rows - 0.7]
        label["text"] += [NAMES[name], f"{rows} × {cols}"]
    return {"source:boxes": box, "source:labels": label}


def text_state(length, phase):  # the sentence under the figure
    dims = shapes(length, phase)
    rows_q, n = dims["S"]
    if phase == "prefill":
        where = (f"All {n} tokens ask at once: the scores are {rows_q} × {n}, "
                 f"{rows_q * n} dot products, the n² of prefill.")
    else:
        where = (f"Only the newest token is projected and asks: X, Q, the scores, the weights "
                 f"and the output have 1 row, while K and V keep all {n} rows, {n - 1} of them "
                 f"cached from earlier steps: {n} dot products.")
    return {"holes:shapes": {"where": where}}


@functools.lru_cache(maxsize=1)
def real_sizes():  # -> the caption's real model sizes, from its config
    m = costs.preset(REAL_MODEL)
    return {"model": m.name, "d_model": f"{m.hidden:,}", "heads": f"{m.heads:,}",
            "kv_heads": f"{m.kv_heads:,}", "d_k": f"{m.head_dim:,}",
            "group": f"{m.heads // m.kv_heads:,}"}


ShapesReadout = readout_class("ShapesReadout", (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>{hole("where")}</p></div>'), module=__name__)


def caption():  # -> Markdown: what each box is, and the same shapes at a real model's sizes
    s = real_sizes()
    return ("X holds the words' vectors, each as wide as the hidden size (d_model); "
            "Q = X W<sub>Q</sub>, K = X W<sub>K</sub> and V = X W<sub>V</sub>; the scaled "
            "scores are Q K<sup>T</sup> ÷ √d<sub>k</sub>; softmax turns each row of them into "
            "attention weights; the output is the weights times V. "
            f"Here d_model = {worked_example.D_MODEL} and d<sub>k</sub> = "
            f"{worked_example.D_K}. In {s['model']}, X has {s['d_model']} columns; each of "
            f"{s['heads']} query heads has its own Q (n × {s['d_k']}) and its own scores "
            f"(n × n in prefill, 1 × n in decode), and each of {s['kv_heads']} KV heads holds "
            f"a K and a V (n × {s['d_k']}) shared by {s['group']} query heads.")


class ShapesPanel(StatePanel):
    """Every matrix of one head, drawn to its size: where the n² lives."""

    length = param.Integer(default=6, bounds=(LENGTHS[0], LENGTHS[-1]), label="sequence length")
    phase = param.Selector(default="prefill", objects=list(head.PHASES), label="phase")

    url_keys = ("length", "phase")

    def __init__(self, **params):
        self._ink = ink()
        super().__init__(**params)

    @classmethod
    def controls(cls):
        return [Control.slider("length", LENGTHS), Control.choice("phase", head.PHASES)]

    @classmethod
    def parts(cls):
        return [Part(("length", "phase"), shapes_state)]

    def build(self, state):
        self.box_source = ColumnDataSource(state["source:boxes"])
        self.label_source = ColumnDataSource(state["source:labels"])
        fig = figure(title=None, width=WIDTH, sizing_mode="scale_width", max_width=WIDTH,
                     height=round(WIDTH * (Y_RANGE[1] - Y_RANGE[0]) / (X_RANGE[1] - X_RANGE[0])),
                     tools="", toolbar_location=None, x_range=Range1d(*X_RANGE),
                     y_range=Range1d(*Y_RANGE), outline_line_color=None, min_border=4)
        fig.rect("x", "y", width="w", height="h", source=self.box_source, fill_color="colour",
                 fill_alpha=0.85, line_color=self._ink.strong, line_width=1)
        fig.text("x", "y", text="text", source=self.label_source, text_font_size="12px",
                 text_baseline="middle", text_color=self._ink.strong)
        fig.axis.visible = False
        fig.grid.visible = False
        self.figure = fig
        self.text = self.new_readout(ShapesReadout, state["holes:shapes"])
        self.targets = {"source:boxes": self.box_source, "source:labels": self.label_source,
                        "holes:shapes": self.text}
        self.widgets = {
            "length": pn.widgets.IntSlider.from_param(self.param.length, width=260),
            "phase": pn.widgets.RadioButtonGroup.from_param(
                self.param.phase, color="primary", variant="outline", width=180)}
        controls = [pn.FlexBox(self.widgets["length"], pn.Column(
            pn.pane.HTML("phase", margin=(0, 10)), self.widgets["phase"], margin=0),
            align_items="flex-end", sizing_mode="stretch_width")]
        heading = self.own(chrome.heading(registry.title_of(type(self))))
        return pn.Column(*heading, self.url_note, *controls,
                         pn.pane.Bokeh(fig, sizing_mode="scale_width", max_width=WIDTH,
                                       min_width=240),
                         self.text, pn.pane.Markdown(caption(), sizing_mode="stretch_width",
                                                     margin=(0, 10)),
                         sizing_mode="stretch_width", css_classes=["ae-panel"])
