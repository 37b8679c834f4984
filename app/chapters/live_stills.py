"""A live chapter's panels usable at once: the static chapter's stills, handed over to the session.

A live chapter's panel arrives with its session, seconds after a phone reaches it (Bokeh's
bundles, the session, the panel built after the page connects). Until then each panel's place
shows what the static chapter shows there: its still (charts drawn at build time, readouts)
with native controls over it, its data and its table of states, wired by the same scripts
(static/still_controls.js, stills.js, page_url.js: the build's `live-stills.js`,
app/hosting/build.py). Nothing is drawn twice: the stills are read from the built static
chapter that `serve` serves beside the live pages (app/hosting/static_site.py), in the page's
theme; without a build (a notebook, `panel serve`, a test) a live page is as before.

The hand-over (static/live_stills.js): each panel's box is an island (chapter.css), the
session's root drawn unseen under its still. The browser sends the stops a reader set on the
native controls to the session (`HandOver.stops`, {slot: {version, stops: {control: stop}}});
the session sets them on its panel, as a deep link would, and answers with the version its
panel now holds (`HandOver.taken`), once the panel is built. When the panel's root holds that
version and has drawn, the still goes and the live panel takes its place in one frame; the
focus, if it was on a native control, moves to the live control of that name.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import logging
import posixpath
import re
from pathlib import Path
from typing import ClassVar

import panel as pn
import param
from panel.reactive import ReactiveHTML

from app.kit import registry, resources

log = logging.getLogger(__name__)

# the still of each island of a built chapter (chapter_page.island writes it so)
ISLAND = re.compile(r'<section class="ae-island" id="panel-([\w-]+)"[^>]*>.*?'
                    r'<div class="ae-still-body">(.*?)</div><p class="ae-island-wait">',
                    re.DOTALL)
CONFIG = re.compile(r'<script type="application/json" id="ae-islands">(.*?)</script>',
                    re.DOTALL)
STILLS_SRC = re.compile(r'<script src="([^"]+/)stills\.js" defer></script>')
BUNDLE = "live-stills.js"  # the build's site script a live chapter loads (build.SITE_SCRIPTS)


@dataclasses.dataclass(frozen=True)
class BuiltStills:
    """What a live chapter takes from its built static twin; paths absolute from the site."""

    stills: dict  # slot -> the still's HTML (its data, native controls, charts, readouts)
    tables: dict  # slot -> [the table scripts of its island's group]
    switcher: str  # the switcher's path (it registers the tables)
    bundle: str  # live-stills.js's path


def chapter_file(route, theme):  # "/math", "dark" -> "math/index-dark.html"
    folder = route.strip("/")
    name = "index-dark.html" if theme == "dark" else "index.html"
    return f"{folder}/{name}" if folder else name


def absolute(route, path):  # a path relative to the chapter's page -> the same from the root
    base = "/" + (route.strip("/") + "/" if route.strip("/") else "")
    return posixpath.normpath(posixpath.join(base, path))


def parse(text, route):  # a built chapter's HTML -> BuiltStills, or None without stills
    config, src = CONFIG.search(text), STILLS_SRC.search(text)
    if config is None or src is None:
        return None
    islands = json.loads(config.group(1))
    group_of = {slot: g for g in islands["groups"].values() for slot in g["slots"]}
    stills = {slot: still for slot, still in ISLAND.findall(text)}
    return BuiltStills(
        stills=stills,
        tables={slot: [absolute(route, t) for t in group_of[slot]["tables"]]
                for slot in stills if slot in group_of},
        switcher=absolute(route, islands["switcher"]),
        bundle=absolute(route, src.group(1) + BUNDLE))


@functools.lru_cache(maxsize=16)
def _read(path, stamp, route):  # stamp: the file's (mtime, size): read again when rebuilt
    return parse(Path(path).read_text(encoding="utf-8"), route)


def built(route, theme, site=None):  # -> the built chapter's BuiltStills, or None
    if site is None:
        site = resources.site_dir()
    path = Path(site) / chapter_file(route, theme)
    try:
        stat = path.stat()
        return _read(str(path), (stat.st_mtime_ns, stat.st_size), route)
    except (OSError, ValueError, KeyError):  # no build, or one of another shape
        log.warning("no stills for the live chapter %s from %s", route, path, exc_info=True)
        return None


# the note under a still until the session's panel takes over, by whether native controls
# switch the still; a panel with no still (the kernel lab) says what is loading
WAIT_NOTES = {True: "Its controls work as they are; the live panel takes over as it arrives.",
              False: "The live panel is loading."}


def loading_note(slot):  # -> a panel with no still: its title, and that it is loading
    title = registry.by_slot(slot).title
    return f"<p><strong>{html.escape(title)}</strong></p>"


def island_parts(slot, stills, stand_in_height):  # -> (HTML before the root's element, HTML
    # after it): the island around a live panel's root, its still and note, as the static
    # chapter's (chapter_page.island), its group named by the slot; stand_in_height: px a panel
    # with a static stand-in holds (the live page's placeholder)
    height = registry.island_height(slot)
    phone = registry.phone_height(slot)
    still = stills.stills.get(slot, "")
    record = registry.by_slot(slot)
    if record.static_stand_in:  # its static still is the stand-in's (a link to the live one),
        # its heights the stand-in's: it holds what a live panel's box held before it lands
        still, height, phone = "", stand_in_height, stand_in_height
    switched = 'class="ae-still-data"' in still
    body = still or loading_note(slot)
    before = (f'<section class="ae-island" id="panel-{slot}" data-group="{slot}" '
              f'data-slot="{slot}" style="--ae-island-height:{height}px;'
              f'--ae-phone-height:{phone}px" aria-label="{html.escape(slot)} panel">\n'
              '<div class="ae-island-root">')
    after = ('</div>\n<div class="ae-island-still">'
             f'<div class="ae-still-body">{body}</div>'
             f'<p class="ae-island-wait">{html.escape(WAIT_NOTES[switched])}</p>'
             f"<noscript><p>{html.escape(registry.NO_SCRIPT_NOTE)}</p></noscript>"
             "</div>\n</section>")
    return before, after


def page_config(stills, slots):  # -> the JSON still_controls.js reads (#ae-islands): the
    # switcher and, per island, its tables
    config = {"switcher": stills.switcher,
              "groups": {slot: {"tables": stills.tables.get(slot, [])} for slot in slots}}
    return json.dumps(config, separators=(",", ":")).replace("</", "<\\/")


def head_html(stills, slots):  # -> the page's config and its script, for after the text
    return (f'<script type="application/json" id="ae-islands">{page_config(stills, slots)}'
            f'</script>\n<script src="{html.escape(stills.bundle)}" defer></script>')


# --- the session's half of the hand-over ----------------------------------------------------

HAND_OVER_JS = resources.inline_script("hand_over.js")  # static/hand_over.js


class HandOver(ReactiveHTML):
    """The page's link between its stills and its session's panels (static/live_stills.js)."""

    stops = param.Dict(default={}, doc="{slot: {version, stops: {control: stop index}}}: what "
                                       "the reader set on the stills' native controls")
    taken = param.Dict(default={}, doc="{slot: version}: the panel is built and holds the "
                                       "stops of that version (0: none were set)")

    _template = '<div id="box" hidden></div>'
    _scripts: ClassVar[dict] = {
        "render": HAND_OVER_JS + "AE.handOver.link(data)",
        "taken": "AE.handOver.taken()",
    }


# a panel's last object: its render says the panel's views are built (a layout builds all its
# children's views before it renders them), which the browser's documents being idle does not
# (a document is idle once, at its first render: a panel filled later never unsets it)
LANDED_JS = resources.inline_script("landed.js")  # static/landed.js


class Landed(ReactiveHTML):
    """Says, as it renders, that its panel (the layout it ends) has been drawn."""

    slot = param.String(default="", constant=True)

    _template = '<div id="box" hidden></div>'
    _scripts: ClassVar[dict] = {"render": LANDED_JS + "AE.panelLanded.add(data)"}


def landed(build, slot):  # a panel block's builder -> the same, ending with its Landed
    def build_landed():
        return [*build(), Landed(slot=slot, height=0, width=0, margin=0)]
    return build_landed


def stop_values(viewer, stops):  # -> {parameter: value} of a still's stops ({control: stop
    # index}, from the browser: untrusted), those that name a control and one of its stops
    from app.kit.states import StatePanel

    if not isinstance(viewer, StatePanel) or not isinstance(stops, dict):
        return {}
    controls = {c.name: c for c in type(viewer).controls()}
    out = {}
    for name, at in stops.items():
        control = controls.get(name)
        if control is not None and type(at) is int and 0 <= at < len(control.values):
            out[name] = control.values[at]
    return out


class Stills:
    """One live session's side of the hand-over: the stops the browser sends are set on the
    panels once they are built; `taken` tells the browser which version each panel holds."""

    def __init__(self, get, slots):  # get: slot -> its viewer, once `filled` says it is built
        self.get, self.slots, self.built = get, list(slots), False
        self.link = HandOver(height=0, width=0, margin=0)
        self.link.param.watch(self._sent, "stops")

    def _sent(self, event):
        if self.built:
            self.apply(event.new)

    def filled(self):  # the panels are built: the stops sent so far, then every slot taken
        self.built = True
        self.apply(self.link.stops, every=True)

    def apply(self, sent, every=False):  # sent: HandOver.stops; every: answer for each slot
        taken = dict(self.link.taken)
        with pn.io.hold():  # the panels' changes and the answer in one message
            for slot in self.slots:  # page order: a leader before its follower
                entry = sent.get(slot) if isinstance(sent, dict) else None
                version = entry.get("version") if isinstance(entry, dict) else None
                if type(version) is int and version > taken.get(slot, -1):
                    try:
                        values = stop_values(self.get(slot), entry.get("stops"))
                        if values:
                            self.get(slot).param.update(**values)
                    except Exception:  # a stop the panel refuses: it keeps its own state
                        log.exception("the %s panel refused the still's stops", slot)
                    taken[slot] = version
                elif every:
                    taken.setdefault(slot, 0)
            if taken != self.link.taken:
                self.link.taken = taken
