"""Small figures at the point of use: one panel's charts in one fixed state, with a caption.

A content file's `::: figure SLOT name=value ... | caption` places one (content.FigureMarker).
The figure is the still of that panel's charts (app/chapters/stills.py) drawn in that state,
so it is plain HTML and SVG on the static and the live page alike, and its "Explore this"
link opens the big panel in the same state: the chapter's own URL keys for those settings
(url_state.chapter_plan), and the panel's island. The big panel stays for exploring; the
prose never has to steer it from state to state.
"""

from __future__ import annotations

import functools
import html
import urllib.parse

from app.chapters import content
from app.kit import registry, url_state


class FigureError(ValueError):
    """A figure marker that names no panel of its chapter, or a setting it has no stop for."""


def settings(marker: content.FigureMarker) -> dict:  # -> {parameter: value}, coerced
    cls = registry.by_slot(marker.slot).viewer_class
    out = {}
    for name, raw in marker.params:
        if name not in cls.param or name not in cls.url_keys:
            raise FigureError(f"figure of {marker.slot}: it has no setting {name!r}")
        value, note = url_state.coerce(cls.param[name], name, raw)
        if value is None or note:
            raise FigureError(f"figure of {marker.slot}: {note or f'{name}={raw!r} ignored'}")
        out[name] = value
    return out


def query(marker: content.FigureMarker) -> str:  # -> "mask=off&query=2": the chapter's keys
    chapter = registry.by_slot(marker.slot).chapter
    plan = url_state.chapter_plan(registry.chapter_panels(chapter), registry.follows(chapter))
    keys = {param: key for key, param in plan[marker.slot].items()}
    return urllib.parse.urlencode([(keys.get(name, name), raw) for name, raw in marker.params])


@functools.lru_cache(maxsize=64)
def charts(marker: content.FigureMarker) -> str:  # -> the SVG stills of the panel's charts
    # in the marker's state, drawn once per process (the same for every reader)
    import panel as pn

    from app.chapters import stills
    from app.kit import chrome, states

    cls = registry.by_slot(marker.slot).viewer_class
    with states.static_build(), pn.config.set(theme="default"):
        chrome.apply_figure_theme()
        viewer = cls(in_article=True, **settings(marker))
        layout = viewer.__panel__()
        svg = "".join(stills.stills_of(pane.object) for pane in layout.select(pn.pane.Bokeh)
                      if pane.visible and pane.object is not None)
    return svg.replace(", as the panel opens", ", in the state the caption gives")


def figure_html(marker: content.FigureMarker, prose) -> str:
    # -> <figure>: the charts, the caption (Markdown, through the chapter's apparatus: prose),
    # and the link that opens the panel in that state
    href = f"?{query(marker)}#panel-{marker.slot}"
    caption = prose(marker.caption).strip()
    if caption.startswith("<p>") and caption.endswith("</p>"):
        caption = caption[3:-4]
    return (f'<figure class="ae-small-figure" data-slot="{html.escape(marker.slot)}">'
            f"{charts(marker)}<figcaption>{caption} "
            f'<a class="ae-explore" href="{html.escape(href)}">Explore this →</a>'
            "</figcaption></figure>")
