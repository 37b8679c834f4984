"""Text first, on a phone: a chapter is HTML that paints before any script, and its panels
are islands that mount when the reader reaches them (app/chapters/chapter_page.py, islands.js).

- With JavaScript off, "/" and "/math" show every paragraph of their content files and the
  documents' numbers of each panel's default state (the islands' stills), and say that the
  controls need JavaScript. The live chapters ("/live", "/live/math") send the same text in
  their HTML, ahead of every script, and show it with JavaScript off too.
- Opening "/" requests no Bokeh, Panel or switcher script, and no table of states; scrolling
  to a panel or the keyboard mounts it, and it then works; a deep link sets the head's still
  through its native controls before Bokeh, and the mounted panel keeps it.
- In Pixel 5 and iPhone 12 emulation (mobile viewport and touch) every route answers, draws
  every panel with no console error and no request off our server, and is laid out at
  the device's width with no sideways scroll of the page, a chapter's paragraphs are 16 px
  or larger, and a slider dragged by touch changes the head's readout.
"""

import html
import re

import pytest
from playwright.sync_api import expect

from app.chapters import apparatus, chapter_page, content
from app.hosting import routes
from app.hosting.static_site import live_route
from app.kit import registry
from tests.browser.conftest import DOCUMENT_IDLE_JS, RENDER_TIMEOUT_MS
from tests.browser.readiness import READY_JS

CHAPTERS = {c.route: c.content for c in registry.CHAPTERS}
# the documents' numbers each chapter's panels show in their default states
DEFAULT_NUMBERS = {"/": ["0.77", "0.07", "1.98", "15 of 36", "51,324", "13,404"],
                   "/math": ["1.55", "0.54 GB", "295"],
                   "/flash": ["17.4 GB", "4.5 GB", "4,032"],
                   "/kv": ["28,181", "450,896", "copy-on-write"]}
BOKEH_OR_PANEL = re.compile(r"/(bokeh|panel)[^/]*\.js|/switcher\.js|/assets/states/")
PHONES = ("Pixel 5", "iPhone 12")


PRACTITIONERS = re.compile(r'<details class="ae-practitioners">.*?</details>', re.DOTALL)


def paragraphs(name, boxes=False):  # -> the plain text of every paragraph and list item of a
    # chapter: of the main line, or (boxes) of its closed "For practitioners" boxes alone
    sections = content.load(name).sections
    terms_refs = apparatus.Apparatus(sections)  # as the page renders it: citations numbered
    html = "\n".join(terms_refs.prose(item) for item in sections if isinstance(item, str))
    html = "\n".join(PRACTITIONERS.findall(html)) if boxes else PRACTITIONERS.sub("", html)
    blocks = re.findall(r"<(?:p|li)\b[^>]*>(.*?)</(?:p|li)>", html, flags=re.DOTALL)
    return [chapter_page.plain_text(b) for b in blocks if chapter_page.plain_text(b)]


def squash(text):
    return " ".join(text.replace("*", "").split())


@pytest.fixture
def no_script_page(browser, base_url):
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    yield context.new_page()
    context.close()


def test_practitioners_boxes_are_closed_on_screen_there_without_scripts_and_open_in_print(
        no_script_page):
    page = no_script_page
    page.goto("/")
    boxes = page.locator("details.ae-practitioners")
    expect(boxes.first).to_be_attached()
    assert boxes.count() >= 3
    inside = paragraphs("attention.md", boxes=True)
    assert inside
    for i in range(boxes.count()):
        box = boxes.nth(i)
        assert box.get_attribute("open") is None  # closed by default
        expect(box.locator("summary")).to_be_visible()
        expect(box.locator("p").first).to_be_hidden()
    shown = squash(page.inner_text("main"))
    assert not [p for p in inside if squash(p) in shown]  # on screen: behind the summary
    page.emulate_media(media="print")
    for i in range(boxes.count()):
        expect(boxes.nth(i).locator("p").first).to_be_visible()
    printed = squash(page.inner_text("main"))
    assert [p[:60] for p in inside if squash(p) not in printed] == []


def test_a_panels_folded_notes_are_closed_on_screen_and_open_in_print(no_script_page):
    page = no_script_page
    page.goto("/math")
    folds = page.locator("main details.ae-fold")
    assert folds.count() >= 3  # the decode bill's two, each cost panel's "How this counts"
    for i in range(folds.count()):
        expect(folds.nth(i).locator("li, p").first).to_be_hidden()
    page.emulate_media(media="print")
    for i in range(folds.count()):
        expect(folds.nth(i).locator("li, p").first).to_be_visible()


