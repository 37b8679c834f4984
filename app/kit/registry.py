"""Every panel of the explorable, in one table: the one place a panel is registered.

A record says where the panel sits (its slot in a chapter, the content file its marker is in),
how it is built there, its page of its own (route and title: the panel's heading reads it),
how tall its island is before it mounts (in a static chapter and on its page of its own), and
how much its table of states may weigh. The chapters, the routes, the static build, its
islands, the single-panel pages, the nginx config (deploy/render_nginx.py) and the contract
tests all read this table; none of them names a panel.

Importing it imports no panel: a record names its Viewer as "module:Class", imported when the
panel is first built (the kernel lab's module loads torch only when its page needs it).
Adding a panel: write `app/panels/<name>.py`, add its record below, place its marker
(`::: panel <slot>`) in a chapter's content file (docs/PANEL_CONTRACT.md).
"""

import dataclasses
import functools
import importlib
from collections.abc import Callable
from typing import NamedTuple

# bytes of a state table's JSON, as a static page ships it, for a record that does not say:
# well above a table split into parts as it should be, so one grown tenfold fails the contract
DEFAULT_TABLE_BUDGET = 300_000
DEFAULT_ISLAND_HEIGHT = 480  # px, for a record that does not say
# under a panel's still with scripts off, static or live (app/chapters/chapter_page.py and
# live_stills.py)
NO_SCRIPT_NOTE = "The controls of this panel need JavaScript; the text above gives its numbers."


@dataclasses.dataclass(frozen=True)
class PanelRecord:
    slot: str  # its name in a chapter: the content marker, the URL-key prefix, the island's id
    viewer: str  # "module:Class" of its Viewer
    route: str  # its page of its own: "/heatmap" (live under /live/heatmap)
    title: str  # its heading, on its page and in the panel (which reads it: `title_of`)
    chapter: str  # the content file whose marker places it: "attention.md"
    # px: its mounted height in a chapter at 1280 px and on a phone (Pixel 5), so the island
    # holds that much before it mounts and nothing below it moves (test_island_heights.py)
    island_height: int = DEFAULT_ISLAND_HEIGHT
    phone_height: int | None = None  # None: as island_height
    # px: the same on its page of its own, where it is taller by its title, what its own()
    # holds and the page's padding (None: as in its chapter)
    page_height: int | None = None
    page_phone_height: int | None = None
    follows: str | None = None  # the slot whose controls drive it (passed by that name)
    untitled_in_chapter: bool = True  # leaves out its own title in a chapter (the section has one)
    static_stand_in: str | None = None  # "module:Class" shown instead on a static page
    table_budget: int = DEFAULT_TABLE_BUDGET  # bytes: the most its table of states may weigh
    # its own static page shows native controls over its still, which switch it before Bokeh
    # has loaded (static/still_controls.js); a panel that is not a state panel has none
    still_controls: bool = True

    @property
    def module(self):  # -> "app.panels.heatmap"
        return self.viewer.split(":")[0]

    @property
    def viewer_class(self):  # -> the Viewer class, imported now
        return load(self.viewer)

    def for_chapter(self, get, static=False):  # get: slot -> that slot's viewer -> a fresh
        # viewer for a chapter's page, static or live
        kw = {"in_chapter": True} if self.untitled_in_chapter else {}
        if self.follows:
            kw[self.follows] = get(self.follows)
        return self._make(chapter(self.chapter).route, static, **kw)

    def page(self, static=False):  # -> the panel's page of its own (one panel, minimal chrome,
        # for iframes), static or live
        from app.kit import chrome

        return chrome.single_page(functools.partial(self._make, self.route, static),
                                  self.title, static=static)

    def _make(self, route, static, **kw):  # a fresh viewer; on a static page, the stand-in if
        # it has one, which opens `route` live (the chapter it sits in, or its own page); a
        # state panel is told which page it is on
        from app.kit.states import StatePanel

        if self.static_stand_in and static:
            return load(self.static_stand_in)(self.viewer_class, route=route, **kw)
        if issubclass(self.viewer_class, StatePanel):
            kw["static"] = static
        return self.viewer_class(**kw)


