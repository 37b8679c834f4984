"""Many students at once, on loopback: sessions, interactions, errors, latency, memory.

    PYTHONPATH=. python benchmarks/load.py                      # 200 sessions x 5 clicks x 5 rounds
    PYTHONPATH=. python benchmarks/load.py --sessions 30 --interactions 3 --rounds 2   # CI size
    PYTHONPATH=. python benchmarks/load.py --url http://127.0.0.1:5280 --rounds 1  # a running site

Each simulated student does what a browser does, without the browser: GETs the page (and
keeps its cookies, so nginx's sticky routing works), opens the page's websocket with the
page's session token, pulls the document, then clicks the head's "causal mask" toggle a few
times, a second or two apart, timing each click from the frame sent to the server's patch
coming back. All sessions of a round are open at once while the clicks run.

A round: open N sessions (at most --concurrency being opened at a time), run the clicks, close
every socket, then wait for the server to drop the sessions (it is started with a short
--unused-session-lifetime so a round takes seconds, not the 15 s default). Reported: errors
(target 0), interaction round trip median and p95 under load, server memory (RSS of the
server and its forked children, from /proc) per open session, and the RSS after each round's
sessions are gone (target: every later round within 10% of the first, no growth).

Bounded: loopback addresses only, a fixed number of sessions and clicks, a timeout on every
network step and a --time-limit on the whole run; the server it starts is stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import dataclasses
import ipaddress
import json
import math
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from tests import servers

TOKEN = re.compile(r'"token"\s*:\s*"([A-Za-z0-9_\-.=]+)"')
STEP_TIMEOUT_S = 30.0  # any one GET, connect, pull or reply
MEMORY_TOLERANCE = 0.10  # later rounds' settled RSS within 10% of the first round's
MiB = 2 ** 20


class LoadError(Exception):
    """One session's step failed; the message says which step and why."""


# ---------------------------------------------------------------- one simulated browser

def objects(tree):  # serialized Bokeh document -> every model rep in it, depth first
    stack, seen = [tree], []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object" and "id" in node and "name" in node:
                seen.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return seen


def find_model(doc, name, **attributes):  # -> the id of the first `name` model with these values
    for rep in objects(doc):
        attrs = rep.get("attributes", {})
        if rep["name"] == name and all(attrs.get(k) == v for k, v in attributes.items()):
            return rep["id"]
    raise LoadError(f"no {name} with {attributes} in the document")


class Message:
    """One message from the server: its header, and its content parsed when first asked."""

    def __init__(self, header, raw):
        self.header, self.raw = header, raw
        self.msgtype = header.get("msgtype")
        self._content = None

    @property
    def content(self):
        if self._content is None:
            self._content = json.loads(self.raw)
        return self._content


