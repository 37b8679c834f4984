"""Hostile input, the issue's whole list: each gets a clear message, the server stays up,
other sessions are unaffected, and nothing is written to disk.

First without a server (the parser, the model picker, the URL state, the lab's caps), then
against a real one driven over the Bokeh protocol as a browser would: a paste, an upload, a
URL, a kernel-lab request, each from a hostile session, while a second session keeps working.
"""

import asyncio
import base64
import html
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from app import lab
from app.kit import url_state
from app.panels.heatmap import HeadPanel
from app.panels.model_picker import ModelPicker

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))  # after the packages: never shadow `kernels`
import load

MARKER = f"ae-hostile-{uuid.uuid4().hex}"  # in every hostile payload: found on disk = written
SCRIPT = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
GOOD = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "intermediate_size": 256, "vocab_size": 1000, "model_type": "llama",
        "_name_or_path": MARKER}


def config(**changes):  # a small valid config with some fields changed -> JSON text
    return json.dumps({**GOOD, **changes})


def raw_field(name, token):  # a config whose field holds a bare JSON token (NaN, Infinity)
    return config(**{name: 1}).replace(f'"{name}": 1', f'"{name}": {token}')


# (what, the text or bytes, words the message must hold)
HOSTILE_CONFIGS = [
    ("larger than 1 MB", '{"pad": "' + MARKER + "x" * 1_100_000 + '"}', "limit"),
    ("nested 10,000 deep", '{"a": ' + "[" * 10_000 + "]" * 10_000 + "}", "nests more than"),
    ("NaN", raw_field("num_hidden_layers", "NaN"), "NaN is not a finite number"),
    ("Infinity", raw_field("hidden_size", "Infinity"), "Infinity is not a finite number"),
    ("-Infinity", raw_field("vocab_size", "-Infinity"), "not a finite number"),
    ("1e999", raw_field("hidden_size", "1e999"), "not a finite number"),
    ("negative count", config(num_hidden_layers=-4), "positive integer"),
    ("zero heads", config(num_attention_heads=0), "positive integer"),
    ("10^12 layers", config(num_hidden_layers=10**12), "more than any real model"),
    ("a 5,000-digit number", raw_field("vocab_size", "9" * 5000), "not valid JSON"),
    ("wrong type: string", config(num_hidden_layers="many"), "positive integer"),
    ("wrong type: float", config(hidden_size=64.5), "positive integer"),
    ("wrong type: boolean", config(vocab_size=True), "positive integer"),
    ("wrong type: list", config(num_attention_heads=[4]), "positive integer"),
    ("wrong type: top level", "[1, 2, 3]", "must be a JSON object"),
    ("script in the model name", config(_name_or_path=SCRIPT), "HTML markup"),
    ("script in model_type", config(model_type=SCRIPT), "HTML markup"),
    ("empty file", b"", "is empty"),
    ("only whitespace", "  \n\t ", "is empty"),
    ("binary file", bytes(range(256)) * 8, "binary file"),
    ("PNG header", b"\x89PNG\r\n\x1a\n" + os.urandom(64), "binary file"),
    ("NUL bytes", '{"a": "\x00"}', "binary file"),
]


@pytest.mark.parametrize("what, text, words", HOSTILE_CONFIGS, ids=[c[0] for c in HOSTILE_CONFIGS])
def test_a_hostile_config_gets_a_clear_message_and_changes_nothing(what, text, words):
    picker = ModelPicker()
    before = picker.shape
    t0 = time.perf_counter()
    assert picker.load_config(text, source="the pasted text") is False
    assert time.perf_counter() - t0 < 2.0, f"{what}: parsing took too long"
    assert words in picker.error, f"{what}: {picker.error!r}"
    assert picker.shape is before and picker._error_pane.visible
    shown = picker._error_pane.object  # the pane's HTML: our markup, the rest escaped
    assert "<script" not in shown and "<img" not in shown
    assert len(shown) < 2_000, "the message echoes the input"


def test_markup_in_an_uploaded_files_name_is_escaped():
    picker = ModelPicker()
    assert picker.load_config(b"", source=f"{SCRIPT}.json") is False
    assert html.escape(SCRIPT) in picker._error_pane.object
    assert "<script" not in picker._error_pane.object
    assert picker.load_config(config(), source=f"{SCRIPT}.json")
    assert "<script" not in picker.status_html() and html.escape(SCRIPT) in picker.status_html()


def test_an_empty_upload_says_so():
    picker = ModelPicker()
    picker.model = "custom"
    browser_sends = picker.file_input._process_property_change({"value": "", "mime_type": "",
                                                                "filename": "empty.json"})
    picker.file_input.param.update(**browser_sends)
    assert "is empty" in picker.error


