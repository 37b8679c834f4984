"""Blocks, tables and a shared prompt: how a server holds several users' caches in fixed blocks.

Sixteen blocks of 4 or 8 token slots each. A system prompt is cached, two users arrive sharing
its full blocks, their answers grow a block at a time, one asks for a second answer (a fork,
which shares every block) whose first token copies the block it would write, and one user
leaves, returning only the blocks no one else holds. The pool shows each block's holders and
how many tables hold it; the tables list each sequence's blocks in order. Every block table,
count and free list is attention_core.paged's.

The panel has the one shape (app/kit/states.py). Controls: the block size and the event of
the story. One part: the pool, the tables and the story's line at that event.
"""

import functools

import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from app.kit import chrome, fmt, registry, resources
from app.kit.chrome import hole, readout_class, scroll_box
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import ink
from attention_core import paged

POOL = 16  # blocks
COLUMNS = 8  # blocks a row of the pool's picture
BLOCK_SIZES = (4, 8)
SYSTEM, OWN_A, OWN_B, ANSWER_A, MORE_B = 10, 5, 7, 6, 4  # tokens
# Okabe-Ito, one a sequence; a block held by more than one table is drawn in the shared colour
COLOURS = {"system": "#999999", "Ana": "#0072B2", "Ben": "#E69F00", "Ben, 2nd": "#CC79A7"}
SHARED, FREE = "#009E73", "#F7F7F7"
SEQUENCES = tuple(COLOURS)
HEIGHT = 170


def story():  # -> [(what happens, a function of the pool that makes it happen)]
    return [
        (f"A {SYSTEM}-token system prompt is cached.", lambda p: p.add("system", SYSTEM)),
        ((f"Ana arrives: the system prompt and {OWN_A} tokens of her own. She holds the prompt's "
         "full blocks too; its partly filled last block is not shared."),
         lambda p: p.add("Ana", SYSTEM + OWN_A, prefix_of="system", shared=SYSTEM)),
        (f"Ben arrives the same way, with {OWN_B} tokens of his own.",
         lambda p: p.add("Ben", SYSTEM + OWN_B, prefix_of="system", shared=SYSTEM)),
        (f"Ana's answer grows by {ANSWER_A} tokens: a new block each time the last one fills.",
         lambda p: p.append("Ana", ANSWER_A)),
        ("Ben asks for a second answer: the fork holds every one of his blocks, copying none.",
         lambda p: p.fork("Ben", "Ben, 2nd")),
        (("The second answer writes its first token. Its last block is shared and has room, so "
         "it gets a copy of its own first: copy-on-write."),
         lambda p: p.append("Ben, 2nd")),
        ("Ana is done. The blocks only she held go back to the free pool; the shared ones stay.",
         lambda p: p.release("Ana")),
        (f"Ben's first answer grows by {MORE_B} tokens.", lambda p: p.append("Ben", MORE_B)),
    ]


EVENTS = tuple(range(1, len(story()) + 1))


@functools.lru_cache(maxsize=32)
def pool_after(block_size, event):  # -> the pool after the story's first `event` events
    pool = paged.BlockPool(num_blocks=POOL, block_size=block_size)
    for _, happen in story()[:event]:
        happen(pool)
    return pool


def holders(pool, block):  # -> the sequences whose tables hold the block, in story order
    return [s for s in SEQUENCES if block in pool.tables.get(s, ())]


