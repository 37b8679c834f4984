"""States in Python, switching in the browser: the one panel shape.

A panel is three parts (docs/PANEL_CONTRACT.md):

1. Controls: `param` parameters, each with its discrete stops (`Control`).
2. State: a pure `state(params) -> {target: value}`, computed with `attention_core`. It is the
   union of `Part`s, each a pure function of a few controls, so the table of every state
   that a static page ships stays small (a part over two controls of 18 stops holds 324
   values, not one per combination of all the panel's controls).
3. View: Bokeh / Panel models built once from the first state. A target names one of them
   (``"source:NAME"``, ``"holes:NAME"``, ``"prop:NAME.attr"``, ``"log:NAME"``: what each
   takes is in app/kit/targets.py, which reads the names); a log's value is {control:
   line}: the line a change of that control adds to the panel's log.

In a live session `push` applies a new state to the models, sending only what changed.
On a static page the browser does the same with `static/switcher.js`, from the table of
states `table()` writes: no server, no round trip. Both apply the output of the same
`state()`, so live and static cannot drift (a browser test compares them).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import panel as pn

from app.kit import resources
from app.kit.readout import FOLD_CSS, url_note
from app.kit.targets import parse as parse_target

SWITCHER_JS = resources.static_file("switcher.js")

@dataclass
class StaticBuild:
    """One static page (or group of panels) being built: what it ships besides its models.

    `tables`: {ref: table of states}, one per panel class the page shows, in the order its
    panels named them. The build reads it when the page is saved (`with static_build() as
    site: ... site.tables`). `panels`: every StatePanel built in it, in order (a still that
    its controls switch before Bokeh has loaded needs the panel: app/chapters/chapter_page.py)."""

    tables: dict = field(default_factory=dict)
    panels: list = field(default_factory=list)


# the build in progress in this context, if any: read by the panels as they are built
_building = contextvars.ContextVar("static_build", default=None)


@contextlib.contextmanager
def static_build():  # with static_build() as site: pages built here carry the browser-side
    # switcher, and site.tables holds the tables of states they name
    site = StaticBuild()
    token = _building.set(site)
    try:
        yield site
    finally:
        _building.reset(token)


def is_static():  # -> True while a static page is being built
    return _building.get() is not None


def page_static(static):  # a panel's `static` argument -> it, or when its page did not say,
    # whether it is being built inside `static_build()` (a panel built by hand there)
    return is_static() if static is None else bool(static)


def current_build():  # -> the StaticBuild in progress here, or None
    return _building.get()


def table_script(ref, table):  # -> the JS file that registers one table with the switcher.
    # The table goes as its JSON text in a string, which the switcher gives JSON.parse: V8
    # reads JSON several times faster than the same object written as a literal (the head's
    # 470 KB table on a slowed phone: 8-19 ms against 105 ms, one long task that a reader's
    # first tap would wait behind)
    text = canonical(table).replace("\\", "\\\\").replace("'", "\\'")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    quoted = "'" + text + "'"
    return f"AE.states.register({json.dumps(ref)}, {quoted});\n"


@dataclass(frozen=True)
class Control:
    """A control: a parameter, the stops it takes, and how the browser reads its widget.

    `prop` is the Bokeh property of the widget's model that holds the choice, and `raw[i]`
    that property's value when the parameter is `values[i]` (a toggle's `active` is the
    boolean; a radio group's `active` is the option's index; a slider over stop indices
    holds i).
    """

    name: str
    values: tuple
    prop: str = "value"
    raw: tuple | None = None
    kind: str = "number"  # how a URL value is read: "number", "boolean" or "choice"

    def raw_values(self):
        return tuple(self.values) if self.raw is None else tuple(self.raw)

    @classmethod
    def toggle(cls, name):  # a Toggle button: its model's `active` is the boolean
        return cls(name, (False, True), "active", (False, True), "boolean")

    @classmethod
    def choice(cls, name, objects):  # a RadioButtonGroup: `active` is the option's index
        return cls(name, tuple(objects), "active", tuple(range(len(objects))), "choice")

    @classmethod
    def slider(cls, name, values):  # a slider or number box holding the value itself
        return cls(name, tuple(values), "value", tuple(values), "number")

    @classmethod
    def stop_slider(cls, name, values):  # a slider over stop indices: value i means values[i]
        return cls(name, tuple(values), "value", tuple(range(len(values))), "number")


@dataclass(frozen=True)
class Part:
    """One factor of a panel's state: `fn(**{control: value})` for the controls it names."""

    controls: tuple
    fn: Callable = field(compare=False)

    def __call__(self, params):  # {control: value, ...} -> {target: value}
        return self.fn(**{name: params[name] for name in self.controls})