@pytest.mark.parametrize("route", list(CHAPTERS))
def test_without_javascript_a_chapter_shows_its_text_and_default_numbers(no_script_page, route):
    page = no_script_page
    page.goto(route)
    shown = squash(page.inner_text("main"))
    missing = [p[:60] for p in paragraphs(CHAPTERS[route]) if squash(p) not in shown]
    assert not missing, f"{route}: paragraphs missing without JavaScript: {missing}"
    for number in DEFAULT_NUMBERS[route]:
        assert number in shown, f"{route}: {number} is not on the page without JavaScript"
    islands = page.locator(".ae-island")
    assert islands.count() == len([r for r in registry.PANELS if r.chapter == CHAPTERS[route]])
    for i in range(islands.count()):
        still = islands.nth(i).locator(".ae-still-body")
        assert still.inner_text().strip(), f"island {i} of {route} has no still"
    assert chapter_page.NO_SCRIPT_NOTE in page.inner_text("body")


@pytest.mark.parametrize("route", list(CHAPTERS))
def test_a_live_chapter_sends_its_text_before_any_script_and_shows_it_without_one(
        no_script_page, route):
    page, live = no_script_page, live_route(route)
    raw = page.request.get(live).text()
    head, body = raw.split("</head>", 1)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in head
    # a deferred script (embedding.js) runs after the parse; any other would hold the text back
    blocking = [t for t in re.findall(r"<script\b[^>]*\bsrc=[^>]*>", head)
                if not re.search(r"\b(defer|async)\b|type=\"module\"", t)]
    assert not blocking, f"a script in the head holds the text back: {blocking}"
    # a panel's still carries its data in a JSON block, which runs nothing
    body = re.sub(r'<script type="application/json"[^>]*>.*?</script>', "", body,
                  flags=re.DOTALL)
    text = squash(html.unescape(chapter_page.TAG.sub("", body.split("<script", 1)[0])))
    missing = [p[:60] for p in paragraphs(CHAPTERS[route]) if squash(p) not in text]
    assert not missing, f"{live}: paragraphs not ahead of the scripts: {missing}"
    page.goto(live)
    shown = squash(page.inner_text("main"))
    missing = [p[:60] for p in paragraphs(CHAPTERS[route]) if squash(p) not in shown]
    assert not missing, f"{live}: paragraphs missing without JavaScript: {missing}"


# each live chapter root's box: [kind, its height]; and Bokeh roots drawn outside any box
LIVE_BOXES_JS = """() => ({
  boxes: [...document.querySelectorAll("[class^=ae-live-]")].filter(
    (e) => e.querySelector("[data-root-id]")).map(
    (e) => [e.className.slice(8), Math.round(e.getBoundingClientRect().height)]),
  strays: [...document.body.children].filter((e) => e.matches("[data-root-id]")
    && e.getBoundingClientRect().height > 0).length })"""


@pytest.mark.parametrize("address", ["/live/math", "/live?questions=off"])
def test_every_root_of_a_live_chapter_is_drawn_in_its_box(page, address):
    # a reused first paint is the plain address's page: with the questions off too, every
    # root of the new session must find its box (Bokeh matches them by position)
    page.goto(address)
    page.wait_for_function(READY_JS, polling="raf", timeout=RENDER_TIMEOUT_MS)
    found = page.evaluate(LIVE_BOXES_JS)
    kinds = [kind for kind, _ in found["boxes"]]
    assert found["strays"] == 0, found
    chapter = "math.md" if "math" in address else "attention.md"
    panels = len(registry.chapter_panels(chapter))  # each a root, whatever the address
    assert kinds.count("panel") == panels and kinds.count("question") >= 7, found
    for kind, height in found["boxes"]:
        if kind == "panel":
            assert height > 300, found
        elif kind in ("question", "review"):
            assert (height == 0) == ("questions=off" in address), found


