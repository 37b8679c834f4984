"""app/kit/panel_internals.py: each patch of a Panel or Bokeh internal is active and has its effect,
and the installed Panel and Bokeh are the minor versions it was checked against.

Behaviour is measured on real servers (subprocesses on free loopback ports) driven over the
Bokeh protocol by benchmarks/load.py's client: one serving a small page through app.hosting.server
(the patches installed, reused first paints warmed) and one plain Panel server beside it, so
each test also shows what the page would get without the patch.
"""

import asyncio
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
import tomllib
import types
import urllib.request
from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from tornado.locks import Lock

from app.kit import panel_internals as pi

ROOT = Path(__file__).resolve().parents[1]
# appended, after the packages: benchmarks/kernels.py must not shadow the kernels package
sys.path.append(str(ROOT / "benchmarks"))
import load  # benchmarks/load.py: a Bokeh-protocol client (found on the path set above)

PANES = 4  # the small page: a text input whose watcher rewrites four panes
THINK_S = 0.1  # a visitor's pause between two changes (see interact)

SERVER = textwrap.dedent('''
    import itertools
    import sys

    import panel as pn

    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "patched":
        from app.kit import panel_internals
        from app.hosting import server
        panel_internals.install()  # as `attention-explorable serve` does when it starts
    builds = itertools.count(1)


    def page():
        print(f"built session {next(builds)}", flush=True)
        box = pn.widgets.TextInput(name="probe", value="start")
        panes = [pn.pane.HTML(f"pane {i}") for i in range(PANES)]

        def on(event):
            from app.kit import panel_internals
            locks = len(panel_internals.write_locks(pn.state.curdoc))
            for i, p in enumerate(panes):
                p.object = f"pane {i} says {event.new} locks={locks}"

        box.param.watch(on, "value")
        return pn.Column(box, *panes)


    kwargs = dict(port=port, address="127.0.0.1", show=False, print_url=False,
                  websocket_origin=[f"127.0.0.1:{port}"])
    if mode == "plain":
        pn.serve({"/t": page}, **kwargs)
    else:
        pn.config.reuse_sessions = True
        pn.config.session_key_func = server.reuse_key
        srv = pn.serve({"/t": server.prepare_session(page)}, start=False, **kwargs)
        srv.start()

        async def warm():
            print("warmed", await server.warm_reused_sessions(srv, ["/t"]), flush=True)

        srv.io_loop.add_callback(warm)
        srv.io_loop.start()
''').replace("PANES", str(PANES))


