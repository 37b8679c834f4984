"""The scale-out recipe, run: Debian's nginx from deploy/nginx.conf in front of two app
processes on loopback. The static build comes from disk (precompressed, with the app's cache
and security headers); live sessions open through nginx (page, websocket, a click answered), a
browser's cookie keeps it on one process, /health answers through nginx, when one process is
stopped new sessions still open through the other, pinned browsers included, and with every
process stopped the static pages are still served.

nginx missing is a failure, not a skip: `make test` installs it (make system-packages).
"""

import asyncio
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests import servers

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))  # after the packages: never shadow `kernels`
sys.path.append(str(ROOT / "deploy"))
import load
import render_nginx

TEMPLATE = ROOT / "deploy" / "nginx.conf"
NGINX = os.environ.get("NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
STEP_S = 60
LOG_WAIT_S = 30  # a limit on waiting for nginx's access log, not a pause


def render(template, run_dir, listen, backends, site_root, server_name="localhost",
           frame_ancestors="'self'"):  # the deploy script's rendering, on loopback ports
    return render_nginx.render(template, run_dir=run_dir, listen=listen,
                               server_name=server_name, site_root=site_root,
                               frame_ancestors=frame_ancestors,
                               backends=[f"127.0.0.1:{port}" for port in backends])


def test_template_renders_every_field():
    text = render(TEMPLATE.read_text(), "/run/x", "127.0.0.1:8080", [5101, 5102], "/srv/site")
    assert not re.search(r"\{\{\w+\}\}", text)
    assert "server 127.0.0.1:5101 max_fails=1" in text and "hash $ae_sticky_key consistent" in text
    assert "proxy_set_header Upgrade $http_upgrade" in text
    assert "root /srv/site;" in text and "gzip_static on;" in text
    with pytest.raises(ValueError, match="nothing fills: \\['nope'\\]"):
        render("{{nope}} {{listen}}", "/run/x", "80", [5101], "/srv/site")


def test_the_rendered_config_names_every_single_panel_page_as_embeddable():
    from app.hosting.server import PANEL_ROUTES

    text = render(TEMPLATE.read_text(), "/run/x", "80", [5101], "/srv/site")
    patterns = re.findall(r'"~\^/\(([a-z|-]+)\)', text)
    assert len(patterns) == 2  # frame-ancestors and X-Frame-Options
    for pattern in patterns:
        assert pattern.split("|") == [r.strip("/") for r in PANEL_ROUTES]


def test_the_script_writes_the_config_from_its_command_line(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "deploy" / "render_nginx.py"),
                          "--run-dir", "/run/x", "--listen", "80", "--server-name", "localhost",
                          "--site-root", "/srv/site", "--backend", "127.0.0.1:5101"],
                         capture_output=True, text=True, timeout=60, check=True, cwd=tmp_path)
    assert out.stdout == render(TEMPLATE.read_text(), "/run/x", "80", [5101], "/srv/site")


def nginx_binary():
    if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
        pytest.fail(f"nginx is missing ({NGINX}): install Debian's nginx (`make system-packages`,"
                    " as root: apt-get install -y nginx) or point $NGINX at one", pytrace=False)
    return NGINX