class Session:
    """A page's session over the Bokeh protocol: GET, websocket, PULL-DOC, patches."""

    def __init__(self, base, path, origin=None):
        self.base, self.path = base.rstrip("/"), path
        self.origin = origin  # the page's origin, sent on the websocket; default: base
        self.cookies = SimpleCookie()
        self.ws = None
        self.doc = None
        self.inbox = asyncio.Queue()
        self._reader = None
        self._n = 0
        self.page_bytes = 0

    async def open(self, http):  # -> seconds for the GET
        t0 = time.perf_counter()
        headers = {"Cookie": self.cookie_header()} if self.cookies else {}
        try:
            response = await http.fetch(self.base + self.path, request_timeout=STEP_TIMEOUT_S,
                                        headers=headers, raise_error=False)
        except (OSError, TimeoutError) as e:
            raise LoadError(f"GET {self.path}: {type(e).__name__}: {e}") from None
        get_s = time.perf_counter() - t0
        if response.code != 200:
            raise LoadError(f"GET {self.path}: HTTP {response.code}")
        for header in response.headers.get_list("Set-Cookie"):
            self.cookies.load(header)
        body = response.body.decode("utf-8", "replace")
        self.page_bytes = len(response.body)
        match = TOKEN.search(body)
        if not match:
            raise LoadError(f"GET {self.path}: no session token in the page")
        parts = urlsplit(self.base)
        scheme = "wss" if parts.scheme == "https" else "ws"
        headers = {"Origin": self.origin or f"{parts.scheme}://{parts.netloc}"}
        if self.cookies:
            headers["Cookie"] = self.cookie_header()
        ws_path = self.path.split("?")[0].rstrip("/") + "/ws"
        request = HTTPRequest(f"{scheme}://{parts.netloc}{ws_path}", headers=headers,
                              connect_timeout=STEP_TIMEOUT_S, request_timeout=STEP_TIMEOUT_S)
        try:
            self.ws = await asyncio.wait_for(
                websocket_connect(request, subprotocols=["bokeh", match.group(1)]),
                STEP_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - any failure to connect is this session's error
            raise LoadError(f"websocket {ws_path}: {type(e).__name__}: {e}") from None
        # as a browser's socket: no Nagle wait between small frames
        self.ws.protocol.set_nodelay(True)
        self._reader = asyncio.ensure_future(self._read())
        await self.expect("ACK")
        await self.send("PULL-DOC-REQ", {})
        reply = await self.expect("PULL-DOC-REPLY")
        self.doc = reply.content["doc"]
        # a browser says so once it has rendered: Panel then runs its on-load callbacks and
        # treats the session as loaded (it batches model changes only in loaded sessions)
        await self.send("PATCH-DOC", {"events": [document_ready()]})
        return get_s

    def cookie_header(self):
        return "; ".join(f"{k}={m.value}" for k, m in self.cookies.items())

    async def _read(self):
        # Bokeh's framing: header, metadata and content as text frames, then for each of
        # header["num_buffers"] a text frame naming it and a binary frame. Only the header is
        # parsed here, so a few hundred clients stay cheap; content is parsed on demand.
        try:
            while True:
                header = await self.ws.read_message()
                if header is None:
                    await self.inbox.put(None)
                    return
                header = json.loads(header)
                await self.ws.read_message()  # metadata
                content = await self.ws.read_message()
                for _ in range(2 * header.get("num_buffers", 0)):
                    await self.ws.read_message()
                if content is None:
                    await self.inbox.put(None)
                    return
                await self.inbox.put((time.perf_counter(), Message(header, content)))
        except Exception as e:  # noqa: BLE001 - surfaces as this session's error
            await self.inbox.put(LoadError(f"reading the socket: {type(e).__name__}: {e}"))

    async def expect(self, msgtype, timeout=STEP_TIMEOUT_S):  # -> (time, Message) of that type
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise LoadError(f"no {msgtype} within {timeout:g} s")
            try:
                item = await asyncio.wait_for(self.inbox.get(), left)
            except TimeoutError:
                raise LoadError(f"no {msgtype} within {timeout:g} s") from None
            if item is None:
                raise LoadError(f"the server closed the socket while we waited for {msgtype}")
            if isinstance(item, Exception):
                raise item
            _, message = item
            if message.msgtype == "ERROR":
                raise LoadError(f"server error: {message.content.get('text', '')[:200]}")
            if message.msgtype == msgtype:
                return message if msgtype != "PATCH-DOC" else item

    def drain(self):  # forget messages that arrived since the last wait (late patches, OKs)
        while not self.inbox.empty():
            item = self.inbox.get_nowait()
            if item is None or isinstance(item, Exception):
                self.inbox.put_nowait(item)
                return

    async def send(self, msgtype, content):
        self._n += 1
        header = {"msgid": f"load{self._n}", "msgtype": msgtype}
        try:
            await self.ws.write_message(json.dumps(header))
            await self.ws.write_message("{}")
            await self.ws.write_message(json.dumps(content))
        except Exception as e:  # noqa: BLE001
            raise LoadError(f"sending {msgtype}: {type(e).__name__}: {e}") from None

    async def change(self, model_id, attr, value, timeout=STEP_TIMEOUT_S):
        # set one property as a browser widget would -> seconds until the server's patch
        self.drain()
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": [changed(model_id, attr, value)]})
        arrived, patch = await self.expect("PATCH-DOC", timeout)
        return arrived - t0, patch

    async def click(self, button_id, timeout=STEP_TIMEOUT_S):  # a Bokeh Button press
        self.drain()
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": [button_click(button_id)]})
        arrived, patch = await self.expect("PATCH-DOC", timeout)
        return arrived - t0, patch

    async def send_events(self, events):  # PATCH-DOC with these events; no wait for a reply
        self.drain()
        await self.send("PATCH-DOC", {"events": events})

    async def wait_patch(self, predicate, timeout=STEP_TIMEOUT_S):
        # -> the first PATCH-DOC from the server whose raw content satisfies predicate(text)
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise LoadError(f"no matching patch within {timeout:g} s")
            _, patch = await self.expect("PATCH-DOC", left)
            if predicate(patch.raw):
                return patch

    async def close(self):
        if self.ws is not None:
            self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)


