"""Browser tests: the real server, driven by Debian's Chromium through pytest-playwright.

One server and one browser serve the whole session. Every test's `page` records console
errors and any request that leaves our own server; either fails the test at teardown.
Chromium missing is a failure, not a skip: these tests are how we know the pages work.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests import servers
from tests.browser import readiness

ROOT = Path(__file__).resolve().parents[2]
# Chromium's headless shell (Debian's chromium-headless-shell, the same version and engine as
# its chromium), as Playwright itself runs headless Chromium: it loaded our pages for about
# half the CPU of the full browser in headless mode, and CPU is what bounds the suite here.
# The benchmarks, which time what a reader's browser does, run the full browser.
CHROMIUM = os.environ.get("AE_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Limits on waits for a condition, not pauses: generous, because a machine running the
# suite beside other work (two cores, a build, a second server) takes many times longer.
SERVER_START_TIMEOUT_S = 180  # the server builds the static site first when it is stale
RENDER_TIMEOUT_MS = 30_000
EXPECT_TIMEOUT_MS = 15_000  # Playwright's expect() waits 5 s by default
expect.set_options(timeout=EXPECT_TIMEOUT_MS)

# DOCUMENT_IDLE_JS (tests/browser/readiness.py): every Bokeh document on the page has rendered
DOCUMENT_IDLE_JS = readiness.DOCUMENT_IDLE_JS



def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port, log):  # -> Popen of `python -m app.hosting.cli serve --port PORT`
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "app.hosting.cli", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_until_answering(proc, url, log_path, timeout=SERVER_START_TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited with {proc.returncode} before answering:\n"
                        + Path(log_path).read_text(errors="replace")[-4000:])
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)  # bounded poll: the deadline, the process and the URL
    pytest.fail(f"the server did not answer {url} within {timeout} s:\n"
                + Path(log_path).read_text(errors="replace")[-4000:])


stop = servers.stop  # test_embed and test_frames take it from here


@pytest.fixture(scope="session")
def server():  # -> "http://127.0.0.1:PORT", one server for the whole session
    port = free_port()
    with tempfile.NamedTemporaryFile("w+", prefix="ae-server-", suffix=".log",
                                     delete=False) as log:
        proc = start_server(port, log)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_answering(proc, url + "/", log.name)
            yield url
        finally:
            stop(proc)
    os.unlink(log.name)


@pytest.fixture(scope="session")
def base_url(server):  # page.goto("/heatmap") resolves against our server
    return server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium-headless-shell (`make "
                    "browser`, as root: apt-get update && apt-get install -y chromium "
                    "chromium-headless-shell) or point $AE_TEST_CHROMIUM at one. "
                    "`playwright install` cannot download a browser here.", pytrace=False)
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def disk_context(browser):  # a context for pages from disk: starts no server
    # Not pytest-playwright's `context`: that one's arguments are computed once a session,
    # with the first base_url asked for, so a module that overrode base_url to None left
    # every later module in the same process (an xdist worker) without the server's address.
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture
def static_page(disk_context, site):  # -> open(name, query=""): a page of the module's `site`
    # folder, from disk, whose console errors and requests to a host fail the test
    from tests.browser.static_pages import watched_pages  # it builds on this file
    open_, check = watched_pages(disk_context, lambda name: (site / name).as_uri())
    yield open_
    check()


class PageWatch:
    """What a page did that it should not: console errors, requests off our host."""

    def __init__(self, host):
        self.host = host
        self.errors = []
        self.off_host = []

    def on_console(self, message):
        if message.type == "error":
            self.errors.append(message.text)

    def on_page_error(self, error):
        self.errors.append(f"uncaught: {error}")

    def on_url(self, url):
        parts = urlsplit(url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != self.host:
            self.off_host.append(url)

    def watch(self, page):  # -> page, its console, errors, requests and sockets recorded
        page.on("console", self.on_console)
        page.on("pageerror", self.on_page_error)
        page.on("request", lambda request: self.on_url(request.url))
        page.on("websocket", lambda ws: self.on_url(ws.url))
        return page

    def check(self):  # fails with what the watched pages did that they should not
        assert not self.errors, f"console errors: {self.errors}"
        assert not self.off_host, f"requests off our server: {self.off_host}"


@pytest.fixture
def page_watch(server):
    return PageWatch(urlsplit(server).netloc)


@pytest.fixture
def page(context, page_watch):
    page = page_watch.watch(context.new_page())
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    yield page
    page.close()
    page_watch.check()


def wait_for_render(page):  # block until the Bokeh document has drawn every root
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)


@pytest.fixture
def rendered():  # rendered(page): wait until its Bokeh document has drawn
    return wait_for_render


@pytest.fixture
def open_page(page):  # open_page("/heatmap?mask=off") -> the page, rendered
    def _open(path):
        page.goto(path)
        wait_for_render(page)
        return page

    return _open
