"""A still the browser can switch: each figure's description, for static/stills.js.

`stills.py` draws a panel's figures as SVG at build time, in the state the panel is in. A
static page ships every state of a panel in its table (app/kit/states.py `table()`), so the
browser can draw the still of any state itself, before BokehJS has loaded, if it has what
`figure_svg` reads that no state changes: the frame's size and borders, the ranges and scales,
the axes (titles, fixed ticks, label overrides), the title, each glyph renderer's glyph (its
kind and properties: a column of the source, or one value, with a colour mapper or a
transform's Python twin by name) and level, the annotations (spans, labels, arrows), the
legends, and the data of every source no state sets. A state target names the model it
sets by id (`targets`): a source's columns, or one property of a range, glyph, renderer,
annotation or legend item.

`describe(panel)` gives that, as JSON data (no script: static/stills.js is the code), and
`static/stills.js` `AE.stills.draw(description, state)` gives back the SVGs `stills_of`
writes for the panel in that state (tests/test_stills_js.py holds the two to the byte).
Dispatch is on Bokeh's classes; what a still cannot draw raises `stills.StillError`, as
`figure_svg` does, and what cannot be switched raises `NotSwitchable`, naming why.
"""

from __future__ import annotations

import functools
import itertools
import math

import panel as pn
from bokeh.core.property.vectorization import Field, Value
from bokeh.models import (
    AnnularWedge,
    Arc,
    Arrow,
    Axis,
    BoxAnnotation,
    ColumnDataSource,
    CustomJSTransform,
    FixedTicker,
    GlyphRenderer,
    Grid,
    Label,
    Legend,
    Line,
    LinearColorMapper,
    LogScale,
    Range1d,
    Rect,
    Scatter,
    Segment,
    Span,
    Text,
    Title,
    VBar,
    Wedge,
)

from app.chapters.stills import StillError, label_text, plots_of
from app.kit import transforms
from app.kit.targets import parse as parse_target

# the properties figure_svg reads of each glyph class (stills.glyph_svg and swatch)
GLYPHS = {
    Line: ("x", "y", "line_color", "line_width", "line_dash", "line_alpha"),
    Scatter: ("x", "y", "marker", "size", "line_color", "fill_color", "line_width"),
    VBar: ("x", "top", "bottom", "width", "fill_color", "fill_alpha", "line_color",
           "line_width"),
    Rect: ("x", "y", "width", "height", "fill_color", "fill_alpha", "line_color", "line_width"),
    Segment: ("x0", "y0", "x1", "y1", "line_color", "line_width", "line_dash", "line_alpha"),
    Text: ("x", "y", "text", "text_color", "x_offset", "y_offset", "angle", "text_align",
           "text_baseline", "text_font_style"),
    AnnularWedge: ("x", "y", "outer_radius", "start_angle", "end_angle", "start_angle_units",
                   "fill_color", "fill_alpha", "line_color", "line_width"),
    Wedge: ("x", "y", "radius", "start_angle", "end_angle", "start_angle_units", "fill_color",
            "fill_alpha", "line_color", "line_width"),
    Arc: ("x", "y", "radius", "start_angle", "end_angle", "start_angle_units", "line_color",
          "line_width"),
}
KIND = {Line: "Line", Scatter: "Scatter", VBar: "VBar", Rect: "Rect", Segment: "Segment",
        Text: "Text", AnnularWedge: "AnnularWedge", Wedge: "Wedge", Arc: "Arc"}
SPAN = ("visible", "location", "dimension", "line_color", "line_width", "line_dash",
        "line_alpha")
LABEL = ("visible", "x", "y", "x_offset", "y_offset", "text", "text_align", "text_baseline",
         "angle", "text_color", "background_fill_color")
ARROW = ("visible", "x_start", "y_start", "x_end", "y_end", "line_color", "line_width")
SKIPPED = (Legend, Grid, BoxAnnotation, Title)  # drawn by no still (figure_svg skips them)


class NotSwitchable(Exception):
    """A figure whose still the browser cannot switch from the table (says why)."""


def class_of(model, table):  # -> the value of the first class of `table` the model is one of
    for cls, value in table.items():
        if isinstance(model, cls):
            return value
    return None


def plain(v):  # a property's value -> JSON (numbers, strings, lists), or NotSwitchable
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):  # JSON holds none: stills.js revives
            return {"float": "NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity"}
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if hasattr(v, "tolist"):  # numpy
        return plain(v.tolist())
    raise NotSwitchable(f"a value of {type(v).__name__} is not data: {v!r}")