@pytest.fixture(scope="module")
def stack(site_build):  # -> {"url": nginx url, "apps": [(port, Popen, log path)], "nginx": Popen}
    binary = nginx_binary()
    run_dir = Path(tempfile.mkdtemp(prefix="ae-nginx-"))
    run_dir.chmod(0o755)  # nginx's workers (not root) must reach their temp folders
    nginx_port = load.free_port()
    public = f"127.0.0.1:{nginx_port}"
    site = run_dir / "site"  # a copy of the run's build (tests/conftest.py), where nginx's
    shutil.copytree(site_build, site)  # workers can read it wherever the checkout lies
    site.chmod(0o755)
    env = dict(os.environ, AE_BUILD_DIR=str(site))  # the apps find it current
    apps = []
    nginx = None
    try:
        for _ in range(2):
            port = load.free_port()
            log_path = run_dir / f"app-{port}.log"
            with open(log_path, "w") as log:  # the child keeps its own copy of the descriptor
                # no reused first paints to warm (about 14 s of CPU each): what is checked
                # here is the proxy's routing, headers and sticky sessions
                proc = load.start_server(port, ["--behind-proxy", "--allow-websocket-origin",
                                                public, "--check-unused-sessions", "1",
                                                "--no-reuse-sessions"], log, env=env)
            apps.append((port, proc, log_path))
        for port, proc, _ in apps:
            load.wait_healthy(f"http://127.0.0.1:{port}", proc)
        conf = run_dir / "nginx.conf"
        conf.write_text(render(TEMPLATE.read_text(), run_dir, public, [p for p, _, _ in apps],
                               site))
        check = subprocess.run([binary, "-t", "-p", str(run_dir), "-e", str(run_dir / "error.log"),
                                "-c", str(conf)], capture_output=True, text=True, timeout=30,
                               check=False)
        assert check.returncode == 0, check.stderr
        nginx = subprocess.Popen([binary, "-p", str(run_dir), "-e", str(run_dir / "error.log"),
                                  "-c", str(conf), "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        load.wait_healthy(f"http://{public}", nginx, timeout=30)
        yield {"url": f"http://{public}", "apps": apps, "nginx": nginx, "run_dir": run_dir,
               "site": site}
    finally:
        if nginx is not None:
            nginx.terminate()
            try:
                nginx.wait(timeout=15)
            except subprocess.TimeoutExpired:
                nginx.kill()
        for _, proc, _ in apps:
            load.stop_server(proc)
        shutil.rmtree(run_dir, ignore_errors=True)


def open_and_click(url, n, cookie=None):  # -> (opened sessions' round trips, errors)
    async def one():
        s = load.Session(url, "/live/heatmap")
        if cookie:
            s.cookies["ae_backend"] = cookie
        http = load.AsyncHTTPClient(force_instance=True)
        try:
            await s.open(http)
            toggle = load.find_model(s.doc, "Toggle", label="causal mask")
            seconds, patch = await s.change(toggle, "active", False)
            assert "0.23" in load.patch_text(patch)  # row 2 now sees "mat"
            kept = s.cookies.get("ae_backend")
            return seconds, kept.value if kept else None
        finally:
            await s.close()
            http.close()

    async def all_of_them():
        return await asyncio.wait_for(asyncio.gather(*(one() for _ in range(n)),
                                                     return_exceptions=True), STEP_S)

    results = load.run_sync(all_of_them())
    return ([r for r in results if not isinstance(r, BaseException)],
            [r for r in results if isinstance(r, BaseException)])


def access_lines(stack):  # nginx's access log, one line per finished request
    path = stack["run_dir"] / "access.log"
    return path.read_text().splitlines() if path.exists() else []


def logged(stack, what, count, since=0):  # -> the access log's lines from `since`, once `count`
    # of them name `what` (or LOG_WAIT_S has passed): nginx writes a request's line when it
    # has finished, a websocket's when it closes, which can trail the client's close by a while
    deadline = time.monotonic() + LOG_WAIT_S
    while True:
        lines = access_lines(stack)[since:]
        if sum(what in line for line in lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)  # bounded poll: LOG_WAIT_S and the count each turn


def upstreams(lines, what):  # lines of the access log -> [upstream=...] of requests for `what`
    return [line.rsplit("upstream=", 1)[1].split()[0] for line in lines if what in line]


def get(url, headers=None):  # -> (status, headers, body); never raises on 4xx/5xx
    return servers.get(url, headers, timeout=10)


def from_disk(stack, path):  # -> True when nginx's log says it answered path itself
    ups = upstreams(logged(stack, f"GET {path} ", 1), f"GET {path} ")
    return bool(ups) and ups[-1] == "-"


def test_static_pages_come_from_disk_precompressed_with_the_apps_headers(stack):
    url, site = stack["url"], stack["site"]
    for path, file in (("/", "index.html"), ("/math", "math/index.html"),
                       ("/heatmap", "heatmap/index.html"), ("/heatmap/", "heatmap/index.html"),
                       ("/cost?model=gpt2", "cost/index.html")):
        status, headers, body = get(url + path)
        assert status == 200 and body == (site / file).read_bytes(), path
        assert headers["Cache-Control"] == "no-cache" and headers["ETag"], path
        assert headers["Content-Type"].startswith("text/html"), path
        assert from_disk(stack, path), path
    status, headers, packed = get(url + "/heatmap", {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(packed) == (site / "heatmap" / "index.html").read_bytes()
    # the app's security headers: the panel may be framed, the chapter only by this site
    for path, framed in (("/heatmap", True), ("/", False)):
        _, headers, _ = get(url + path)
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Content-Security-Policy"].endswith("frame-ancestors 'self'")
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert (headers["X-Frame-Options"] is None) == framed, path
    # the page's assets: from disk, cached for a day
    page = (site / "heatmap" / "index.html").read_text(encoding="utf-8")
    # the page names Bokeh's script in its islands' config, loaded when the panel mounts
    script = "/" + re.search(r'"\.\./(assets/bokeh-[^"]+)"', page).group(1)
    status, headers, _ = get(url + script, {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert "max-age=86400" in headers["Cache-Control"]
    assert headers["Content-Type"].startswith("text/javascript")
    assert from_disk(stack, script)
    assert get(url + "/.build-inputs")[0] == 404
    # what the build does not hold comes from the app: the example course page
    status, _, body = get(url + "/assets/course-page.html")
    assert status == 200 and b"course page" in body


def test_health_answers_through_nginx(stack):
    with urllib.request.urlopen(stack["url"] + "/health", timeout=10) as r:
        assert r.status == 200 and r.read() == b"ok"


def test_sessions_open_through_nginx_and_a_cookie_keeps_one_process(stack):
    opened, errors = open_and_click(stack["url"], 16)
    assert not errors, errors
    assert len(opened) == 16
    assert all(cookie is not None for _, cookie in opened), "nginx set no ae_backend cookie"
    served = set(upstreams(logged(stack, "GET /live/heatmap/ws", 16), "GET /live/heatmap/ws"))
    assert len(served) == 2, f"16 new browsers all went to one process: {served}"
    # a browser that holds a cookie: all its pages and sockets reach the same process (counted
    # from here, once every socket above is in the log: a late one was counted as this one's)
    before = len(access_lines(stack))
    _, errors = open_and_click(stack["url"], 6, cookie="student-42")
    assert not errors, errors
    lines = logged(stack, "GET /live/heatmap/ws", 6, since=before)
    pages = upstreams(lines, "GET /live/heatmap ")
    sockets = upstreams(lines, "GET /live/heatmap/ws")
    assert len(pages) == 6 and len(sockets) == 6, lines
    assert len(set(pages + sockets)) == 1, f"one cookie, several processes: {set(pages + sockets)}"


def test_with_one_process_stopped_new_sessions_open_through_the_other(stack):
    _, proc, _ = stack["apps"][0]
    load.stop_server(proc)
    # browsers without a cookie, and browsers pinned to every kind of key
    opened, errors = open_and_click(stack["url"], 6)
    assert not errors and len(opened) == 6, errors
    for cookie in ("student-1", "student-2", "student-3", "student-4"):
        pinned, errors = open_and_click(stack["url"], 1, cookie=cookie)
        assert not errors and len(pinned) == 1, (cookie, errors)
    with urllib.request.urlopen(stack["url"] + "/health", timeout=10) as r:
        assert r.status == 200
    with urllib.request.urlopen(f"http://127.0.0.1:{stack['apps'][1][0]}/health", timeout=10) as r:
        assert r.status == 200


def test_with_every_process_stopped_the_static_pages_still_come(stack):
    for _, proc, _ in stack["apps"]:
        load.stop_server(proc)
    for path in ("/", "/heatmap", "/cost/", "/embed/heatmap.html"):
        status, _, body = get(stack["url"] + path)
        assert status == 200 and b"<html" in body.lower(), path
    assert get(stack["url"] + "/live/heatmap")[0] == 502
