"""Each static page loads only the Bokeh and Panel bundles its islands' models need
(app/hosting/build.py `scripts_needed`, static/islands.js): no bokeh-tables where no table is
mounted (a stand-in takes its place before Panel's bundle), no bokeh-gl, no MathJax, and every
island still mounts and answers a control; a page whose island mounts a DataTable loads
bokeh-tables. Requests are recorded from navigation on."""

import pytest
from playwright.sync_api import expect

from app.hosting import build
from app.kit import registry, states
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.table_panel import RECORD

pytestmark = pytest.mark.browser

NEVER = ("bokeh-tables", "bokeh-gl", "mathjax")

# every island mounted (a chapter's, once each is scrolled into view) and every switcher booted
ALL_MOUNTED_JS = """() => {
  const islands = [...document.querySelectorAll(".ae-island")];
  return islands.length > 0 && islands.every((el) => el.classList.contains("ae-mounted"))
    && window.AE && AE.states && [...AE.states.panels.values()].every((p) => p.booted);
}"""

# each panel's first control moved to its next stop -> [panel's name, whether its readouts'
# text or its sources' data changed]
EACH_PANEL_ANSWERS_JS = """async () => {
  const text = (root) => { // the page's text, shadow roots included
    let out = "";
    for (const e of root.querySelectorAll("*")) {
      if (e.shadowRoot) { out += text(e.shadowRoot); }
    }
    return out + root.textContent;
  };
  const data = (p) => JSON.stringify(p.targets.map((t) => { // its sources' columns
    const d = t && t.data;
    return d instanceof Map ? [...d.entries()].map(([k, v]) => [k, Array.from(v)]) : null;
  }));
  const frames = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const out = [];
  for (const [name, p] of AE.states.panels) {
    const c = p.spec.table.controls[0], model = p.controls[0];
    const at = c.raw.findIndex((r) => r === model[c.prop]);
    const before = [text(document), data(p)];
    model[c.prop] = c.raw[(at + 1) % c.raw.length];
    await frames();
    out.push([name, text(document) !== before[0] || data(p) !== before[1]]);
  }
  return out;
}"""


def opened(browser, url, chapter):  # -> (page, [requested URLs]) with every island mounted
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    requested, problems = [], []
    page.on("request", lambda r: requested.append(r.url))
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.goto(url)
    if chapter:  # the reader nears each island in turn, and asks for its chart
        for island in page.locator(".ae-island").all():
            island.scroll_into_view_if_needed()
            island.evaluate("(el) => AE.islands.mountFor(el)")
            page.wait_for_function("(el) => el.classList.contains('ae-mounted')",
                                   arg=island.element_handle(), timeout=RENDER_TIMEOUT_MS * 2)
    page.evaluate("AE.islands.mountAll()")  # a panel's page: it mounts on intent
    page.wait_for_function(ALL_MOUNTED_JS, timeout=RENDER_TIMEOUT_MS * 2)
    return page, requested, problems


def loaded(requested, name):
    return [u for u in requested if f"/{name}" in u.rsplit("/", 1)[-1] or f"/{name}" in u]


@pytest.mark.parametrize("route", ["/heatmap", "/", "/math"])
def test_a_page_with_no_table_loads_no_table_bundle_and_every_island_answers(
        browser, site_build, route):
    url = (site_build / route.strip("/") / "index.html").as_uri()
    page, requested, problems = opened(browser, url, chapter=route in ("/", "/math"))
    try:
        for name in NEVER:
            assert not loaded(requested, name), (name, requested)
        assert loaded(requested, "panel.min.js") and loaded(requested, "bokeh-widgets")
        assert page.evaluate("AE.fence.internals.tablesStoodIn") is True
        if route == "/heatmap":  # a real tap: the mask off shows "mat"'s 0.23
            page.get_by_role("button", name="causal mask").click()
            expect(page.get_by_text("0.23", exact=True).first).to_be_visible()
        answers = page.evaluate(EACH_PANEL_ANSWERS_JS)
        assert answers and all(changed for _, changed in answers), answers
        assert not problems, problems
    finally:
        page.context.close()


@pytest.fixture(scope="module")
def table_site(tmp_path_factory):  # -> folder of one built page whose island has a DataTable
    out = tmp_path_factory.mktemp("table-site")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(registry, "PANELS", (*registry.PANELS, RECORD))
        page = build.Page(RECORD.route, RECORD.viewer)
        assets = build.Assets(build.site_files())
        warnings = []
        text, tables, docs = build.render(page, RECORD.title, "default", assets)
        build.write(out, page.file, build.finish_page(text, page, assets, warnings))
        for rel, script in docs.items():
            build.write(out, rel, build.localize(script, page, assets, warnings))
        for ref, table in tables.items():
            build.write(out, f"{build.STATES_OUT}/{ref}.js", states.table_script(ref, table))
        for name, data in assets.site_files.items():
            build.write(out, f"{assets.site_out}/{name}", data)
        for rel, source in assets.copies.items():
            build.write(out, rel, source.read_bytes())
        assert not warnings, warnings
    return out


def test_a_page_whose_island_has_a_table_loads_bokeh_tables(browser, table_site):
    url = (table_site / RECORD.route.strip("/") / "index.html").as_uri()
    page, requested, problems = opened(browser, url, chapter=False)
    try:
        assert loaded(requested, "bokeh-tables.min.js"), requested
        assert not loaded(requested, "no-tables.js") and not loaded(requested, "bokeh-gl")
        assert page.evaluate("AE.fence.internals.tablesStoodIn") is False
        answers = page.evaluate(EACH_PANEL_ANSWERS_JS)
        assert answers and all(changed for _, changed in answers), answers
        cells = page.locator(".slick-cell")  # the table drew the default state's two bars
        expect(cells.first).to_be_visible()
        assert not problems, problems
    finally:
        page.context.close()
