"""A still picture of each chart: a panel's Bokeh figures, drawn at build time as small SVGs.

A static page shows each panel's still until its island mounts, and for good without
JavaScript (chapter_page.py): the panel's readouts and tables as built, and here each of
its charts, drawn from the data its figure holds in that default state (its column data
sources, ranges, axes, spans, labels and legend). No browser draws it: this is Python, at
build time, writing SVG.

The pictures are inline and small: a 320-unit-wide view box (a phone's still box is about
that wide, so 12-unit type stays 12 px there), coordinates rounded to whole units, a line's
points thinned to what a few hundred pixels show, and the ink, muted and paper colours of
either theme as classes of chapter.css (`.ae-chart`), so one picture reads in both themes.
"""

from __future__ import annotations

import html
import itertools
import math
import re

from bokeh import models as bm
from bokeh.util.dataclasses import Unspecified

from app.kit import transforms

W = 320  # the view box's width, in user units (px at a phone's width)
CHAR = 7.0  # about the width of one 12 px character (a wide system font)
LINE = 15  # a line of 12 px type
# colours that are the theme's ink (app/kit/theme.py: LIGHT_INK, DARK_INK) draw with
# classes of chapter.css instead, so a picture follows the page's theme
INK = {"#000000", "#222222", "#e0e0e0", "#f2f2f2", "black"}
MUTED = {"#555555", "#6b6b6b", "#888888", "#999999", "#b8b8b8", "#a8a8a8", "#b5b5b5"}
PAPER = {"#ffffff", "#2b3035", "white"}
DASHES = {"dashed": "6", "dotted": "2 4", "dotdash": "2 4 6 4", "dashdot": "6 4 2 4"}


class Exact(str):
    """A colour a colour mapper gave (a cell's shade, a label's ink on it): drawn as it is,
    never swapped for the theme's ink."""


class StillError(Exception):
    """A figure uses something the still cannot draw (a new glyph, a new browser transform)."""


def num(v):  # -> a short number for SVG text: whole units, or one decimal below 10
    v = round(v, 1) if abs(v) < 10 else round(v)
    text = f"{v:.1f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)
    return "0" if text == "-0" else text


def esc(text):
    return html.escape(str(text), quote=True)


# --- values: a glyph's property, for every row of its source --------------------------------

def transformed(values, transform, data):
    if isinstance(transform, bm.CustomJSTransform):
        twin = transforms.python_twin(transform)  # declared beside the figure (kit/transforms.py)
        if twin is not None:
            return twin(values, data)
    if isinstance(transform, bm.LinearColorMapper):
        palette, lo, hi = list(transform.palette), transform.low, transform.high
        out = []
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.append(transform.nan_color)
            elif v < lo:
                out.append(transform.low_color or palette[0])
            elif v > hi:
                out.append(transform.high_color or palette[-1])
            else:
                out.append(palette[min(int((v - lo) / (hi - lo) * len(palette)),
                                       len(palette) - 1)])
        return [Exact(c) for c in out]
    raise StillError(f"a still cannot apply a {type(transform).__name__}: "
                     f"{getattr(transform, 'v_func', '')!r}")


def column(glyph, prop, data, n):  # -> [value] * n rows: a field of the source or one value
    spec = getattr(glyph, prop)
    field, transform = None, None
    if hasattr(spec, "field"):
        field, transform = spec.field, getattr(spec, "transform", None)
    elif isinstance(spec, dict) and "field" in spec:
        field, transform = spec["field"], spec.get("transform")
    elif isinstance(spec, str) and spec in data and not prop.endswith(("_units", "_align")):
        field = spec
    elif hasattr(spec, "value"):
        spec = spec.value
    if field is None:
        return [spec] * n
    values = list(data[field])
    if transform is not None and transform is not Unspecified:
        values = transformed(values, transform, data)
    return values


def rows(renderer):  # -> number of rows of a renderer's source (one, with no columns: a
    # glyph of values alone, as Bokeh draws it)
    data = renderer.data_source.data
    return max((len(v) for v in data.values()), default=1)


