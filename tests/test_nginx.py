"""The scale-out recipe, run: Debian's nginx from deploy/nginx.conf in front of two app
processes on loopback. Sessions open through nginx (page, websocket, a click answered), a
browser's cookie keeps it on one process, /health answers through nginx, and when one process
is stopped new sessions still open through the other, pinned browsers included.

nginx missing is a failure, not a skip: `make test` installs it (make system-packages).
"""

import asyncio
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import load

TEMPLATE = ROOT / "deploy" / "nginx.conf"
NGINX = os.environ.get("NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
STEP_S = 60


def render(template, run_dir, listen, backends, server_name="localhost"):
    lines = " ".join(f"server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;" for port in backends)
    return (template.replace("{{run_dir}}", str(run_dir)).replace("{{listen}}", listen)
            .replace("{{server_name}}", server_name).replace("{{backends}}", lines))


def test_template_renders_every_field():
    text = render(TEMPLATE.read_text(), "/run/x", "127.0.0.1:8080", [5101, 5102])
    assert not re.search(r"\{\{(run_dir|listen|server_name|backends)\}\}", text)
    assert "server 127.0.0.1:5101 max_fails=1" in text and "hash $ae_sticky_key consistent" in text
    assert "proxy_set_header Upgrade $http_upgrade" in text


def nginx_binary():
    if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
        pytest.fail(f"nginx is missing ({NGINX}): install Debian's nginx (`make system-packages`,"
                    " as root: apt-get install -y nginx) or point $NGINX at one", pytrace=False)
    return NGINX


@pytest.fixture(scope="module")
def stack():  # -> {"url": nginx url, "apps": [(port, Popen, log path)], "nginx": Popen}
    binary = nginx_binary()
    run_dir = Path(tempfile.mkdtemp(prefix="ae-nginx-"))
    run_dir.chmod(0o755)  # nginx's workers (not root) must reach their temp folders
    nginx_port = load.free_port()
    public = f"127.0.0.1:{nginx_port}"
    apps = []
    nginx = None
    try:
        for _ in range(2):
            port = load.free_port()
            log_path = run_dir / f"app-{port}.log"
            with open(log_path, "w") as log:  # the child keeps its own copy of the descriptor
                proc = load.start_server(port, ["--behind-proxy", "--allow-websocket-origin",
                                                public, "--check-unused-sessions", "1"], log)
            apps.append((port, proc, log_path))
        for port, proc, _ in apps:
            load.wait_healthy(f"http://127.0.0.1:{port}", proc)
        conf = run_dir / "nginx.conf"
        conf.write_text(render(TEMPLATE.read_text(), run_dir, public, [p for p, _, _ in apps]))
        check = subprocess.run([binary, "-t", "-p", str(run_dir), "-e", str(run_dir / "error.log"),
                                "-c", str(conf)], capture_output=True, text=True, timeout=30,
                               check=False)
        assert check.returncode == 0, check.stderr
        nginx = subprocess.Popen([binary, "-p", str(run_dir), "-e", str(run_dir / "error.log"),
                                  "-c", str(conf), "-g", "daemon off;"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        load.wait_healthy(f"http://{public}", nginx, timeout=30)
        yield {"url": f"http://{public}", "apps": apps, "nginx": nginx, "run_dir": run_dir}
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
        s = load.Session(url, "/heatmap")
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


def upstreams(lines, what):  # lines of the access log -> [upstream=...] of requests for `what`
    return [line.rsplit("upstream=", 1)[1].split()[0] for line in lines if what in line]


def test_health_answers_through_nginx(stack):
    with urllib.request.urlopen(stack["url"] + "/health", timeout=10) as r:
        assert r.status == 200 and r.read() == b"ok"


def test_sessions_open_through_nginx_and_a_cookie_keeps_one_process(stack):
    opened, errors = open_and_click(stack["url"], 16)
    assert not errors, errors
    assert len(opened) == 16
    assert all(cookie is not None for _, cookie in opened), "nginx set no ae_backend cookie"
    served = set(upstreams(access_lines(stack), "GET /heatmap/ws"))
    assert len(served) == 2, f"16 new browsers all went to one process: {served}"
    # a browser that holds a cookie: all its pages and sockets reach the same process
    before = len(access_lines(stack))
    _, errors = open_and_click(stack["url"], 6, cookie="student-42")
    assert not errors, errors
    time.sleep(0.5)  # nginx logs a websocket when it closes
    lines = access_lines(stack)[before:]
    pages, sockets = upstreams(lines, "GET /heatmap "), upstreams(lines, "GET /heatmap/ws")
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