def pool_state(block_size, event):
    pool = pool_after(block_size, event)
    cells = {c: [] for c in ("x", "y", "colour", "label", "count")}
    for block in range(POOL):
        held = holders(pool, block)
        colour = FREE if not held else SHARED if len(held) > 1 else COLOURS[held[0]]
        for c, v in (("x", block % COLUMNS + 0.5), ("y", block // COLUMNS + 0.5),
                     ("colour", colour), ("label", str(block)),
                     ("count", f"×{pool.refs[block]}" if pool.refs[block] > 1 else "")):
            cells[c].append(v)
    tables = {}
    for i, seq in enumerate(SEQUENCES):
        if seq in pool.tables:
            tables.update({f"name{i}": seq, f"blocks{i}": ", ".join(
                str(b) for b in pool.tables[seq]),
                f"tokens{i}": fmt.count(pool.lengths[seq]),
                f"empty{i}": fmt.count(pool.empty_slots(seq))})
        else:
            tables.update({f"{c}{i}": "" for c in ("name", "blocks", "tokens", "empty")})
    held_tokens = sum(pool.lengths.values())
    return {
        "source:pool": cells,
        "holes:blocks": {
            "event": str(event), "events": str(len(EVENTS)), "what": story()[event - 1][0],
            **tables,
            "used": fmt.count(pool.used()), "free": ", ".join(map(str, pool.free)) or "none",
            "copies": fmt.count(pool.copies), "size": str(block_size), "pool": str(POOL),
            "used_slots": fmt.count(paged.logged_tokens(pool.used(), block_size)),
            "held": fmt.count(held_tokens),
        },
    }


ROWS = "".join(
    f'<tr><th scope="row">{hole(f"name{i}")}</th><td>{hole(f"blocks{i}")}</td>'
    f'<td>{hole(f"tokens{i}")}</td><td>{hole(f"empty{i}")}</td></tr>'
    for i in range(len(SEQUENCES)))
BLOCKS = (
    '<div class="ae-readout" aria-live="polite">'
    f'<p>Event {hole("event", "b")} of {hole("events")}: {hole("what")}</p>'
    + scroll_box("the block tables")
    + '<table class="ae-arith"><caption class="ae-sr">each sequence\'s block table, its tokens '
    "and the empty slots of its last block</caption><thead><tr><th scope='col'>sequence</th>"
    "<th scope='col'>block table</th><th scope='col'>tokens</th>"
    "<th scope='col'>empty slots</th></tr></thead>"
    f"<tbody>{ROWS}</tbody></table></div>"
    f'<p class="ae-small">{hole("used")} of {hole("pool")} blocks in use; free, next first: '
    f'{hole("free")}. Copies made: {hole("copies")}. The tables list {hole("held")} tokens in '
    f'{hole("used_slots")} slots of {hole("size")} a block: a shared block counts once.</p>'
    '</div>')

BlocksReadout = readout_class("BlocksReadout", BLOCKS, module=__name__)
STYLE = resources.stylesheet("tiles.css")


class BlocksPanel(StatePanel):
    """Blocks, tables and a shared prompt: a server's cache, block by block."""

    readout_css = STYLE

    block_size = param.Selector(default=4, objects=list(BLOCK_SIZES), label="block size")
    event = param.Integer(default=len(EVENTS), bounds=(1, len(EVENTS)), label="event")

    url_keys = ("block_size", "event")

    @classmethod
    def controls(cls):
        return [Control.choice("block_size", BLOCK_SIZES), Control.slider("event", EVENTS)]

    @classmethod
    def parts(cls):
        return [Part(("block_size", "event"), pool_state)]

    def build(self, state):
        paint = ink()
        self.pool_source = ColumnDataSource(state["source:pool"])
        rows = POOL // COLUMNS
        fig = figure(height=HEIGHT, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(0, COLUMNS), y_range=Range1d(rows, 0), min_width=240,
                     outline_line_color=None, background_fill_color=paint.paper)
        fig.rect("x", "y", 0.92, 0.88, source=self.pool_source, fill_color="colour",
                 line_color="#999999")
        fig.text("x", "y", text="label", source=self.pool_source, text_align="center",
                 text_baseline="bottom", text_font_size="12px", text_color="#000000")
        fig.text("x", "y", text="count", source=self.pool_source, text_align="center",
                 text_baseline="top", text_font_size="12px", text_color="#000000")
        fig.axis.visible = False
        fig.grid.visible = False
        self.figure = fig
        self._text = self.new_readout(BlocksReadout, state["holes:blocks"])
        self.widgets = {
            "block_size": chrome.radio(self, "block_size", 110),
            "event": pn.widgets.IntSlider.from_param(self.param.event, width=260)}
        self.targets = {"source:pool": self.pool_source, "holes:blocks": self._text}
        controls = [chrome.labelled(self.widgets["block_size"], "block size"),
                    self.widgets["event"]]
        return chrome.chart_panel(self, registry.title_of(type(self)), controls, fig, HEIGHT,
                                  self._text, STYLE)