def bad(v):
    return v is None or (isinstance(v, float) and not math.isfinite(v))


# --- paint: colours as attributes, or the theme's classes --------------------------------------

def colour_of(c):  # a Bokeh colour -> "#rrggbb" / a name, or None
    if c is None or isinstance(c, Exact):
        return c
    if isinstance(c, tuple):
        return "#" + "".join(f"{int(x):02x}" for x in c[:3])
    return str(c).lower()


def stroke(c, width=1, dash=None, alpha=1.0):  # -> (attributes, classes) of a line
    c = colour_of(c)
    if c is None or alpha == 0:
        return "", ["n"]
    attrs, cls = "", []
    if c in INK and not isinstance(c, Exact):
        cls.append("k")
    elif c in MUTED:
        cls.append("m")
    else:
        attrs += f' stroke="{c}"'
    if width != 1:
        attrs += f' stroke-width="{num(width)}"'
    if dash:
        dash = DASHES.get(dash, dash) if isinstance(dash, str) else " ".join(map(str, dash))
        if dash and dash != "solid":
            attrs += f' stroke-dasharray="{dash}"'
    if alpha != 1:
        attrs += f' stroke-opacity="{num(alpha * 100) }%"'
    return attrs, cls


def fill(c, alpha=1.0):  # -> (attributes, classes) of a fill; ink is the default fill
    c = colour_of(c)
    if c is None or alpha == 0:
        return ' fill="none"', []
    attrs, cls = "", []
    if isinstance(c, Exact):
        attrs = f' fill="{c}"'
    elif c in INK:
        pass
    elif c in MUTED:
        cls.append("q")
    elif c in PAPER:
        cls.append("p")
    else:
        attrs = f' fill="{c}"'
    if alpha != 1:
        attrs += f' fill-opacity="{num(alpha * 100)}%"'
    return attrs, cls


def tag(name, attrs, classes=(), text=None):
    cls = " ".join(dict.fromkeys(c for c in classes if c))
    cls = f' class="{cls}"' if cls else ""
    if text is None:
        return f"<{name}{attrs}{cls}/>"
    return f"<{name}{attrs}{cls}>{text}</{name}>"


def thin(points, tolerance=0.6):  # [(x, y)] -> the same polyline, fewer points (Douglas-Peucker)
    if len(points) < 3:
        return points
    (x0, y0), (x1, y1) = points[0], points[-1]
    dx, dy = x1 - x0, y1 - y0
    norm = math.hypot(dx, dy) or 1.0
    far, at = -1.0, 0
    for i, (x, y) in enumerate(points[1:-1], 1):
        d = abs(dy * (x - x0) - dx * (y - y0)) / norm
        if d > far:
            far, at = d, i
    if far <= tolerance:
        return [points[0], points[-1]]
    return thin(points[:at + 1], tolerance)[:-1] + thin(points[at:], tolerance)


def path_of(points):  # [(x, y)] -> "M1 2 3 4": later points are implicit line-tos
    pts = [(num(x), num(y)) for x, y in points]
    out = [pts[0]]
    for p in pts[1:]:
        if p != out[-1]:
            out.append(p)
    return "M" + " ".join(f"{x} {y}" for x, y in out)


# --- the frame: data to view-box units ---------------------------------------------------------

class Frame:
    def __init__(self, fig, left, top, width, height):
        self.left, self.top, self.width, self.height = left, top, width, height
        self.xlog = isinstance(fig.x_scale, bm.LogScale)
        self.ylog = isinstance(fig.y_scale, bm.LogScale)
        self.x0, self.x1 = fig.x_range.start, fig.x_range.end
        self.y0, self.y1 = fig.y_range.start, fig.y_range.end

    @staticmethod
    def _t(v, a, b, log):
        if log:
            if v is None or v <= 0:
                return math.nan
            v, a, b = math.log10(v), math.log10(a), math.log10(b)
        return (v - a) / (b - a)

    def x(self, v):
        return self.left + self._t(v, self.x0, self.x1, self.xlog) * self.width

    def y(self, v):
        return self.top + (1 - self._t(v, self.y0, self.y1, self.ylog)) * self.height

    def dx(self, v, at):  # a width in data units at x = at -> view-box units
        return abs(self.x(at + v / 2) - self.x(at - v / 2))

    def dy(self, v, at):
        return abs(self.y(at + v / 2) - self.y(at - v / 2))


