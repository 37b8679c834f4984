"""oEmbed (app/hosting/oembed.py): the static responses' required fields (oEmbed 1.0, section
2.3.4: type, version, and for "rich" html, width, height), and the live endpoint's answers and
error codes, against the handler in a Tornado app of its own (no Panel, no server process)."""

import asyncio
import json
import threading
import urllib.error
import urllib.request
from urllib.parse import quote

import pytest
from tornado import httpserver, netutil, web

from app.hosting import oembed, routes

SITE = "https://explorable.example.edu"
REQUIRED = {"type": str, "version": str, "html": str, "width": int, "height": int}


@pytest.mark.parametrize("site_url", [SITE, None])
def test_every_static_response_has_the_required_fields(site_url):
    files = oembed.static_files(site_url)
    assert set(files) == {f"oembed/{oembed.name(r)}.json" for r in routes.ALL_ROUTES}
    for path, data in files.items():
        body = json.loads(data)
        for field, kind in REQUIRED.items():
            assert isinstance(body[field], kind) and body[field], (path, field)
        assert body["type"] == "rich" and body["version"] == "1.0"
        assert body["title"] and body["provider_name"] == routes.SITE_TITLE
        assert body["html"].startswith("<iframe ") and "embed=1" in body["html"]
        route = next(r for r in routes.ALL_ROUTES if path.endswith(f"/{oembed.name(r)}.json"))
        src = f'src="{site_url or ""}{route}?embed=1"'
        assert src in body["html"], (path, body["html"])
        assert ("provider_url" in body) == bool(site_url)


def test_static_href_is_relative_without_a_site_url():
    assert oembed.static_href("/heatmap", "../") == "../oembed/heatmap.json"
    assert oembed.static_href("/", "", SITE) == f"{SITE}/oembed/index.json"


@pytest.mark.parametrize("path, route", [
    ("/", "/"), ("/live", "/"), ("/live/", "/"), ("/math/", "/math"),
    ("/heatmap/index-dark.html", "/heatmap"), ("/live/cost", "/cost"),
    ("/nope", None), ("/live/nope", None), ("/assets/course-page.html", None)])
def test_route_of(path, route):
    assert oembed.route_of(path) == route


@pytest.fixture(scope="module")
def endpoint():
    """The handler in a Tornado app of its own, on its own loop in a thread: a browser test
    earlier in the same worker leaves Playwright's loop running on the main thread, where a
    second loop may not run."""
    started, box = threading.Event(), {}

    def serve():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        sockets = netutil.bind_sockets(0, "127.0.0.1")
        server = httpserver.HTTPServer(web.Application(oembed.patterns()))
        server.add_sockets(sockets)
        box.update(port=sockets[0].getsockname()[1], loop=loop)
        started.set()
        loop.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    assert started.wait(10), "the oEmbed test server did not start"
    yield f"http://127.0.0.1:{box['port']}"
    box["loop"].call_soon_threadsafe(box["loop"].stop)


def fetch(url):
    """(status, headers, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def ask(endpoint, url, extra=""):
    return fetch(f"{endpoint}/oembed?url={quote(url, safe='')}{extra}")


def test_a_deep_link_gets_its_frame_within_maxwidth_and_maxheight(endpoint):
    code, headers, data = ask(endpoint, f"{endpoint}/live/heatmap?mask=off&query=2",
                              "&maxwidth=500&maxheight=400&format=json")
    assert code == 200
    assert headers["Content-Type"].startswith("application/json")
    body = json.loads(data)
    assert (body["type"], body["version"], body["width"], body["height"]) == \
        ("rich", "1.0", 500, 400)
    assert f'src="{endpoint}/live/heatmap?mask=off&amp;query=2&amp;embed=1"' in body["html"]


def test_a_path_of_ours_is_read_against_this_host(endpoint):
    body = json.loads(ask(endpoint, "/math")[2])
    assert f'src="{endpoint}/math?embed=1"' in body["html"]


def test_foreign_or_unknown_urls_are_404_another_format_501_no_url_400(endpoint):
    for url in ("https://example.com/heatmap", "http://127.0.0.1:1/heatmap",
                "ftp://127.0.0.1/heatmap", f"{endpoint}/no-such-page"):
        assert ask(endpoint, url)[0] == 404, url
    assert ask(endpoint, f"{endpoint}/heatmap", "&format=xml")[0] == 501
    assert fetch(f"{endpoint}/oembed")[0] == 400