def load(target):  # "module:Class" -> the class
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


PANELS = (
    # the first chapter, in page order
    PanelRecord("head", "app.panels.heatmap:HeadPanel", "/heatmap", "The head",
                "attention.md", island_height=730, phone_height=1260,
                untitled_in_chapter=False, table_budget=700_000),
    PanelRecord("sweep", "app.panels.sqrt_dk:SqrtDkPanel", "/sqrt-dk", "The √d_k sweep",
                "attention.md", island_height=1130, phone_height=1440, page_height=1250,
                page_phone_height=1680),
    PanelRecord("shapes", "app.panels.shapes:ShapesPanel", "/shapes", "The shapes of one head",
                "attention.md", island_height=620, phone_height=650, page_height=655,
                page_phone_height=670),
    PanelRecord("ladder", "app.panels.ladder:LadderPanel", "/ladder", "Where the n² lives",
                "attention.md", island_height=600, phone_height=1100, follows="head",
                page_height=655, page_phone_height=1280, table_budget=150_000),
    PanelRecord("block", "app.panels.block:BlockPanel", "/block", "Many heads, one block",
                "attention.md", island_height=750, phone_height=1410, page_height=780,
                page_phone_height=1460),
    PanelRecord("cost", "app.panels.cost:CostPanel", "/cost",
                "What attention costs in a real model", "attention.md", island_height=1130,
                phone_height=1570, page_height=1270, page_phone_height=1860),
    # the lab runs PyTorch on the server: a static page links to the live one instead
    PanelRecord("lab", "app.panels.kernel_lab:KernelLabPanel", "/kernel-lab",
                "Checking it on a real system: the kernel lab", "attention.md", island_height=140,
                phone_height=190, page_height=290, page_phone_height=535,
                static_stand_in="app.panels.kernel_lab_link:KernelLabLink"),
    # the second chapter, in page order
    PanelRecord("agreement", "app.panels.agreement:AgreementPanel", "/agreement",
                "The dot product: an agreement score", "math.md", island_height=750,
                phone_height=1400, page_height=795, page_phone_height=1475,
                table_budget=100_000),
    PanelRecord("overflow", "app.panels.overflow:OverflowPanel", "/overflow",
                "Softmax and the overflow trap", "math.md", island_height=410, phone_height=680,
                page_height=465, page_phone_height=745, table_budget=150_000),
    PanelRecord("decode", "app.panels.decode_bill:DecodeBillPanel", "/decode-bill",
                "The bill for one decoded token", "math.md", island_height=1310, phone_height=1980,
                page_height=1445, page_phone_height=2230),
    PanelRecord("memory", "app.panels.memory_bill:MemoryBillPanel", "/memory-bill",
                "The memory bill", "math.md", island_height=1055, phone_height=1490,
                page_height=1175, page_phone_height=1730),
    PanelRecord("online", "app.panels.online_softmax:OnlineSoftmaxPanel", "/online-softmax",
                "Online softmax: never write the square", "math.md", island_height=810,
                phone_height=1440, page_height=845, page_phone_height=1555),
    # the third chapter, in page order
    PanelRecord("tiles", "app.panels.tiles:TilesPanel", "/tiles", "FlashAttention, tile by tile",
                "flash.md", island_height=560, phone_height=740, page_height=595,
                page_phone_height=775),
    PanelRecord("traffic", "app.panels.traffic:TrafficPanel", "/traffic",
                "What the tiles save: bytes moved", "flash.md", island_height=520,
                phone_height=745, page_height=550, page_phone_height=800),
    # the fourth chapter, in page order
    PanelRecord("blocks", "app.panels.blocks:BlocksPanel", "/paged-blocks",
                "Blocks, tables and a shared prompt", "kv.md", island_height=410,
                phone_height=480, page_height=445, page_phone_height=535),
    PanelRecord("fit", "app.panels.fit:FitPanel", "/blocks-fit", "How many blocks fit", "kv.md",
                island_height=375, phone_height=705, page_height=410, page_phone_height=755),
)