# --- axes --------------------------------------------------------------------------------------

def tick_label(axis, v):
    overrides = dict(axis.major_label_overrides or {})
    for key in (v, int(v) if float(v).is_integer() else None, str(v)):
        if key in overrides:
            return str(overrides[key])
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:g}"


def ticks(axis, lo, hi, log):  # -> the axis's major tick values inside [lo, hi]
    ticker = axis.ticker
    lo, hi = min(lo, hi), max(lo, hi)
    if isinstance(ticker, bm.FixedTicker):
        values = list(ticker.ticks)
    elif log:
        values = [10.0 ** e for e in range(math.floor(math.log10(lo)),
                                           math.ceil(math.log10(hi)) + 1)]
    else:
        raw = (hi - lo) / 4
        mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
        step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
        first = math.ceil(lo / step - 1e-9)
        values = [round(i * step, 10) for i in range(first, first + 12) if i * step <= hi + 1e-9]
    return [v for v in values if lo - 1e-9 <= v <= hi + 1e-9]


def spaced(xticks, frame):  # -> the x ticks, every other one dropped while labels collide
    step = 1
    while step < len(xticks):
        shown = xticks[::step]
        pairs = list(itertools.pairwise(shown))
        gaps = [frame.x(b) - frame.x(a) for (a, _), (b, _) in pairs]
        need = [(len(s) + len(t)) * CHAR / 2 + 6 for (_, s), (_, t) in pairs]
        if all(g >= n for g, n in zip(gaps, need)):
            break
        step += 1
    return xticks[::step]


def wrap(text, width):  # -> the text in lines of at most `width` units
    lines = [""]
    for word in text.split():
        if lines[-1] and (len(lines[-1]) + 1 + len(word)) * CHAR > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}".strip()
    return "\n".join(lines)


def label_text(item):  # a LegendItem's or axis's label -> text
    label = item.label if hasattr(item, "label") else item
    if isinstance(label, dict):
        label = label.get("value", "")
    if hasattr(label, "value"):
        label = label.value
    return "" if label is None else str(label)


def visible_axes(fig, side):
    return [a for a in getattr(fig, side) if isinstance(a, bm.Axis) and a.visible]


# --- glyphs ------------------------------------------------------------------------------------

def text_el(x, y, text, align="left", baseline="bottom", angle=0.0, colour=None, halo=False,
            bold=False):
    lines = str(text).split("\n")
    shift = {"top": 10, "middle": 4, "bottom": -3, "alphabetic": 0}.get(baseline, 0)
    shift -= {"top": 0, "middle": (len(lines) - 1) * LINE / 2}.get(baseline,
                                                                   (len(lines) - 1) * LINE)
    if angle:  # turned about its anchor: the baseline's shift turns with it
        attrs = f' x="{num(x)}" y="{num(y + shift)}"'
        attrs += f' transform="rotate({num(-math.degrees(angle))} {num(x)} {num(y)})"'
    else:
        attrs = f' x="{num(x)}" y="{num(y + shift)}"'
    a, cls = fill(colour) if colour is not None else ("", [])
    cls = [*cls, {"center": "c", "right": "e"}.get(align, ""), "h" if halo else "",
           "b" if bold else ""]
    if len(lines) == 1:
        body = esc(lines[0])
    else:
        body = esc(lines[0]) + "".join(f'<tspan x="{num(x)}" dy="{LINE}">{esc(line)}</tspan>'
                                       for line in lines[1:])
    return tag("text", attrs + a, cls, body)


