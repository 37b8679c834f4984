"""oEmbed (app/hosting/oembed.py): the static responses' required fields (oEmbed 1.0, section
2.3.4: type, version, and for "rich" html, width, height), and the live endpoint's answers and
error codes, against the handler in a Tornado app of its own (no Panel, no server process)."""

import json
from urllib.parse import quote

import pytest
from tornado import testing, web

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


class EndpointTest(testing.AsyncHTTPTestCase):
    def get_app(self):
        return web.Application(oembed.patterns())

    def ask(self, url, extra=""):
        return self.fetch(f"/oembed?url={quote(url, safe='')}{extra}")

    def own(self, path):
        return f"http://127.0.0.1:{self.get_http_port()}{path}"

    def test_a_deep_link_gets_its_frame_within_maxwidth_and_maxheight(self):
        answer = self.ask(self.own("/live/heatmap?mask=off&query=2"),
                          "&maxwidth=500&maxheight=400&format=json")
        assert answer.code == 200
        assert answer.headers["Content-Type"].startswith("application/json")
        body = json.loads(answer.body)
        assert (body["type"], body["version"], body["width"], body["height"]) == \
            ("rich", "1.0", 500, 400)
        assert f'src="{self.own("/live/heatmap")}?mask=off&amp;query=2&amp;embed=1"' \
            in body["html"]

    def test_a_path_of_ours_is_read_against_this_host(self):
        body = json.loads(self.ask("/math").body)
        assert f'src="{self.own("/math")}?embed=1"' in body["html"]

    def test_foreign_or_unknown_urls_are_404_another_format_501_no_url_400(self):
        for url in ("https://example.com/heatmap", "http://127.0.0.1:1/heatmap",
                    "ftp://127.0.0.1/heatmap", self.own("/no-such-page")):
            assert self.ask(url).code == 404, url
        assert self.ask(self.own("/heatmap"), "&format=xml").code == 501
        assert self.fetch("/oembed").code == 400