class ChapterPanel(NamedTuple):
    """A panel as a chapter holds it: its class (for the URL plan, before anything is built)
    and a builder of a fresh viewer from `get` (slot -> that slot's viewer, built on first
    use, so a follower can reach its leader in any order)."""

    cls: type
    build: Callable


# Each reader takes the table as it stands when called (a test adds a record to it).

def by_slot(slot):  # -> the record of `slot`; KeyError names it
    for record in PANELS:
        if record.slot == slot:
            return record
    raise KeyError(f"no panel has the slot {slot!r}")


def by_route(route):  # -> the record whose page is `route`, or None
    return next((r for r in PANELS if r.route == route), None)


def chapter_panels(chapter):  # "math.md" -> {slot: ChapterPanel}, in page order
    return {r.slot: ChapterPanel(r.viewer_class, r.for_chapter)
            for r in PANELS if r.chapter == chapter}


def follows(chapter):  # "attention.md" -> {follower slot: leader slot}
    return {r.slot: r.follows for r in PANELS if r.chapter == chapter and r.follows}


def island_height(slot, own_page=False):  # -> px, the record's or the default; own_page:
    # on the panel's page of its own (its record's page_height, or as in its chapter)
    record = next((r for r in PANELS if r.slot == slot), None)
    if own_page and record and record.page_height:
        return record.page_height
    return record.island_height if record else DEFAULT_ISLAND_HEIGHT


def phone_height(slot, own_page=False):  # -> px on a phone: the record's, or as at 1280 px;
    # own_page: on its page of its own (page_phone_height, or as in its chapter)
    record = next((r for r in PANELS if r.slot == slot), None)
    if own_page and record and record.page_phone_height:
        return record.page_phone_height
    return (record and record.phone_height) or island_height(slot)


def by_viewer(viewer):  # "module:Class" -> its record, or None
    return next((r for r in PANELS if r.viewer == viewer), None)


def record_of(cls):  # a panel's Viewer class -> its record; KeyError names the class
    record = by_viewer(f"{cls.__module__}:{cls.__name__}")
    if record is None:
        raise KeyError(f"{cls.__module__}:{cls.__name__} has no record in app/kit/registry.py")
    return record


def route_of(cls):  # a panel's Viewer class -> its page's route
    return record_of(cls).route


def title_of(cls):  # a panel's Viewer class -> its title, written once, in its record
    return record_of(cls).title


def panel_routes():  # -> {route: "module:Class"}: each panel's page, in table order
    return {r.route: r.viewer for r in PANELS}


# --- the chapters ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ChapterRecord:
    """A chapter: the content file that holds its prose, title and panel markers, and its page.

    Its panels are the PANELS records naming its content file; app/chapters/page_model.py
    assembles it into the one page model both renderers draw (static and live).
    """

    content: str  # "attention.md", in app/chapters/content/
    route: str  # its page: "/" (live under /live)
    back: str | None = None  # the content file of the chapter its header links back to


CHAPTERS = (
    ChapterRecord("attention.md", "/"),
    ChapterRecord("math.md", "/math", back="attention.md"),
    ChapterRecord("flash.md", "/flash", back="math.md"),
    ChapterRecord("kv.md", "/kv", back="flash.md"),
)


def chapter(content_file):  # "math.md" -> its ChapterRecord; KeyError names it
    for record in CHAPTERS:
        if record.content == content_file:
            return record
    raise KeyError(f"no chapter has the content file {content_file!r}")


def chapter_at(route):  # "/math" -> its ChapterRecord, or None
    return next((c for c in CHAPTERS if c.route == route), None)