def marker(kind, x, y, size, line, fill_colour, line_width=1):
    r = size / 2
    s_attrs, s_cls = stroke(line, line_width)
    if kind in ("dash", "x", "cross"):
        d = {"dash": f"M{num(x - r)} {num(y)}h{num(size)}",
             "x": f"M{num(x - r)} {num(y - r)}l{num(size)} {num(size)}"
                  f"m0 -{num(size)}l-{num(size)} {num(size)}",
             "cross": f"M{num(x - r)} {num(y)}h{num(size)}M{num(x)} {num(y - r)}v{num(size)}"}
        return tag("path", f' d="{d[kind]}" fill="none"' + s_attrs, s_cls)
    f_attrs, f_cls = fill(fill_colour)
    if kind == "circle_cross":  # a sum: the circle, then its cross
        d = f"M{num(x - r)} {num(y)}h{num(size)}M{num(x)} {num(y - r)}v{num(size)}"
        return (tag("circle", f' cx="{num(x)}" cy="{num(y)}" r="{num(r)}"' + f_attrs + s_attrs,
                    f_cls + s_cls) + tag("path", f' d="{d}" fill="none"' + s_attrs, s_cls))
    if kind == "square":
        return tag("rect", f' x="{num(x - r)}" y="{num(y - r)}" width="{num(size)}" '
                           f'height="{num(size)}"' + f_attrs + s_attrs, f_cls + s_cls)
    return tag("circle", f' cx="{num(x)}" cy="{num(y)}" r="{num(r)}"' + f_attrs + s_attrs,
               f_cls + s_cls)


