"""At home in a course page (issue 40): frames that size themselves, "Embed", oEmbed, answers.

The example course page (static/course-page.html) is served from another origin (127.0.0.2),
as in test_embed.py, with the explorable started with that origin allowed to embed. In
Chromium, on desktop and in Pixel 5 emulation:
- the plain iframe (sized by the course page's few lines) and the embed.js frame each settle
  within 2 px of their page's content, and follow it when a question's reply opens;
- a message from another frame, or another origin, changes no frame;
- a fake Canvas parent receives `lti.frameResize` with the content's height;
- the "Embed" dialog's code, pasted into a blank course page, shows the same state (static and
  live page); axe finds nothing on the open dialog;
- with `?report=parent` each answer posts exactly one `ae:answer` message (embed.js re-emits
  it as a DOM event), without it none;
- the live server's /oembed answers a deep link, refuses a foreign url, and every page, static
  and live, names its oEmbed response.
"""

import contextlib
import html
import json
from urllib.parse import quote, urljoin

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from app.hosting import routes
from tests.browser.axe_core import axe
from tests.browser.conftest import RENDER_TIMEOUT_MS
from tests.browser.test_embed import COURSE_PAGE, PLACEHOLDER, all_idle, course_sites

pytestmark = pytest.mark.browser

SETTLE_PX = 2
# inside a frame: its page's content height (the body's margin box, measured here, not by the
# page's own script) against the frame's viewport; settled when they agree and nothing is cut
SETTLED_JS = """(px) => {
    const body = document.body;
    const margin = parseFloat(getComputedStyle(body).marginBottom) || 0;
    const content = body.getBoundingClientRect().bottom + window.scrollY + margin;
    const root = document.documentElement;
    return Math.abs(window.innerHeight - content) <= px && root.scrollHeight <= innerHeight + px;
}"""
CONTENT_JS = """() => { const b = document.body;
    return Math.ceil(b.getBoundingClientRect().bottom + window.scrollY
                     + (parseFloat(getComputedStyle(b).marginBottom) || 0)); }"""

# inside a live single-panel frame, whose html and body Panel sizes to the viewport: the
# content is the lowest box drawn anywhere below the body (shadow roots too), walked here
# element by element; settled when the frame shows it whole with at most a margin to spare
LIVE_BOTTOM_JS = """() => {
    let bottom = 0;
    const walk = (root) => {
        for (const e of root.querySelectorAll("*")) {
            const style = getComputedStyle(e);
            if (style.position === "fixed" || e.closest("[style*='position: fixed']")) continue;
            const r = e.getBoundingClientRect();
            if (r.height > 0 && r.width > 0) bottom = Math.max(bottom, r.bottom);
            if (e.shadowRoot) walk(e.shadowRoot);
        }
    };
    for (const e of document.body.children) {
        if (getComputedStyle(e).position !== "fixed") { walk(e); }
    }
    return Math.ceil(bottom + window.scrollY);
}"""
LIVE_MARGIN_PX = 24  # the panel card's own bottom margin and the body's, at most

CANVAS_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Canvas</title>
</head><body><h1>A Canvas course (fake)</h1>
<script>window.__lti = []; window.addEventListener("message", (e) => {
  const m = typeof e.data === "string" ? JSON.parse(e.data) : e.data;
  if (m && m.subject === "lti.frameResize") {  // as Canvas does: the tool's frame takes it
    window.__lti.push(m.height);
    document.getElementById("tool").style.height = m.height + "px"; } });</script>
<iframe id="tool" title="tool" src="APP/heatmap?embed=1" width="100%" height="600"></iframe>
</body></html>"""

# an embed.js frame of the head's page with one question asked; QUERY is data-query
QUESTION_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Q</title>
</head><body><main><h1>Week 3</h1>
<script>window.__posted = []; window.__events = [];
  window.addEventListener("message", (e) => {
    if (e.data && e.data.type === "ae:answer") { window.__posted.push(e.data); } });</script>
<script id="ae" src="APP/embed.js" data-panel="heatmap" data-query="QUERY"></script>
<script>document.getElementById("ae").addEventListener("ae:answer",
  (e) => window.__events.push(e.detail));</script>
</main></body></html>"""


