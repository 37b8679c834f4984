"""What every page shares: the stylesheet, the theme, the page frames.

Colours come from the variables Panel's design sets on every component (light by
default, dark with `?theme=dark`), so one stylesheet serves both themes. Nothing here
loads a font or a script from anywhere but our own server.
"""

import contextvars
import functools
import html
import math
from typing import ClassVar

import panel as pn
from bokeh.models import FixedTicker
from panel.reactive import ReactiveHTML

from app.kit import fmt, model_code, resources, url_state
from app.kit.readout import (  # noqa: F401  (re-exported)
    FOLD_CSS,
    Readout,
    UrlNote,
    hole,
    readout_class,
    scroll_box,
    url_note,
)

# a11y.js finds Bokeh's controls by the class names static/bokeh_fence.js exports: every page,
# live or static, runs the fence's first part (up to its marker: every document with a panel
# carries it) just before it
A11Y_SCRIPT = (resources.inline_script("bokeh_fence.js", stop="// ==== end of the page part")
               + resources.inline_script("a11y.js"))

CSS = resources.stylesheet("panel.css")

# the reading column: prose at a comfortable measure, headings and code in the same voice
PROSE_CSS = resources.stylesheet("prose.css")

# a box that stands where a panel will go
PLACEHOLDER_CSS = resources.stylesheet("placeholder.css")

CONTENT_MAX_WIDTH = 960  # px: the content column; prose sits inside it at 40rem


class A11y(ReactiveHTML):
    """Runs static/a11y.js once per page: names for the controls Bokeh leaves unnamed
    (slider handles, spin buttons) and the page's main landmark, live and static alike."""

    _template = '<div id="box"></div>'
    _scripts: ClassVar[dict] = {"render": A11Y_SCRIPT}


def a11y():  # -> the invisible component that names the page's controls
    return A11y(height=0, margin=0, sizing_mode="stretch_width")


def theme():  # -> "default" | "dark": this session's theme (Panel reads `?theme=` itself)
    return "dark" if pn.config.theme == "dark" else "default"


def apply_figure_theme():
    # Panel themes each Bokeh pane, but in a served page the document's own (light) theme
    # is applied again when the figures join it; give the document the design's theme.
    doc = pn.state.curdoc
    if doc is None:
        return
    if theme() == "dark":
        from panel.theme.native import NativeDarkTheme

        doc.theme = NativeDarkTheme().bokeh_theme


def link_css():  # links with AA contrast on this session's background (Panel's blues are not)
    return f"a {{ color: {'#8cc8ff' if theme() == 'dark' else '#005f99'}; }}"


def placeholder_html(title, text):  # -> a dashed box's HTML (`::: placeholder TITLE | TEXT`)
    return (f'<div class="ae-placeholder" role="note"><strong>{html.escape(title)}</strong> '
            f"{html.escape(text)}</div>")


def placeholder(title, text):  # str, str -> a dashed box saying what will stand here
    body = placeholder_html(title, text)
    return pn.pane.HTML(body, sizing_mode="stretch_width", stylesheets=[CSS, PLACEHOLDER_CSS])


# True while a single-panel page's viewer is being built (its headings start at h1)
_single_page = contextvars.ContextVar("single_page", default=False)


def folded(title, markdown):  # -> Markdown: the text in a closed <details> under its title,
    # which a reader opens when they want it; every word stays in the HTML without scripts
    return (f'<details class="ae-fold"><summary>{html.escape(title)}</summary>\n\n'
            f"{markdown}\n\n</details>")


def heading(text, depth=0, titled=True):
    # a panel's title (depth 0) or one of its subsections (depth 1): on a page of its own
    # the title is the page's h1; in a chapter it sits under the section's h2, as h3, and
    # a panel shown there without its title (titled=False) has its subsections at h3
    level = (1 if _single_page.get() else 3 if titled else 2) + depth
    size, margin = ("1.17em", "0") if depth == 0 else ("1em", "8px 0 0")
    return pn.pane.HTML(f'<h{level} class="ae-heading" style="margin:{margin};font-size:{size}">'
                        f"{html.escape(text)}</h{level}>", margin=(0, 10))


