"""Online softmax: read the scores a block at a time, keeping only a running max and sum.

When a block brings a larger max, the sum so far is rescaled by e^(old max − new max)
before the block's terms are added, and the result equals the sum over the whole row.
Attention walks the same way with an output accumulator, so the n × n scores never exist.
"""

import html
import math
from dataclasses import dataclass

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Range1d
from bokeh.plotting import figure

from app import chrome
from app.model_picker import ink
from app.panels.agreement import fmt, parse_numbers
from attention_core import online_softmax as core

MAX_SCORES = 16
LIMIT = 1000.0
HEIGHT = 210
BLUE, ORANGE, GREY = "#0072B2", "#E69F00", "#BBBBBB"  # Okabe-Ito, plus a neutral
# the attention walk: one query against 6 keys and values of d = 4, one fixed draw
WALK_KEYS, WALK_D, WALK_SEED = 6, 4, 10  # seed 10: the max rises at every block of 2
# the documents' prefill example: an 8,192-token prompt, 32 heads, 2-byte scores, 128 tiles
BIG_N, BIG_HEADS, BIG_BYTES, BIG_TILE = 8192, 32, 2, 128


def num(x, digits=4):  # a number in the walk: −∞ spelled out, real minus signs
    return fmt(x, digits)


def vec(v, digits=3):  # [d] -> "(0.12, −0.34, ...)"
    return "(" + ", ".join(fmt(float(x), digits) for x in v) + ")"


def gb(n_bytes):  # bytes -> "4.29 GB" (10^9) or MB / kB for small ones
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{n_bytes:,} B"


def walk_inputs():  # -> q [d], k [n, d], v [n, d]: one fixed draw
    rng = np.random.default_rng(WALK_SEED)
    return (rng.standard_normal(WALK_D), rng.standard_normal((WALK_KEYS, WALK_D)),
            rng.standard_normal((WALK_KEYS, WALK_D)))


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