@pytest.fixture(scope="module")
def sites():  # -> {"app", "course", "stranger": url, "course_dir": Path}
    def pages(app_url, course_dir, stranger_dir):
        (stranger_dir / "post.html").write_text(
            '<script>parent.postMessage({type: "ae:height", height: 44}, "*");'
            'parent.postMessage({type: "ae:height", height: 33}, "*");</script>')
        page = COURSE_PAGE.read_text(encoding="utf-8").replace(PLACEHOLDER, app_url)
        (course_dir / "week6.html").write_text(page, encoding="utf-8")
        (course_dir / "canvas.html").write_text(CANVAS_PAGE.replace("APP", app_url))
        for name, query in (("report", "ask=mask-off-row2&embed=1&report=parent"),
                            ("quiet", "ask=mask-off-row2&embed=1")):
            (course_dir / f"{name}.html").write_text(
                QUESTION_PAGE.replace("APP", app_url).replace("QUERY", query))

    with course_sites(pages, "ae-frames-") as found:
        yield found


def content_frame(page, selector):
    element = page.locator(selector)
    element.scroll_into_view_if_needed()  # a lazy frame loads near the viewport
    return element.element_handle().content_frame()


def settled(frame):  # waits until the frame's height is its content's, within 2 px
    # in view, as a reader sees it: Chromium does not render a cross-origin frame scrolled out
    # of view (no layout observers, no animation frames) until it nears the viewport again
    frame.frame_element().scroll_into_view_if_needed()
    try:
        frame.wait_for_function(SETTLED_JS, arg=SETTLE_PX, timeout=RENDER_TIMEOUT_MS,
                                polling=100)
    except PlaywrightTimeoutError:  # say what the frame held, for the report
        state = frame.evaluate(f"""() => ({{inner: innerHeight, content: ({CONTENT_JS})(),
            scroll: document.documentElement.scrollHeight, url: location.href,
            sent: window.AE && AE.embedding && AE.embedding.sent,
            bodyTop: document.body.getBoundingClientRect().top,
            bodyH: document.body.getBoundingClientRect().height,
            htmlH: document.documentElement.getBoundingClientRect().height,
            scrollY: window.scrollY, display: getComputedStyle(document.body).display,
            margin: getComputedStyle(document.body).margin}})""")
        pytest.fail(f"the frame did not settle: {state}")


def frame_height(page, selector):
    return page.locator(selector).evaluate("(f) => f.clientHeight")


@contextlib.contextmanager
def opened(browser, url, **options):  # -> a page at url, in a context of its own (1100 x 900
    # unless options say), closed after
    context = browser.new_context(**(options or {"viewport": {"width": 1100, "height": 900}}))
    try:
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        page.goto(url)
        yield page
    finally:
        context.close()


@pytest.fixture(params=["desktop", "Pixel 5"])
def course(request, browser, playwright, sites):  # the course page, in that browser
    options = playwright.devices["Pixel 5"] if request.param == "Pixel 5" else {}
    with opened(browser, sites["course"] + "/week6.html", **options) as page:
        yield page


def test_both_frames_settle_to_their_content_and_ignore_strangers(course, sites):
    page = course
    head = content_frame(page, "#head-frame")
    all_idle(head)
    settled(head)
    ladder = content_frame(page, "#ladder-embed iframe")
    all_idle(ladder)
    settled(ladder)
    before = {s: frame_height(page, s) for s in ("#head-frame", "#ladder-embed iframe")}
    assert 900 not in before.values(), before  # both left their starting height
    # messages from the course page itself, from another frame of its own origin, and from a
    # frame of another origin; counted as they arrive, so the check follows all five
    page.evaluate("""(stranger) => {
        window.__fakes = 0;
        window.addEventListener("message", (e) => {
            if (e.data && [33, 44, 55, 66, 77].includes(e.data.height)) window.__fakes += 1; });
        window.postMessage({type: "ae:height", height: 77}, "*");
        const own = document.createElement("iframe");
        own.title = "another frame";
        own.srcdoc = '<script>parent.postMessage({type: "ae:height", height: 55}, "*");'
            + 'parent.postMessage({subject: "lti.frameResize", height: 66}, "*")</' + 'script>';
        const other = document.createElement("iframe");
        other.title = "another origin";
        other.src = stranger;
        document.body.append(own, other); }""", sites["stranger"] + "/post.html")
    page.wait_for_function("() => window.__fakes === 5")
    # no frame took a fake height; each still follows its own page (which may have moved a
    # few px meanwhile, as a late layout lands)
    settled(head)
    settled(ladder)
    after = {s: frame_height(page, s) for s in before}
    assert not set(after.values()) & {33, 44, 55, 66, 77}, after


