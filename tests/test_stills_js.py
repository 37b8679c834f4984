"""static/stills.js draws a panel's still in any state of its table, byte for byte as
app/chapters/stills.py draws it in Python (issue 41: controls that work before Bokeh does):
its charts' SVGs, and its readouts' HTML as a still shows them (chapter_page.still_html).

The oracle is Python: for every state panel of the registry, the panel is built as a static
build builds it, described once (app/chapters/still_figures.py `describe`), then set to each
state of a spread of its table (every state when the table has at most ALL_STATES, else
SPREAD states: the first, the last, every stop of every control, the rest drawn with a fixed
seed) and its panes drawn with `stills.stills_of`. The JavaScript gets the description, the
table as a page's table script carries it (JavaScript text) and the stops, looks the state
up in the table itself (`AE.stills.stateAt`) and must write the same SVG: no normalisation,
the strings are compared as they are. One node process runs every case (tests/js/
stills_cases.js, the cases as JSON on stdin).

Negative controls: a state with one value changed, a description with one property changed,
and a copy of stills.js with Python's round-half-to-even taken out, each must make a
comparison fail; Python's and the JavaScript's number formats are compared on their own on
the values where they differ most easily (halves, -0, %g's exponents).

Every state panel's still can be switched (NOT_SWITCHABLE is empty); the kernel lab is not a
state panel (a static page shows a link to the live one instead), so it has no table.
"""

import copy
import functools
import itertools
import json
import math
import random
import subprocess
import time
from pathlib import Path

import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.chapters import chapter_page, still_figures, stills
from app.chapters.content import TAG
from app.kit import chrome, registry, states
from tests import js_twin

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "static" / "stills.js"
HARNESS = ROOT / "tests" / "js" / "stills_cases.js"
ALL_STATES = 400  # a table this small is compared in every state
SPREAD = 60  # else this many states, at least
SEED = 41
# slot -> why its still cannot be switched from its table (none today)
NOT_SWITCHABLE: dict[str, str] = {}


def state_slots():
    return [r.slot for r in registry.PANELS
            if issubclass(r.viewer_class, states.StatePanel) and r.slot not in NOT_SWITCHABLE]


def built(slot):  # -> the panel as a static build builds it (a follower with its leader)
    rec = registry.by_slot(slot)
    with states.static_build(), set_curdoc(Document()):
        chrome.apply_figure_theme()
        kw = {rec.follows: registry.by_slot(rec.follows).viewer_class()} if rec.follows else {}
        panel = rec.viewer_class(**kw)
        panel.__panel__()
    return panel


def spread(table, n=SPREAD, seed=SEED):  # -> [stops]: every state, or a spread of n or more
    sizes = [len(c["raw"]) for c in table["controls"]]
    if math.prod(sizes) <= ALL_STATES:
        return [list(at) for at in itertools.product(*map(range, sizes))]
    rng = random.Random(seed)
    out = [[0] * len(sizes), [s - 1 for s in sizes]]
    for i, size in enumerate(sizes):  # every stop of every control
        for stop in range(size):
            at = [rng.randrange(s) for s in sizes]
            at[i] = stop
            out.append(at)
    while len(out) < n:
        out.append([rng.randrange(s) for s in sizes])
    return out


def drawn(panel, at):  # -> the panel's panes drawn by stills.py at these stops, and its
    # readouts as a still shows them (None: left out, no text)
    controls = type(panel).controls()
    panel.param.update(**{c.name: c.values[i] for c, i in zip(controls, at)})
    panes = [stills.stills_of(pane.object) for pane in still_figures.panes_of(panel.__panel__())]
    readouts = [chapter_page.still_html(r.filled()) for r, _ in still_figures.still_readouts(panel)]
    return {"panes": panes,
            "readouts": [html if TAG.sub("", html).strip() else None for html in readouts]}


@functools.cache
def oracle():  # -> (panels for the harness, cases, Python's SVGs, seconds in Python)
    start = time.perf_counter()
    panels, cases, expected = [], [], []
    for slot in state_slots():
        panel = built(slot)
        description = still_figures.describe(panel)  # before any state is set
        table = type(panel).table()
        index = len(panels)
        panels.append({"slot": slot, "description": description,
                       "table": states.canonical(table)})
        for at in spread(table):
            cases.append({"panel": index, "at": at})
            expected.append(drawn(panel, at))
    return panels, cases, expected, time.perf_counter() - start