def single_page(viewer, title, static=None):  # one panel, minimal chrome, for an iframe
    # viewer: a Viewer, or its class or a partial of it (built here, so its headings start
    # at h1); static: the static build's page, else a live session's (None: as the viewer
    # says, a state panel knowing which page it was built for)
    if isinstance(viewer, (type, functools.partial)):
        token = _single_page.set(True)
        try:
            viewer = viewer()
        finally:
            _single_page.reset(token)
    repairs = url_state.with_url_state(viewer, static=static)
    apply_figure_theme()
    return pn.Column(a11y(), repairs, viewer, sizing_mode="stretch_width", stylesheets=[CSS],
                     styles={"padding": "8px"}, name=title)


def quiet_axes(fig, tick_labels=False):  # axis titles small and upright, as in the prose
    for axis in fig.axis:
        axis.axis_label_text_font_size = "12px"
        axis.axis_label_text_font_style = "normal"
        if tick_labels:
            axis.major_label_text_font_size = "12px"


def score_axes(fig, y_label):  # a row of scores along x (each bar labelled, so no ticks) and a
    # share from 0 to 1 up y, in quarters
    fig.xaxis.ticker = FixedTicker(ticks=[])
    fig.yaxis.ticker = FixedTicker(ticks=[0, 0.25, 0.5, 0.75, 1])
    fig.xaxis.axis_label = "score"
    fig.yaxis.axis_label = y_label
    quiet_axes(fig, tick_labels=True)
    fig.xgrid.visible = False


def radio(viewer, name, width):  # a parameter's stops as a radio group, the panels' style
    return pn.widgets.RadioButtonGroup.from_param(viewer.param[name], color="primary",
                                                  variant="outline", width=width)


def labelled(widget, label):  # a widget under its visible label (a radio group has none)
    return pn.Column(pn.pane.HTML(label, margin=(0, 10)), widget, margin=0)


def chart_panel(viewer, title, controls, fig, height, readout, stylesheet):
    # a one-chart panel: its title on a page of its own, the address's note, its controls in
    # a row that wraps, the chart and the readout under it
    return pn.Column(*viewer.own(heading(title)), viewer.url_note,
                     pn.FlexBox(*controls, align_items="flex-end", sizing_mode="stretch_width"),
                     pn.pane.Bokeh(fig, height=height, sizing_mode="stretch_width",
                                   min_width=240),
                     readout, sizing_mode="stretch_width", css_classes=["ae-panel"],
                     stylesheets=[stylesheet])


def nearest(stops, value):  # -> index of the stop nearest value (the first of a tie)
    return min(range(len(stops)), key=lambda i: abs(stops[i] - value))


def stop_slider(viewer, name, stops, label, **kw):
    # A slider over stop indices that drives a parameter and follows it back to the nearest
    # stop when the parameter is set another way (URL, number box). It shows the stop itself,
    # formatted in the browser; in its title only on a static page: a live page's number box
    # shows the value, which may lie between stops.
    labels = [fmt.count(v) for v in stops]
    slider = pn.widgets.IntSlider(
        label=label, start=0, end=len(stops) - 1, value=nearest(stops, getattr(viewer, name)),
        format=model_code.tick_formatter("stopLabelTick", labels=labels),
        show_value=viewer.static, **kw)
    syncing = []

    def to_param(event):
        if not syncing:
            setattr(viewer, name, stops[event.new])

    def to_slider(event):
        syncing.append(True)
        try:
            slider.value = nearest(stops, event.new)
        finally:
            syncing.clear()

    slider.param.watch(to_param, "value")
    viewer.param.watch(to_slider, name)
    return slider


def power_of_two_slider(viewer, name, label, max_value, **kw):
    # A slider over log2 exponents that drives an integer parameter, and follows it back to
    # the nearest power of two when the parameter is set another way (URL, number box).
    def exponent():
        return round(math.log2(getattr(viewer, name)))

    slider = pn.widgets.IntSlider(label=label, start=0, end=int(math.log2(max_value)),
                                  value=exponent(), show_value=False, **kw)
    syncing = []

    def to_param(event):
        if not syncing:
            setattr(viewer, name, 2 ** event.new)

    def to_slider(event):
        syncing.append(True)
        try:
            slider.value = exponent()
        finally:
            syncing.clear()

    slider.param.watch(to_param, "value")
    viewer.param.watch(to_slider, name)
    return slider


def live_button(route, label="Open this in the live explorable"):
    # a static page's way to what needs Python (your own config.json, typed numbers, the
    # kernel lab): the live route, carrying the page's current state in the query
    button = pn.widgets.Button(label=label, color="primary", variant="outline",
                               description=f"Open {route} on the live server, in this state")
    button.js_on_click(args={"route": route}, code="AE.page.openLive(route)")
    return button