def transform_of(t):  # a Field's transform -> its description, or None
    if t is None or not isinstance(t, (LinearColorMapper, CustomJSTransform)):
        return None
    if isinstance(t, LinearColorMapper):
        return {"mapper": list(t.palette), "low": t.low, "high": t.high,
                "low_color": t.low_color, "high_color": t.high_color,
                "nan_color": t.nan_color}
    twin = transforms.python_twin(t)
    if twin is None:
        raise StillError(f"a still cannot apply a CustomJSTransform: {t.v_func!r}")
    args = []
    if isinstance(twin, functools.partial):
        if twin.keywords:
            raise NotSwitchable(f"a transform's twin takes keywords {twin.keywords}")
        twin, args = twin.func, [plain(a) for a in twin.args]
    return {"twin": f"{twin.__module__}.{twin.__qualname__}", "args": args}


def spec_of(v):  # a glyph property as Python holds it -> JSON: a field, a value, or itself
    if isinstance(v, Field):
        return {"field": v.field, "transform": transform_of(v.transform)}
    if isinstance(v, Value):
        return {"value": plain(v.value)}
    if isinstance(v, dict):
        if "field" in v:
            return {"field": v["field"], "transform": transform_of(v.get("transform"))}
        raise NotSwitchable(f"a property as a dict without a field: {v!r}")
    return plain(v)


class Describer:
    """One panel's figures as data; `ids` the models its state targets (by Bokeh id)."""

    def __init__(self, targeted):
        self.ids = targeted
        self.sources = {}
        self.described = {}  # id -> the description of a model a state sets

    def keyed(self, model, out):  # a model a state sets carries its id
        if model.id in self.ids:
            out["id"] = model.id
            self.described[model.id] = out
        return out

    def props(self, model, names):
        return self.keyed(model, {n: spec_of(getattr(model, n)) for n in names
                                  if hasattr(model, n)})

    def source(self, src):  # -> its id; its data kept once (all of it: columns a state
        # gives too, as a state's columns are merged into it, as the switcher does)
        if not isinstance(src, ColumnDataSource):
            raise NotSwitchable(f"a renderer's source is a {type(src).__name__}")
        if src.id not in self.sources:
            self.sources[src.id] = {k: plain(list(v)) for k, v in src.data.items()}
        return src.id

    def renderer(self, r):
        names = class_of(r.glyph, GLYPHS)
        if names is None:
            raise StillError(f"a still cannot draw a {type(r.glyph).__name__} glyph")
        glyph = self.props(r.glyph, names)
        glyph["kind"] = class_of(r.glyph, KIND)
        return self.keyed(r, {"visible": r.visible, "level": r.level,
                              "source": self.source(r.data_source), "glyph": glyph})

    def annotation(self, a):  # -> its description, or None for one no still draws
        if isinstance(a, Span):
            return {"kind": "Span", **self.props(a, SPAN)}
        if isinstance(a, Label):
            return {"kind": "Label", **self.props(a, LABEL)}
        if isinstance(a, Arrow):
            size = getattr(a.end, "size", 9) if a.end is not None else 0
            return {"kind": "Arrow", "end_size": size, **self.props(a, ARROW)}
        if isinstance(a, SKIPPED):
            return None
        raise StillError(f"a still cannot draw a {type(a).__name__}")

    def axis(self, a):
        ticker = a.ticker
        overrides = []
        for key, text in dict(a.major_label_overrides or {}).items():
            if isinstance(key, str):  # matched against Python's str() of a tick
                raise NotSwitchable(f"an axis overrides the label of {key!r} by text")
            overrides.append([key, label_text(text)])
        return self.keyed(a, {
            "visible": a.visible, "label": label_text(a.axis_label) if a.axis_label else "",
            "ticks": plain(list(ticker.ticks)) if isinstance(ticker, FixedTicker) else None,
            "overrides": overrides})

    def range(self, r):
        if not isinstance(r, Range1d):
            raise StillError(f"a still needs a figure's ranges set, not a {type(r).__name__}")
        return self.keyed(r, {"start": plain(r.start), "end": plain(r.end)})

    def legends(self, fig):
        out = []
        glyphs = [r for r in fig.renderers if isinstance(r, GlyphRenderer)]
        for layout in (*fig.center, *fig.above, *fig.below, *fig.left, *fig.right):
            if isinstance(layout, Legend):
                items = [self.keyed(item, {
                    "label": spec_of(item.label), "visible": item.visible,
                    "renderers": [glyphs.index(r) for r in item.renderers]})
                    for item in layout.items]
                out.append(self.keyed(layout, {"visible": layout.visible, "items": items}))
        return out

    def figure(self, fig):
        title = fig.title
        annotations = [self.annotation(a) for a in (*fig.center, *fig.renderers)
                       if not isinstance(a, GlyphRenderer)]
        return self.keyed(fig, {
            "visible": fig.visible, "width": fig.width, "height": fig.height,
            "fixed": fig.sizing_mode is None,
            "min_border_left": fig.min_border_left, "min_border_top": fig.min_border_top,
            "x_range": self.range(fig.x_range), "y_range": self.range(fig.y_range),
            "xlog": isinstance(fig.x_scale, LogScale), "ylog": isinstance(fig.y_scale, LogScale),
            "title": None if title is None else {"text": label_text(title.text) if title.text
                                                 else "", "visible": title.visible},
            "diagram": "diagram" in fig.tags,
            **{side: [self.axis(a) for a in getattr(fig, side) if isinstance(a, Axis)]
               for side in ("below", "left", "above", "right")},
            "renderers": [self.renderer(r) for r in fig.renderers
                          if isinstance(r, GlyphRenderer)],
            "annotations": [a for a in annotations if a is not None],
            "legends": self.legends(fig)})


