"""`attention-explorable serve` as a public teaching site: its options, headers, admin page,
health check, websocket allow-list, session clean-up, several processes, and a small load.

The servers here run on free loopback ports and stop at the end of their module; the load
test is benchmarks/load.py at CI size (README, "Hosting a course", has the full run).
"""

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.hosting import cli, security, server
from app.hosting import options as server_options
from tests import servers

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))  # after the packages: never shadow `kernels`
import load

COURSE = "http://course.example.edu:8080"
PASSWORD = "correct horse battery"
OPTIONS = ["--port", "--address", "--allow-websocket-origin", "--embed-origin", "--num-procs",
           "--unused-session-lifetime", "--check-unused-sessions", "--keep-alive",
           "--reconnect", "--no-reconnect", "--reconnect-within", "--reuse-sessions",
           "--no-reuse-sessions", "--behind-proxy", "--admin", "--admin-password-file", "--show"]
ENV_VARS = ["AE_WEBSOCKET_ORIGINS", "AE_EMBED_ORIGINS", "AE_NUM_PROCS",
            "AE_UNUSED_SESSION_LIFETIME_S", "AE_CHECK_UNUSED_SESSIONS_S", "AE_KEEP_ALIVE_S",
            "AE_RECONNECT", "AE_RECONNECT_WITHIN_S", "AE_REUSE_SESSIONS", "AE_BEHIND_PROXY",
            "AE_ADMIN", "AE_ADMIN_PASSWORD", "AE_ADMIN_PASSWORD_FILE"]


def serve_args(*argv):
    return cli.parser().parse_args(["serve", *argv])


# --- options, documented ------------------------------------------------------------------

def test_every_option_is_in_help_and_in_the_readme():
    help_text = subprocess.run([sys.executable, "-m", "app.hosting.cli", "serve", "--help"],
                               capture_output=True, text=True, timeout=60, cwd=ROOT,
                               check=True).stdout
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Hosting a course" in readme
    hosting = readme.split("## Hosting a course", 1)[1]
    for option in OPTIONS:
        assert re.search(re.escape(option) + r"\b", help_text), f"{option} not in --help"
        assert option in hosting, f"{option} not in README's Hosting a course"
    for var in ENV_VARS:
        assert var in hosting, f"${var} not in README's Hosting a course"
    assert "panel serve" in hosting