def test_a_chapter_loads_no_panel_script_before_a_panel_is_near(page):
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/")
    page.wait_for_load_state("networkidle")
    early = [u for u in requested if BOKEH_OR_PANEL.search(u)]
    assert not early, f"scripts requested before any panel was near: {early}"
    assert page.evaluate("window.Bokeh") is None
    assert page.locator("h1").inner_text().startswith(routes.SITE_TITLE.split(",")[0])
    # the reader scrolls to the head: its native controls answer and nothing loads; a mouse
    # resting on its chart mounts it, and it answers a click
    page.locator("#panel-head").scroll_into_view_if_needed()
    # once the page has been idle twice (the still's table may have loaded meanwhile:
    # switcher.js, its states)
    page.evaluate("() => new Promise((r) => requestIdleCallback(() => requestIdleCallback(r)))")
    bundles = re.compile(r"/(bokeh|panel)[^/]*\.js")
    assert not [u for u in requested if bundles.search(u)]
    page.locator("#panel-head [data-ae-pane] svg").first.hover()
    page.wait_for_selector("#panel-head.ae-mounted", timeout=RENDER_TIMEOUT_MS)
    assert any(BOKEH_OR_PANEL.search(u) for u in requested)
    head = page.locator("#panel-head")
    head.get_by_role("button", name="causal mask").click()
    page.wait_for_function("() => document.querySelector('#panel-head').innerText"
                           " !== undefined && location.search.includes('mask=off')")


def test_a_deep_link_sets_its_panel_before_bokeh_and_the_mount_keeps_it(page):
    # the head's native controls read the link and switch its still with no Bokeh loaded;
    # once let through, the mounted panel opens in the same state
    held = []

    def hold(request_route):
        held.append(request_route)

    page.route(re.compile(r"/bokeh-[\d.]+/bokeh\.min\.js$"), hold)
    page.goto("/?mask=off&query=2")
    head = page.locator("#panel-head")
    expect(head).to_have_attribute("data-ae-still", "3,2,0,1,0")  # length 6, row 2, mask off
    expect(head.locator(".ae-still-body")).to_contain_text("0 of 36")
    assert page.evaluate("() => typeof window.Bokeh") == "undefined"
    page.unroute(re.compile(r"/bokeh-[\d.]+/bokeh\.min\.js$"), hold)
    for r in held:
        r.continue_()
    page.evaluate("() => AE.islands.show('head')")  # as a link in the prose would
    page.wait_for_function("() => document.querySelector('#panel-head.ae-mounted') !== null"
                           " && Bokeh.documents.every((d) => d.is_idle)",
                           timeout=RENDER_TIMEOUT_MS)
    expect(head).to_contain_text("0 of 36")  # the mask-off state, as the link asks


