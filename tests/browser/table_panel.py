"""A panel that mounts a Bokeh DataTable: the throwaway panel's bars, also as a table. No
panel of the app has one; tests/browser/test_bundles.py builds its page to see bokeh-tables
loaded where a table is mounted."""

import panel as pn
from bokeh.models import DataTable, TableColumn

from app.kit import registry
from tests.throwaway_panel import CountPanel

RECORD = registry.PanelRecord("counttable", "tests.browser.table_panel:TablePanel",
                              "/count-table", "Counting bars in a table", "math.md",
                              island_height=500)


class TablePanel(CountPanel):
    """Bars, as many as the control says, and their heights in a table."""

    def build(self, state):
        layout = super().build(state)
        table = DataTable(source=self.targets["source:bars"], height=140, width=300,
                          columns=[TableColumn(field="key", title="bar"),
                                   TableColumn(field="top", title="height")])
        layout.append(pn.pane.Bokeh(table))
        return layout