def panes_of(layout):  # -> the Bokeh panes a still draws (chapter_page.still's choice)
    return [pane for pane in layout.select(pn.pane.Bokeh)
            if pane.visible and pane.object is not None]


def describe(panel):  # a StatePanel as built -> {"panes": [[figure]], "sources", "targets"}
    # targets: {state target: model id} for the targets a still reads (sources and
    # properties of the figures' models); the readouts' holes are the page's, not a figure's
    in_figures = {}
    panes = []
    for pane in panes_of(panel.__panel__()):
        figs = plots_of(pane.object)
        panes.append(figs)
        for fig in figs:
            in_figures.update((m.id, m) for m in fig.references())
    named = {name: parse_target(name) for name in panel.targets}
    targets = {name: model.id for name, model in panel.targets.items()
               if named[name].kind in ("source", "prop") and getattr(model, "id", None)
               in in_figures}
    describer = Describer(set(targets.values()))
    described = [[describer.figure(f) for f in figs] for figs in panes]
    for name, model_id in targets.items():
        attr = named[name].attr
        if attr is not None and attr not in describer.described.get(model_id, {}):
            raise NotSwitchable(f"{type(panel).__name__}: a state sets {name}, which no "
                                "still reads (or this description does not hold)")
    for name, model_id in targets.items():  # what every state sets, the table carries
        if named[name].kind == "source" and model_id in describer.sources:
            for column in panel.current_state().get(name, {}):
                describer.sources[model_id].pop(column, None)
    return {"panes": described, "sources": describer.sources,
            "targets": [{**named[name].record(), "id": model_id}  # parsed here, not in JS
                        for name, model_id in targets.items()],
            "readouts": readouts_of(panel)}


def still_readouts(panel):  # -> [(Readout, [its holes: targets])] a state sets, in page order
    from app.kit.readout import Readout

    out = []
    for readout in panel.__panel__().select(Readout):
        names = [n for n, m in panel.targets.items() if m is readout
                 and parse_target(n).kind == "holes"
                 and n != "holes:url_note"]  # the address's note: the page's, not a state's
        if names:
            out.append((readout, names))
    return out


def readouts_of(panel):  # -> [{"targets", "template", "values"}]: a readout's HTML in a still
    # is chapter_page.still_html of its template filled with its values, a state's merged in
    always = {}  # target -> the holes every state of the table gives it
    for part in type(panel).table()["parts"]:
        for value in part["values"]:
            for name, holes in value.items():
                if isinstance(holes, dict):
                    keys = set(holes)
                    always[name] = always[name] & keys if name in always else keys
    out = []
    for r, names in still_readouts(panel):
        given = {hole for name in names for hole in always.get(name, ())}  # the table's own
        out.append({"targets": names, "template": r.template,
                    "values": {k: v for k, v in r.values.items() if k not in given}})
    return out


def of_slot(slot):  # -> the description of a registry panel's figures, built as a static build
    # builds it (a follower with its leader); None for a panel that is not a state panel
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.kit import chrome, registry, states

    rec = registry.by_slot(slot)
    if not issubclass(rec.viewer_class, states.StatePanel):
        return None
    with states.static_build(), set_curdoc(Document()):
        chrome.apply_figure_theme()
        kw = {rec.follows: registry.by_slot(rec.follows).viewer_class()} if rec.follows else {}
        panel = rec.viewer_class(**kw)
        return describe(panel)


# --- the controls a still shows before Bokeh has loaded (static/still_controls.js) ------------

def control_of(control):  # a Control -> the native element that stands in for its widget
    if control.prop == "active" and control.kind == "boolean":
        return {"widget": "toggle"}
    if control.prop == "active" and control.kind == "choice":
        return {"widget": "choice"}
    if control.prop == "value" and control.kind == "choice":  # a Select: a native <select>
        return {"widget": "select"}
    raw = list(control.raw_values())
    if control.prop == "value" and all(isinstance(v, int) for v in raw):
        steps = {b - a for a, b in itertools.pairwise(raw)}
        if len(steps) <= 1:
            return {"widget": "slider", "min": raw[0], "max": raw[-1],
                    "step": steps.pop() if steps else 1}
    raise NotSwitchable(f"no native control stands in for {control.name} ({control.prop}, "
                        "uneven stops)")


