"""A panel no chapter has: the registry test adds it in one record and builds its pages.

It is as small as the panel shape allows (docs/PANEL_CONTRACT.md): one control on four stops,
one part, one figure whose bars are placed by a browser-side transform declared with its
Python twin, and one readout.
"""

import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure
from bokeh.transform import transform

from app.kit import chrome, registry
from app.kit.chrome import hole, readout_class
from app.kit.states import Control, Part, StatePanel
from app.kit.transforms import js_transform

COUNTS = (1, 2, 3, 4)
CENTRE_JS = "const n = xs.length; return xs.map((k) => (k + 0.5) / n);"


def centre_py(keys, data):  # CENTRE_JS for the stills
    return [(k + 0.5) / len(keys) for k in keys]


CountReadout = readout_class("CountReadout", f"<p>{hole('count')} bars</p>", module=__name__)


def count_state(count):  # -> {target: value}: `count` bars of height 1 / count
    return {"source:bars": {"key": list(range(count)), "top": [1 / count] * count},
            "holes:count": {"count": str(count)}}


class CountPanel(StatePanel):
    """Bars, as many as the control says."""

    count = param.Integer(default=2, bounds=(1, 4), label="bars")
    url_keys = ("count",)

    @classmethod
    def controls(cls):
        return [Control.slider("count", COUNTS)]

    @classmethod
    def parts(cls):
        return [Part(("count",), count_state)]

    def build(self, state):
        source = ColumnDataSource(state["source:bars"])
        fig = figure(height=160, sizing_mode="stretch_width", tools="", toolbar_location=None,
                     x_range=Range1d(0, 1), y_range=Range1d(0, 1.05))
        fig.vbar(x=transform("key", js_transform(CENTRE_JS, centre_py)), top="top", width=0.1,
                 source=source)
        readout = self.new_readout(CountReadout, state["holes:count"])
        slider = pn.widgets.IntSlider.from_param(self.param.count, width=200)
        self.widgets = {"count": slider}
        self.targets = {"source:bars": source, "holes:count": readout}
        title = chrome.heading(registry.title_of(type(self)))  # its record's, written once
        return pn.Column(*self.own(title), self.url_note, slider, pn.pane.Bokeh(fig), readout,
                         sizing_mode="stretch_width")