def run_js(panels, cases, numbers=(), script=JS):
    job = json.dumps({"panels": panels, "cases": cases, "numbers": list(numbers)},
                     allow_nan=False)
    out = subprocess.run([js_twin.node(JS.name), str(HARNESS), str(script)], input=job,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@functools.cache
def js_results():
    panels, cases, _, _ = oracle()
    start = time.perf_counter()
    return run_js(panels, cases)["cases"], time.perf_counter() - start


def first_difference(a, b):  # -> a short view of where two SVGs part
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"\n python: …{a[max(0, at - 120):at + 120]}\n     js: …{b[max(0, at - 120):at + 120]}"


def mismatches(cases, expected, results):  # -> [(case, what differs)]
    bad = []
    for case, want, got in zip(cases, expected, results, strict=True):
        if "error" in got:
            bad.append((case, got["error"][:600]))
            continue
        for kind in ("panes", "readouts"):
            if len(want[kind]) != len(got[kind]):
                bad.append((case, f"{len(want[kind])} {kind} against {len(got[kind])}"))
                continue
            differ = [i for i, (w, g) in enumerate(zip(want[kind], got[kind])) if w != g]
            if differ:
                i = differ[0]
                bad.append((case, f"{kind} {i}:" + first_difference(str(want[kind][i]),
                                                                     str(got[kind][i]))))
    return bad


@pytest.mark.parametrize("slot", state_slots())
def test_the_browser_draws_every_state_as_python_does(slot):
    panels, cases, expected, _ = oracle()
    results, _ = js_results()
    index = next(i for i, p in enumerate(panels) if p["slot"] == slot)
    mine = [i for i, c in enumerate(cases) if c["panel"] == index]
    table = json.loads(panels[index]["table"])
    sizes = [len(c["raw"]) for c in table["controls"]]
    assert len(mine) >= min(SPREAD, math.prod(sizes))
    for k, size in enumerate(sizes):  # every stop of every control was drawn
        assert {cases[i]["at"][k] for i in mine} == set(range(size))
    bad = mismatches([cases[i] for i in mine], [expected[i] for i in mine],
                     [results[i] for i in mine])
    assert not bad, f"{slot}: {len(bad)} of {len(mine)} states differ; first {bad[0]}"
    assert all(svg.startswith('<svg class="ae-chart"') for i in mine
               for svg in expected[i]["panes"] if svg)


def test_descriptions_are_json_data_and_stay_small():
    panels, _, _, seconds = oracle()
    for p in panels:
        text = json.dumps(p["description"], allow_nan=False, ensure_ascii=False,
                          separators=(",", ":"))  # as a page carries it
        assert "function" not in text and "=>" not in text  # data, not script
        assert len(text.encode()) < 20_000, f"{p['slot']}: {len(text)} bytes"
    _, js_seconds = js_results()
    assert seconds + js_seconds < 60, (seconds, js_seconds)


def test_a_changed_state_or_description_is_caught():
    panels, cases, expected, _ = oracle()
    panels = copy.deepcopy(panels)
    head = next(i for i, p in enumerate(panels) if p["slot"] == "head")
    case = next(c for c in cases if c["panel"] == head)
    want = expected[cases.index(case)]
    table = json.loads(panels[head]["table"])
    state = {}
    for part in table["parts"]:  # the state at the case's stops, looked up in Python
        index = 0
        for c in part["controls"]:
            index = index * len(table["controls"][c]["raw"]) + case["at"][c]
        state.update(part["values"][part["index"][index]])
    same = run_js(panels, [{**case, "state": state}])["cases"][0]
    assert same == want  # the state as given reproduces the still...
    changed = copy.deepcopy(state)
    changed["source:cells"]["weight"][0] = 0.5  # ...one weight changed does not
    described = copy.deepcopy(panels)
    described[head]["description"]["panes"][0][0]["height"] += 10  # nor a taller figure
    got = run_js(panels, [{**case, "state": changed}])["cases"][0]
    got_described = run_js(described, [case])["cases"][0]
    assert mismatches([case], [want], [got]) and mismatches([case], [want], [got_described])


def test_a_mutant_without_round_half_even_is_caught(tmp_path):
    mutant = js_twin.mutant(JS, tmp_path, "return f % 2 === 0 ? f : f + 1;", "return f + 1;")
    panels, cases, expected, _ = oracle()
    results = run_js(panels, cases, script=mutant)["cases"]
    assert mismatches(cases, expected, results)


# numbers where Python's formats and JavaScript's differ most easily
NUMBERS = [0.25, 0.75, 1.25, 8.25, -0.25, -0.04, -0.0, 0.0, 9.95, 9.96, 10.5, 11.5, -10.5,
           2.5, 0.05, 0.15, 99.5, 123456.5, 1e-5, 0.0009765625, 123456789.0, 1e6, 999999.5,
           0.1 + 0.2, 1 / 3, -1234.5678, 5, 7, 100000.0, 100.0, 0.5, 1e-4, 123.4565,
           0.000123456, -2.5e-7, 1e22]


def test_numbers_are_written_as_python_writes_them():
    out = run_js([], [], NUMBERS)
    assert out["num"] == [stills.num(v) for v in NUMBERS]
    assert out["g"] == [f"{v:g}" for v in NUMBERS]