def glyph_svg(renderer, frame):  # -> [SVG element] of one glyph renderer, and its kind
    g, data, n = renderer.glyph, renderer.data_source.data, rows(renderer)
    kind = type(g)  # dispatch on the exact class: a subclass may draw otherwise

    def col(prop):
        return column(g, prop, data, n)

    out = []
    if kind is bm.Line:
        xs, ys = col("x"), col("y")
        runs, run = [], []
        for x, y in zip(xs, ys):
            px, py = (math.nan, math.nan) if bad(x) or bad(y) else (frame.x(x), frame.y(y))
            if math.isnan(px) or math.isnan(py):
                runs.append(run)
                run = []
            else:
                run.append((px, py))
        runs.append(run)
        d = "".join(path_of(thin(r)) for r in runs if len(r) > 1)
        if d:
            attrs, cls = stroke(g.line_color, g.line_width, g.line_dash, g.line_alpha)
            out.append(tag("path", f' d="{d}" fill="none"' + attrs, cls))
        return out, "line"
    if kind is bm.Scatter:
        for x, y, m, size, lc, fc in zip(col("x"), col("y"), col("marker"), col("size"),
                                         col("line_color"), col("fill_color")):
            if not (bad(x) or bad(y)):
                out.append(marker(m, frame.x(x), frame.y(y), size, lc, fc,
                                  col("line_width")[0]))
        return out, "point"
    if kind in (bm.VBar, bm.Rect):
        if kind is bm.VBar:
            xs, tops, bottoms, widths = col("x"), col("top"), col("bottom"), col("width")
            boxes = [(x, w, b, t) for x, w, b, t in zip(xs, widths, bottoms, tops)]
            boxes = [(frame.x(x) - frame.dx(w, x) / 2, frame.y(t), frame.dx(w, x),
                      frame.y(b) - frame.y(t)) if not any(map(bad, (x, w, b, t))) else None
                     for x, w, b, t in boxes]
        else:
            xs, ys, widths, heights = col("x"), col("y"), col("width"), col("height")
            boxes = []
            for x, y, w, h in zip(xs, ys, widths, heights):
                if any(map(bad, (x, y, w, h))) or not w or not h:
                    boxes.append(None)
                    continue
                pw, ph = frame.dx(w, x), frame.dy(h, y)
                boxes.append((frame.x(x) - pw / 2, frame.y(y) - ph / 2, pw, ph))
        fills, alphas = col("fill_color"), col("fill_alpha")
        lines, widths_ = col("line_color"), col("line_width")
        for box, fc, fa, lc, lw in zip(boxes, fills, alphas, lines, widths_):
            if box is None:
                continue
            x, y, w, h = box
            if h < 0:
                y, h = y + h, -h
            f_attrs, f_cls = fill(fc, fa)
            s_attrs, s_cls = stroke(lc, lw) if lc is not None else ("", [])
            out.append(tag("rect", f' x="{num(x)}" y="{num(y)}" width="{num(w)}" '
                                   f'height="{num(h)}"' + f_attrs + s_attrs, f_cls + s_cls))
        return out, "bar" if kind is bm.VBar else "cell"
    if kind is bm.Segment:
        by_paint = {}
        for x0, y0, x1, y1, lc in zip(col("x0"), col("y0"), col("x1"), col("y1"),
                                      col("line_color")):
            if not any(map(bad, (x0, y0, x1, y1))):
                by_paint.setdefault(lc, []).append(
                    path_of([(frame.x(x0), frame.y(y0)), (frame.x(x1), frame.y(y1))]))
        for lc, parts in by_paint.items():
            attrs, cls = stroke(lc, g.line_width, g.line_dash, g.line_alpha)
            out.append(tag("path", f' d="{"".join(parts)}"' + attrs, cls))
        return out, "line"
    if kind is bm.Text:
        for x, y, text, colour, xo, yo, angle in zip(col("x"), col("y"), col("text"),
                                                     col("text_color"), col("x_offset"),
                                                     col("y_offset"), col("angle")):
            if bad(x) or bad(y) or text in (None, ""):
                continue
            out.append(text_el(frame.x(x) + (xo or 0), frame.y(y) + (yo or 0), text,
                               g.text_align, g.text_baseline, angle or 0.0, colour,
                               bold=g.text_font_style == "bold"))
        return out, "text"
    if kind in (bm.AnnularWedge, bm.Wedge, bm.Arc):
        deg = (getattr(g, "start_angle_units", "rad") == "deg")
        radius = "outer_radius" if kind is bm.AnnularWedge else "radius"
        for x, y, r, a0, a1, fc, fa, lc in zip(
                col("x"), col("y"), col(radius), col("start_angle"), col("end_angle"),
                col("fill_color") if kind is not bm.Arc else [None] * max(n, 1),
                col("fill_alpha") if kind is not bm.Arc else [0] * max(n, 1), col("line_color")):
            if deg:
                a0, a1 = math.radians(a0), math.radians(a1)
            cx, cy = frame.x(x), frame.y(y)
            rx, ry = frame.dx(2 * r, x) / 2, frame.dy(2 * r, y) / 2
            p0 = (cx + rx * math.cos(a0), cy - ry * math.sin(a0))
            p1 = (cx + rx * math.cos(a1), cy - ry * math.sin(a1))
            large = int((a1 - a0) % (2 * math.pi) > math.pi)
            arc = f"A{num(rx)} {num(ry)} 0 {large} 0 {num(p1[0])} {num(p1[1])}"
            if kind is bm.Arc:
                if abs(a1 - a0) < 1e-6:
                    continue
                attrs, cls = stroke(lc, g.line_width)
                out.append(tag("path", f' d="M{num(p0[0])} {num(p0[1])}{arc}" fill="none"'
                                       + attrs, cls))
            else:
                f_attrs, f_cls = fill(fc, fa)
                s_attrs, s_cls = stroke(lc, g.line_width)
                d = f"M{num(cx)} {num(cy)}L{num(p0[0])} {num(p0[1])}{arc}Z"
                out.append(tag("path", f' d="{d}"' + f_attrs + s_attrs, f_cls + s_cls))
        return out, "gauge"
    raise StillError(f"a still cannot draw a {kind.__name__} glyph")


