"""Online softmax: read the scores a block at a time, keeping only a running max and sum.

When a block brings a larger max, the sum so far is rescaled by e^(old max − new max)
before the block's terms are added, and the result equals the sum over the whole row.
Attention walks the same way with an output accumulator, so the n × n scores never exist.

The panel has the one shape (app/kit/states.py). Its controls: the scores (the documents' row
2, 1, 3, 0 and a few that rise or hold their max differently), the block size, the step of
the scores' walk and the step of the attention walk; every step is a stop whose state Python
computed. The state has four parts: the scores' walk, the note for a step past its end, the
attention walk and the memory held. A live page also takes typed scores, computed by the
same part functions.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, model_code, registry, resources
from app.kit.chrome import hole, readout_class, scroll_box
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from app.kit.typed_numbers import in_force, numbers_of, preset_control, scores_input
from attention_core import online_softmax as core

MAX_SCORES = 16  # typed on a live page; the presets hold at most MAX_BLOCK
MAX_BLOCK = 8
LIMIT = 1000.0
HEIGHT = 210
BLUE, ORANGE = "#0072B2", "#E69F00"  # Okabe-Ito
# the presets: {the text a URL and the live box carry: what the list shows}
PRESETS = {
    "2, 1, 3, 0": "2, 1, 3, 0: the chapter's row",
    "3, 1, 2, 0": "3, 1, 2, 0: the first block holds the max",
    "1, 2, 3, 4, 5, 6": "1, 2, 3, 4, 5, 6: the max rises at every block",
    "0, 4, 1, 9, 2, 3, 8, 5": "0, 4, 1, 9, 2, 3, 8, 5: eight scores",
}
# the attention walk: one query against 6 keys and values of d = 4, one fixed draw
WALK_KEYS, WALK_D, WALK_SEED = 6, 4, 10  # seed 10: the max rises at every block of 2
# the documents' prefill example: an 8,192-token prompt, 32 heads, 2-byte scores, 128 tiles
BIG_N, BIG_HEADS, BIG_BYTES, BIG_TILE = 8192, 32, 2, 128
HISTORY = ("b", "s", "m", "r", "l", "c")  # a history row's holes: block, scores, max, ...
WALK = ("b", "k", "s", "m", "r", "l", "o", "c")  # an attention row's: ..., output so far


def num(x, digits=4):  # a number in the walk: −∞ spelled out, real minus signs
    return fmt.sig_figures(x, digits)


@functools.lru_cache(maxsize=1)
def walk_inputs():  # -> q [d], k [n, d], v [n, d]: one fixed draw
    rng = np.random.default_rng(WALK_SEED)
    q, k, v = (rng.standard_normal(WALK_D), rng.standard_normal((WALK_KEYS, WALK_D)),
               rng.standard_normal((WALK_KEYS, WALK_D)))
    for a in (q, k, v):
        a.flags.writeable = False  # shared by every session
    return q, k, v


def scores_of(scores):  # text or numbers -> tuple of floats (ValueError if not)
    return numbers_of(scores, max_count=MAX_SCORES, limit=LIMIT, what="the scores")


def blocks_in(n, block):  # scores, block size -> how many blocks the walk reads
    return math.ceil(n / block)


@dataclass(frozen=True)
class OnlineNumbers:
    """Everything the panel shows, for one setting of the controls."""

    scores: tuple
    result: core.OnlineSoftmax
    step: int  # blocks read so far, 0..len(result.steps)
    attention_steps: tuple  # of core.AttentionStep
    output: np.ndarray  # [d] the tiled walk's output
    naive: np.ndarray  # [d] the same query through the whole-row softmax
    block: int


def online_numbers(scores, block, step):  # -> OnlineNumbers
    q, k, v = walk_inputs()
    steps, output = attention_walk(block)
    s = scores_of(scores)
    result = core.online_softmax(s, block)
    return OnlineNumbers(scores=s, result=result, step=min(step, len(result.steps)),
                         attention_steps=steps, output=output,
                         naive=core.naive_attention(q[None], k, v)[0], block=block)


@functools.lru_cache(maxsize=MAX_BLOCK)
def attention_walk(block):  # -> (steps, output [d]) of the fixed query, block keys at a time
    q, k, v = walk_inputs()
    return core.attention_walk(q, k, v, block_size=block)


# --- the readouts: templates of empty holes --------------------------------------------------

NOW = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div>{hole("head", "b")} {hole("how")}{hole("rescale", "b")}{hole("how2")}'
    f'{hole("sum", "b")}{hole("tail")}</div>'
    f'<div class="ae-end">All {hole("end_n")} scores read. Running sum {hole("end_sum", "b")} '
    f'(relative to the max, {hole("end_max")}); the whole row summed at once, '
    f'Σ e^(score − {hole("end_max")}): {hole("end_full", "b")}. They are {hole("end_agree")}: '
    'nothing was stored and nothing lost.</div>'
    f'{hole("so_far", "div", class_="ae-small")}</div>')

HISTORY_TABLE = (
    '<div class="ae-readout" aria-live="polite">' + scroll_box("the blocks so far")
    + '<table class="ae-arith">'
    '<caption class="ae-sr">the blocks: running max, rescale factor and running sum after '
    "each</caption><thead><tr><th scope='col'>block</th><th scope='col'>scores</th>"
    "<th scope='col'>max</th><th scope='col'>rescale</th><th scope='col'>sum</th>"
    "<th scope='col'><span class='ae-sr'>now</span></th></tr></thead><tbody>"
    + "".join(
        f"<tr>{hole(f'hb{j}', 'th', scope='row')}{hole(f'hs{j}', 'td')}{hole(f'hm{j}', 'td')}"
        f"{hole(f'hr{j}', 'td')}{hole(f'hl{j}', 'td')}{hole(f'hc{j}', 'td', class_='ae-now')}"
        "</tr>" for j in range(MAX_SCORES))
    + "</tbody></table></div></div>")

ATTENTION_INTRO = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>One query against {WALK_KEYS} keys and values of d = {WALK_D} (one fixed random '
    f'draw), read {hole("per_block")} at a time. Besides the running max and sum, the walk '
    'keeps an output accumulator Σ e^(s − max) × value; it is rescaled by the same factor as '
    'the sum, and the output so far is accumulator ÷ sum.</p></div>')

ATTENTION = (
    '<div class="ae-readout" aria-live="polite">'
    f'<div>{hole("head", "b")} {hole("how")}</div>'
    + scroll_box("the attention walk") + '<table class="ae-arith"><caption class="ae-sr">'
    'the attention walk '
    "block by block</caption><thead><tr><th scope='col'>block</th><th scope='col'>keys</th>"
    f"<th scope='col'>scores q·k ÷ √{WALK_D}</th><th scope='col'>max</th>"
    "<th scope='col'>rescale</th><th scope='col'>sum</th><th scope='col'>output so far</th>"
    "<th scope='col'><span class='ae-sr'>now</span></th></tr></thead><tbody>"
    + "".join(
        "<tr>" + hole(f"ab{j}", "th", scope="row")
        + "".join(hole(f"a{c}{j}", "td") for c in WALK[1:-1])
        + hole(f"ac{j}", "td", class_="ae-now") + "</tr>" for j in range(WALK_KEYS))
    + "</tbody></table></div>"
    f'<div class="ae-if">tiled output {hole("tiled", "span")}</div>'
    f'<div>naive output {hole("naive")} (whole row, softmax, weighted sum)</div>'
    f'<div class="ae-if">largest difference: {hole("diff", "b")} ({hole("diff_says")})</div>'
    f'{hole("pending", "div", class_="ae-small")}</div>')

MEMORY = (
    '<div class="ae-readout" aria-live="polite"><b>Scores held at once</b><ul class="ae-list">'
    f'<li>here, if all {WALK_KEYS} tokens were queries: naive {WALK_KEYS} × {WALK_KEYS} = '
    f'{hole("naive_small")} bytes (8-byte floats); tiled {hole("tile")} × {hole("tile")} = '
    f'{hole("tiled_small")} bytes</li>'
    f'<li>an {BIG_N:,}-token prompt, {BIG_HEADS} heads, 2 bytes a score: naive {BIG_N:,} × '
    f'{BIG_N:,} per head = {hole("naive_big", "b")} for one layer; tiled, one {BIG_TILE} × '
    f'{BIG_TILE} tile per head = {hole("tiled_big", "b")} ({hole("less")}× less)</li></ul>'
    '<div class="ae-small">GB = 10^9 bytes, MB = 10^6. The chapter '
    '<a href="../flash/">FlashAttention: attention without the square</a> walks whole tiles of '
    'queries and keys this way.</div></div>')

CAPTION = (
    '<p class="ae-small">Bars: e^(score − running max) for the scores read so far (orange: '
    'the block just read), over the scores. The running sum is their total. When the max '
    'rises, every earlier bar shrinks by the rescale factor. Dashed lines separate the blocks.'
    '</p>')

NOTE = f'<div role="status" aria-live="polite">{hole("text", "div", class_="ae-msg")}</div>'


NowReadout = readout_class("NowReadout", NOW, module=__name__)
HistoryReadout = readout_class("HistoryReadout", HISTORY_TABLE, module=__name__)
AttentionReadout = readout_class("AttentionReadout", ATTENTION, module=__name__)
AttentionIntroReadout = readout_class("AttentionIntroReadout", ATTENTION_INTRO, module=__name__)
MemoryReadout = readout_class("MemoryReadout", MEMORY, module=__name__)
NoteReadout = readout_class("NoteReadout", NOTE, module=__name__)


# --- the state: four parts, each a pure function of some of the controls ---------------------

def walk_state(scores, block, step):  # the scores' walk -> {target: value}
    nums = online_numbers(scores, block, step)
    r, s, n = nums.result, nums.step, len(nums.scores)
    total = len(r.steps)
    read = min(s * block, n)
    m = r.steps[s - 1].new_max if s else -math.inf
    terms = [math.exp(x - m) if i < read else 0.0 for i, x in enumerate(nums.scores)]
    current = range((s - 1) * block, read) if s else range(0)
    edges = [b * block - 0.5 for b in range(1, total)]
    return {
        # bar height e^(score − running max): the terms of the running sum, as of this step
        "source:bars": {
            "x": list(range(read)), "term": terms[:read],
            "color": [ORANGE if i in current else BLUE for i in range(read)],
            "label": [num(t, 3) if t >= 0.01 else "<0.01" for t in terms[:read]]},
        "source:scores": {"x": list(range(n)), "score": [num(x) for x in nums.scores]},
        "source:unread": {"x": list(range(read, n)), "y": [0.02] * (n - read),
                          "text": ["unread"] * (n - read)},
        "source:edges": {"x": edges, "y0": [-0.16] * len(edges), "y1": [1.2] * len(edges)},
        "prop:x_range.end": n - 0.5,
        "prop:step_widget.end": total,
        "prop:prev.disabled": s == 0,
        "prop:reset.disabled": s == 0,
        "prop:next.disabled": s >= total,
        "holes:now": now_values(nums),
        "holes:history": history_values(nums),
    }


def step_note_state(scores, block, step):  # -> the note for a step past the walk's end
    last = blocks_in(len(scores_of(scores)), block)
    text = (f"step {step} is past the last block; showing step {last}, the end"
            if step > last else "")
    return {"holes:step_note": {"text": text}}


def now_values(nums):  # -> {hole: text}: what the step just did, and where the walk stands
    r, s, total = nums.result, nums.step, len(nums.result.steps)
    values = dict.fromkeys(("head", "how", "rescale", "how2", "sum", "tail", "end_n", "end_sum",
                            "end_max", "end_full", "end_agree", "so_far"), "")
    if s == 0:
        values["how"] = (f"Nothing read yet: running max −∞, running sum 0. The scores make "
                         f"{total} block{'s' if total != 1 else ''} of up to {nums.block}. "
                         "Each step reads the next block.")
    else:
        b = r.steps[s - 1]
        terms = " + ".join(f"e^({num(x)} − {num(b.new_max)})" for x in b.block)
        values["head"] = f"Block {s} of {total}: ({', '.join(num(x) for x in b.block)})."
        values["sum"], values["tail"] = num(b.new_sum), "."
        if s == 1:
            values["how"] = (f"The first block sets the running max to {num(b.new_max)}; there "
                             f"is no earlier sum to rescale. Running sum = {terms} = ")
        elif b.new_max > b.old_max:
            values["how"] = (f"Its largest score, {num(max(b.block))}, beats the running max "
                             f"{num(b.old_max)}, so the max rises to {num(b.new_max)} and the "
                             "old sum is rescaled by ")
            values["rescale"] = f"e^({num(b.old_max)} − {num(b.new_max)}) = {num(b.rescale)}"
            values["how2"] = (f": {num(b.old_sum)} × {num(b.rescale)} + ({terms} = "
                              f"{num(b.block_sum)}) = ")
        else:
            values["how"] = (f"Its largest score, {num(max(b.block))}, does not beat the running "
                             f"max {num(b.old_max)}, so the max stays and nothing is rescaled "
                             f"(e^0 = 1): {num(b.old_sum)} + ({terms} = {num(b.block_sum)}) = ")
    if s == total:
        diff = abs(r.running_sum - r.full_sum)
        values.update(
            end_n=str(len(nums.scores)), end_sum=num(r.running_sum), end_max=num(r.running_max),
            end_full=num(r.full_sum),
            end_agree=("exactly equal" if diff == 0 else
                       f"equal up to float rounding (difference {fmt.sig_figures(diff, 2)})"))
    else:
        m, so_far = (r.steps[s - 1].new_max, r.steps[s - 1].new_sum) if s else (-math.inf, 0.0)
        values["so_far"] = (f"Running max {num(m)}, running sum {num(so_far)}: no weight is "
                            "final until the last block is in.")
    return values


def history_values(nums):  # -> {hole: text}: one row per block, read or not yet
    r, s = nums.result, nums.step
    values = {f"h{c}{j}": "" for j in range(MAX_SCORES) for c in HISTORY}
    for b in r.steps:
        j = b.index
        values[f"hb{j}"] = str(j + 1)
        values[f"hs{j}"] = ", ".join(num(x) for x in b.block)
        if j >= s:
            values[f"hm{j}"] = "not read yet"
            continue
        values[f"hm{j}"] = f"{num(b.old_max)} → {num(b.new_max)}"
        values[f"hr{j}"] = ("—" if j == 0 else num(b.rescale) if b.new_max > b.old_max
                            else "1 (max kept)")
        values[f"hl{j}"] = num(b.new_sum)
        values[f"hc{j}"] = "← this step" if j == s - 1 else ""
    return values


def attention_state(block, attention_step):  # the attention walk -> {target: value}
    steps, output = attention_walk(block)
    q, k, v = walk_inputs()
    naive = core.naive_attention(q[None], k, v)[0]
    total = len(steps)
    s = min(attention_step, total)
    values = {f"a{c}{j}": "" for j in range(WALK_KEYS) for c in WALK}
    for st in steps:
        j = st.index
        keys = f"{st.keys[0]}–{st.keys[-1]}" if len(st.keys) > 1 else str(st.keys[0])
        values.update({f"ab{j}": str(j + 1), f"ak{j}": keys})
        if j >= s:
            values[f"as{j}"] = "not read yet"
            continue
        values.update({
            f"as{j}": ", ".join(num(x, 3) for x in st.scores), f"am{j}": num(st.running_max, 3),
            f"ar{j}": "—" if j == 0 else num(st.rescale, 3),  # nothing to scale at first
            f"al{j}": num(st.running_sum, 4), f"ao{j}": fmt.tuple_text(st.output_so_far),
            f"ac{j}": "← this step" if j == s - 1 else ""})
    values.update(attention_step_text(steps, s))
    values["naive"] = fmt.tuple_text(naive, 4)
    if s == total:
        diff = float(np.abs(output - naive).max())
        values.update(tiled=fmt.tuple_text(output, 4), diff=fmt.sig_figures(diff, 2),
                      diff_says="identical" if diff == 0 else "float rounding", pending="")
    else:
        values.update(tiled="", diff="", diff_says="",
                      pending="The output so far is accumulator ÷ sum over the keys read; it "
                              "is final only when the last block is in.")
    return {
        "holes:attention_intro": {"per_block": f"{block} key{'s' if block != 1 else ''}"},
        "holes:attention": values,
        "prop:attention_step_widget.end": total,
        "prop:attention_prev.disabled": s == 0,
        "prop:attention_reset.disabled": s == 0,
        "prop:attention_next.disabled": s >= total,
    }


def attention_step_text(steps, s):  # -> {head, how}: what step s of the attention walk did
    total = len(steps)
    if s == 0:
        return {"head": "", "how": (f"Nothing read yet: {total} block{'s' if total != 1 else ''}"
                                    " of keys to read. Press Next keys.")}
    st = steps[s - 1]
    keys = f"keys {st.keys[0]}–{st.keys[-1]}" if len(st.keys) > 1 else f"key {st.keys[0]}"
    head = f"Block {s} of {total} ({keys}):"
    if s == 1:
        how = (f"the first block sets the running max to {num(st.running_max, 3)}; sum "
               f"{num(st.running_sum, 4)}, and the accumulator holds Σ e^(s − max) × value.")
    elif st.rescale < 1:
        old = steps[s - 2].running_max
        how = (f"the max rises from {num(old, 3)} to {num(st.running_max, 3)}, so the sum and "
               f"the accumulator are both rescaled by e^({num(old, 3)} − "
               f"{num(st.running_max, 3)}) = {num(st.rescale, 3)} before the block's terms "
               f"are added: sum {num(st.running_sum, 4)}.")
    else:
        how = (f"the max stays at {num(st.running_max, 3)}, so nothing is rescaled: the block's "
               f"terms are added, sum {num(st.running_sum, 4)}.")
    return {"head": head, "how": how}


def memory_state(block):  # -> {target: value}: the scores held at once, naive against tiled
    tile = min(block, WALK_KEYS)
    naive_big = core.scores_held_bytes(BIG_N, heads=BIG_HEADS, bytes_per_value=BIG_BYTES)
    tiled_big = core.scores_held_bytes(BIG_N, heads=BIG_HEADS, bytes_per_value=BIG_BYTES,
                                       block=BIG_TILE)
    return {"holes:memory": {
        "naive_small": fmt.count(core.scores_held_bytes(WALK_KEYS, bytes_per_value=8)),
        "tile": str(tile),
        "tiled_small": fmt.count(core.scores_held_bytes(WALK_KEYS, bytes_per_value=8,
                                                        block=block)),
        "naive_big": f"{naive_big:,} bytes ≈ {fmt.decimal_bytes(naive_big)}",
        "tiled_big": f"{tiled_big:,} bytes ≈ {fmt.decimal_bytes(tiled_big)}",
        "less": fmt.count(naive_big // tiled_big),
    }}


# a step button on a static page moves its slider in the browser; the slider's change then
# switches the state like any control's
STEP_JS = model_code.code("stepSlider", "slider", "delta")


STYLE = resources.stylesheet("online-softmax.css")


class OnlineSoftmaxPanel(StatePanel):
    """Online softmax block by block, then the same walk carrying attention's output."""

    readout_css = STYLE  # each readout carries it: a shadow root of its own

    scores = param.String(default="2, 1, 3, 0", label="scores",
                          doc=f"up to {MAX_SCORES} numbers separated by commas")
    block = param.Integer(default=2, bounds=(1, MAX_BLOCK), label="block size",
                          doc="how many scores are read at a time")
    step = param.Integer(default=0, bounds=(0, MAX_SCORES), label="step",
                         doc="how many blocks have been read (0: none yet)")
    # the attention walk starts at its end, the whole table, and steps back and forth from
    # there; it is not in the URL (the chapter's URL plan holds this panel's keys)
    attention_step = param.Integer(default=WALK_KEYS, bounds=(0, WALK_KEYS),
                                   label="attention step",
                                   doc="how many blocks of keys the attention walk has read")

    url_keys = ("scores", "block", "step")

    @classmethod
    def controls(cls):
        return [preset_control("scores", PRESETS),
                Control.slider("block", range(1, MAX_BLOCK + 1)),
                Control.slider("step", range(MAX_SCORES + 1)),
                Control.slider("attention_step", range(WALK_KEYS + 1))]

    @classmethod
    def parts(cls):
        return [Part(("scores", "block", "step"), walk_state),
                Part(("scores", "block", "step"), step_note_state),
                Part(("block", "attention_step"), attention_state),
                Part(("block",), memory_state)]

    def __init__(self, **params):
        self._ink = ink()
        self._good = (2.0, 1.0, 3.0, 0.0)
        super().__init__(**params)

    # --- the numbers --------------------------------------------------------------------

    def current_state(self):
        # a live page also takes typed scores: a list that does not parse leaves the last
        # good one in force, and the message says so
        self._good, message = in_force(self.scores, self._good, lambda x: num(x, 6),
                                       max_count=MAX_SCORES, limit=LIMIT, what="the scores")
        state = self.state(**{**self.params(), "scores": self._good})
        state["holes:message"] = {"text": message}
        return state

    def numbers(self):  # -> OnlineNumbers of the scores in force
        return online_numbers(self._good, self.block, self.step)

    def blocks(self):  # how many blocks the scores in force make
        return blocks_in(len(self._good), self.block)

    def shown_step(self):  # the step the walk shows: the end when `step` is past it
        return min(self.step, self.blocks())

    # --- the view, built once from the first state -----------------------------------------

    def build(self, state):
        self._build_widgets()
        self._build_figure()
        self._build_readouts(state)
        self.widgets = {"scores": self._scores_pick, "block": self._block_w,
                        "step": self._step_w, "attention_step": self._attention_step_w}
        self.targets = {
            "source:bars": self.bar_source, "source:scores": self.score_source,
            "source:unread": self.unread_source, "source:edges": self.edge_source,
            "prop:x_range.end": self.figure.x_range, "prop:step_widget.end": self._step_w,
            "prop:prev.disabled": self._prev_w, "prop:reset.disabled": self._reset_w,
            "prop:next.disabled": self._next_w, "holes:now": self._now,
            "holes:history": self._history, "holes:step_note": self._step_note,
            "holes:attention_intro": self._attention_intro, "holes:attention": self._attention,
            "prop:attention_step_widget.end": self._attention_step_w,
            "prop:attention_prev.disabled": self._attention_prev_w,
            "prop:attention_reset.disabled": self._attention_reset_w,
            "prop:attention_next.disabled": self._attention_next_w,
            "holes:memory": self._memory, "holes:message": self._message,
        }
        return self._layout

    def _build_widgets(self):
        static = self.static
        self._scores_pick, typed = scores_input(
            self, PRESETS, static=static, route=registry.route_of(type(self)),
            max_scores=MAX_SCORES, pick_width=340, box_width=300)
        self._block_w = pn.widgets.IntSlider.from_param(self.param.block, width=200)
        self._controls = pn.FlexBox(self._scores_pick, typed, self._block_w,
                                    align_items="flex-end", sizing_mode="stretch_width")
        self._step_w, self._prev_w, self._next_w, self._reset_w, self._stepper = (
            self._walk_controls("step", static, ("Previous", "Next block", "Reset")))
        (self._attention_step_w, self._attention_prev_w, self._attention_next_w,
         self._attention_reset_w, self._attention_stepper) = (
            self._walk_controls("attention_step", static,
                                ("Previous keys", "Next keys", "Reset keys")))

    def _walk_controls(self, name, static, labels):
        # -> slider, previous, next, reset and their row: one walk's step control (each
        # button's name says which walk it moves)
        slider = pn.widgets.IntSlider.from_param(self.param[name], sizing_mode="stretch_width",
                                                 min_width=160, max_width=320)
        prev, nxt, reset = (
            pn.widgets.Button(label=label, color=color, width=max(80, 9 * len(label) + 20))
            for label, color in zip(labels, ("default", "primary", "default")))
        for button, delta in ((prev, -1), (nxt, 1), (reset, 0)):
            if static:
                button.js_on_click(args={"slider": slider, "delta": delta}, code=STEP_JS)
            else:
                button.on_click(lambda _, delta=delta: self._move(name, slider, delta))
        row = pn.FlexBox(prev, nxt, reset, slider, align_items="flex-end",
                         sizing_mode="stretch_width")
        return slider, prev, nxt, reset, row

    def _move(self, name, slider, delta):  # a step button on a live page, as STEP_JS does
        end, now = slider.end, min(getattr(self, name), slider.end)
        setattr(self, name, 0 if delta == 0 else max(0, min(end, now + delta)))

    def _build_figure(self):
        # bar height e^(score − running max): the terms of the running sum, as of this step.
        # The scores stand under their places, inside the plot: their text changes with the
        # state, which an axis's label overrides cannot follow in the browser.
        self.bar_source = ColumnDataSource({"x": [], "term": [], "color": [], "label": []})
        self.score_source = ColumnDataSource({"x": [], "score": []})
        self.unread_source = ColumnDataSource({"x": [], "y": [], "text": []})
        self.edge_source = ColumnDataSource({"x": [], "y0": [], "y1": []})  # block boundaries
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="",
                     toolbar_location=None, x_range=Range1d(-0.5, 3.5),
                     y_range=Range1d(-0.16, 1.2), min_border_left=4, min_border_right=8,
                     outline_line_color=None)
        paint = self._ink
        fig.segment("x", "y0", "x", "y1", source=self.edge_source, line_color=paint.rule,
                    line_dash="dashed", line_width=1)
        fig.vbar("x", 0.7, "term", source=self.bar_source, fill_color="color",
                 line_color=None)
        fig.text("x", "term", text="label", source=self.bar_source, text_align="center",
                 text_baseline="bottom", y_offset=-2, text_font_size="12px",
                 text_color=paint.text)
        fig.text("x", "y", text="text", source=self.unread_source, text_align="center",
                 text_baseline="bottom", text_font_size="12px", text_color=paint.muted)
        fig.text("x", 0, text="score", source=self.score_source, text_align="center",
                 text_baseline="top", y_offset=4, text_font_size="12px", text_color=paint.text)
        chrome.score_axes(fig, "e^(score − running max)")
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_readouts(self, state):
        self._message = self.new_readout(NoteReadout, {"text": ""})
        self._step_note = self.new_readout(NoteReadout, state["holes:step_note"])
        self._now = self.new_readout(NowReadout, state["holes:now"])
        self._history = self.new_readout(HistoryReadout, state["holes:history"])
        self._attention_intro = self.new_readout(AttentionIntroReadout,
                                                 state["holes:attention_intro"])
        self._attention = self.new_readout(AttentionReadout, state["holes:attention"])
        self._memory = self.new_readout(MemoryReadout, state["holes:memory"])
        caption = pn.pane.HTML(CAPTION, sizing_mode="stretch_width", margin=(0, 10),
                               stylesheets=[STYLE])
        walk = pn.FlexBox(
            pn.Column(self._now, self._history, sizing_mode="stretch_width",
                      styles={"flex": "1 1 320px", "min-width": "0"}),
            pn.Column(self._figure_pane, caption, sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            sizing_mode="stretch_width")
        heading = self.own(
            chrome.heading(registry.title_of(type(self))))
        self._layout = pn.Column(
            *heading, self.url_note, self._controls, self._message, self._step_note,
            self._stepper, walk,
            chrome.heading("The same walk, for attention", 1, titled=not self.in_chapter),
            self._attention_intro, self._attention_stepper, self._attention,
            pn.Spacer(height=6), self._memory,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])