def changed(model_id, attr, value):  # one ModelChanged event, as a browser widget sends it
    return {"kind": "ModelChanged", "model": {"id": model_id}, "attr": attr, "new": value}


def document_ready():  # the event BokehJS sends when the page's document is idle
    return {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
        "type": "event", "name": "document_ready", "values": {"type": "map", "entries": []}}}


def button_click(model_id):  # the event a Bokeh Button press sends
    return {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
        "type": "event", "name": "button_click",
        "values": {"type": "map", "entries": [["model", {"id": model_id}]]}}}


def run_sync(coroutine):
    # asyncio.run, on a thread of its own: callers (tests) may already have a running loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def patch_text(patch):  # a server PATCH-DOC message -> its content as JSON text
    return patch.raw


# ---------------------------------------------------------------- the server under load

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_loopback(url):  # refuse anything but 127.0.0.0/8 or localhost
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    raise SystemExit(f"load.py runs on loopback only; {url} is not")


def start_server(port, args=(), log=None, cwd=ROOT, env=None):  # -> Popen of the app's server
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "app.hosting.cli", "serve", "--port", str(port),
                             *args], cwd=cwd, env=env, stdout=log or subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)


def wait_healthy(base, proc=None, timeout=90.0):
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{base}/health did not answer within {timeout:g} s")


def stop_server(proc):
    servers.stop(proc, timeout=15)


def process_tree(pid):  # -> [pid and every descendant], from /proc
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, stack = [], [pid]
    while stack:
        p = stack.pop()
        tree.append(p)
        stack.extend(children.get(p, []))
    return tree


def cpu_seconds(pid):  # user + system CPU of pid and its children, from /proc
    total = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime in clock ticks
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid):  # resident memory of pid and its children (forked server processes)
    total = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


# ---------------------------------------------------------------- a round

@dataclasses.dataclass
class Round:
    sessions: int
    opened: int = 0
    errors: list = dataclasses.field(default_factory=list)
    round_trips: list = dataclasses.field(default_factory=list)  # seconds
    get_s: list = dataclasses.field(default_factory=list)
    open_s: float = 0.0  # wall time to open them all
    rss_before: int = 0
    rss_open: int = 0  # all sessions open, clicks done
    rss_after: int = 0  # sessions closed and dropped by the server
    server_cpu_open: float = 0.0  # server CPU seconds spent opening the sessions
    server_cpu_clicks: float = 0.0  # ... and during the clicks
    clicks_s: float = 0.0  # wall time of the click phase
    client_cpu_clicks: float = 0.0  # this script's own CPU seconds during the clicks