def merge_parts(parts: Sequence[Part], params) -> dict:  # -> the panel's whole state
    state = {}
    for part in parts:
        values = part(params)
        overlap = state.keys() & values.keys()
        if overlap:
            raise ValueError(f"targets {sorted(overlap)} come from two parts")
        state.update(values)
    return state


def canonical(value):  # a state value -> JSON text, the same for equal values
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def table(controls: Sequence[Control], parts: Sequence[Part]) -> dict:
    """Every state of every part, for the browser: each part's distinct values once, and per
    combination of its controls' stops (row-major, first control slowest) an index into them.
    """
    position = {c.name: i for i, c in enumerate(controls)}
    out_parts = []
    for part in parts:
        stops = [controls[position[name]].values for name in part.controls]
        values, seen, index = [], {}, []
        for combo in itertools.product(*stops):
            value = part(dict(zip(part.controls, combo)))
            key = canonical(value)
            if key not in seen:
                seen[key] = len(values)
                values.append(json.loads(key))
            index.append(seen[key])
        out_parts.append({"controls": [position[n] for n in part.controls],
                          "values": values, "index": index})
    return {
        "controls": [{"name": c.name, "prop": c.prop, "raw": list(c.raw_values()),
                      "kind": c.kind, "values": [_jsonable(v) for v in c.values]}
                     for c in controls],
        "parts": out_parts,
    }


def _jsonable(v):
    return v if isinstance(v, (str, int, float, bool)) or v is None else str(v)


# --- the live half: a panel built once from its state, and `push` ---------------------------


def push(targets, old, new, changed=(), log=None, log_lines=0, log_empty=""):
    """Apply state `new` to the models in `targets` ({target: model}), sending only what
    differs from `old`. `log` (a list, newest first, at most `log_lines`) gains the lines
    of the `changed` controls; a `log:` target then shows it."""
    for name, value in new.items():
        model = targets[name]
        target = parse_target(name)
        kind = target.kind
        if kind == "log":
            for control in changed:
                if value.get(control):
                    log.insert(0, value[control])
            del log[log_lines:]
            model.show(log_values(log, log_lines, log_empty))
            continue
        if old.get(name) == value:
            continue
        if kind == "source":
            write_columns(model, value)
        elif kind == "holes":
            model.show(value)
        elif kind == "prop" and getattr(model, target.attr) != value:
            setattr(model, target.attr, value)


def log_values(log, lines, empty):  # newest-first lines -> {log0: ..., log1: ...}
    values = {f"log{i}": log[i] if i < len(log) else "" for i in range(lines)}
    if not log:
        values["log0"] = empty
    return values


def write_columns(source, columns):
    # {column: values} -> the source: a column whose few cells changed goes as a patch,
    # one that changed much as the whole column; nothing if nothing changed
    data, patches, whole = source.data, {}, {}
    for name, new in columns.items():
        old = list(data.get(name, []))
        if len(old) != len(new):
            whole[name] = list(new)
            continue
        changed = [(i, v) for i, (u, v) in enumerate(zip(old, new)) if u != v]
        if not changed:
            continue
        if len(changed) * 2 < len(new):
            patches[name] = changed
        else:
            whole[name] = list(new)
    if whole:
        data.update(whole)
    if patches:
        source.patch(patches)


# a control's CustomJS: one call into static/switcher.js, which finds the panel's models in
# the callbacks' args (Panel gives a root's callbacks the models of that root only: a panel
# that follows another has its controls in the leader's root and its targets in its own)
SWITCH_CALL = "AE.states.onControl(cb_obj, ae_panel)"


