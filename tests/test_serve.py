"""`attention-explorable serve` starts and answers every route over HTTP: the static build at
"/", "/math", "/heatmap", ... and the live Panel sessions at "/live", "/live/math", ..."""

import gzip
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from app.hosting.server import PANEL_ROUTES
from app.hosting.static_site import live_route
from app.kit import registry
from tests.servers import get

STATIC_ROUTES = [*(c.route for c in registry.CHAPTERS), "/numbers", *PANEL_ROUTES]
SESSION_TOKEN = re.compile(rb'"token"\s*:\s*"eyJ')  # a Bokeh server page's session (a JWT)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    # without the reused first paints (--no-reuse-sessions): each live GET builds its own
    # session, and the server is healthy without warming 48 of them (about 14 s of CPU)
    proc = subprocess.Popen([sys.executable, "-m", "app.hosting.cli", "serve", "--port", str(port),
                             "--no-reuse-sessions"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # a first build at start-up takes about 10 s here
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(base + "/health", timeout=5)
            break
        except OSError:
            time.sleep(0.3)  # bounded poll: the deadline and /health each turn
    else:
        proc.kill()
        pytest.fail("server did not answer within 120 s")
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def test_every_route_answers_static_and_live(server):
    for route in STATIC_ROUTES:
        status, _, body = get(server + route)
        assert status == 200 and b"<html" in body.lower(), route
        assert not SESSION_TOKEN.search(body), f"{route} is not the static page"
    for route in map(live_route, STATIC_ROUTES):
        status, _, body = get(server + route)
        assert status == 200 and b"<html" in body.lower(), route
        assert SESSION_TOKEN.search(body), f"{route} carries no session"


def test_page_references_no_other_host(server):
    for route in ("/", "/live"):
        body = get(server + route)[2].decode()
        for marker in ("cdn.", "googleapis", "unpkg", "jsdelivr", "cdnjs"):
            assert marker not in body, (route, marker)


def test_a_page_with_or_without_its_slash_or_a_query_is_one_file(server):
    bodies = {get(server + path)[2] for path in
              ("/heatmap", "/heatmap/", "/heatmap/index.html", "/heatmap?mask=off&query=2")}
    assert len(bodies) == 1


def test_pages_revalidate_and_assets_are_cached(server):
    status, headers, _ = get(server + "/heatmap")
    assert status == 200 and headers["Cache-Control"] == "no-cache" and headers["ETag"]
    status, _, body = get(server + "/heatmap", {"If-None-Match": headers["ETag"]})
    assert status == 304 and body == b""
    status, headers, _ = get(server + "/assets/" + asset_path(server, "bokeh.min.js"))
    assert status == 200 and "max-age=86400" in headers["Cache-Control"]
    assert headers["Content-Type"].startswith("text/javascript")


def test_text_goes_out_precompressed_to_a_client_that_takes_gzip(server):
    _, plain_headers, plain = get(server + "/cost")
    status, headers, packed = get(server + "/cost", {"Accept-Encoding": "gzip, deflate"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding" and plain_headers["Vary"] == "Accept-Encoding"
    assert "Content-Encoding" not in plain_headers
    assert gzip.decompress(packed) == plain and len(packed) < len(plain) / 2.5
    assert headers["ETag"] != plain_headers["ETag"]


def test_a_browser_that_takes_brotli_gets_the_smaller_copy(server):
    import brotli

    _, _, plain = get(server + "/assets/" + asset_path(server, "bokeh.min.js"))
    status, headers, packed = get(server + "/assets/" + asset_path(server, "bokeh.min.js"),
                                  {"Accept-Encoding": "gzip, deflate, br"})
    _, _, gz = get(server + "/assets/" + asset_path(server, "bokeh.min.js"),
                   {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "br"
    assert brotli.decompress(packed) == plain and len(packed) < len(gz)


def asset_path(server, name):  # -> the path under /assets/ of a file the head page loads
    import re

    page = get(server + "/heatmap")[2].decode()
    return re.search(rf'assets/([^"]*/{re.escape(name)})"', page).group(1)


def test_static_pages_carry_the_security_headers(server):
    for path in ("/", "/heatmap", "/assets/course-page.html", "/embed/heatmap.html"):
        status, headers, _ = get(server + path)
        assert status == 200, path
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert "frame-ancestors 'self'" in headers["Content-Security-Policy"], path
    assert get(server + "/")[1]["X-Frame-Options"] == "SAMEORIGIN"
    assert get(server + "/heatmap")[1]["X-Frame-Options"] is None  # embeddable


def test_nothing_outside_the_build_is_served(server):
    for path in ("/.build-inputs", "/assets/../.build-inputs", "/assets/%2e%2e/.build-inputs",
                 "/embed/../index.html", "/no-such-page"):
        assert get(server + path)[0] == 404, path
    assert get(server + "/health")[2] == b"ok"


def test_a_live_page_with_its_slash_finds_panels_files(server):
    # Panel names them relative to the route without the slash; /live/ asks under /live/static/
    for path in ("/live/", "/live/heatmap/"):
        assert SESSION_TOKEN.search(get(server + path)[2]), path
    status, headers, body = get(server + "/live/static/extensions/panel/panel.min.js?v=1")
    assert status == 200 and headers["Content-Type"].startswith(("application/javascript",
                                                                   "text/javascript")), status
    assert len(body) > 100_000


def test_a_dark_query_gets_the_dark_page(server):
    light, dark = get(server + "/heatmap")[2], get(server + "/heatmap?theme=dark")[2]
    assert b'data-ae-theme="default"' in light
    assert b'data-ae-theme="dark"' in dark
    assert get(server + "/heatmap/index-dark.html")[2] == dark