def test_a_frame_grows_when_a_reply_opens(browser, sites):
    with opened(browser, sites["course"] + "/quiet.html") as page:
        frame = content_frame(page, "iframe")
        frame.wait_for_selector(".ae-asked-shown")
        all_idle(frame)  # the panel has taken its still's place: the page's own size
        settled(frame)
        frame.get_by_label("mat, three words further on").check()
        frame.get_by_role("button", name="Check").click()
        expect(frame.locator(".ae-q-verdict")).to_contain_text("Right.")
        settled(frame)  # again, the reply included: the frame holds it whole
        assert frame.evaluate("""() => document.querySelector(".ae-q-feedback")
            .getBoundingClientRect().bottom <= innerHeight""")
        assert page.evaluate("() => window.__posted.length") == 0  # not asked to report
        assert page.evaluate("() => window.__events.length") == 0


def live_settled(frame):  # -> the content's bottom, once the frame holds it with little to spare
    frame.frame_element().scroll_into_view_if_needed()
    frame.wait_for_function(f"""() => {{ const bottom = ({LIVE_BOTTOM_JS})();
        return bottom > 0 && bottom <= innerHeight + {SETTLE_PX}
            && innerHeight - bottom <= {LIVE_MARGIN_PX}; }}""", timeout=RENDER_TIMEOUT_MS,
                            polling=100)
    return frame.evaluate(LIVE_BOTTOM_JS)


def test_a_live_panel_frame_sizes_itself_and_follows_its_content(course):
    # Panel sizes a live page's html and body to its frame: the page measures the elements
    # of Bokeh's roots instead (static/embedding.js), so the frame leaves its 760 px and grows
    # when sixteen typed scores make the table longer
    page = course
    frame = content_frame(page, "#overflow-frame")
    all_idle(frame)
    before = live_settled(frame)
    assert frame_height(page, "#overflow-frame") != 760, before
    box = frame.get_by_label("scores (up to 16, commas between)")
    box.fill(", ".join(str(k) for k in range(1, 17)))
    box.press("Enter")
    frame.wait_for_function(f"() => ({LIVE_BOTTOM_JS})() > {before} + 60",
                            timeout=RENDER_TIMEOUT_MS)
    after = live_settled(frame)
    assert after > before + 60 and abs(frame_height(page, "#overflow-frame") - after) \
        <= LIVE_MARGIN_PX + SETTLE_PX, (before, after)


def test_a_fake_canvas_receives_lti_frame_resize_with_the_height(browser, sites):
    with opened(browser, sites["course"] + "/canvas.html") as page:
        tool = content_frame(page, "#tool")
        all_idle(tool)
        settled(tool)  # sized by lti.frameResize alone: this parent knows no other message
        content = tool.evaluate(CONTENT_JS)
        assert page.evaluate("() => window.__lti.at(-1)") == content
        assert abs(frame_height(page, "#tool") - content) <= SETTLE_PX and content != 600


def test_report_parent_posts_one_message_per_answer(browser, sites):
    with opened(browser, sites["course"] + "/report.html") as page:
        frame = content_frame(page, "iframe")
        frame.wait_for_selector(".ae-asked-shown")
        for option, right, n in (("on, the word right after sat", False, 1),
                                 ("mat, three words further on", True, 2)):
            frame.get_by_label(option).check()
            frame.get_by_role("button", name="Check").click()
            page.wait_for_function("(n) => window.__events.length >= n", arg=n)
            posted = page.evaluate("() => window.__posted")
            assert len(posted) == n, posted
            last = posted[-1]
            assert last["type"] == "ae:answer" and last["question"] == "mask-off-row2"
            assert last["choice"] == option.split(",")[0] and last["correct"] is right
            assert "value" not in last and last["time"].endswith("Z"), last
        assert page.evaluate("() => window.__events") == posted  # embed.js's DOM event