def draw_changes_on_overlay(layout, targets):
    # Bokeh repaints a figure's whole primary canvas (axes, grid, titles, legend) when one
    # of its renderers asks, but only the overlay canvas when only overlay-level renderers
    # did. So a renderer whose data a state sets is drawn at level "overlay", and so is an
    # annotation a state moves: a control change redraws those alone. Overlays are not
    # clipped to the frame, so a renderer with fixed data that relies on the ranges to
    # hide part of it stays where it is. A change of range or title still redraws all.
    # A renderer a panel put on another level than "glyph" stays there: drawn with the
    # axes, it costs a full repaint when it changes, and nothing when the overlay does.
    from bokeh.models import Annotation, GlyphRenderer

    kinds = {name: parse_target(name).kind for name in targets}
    sources = {id(m) for name, m in targets.items() if kinds[name] == "source"}
    changed = {id(m) for name, m in targets.items() if kinds[name] == "prop"}
    for pane in layout.select(pn.pane.Bokeh):
        renderers = figure_renderers(pane.object)
        for model in renderers:
            if not isinstance(model, GlyphRenderer):
                continue
            if id(model.data_source) in sources and model.level == "glyph":
                model.level = "overlay"
            # No panel selects or mutes anything, but by default the browser keeps a
            # selected, an unselected and a muted copy of every glyph and works out all
            # their colours again (and measures every text label again) whenever the
            # source changes: a text glyph's change cost three times what it needs.
            model.selection_glyph = model.nonselection_glyph = model.muted_glyph = None
        for model in renderers:
            if isinstance(model, Annotation) and id(model) in changed:
                model.level = "overlay"


def add_renderer(fig, source, glyph, **renderer):  # -> the GlyphRenderer, on fig
    # figure.rect, .text, ... also build a selected, an unselected and a muted copy of the
    # glyph, which draw_changes_on_overlay drops; a panel that draws many renderers builds
    # only the glyph (Plot.add_glyph), none of the copies
    return fig.add_glyph(source, glyph, selection_glyph=None, nonselection_glyph=None,
                         muted_glyph=None, **renderer)


def figure_renderers(obj):  # a pane's Bokeh object -> its renderers and annotations
    # A figure lists them itself; `select` finds the same by walking every model the
    # figure references (each glyph, source, axis, ticker...), which took about a third of
    # the CPU of building a live head's document, under cProfile. Anything else is walked.
    from bokeh.models import Plot

    if isinstance(obj, Plot):
        title = [obj.title] if obj.title is not None else []
        return [*obj.renderers, *obj.center, *obj.above, *obj.below, *obj.left, *obj.right,
                *title]
    from bokeh.models import Annotation, GlyphRenderer

    return list(obj.select({"type": GlyphRenderer})) + list(obj.select({"type": Annotation}))


