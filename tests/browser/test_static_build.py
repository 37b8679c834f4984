"""The static build in Chromium: the pages of `attention-explorable build`, opened from a plain
static file server (Python's http.server, which knows nothing of Panel) and from file://.

Each page must render with no console error, no request to any other host, no websocket, and
show the documents' default numbers: the head's 0.77 (row 2, "sat", on "cat") and the cost
panel's Qwen3-8B figures (attention 7.4% of prefill at 4,096 tokens, crossover 51,324).
"""

import functools
import http.server
import re
import threading
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DOCUMENT_IDLE_JS, RENDER_TIMEOUT_MS

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def built(site_build):  # -> the build's folder (tests/conftest.py: one build for the run)
    return site_build


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def file_server(built):  # -> "http://127.0.0.1:PORT", a plain static server of the build
    handler = functools.partial(QuietHandler, directory=str(built))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class Watch:
    """Console errors, failed responses, requests off the page's own host, websockets."""

    def __init__(self, page, host):
        self.problems = []
        self.host = host  # None: file://, so any http(s) request is off-host
        page.on("console", lambda m: m.type == "error" and self.problems.append(m.text))
        page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        page.on("request", lambda r: self._request(r.url))
        page.on("response", lambda r: r.status >= 400
                and self.problems.append(f"HTTP {r.status} {r.url}"))
        page.on("websocket", lambda ws: self.problems.append(f"websocket {ws.url}"))

    def _request(self, url):
        parts = urlsplit(url)
        if parts.scheme in ("file", "blob", "data"):
            if self.host is not None and parts.scheme == "file":
                self.problems.append(f"file request from an http page: {url}")
            return
        if self.host is None or parts.netloc != self.host:
            self.problems.append(f"request off the page's host: {url}")


@pytest.fixture
def open_built(browser, built, file_server):  # open_built("/heatmap", "http") -> page
    contexts = []

    def _open(route, via):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        if via == "http":
            url = file_server + route
            watch = Watch(page, urlsplit(file_server).netloc)
        else:
            folder = built / route.strip("/") if route != "/" else built
            url = (folder / "index.html").as_uri()
            watch = Watch(page, None)
        contexts.append((context, watch))
        page.goto(url)
        page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
        expect(page.locator(".pn-loading")).to_have_count(0)
        return page

    yield _open
    close_watched(contexts)


def close_watched(contexts):  # [(context, Watch)] -> closed; fails on what their pages did
    problems = []
    for context, watch in contexts:
        context.close()
        problems += watch.problems
    assert not problems, problems


def says(page, pattern):
    return page.get_by_text(re.compile(pattern)).first


VIA = ["http", "file"]


@pytest.mark.parametrize("via", VIA)
def test_head_page_shows_the_documents_weights(open_built, via):
    page = open_built("/heatmap", via)
    expect(page.get_by_text("0.77", exact=True).first).to_be_visible()  # row 2 (sat) on cat
    expect(page.get_by_text("0.07", exact=True).first).to_be_visible()  # row 2 on the
    expect(page.get_by_text("0.23", exact=True)).to_have_count(0)  # mat is masked


@pytest.mark.parametrize("via", VIA)
def test_cost_page_counts_qwen3_8b(open_built, via):
    page = open_built("/cost", via)
    expect(says(page, r"^7\.4%$")).to_be_visible()  # attention's share of prefill at 4,096
    expect(says(page, r"51,324")).to_be_visible()  # the crossover, triangular kernel
    expect(says(page, r"Counting\s+Qwen3-8B")).to_be_visible()


@pytest.mark.parametrize("via", VIA)
def test_first_chapter_renders_every_panel(open_built, via):
    page = open_built("/", via)
    expect(page).to_have_title("Scaled dot-product attention, worked")
    expect(page.get_by_role("heading", name="Scaled dot-product attention, worked")
           ).to_be_visible()
    expect(page.get_by_text("0.77", exact=True).first).to_be_visible()  # the head, in place
    expect(says(page, r"51,324")).to_be_visible()  # the cost panel, in place


def test_chapter_link_leads_to_the_second_chapter_from_file(open_built):
    page = open_built("/", "file")
    page.get_by_role("link", name=re.compile("Next: dot products")).click()
    expect(page).to_have_url(re.compile(r"/math/index\.html$"))
    expect(page.get_by_role("heading", name="Dot products, softmax and attention math")
           ).to_be_visible()


def test_embed_page_frames_its_panel(browser, file_server):
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page, urlsplit(file_server).netloc)
    try:
        page.goto(file_server + "/embed/heatmap.html")
        snippet = page.locator("#snippet")
        expect(snippet).to_contain_text(f'<iframe src="{file_server}/heatmap/?embed=1"')
        frame = page.frame_locator("#demo")
        expect(frame.get_by_text("0.77", exact=True).first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS)
    finally:
        context.close()
    assert not watch.problems, watch.problems


def test_a_script_embed_puts_the_panel_in_a_course_page_at_its_deep_link(browser, file_server):
    # the course page lives elsewhere (here: no origin at all); only embed.js comes from us
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(file_server + "/embed/heatmap.html")
        expect(page.locator("#script")).to_contain_text(f'src="{file_server}/embed.js"')
        page.set_content(f'<main><h1>Week 3</h1><script src="{file_server}/embed.js" '
                         'data-panel="heatmap" data-query="mask=off" data-height="700">'
                         "</script></main>")
        frame = page.frame_locator("iframe[title='Attention explorable: heatmap']")
        expect(frame.get_by_text("0.23", exact=True).first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS)  # mask off: row 2 now reaches "mat"
        assert page.locator("iframe").get_attribute("height") == "700"
    finally:
        context.close()


@pytest.mark.parametrize("route, live", [("/cost", "/live/cost"), ("/math", "/live/math"),
                                         ("/", "/live")])
def test_the_live_button_leads_to_the_same_page_live_in_its_state(open_built, file_server,
                                                                  route, live):
    page = open_built(route + "?theme=default", "http")
    url = page.evaluate("() => AE.url.liveUrl()")
    assert url.startswith(file_server + live + "?"), url
    assert "theme=default" in url