def annotation_svg(a, frame):  # -> [SVG element] of a Span, Label or Arrow
    kind = type(a)
    if not getattr(a, "visible", True):
        return []
    if kind is bm.Span:
        if bad(a.location):
            return []
        attrs, cls = stroke(a.line_color, a.line_width, a.line_dash, a.line_alpha)
        if a.dimension == "width":
            y = frame.y(a.location)
            d = f"M{num(frame.left)} {num(y)}h{num(frame.width)}"
        else:
            x = frame.x(a.location)
            d = f"M{num(x)} {num(frame.top)}v{num(frame.height)}"
        return [tag("path", f' d="{d}"' + attrs, cls)]
    if kind is bm.Label:
        return [text_el(frame.x(a.x) + (a.x_offset or 0), frame.y(a.y) + (a.y_offset or 0),
                        a.text, a.text_align, a.text_baseline, a.angle or 0.0, a.text_color,
                        halo=a.background_fill_color is not None)]
    if kind is bm.Arrow:
        x0, y0, x1, y1 = (frame.x(a.x_start), frame.y(a.y_start), frame.x(a.x_end),
                          frame.y(a.y_end))
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        size = getattr(a.end, "size", 9) if a.end is not None else 0
        attrs, cls = stroke(a.line_color, a.line_width)
        d = path_of([(x0, y0), (x1, y1)])
        if size:
            back = (x1 - ux * size, y1 - uy * size)
            d += (f"M{num(back[0] - uy * size / 2)} {num(back[1] + ux * size / 2)}"
                  f"L{num(x1)} {num(y1)}L{num(back[0] + uy * size / 2)} "
                  f"{num(back[1] - ux * size / 2)}")
        return [tag("path", f' d="{d}" fill="none"' + attrs, cls)]
    if kind in (bm.Legend, bm.Grid, bm.BoxAnnotation, bm.Title):
        return []
    raise StillError(f"a still cannot draw a {kind.__name__}")


def swatch(renderer, x, y):  # a legend item's sample of its glyph, 14 units wide
    g = renderer.glyph
    kind = type(g)  # dispatch on the exact class: a subclass may draw otherwise
    data, n = renderer.data_source.data, max(rows(renderer), 1)
    if kind in (bm.Line, bm.Segment):
        attrs, cls = stroke(g.line_color, g.line_width, g.line_dash, g.line_alpha)
        return tag("path", f' d="M{num(x)} {num(y)}h16"' + attrs, cls)
    if kind is bm.Scatter:
        return marker(column(g, "marker", data, n)[0], x + 8, y, 9,
                      column(g, "line_color", data, n)[0], column(g, "fill_color", data, n)[0],
                      column(g, "line_width", data, n)[0])
    f_attrs, f_cls = fill(column(g, "fill_color", data, n)[0])
    return tag("rect", f' x="{num(x + 2)}" y="{num(y - 6)}" width="12" height="12"' + f_attrs,
               f_cls)


# --- a figure ------------------------------------------------------------------------------------

def axis_paths(line, marks):  # an axis's line and tick marks ("M..." paths) -> [SVG element];
    # no ticks, no empty path
    return [tag("path", f' d="{d}"', ["k"]) for d in (line, marks) if d]


def axis_title(axis):
    return label_text(axis.axis_label) if axis.axis_label else ""


def describe(fig, kinds, legend):  # -> the picture's accessible name
    xa = [axis_title(a) for a in visible_axes(fig, "below") + visible_axes(fig, "above")]
    ya = [axis_title(a) for a in visible_axes(fig, "left") + visible_axes(fig, "right")]
    what = ("Diagram" if "diagram" in fig.tags else  # boxes and labels, not data: it says
            "Heat map" if "cell" in kinds and "bar" not in kinds else
            "Gauge" if "gauge" in kinds else
            "Bar chart" if "bar" in kinds else "Line chart" if "line" in kinds else "Chart")
    title = label_text(fig.title.text) if fig.title is not None and fig.title.text else ""
    text = f"{what}: {title}" if title else what
    if any(ya) and any(xa):
        text += f"{',' if title else ''} {ya[0]} against {xa[0]}"
    elif any(xa):
        text += f"{',' if title else ''} by {xa[0]}"
    if legend:
        text += " (" + "; ".join(legend) + ")"
    return text + ", as the panel opens"