def embed_code(page):  # opens "Embed" -> (iframe code, script code), the dialog checked by axe
    button = page.get_by_role("button", name="Embed", exact=True)
    button.click()
    dialog = page.get_by_role("dialog", name="Embed this page")
    expect(dialog).to_be_visible()
    expect(page.locator("#ae-embed-iframe")).to_be_focused()
    found = axe().run(page, context={"include": [[".ae-embed-dialog"]]},
                      options={"resultTypes": ["violations"]}).response["violations"]
    assert not found, [(v["id"], v["impact"], v["nodes"][0]["target"]) for v in found]
    codes = (page.locator("#ae-embed-iframe").input_value(),
             page.locator("#ae-embed-script").input_value())
    dialog.get_by_role("button", name="Copy: iframe").click()
    expect(dialog.get_by_role("status")).to_have_text("Copied.")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(button).to_be_focused()
    return codes


@pytest.mark.parametrize("route", ["/heatmap", "/live/heatmap"])
def test_the_copied_embed_code_shows_the_same_state(browser, sites, route):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=sites["app"])
    try:
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        page.goto(sites["app"] + route + "?mask=off&query=2")
        all_idle(page)
        expect(page.get_by_text("0.23", exact=True).first).to_be_visible()
        iframe, script = embed_code(page)
        assert "mask=off" in iframe and "query=2" in iframe and "embed=1" in iframe, iframe
        assert page.evaluate("() => navigator.clipboard.readText()") == iframe
        name = route.strip("/").replace("/", "-")
        (sites["course_dir"] / f"pasted-{name}.html").write_text(
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>pasted</title>'
            f"</head><body><main>{iframe}\n{script}</main></body></html>")
        page.goto(sites["course"] + f"/pasted-{name}.html")
        frames = page.locator("iframe")
        expect(frames).to_have_count(2)
        for i in range(2):
            frames.nth(i).scroll_into_view_if_needed()
            framed = frames.nth(i).element_handle().content_frame()
            all_idle(framed)
            expect(framed.get_by_text("0.23", exact=True).first).to_be_visible(  # row 2, mat
                timeout=RENDER_TIMEOUT_MS)  # the deep link is applied once the panel mounts
            expect(framed.locator(".ae-embed-button, .ae-top")).to_have_count(0)  # no chrome
        settled(frames.nth(1).element_handle().content_frame())  # embed.js sizes its frame
    finally:
        context.close()


def test_live_oembed_answers_a_deep_link_and_refuses_a_foreign_url(browser, sites):
    context = browser.new_context()
    try:
        get = context.request.get
        page_url = sites["app"] + "/live/heatmap?mask=off&query=2"
        answer = get(f"{sites['app']}/oembed?url={quote(page_url, safe='')}&maxwidth=600")
        assert answer.status == 200
        body = answer.json()
        assert {"type": "rich", "version": "1.0"}.items() <= body.items()
        for field in ("html", "width", "height", "title", "provider_name"):
            assert body[field], field
        assert body["width"] == 600  # maxwidth honoured
        assert "/live/heatmap?mask=off&amp;query=2&amp;embed=1" in body["html"], body["html"]
        static = get(f"{sites['app']}/oembed?url={quote(sites['app'] + '/cost', safe='')}")
        assert "/cost?embed=1" in static.json()["html"]
        for foreign in ("https://example.com/heatmap", sites["stranger"] + "/heatmap",
                        sites["app"] + "/no-such-page"):
            assert get(f"{sites['app']}/oembed?url={quote(foreign, safe='')}").status == 404
        xml = get(f"{sites['app']}/oembed?url={quote(page_url, safe='')}&format=xml")
        assert xml.status == 501
    finally:
        context.close()


def test_every_page_static_and_live_names_its_oembed_response(browser, sites):
    context = browser.new_context()
    try:
        for route in routes.ALL_ROUTES:
            live = "/live" + route.rstrip("/") if route != "/" else "/live"
            for path in (route, live):
                text = context.request.get(sites["app"] + path).text()
                assert 'type="application/json+oembed"' in text, path
                href = text.split('type="application/json+oembed" href="')[1].split('"')[0]
                target = urljoin(sites["app"] + path, html.unescape(href))
                answer = context.request.get(target)
                assert answer.status == 200, (path, target)
                assert json.loads(answer.text())["type"] == "rich", (path, target)
    finally:
        context.close()