class StatePanel(pn.viewable.Viewer):
    """A panel in the one shape: controls, a pure `state`, a view built once.

    Subclasses define `controls()` and `parts()` (classmethods), and `build(state)`, which
    makes the view from the first state, fills `self.targets` ({target: model}) and
    `self.widgets` ({control: widget}), and returns the layout. `url_keys` lists the
    parameters the URL carries. A panel with a log sets `log_lines` and `log_empty`.
    """

    url_keys: tuple = ()
    url_yields = False  # in a chapter, a name another panel has goes to that one (url_plan)
    log_lines = 0
    log_empty = ""
    readout_css = ""  # the stylesheet its readouts carry: each is a shadow root of its own


    @classmethod
    def controls(cls):  # -> [Control]
        raise NotImplementedError

    @classmethod
    def parts(cls):  # -> [Part]
        raise NotImplementedError

    @classmethod
    def state(cls, **params):  # pure: {control: value} -> {target: value}
        return merge_parts(cls.parts(), params)

    @classmethod
    def table(cls):  # every state, for the browser (cached per class: it never changes)
        cached = cls.__dict__.get("_table_cache")
        if cached is None:
            cached = table(cls.controls(), cls.parts())
            cls._table_cache = cached
        return cached

    def __init__(self, in_chapter=False, static=None, **params):
        # in_chapter: in a chapter, whose section heading and prose stand above, the panel
        # leaves out its own title and introduction (`own`); static: built for a static page
        # (its table ships and the browser switches it; no typed inputs), an argument its page
        # passes (default: whether it is built inside `static_build()`). The panel's code
        # reads self.static, never the context.
        self.in_chapter = in_chapter
        self.static = page_static(static)
        super().__init__(**params)
        if _building.get() is not None:
            _building.get().panels.append(self)
        self.targets, self.widgets, self.log = {}, {}, []
        self.url_map = {name: name for name in self.url_keys}
        self.url_note = url_note()  # the build places it; a static page fills it
        self._state = self.current_state()
        self._layout = self.build(self._state)
        missing = set(self._state) - set(self.targets)
        if missing:
            raise ValueError(f"{type(self).__name__}: state targets without a model: "
                             f"{sorted(missing)}")
        self.targets["holes:url_note"] = self.url_note
        for name in self.targets:  # a misspelt target fails here, as the panel is built
            parse_target(name)
        draw_changes_on_overlay(self._layout, self.targets)
        # the first state, drawn into models that were built from it or empty
        push(self.targets, {}, self._state, (), self.log, self.log_lines, self.log_empty)
        self.param.watch(self._on_change, [c.name for c in self.controls()])

    def params(self):  # -> {control: current value}
        return {c.name: getattr(self, c.name) for c in self.controls()}

    def current_state(self):
        return self.state(**self.params())

    def build(self, state):  # -> layout; fills self.targets and self.widgets
        raise NotImplementedError

    def own(self, *objects):  # -> objects shown on the panel's page of its own, not in a chapter
        return [] if self.in_chapter else list(objects)

    def new_readout(self, cls, values, *targets, **kw):  # -> a Readout of `cls` showing `values`
        # across the panel, with its readout_css, and the model of each state target named
        kw = {"sizing_mode": "stretch_width", "margin": (0, 10), **kw}
        view = cls(values, stylesheets=[self.readout_css, FOLD_CSS], **kw)
        self.targets.update(dict.fromkeys(targets, view))
        return view

    def _on_change(self, *events):
        new = self.current_state()
        with pn.io.hold():  # one message for the whole change
            push(self.targets, self._state, new, [e.name for e in events], self.log,
                 self.log_lines, self.log_empty)
        self._state = new

    @classmethod
    def table_ref(cls):  # -> "HeadPanel-<hash>": the name of its table's file on a static site
        ref = cls.__dict__.get("_table_ref_cache")  # hashed once, not for every page built
        if ref is None:
            digest = hashlib.sha256(canonical(cls.table()).encode()).hexdigest()[:10]
            ref = cls._table_ref_cache = f"{cls.__name__}-{digest}"
        return ref

    def spec(self):  # -> what the browser's switcher needs, besides the models
        spec = {"targets": [parse_target(name).record() for name in self.targets],
                "url": self.url_map,
                "log_lines": self.log_lines, "log_empty": self.log_empty}
        site = _building.get()
        if site is not None:  # one file per panel class, shared by every page that shows it
            ref = self.table_ref()
            if ref not in site.tables:
                site.tables[ref] = self.table()
            return {**spec, "table_ref": ref}
        return {**spec, "table": self.table()}

    def attach_switcher(self):
        # a static page: every control's change runs the switcher over the shipped table, with
        # one argument: the panel's spec, its controls' models and its targets', in order
        from bokeh.models import ColumnDataSource

        from app.kit import panel_internals

        controls = [self.widgets[c.name] for c in self.controls()]
        spec = ColumnDataSource({"spec": [canonical(self.spec())]}, name="ae-spec")
        panel_internals.jscallback_with_one_argument(
            controls, "value", SWITCH_CALL, "ae_panel", spec=spec, controls=controls,
            targets=list(self.targets.values()))

    def __panel__(self):
        if self.static and not getattr(self, "_switcher_attached", False):
            self._switcher_attached = True
            self.attach_switcher()
        return self._layout
