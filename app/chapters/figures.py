"""Small figures at the point of use: one panel's charts in one fixed state, with a caption.

A content file's `::: figure SLOT name=value ... | caption` places one (content.FigureMarker).
The figure is the still of that panel's charts (app/chapters/stills.py) drawn in that state,
so it is plain HTML and SVG on the static and the live page alike, and its "Explore this"
link opens the big panel in the same state: the chapter's own URL keys for those settings
(url_state.chapter_plan), and the panel's island. The big panel stays for exploring; the
prose never has to steer it from state to state.

One setting may be left to the reader: `vary=NAME` (at most one) draws the figure once per stop
of that control and puts a native radio group over them. CSS shows the still of the checked
stop (static/chapter.css), so the figure answers its one control without scripts, before any
Bokeh has loaded; the other settings stay fixed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import html
import urllib.parse

from app.chapters import content
from app.kit import registry, url_state

VARY = "vary"  # `vary=NAME`: the one control the reader may turn on the figure
DRAW = "draw"  # `draw=NAME`: a drawing of the panel's state (app/chapters/drawings) in place
# of the panel's charts
BESIDE = "beside"  # `beside=NAME` (with draw=): the drawing at each stop of that control
MOST_BESIDE = 3
CHART = "chart"  # `chart=2` or `chart=2,3`: only those of the panel's charts, counted from 1
RESERVED = (VARY, DRAW, BESIDE, CHART)
MOST_STOPS = 6  # a varied figure ships one still per stop: keep it to a few


class FigureError(ValueError):
    """A figure marker that names no panel of its chapter, or a setting it has no stop for."""


def fixed_params(marker: content.FigureMarker) -> tuple:  # -> the settings, without vary=,
    # draw= and beside=
    return tuple((name, raw) for name, raw in marker.params if name not in RESERVED)


def reserved(marker: content.FigureMarker, name) -> str | None:  # -> draw=/beside='s value
    found = [raw for n, raw in marker.params if n == name]
    if len(found) > 1:
        raise FigureError(f"figure of {marker.slot}: {name}= given twice")
    return found[0] if found else None


def drawing(marker: content.FigureMarker) -> str | None:  # -> the drawing's name, or None
    from app.chapters.drawings import catalogue as drawings

    name = reserved(marker, DRAW)
    if name is not None and name not in drawings.names(marker.slot):
        raise FigureError(f"figure of {marker.slot}: it has no drawing {name!r} (it has: "
                          f"{', '.join(drawings.names(marker.slot)) or 'none'})")
    return name


def beside(marker: content.FigureMarker):  # -> the Control drawn at each stop, or None
    name = reserved(marker, BESIDE)
    if name is None:
        return None
    cls = registry.by_slot(marker.slot).viewer_class
    found = [c for c in cls.controls() if c.name == name]
    if drawing(marker) is None or not found or len(found[0].values) > MOST_BESIDE:
        raise FigureError(f"figure of {marker.slot}: beside= names one of its controls with at "
                          f"most {MOST_BESIDE} stops, in a figure with draw=")
    if any(n == name for n, _ in fixed_params(marker)) or reserved(marker, VARY):
        raise FigureError(f"figure of {marker.slot}: {name} is drawn beside itself and set")
    return found[0]


def chosen_charts(marker: content.FigureMarker) -> tuple | None:  # -> 0-based indexes, or None
    raw = reserved(marker, CHART)
    if raw is None:
        return None
    try:
        picks = tuple(int(p) - 1 for p in raw.split(","))
    except ValueError:
        picks = (-1,)
    if min(picks) < 0 or drawing(marker) is not None:
        raise FigureError(f"figure of {marker.slot}: chart= numbers the panel's charts from 1, "
                          f"as chart=2 or chart=1,3, in a figure without draw=, not {raw!r}")
    return picks


def state(marker: content.FigureMarker) -> dict:  # -> every URL parameter of the panel: the
    # marker's settings over the panel's defaults
    cls = registry.by_slot(marker.slot).viewer_class
    return {**{name: cls.param[name].default for name in cls.url_keys}, **settings(marker)}


def varied(marker: content.FigureMarker):  # -> the Control the reader turns, or None
    names = [raw for name, raw in marker.params if name == VARY]
    if not names:
        return None
    cls = registry.by_slot(marker.slot).viewer_class
    found = [c for c in cls.controls() if c.name == names[0]]
    if len(names) > 1 or not found or len(found[0].values) > MOST_STOPS:
        raise FigureError(f"figure of {marker.slot}: vary= names one of its controls with at "
                          f"most {MOST_STOPS} stops, once")
    if any(name == names[0] for name, _ in fixed_params(marker)):
        raise FigureError(f"figure of {marker.slot}: {names[0]} is both fixed and varied")
    return found[0]


def settings(marker: content.FigureMarker) -> dict:  # -> {parameter: value}, coerced
    cls = registry.by_slot(marker.slot).viewer_class
    varied(marker)  # refuses a bad vary=
    drawing(marker)  # ... a bad draw=
    beside(marker)  # ... a bad beside=
    chosen_charts(marker)  # ... and a bad chart=
    out = {}
    for name, raw in fixed_params(marker):
        if name not in cls.param or name not in cls.url_keys:
            raise FigureError(f"figure of {marker.slot}: it has no setting {name!r}")
        value, repair = url_state.coerce(cls.param[name], name, raw)
        if value is None or repair:
            raise FigureError(f"figure of {marker.slot}: {repair or f'{name}={raw!r} ignored'}")
        out[name] = value
    return out


def query(marker: content.FigureMarker) -> str:  # -> "mask=off&query=2": the chapter's keys
    chapter = registry.by_slot(marker.slot).chapter
    plan = url_state.chapter_plan(registry.chapter_panels(chapter), registry.follows(chapter))
    keys = {param: key for key, param in plan[marker.slot].items()}
    return urllib.parse.urlencode([(keys.get(name, name), raw)
                                   for name, raw in fixed_params(marker)])


@functools.lru_cache(maxsize=64)
def charts(marker: content.FigureMarker) -> str:  # -> the SVG stills of the panel's charts
    # in the marker's state, drawn once per process (the same for every reader)
    import panel as pn

    from app.chapters import stills
    from app.kit import chrome, states

    name = drawing(marker)
    if name is not None:
        from app.chapters.drawings import catalogue as drawings

        cls = registry.by_slot(marker.slot).viewer_class
        control, full = beside(marker), state(marker)
        stops = ()
        if control is not None:
            label = cls.param[control.name].label or control.name
            stops = tuple((f"{label}: {url_state.encode(v)}", {**full, control.name: v})
                          for v in control.values)
        return drawings.draw(marker.slot, name, full, stops)
    cls = registry.by_slot(marker.slot).viewer_class
    with states.static_build(), pn.config.set(theme="default"):
        chrome.apply_figure_theme()
        viewer = cls(in_chapter=True, **settings(marker))  # a varied marker: its default
        layout = viewer.__panel__()
        svgs = [stills.figure_svg(fig) for pane in layout.select(pn.pane.Bokeh)
                if pane.visible and pane.object is not None
                for fig in stills.plots_of(pane.object) if fig.visible]
    picks = chosen_charts(marker)
    if picks is not None:
        if max(picks) >= len(svgs):
            raise FigureError(f"figure of {marker.slot}: it has {len(svgs)} charts, not "
                              f"{max(picks) + 1}")
        svgs = [svgs[i] for i in picks]
    svg = "".join(svgs)
    return svg.replace(", as the panel opens", ", in the state the caption gives")


def at_stop(marker: content.FigureMarker, control, value) -> content.FigureMarker:
    # the varied figure's marker fixed at one stop of its control
    return dataclasses.replace(marker, params=fixed_params(marker) + (
        (control.name, url_state.encode(value)),))


def control_html(marker: content.FigureMarker, control) -> str:
    # -> the radio group and, after it, one still per stop (the first checked: the default)
    cls = registry.by_slot(marker.slot).viewer_class
    # a name stable across builds and processes (hash() of a str is salted per process)
    digest = hashlib.sha1(repr(marker).encode()).hexdigest()[:8]
    group = f"ae-fig-{marker.slot}-{control.name}-{digest}"
    default = cls.param[control.name].default
    picks, stills = [], []
    for i, value in enumerate(control.values):
        shown = html.escape(url_state.encode(value))
        checked = " checked" if value == default else ""
        picks.append(f'<input type="radio" class="ae-figure-pick" name="{group}" '
                     f'id="{group}-{i}" value="{shown}"{checked}>'
                     f'<label for="{group}-{i}">{shown}</label>')
        stills.append(f'<div class="ae-figure-state">{charts(at_stop(marker, control, value))}'
                      "</div>")
    label = html.escape(cls.param[control.name].label or control.name)
    return (f'<fieldset class="ae-figure-control"><legend>{label}</legend>'
            f'{"".join(picks)}<div class="ae-figure-states">{"".join(stills)}</div></fieldset>')


def figure_html(marker: content.FigureMarker, prose) -> str:
    # -> <figure>: the charts (or, with vary=, its control over one still per stop), the
    # caption (Markdown, through the chapter's apparatus: prose), and the link that opens the
    # panel in that state
    href = f"?{query(marker)}#panel-{marker.slot}"
    caption = prose(marker.caption).strip()
    if caption.startswith("<p>") and caption.endswith("</p>"):
        caption = caption[3:-4]
    control = varied(marker)
    body = control_html(marker, control) if control else charts(marker)
    return (f'<figure class="ae-small-figure" data-slot="{html.escape(marker.slot)}">'
            f"{body}<figcaption>{caption} "
            f'<a class="ae-explore" href="{html.escape(href)}">Explore this →</a>'
            "</figcaption></figure>")