async def one_student(session, http, interactions, think, rnd, deadline, opened, go):
    try:
        rnd.get_s.append(await session.open(http))
        toggle = find_model(session.doc, "Toggle", label="causal mask")
        active = next(o["attributes"].get("active", True) for o in objects(session.doc)
                      if o["id"] == toggle)
        rnd.opened += 1
    except Exception as e:  # noqa: BLE001 - counted, never a hang
        rnd.errors.append(f"open: {e}" if isinstance(e, LoadError)
                          else f"open: {type(e).__name__}: {e}")
        opened.release()
        return
    opened.release()
    await go.wait()
    for _ in range(interactions):
        if time.monotonic() > deadline:
            rnd.errors.append("time limit reached before every click was made")
            return
        await asyncio.sleep(random.uniform(*think))
        active = not active
        try:
            seconds, _ = await session.change(toggle, "active", active)
        except Exception as e:  # noqa: BLE001
            rnd.errors.append(f"click: {e}" if isinstance(e, LoadError)
                              else f"click: {type(e).__name__}: {e}")
            return
        rnd.round_trips.append(seconds)


async def run_round(base, route, n, interactions, concurrency, think, deadline, pid=None,
                    settle_s=0.0):
    rnd = Round(sessions=n)
    http = AsyncHTTPClient(force_instance=True, max_clients=max(concurrency, 10))
    rnd.rss_before = rss_bytes(pid) if pid else 0
    cpu0 = cpu_seconds(pid) if pid else 0.0
    sessions = [Session(base, route) for _ in range(n)]
    gate = asyncio.Semaphore(concurrency)  # sessions being opened at once
    go = asyncio.Event()
    t0 = time.perf_counter()

    async def opened_then_run(s):
        await gate.acquire()
        await one_student(s, http, interactions, think, rnd, deadline, gate, go)

    tasks = [asyncio.ensure_future(opened_then_run(s)) for s in sessions]
    # every session opens before the clicks start, so every click happens under full load
    while rnd.opened + sum(e.startswith("open") for e in rnd.errors) < n:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    rnd.open_s = time.perf_counter() - t0
    cpu = cpu_seconds(pid) if pid else 0.0
    rnd.server_cpu_open = cpu - cpu0
    go.set()
    left = max(deadline - time.monotonic(), 1.0)
    t1, c1 = time.perf_counter(), time.process_time()
    _, pending = await asyncio.wait(tasks, timeout=left)
    rnd.clicks_s = time.perf_counter() - t1
    rnd.client_cpu_clicks = time.process_time() - c1
    rnd.server_cpu_clicks = (cpu_seconds(pid) if pid else 0.0) - cpu
    for task in pending:
        task.cancel()
        rnd.errors.append("time limit reached")
    rnd.rss_open = rss_bytes(pid) if pid else 0
    await asyncio.gather(*(s.close() for s in sessions))
    http.close()
    if settle_s:
        await asyncio.sleep(settle_s)
    rnd.rss_after = rss_bytes(pid) if pid else 0
    return rnd


@contextlib.contextmanager
def own_server(args):  # -> (base url, pid) of a fresh server on a free loopback port
    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        proc = start_server(port, args, log)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
            yield f"http://127.0.0.1:{port}", proc.pid
        except RuntimeError:
            log.seek(0)
            sys.stderr.write(log.read()[-4000:])
            raise
        finally:
            stop_server(proc)