def legend_items(fig):
    out = []
    for layout in (*fig.center, *fig.above, *fig.below, *fig.left, *fig.right):
        if isinstance(layout, bm.Legend) and layout.visible:
            for item in layout.items:
                live = [r for r in item.renderers if r.visible]
                if item.visible and live:
                    out.append((label_text(item), live[0]))
    return out


def figure_svg(fig, width=W):  # a Bokeh figure, as it stands -> an inline SVG of it
    for r in (fig.x_range, fig.y_range):  # Bokeh works out a DataRange1d in the browser
        if not all(isinstance(v, (int, float)) and math.isfinite(v)
                   for v in (getattr(r, "start", None), getattr(r, "end", None))):
            raise StillError(f"a still needs a figure's ranges set, not a {type(r).__name__}")
    fixed = fig.sizing_mode is None and fig.width and fig.width <= width
    width = fig.width if fixed else width
    frame_h = fig.height - 20 if fixed else max(70, min(200, round(fig.height * 0.55)))
    below, left = visible_axes(fig, "below"), visible_axes(fig, "left")
    xlog = isinstance(fig.x_scale, bm.LogScale)
    ylog = isinstance(fig.y_scale, bm.LogScale)
    yticks = [(v, tick_label(left[0], v)) for v in ticks(left[0], fig.y_range.start,
                                                         fig.y_range.end, ylog)] if left else []
    xticks = [(v, tick_label(below[0], v)) for v in ticks(below[0], fig.x_range.start,
                                                          fig.x_range.end, xlog)] if below else []
    title = (label_text(fig.title.text) if fig.title is not None and fig.title.text
             and fig.title.visible else "")  # a hidden title still names the picture
    title = wrap(title, width - 8)
    legend = legend_items(fig)
    pad_l = 0
    if left:  # the tick labels; the axis's title reads across, above the frame
        pad_l = max((len(t) for _, t in yticks), default=0) * CHAR + (8 if yticks else 0)
    pad_l = max(pad_l, 4 if fixed else (fig.min_border_left or 0), 6)
    pad_t = max(fig.min_border_top or 0, 8) if not fixed else 4
    y_title = axis_title(left[0]) if left else ""
    pad_t += (LINE * (title.count("\n") + 1) + 6 if title else 0) + (LINE + 4 if y_title else 0)
    pad_r = max(12, (len(xticks[-1][1]) * CHAR / 2) if xticks else 0)
    if fixed:
        pad_r = 4
    pad_b = 6
    if below:
        pad_b = (LINE + 6 if xticks else 4) + (LINE + 2 if axis_title(below[0]) else 0) + 4
    frame = Frame(fig, pad_l, pad_t, width - pad_l - pad_r, frame_h)
    xticks = spaced(xticks, frame)
    clipped, over, kinds = [], [], []
    for r in fig.renderers:
        if not isinstance(r, bm.GlyphRenderer) or not r.visible:
            continue
        parts, kind = glyph_svg(r, frame)
        kinds.append(kind)
        (clipped if r.level in ("glyph", "underlay", "image") else over).extend(parts)
    for a in (*fig.center, *getattr(fig, "renderers", [])):
        if not isinstance(a, bm.GlyphRenderer):
            over.extend(annotation_svg(a, frame))
    axes = []
    bottom = frame.top + frame.height
    if below:
        marks = "".join(f"M{num(frame.x(v))} {num(bottom)}v4" for v, _ in xticks)
        axes += axis_paths(f"M{num(frame.left)} {num(bottom)}h{num(frame.width)}", marks)
        axes += [text_el(frame.x(v), bottom + 6, t, "center", "top") for v, t in xticks]
        x_title = axis_title(below[0])
        if x_title:  # centred under the frame, inside the picture
            half = len(x_title) * CHAR / 2
            at = min(max(frame.left + frame.width / 2, half + 2), width - half - 2)
            axes.append(text_el(at, bottom + (LINE + 8 if xticks else 6), x_title, "center",
                                "top"))
    if left:
        marks = "".join(f"M{num(frame.left - 4)} {num(frame.y(v))}h4" for v, _ in yticks)
        axes += axis_paths(f"M{num(frame.left)} {num(frame.top)}v{num(frame.height)}", marks)
        axes += [text_el(frame.left - 6, frame.y(v), t, "right", "middle") for v, t in yticks]
        if y_title:
            axes.append(text_el(4, frame.top - 8, "↑ " + y_title, "left", "bottom"))
    height = bottom + pad_b
    if title:
        axes.append(text_el(4, 4, title, "left", "top", bold=True))
    keys, x, y = [], 4.0, height + 8
    for label, renderer in legend:
        need = 22 + len(label) * CHAR
        if x > 4 and x + need > width:
            x, y = 4.0, y + LINE + 2
        keys.append(swatch(renderer, x, y))
        keys.append(text_el(x + 20, y, label, "left", "middle"))
        x += need + 12
    if legend:
        height = y + LINE - 4
    name = describe(fig, kinds, [label for label, _ in legend])
    inner = "".join(clipped)
    if inner:  # the data, clipped to the frame as Bokeh clips it: a nested viewport
        box = f"{num(frame.left)} {num(frame.top)} {num(frame.width)} {num(frame.height)}"
        inner = (f'<svg x="{num(frame.left)}" y="{num(frame.top)}" width="{num(frame.width)}" '
                 f'height="{num(frame.height)}" viewBox="{box}">{inner}</svg>')
    body = compact("".join(axes) + inner + "".join(over) + "".join(keys))
    return (f'<svg class="ae-chart" viewBox="0 0 {num(width)} {num(height)}" role="img" '
            f'aria-label="{esc(name)}">{body}</svg>')