# --- URL queries --------------------------------------------------------------------------

def query(**values):  # {"key": [value, ...]} as Tornado hands them over (bytes)
    return {k: [v.encode() if isinstance(v, str) else v for v in vs] for k, vs in values.items()}


@pytest.mark.parametrize("args, expect, repair", [
    (query(length=["abc"]), {"length": 6}, "length='abc' is not a number; ignored"),
    (query(length=["1e999"]), {"length": 6}, "is not a finite number"),
    (query(length=["nan"]), {"length": 6}, "is not a finite number"),
    (query(length=["9" * 400]), {"length": 8}, "out of range; using 8"),  # read: 100 chars
    (query(length=["99999999999999999999"]), {"length": 8}, "out of range; using 8"),
    (query(length=["-5"]), {"length": 3}, "out of range; using 3"),
    (query(query=["2.7"]), {"query": 3}, None),
    (query(mask=["maybe"]), {"mask": True}, "mask='maybe' is not on/off; ignored"),
    (query(phase=[SCRIPT]), {"phase": "prefill"}, "is not one of prefill, decode; ignored"),
    (query(length=["3", "5", "7"]), {"length": 7}, "length given 3 times; using the last"),
    (query(length=[b"\xff\xfe"]), {"length": 6}, "is not a number"),
    (query(length=["4" * 100_000]), {"length": 8}, "out of range; using 8"),
])
def test_a_hostile_query_is_repaired_with_a_note(args, expect, repair):
    head = HeadPanel()
    repairs = url_state.restore(head, list(head.url_keys), args)
    for name, value in expect.items():
        assert getattr(head, name) == value, (name, getattr(head, name))
    if repair:
        assert any(repair in n for n in repairs), repairs
    assert all(len(n) < 200 for n in repairs), "a repair echoes the whole value"


def test_repairs_are_shown_escaped():
    pane = url_state.repairs_pane([f"phase={SCRIPT!r} is not one of prefill, decode; ignored"])
    assert "<script" not in pane.object and "&lt;script&gt;" in pane.object


# --- the kernel lab's caps ----------------------------------------------------------------

@pytest.mark.parametrize("request_, words", [
    (lab.LabRequest(length=10**9), "over this server's cap"),
    (lab.LabRequest(batch=8, heads=64, kv_heads=64, length=8192, head_dim=256), "cap"),
    (lab.LabRequest(batch=8, heads=64, kv_heads=64, length=8192, head_dim=64, backend="math"),
     "the math path"),
    (lab.LabRequest(batch=8, heads=64, kv_heads=8, length=4096, head_dim=64, backend="numpy"),
     "Refused"),
    (lab.LabRequest(heads=0), "at least 1"),
    (lab.LabRequest(heads=8, kv_heads=3), "must divide"),
    (lab.LabRequest(dtype="float128"), "dtype must be one of"),
])
def test_kernel_lab_requests_beyond_its_caps_are_refused_before_running(request_, words):
    why = lab.refusal(request_, lab.Caps())
    assert why and words in why, why


# --- against a running server ------------------------------------------------------------

