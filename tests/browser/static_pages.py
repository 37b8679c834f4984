"""What the static-page browser tests share: a page saved by hand as a static build saves it,
and a Chromium page that fails on anything a page from disk must not do.

A static build ships each panel's table of states as its own file; a page saved here carries
the same registrations inline, right after the switcher. Assets come from the installed
packages through two symlinks, so nothing is fetched from a host.
"""

import re
import shutil
from pathlib import Path

import bokeh
import panel as pn
from bokeh.resources import CDN
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.kit import states
from tests.browser.conftest import DOCUMENT_IDLE_JS, RENDER_TIMEOUT_MS

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ("file:", "blob:", "data:")  # what a page from disk may load: nothing from a host

# every hole's text, by hole name, from every shadow root on the page
HOLES_JS = """() => {
  const out = {};
  const walk = (root) => {
    for (const e of root.querySelectorAll("[data-s]")) { out[e.dataset.s] = e.textContent; }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } }
  };
  walk(document);
  return out;
}"""

# what a test's page.evaluate() builds on: the panel with a control named `name`; a panel's
# controls set to a combination (a control it leaves out keeps its stop), resolved once the
# switch's frame is painted; a panel's named columns of its named sources; both, for each
# combination in turn
PANEL_HELPERS_JS = """
  const panelWith = (name) => [...AE.states.panels.values()].find(
    (p) => p.spec.table.controls.some((c) => c.name === name));
  const setStops = (p, combo) => {
    p.spec.table.controls.forEach((c, i) => {
      if (!(c.name in combo)) { return; }
      const raw = c.raw[c.values.indexOf(combo[c.name])];
      if (p.controls[i][c.prop] !== raw) { p.controls[i][c.prop] = raw; }
    });
    return new Promise((r) => requestAnimationFrame(() => r()));
  };
  const columnsOf = (p, sources) => {
    const columns = {};
    for (const [target, names] of Object.entries(sources)) {
      const data = p.targets[p.spec.targets.findIndex((t) => t.name === target)].data;
      columns[target] = Object.fromEntries(names.map(
        (n) => [n, [...(data instanceof Map ? data.get(n) : data[n])]]));
    }
    return columns;
  };
  const statesOf = async (p, combos, read, sources) => { // [{shown: read(), columns}] a combo
    const out = [];
    for (const combo of combos) {
      await setStops(p, combo);
      out.push({shown: read(), columns: columnsOf(p, sources)});
    }
    return out;
  };
"""


def holes(page):  # -> {hole: text} of every readout on the page
    return page.evaluate(HOLES_JS)


def assert_holes_read(shown, **texts):  # `shown`, {hole: text} as read from a page: each named
    # hole reads exactly its text (a hole the page lacks reads None)
    assert {name: shown.get(name) for name in texts} == texts


BOOTED_JS = ("() => window.AE && AE.states && AE.states.panels.size > 0 && "
             "[...AE.states.panels.values()].every((p) => p.booted)")
# what a saved page loads before its documents: the switcher and the modules it needs, which a
# built page's islands.js carries (app/hosting/build.py SITE_SCRIPTS)
MODULES = ("page_head.js", "bokeh_fence.js", "page_url.js", "readout_heights.js", "switcher.js")


def table_scripts(tables):  # {ref: table} -> <script> tags registering them
    return "".join(f"<script>{states.table_script(ref, table)}</script>"
                   for ref, table in tables.items())


def prepare(out):  # a folder for hand-saved pages: the packages' assets and the switcher
    (out / "static").mkdir()
    (out / "static" / "panel").symlink_to(Path(pn.__file__).parent / "dist")
    (out / "static" / "bokeh").symlink_to(Path(bokeh.__file__).parent / "server" / "static")
    for name in MODULES:
        shutil.copy(ROOT / "static" / name, out / name)
    return out


def static_html(layout, path):  # a layout built in a static build -> a page that works from disk
    site = states.current_build()  # its panels named their tables there as they were built
    assert site is not None, "build the layout inside states.static_build()"
    layout.save(path, resources=CDN, title=path.stem)
    html = path.read_text()
    html = html.replace(f"https://cdn.holoviz.org/panel/{pn.__version__}/dist/", "static/panel/")
    html = re.sub(rf"https://cdn\.bokeh\.org/bokeh/release/(bokeh[\w-]*?)-"
                  rf"{re.escape(bokeh.__version__)}\.min\.js", r"static/bokeh/js/\1.min.js", html)
    scripts = "".join(f'<script src="{name}"></script>' for name in MODULES)
    html = html.replace("<head>", "<head>" + scripts + table_scripts(site.tables), 1)
    path.write_text(html)


def watched_pages(context, url_of):
    # -> (open(name, query) -> a rendered page whose switcher has booted, check()): check()
    # fails on a console error, an uncaught error, a request off disk or a websocket
    page = context.new_page()
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    page.on("request", lambda r: r.url.startswith(LOCAL) or problems.append(r.url))
    page.on("websocket", lambda ws: problems.append(f"websocket {ws.url}"))

    def open_(name=None, query=""):  # url_of(name), or url_of() when the pages have one
        page.goto((url_of() if name is None else url_of(name)) + query)
        page.wait_for_function(DOCUMENT_IDLE_JS)
        # an island with native controls mounts only on intent (static/islands.js): ask
        page.evaluate("window.AE && AE.islands && AE.islands.mountAll()")
        page.wait_for_function(BOOTED_JS)
        return page

    def check():
        page.close()
        assert not problems, f"console errors, requests off disk or websockets: {problems}"

    return open_, check


def address_shows(page, *parts, timeout_ms=2000):
    # -> whether the address bar comes to hold every part: a static page writes it just after
    # the change is painted (static/switcher.js), so it can lag a click by a frame
    try:
        page.wait_for_function("(parts) => parts.every((p) => window.location.href.includes(p))",
                               arg=list(parts), timeout=timeout_ms)
        return True
    except PlaywrightTimeout:  # say what the address held instead
        print(f"address bar: {page.url}, wanted {parts}")
        return False