@pytest.fixture(scope="module")
def servers(tmp_path_factory):  # -> {"patched" | "plain": SimpleNamespace(url, log)}
    tmp = tmp_path_factory.mktemp("internals")
    script = tmp / "serve_small.py"
    script.write_text(SERVER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    running = {}
    try:
        for mode in ("patched", "plain"):
            port, log = load.free_port(), tmp / f"{mode}.log"
            with open(log, "w") as out:
                proc = subprocess.Popen([sys.executable, str(script), str(port), mode],
                                        cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT)
            running[mode] = types.SimpleNamespace(url=f"http://127.0.0.1:{port}", log=log,
                                                  proc=proc)
        for mode, s in running.items():
            wait_for(lambda s=s: "built session" in s.log.read_text() or up(s.url), s, 90)
        wait_for(lambda: "warmed" in running["patched"].log.read_text(), running["patched"], 60)
        yield running
    finally:
        for s in running.values():
            load.stop_server(s.proc)


def up(url):
    try:
        with urllib.request.urlopen(url + "/t", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def wait_for(ready, server, timeout, what="server did not come up"):
    deadline = time.monotonic() + timeout
    while not ready():
        if server.proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{what}:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.2)  # bounded poll: a deadline and the condition each turn


def builds(server):  # -> sessions the page factory has built so far
    return server.log.read_text().count("built session")


async def interact(base, n):  # -> [(ms to the first patch, PATCH-DOC messages, their text)]
    session = load.Session(base, "/t")
    await session.open(load.AsyncHTTPClient(force_instance=True))
    try:
        box = load.find_model(session.doc, "panel.models.widgets.TextInput")
        # open() ends by sending document_ready; Panel runs its on-load (the session is then
        # "loaded", and batches changes) while it handles that message, before its OK reply
        await session.expect("OK", timeout=10)
        # n measured values, then a last one that only closes the window of the one before:
        # the server handles the changes in the order sent, so a patch that trails value i
        # arrives before every pane has value i + 1 (each value's text is unique: v1x, v10x)
        values = [f"v{i}x" for i in range(n + 1)]
        messages, firsts = {v: [] for v in values}, {}
        for value in values:
            # a visitor's pause before each change: part of the scenario measured (a change
            # made on an idle connection), not a wait for a condition. Sent back to back, a
            # change here waited ~45 ms for TCP's delayed ACK of the patch before it.
            await asyncio.sleep(THINK_S)
            t0 = time.perf_counter()
            await session.send("PATCH-DOC", {"events": [load.changed(box, "value", value)]})
            seen = set()
            while len(seen) < PANES:  # until every pane has its new text
                arrived, patch = await session.expect("PATCH-DOC", timeout=10)
                for v in values:  # this value's, or one that trails an earlier value
                    if f"says {v}" in patch.raw:
                        messages[v].append(patch.raw)
                if f"says {value}" in patch.raw:
                    firsts.setdefault(value, arrived - t0)
                    seen |= set(re.findall(rf"pane (\d) says {value}", patch.raw))
        return [(firsts[v] * 1000, len(messages[v]), "".join(messages[v])) for v in values[:-1]]
    finally:
        await session.close()


async def opened_and_closed(base):  # a visitor's session: GET, socket, PULL-DOC, ready
    session = load.Session(base, "/t")
    try:
        await session.open(load.AsyncHTTPClient(force_instance=True))
    finally:
        await session.close()


@pytest.fixture(scope="module")
def measured(servers):  # -> {mode: [(ms, messages, text)]}, one mode after the other
    return {mode: load.run_sync(interact(s.url, 9)) for mode, s in servers.items()}


# --- versions and pins ------------------------------------------------------------------

def test_panel_and_bokeh_are_the_minor_versions_the_patches_were_checked_against():
    assert pi.version_problems() == [], (
        "Panel or Bokeh moved to another minor version: check every internal in "
        "app/kit/panel_internals.py against it, then move CHECKED and the pins in pyproject.toml")


def test_a_newer_minor_fails_loudly(monkeypatch):
    newer = {"panel": "1.10.0", "bokeh": "3.9.2"}
    problems = pi.version_problems(newer)
    assert len(problems) == 1 and "panel 1.10.0 is a newer minor than the 1.9" in problems[0]
    monkeypatch.setattr(pi, "installed_versions", lambda: newer)
    with pytest.raises(pi.InternalsChanged, match="panel 1.10.0"):
        pi.check_versions(strict=True)
    with pytest.warns(RuntimeWarning, match="panel 1.10.0"):
        pi.check_versions(strict=False)
    assert pi.minor("1.10.0rc1") == (1, 10) and pi.minor("3.9.2") == (3, 9)


def test_pyproject_pins_the_checked_minor_versions():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for name, (major, minor) in pi.CHECKED.items():
        spec = next(d for d in deps if re.match(rf"{name}\b", d))
        assert f"<{major}.{minor + 1}" in spec.replace(" ", ""), spec
        low = re.search(r">=(\d+)\.(\d+)", spec)
        assert low and (int(low[1]), int(low[2])) == (major, minor), spec


def test_every_internal_named_is_still_where_it_is_said_to_be():
    import importlib
    import inspect
    for name, module, _ in pi.INTERNALS:
        owner, attr = name.split(".")
        source = inspect.getsource(importlib.import_module(module))
        assert re.search(rf"\b{attr}\b", source), f"{module} no longer mentions {attr} ({name})"
        assert re.search(rf"\b{owner}\b", source), f"{module} no longer has {owner}"


# --- the patches are in place ---------------------------------------------------------------

# A process that imports the server and the build, lists the routes and their pages, runs the
# CLI command its arguments name, if any (tests/test_build.py: `build OUT`), and prints the
# patches that are on last
PATCHES_ON = textwrap.dedent('''
    import sys
    from app.kit import panel_internals as pi
    from app.hosting import build, cli, routes, server, static_site  # noqa: F401
    build.pages(), server.routes(), server.serve_settings  # list the routes and their pages
    code = cli.main(sys.argv[1:]) if sys.argv[1:] else 0
    print(sorted(name for name, on in pi.active().items() if on))
    sys.exit(code)
''')


def test_importing_or_listing_leaves_panel_as_shipped():
    # only a live server needs the patches: importing the server or the build, or listing the
    # routes, must leave Panel's Syncable untouched. Building the whole static site must too:
    # tests/test_build.py asks the process of its own build, so the site is not built twice.
    out = subprocess.run([sys.executable, "-c", PATCHES_ON], check=False,
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout[-500:]


def test_starting_the_server_installs_every_patch_once():
    pi.install()  # what server.main() does first
    assert pi.active() == {name: True for name in ("_debounce", *pi.HELD, *pi.AFTER_WRITES)}
    assert set(pi.install().values()) <= {"installed", "already"}
    assert set(list(pi.install().values())[1:]) == {"already"}  # never wrapped twice
    from panel.reactive import Syncable
    assert not hasattr(Syncable._change_event.__wrapped__, "__wrapped__")


# --- and have their effect ------------------------------------------------------------------

def control_callbacks(root):  # -> the CustomJS a static state panel's controls run
    from bokeh.models import CustomJS

    from app.kit.states import SWITCH_CALL
    return [cb for cb in root.select({"type": CustomJS}) if SWITCH_CALL in cb.code]


def test_a_static_panels_controls_hand_their_script_one_argument(monkeypatch):
    # Viewable._preprocessing_hooks: the hook runs after Panel's links hook and gathers the
    # models Panel resolved at the top level into the one object switcher.js reads
    from panel.viewable import Viewable

    from app.kit import registry
    from tests.throwaway_panel import CountPanel
    from tests.with_throwaway import RECORD
    if RECORD not in registry.PANELS:  # the smallest state panel, added as its test adds it
        monkeypatch.setattr(registry, "PANELS", (*registry.PANELS, RECORD))
    panel = CountPanel(static=True)
    root = pn.panel(panel).get_root()
    assert pi.gather_hook_installed()
    callbacks = control_callbacks(root)
    assert len(callbacks) == len(panel.controls())
    for cb in callbacks:
        assert list(cb.args) == ["ae_panel"]
        arg = cb.args["ae_panel"]
        assert list(arg) == ["spec", "controls", "targets"]
        assert arg["spec"].name == "ae-spec"
        slider, = arg["controls"]
        assert cb in slider.js_property_callbacks["change:value"]  # the control's own model
        assert len(arg["targets"]) == len(panel.targets) and None not in arg["targets"]
        assert len(set(map(id, arg["targets"]))) == len(arg["targets"])
    # positive control: without the hook the same panel's callbacks carry Panel's flat args
    monkeypatch.setattr(Viewable, "_preprocessing_hooks",
                        [h for h in Viewable._preprocessing_hooks if h is not pi._gather])
    monkeypatch.setattr(pi, "_install_gather", lambda: None)
    flat = control_callbacks(pn.panel(CountPanel(static=True)).get_root())
    assert flat and all("ae_panel" not in cb.args and "controls.0" in cb.args for cb in flat)


# serial: `measured` times a change to its first patch (under 40 ms); the tests on its
# servers run in `make test`'s pass alone, so the servers start once
@pytest.mark.serial
def test_one_websocket_message_per_interaction(measured):
    patched = [count for _, count, _ in measured["patched"]]
    plain = [count for _, count, _ in measured["plain"]]
    assert patched == [1] * len(patched), f"messages per interaction, patched: {patched}"
    assert min(plain) >= 2, f"without the patch Panel sends one per pane: {plain}"


# serial: `measured` times a change to its first patch (under 40 ms); the tests on its
# servers run in `make test`'s pass alone, so the servers start once
@pytest.mark.serial
def test_no_50_ms_hold_on_an_incoming_change(measured):
    patched = statistics.median(ms for ms, _, _ in measured["patched"])
    plain = statistics.median(ms for ms, _, _ in measured["plain"])
    assert plain >= 50, f"plain Panel holds a change 50 ms; measured {plain:.1f} ms"
    assert patched < 40 and patched < plain - 20, (
        f"first patch after {patched:.1f} ms with the patches (plain Panel: {plain:.1f} ms)")


# serial: `measured` times a change to its first patch (under 40 ms); the tests on its
# servers run in `make test`'s pass alone, so the servers start once
@pytest.mark.serial
def test_the_write_lock_wait_finds_the_live_sessions_socket(measured):
    # the page's watcher reports how many socket write locks write_locks() found: one
    # browser, one socket, one lock (an upgrade that renames them fails here, loudly)
    assert all("locks=1" in text for _, _, text in measured["patched"])


class CountedLock(Lock):  # a socket's write lock that counts who asked for it
    asked = 0

    def acquire(self, timeout=None):
        self.asked += 1
        return super().acquire(timeout)


def test_a_change_is_handled_only_after_pending_writes():
    lock, order = CountedLock(), []
    socket = types.SimpleNamespace(write_lock=lock)
    session = types.SimpleNamespace(_subscribed_connections=[types.SimpleNamespace(_socket=socket)])
    doc = types.SimpleNamespace(session_context=types.SimpleNamespace(session=session))

    async def handle(self, doc):
        order.append("handled")

    wrapped = pi._after_pending_writes(handle)

    async def scenario():
        await lock.acquire()  # an "OK" reply is being written
        task = asyncio.ensure_future(wrapped(None, doc))
        deadline = time.monotonic() + 5
        while lock.asked < 2 and not task.done() and time.monotonic() < deadline:
            await asyncio.sleep(0)  # let the task run up to the lock (a bounded poll)
        # positive control: the wrapped handler did reach the lock, and waits on it
        assert lock.asked == 2 and not task.done(), "the handler never asked for the lock"
        assert order == []  # not handled while the write holds the lock
        order.append("write done")
        lock.release()
        await asyncio.wait_for(task, 5)

    load.run_sync(scenario())  # on a thread of its own: a browser test may hold a loop here
    assert order == ["write done", "handled"]
    assert pi.write_locks(doc) == [lock]
    with pytest.raises(pi.InternalsChanged):  # a renamed internal is loud, not skipped
        pi.write_locks(types.SimpleNamespace(session_context=types.SimpleNamespace(
            session=types.SimpleNamespace(connections=[]))))


def test_the_dist_url_reaches_panels_stylesheets():
    import panel as pn
    from panel.io.state import set_curdoc
    doc = Document()
    ours = "https://explorable.example/static/extensions/panel/"
    pi.set_dist_url(doc, ours)
    assert pi.dist_url(doc) == ours
    with set_curdoc(doc):
        model = pn.widgets.Button(label="b").get_root(doc)
    urls = [str(s.url) for s in model.stylesheets if hasattr(s, "url")]
    assert urls and all(u.startswith(ours) for u in urls), urls


# serial: `measured` times a change to its first patch (under 40 ms); the tests on its
# servers run in `make test`'s pass alone, so the servers start once
@pytest.mark.serial
def test_reused_first_paints_are_built_before_any_visitor(servers):
    patched, plain = servers["patched"], servers["plain"]
    assert "warmed [('/t', 'default'), ('/t', 'dark')]" in patched.log.read_text()
    before = {mode: builds(s) for mode, s in servers.items()}
    for s in (patched, plain):
        for query in ("", "?x=1", "?theme=dark", ""):
            with urllib.request.urlopen(s.url + "/t" + query, timeout=30) as r:
                assert r.status == 200
    # plain Panel builds each GET's session before it answers: its log has them now
    assert builds(plain) >= before["plain"] + 4, "plain Panel builds one per GET"
    # positive control, and the end of the window: a visitor's socket does build a session on
    # the patched server, after anything the GETs set going there (one IO loop, in order)
    load.run_sync(opened_and_closed(patched.url))
    wait_for(lambda: builds(patched) > before["patched"], patched, 30,
             "the patched server built no session for a visitor's socket")
    assert builds(patched) == before["patched"] + 1, "a GET built a session: the cache was missed"


# --- the admin page: what `panel serve --admin` sets, set by admin_context ------------------

def test_the_admin_context_is_what_panels_server_reads():
    from panel.config import config
    from panel.io.state import state

    from app.hosting import security
    was = (config._admin, state._admin_context)
    try:
        patterns = security.admin_patterns("a password", 1000)
        context = patterns[0][2]["application_context"]
        assert config.admin is True  # Panel keeps every session's history for the dashboard
        assert state._admin_context is context  # its server loop runs this context's hooks
        assert {route for route, *_ in patterns} >= {"/admin/?", "/admin/ws", "/admin/autoload.js"}
    finally:
        config._admin, state._admin_context = was


# --- the undocumented text: what the pinned Panel and Bokeh write still matches --------------

def small_document():  # -> a Document with two Panel roots, as a static group holds them
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc
    doc = Document()
    with set_curdoc(doc):
        for label in ("a", "b"):
            doc.add_root(pn.Column(pn.widgets.Button(label=label)).get_root(doc))
    return doc


def test_document_parts_are_what_panels_save_writes_into_its_page():
    # the steps of panel.io.save.file_html, asked directly: the same document, render items
    # and scripts as the page Panel's save writes holds (read back out of that page here, in
    # the test alone, as a check that the two still agree)
    import io
    import json

    import bokeh
    import bokeh.resources
    from panel.io.save import save
    doc = small_document()
    docs_json, items, scripts = pi.document_parts(doc)
    docs = json.loads(docs_json)
    (docid, document), = docs.items()
    assert [r["id"] for r in document["roots"]] == [r.id for r in doc.roots]
    assert items == [{"docid": docid, "roots": dict(items[0]["roots"]),
                      "root_ids": [r.id for r in doc.roots]}]
    assert set(items[0]["roots"]) == {r.id for r in doc.roots}
    bokeh_files = [s[len(pi.BOKEH_CDN):] for s in scripts if s.startswith(pi.BOKEH_CDN)]
    assert bokeh_files and all(pi.bokeh_cdn_file(bokeh.__version__).match(f)
                               for f in bokeh_files), scripts
    assert any(s.endswith("/panel.min.js") for s in scripts), scripts
    buffer = io.StringIO()
    save(doc, buffer, resources=bokeh.resources.CDN, title="t")
    page = buffer.getvalue()
    head = page.split("</head>", 1)[0]
    assert [s for s in scripts if f'src="{s}"' not in head] == []  # every one the page loads
    for root in doc.roots:  # and it renders the same roots of the same document
        assert root.id in page


# serial: `measured` times a change to its first patch (under 40 ms); the tests on its
# servers run in `make test`'s pass alone, so the servers start once
@pytest.mark.serial
def test_autoload_still_names_its_module_shims_relative_to_the_page(servers):
    from bokeh.embed import server_document
    base = servers["plain"].url
    assert pi.AUTOLOAD_URL_ARG in server_document(base + "/t")  # how the embed passes it
    query = f"bokeh-autoload-element=x&bokeh-app-path=/t&{pi.AUTOLOAD_URL_ARG}={base}/t"
    with urllib.request.urlopen(f"{base}/t/autoload.js?{query}", timeout=30) as r:
        js = r.read()
    assert pi.AUTOLOAD_RELATIVE_STATIC.search(js), "Panel's autoload.js changed its paths"
    fixed = pi.absolute_static_urls(js, base)
    assert not pi.AUTOLOAD_RELATIVE_STATIC.search(fixed)
    assert f"{base}/static/".encode() in fixed


def test_the_script_tags_panel_writes_are_still_the_ones_deferred_scripts_rewrites():
    # surface 13: Panel's page of a server session (its js_resources.html, as
    # server_html_page_for_session renders it): every bundle deferred, no inline snippet left
    # to run before them, bokeh-gl gone unless a figure draws with WebGL
    import bokeh.resources
    from bokeh.plotting import figure
    from panel.io.resources import Resources, bundle_resources

    resources = Resources.from_bokeh(bokeh.resources.Resources(mode="server",
                                                               root_url="/"))
    bokeh_js, _ = bundle_resources([], resources)
    assert "bokeh-gl" in bokeh_js and 'src="static/js/bokeh.min.js' in bokeh_js  # as today
    out = pi.deferred_scripts(bokeh_js)
    assert 'type="text/javascript"' not in out and "bokeh-gl" not in out
    assert re.findall(r'<script defer src="[^"]*(bokeh[a-z-]*|panel)\.min\.js', out)[:2] == [
        "bokeh", "bokeh-widgets"]
    assert re.search(r'<script type="module">\s*Bokeh.set_log_level', out)  # after them
    assert "bokeh-gl" in pi.deferred_scripts(bokeh_js, webgl=True)
    doc = Document()
    doc.add_root(figure(output_backend="webgl"))
    assert pi.uses_webgl(doc) and not pi.uses_webgl(Document())


def test_a_session_built_from_a_url_panel_cannot_parse_gets_a_blank_location():
    # Panel reads an all-digit query value with int(): past Python's digit limit it raises, and
    # a session built from that GET failed (--no-reuse-sessions answered 500)
    import sys

    import panel as pn
    from bokeh.document import Document
    from bokeh.server.contexts import BokehSessionContext, _RequestProxy
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    digits = "1" * (sys.get_int_max_str_digits() + 1)
    request = HTTPServerRequest(
        start_line=RequestStartLine("GET", f"/live/sqrt-dk?d_k={digits}", "HTTP/1.1"),
        headers=HTTPHeaders({"Host": "127.0.0.1:5006"}))
    doc = Document()
    context = BokehSessionContext("id", None, doc)
    context._request = _RequestProxy(request)
    doc._session_context = lambda: context  # a session context without a server
    with pn.io.server.set_curdoc(doc):
        with pytest.raises(ValueError):  # Panel's own parse still fails: the guard is needed
            _ = pn.state.location
        location = pi.session_location(doc)
        assert location is pn.state.location and location.search == ""