def test_the_keyboard_reaching_a_panel_mounts_it(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/math")
    island = page.locator(".ae-island").last
    assert "ae-mounted" not in (island.get_attribute("class") or "")
    island.locator(".ae-island-load").focus()  # as Tab reaches its button
    page.wait_for_function("(el) => el.classList.contains('ae-mounted')",
                           arg=island.element_handle(), timeout=RENDER_TIMEOUT_MS)


# the layouts' children as the build wrote them (a fresh read of the group's document file)
# and as the mounted document holds them: {layout id: [child ids]} each
BUILT_AND_MOUNTED_CHILDREN_JS = """async (name) => {
  const LAYOUT = /(^|\\.)(Column|Row)$/, PLOT = /(^|\\.)(Figure|Plot)$/;
  const group = JSON.parse(document.getElementById("ae-islands").textContent).groups[name];
  let docs = null;
  new Function("AE", await (await fetch(group.doc)).text())(
    {islands: {receive: (n, sheets, d) => { docs = d; }}});
  const built = {}, mounted = {}, plots = {};
  (function walk(o) {
    if (Array.isArray(o)) { o.forEach(walk); return; }
    if (o === null || typeof o !== "object") { return; }
    if (o.type === "object" && PLOT.test(o.name)) { plots[o.id] = null; }
    if (o.type === "object" && LAYOUT.test(o.name) && Array.isArray(o.attributes?.children) &&
        o.attributes.children.every((c) => c !== null && typeof c.id === "string")) {
      built[o.id] = o.attributes.children.map((c) => c.id);
    }
    for (const key of Object.keys(o)) { walk(o[key]); }
  })(docs);
  for (const doc of Bokeh.documents) {
    for (const id of Object.keys(built)) {
      const model = doc.get_model_by_id(id);
      if (model !== null) {
        mounted[id] = model.children.map((c) => c.id);
        if (model.tags.some((t) => typeof t === "string" && t.startsWith("ae-"))) {
          mounted[id].push("a marker left in its tags");
        }
      }
    }
    for (const id of Object.keys(plots)) {
      const model = doc.get_model_by_id(id);
      if (model !== null) { plots[id] = model.hold_render; }
    }
  }
  return {built, mounted, plots, steps: AE.islands.steps.taken,
          paintsHeld: AE.islands.steps.paintsHeld, madeLater: AE.islands.steps.madeLater};
}"""


@pytest.mark.parametrize("route", ["/heatmap", "/cost"])
def test_a_panel_mounts_in_steps_and_ends_with_every_child_in_place(page, route):
    # islands.js renders a document's layouts empty and puts each child back in a task of
    # its own: once mounted, every layout holds the children the build wrote, in order
    page.goto(route)
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    found = page.evaluate(BUILT_AND_MOUNTED_CHILDREN_JS, "g0")
    assert len(found["built"]) >= 3, found
    assert found["mounted"] == found["built"]
    assert found["steps"] == sum(len(children) for children in found["built"].values())
    # each plot was laid out with its paint held, and painted in a later task: none is
    # left held (a held plot stays blank)
    assert found["plots"] and set(found["plots"].values()) == {False}, found["plots"]
    assert found["paintsHeld"] == len(found["plots"])
    # and each plot's models were made in a step of their own, out of the first
    assert found["madeLater"] == len(found["plots"])


# a Column holding a figure (with a range) and a text; `named`: the text names the range
HELD_PLOT_JS = """(named) => {
  const range = {type: "object", name: "Range1d", id: "r", attributes: {start: 0}};
  const figure = {type: "object", name: "Figure", id: "f", attributes: {x_range: range}};
  const text = {type: "object", name: "Div", id: "t", attributes: named ? {tags: [{id: "r"}]} : {}};
  const docs = {d: {roots: [{type: "object", name: "Column", id: "c",
                             attributes: {children: [figure, text]}}]}};
  const held = AE.islands.holdChildren(docs);
  const tags = docs.d.roots[0].attributes.tags;
  return {order: held.map((h) => h.child), later: held.map((h) => h.json !== null),
          inDocument: tags.includes(figure), hold: figure.attributes.hold_render};
}"""


def test_a_plot_is_made_later_unless_something_else_names_its_models(page):
    page.goto("/heatmap")
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    alone = page.evaluate(HELD_PLOT_JS, False)
    assert alone == {"order": ["t", "f"], "later": [False, True], "inDocument": False,
                     "hold": True}
    named = page.evaluate(HELD_PLOT_JS, True)  # made later, the text's reference would fail
    assert named == {"order": ["t", "f"], "later": [False, False], "inDocument": True,
                     "hold": True}


def test_a_panel_is_shown_once_its_figures_views_are_built_in_slices(page):
    # switcher.js lets the browser run between a figure's renderer views once 10 ms of them
    # have run (a phone's CPU, as Lighthouse has it: 4x slower); islands.js shows the panel
    # only when no build is still waiting for its turn, or the figure would arrive late
    # and push the page down
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 4})
    page.add_init_script("""document.addEventListener("ae:mounted", () => {
        const i = AE.fence.internals;
        window.atShown = {sliced: i.buildsSliced, yields: i.buildYields,
                          pending: i.buildsPending}; });""")
    page.goto("/heatmap")
    page.evaluate("() => AE.islands.mountAll()")  # it mounts on intent: ask
    page.wait_for_function("() => window.atShown !== undefined", timeout=RENDER_TIMEOUT_MS)
    shown = page.evaluate("window.atShown")
    assert shown["sliced"] is True and shown["yields"] >= 1, shown
    assert shown["pending"] == 0, shown


@pytest.fixture(params=PHONES)
def phone(request, browser, base_url, playwright, page_watch):
    # a page in the device's emulation, watched as the `page` fixture's are
    context = browser.new_context(**playwright.devices[request.param], base_url=base_url)
    yield page_watch.watch(context.new_page())
    context.close()
    page_watch.check()


@pytest.mark.parametrize("route", [*CHAPTERS, *routes.PANEL_ROUTES])
def test_on_a_phone_every_route_fits_the_screen(phone, route):
    page = phone
    response = page.goto(route)
    assert response is not None and response.status == 200
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    expect(page.locator(".pn-loading")).to_have_count(0)  # every panel drawn, deferred ones too
    content_attr = page.locator('meta[name="viewport"]').get_attribute("content")
    assert "width=device-width" in content_attr
    width = page.evaluate("window.innerWidth")
    assert width < 450, f"laid out {width} px wide: the page is not at the device's width"
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{route}: the page scrolls sideways ({wide} px in {width})"
    if route in CHAPTERS:
        sizes = page.evaluate("[...document.querySelectorAll('main > p')]"
                              ".map((p) => parseFloat(getComputedStyle(p).fontSize))")
        assert sizes and min(sizes) >= 16, f"{route}: paragraph type {min(sizes)} px"