def percentile(values, q):  # nearest-rank percentile; q in 0..100
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def summary(rounds, sessions):
    trips = [t for r in rounds for t in r.round_trips]
    errors = [e for r in rounds for e in r.errors]
    per_session = [(r.rss_open - r.rss_before) / max(r.opened, 1) for r in rounds if r.rss_open]
    settled = [r.rss_after for r in rounds if r.rss_after]
    first = settled[0] if settled else 0
    drift = [(s - first) / first for s in settled] if first else []
    return {
        "sessions": sessions,
        "rounds": len(rounds),
        "interactions": len(trips),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "round_trip_median_ms": statistics.median(trips) * 1000 if trips else float("nan"),
        "round_trip_p95_ms": percentile(trips, 95) * 1000,
        "round_trip_max_ms": max(trips) * 1000 if trips else float("nan"),
        "get_median_ms": statistics.median([g for r in rounds for g in r.get_s]) * 1000
        if any(r.get_s for r in rounds) else float("nan"),
        "open_all_s": [round(r.open_s, 2) for r in rounds],
        "server_cpu_ms_per_session_opened": [round(1000 * r.server_cpu_open / max(r.opened, 1), 1)
                                             for r in rounds],
        "server_cpu_ms_per_interaction": [
            round(1000 * r.server_cpu_clicks / max(len(r.round_trips), 1), 1) for r in rounds],
        "client_cpu_share_during_clicks": [round(r.client_cpu_clicks / r.clicks_s, 2)
                                           if r.clicks_s else 0.0 for r in rounds],
        "server_cpu_share_during_clicks": [round(r.server_cpu_clicks / r.clicks_s, 2)
                                           if r.clicks_s else 0.0 for r in rounds],
        "rss_mib_before_first_round": rounds[0].rss_before / MiB if rounds else 0,
        "mib_per_session": [round(p / MiB, 3) for p in per_session],
        "rss_mib_open": [round(r.rss_open / MiB, 1) for r in rounds],
        "rss_mib_after": [round(s / MiB, 1) for s in settled],
        "rss_drift_vs_first": [round(d, 4) for d in drift],
        "memory_ok": bool(drift) and max(drift) <= MEMORY_TOLERANCE,
    }


async def sequential_gets(base, route, n):  # -> median seconds of n GETs, one at a time
    if n <= 0:
        return float("nan")
    http = AsyncHTTPClient(force_instance=True)
    try:
        await http.fetch(base + route, request_timeout=STEP_TIMEOUT_S)  # warm
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await http.fetch(base + route, request_timeout=STEP_TIMEOUT_S)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)
    finally:
        http.close()


async def run(base, route, sessions, interactions, rounds, concurrency, think, time_limit,
              pid=None, settle_s=0.0, gets=0):
    deadline = time.monotonic() + time_limit
    get_alone = await sequential_gets(base, route, gets)
    if gets:
        await asyncio.sleep(settle_s)  # let the sessions those GETs made (if any) expire
    out = []
    for _ in range(rounds):
        if time.monotonic() > deadline:
            break
        out.append(await run_round(base, route, sessions, interactions, concurrency, think,
                                   deadline, pid, settle_s))
    report = summary(out, sessions)
    report["get_alone_median_ms"] = get_alone * 1000
    return report


def print_report(report, command):
    print(f"$ {command}")
    rows = [
        ("sessions open at once", f"{report['sessions']}"),
        ("rounds", f"{report['rounds']}"),
        ("interactions timed", f"{report['interactions']}"),
        ("errors (target 0)", f"{report['errors']}"),
        ("interaction round trip, median", f"{report['round_trip_median_ms']:.1f} ms"),
        ("interaction round trip, p95", f"{report['round_trip_p95_ms']:.1f} ms"),
        ("interaction round trip, max", f"{report['round_trip_max_ms']:.1f} ms"),
        ("page GET, median, one at a time before the rounds",
         "not measured (--gets 0)" if math.isnan(report["get_alone_median_ms"])
         else f"{report['get_alone_median_ms']:.1f} ms"),
        ("page GET, median (under the opening burst)", f"{report['get_median_ms']:.1f} ms"),
        ("time to open all sessions, per round", ", ".join(f"{s:.1f} s"
                                                           for s in report["open_all_s"])),
        ("server CPU per session opened", ", ".join(
            f"{c:.0f}" for c in report["server_cpu_ms_per_session_opened"]) + " ms"),
        ("server CPU per interaction (all work during clicks)", ", ".join(
            f"{c:.1f}" for c in report["server_cpu_ms_per_interaction"]) + " ms"),
        ("server CPU busy during clicks (cores)", ", ".join(
            f"{c:.2f}" for c in report["server_cpu_share_during_clicks"])),
        ("this script's CPU during clicks (cores)", ", ".join(
            f"{c:.2f}" for c in report["client_cpu_share_during_clicks"])),
        ("server memory per open session", ", ".join(f"{m:.2f}" for m in
                                                      report["mib_per_session"]) + " MiB"),
        ("server RSS before round 1", f"{report['rss_mib_before_first_round']:.1f} MiB"),
        ("server RSS, all sessions open", ", ".join(f"{m:.0f}" for m in
                                                     report["rss_mib_open"]) + " MiB"),
        ("server RSS after sessions closed", ", ".join(f"{m:.0f}" for m in
                                                        report["rss_mib_after"]) + " MiB"),
        ("  vs round 1 (target within 10%)", ", ".join(f"{d:+.1%}" for d in
                                                       report["rss_drift_vs_first"])),
    ]
    print_rows(rows, report["error_samples"])