def files_holding(marker, roots, since):  # -> files under roots changed since `since` with marker
    found = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in (".git", ".venv", "node_modules")]
            for name in names:
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                    if st.st_mtime < since or st.st_size > 50_000_000:
                        continue
                    with open(path, "rb") as f:
                        if marker.encode() in f.read():
                            found.append(path)
                except OSError:
                    continue
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    cwd, home, tmpdir = tmp / "cwd", tmp / "home", tmp / "tmp"
    for d in (cwd, home, tmpdir):
        d.mkdir()
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmpdir), PYTHONDONTWRITEBYTECODE="1")
    port = load.free_port()
    started = time.time()
    with open(tmp / "server.log", "w") as log:
        # no reused first paints to warm (about 14 s of CPU): hostile input meets the sessions
        # each request builds
        proc = load.start_server(port, ["--no-reuse-sessions"], log, cwd=cwd, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        load.wait_healthy(base, proc)
        yield SimpleNamespace(url=base, proc=proc, dirs=(cwd, home, tmpdir), started=started,
                              log=tmp / "server.log")
    finally:
        load.stop_server(proc)


def run(coro, timeout=120):
    async def bounded():
        return await asyncio.wait_for(coro, timeout)
    return load.run_sync(bounded())


async def open_session(base, path):  # a live session: "/heatmap" opens /live/heatmap
    s = load.Session(base, "/live" + path)
    await s.open(load.AsyncHTTPClient(force_instance=True))
    return s


def model(session, name, **attributes):
    return load.find_model(session.doc, name, **attributes)


async def still_answers(session):  # the bystander: a click on /heatmap still gets its patch
    toggle = model(session, "Toggle", label="causal mask")
    seconds, _ = await session.change(toggle, "active", False)
    seconds2, _ = await session.change(toggle, "active", True)
    return max(seconds, seconds2)


def shown_html(doc_or_patch_events):  # every HTML pane's text as the browser sets innerHTML
    # Panel sends an HTML pane's markup escaped once; the browser unescapes it into innerHTML
    return [html.unescape(o["attributes"]["text"]) for o in load.objects(doc_or_patch_events)
            if isinstance(o.get("attributes", {}).get("text"), str)] + [
            html.unescape(e["new"]) for e in _events(doc_or_patch_events)
            if e.get("attr") == "text" and isinstance(e.get("new"), str)]


def _events(tree):
    return tree.get("events", []) if isinstance(tree, dict) else []


def no_live_markup(fragments):  # nothing hostile became an element
    return not any(("<script" in f or "<img src=x" in f) for f in fragments)


async def upload(session, file_input, name, data):
    await session.send_events([load.changed(file_input, "filename", name),
                               load.changed(file_input, "mime_type", "application/json"),
                               load.changed(file_input, "value", base64.b64encode(data).decode())])


def test_hostile_pastes_and_uploads_through_the_server(site):
    async def scenario():
        bystander = await open_session(site.url, "/heatmap")
        hostile = await open_session(site.url, "/cost")
        try:
            buttons = model(hostile, "panel.models.widgets.RadioButtonGroup",
                            labels=["Qwen3-8B", "GPT-2", "Llama-3-8B", "Custom"])
            area = model(hostile, "panel.models.widgets.TextAreaInput")
            use = model(hostile, "panel.models.widgets.Button", label="Use this config")
            file_input = model(hostile, "FileInput")
            await hostile.send_events([load.changed(buttons, "active", 3)])
            seen = []
            for i, (what, text, words) in enumerate(HOSTILE_CONFIGS):
                if text == b"":  # an empty upload reaches the picker as None: see below
                    text = ""
                # a good config first, so that every error is news the server must send
                good = config(_name_or_path=f"{MARKER}-{i}")
                await hostile.send_events([load.changed(area, "value", good),
                                           load.changed(area, "value_input", good)])
                await hostile.send_events([load.button_click(use)])
                await hostile.wait_patch(lambda raw, i=i: f"{MARKER}-{i}" in raw, 30)
                if isinstance(text, str) and "\x00" not in text:
                    await hostile.send_events([load.changed(area, "value", text),
                                               load.changed(area, "value_input", text)])
                    await hostile.send_events([load.button_click(use)])
                    source = "the pasted text"
                else:  # bytes: upload them as a file whose name carries markup
                    data = text.encode() if isinstance(text, str) else text
                    await upload(hostile, file_input, f"{SCRIPT}.json", data)
                    source = html.escape(f"{SCRIPT}.json")
                try:
                    patch = await hostile.wait_patch(lambda raw: "Could not use" in raw, 30)
                except load.LoadError as e:
                    raise AssertionError(f"{what}: {e}\n{site.log.read_text()[-3000:]}") from None
                shown = shown_html(json.loads(patch.raw))
                message = next((f for f in shown if "Could not use" in f), "")
                assert source in message, (what, message[:500])
                assert html.escape(words) in message or words in message, (what, message[:500])
                assert no_live_markup(shown), (what, shown)
                assert len(message) < 2_000, f"{what}: the message echoes the input"
                seen.append(what)
                assert await still_answers(bystander) < 10, f"bystander slow after {what}"
            # the hostile session itself still works: a preset is counted again
            await hostile.send_events([load.changed(buttons, "active", 1)])
            await hostile.wait_patch(lambda raw: "GPT-2" in raw, 30)
            return seen
        finally:
            await hostile.close()
            await bystander.close()

    seen = run(scenario(), timeout=240)
    assert len(seen) == len(HOSTILE_CONFIGS)
    assert site.proc.poll() is None, "the server died"
    with urllib.request.urlopen(site.url + "/health", timeout=10) as r:
        assert r.status == 200
    for folder in site.dirs:
        assert not any(Path(folder).iterdir()), f"the server wrote into {folder}"
    written = files_holding(MARKER, [*site.dirs, ROOT, "/tmp"], site.started)
    assert not written, f"an uploaded config reached the disk: {written}"


HOSTILE_URLS = [
    ("/heatmap?length=abc&length=5&query=1e999&mask=maybe&phase=" + SCRIPT,
     ["length given 2 times", "query=", "is not a finite number", "mask=", "phase="]),
    ("/cost?model=gpt2&model=llama-3-8b&prompt=" + "9" * 40 + "&kernel=<b>x</b>",
     ["model given 2 times", "prompt=", "out of range", "kernel="]),
    ("/overflow?scores=" + "<img src=x onerror=alert(1)>" + "&subtract_max=2",
     ["subtract_max="]),
    ("/kernel-lab?length=99999999&batch=1000&heads=0&dtype=float128&backend=evil",
     ["length=", "out of range", "batch=", "dtype=", "backend="]),
    ("/sqrt-dk?d_k=" + "1" * 5000, ["d_k="]),
]


@pytest.mark.parametrize("url, repairs", HOSTILE_URLS,
                         ids=[u.split("?")[0] for u, _ in HOSTILE_URLS])
def test_a_hostile_url_opens_a_working_page_showing_its_repairs(site, url, repairs):
    path, _, q = url.partition("?")
    safe = path + "?" + "&".join(k + "=" + quote(v, safe="") for k, _, v in
                                 (pair.partition("=") for pair in q.split("&")))

    async def scenario():
        s = await open_session(site.url, safe)
        try:
            return s.doc
        finally:
            await s.close()

    doc = run(scenario())
    shown = shown_html(doc)
    for repair in repairs:
        assert any(repair in f for f in shown), (repair, url)
    assert no_live_markup(shown), shown
    assert site.proc.poll() is None


def test_an_absurdly_long_url_is_refused_and_the_server_stays_up(site):
    # past Tornado's 64 KB header limit: a 4xx, or the connection closed without an answer
    try:
        urllib.request.urlopen(site.url + "/heatmap?length=" + "9" * 200_000, timeout=30)
        pytest.fail("a 200 kB URL was served")
    except urllib.error.HTTPError as e:
        assert 400 <= e.code < 500
    except (urllib.error.URLError, ConnectionError):
        pass
    with urllib.request.urlopen(site.url + "/health", timeout=10) as r:
        assert r.status == 200
    assert site.proc.poll() is None


def test_kernel_lab_beyond_its_caps_through_the_server(site):
    async def scenario():
        bystander = await open_session(site.url, "/heatmap")
        s = await open_session(site.url, "/kernel-lab")
        try:
            spinners = {o["attributes"].get("title", ""): o["id"] for o in load.objects(s.doc)
                        if o["name"] == "Spinner"}
            length = next(v for k, v in spinners.items() if k.startswith("prompt length"))
            batch = next(v for k, v in spinners.items() if k.startswith("batch"))
            heads = next(v for k, v in spinners.items() if k.startswith("query heads"))
            head_dim = next(v for k, v in spinners.items() if k.startswith("head_dim"))
            backend = model(s, "panel.models.widgets.RadioButtonGroup",
                            labels=["auto", "flash", "math", "numpy"])
            run_button = model(s, "panel.models.widgets.Button", label="Run")
            # past the widgets' own bounds: refused by the parameters, nothing runs
            await s.send_events([load.changed(length, "value", 10**12),
                                 load.changed(batch, "value", -3)])
            # within every bound, past the byte cap: the plan says so before any run
            await s.send_events([load.changed(batch, "value", 8),
                                 load.changed(heads, "value", 64),
                                 load.changed(head_dim, "value", 256),
                                 load.changed(length, "value", 8192),
                                 load.changed(backend, "active", 2)])
            await s.wait_patch(lambda raw: "Refused" in raw, 30)
            await s.send_events([load.button_click(run_button)])
            # then a change the server answers: it handles one session's events in the order
            # sent, so once the plan for a small run (allowed) arrives, the click was handled
            await s.send("PATCH-DOC", {"events": [load.changed(batch, "value", 1),
                                                  load.changed(length, "value", 16)]})
            allowed_plan = ("Will run", "Asking PyTorch", "Nothing can run")  # plan_html's
            after_click = []
            while not (after_click and any(p in after_click[-1] for p in allowed_plan)):
                _, patch = await s.expect("PATCH-DOC", 30)
                after_click.append(patch.raw)
            assert not [raw for raw in after_click if "is running on this server" in raw
                        or " in line" in raw], "the refused run was started"
            assert await still_answers(bystander) < 10
        finally:
            await s.close()
            await bystander.close()

    run(scenario())
    assert site.proc.poll() is None