def option_labels(widget, raw):  # a Select's label of each stop (its options: label -> value)
    options = getattr(widget, "options", None)
    if not isinstance(options, dict):
        return [str(v) for v in raw]
    label_of = {value: label for label, value in options.items()}
    return [label_of.get(v, str(v)) for v in raw]


def still_data(panel, leader=None):  # -> what static/still_controls.js needs to switch a
    # panel's still: its figures' and readouts' description, its controls (name, label,
    # element, stops, the stop it is at; `leader` where the control is the leader's widget, as
    # a follower's are in a chapter: the leader's island shows it), the address's keys, the
    # widget properties a state sets (a slider's end, a control disabled), its table's name
    # and its leader's
    widgets = {id(w): name for name, w in panel.widgets.items()}
    leaders = {id(w) for w in leader.widgets.values()} if leader is not None else set()
    params = panel.params()
    controls = []
    shipped = type(panel).table()["controls"]  # each control's stops, as the table has them
    for c, in_table in zip(type(panel).controls(), shipped, strict=True):
        widget = panel.widgets.get(c.name)
        label = getattr(widget, "name", None) or panel.param[c.name].label
        element = control_of(c)
        if element["widget"] == "slider" and widget is not None:  # as the widget is now
            element["max"] = widget.end
        if element["widget"] == "select":
            element["options"] = option_labels(widget, list(c.raw_values()))
        controls.append({"name": c.name, "label": label, **element,
                         "values": in_table["values"],
                         "at": list(c.values).index(params[c.name]),
                         "disabled": bool(getattr(widget, "disabled", False)),
                         "leader": widget is not None and id(widget) in leaders})
    return {"description": describe(panel), "controls": controls, "url": panel.url_map,
            # [{name, kind, attr, control}]: each state target that sets a control's widget
            "widget_props": [{**parse_target(name).record(), "control": widgets[id(m)]}
                             for name, m in panel.targets.items()
                             if parse_target(name).kind == "prop" and id(m) in widgets],
            "table": type(panel).table_ref(),
            "follows": type(leader).table_ref() if leader is not None else None}


def controls_html(data, island_id):  # -> the native controls over a still, as HTML: in the
    # page from its first paint (nothing moves when the script wires them), shown with
    # scripts on only (chapter.css); static/still_controls.js finds each by data-ae-control.
    # A leader's control (a follower's in a chapter) is on the leader's island: none here.
    from html import escape

    def attrs(**kw):
        return "".join(f' {k.replace("_", "-")}="{escape(str(v))}"' for k, v in kw.items())

    out = []
    for i, c in enumerate(data["controls"]):
        if c["leader"]:
            continue
        mark, label = f' data-ae-control="{i}"', escape(c["label"])
        disabled = " disabled" if c["disabled"] else ""
        if c["widget"] == "slider":
            at = f"ae-still-{island_id}-{c['name']}"
            given = attrs(type="range", id=at, min=c["min"], max=c["max"], step=c["step"],
                          value=c["min"] + c["at"] * c["step"], aria_label=c["label"])
            out.append(f'<div class="ae-still-slider"{mark}><label for="{at}">{label}: '
                       f'<output for="{at}">{escape(str(c["values"][c["at"]]))}</output></label>'
                       f'<input{given}{disabled}></div>')
        elif c["widget"] == "toggle":
            out.append(f'<button type="button" class="ae-still-toggle"{mark} aria-pressed='
                       f'"{str(c["at"] == 1).lower()}"{disabled}>{label}</button>')
        elif c["widget"] == "select":
            at = f"ae-still-{island_id}-{c['name']}"
            options = "".join(f'<option value="{k}"{" selected" if k == c["at"] else ""}>'
                              f"{escape(text)}</option>" for k, text in enumerate(c["options"]))
            out.append(f'<div class="ae-still-select"{mark}><label for="{at}">{label}</label>'
                       f'<select id="{at}"{disabled}>{options}</select></div>')
        else:  # a radio button group: pressed buttons
            buttons = "".join(f'<button type="button" aria-pressed="{str(k == c["at"]).lower()}"'
                              f'{disabled}>{escape(str(v))}</button>'
                              for k, v in enumerate(c["values"]))
            out.append(f'<div class="ae-still-choice"{mark} role="group" aria-label="{label}">'
                       f'<span class="ae-label" aria-hidden="true">{label}</span>{buttons}</div>')
    if not out:
        return ""
    return ('<div class="ae-still-controls" role="group" aria-label="the panel\'s controls">'
            + "".join(out) + "</div>")