def print_rows(rows, error_samples, indent=""):  # [(name, value)] as aligned lines, then errors
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{indent}{name:<{width}}  {value}")
    for sample in error_samples:
        print(f"{indent}error: {sample}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=200, help="sessions open at once (max 1000)")
    p.add_argument("--interactions", type=int, default=5, help="clicks per session (max 50)")
    p.add_argument("--rounds", type=int, default=5, help="rounds (max 20)")
    p.add_argument("--route", default="/live/heatmap",
                   help="a live route (the static pages at /heatmap etc. open no session)")
    p.add_argument("--concurrency", type=int, default=20, help="sessions being opened at once")
    p.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"),
                   help="seconds between a session's clicks, drawn uniformly")
    p.add_argument("--num-procs", type=int, default=1, help="server processes (own server)")
    p.add_argument("--server-arg", action="append", default=[],
                   help="extra `serve` argument for the server this script starts")
    p.add_argument("--url", help="load an already running site (loopback only) instead")
    p.add_argument("--pid", type=int, help="with --url: the server's pid, to read its memory")
    p.add_argument("--lifetime", type=float, default=2.0,
                   help="the started server's --unused-session-lifetime, seconds")
    p.add_argument("--time-limit", type=float, default=900.0, help="seconds for the whole run")
    p.add_argument("--gets", type=int, default=0,
                   help="first time this many page GETs one at a time (max 200)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if not (1 <= a.sessions <= 1000 and 1 <= a.interactions <= 50 and 1 <= a.rounds <= 20
            and 1 <= a.concurrency <= 200 and 0 < a.time_limit <= 3600 and 0 <= a.gets <= 200):
        p.error("out of bounds: sessions 1-1000, interactions 1-50, rounds 1-20, "
                "concurrency 1-200, time limit up to 3600 s")
    random.seed(a.seed)
    if a.url:
        require_loopback(a.url)
        settle = a.lifetime + 3.0 if a.pid else 0.0
        report = asyncio.run(run(a.url.rstrip("/"), a.route, a.sessions, a.interactions,
                                 a.rounds, a.concurrency, tuple(a.think), a.time_limit, a.pid,
                                 settle, a.gets))
    else:
        check = max(min(a.lifetime / 2, 5.0), 0.5)
        args = ["--num-procs", str(a.num_procs), "--unused-session-lifetime", str(a.lifetime),
                "--check-unused-sessions", str(check), *a.server_arg]
        with own_server(args) as (base, pid):
            report = asyncio.run(run(base, a.route, a.sessions, a.interactions, a.rounds,
                                     a.concurrency, tuple(a.think), a.time_limit, pid,
                                     a.lifetime + 2 * check + 2.0, a.gets))
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report, "PYTHONPATH=. python benchmarks/load.py " + " ".join(
            argv if argv is not None else sys.argv[1:]))
    return 0 if report["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