RECT = re.compile(r'<rect x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"([^>]*)/>')
TEXT = re.compile(r'<text( x="[^"]+" y="[^"]+")((?: (?!transform)[a-z-]+="[^"]*")*)>(.*?)</text>')


def compact(body):  # -> the same picture in fewer bytes: a run of rects of one paint is one
    # path; a run of texts of one paint shares it on a <g>
    def runs(pattern, text, join):
        out, at, run, key = [], 0, [], None

        def flush():
            if run:
                out.append(join(run, key) if len(run) > 1 else run[0].group(0))
                run.clear()

        for m in pattern.finditer(text):
            k = m.group(5) if pattern is RECT else m.group(2)
            if m.start() != at or k != key:
                flush()
                out.append(text[at:m.start()])
            run.append(m)
            key, at = k, m.end()
        flush()
        out.append(text[at:])
        return "".join(out)

    def rects(run, key):
        d = "".join(f"M{m.group(1)} {m.group(2)}h{m.group(3)}v{m.group(4)}h-{m.group(3)}z"
                    for m in run)
        return f'<path d="{d}"{key}/>'

    def texts(run, key):
        return f"<g{key}>" + "".join(f"<text{m.group(1)}>{m.group(3)}</text>" for m in run) + "</g>"

    return runs(TEXT, runs(RECT, body, rects), texts)


def plots_of(model):  # a Bokeh model (a figure or a layout of them) -> [Plot], in order
    from bokeh.models import Plot

    if isinstance(model, Plot):
        return [model]
    out = []
    for child in getattr(model, "children", None) or []:
        out += plots_of(child[0] if isinstance(child, tuple) else child)
    return out


def stills_of(model):  # -> the SVGs of every figure in a Bokeh model
    return "".join(figure_svg(fig) for fig in plots_of(model) if fig.visible)
