"""The kernel lab's two sweep charts: prefill time and peak memory against prompt length n,
fused against math, on log-log axes, with the guides and the score-matrix size beside them."""

import dataclasses
import math

from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    NoOverlap,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.plotting import figure

from app import lab
from app.kit.theme import ink

# Okabe-Ito: the fused kernel in blue, math in vermillion, guides in the theme's grey
BLUE, VERMILLION, BLACK = "#0072B2", "#D55E00", "#000000"
EMPTY = {"n": [], "ms": [], "lo": [], "hi": [], "peak_mb": [], "kernel": []}
NO_GUIDES = {"n": [], "linear": [], "quadratic": []}


def sweep_columns(result):  # lab.SweepResult -> {backend: source columns}
    out = {}
    for backend in lab.SWEEP_BACKENDS:
        pts = [p for p in result.points if p.backend == backend and p.seconds]
        out[backend] = {
            "n": [p.length for p in pts],
            "ms": [p.median * 1e3 for p in pts],
            "lo": [min(p.seconds) * 1e3 for p in pts],
            "hi": [max(p.seconds) * 1e3 for p in pts],
            "peak_mb": [p.peak_bytes / 1e6 if p.peak_bytes else math.nan for p in pts],
            "kernel": [p.ran for p in pts],
        }
    return out


def guide_columns(result):  # reference lines through the first fused point: ∝ n and ∝ n²
    first = next((p for p in result.points if p.backend == "auto" and p.seconds), None)
    if first is None:
        return dict(NO_GUIDES)
    ns = list(result.lengths)
    t0, n0 = first.median * 1e3, first.length
    return {"n": ns, "linear": [t0 * n / n0 for n in ns],
            "quadratic": [t0 * (n / n0) ** 2 for n in ns]}


def scores_columns(req, lengths):  # the score matrix math/eager builds, in MB, per n
    sizes = [lab.estimate(dataclasses.replace(req, length=n)).score_matrix / 1e6
             for n in lengths]
    return {"n": list(lengths), "mb": sizes}


class SweepCharts:
    """The figures and their sources; the panel lays them out and feeds them a sweep."""

    def __init__(self, caps):
        self.fused_source = ColumnDataSource(dict(EMPTY))
        self.math_source = ColumnDataSource(dict(EMPTY))
        self.guide_source = ColumnDataSource(dict(NO_GUIDES))
        self.scores_source = ColumnDataSource({"n": [], "mb": []})
        lengths = lab.sweep_lengths(caps)
        x_range = Range1d(lengths[0] / 1.4, lengths[-1] * 1.4)
        grey = ink().rule

        def base(title, y_label):
            fig = figure(title=title, height=320, sizing_mode="stretch_width", min_width=200,
                         x_axis_type="log", y_axis_type="log", x_range=x_range,
                         tools="", toolbar_location=None)
            fig.xaxis.axis_label = "prompt length n (log scale)"
            fig.xaxis.ticker = FixedTicker(ticks=list(lengths))
            fig.xaxis.formatter = NumeralTickFormatter(format="0,0")
            fig.xaxis.major_label_policy = NoOverlap(min_distance=8)
            fig.yaxis.axis_label = y_label
            fig.title.text_font_size = "13px"
            return fig

        def measured(fig, y, label, tooltips, whiskers=False):  # fused and math, one y column
            items = []
            for source, name, colour, dash, marker in (
                    (self.fused_source, "fused (auto)", BLUE, "solid", "circle"),
                    (self.math_source, "math", VERMILLION, "dashed", "square")):
                line = fig.line("n", y, source=source, line_color=colour, line_dash=dash,
                                line_width=2.5)
                dots = fig.scatter("n", y, source=source, marker=marker, size=8,
                                   fill_color=colour, line_color=BLACK)
                if whiskers:  # fastest to slowest repeat
                    fig.segment("n", "lo", "n", "hi", source=source, line_color=colour,
                                line_width=2)
                items.append(LegendItem(label=name + label, renderers=[line, dots]))
                fig.add_tools(HoverTool(renderers=[dots], tooltips=[
                    ("n", "@n{0,0}"), ("kernel", "@kernel"), *tooltips]))
            return items

        t = base("Prefill time against prompt length, this server", "milliseconds (log scale)")
        items = measured(t, "ms", "", [("median", "@ms{0.000} ms"), ("fastest", "@lo{0.000} ms"),
                                       ("slowest", "@hi{0.000} ms")], whiskers=True)
        for column, name, dash in (("linear", "∝ n (linear)", "dotted"),
                                   ("quadratic", "∝ n² (quadratic)", "dashdot")):
            guide = t.line("n", column, source=self.guide_source, line_color=grey,
                           line_dash=dash, line_width=1.5)
            items.append(LegendItem(label=name, renderers=[guide]))
        t.add_layout(Legend(items=items, ncols=2, border_line_alpha=0, padding=4,
                            label_text_font_size="12px", spacing=12, location="center"),
                     "below")
        self.time_figure = t

        m = base("Peak memory during one call", "MB (log scale)")
        items = measured(m, "peak_mb", ", measured", [("peak", "@peak_mb{0,0.0} MB")])
        sline = m.line("n", "mb", source=self.scores_source, line_color=grey, line_dash="dotted",
                       line_width=2)
        items.append(LegendItem(label="score matrix, batch × heads × n² × bytes",
                                renderers=[sline]))
        m.add_tools(HoverTool(renderers=[sline], tooltips=[("n", "@n{0,0}"),
                                                           ("score matrix", "@mb{0,0.0} MB")]))
        m.add_layout(Legend(items=items, ncols=1, border_line_alpha=0, padding=4,
                            label_text_font_size="12px", location="center"), "below")
        self.memory_figure = m

    def clear(self, req, lengths):  # a sweep is starting: no points yet, the score sizes known
        self.fused_source.data = dict(EMPTY)
        self.math_source.data = dict(EMPTY)
        self.guide_source.data = dict(NO_GUIDES)
        self.scores_source.data = scores_columns(req, lengths)

    def show(self, result):  # lab.SweepResult so far -> the points and guides
        cols = sweep_columns(result)
        self.fused_source.data = cols["auto"]
        self.math_source.data = cols["math"]
        self.guide_source.data = guide_columns(result)