def test_on_a_phone_a_slider_moves_by_touch(browser, base_url, playwright):
    context = browser.new_context(**playwright.devices["Pixel 5"], base_url=base_url)
    page = context.new_page()
    try:
        page.goto("/heatmap")
        page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
        handle = page.get_by_role("slider", name="sequence length")
        box = handle.bounding_box()
        assert box["width"] >= 24 and box["height"] >= 24, f"handle {box}"
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = context.new_cdp_session(page)
        for kind, at in (("touchStart", x), ("touchMove", x + 60), ("touchMove", x + 140),
                         ("touchEnd", None)):
            points = [] if at is None else [{"x": at, "y": y}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
        page.wait_for_function("() => !location.search.includes('length=6')"
                               " && /length=\\d/.test(location.search)",
                               timeout=RENDER_TIMEOUT_MS)
    finally:
        context.close()


# --- stills and print (app/chapters/stills.py, islands.js) ---------------------------------

def chart_count(route):  # -> how many Bokeh figures the panel of a panel page draws
    from tests.test_stills import figures

    return len(figures(route))


@pytest.fixture(scope="module")
def phone_no_script(browser, base_url, playwright):
    context = browser.new_context(**{**playwright.devices["Pixel 5"],
                                     "java_script_enabled": False}, base_url=base_url)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("route", list(routes.PANEL_ROUTES))
def test_without_javascript_a_panel_page_shows_its_readout_and_a_still_of_each_chart(
        no_script_page, phone_no_script, route):
    expected = chart_count(route)
    for page in (no_script_page, phone_no_script):
        page.goto(route)
        still = page.locator(".ae-island-still")
        assert re.search(r"\d", still.inner_text()), f"{route}: no readout without JavaScript"
        assert chapter_page.NO_SCRIPT_NOTE in still.inner_text()
        charts = still.locator("svg.ae-chart[role=img]")
        assert charts.count() == expected, f"{route}: {charts.count()} stills, {expected} charts"
        for i in range(expected):
            chart = charts.nth(i)
            assert len(chart.get_attribute("aria-label")) > 20
            box = chart.bounding_box()
            assert box["width"] > 200 and box["height"] > 60, f"{route}: chart {i} is {box}"
            scale = chart.evaluate("(svg) => svg.getScreenCTM().a")
            assert scale >= 1, f"{route}: chart {i} draws its 12 px type at {12 * scale:.1f} px"
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= page.evaluate("window.innerWidth"), f"{route}: scrolls sideways"


def test_with_javascript_a_still_is_no_taller_than_its_island(page):
    # before a panel mounts its still is cut at the island's height, so the mount moves
    # nothing below it; without scripts it shows whole (the test above)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/")
    heights = page.evaluate("""[...document.querySelectorAll('.ae-island:not(.ae-mounted)')]
      .map((el) => [el.dataset.slot, el.getBoundingClientRect().height,
                    parseFloat(getComputedStyle(el).minHeight)])""")
    assert heights
    for slot, height, least in heights:
        assert height <= least + 1, f"{slot}: {height} px against its {least} px"


def test_printing_shows_each_mounted_panels_controls_as_their_values(page):
    page.goto("/heatmap?length=5&mask=off")
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    page.wait_for_function("() => window.AE && AE.states && [...AE.states.panels.values()]"
                           ".every((p) => p.booted)", timeout=RENDER_TIMEOUT_MS)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    values = page.locator("#panel-head .ae-print-values")
    values.wait_for(state="visible")
    text = values.inner_text()
    for line in ("sequence length: 5", "causal mask: off", "inspect query: 2",
                 "divide scores by √d_k: on", "phase: prefill"):
        assert line in text, f"{line!r} not in the printed values: {text!r}"
    hidden = page.evaluate("""() => [...AE.states.panels.values()].flatMap((p) => p.controls)
      .map((m) => Bokeh.index.find_one(m).el).every((el) => el.offsetParent === null)""")
    assert hidden, "a control's widget still prints"
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    assert page.locator(".ae-print-values").count() == 0
    assert page.get_by_role("slider", name="sequence length").is_visible()