def test_panel_serve_gives_the_chapter_text_first_as_our_server_does(tmp_path):
    from app.chapters import apparatus, content, page_model

    port = load.free_port()
    panel = Path(sys.executable).parent / "panel"
    with open(tmp_path / "panel.log", "w") as log:
        proc = subprocess.Popen([str(panel), "serve", "app/hosting/serve_panel.py", "--port",
                                 str(port), "--plugins", "app.hosting.compressed_assets"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        url, deadline, page = f"http://127.0.0.1:{port}/serve_panel", time.monotonic() + 90, None
        while page is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                page = urllib.request.urlopen(url, timeout=30).read().decode()
            except OSError:
                time.sleep(0.5)  # bounded poll: deadline, process and page each turn
        assert page, (tmp_path / "panel.log").read_text()[-2000:]
        # the bundles: deferred, compressed (the plugin's routes), bokeh-gl left out
        bundle = re.search(r'<script defer src="(static/js/bokeh\.min\.js[^"]*)"', page)
        assert bundle and "bokeh-gl" not in page, page[-3000:]
        asked = urllib.request.Request(f"http://127.0.0.1:{port}/{bundle.group(1)}",
                                       headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked, timeout=30) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert len(response.read()) < 400_000  # 1.27 MB as it lies on disk
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    text = " ".join(content.TAG.sub("", page.split("bokeh.min.js", 1)[0]).split())  # before Bokeh
    sections = page_model.at("/").sections
    first = next(item for item in sections[1:] if isinstance(item, str))
    lede = " ".join(content.TAG.sub("", apparatus.Apparatus(sections).prose(first)).split())
    assert lede in text, "the chapter's text is not in the page ahead of its scripts"
    assert page.count('<div class="ae-live-panel">') == len(page_model.at("/").panels)


def test_public_site_defaults():
    args = serve_args()
    settings = server.serve_settings(args, environ={})
    assert args.reconnect and args.reuse_sessions and not args.admin
    assert settings["websocket_origin"] == ["localhost:5006", "127.0.0.1:5006"]
    assert settings["unused_session_lifetime_milliseconds"] == 15_000
    assert settings["check_unused_sessions_milliseconds"] == 5_000
    assert settings["keep_alive_milliseconds"] == 30_000  # under nginx's 60 s idle timeout
    assert settings["session_token_expiration"] == 8 * 3600
    assert settings["num_procs"] == 1 and settings["address"] == "127.0.0.1"
    routes = [p[0] for p in settings["extra_patterns"]]
    assert routes[0] == "/health" and not any(r.startswith("/admin") for r in routes), \
        "the admin page must be off by default"
    assert {"/heatmap/?(index(?:-dark)?\\.html)?", "/assets/(.+)"} <= set(routes)  # the build
    headers = settings["transforms"][0]
    assert {"/heatmap", "/live/heatmap"} <= headers.embed_routes  # both may be framed
    assert "frame-ancestors 'self'" in headers.embed_csp and "example" not in headers.embed_csp


def test_flags_and_environment():
    env = {"AE_WEBSOCKET_ORIGINS": "explorable.example.edu, 127.0.0.1:8080",
           "AE_EMBED_ORIGINS": COURSE}
    settings = server.serve_settings(serve_args("--num-procs", "3"), environ=env)
    assert settings["websocket_origin"] == ["explorable.example.edu", "127.0.0.1:8080",
                                            "course.example.edu:8080"]
    assert settings["num_procs"] == 3
    assert f"frame-ancestors 'self' {COURSE}" in settings["transforms"][0].embed_csp
    # a flag wins over its variable
    settings = server.serve_settings(serve_args("--allow-websocket-origin", "a.example:80",
                                                "--embed-origin", "https://b.example"), env)
    assert settings["websocket_origin"] == ["a.example:80", "b.example"]


def test_environment_defaults_reach_the_parser(monkeypatch):
    for var, value in {"AE_NUM_PROCS": "2", "AE_UNUSED_SESSION_LIFETIME_S": "30",
                       "AE_REUSE_SESSIONS": "off", "AE_RECONNECT": "0",
                       "AE_BEHIND_PROXY": "yes"}.items():
        monkeypatch.setenv(var, value)
    args = serve_args()
    assert (args.num_procs, args.unused_session_lifetime) == (2, 30.0)
    assert not args.reuse_sessions and not args.reconnect and args.behind_proxy
    assert server.serve_settings(args, {})["use_xheaders"] is True


@pytest.mark.parametrize("origin", ["course.example.edu", "ftp://x.example", "https://",
                                    "https://a.example; script-src *", "https://a'b.example"])
def test_an_embed_origin_must_be_an_origin(origin):
    with pytest.raises(security.OriginError):
        server.serve_settings(serve_args("--embed-origin", origin), environ={})


def test_a_bad_embed_origin_is_one_line_not_a_traceback():
    out = subprocess.run([sys.executable, "-m", "app.hosting.cli", "serve",
                          "--embed-origin", "nope"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert out.returncode != 0 and "--embed-origin" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("argv, env, why", [
    (["--admin"], {}, "needs a password"),
    (["--admin"], {"AE_ADMIN_PASSWORD": "short"}, "at least 8"),
    (["--admin", "--admin-password-file", "/nonexistent/pw"], {}, "cannot read"),
])
def test_the_admin_page_needs_a_password(argv, env, why):
    with pytest.raises(SystemExit, match=why):
        server.serve_settings(serve_args(*argv), environ=env)


def test_admin_password_from_a_file(tmp_path):
    path = tmp_path / "pw"
    path.write_text(PASSWORD + "\nignored\n")
    args = serve_args("--admin", "--admin-password-file", str(path))
    assert server_options.admin_password(args, {}) == PASSWORD


# --- security pieces, without a server ---------------------------------------------------

def test_password_check():
    good = "Basic " + base64.b64encode(f"anyone:{PASSWORD}".encode()).decode()
    assert security.password_matches(good, PASSWORD)
    for header in (None, "", "Bearer x", "Basic !!!", "Basic " + base64.b64encode(b"nocolon")
                   .decode(), "Basic " + base64.b64encode(b"u:wrong").decode()):
        assert not security.password_matches(header, PASSWORD)
    assert not security.password_matches(good, "")


def fake_request(path, origin=None, query=""):
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    headers = HTTPHeaders({"Host": "127.0.0.1:5006"})
    if origin:
        headers["Origin"] = origin
    uri = path + (f"?{query}" if query else "")
    return HTTPServerRequest(start_line=RequestStartLine("GET", uri, "HTTP/1.1"),
                             headers=headers)


def transform(cls, request, headers=None, chunk=b""):
    from tornado.httputil import HTTPHeaders

    return cls(request).transform_first_chunk(200, HTTPHeaders(headers or {}), chunk, True)


def test_headers_embed_routes_name_the_course_and_nothing_else_does():
    cls = security.security_headers({"/heatmap"}, [COURSE], ["127.0.0.1:5006"])
    _, embed, _ = transform(cls, fake_request("/heatmap"))
    _, article, _ = transform(cls, fake_request("/"))
    assert embed["X-Content-Type-Options"] == article["X-Content-Type-Options"] == "nosniff"
    assert f"frame-ancestors 'self' {COURSE}" in embed["Content-Security-Policy"]
    assert "X-Frame-Options" not in embed
    assert article["Content-Security-Policy"].endswith("frame-ancestors 'self'")
    assert article["X-Frame-Options"] == "SAMEORIGIN"
    for csp in (embed["Content-Security-Policy"], article["Content-Security-Policy"]):
        assert "default-src 'self'" in csp and "connect-src 'self'" in csp
        assert "object-src 'none'" in csp and "*" not in csp


def test_autoload_is_readable_by_allowed_origins_only_and_made_absolute():
    cls = security.security_headers({"/cost"}, [COURSE], ["127.0.0.1:5006"])
    query = "bokeh-absolute-url=http://127.0.0.1:5006/cost"
    body = b'x = ["../static/extensions/panel/a.js", "http://127.0.0.1:5006/static/js/b.js"]'
    bokeh_headers = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true"}
    _, headers, chunk = transform(cls, fake_request("/cost/autoload.js", COURSE, query),
                                  bokeh_headers, body)
    assert headers["Access-Control-Allow-Origin"] == COURSE
    assert "Access-Control-Allow-Credentials" not in headers
    assert b'"http://127.0.0.1:5006/static/extensions/panel/a.js"' in chunk
    assert headers["Content-Length"] == str(len(chunk))
    _, headers, _ = transform(cls, fake_request("/cost/autoload.js", "https://evil.example",
                                                query), bokeh_headers, body)
    assert "Access-Control-Allow-Origin" not in headers
    # a hostile absolute-url cannot inject markup into the script
    _, _, chunk = transform(cls, fake_request("/cost/autoload.js", COURSE,
                                              'bokeh-absolute-url=http://a"b/x'), {}, body)
    assert chunk == body


def test_reuse_key_is_bounded():
    keys = {server.reuse_key(fake_request("/heatmap", query=f"theme={t}&mask=off"))
            for t in ("dark", "DARK", "light", "x" * 500, "", "<script>")}
    assert keys == {("/heatmap", "dark"), ("/heatmap", "default")}
    assert server.reuse_key(fake_request("/live/heatmap/")) == ("/live/heatmap", "default")


# --- a running server ----------------------------------------------------------------------

get = servers.get  # -> (status, headers, body); never raises on 4xx/5xx


@pytest.fixture(scope="module")
def site(tmp_path_factory):  # -> base url of a server with the admin page and a course site
    tmp = tmp_path_factory.mktemp("site")
    env = dict(os.environ, AE_ADMIN_PASSWORD=PASSWORD, BOKEH_PY_LOG_LEVEL="debug",
               PYTHONPATH=str(ROOT))
    port = load.free_port()
    with open(tmp / "server.log", "w") as log:
        # no cache of first paints: not what these tests are about, and building it (24
        # sessions) would cost each start about 10 s of CPU on a machine the suite keeps busy
        proc = load.start_server(port, ["--admin", "--embed-origin", COURSE,
                                        "--no-reuse-sessions",
                                        "--unused-session-lifetime", "1",
                                        "--check-unused-sessions", "0.5"], log, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        load.wait_healthy(base, proc)
        yield SimpleNamespace(url=base, proc=proc, log=tmp / "server.log")
    finally:
        load.stop_server(proc)


def test_every_kind_of_response_carries_the_headers(site):
    for path in ("/", "/heatmap", "/live", "/live/heatmap", "/health", "/no-such-page",
                 "/assets/course-page.html", "/static/js/bokeh.min.js", "/admin"):
        status, headers, _ = get(site.url + path)
        assert status in (200, 401, 404), (path, status)
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert "frame-ancestors" in headers["Content-Security-Policy"], path
    _, headers, _ = get(site.url + "/static/js/bokeh.min.js")
    assert "javascript" in headers["Content-Type"]  # nosniff needs the right type
    for path in ("/heatmap", "/live/heatmap"):
        _, heatmap, _ = get(site.url + path)
        assert COURSE in heatmap["Content-Security-Policy"], path
    for path in ("/", "/live"):
        _, article, _ = get(site.url + path)
        assert COURSE not in article["Content-Security-Policy"], path


def test_health(site):
    status, headers, body = get(site.url + "/health")
    assert (status, body) == (200, b"ok") and headers["Cache-Control"] == "no-store"


def test_admin_page_only_with_its_password(site):
    assert get(site.url + "/admin")[0] == 401
    assert get(site.url + "/admin")[1]["WWW-Authenticate"].startswith("Basic")
    wrong = "Basic " + base64.b64encode(b"admin:guess").decode()
    assert get(site.url + "/admin", {"Authorization": wrong})[0] == 401
    right = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    status, _, body = get(site.url + "/admin", {"Authorization": right})
    assert status == 200 and b"Admin" in body
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    assert get(site.url + "/admin/ws", upgrade)[0] == 401


def session_errors(base, path="/live/heatmap", origin=None, n=1):  # -> [error text] of n sessions
    async def one():
        s = load.Session(base, path, origin=origin)
        try:
            await s.open(load.AsyncHTTPClient(force_instance=True))
            toggle = load.find_model(s.doc, "Toggle", label="causal mask")
            await s.change(toggle, "active", False)
            return None
        except load.LoadError as e:
            return str(e)
        finally:
            await s.close()

    async def all_of_them():
        return await asyncio.wait_for(asyncio.gather(*(one() for _ in range(n))), 60)

    return [e for e in load.run_sync(all_of_them()) if e]


def test_websocket_origins_the_site_and_the_course_only(site):
    assert session_errors(site.url) == []
    assert session_errors(site.url, origin=COURSE) == []
    refused = session_errors(site.url, origin="https://evil.example")
    assert refused and "403" in refused[0]


def test_a_deep_link_gets_its_own_session_while_the_first_paint_is_reused(site):
    status, _, body = get(site.url + "/live/heatmap?length=99")
    assert status == 200 and b"out of range" not in body  # the warmed, plain first paint

    async def pulled():
        s = load.Session(site.url, "/live/heatmap?length=99")
        try:
            await s.open(load.AsyncHTTPClient(force_instance=True))
            return json.dumps(s.doc)
        finally:
            await s.close()

    assert "length=99 is out of range; using 8" in load.run_sync(pulled())


def test_unused_sessions_are_dropped(site):
    before = site.log.read_text().count("Discarding session")
    assert session_errors(site.url, n=4) == []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if site.log.read_text().count("Discarding session") - before >= 4:
            break
        time.sleep(0.25)  # bounded poll: the deadline and the log each turn
    assert site.log.read_text().count("Discarding session") - before >= 4
    assert site.proc.poll() is None


# --- several processes ---------------------------------------------------------------------

def test_num_procs_serves_from_forked_processes_that_end_with_their_parent(tmp_path):
    port = load.free_port()
    with open(tmp_path / "server.log", "w") as log:
        proc = load.start_server(port, ["--num-procs", "2", "--no-reuse-sessions"], log)
    base = f"http://127.0.0.1:{port}"
    try:
        load.wait_healthy(base, proc)
        children = [p for p in load.process_tree(proc.pid) if p != proc.pid]
        assert len(children) == 2, (tmp_path / "server.log").read_text()[-3000:]
        assert session_errors(base, n=6) == []
    finally:
        load.stop_server(proc)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(Path(f"/proc/{c}").exists() for c in children):
        time.sleep(0.2)  # bounded poll: the deadline and the processes each turn
    alive = [c for c in children if Path(f"/proc/{c}/stat").exists()
             and Path(f"/proc/{c}/stat").read_text().split(") ")[1][0] != "Z"]
    assert not alive, f"server processes outlived their parent: {alive}"


# --- load, at CI size ----------------------------------------------------------------------

# Not serial: what it asserts holds beside the other tests' worker (no errors, memory back
# within 10%, round trips under 5 s: 0.17 s at p95 with both cores kept busy, 97 s for the
# run), and its server keeps one core busy, which alone in the serial pass left the other
# idle. The time limit guards against a hang; the README's figures come from the benchmark.
def test_load_ci_size_no_errors_and_memory_back_after_each_round():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "load.py"), "--json",
                          "--sessions", "30", "--interactions", "3", "--rounds", "3",
                          "--think", "0.2", "0.6", "--lifetime", "1", "--time-limit", "240"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["errors"] == 0, report["error_samples"]
    assert report["interactions"] == 30 * 3 * 3
    assert report["memory_ok"], report["rss_drift_vs_first"]
    assert report["round_trip_p95_ms"] < 5000, report