class OnlineSoftmaxPanel(pn.viewable.Viewer):
    """Online softmax block by block, then the same walk carrying attention's output."""

    scores = param.String(default="2, 1, 3, 0", label="scores",
                          doc=f"up to {MAX_SCORES} numbers separated by commas")
    block = param.Integer(default=2, bounds=(1, MAX_SCORES), label="block size",
                          doc="how many scores are read at a time")
    step = param.Integer(default=0, bounds=(0, MAX_SCORES), label="step",
                         doc="how many blocks have been read (0: none yet)")

    url_keys = ("scores", "block", "step")

    def __init__(self, in_article=False, **params):
        # in_article: the chapter's section heading stands above, so leave out the panel's own
        self.in_article = in_article
        self._ink = ink()
        super().__init__(**params)
        self._good = (2.0, 1.0, 3.0, 0.0)
        self._error = None
        self._notes = []
        self._adjusting = False
        self._walk = walk_inputs()
        self._read_scores()
        self._settle()
        self._build_widgets()
        self._build_figure()
        self._build_readouts()
        self._update()
        self.param.watch(self._on_change, list(self.url_keys))

    # --- the numbers --------------------------------------------------------------------

    def _read_scores(self):  # parse; keep the last good scores on bad input
        values, self._error = parse_numbers(self.scores, max_count=MAX_SCORES, limit=LIMIT,
                                            what="the scores")
        if values is not None:
            self._good = values

    def blocks(self):  # how many blocks the current scores make
        return math.ceil(len(self._good) / self.block)

    def _settle(self):  # keep step within the blocks there are; -> notes
        last = self.blocks()
        if self.step > last:
            note = (f"step {self.step} is past the last block; showing step {last}, the end")
            self._adjusting = True
            try:
                self.step = last
            finally:
                self._adjusting = False
            return [note]
        return []

    def numbers(self):  # pure: the last good scores, block, step -> OnlineNumbers
        q, k, v = self._walk
        steps, output = core.attention_walk(q, k, v, block_size=self.block)
        result = core.online_softmax(self._good, self.block)
        return OnlineNumbers(scores=self._good, result=result,
                             step=min(self.step, len(result.steps)), attention_steps=steps,
                             output=output, naive=core.naive_attention(q[None], k, v)[0],
                             block=self.block)

    # --- building, once -----------------------------------------------------------------

    def _build_widgets(self):
        self._scores_w = pn.widgets.TextInput.from_param(
            self.param.scores, name=f"scores (up to {MAX_SCORES}, commas between)",
            max_length=100, sizing_mode="stretch_width", min_width=180, max_width=300)
        self._block_w = pn.widgets.IntInput.from_param(self.param.block, start=1,
                                                       end=MAX_SCORES, width=120)
        self._step_w = pn.widgets.IntSlider.from_param(
            self.param.step, end=max(self.blocks(), 1), sizing_mode="stretch_width",
            min_width=160, max_width=320)
        self._prev_w = pn.widgets.Button(label="Previous", color="default", width=95)
        self._next_w = pn.widgets.Button(label="Next block", color="primary", width=105)
        self._reset_w = pn.widgets.Button(label="Reset", color="default", width=80)
        self._prev_w.on_click(lambda _: self._move(self.step - 1))
        self._next_w.on_click(lambda _: self._move(self.step + 1))
        self._reset_w.on_click(lambda _: self._move(0))
        self._controls = pn.FlexBox(self._scores_w, self._block_w, align_items="flex-end",
                                    sizing_mode="stretch_width")
        self._stepper = pn.FlexBox(self._prev_w, self._next_w, self._reset_w, self._step_w,
                                   align_items="flex-end", sizing_mode="stretch_width")

    def _move(self, step):
        self.step = min(max(step, 0), self.blocks())

    def _build_figure(self):
        # bar height e^(score − running max): the terms of the running sum, as of this step
        self.bar_source = ColumnDataSource({"x": [], "term": [], "color": [], "label": []})
        self.unread_source = ColumnDataSource({"x": [], "y": [], "text": []})
        self.edge_source = ColumnDataSource({"x": [], "y0": [], "y1": []})  # block boundaries
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="",
                     toolbar_location=None, x_range=Range1d(-0.5, 3.5),
                     y_range=Range1d(0, 1.2), min_border_left=4, min_border_right=8,
                     outline_line_color=None)
        paint = self._ink
        fig.segment("x", "y0", "x", "y1", source=self.edge_source, line_color=paint.rule,
                    line_dash="dashed", line_width=1)
        fig.vbar("x", 0.7, "term", source=self.bar_source, fill_color="color",
                 line_color=None)
        fig.text("x", "term", text="label", source=self.bar_source, text_align="center",
                 text_baseline="bottom", y_offset=-2, text_font_size="11px",
                 text_color=paint.text)
        fig.text("x", "y", text="text", source=self.unread_source, text_align="center",
                 text_baseline="bottom", text_font_size="11px", text_color=paint.muted)
        fig.xaxis.ticker = FixedTicker(ticks=[])
        fig.xaxis.axis_label = "score"
        fig.yaxis.axis_label = "e^(score − running max)"
        chrome.quiet_axes(fig, tick_labels=True)
        fig.xgrid.visible = False
        self.figure = fig
        self._figure_pane = pn.pane.Bokeh(fig, height=HEIGHT, sizing_mode="stretch_width",
                                          min_width=240)

    def _build_readouts(self):
        def html_pane(**kw):
            return chrome.readout_pane(STYLE, **kw)

        self._message = html_pane()
        self._now = html_pane()
        self._history = html_pane()
        self._caption = html_pane()
        self._attention = html_pane()
        self._memory = html_pane()
        walk = pn.FlexBox(
            pn.Column(self._now, self._history, sizing_mode="stretch_width",
                      styles={"flex": "1 1 320px", "min-width": "0"}),
            pn.Column(self._figure_pane, self._caption, sizing_mode="stretch_width",
                      styles={"flex": "1 1 300px", "min-width": "0"}),
            sizing_mode="stretch_width")
        heading = [] if self.in_article else [
            pn.pane.HTML("<h3 style='margin:0'>Online softmax: never write the square</h3>",
                         margin=(0, 10))]
        self._layout = pn.Column(
            *heading, self._controls, self._message, self._stepper, walk,
            pn.pane.HTML("<h4 style='margin:8px 0 0'>The same walk, for attention</h4>",
                         margin=(0, 10)),
            self._attention, pn.Spacer(height=6), self._memory,
            sizing_mode="stretch_width", css_classes=["ae-panel"], stylesheets=[STYLE])

    def __panel__(self):
        return self._layout

    # --- reacting -----------------------------------------------------------------------

    def _on_change(self, *events):
        if self._adjusting:
            return
        if any(e.name == "scores" for e in events):
            self._read_scores()
        self._notes = self._settle()
        self._update()

    def _update(self):  # write the current numbers into sources and panes; never rebuild
        nums = self.numbers()
        self._numbers = nums
        r, s, n = nums.result, nums.step, len(nums.scores)
        read = min(s * nums.block, n)
        m = r.steps[s - 1].new_max if s else -math.inf
        terms = [math.exp(x - m) if i < read else 0.0 for i, x in enumerate(nums.scores)]
        current = range((s - 1) * nums.block, read) if s else range(0)
        self.bar_source.data = {
            "x": list(range(read)), "term": terms[:read],
            "color": [ORANGE if i in current else BLUE for i in range(read)],
            "label": [fmt(t, 3) for t in terms[:read]]}
        self.unread_source.data = {"x": list(range(read, n)), "y": [0.02] * (n - read),
                                   "text": ["unread"] * (n - read)}
        edges = [b * nums.block - 0.5 for b in range(1, len(r.steps))]
        self.edge_source.data = {"x": edges, "y0": [0.0] * len(edges), "y1": [1.2] * len(edges)}
        self.figure.x_range.update(start=-0.5, end=n - 0.5)
        self.figure.xaxis.ticker.ticks = list(range(n))
        self.figure.xaxis.major_label_overrides = {i: fmt(x, 4) for i, x in
                                                   enumerate(nums.scores)}
        self._step_w.end = max(len(r.steps), 1)
        self._step_w.disabled = len(r.steps) == 0
        self._prev_w.disabled = s == 0
        self._reset_w.disabled = s == 0
        self._next_w.disabled = s >= len(r.steps)
        self._message.object = self.message_html()
        self._message.visible = bool(self._error or self._notes)
        self._now.object = self.now_html(nums)
        self._history.object = self.history_html(nums)
        self._caption.object = self.caption_html(nums)
        self._attention.object = self.attention_html(nums)
        self._memory.object = self.memory_html(nums)

    # --- readouts (text) ----------------------------------------------------------------

    def message_html(self):
        lines = [html.escape(note) for note in self._notes]
        if self._error:
            good = ", ".join(fmt(x) for x in self._good)
            lines.append(f"{html.escape(self._error)}; still using {html.escape(good)}")
        body = "".join(f"<div>{line}</div>" for line in lines)
        role = ' role="status"' if lines else ""
        return f'<div class="ae-msg"{role} aria-live="polite">{body}</div>'

    def now_html(self, nums):
        r, s = nums.result, nums.step
        total = len(r.steps)
        if s == 0:
            body = (f"Nothing read yet: running max −∞, running sum 0. The scores make "
                    f"{total} block{'s' if total != 1 else ''} of up to {nums.block}. "
                    "Press <i>Next block</i>.")
        else:
            b = r.steps[s - 1]
            top = max(b.block)
            terms = " + ".join(f"e^({num(x)} − {num(b.new_max)})" for x in b.block)
            head = f"<b>Block {s} of {total}</b>: ({', '.join(num(x) for x in b.block)}). "
            if s == 1:
                how = (f"The first block sets the running max to {num(b.new_max)}; there is "
                       f"no earlier sum to rescale. Running sum = {terms} = "
                       f"<b>{num(b.new_sum)}</b>.")
            elif b.new_max > b.old_max:
                how = (f"Its largest score, {num(top)}, beats the running max {num(b.old_max)}, "
                       f"so the max rises to {num(b.new_max)} and the old sum is rescaled by "
                       f"<b>e^({num(b.old_max)} − {num(b.new_max)}) = {num(b.rescale)}</b>: "
                       f"{num(b.old_sum)} × {num(b.rescale)} + ({terms} = "
                       f"{num(b.block_sum)}) = <b>{num(b.new_sum)}</b>.")
            else:
                how = (f"Its largest score, {num(top)}, does not beat the running max "
                       f"{num(b.old_max)}, so the max stays and nothing is rescaled "
                       f"(e^0 = 1): {num(b.old_sum)} + ({terms} = {num(b.block_sum)}) = "
                       f"<b>{num(b.new_sum)}</b>.")
            body = head + how
        if s == total:
            diff = abs(r.running_sum - r.full_sum)
            agree = ("exactly equal" if diff == 0 else
                     f"equal up to float rounding (difference {fmt(diff, 2)})")
            body += (f'<div class="ae-end">All {len(nums.scores)} scores read. Running sum '
                     f'<b>{num(r.running_sum)}</b> (relative to the max, {num(r.running_max)}); '
                     f'the whole row summed at once, Σ e^(score − {num(r.running_max)}): '
                     f'<b>{num(r.full_sum)}</b>. They are {agree}: nothing was stored and '
                     'nothing lost.</div>')
        else:
            m, total_so_far = ((r.steps[s - 1].new_max, r.steps[s - 1].new_sum) if s
                               else (-math.inf, 0.0))
            body += (f'<div class="ae-small">Running max {num(m)}, running sum '
                     f'{num(total_so_far)}: no weight is final until the last block is in.'
                     '</div>')
        return f'<div class="ae-readout" aria-live="polite">{body}</div>'

    def history_html(self, nums):
        r, s = nums.result, nums.step
        head = ("<tr><th scope='col'>block</th><th scope='col'>scores</th>"
                "<th scope='col'>max</th><th scope='col'>rescale</th>"
                "<th scope='col'>sum</th></tr>")
        rows = []
        for b in r.steps:
            scores = ", ".join(num(x) for x in b.block)
            if b.index >= s:
                rows.append(f"<tr class='ae-unread'><th scope='row'>{b.index + 1}</th>"
                            f"<td>{scores}</td><td colspan='3'>not read yet</td></tr>")
                continue
            rescale = ("—" if b.index == 0 else num(b.rescale) if b.new_max > b.old_max
                       else "1 (max kept)")
            mark = " class='ae-current'" if b.index == s - 1 else ""
            rows.append(f"<tr{mark}><th scope='row'>{b.index + 1}</th><td>{scores}</td>"
                        f"<td>{num(b.old_max)} → {num(b.new_max)}</td><td>{rescale}</td>"
                        f"<td>{num(b.new_sum)}</td></tr>")
        return ('<div class="ae-readout ae-scroll" aria-live="polite"><table class="ae-arith">'
                '<caption class="ae-sr">the blocks: running max, rescale factor and running '
                f'sum after each</caption><thead>{head}</thead><tbody>{"".join(rows)}</tbody>'
                '</table></div>')

    def caption_html(self, nums):
        return ('<p class="ae-small" aria-live="polite">Bars: e^(score − running max) for the '
                'scores read so far (orange: the block just read). The running sum is their '
                'total. When the max rises, every earlier bar shrinks by the rescale factor. '
                'Dashed lines separate the blocks.</p>')

    def attention_html(self, nums):
        head = ("<tr><th scope='col'>block</th><th scope='col'>keys</th>"
                f"<th scope='col'>scores q·k ÷ √{WALK_D}</th><th scope='col'>max</th>"
                "<th scope='col'>rescale</th><th scope='col'>sum</th>"
                "<th scope='col'>output so far</th></tr>")
        rows = []
        for st in nums.attention_steps:  # rescale is 0 at the first block: nothing to scale
            rescale = "—" if st.index == 0 else num(st.rescale, 3)
            keys = f"{st.keys[0]}–{st.keys[-1]}" if len(st.keys) > 1 else str(st.keys[0])
            rows.append(f"<tr><th scope='row'>{st.index + 1}</th><td>{keys}</td>"
                        f"<td>{', '.join(num(x, 3) for x in st.scores)}</td>"
                        f"<td>{num(st.running_max, 3)}</td><td>{rescale}</td>"
                        f"<td>{num(st.running_sum, 4)}</td><td>{vec(st.output_so_far)}</td>"
                        "</tr>")
        diff = float(np.abs(nums.output - nums.naive).max())
        return (
            '<div class="ae-readout" aria-live="polite">'
            f'<p>One query against {WALK_KEYS} keys and values of d = {WALK_D} (one fixed '
            f'random draw), read {nums.block} key{"s" if nums.block != 1 else ""} at a time. '
            'Besides the running max and sum, the walk keeps an output accumulator Σ e^(s − max) '
            '× value; it is rescaled by the same factor as the sum, and the output so far is '
            'accumulator ÷ sum.</p>'
            '<div class="ae-scroll"><table class="ae-arith"><caption class="ae-sr">the '
            'attention walk block by block</caption>'
            f'<thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'<div>tiled output {vec(nums.output, 4)}</div>'
            f'<div>naive output {vec(nums.naive, 4)} (whole row, softmax, weighted sum)</div>'
            f'<div>largest difference: <b>{fmt(diff, 2)}</b> '
            f'({"identical" if diff == 0 else "float rounding"})</div></div>')

    def memory_html(self, nums):
        b = nums.block
        tile = min(b, WALK_KEYS)
        naive_small = core.scores_held_bytes(WALK_KEYS, bytes_per_value=8)
        tiled_small = core.scores_held_bytes(WALK_KEYS, bytes_per_value=8, block=b)
        naive_big = core.scores_held_bytes(BIG_N, heads=BIG_HEADS, bytes_per_value=BIG_BYTES)
        tiled_big = core.scores_held_bytes(BIG_N, heads=BIG_HEADS, bytes_per_value=BIG_BYTES,
                                           block=BIG_TILE)
        return (
            '<div class="ae-readout" aria-live="polite"><b>Scores held at once</b>'
            '<ul class="ae-list">'
            f'<li>here, if all {WALK_KEYS} tokens were queries: naive {WALK_KEYS} × {WALK_KEYS} '
            f'= {naive_small:,} bytes (8-byte floats); tiled {tile} × {tile} = '
            f'{tiled_small:,} bytes</li>'
            f'<li>an {BIG_N:,}-token prompt, {BIG_HEADS} heads, 2 bytes a score: naive '
            f'{BIG_N:,} × {BIG_N:,} per head = <b>{naive_big:,} bytes ≈ {gb(naive_big)}</b> '
            f'for one layer; tiled, one {BIG_TILE} × {BIG_TILE} tile per head = '
            f'<b>{tiled_big:,} bytes ≈ {gb(tiled_big)}</b> '
            f'({naive_big // tiled_big:,}× less)</li></ul>'
            '<div class="ae-small">GB = 10^9 bytes, MB = 10^6.</div></div>')


STYLE = """
.ae-small { font-size: 0.85em; opacity: 0.8; margin: 2px 0; }
.ae-end { margin-top: 6px; background: rgb(0 114 178 / 0.14); border-left: 4px solid #0072b2;
          padding: 4px 8px; }
.ae-scroll { overflow-x: auto; max-width: 100%; }
.ae-arith { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; }
.ae-arith th, .ae-arith td { padding: 2px 6px; text-align: right; white-space: nowrap; }
.ae-arith thead th { border-bottom: 1px solid #888; font-weight: 600; }
.ae-arith .ae-current td, .ae-arith .ae-current th { background: rgb(230 159 0 / 0.2); }
.ae-arith .ae-unread td, .ae-arith .ae-unread th { opacity: 0.65; }
.ae-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.ae-msg { background: rgb(230 159 0 / 0.16); border-left: 3px solid #e69f00;
          padding: 4px 8px; overflow-wrap: anywhere; }
.ae-msg:empty { display: none; }
.ae-list { margin: 2px 0; padding-left: 18px; }
.ae-readout p { margin: 4px 0; }
"""


def page():
    return chrome.single_page(OnlineSoftmaxPanel(), "Online softmax")
