"""A static build is an object the build holds (`with static_build() as site`), not
module-level lists filled as a side effect: what a page's panels ship is in `site.tables`,
scoped to that build, and nothing is left behind."""

import threading

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.hosting import routes
from app.kit import chrome, states
from app.panels.heatmap import HeadPanel
from app.panels.ladder import LadderPanel


def render(*viewers):  # each viewer's models in a fresh document, as a page's save makes them
    doc = Document()
    with set_curdoc(doc):
        for viewer in viewers:
            doc.add_root(viewer.__panel__().get_root(doc))


def test_a_build_holds_the_tables_its_panels_name_and_no_other():
    assert not states.is_static()
    assert states.current_build() is None
    with states.static_build() as site:
        assert states.is_static() and states.current_build() is site
        head, ladder = HeadPanel(), LadderPanel()
        assert site.tables == {}  # building a panel ships nothing until it is drawn
        render(head)
        assert list(site.tables) == [HeadPanel.table_ref()]
        assert site.tables[HeadPanel.table_ref()] == HeadPanel.table()
        with states.static_build() as page:  # a page saved inside: its own tables only
            render(ladder)
        assert list(page.tables) == [LadderPanel.table_ref()]
        assert list(site.tables) == [HeadPanel.table_ref()]
    assert not states.is_static()
    with states.static_build() as again:  # a new build starts empty
        assert again.tables == {}


def test_a_live_panel_carries_its_table_inline_and_no_build_is_in_progress():
    spec = LadderPanel().spec()
    assert "table" in spec and "table_ref" not in spec


def test_another_thread_does_not_see_this_threads_build():
    seen = []
    with states.static_build():
        thread = threading.Thread(target=lambda: seen.append(states.is_static()))
        thread.start()
        thread.join()
    assert seen == [False]


def test_a_single_panel_page_titles_its_panel_h1_and_only_while_it_is_built():
    page = chrome.single_page(LadderPanel, "Where the n² lives")
    titles = [o.object for o in page.select(pn.pane.HTML) if "ae-heading" in str(o.object)]
    assert titles[0].startswith("<h1")
    assert chrome.heading("x").object.startswith("<h3")  # afterwards: a chapter's level


@pytest.mark.parametrize("route", sorted(routes.PANEL_ROUTES))
def test_a_figures_own_lists_hold_every_renderer_and_annotation_select_finds(route):
    # states.figure_renderers reads a plot's lists instead of walking every model it
    # references: the overlay levels are set on exactly the models a walk would find
    from bokeh.models import Annotation, GlyphRenderer

    doc = Document()
    with set_curdoc(doc):
        page = routes.page_factory(routes.PANEL_ROUTES[route])()
        figures = [pane.object for pane in pn.panel(page).select(pn.pane.Bokeh)]
    if route != "/kernel-lab":  # its charts are drawn only once a sweep has run
        assert figures, route
    for fig in figures:
        walked = {m.id for m in fig.select({"type": GlyphRenderer})}
        walked |= {m.id for m in fig.select({"type": Annotation})}
        listed = {m.id for m in states.figure_renderers(fig)
                  if isinstance(m, (GlyphRenderer, Annotation))}
        assert listed == walked, (route, walked - listed)


def test_a_tables_script_registers_exactly_its_table(tmp_path):
    # the script hands the switcher the table's JSON text in a quoted string (a phone parses
    # that faster than an object literal): quotes, backslashes, line separators and "</" survive
    import json
    import subprocess

    from tests import js_twin

    odd = {"text": "it's \\ \"q\" \u2028\u2029 </script> √d_k −∞", "n": [1, 2.5, None, True]}
    register = ("const got = []; global.AE = {states: {register: (r, text) => "
                "got.push([r, typeof text, JSON.parse(text)])}};"
                "require(process.argv[1]); process.stdout.write(JSON.stringify(got));")
    for ref, table in [("Odd-0", odd), (HeadPanel.table_ref(), HeadPanel.table())]:
        script = tmp_path / "table.js"
        script.write_text(states.table_script(ref, table), encoding="utf-8")
        done = subprocess.run(
            [js_twin.node("switcher.js"), "-e", register, str(script)],
            capture_output=True, text=True, check=True)
        assert json.loads(done.stdout) == [[ref, "string", json.loads(states.canonical(table))]]
