"""`attention-explorable serve` starts and answers every route over HTTP."""

import socket
import subprocess
import sys
import time
import urllib.request

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(base + "/", timeout=5)
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("server did not answer within 60 s")
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def test_every_route_answers(server):
    from app.server import PANEL_ROUTES

    for route in ["/", *PANEL_ROUTES]:
        with urllib.request.urlopen(server + route, timeout=30) as r:
            body = r.read().decode()
            assert r.status == 200 and "<html" in body.lower(), route


def test_page_references_no_other_host(server):
    body = urllib.request.urlopen(server + "/", timeout=30).read().decode()
    for marker in ("cdn.", "googleapis", "unpkg", "jsdelivr", "cdnjs"):
        assert marker not in body, marker
