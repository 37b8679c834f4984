"""A deep link reads the same on a static page (static/page_url.js) as live (app/kit/url_state.py).

For every control of every panel in the registry, each raw query value below goes through
Python's `coerce` (as `restore` calls it, its repair then named by the page's key) and through
the browser's `AE.url.coerce`, run in one node process over the control entries the build
ships (`StatePanel.table()`). They must agree on what is ignored, the stop taken and each
repair's every character. A static page has only its stops, so two answers differ by design:

- a number live takes between two stops: the page takes a nearest stop and says it is not
  one of this page's stops;
- a choice live takes that the page lacks ("custom", a vector typed in): the page ignores it,
  and its repair lists the choices the page has (so does its repair for a value neither takes).
"""

import itertools
import json
import math
import random
import struct
import subprocess
from pathlib import Path

import param
import pytest

from app.kit import registry, states, url_state
from tests import js_twin

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "static" / "page_url.js"
SEED = 20261204
SHAPED = [r for r in registry.PANELS if issubclass(r.viewer_class, states.StatePanel)]
BETWEEN = " (the live explorable takes any value)"

# Loads page_url.js as a page does, with just the window it touches while loading, then reads
# {"controls": [...], "cases": [[control, key, raw], ...]} on stdin; writes [[stop, repair], ...].
HARNESS = r"""
const fs = require("fs"), vm = require("vm");
const noop = () => {};
const window = {location: {href: "https://example.org/heatmap", pathname: "/heatmap",
                           search: ""},
                history: {replaceState: noop}, addEventListener: noop,
                requestAnimationFrame: noop, requestIdleCallback: noop,
                document: {currentScript: null}, URL, setTimeout};
window.window = window;
vm.createContext(window);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), window);
const job = JSON.parse(fs.readFileSync(0, "utf8"));
const out = job.cases.map(([c, key, raw]) => window.AE.url.coerce(job.controls[c], key, raw));
process.stdout.write(JSON.stringify(out));
"""


def node() -> str:
    return js_twin.node(JS.name)


def run_js(entries: list, cases: list, script: Path = JS) -> list:  # -> [[stop, repair], ...]
    job = json.dumps({"controls": entries, "cases": cases})
    out = subprocess.run([node(), "-e", HARNESS, str(script)], input=job, capture_output=True,
                         text=True, encoding="utf-8", timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout)
    assert len(results) == len(cases)
    return results


# --- what the page must answer, from Python's reading ---------------------------------------

def shown_as(raw):  # the value as a repair quotes it (url_state.coerce's `shown`)
    raw = raw.strip()[:url_state.MAX_VALUE_CHARS]
    return raw if len(raw) <= 24 else raw[:24] + "…"


def stop_index(stops, value):  # -> its index among the stops, -1 if none (True is not 1)
    return next((i for i, s in enumerate(stops)
                 if s == value and isinstance(s, bool) == isinstance(value, bool)), -1)


def page_answers(control, p, key, raw):  # -> {stop index (-1: ignored): repair} the page may give
    value, repair = url_state.coerce(p, control.name, raw)
    repair = repair and url_state.rename_repair(repair, {control.name: key})
    choices = ", ".join(str(v) for v in control.values)
    if value is None:
        if control.kind == "choice":  # the choices the page has, which may be fewer than live's
            repair = repair.rsplit(" is not one of ", 1)[0] + f" is not one of {choices}; ignored"
        return {-1: repair}
    at = stop_index(control.values, value)
    if at >= 0:
        return {at: repair}
    if control.kind == "choice":  # live takes it; the page has no such stop
        return {-1: f"{key}={shown_as(raw)!r} is not one of {choices}; ignored"}
    gaps = [abs(v - value) for v in control.values]
    return {i: f"{key}={shown_as(raw)} is not one of this page's stops; "
               f"using {url_state.number_text(v)}{BETWEEN}"
            for i, v in enumerate(control.values) if gaps[i] == min(gaps)}


# --- the raw values -----------------------------------------------------------------------

FULLWIDTH = str.maketrans("0123456789.-", "０１２３４５６７８９．－")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
MATH_BOLD = str.maketrans({str(d): chr(0x1D7CE + d) for d in range(10)})  # astral digits
PADS = [" ", "\t", "\n", "\u00a0", "\u3000", "\u2003", "\x1c", "\x85", "\ufeff", "\u200b"]

ANY = [  # every control gets these
    "", " ", "\t\n", "abc", "x y", "null", "None", "undefined", "[]", "{}", "'", '"', "it's",
    'say "hi"', "both ' and \"", "back\\slash", "tab\tin", "new\nline", "cr\rx", "\x00", "\x07",
    "\x7f", "a\x1cb", "\u200b", "\u00ad", "\u2028x", "x\u2029y", "a\u00a0b", "a\u3000b",
    "\ue000", "\U000f0000", "été", "ñandú", "日本語", "😀", "😀" * 30, "é" * 30,
    "ΑΣ", "İ", "ß", "ǅ", "K", "a" * 24, "a" * 25, "a" * 101, "b" * 150, "1" * 100 + "x",
    "5" + "0" * 98 + "z", "5" + "0" * 99, " " + "7" * 120, "1e3", "1E3", "-inf", "+inf", "inf",
    "INF", "infinity", "-Infinity", "infinit", "nan", "NaN", "-nan", "+nan", "nan(1)", "1_000",
    "1__000", "_1", "1_", "1_.5", "1._5", "1e1_0", "1e_1", "0x10", "0b1", "0o7", "1j", ".5",
    "5.", ".", "-.5", "+.5", "+5", "--5", "+-5", "1e", "e1", "1e+2", "1E-2", "1.5e1", "1e500",
    "-1e500", "1e-500", "-0", "+0", "0", "00", "007", "0.0", "-0.0", "1,5", "1.5.5", "5 5",
    "5%", "$5", "5px", "½", "²", "Ⅷ", "٫5", "１６", "１６．５", "٣", "३", "𝟑", "١_٠٠٠",
    "ｏｎ", "ＴＲＵＥ", "true", "TRUE", "True", "tRuE", "false", "FALSE", "on", "ON", "On",
    "off", "OFF", "yes", "YES", "Yes", "no", "NO", "1", "0", "y", "n", "t", "f", "enable",
    "truee", " on ", "\ton\n", "\u00a0off\u3000", "\x1cyes\x1f", "\ufeffon", "o n", "prefill",
    "DECODE", "custom", "Custom", "gpt2", "GPT2", "float32", "naive",
]


def spellings(stop):  # -> one stop as a link may write it: "0.25", ".25", "0.2500", "2.0", "2"
    text = url_state.number_text(stop)  # "4", "0.25", "1e-7"
    out = [text, repr(float(stop)), f"{float(stop):e}", "+" + text, f" {text} "]
    if "e" not in text:
        point = text if "." in text else text + ".0"
        out += [point, point + "00", f"{float(stop) * 100!r}e-2"]
    return out + [t.replace("0.", ".", 1) for t in out if t.lstrip("+ ").startswith("0.")]


def number_raws(stops, rng):  # -> values at, near, between and past a number control's stops
    low, high = min(stops), max(stops)
    out = [f"{low - 1}", f"{low - 0.5}", f"{low - 0.4}", f"{low - 1e6}", f"-{high}",
           f"{high + 0.4}", f"{high + 0.5}", f"{high + 1}", f"{high * 1000}", f"{high}e20",
           f"{high:_}", f"{high / 10}e1", f"0{high}"]
    for s in stops:
        out += [str(s), f"{s}.0", f"{s}e0", f"+{s}", f"00{s}", f" {s} ", f"{s}.5", f"{s:_}",
                str(s).translate(FULLWIDTH), str(s).translate(ARABIC),
                str(s).translate(MATH_BOLD), f"{s}\u3000", f"\x1c{s}"]
        out += [repr(s + d) for d in (-1, -0.6, -0.5, -0.4, -0.1, 0.1, 0.4, 0.5, 0.6, 1)]
        out += spellings(s)
    for a, b in itertools.pairwise(stops):
        mid = (a + b) / 2
        out += [repr(x) for x in (a + 1, b - 1, mid, mid - 0.5, mid + 0.5, mid - 0.1, mid + 0.1)]
        out += [repr(a + (b - a) * f) for f in (0.01, 0.25, 0.49, 0.51, 0.75, 0.99)]  # any gap
    out += [repr(low - (high - low) / 100), repr(low / 2), repr(high + (high - low) / 100)]
    for _ in range(20):  # anywhere, and whole numbers anywhere (the stops may be decimals)
        out += [repr(rng.uniform(low - 2, high + 2)),
                str(rng.randint(math.floor(low) - 2, math.ceil(high) + 2))]
    return out


def word_raws(words):  # -> each choice as written, in other cases, padded, cut, grown
    out = []
    for w in words:
        out += [w, w.lower(), w.upper(), w.title(), w.swapcase(), w + "x", w[:-1], w * 2,
                w.replace(" ", ""), w + ", 0"] + [pad + w + pad for pad in PADS]
    return out


def control_raws(control, rng):
    if control.kind == "number":
        return number_raws(list(control.values), rng)
    if control.kind == "boolean":
        return word_raws(["on", "off", "True", "False", "yes", "no", "1", "0", "true", "false"])
    return word_raws([str(v) for v in control.values])


def keys_of(record):  # -> {control name: [its query keys]}: its own name, and its chapter's key
    plan = url_state.chapter_plan(registry.chapter_panels(record.chapter),
                                  registry.follows(record.chapter))[record.slot]
    keys = {c.name: [c.name] for c in record.viewer_class.controls()}
    for key, name in plan.items():
        if key != name:
            keys[name].append(key)
    return keys


def gather(controls, rng):  # [(where, Control, table entry, parameter, keys)] ->
    # (entries, cases, what the page may answer)
    entries, cases, answers = [], [], []
    for where, control, entry, p, keys in controls:
        assert entry["name"] == control.name and entry["kind"] == control.kind, where
        entries.append(entry)
        try:
            raws = list(dict.fromkeys(ANY + control_raws(control, rng)))
        except Exception as e:  # a crash here should say whose stops it could not read
            e.add_note(f"making raw values for {where}'s {control.name} {control.values}")
            raise
        for key in keys:
            for raw in raws:
                cases.append([len(entries) - 1, key, raw])
                answers.append(page_answers(control, p, key, raw))
    return entries, cases, answers


@pytest.fixture(scope="module")
def both():  # -> (entries, cases, what the page may answer, what page_url.js answered)
    controls = []
    for record in SHAPED:
        cls, keys = record.viewer_class, keys_of(record)
        controls += [(record.slot, control, entry, cls.param[control.name], keys[control.name])
                     for control, entry in zip(cls.controls(), cls.table()["controls"],
                                               strict=True)]
    entries, cases, answers = gather(controls, random.Random(SEED))
    return entries, cases, answers, run_js(entries, cases)


def disagreements(entries, cases, answers, results):  # -> one line per case that differs
    bad = []
    for (c, key, raw), allowed, (stop, repair) in zip(cases, answers, results, strict=True):
        if allowed.get(stop, ()) != repair:
            values = entries[c]["values"]
            got = values[stop] if stop >= 0 else "ignored"
            want = {values[i] if i >= 0 else "ignored": n for i, n in allowed.items()}
            bad.append(f"{entries[c]['name']} as {key}={raw!r}: page {got!r} {repair!r}; "
                       f"python says {want!r}")
    return bad


# --- the tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("record", SHAPED, ids=lambda r: r.slot)
def test_every_url_key_names_a_control_the_page_can_set(record):
    # switcher.js looks each key's parameter up among the table's controls
    names = [c["name"] for c in record.viewer_class.table()["controls"]]
    assert set(record.viewer_class.url_keys) <= set(names)


def test_a_deep_link_reads_the_same_in_the_browser_as_in_python(both):
    entries, cases, answers, results = both
    bad = disagreements(entries, cases, answers, results)
    assert not bad, f"{len(bad)} of {len(cases)} differ:\n" + "\n".join(bad[:40])
    print(f"{len(cases)} cases over {len(entries)} controls agree")
    # the cases reach every kind of answer, for every kind of control
    kinds = {(entries[c]["kind"], stop >= 0, bool(repair),
              bool(repair) and repair.endswith(BETWEEN))
             for (c, _, _), (stop, repair) in zip(cases, results)}
    assert kinds >= {("boolean", True, False, False), ("boolean", False, True, False),
                     ("choice", True, False, False), ("choice", False, True, False),
                     ("number", True, False, False), ("number", True, True, False),
                     ("number", True, True, True), ("number", False, True, False)}, kinds
    params = {type(r.viewer_class.param[c.name]) for r in SHAPED for c in r.viewer_class.controls()}
    assert params >= {param.Boolean, param.Selector, param.Integer, param.String}, params
    assert len(cases) > 8000


MUTANTS = [  # (what, the text in page_url.js, what it becomes)
    ("'yes' is not true", 'const TRUE = ["1", "true", "on", "yes"];',
     'const TRUE = ["1", "true", "on"];'),
    ("a repair's words", "is not on/off; ignored", "is not on or off; ignored"),
    ("99 characters kept", "const MAX_VALUE_CHARS = 100;", "const MAX_VALUE_CHARS = 99;"),
    ("halves round up", "const using = roundHalfEven(clamped);",
     "const using = Math.round(clamped);"),
    ("the value quoted as typed", "return quote + out + quote;", "return \"'\" + s + \"'\";"),
    ("String.trim()", 'raw.replace(STRIP, "")', "raw.trim()"),
    ("ASCII digits only", "const number = asciiDigits(raw);", "const number = raw;"),
]


@pytest.mark.parametrize("what, old, new", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_changed_reading_is_caught(both, tmp_path, what, old, new):
    entries, cases, answers, _ = both
    changed = js_twin.mutant(JS, tmp_path, old, new)
    assert disagreements(entries, cases, answers, run_js(entries, cases, changed)), what


# --- decimal stops: no registered panel has them yet, so a panel made here ------------------

class Decimals(param.Parameterized):  # a panel's parameters over decimal stops
    tau = param.Number(default=1.0, bounds=(0.25, 4.0))
    eps = param.Number(default=1e-5, bounds=(1e-7, 1e-3))  # a stop both write as 1e-7
    big = param.Number(default=1e21, bounds=(1e20, 5e21))  # 1e20 in full digits, 1e21 as 1e+21


DECIMAL_CONTROLS = (states.Control.slider("tau", (0.25, 0.5, 1.0, 2.0, 4.0)),
                    states.Control.stop_slider("eps", (1e-7, 1e-6, 1e-5, 1e-3)),
                    states.Control.slider("big", (1e20, 1e21, 5e21)))


@pytest.fixture(scope="module")
def decimals():  # -> as both(), for Decimals under its own keys and as a later panel's
    entries = states.table(DECIMAL_CONTROLS, [])["controls"]
    controls = [("Decimals", c, entry, Decimals.param[c.name], [c.name, f"extra_{c.name}"])
                for c, entry in zip(DECIMAL_CONTROLS, entries, strict=True)]
    entries, cases, answers = gather(controls, random.Random(SEED))
    return entries, cases, answers, run_js(entries, cases)


def test_decimal_stops_read_the_same_in_the_browser_as_in_python(decimals):
    entries, cases, answers, results = decimals
    bad = disagreements(entries, cases, answers, results)
    assert not bad, f"{len(bad)} of {len(cases)} differ:\n" + "\n".join(bad[:40])
    kinds = {(stop >= 0, bool(repair), bool(repair) and repair.endswith(BETWEEN))
             for stop, repair in results}
    assert kinds == {(True, False, False), (True, True, False), (True, True, True),
                     (False, True, False)}, kinds
    page = {(entries[c]["name"], key, raw): answer
            for (c, key, raw), answer in zip(cases, results, strict=True)}
    for raw, stop in [("0.25", 0), (".25", 0), ("+.25", 0), ("25.0e-2", 0), ("0.2500", 0),
                      ("1", 2), ("1.0", 2), ("2.0", 3), ("4.000", 4)]:
        assert page["tau", "tau", raw] == [stop, None], raw
    assert page["tau", "tau", "1e3"] == [4, "tau=1e3 is out of range; using 4"]
    assert page["tau", "extra_tau", "0"] == [0, "extra_tau=0 is out of range; using 0.25"]
    assert page["tau", "tau", "0.3125"] == [0, "tau=0.3125 is not one of this page's stops; "
                                            "using 0.25" + BETWEEN]
    assert page["eps", "eps", "0"] == [0, "eps=0 is out of range; using 1e-7"]
    assert page["big", "big", "0"] == [0, "big=0 is out of range; using 100000000000000000000"]
    assert page["big", "big", "5e+24"] == [2, "big=5e+24 is out of range; using 5e+21"]
    # live says the same of the value it keeps
    assert url_state.coerce(Decimals.param.tau, "tau", "1e3") == (
        4.0, "tau=1e3 is out of range; using 4")
    assert len(cases) > 1000


def test_python_writes_numbers_as_javascript_does():
    # url_state.number_text against String() itself, at its layout's edges and anywhere
    rng = random.Random(SEED)
    edges = [0.0, -0.0, 4.0, -2.5, 0.25, 0.1 + 0.2, 1 / 3, 1e-7, 1e-6, 9.5e-7, 1e20, 1e21,
             123456789012345680000.0, 2.0 ** 53 + 2, 5e-324, 1.7976931348623157e308]
    anywhere = [struct.unpack("d", rng.randbytes(8))[0] for _ in range(5000)]
    xs = [x for x in edges + anywhere if math.isfinite(x)]
    script = ("const xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify(xs.map(String)));")
    out = subprocess.run([node(), "-e", script], input=json.dumps(xs), capture_output=True,
                         text=True, timeout=60, check=True)
    bad = [(x, url_state.number_text(x), js)
           for x, js in zip(xs, json.loads(out.stdout), strict=True)
           if url_state.number_text(x) != js]
    assert not bad, bad[:20]


@pytest.mark.parametrize("write", [str, repr])
def test_python_writing_floats_its_own_way_is_caught(decimals, monkeypatch, write):
    # "using 4.0" (str) or "using 1e-07" (repr) where the page writes "using 4", "using 1e-7"
    entries, cases, _, results = decimals
    monkeypatch.setattr(url_state, "number_text", write)
    answers = [page_answers(DECIMAL_CONTROLS[c], Decimals.param[entries[c]["name"]], key, raw)
               for c, key, raw in cases]
    assert disagreements(entries, cases, answers, results)


def test_a_wrong_expected_answer_is_caught(decimals):
    entries, cases, answers, results = decimals
    at = cases.index([0, "tau", "1e3"])
    for wrong in ({4: "tau=1e3 is out of range; using 4.0"},  # its repair
                  {3: "tau=1e3 is out of range; using 4"},  # its stop
                  {-1: "tau=1e3 is out of range; using 4"}):  # ignored
        expected = answers[:at] + [wrong] + answers[at + 1:]
        bad = disagreements(entries, cases, expected, results)
        assert len(bad) == 1 and "tau='1e3'" in bad[0], bad


DECIMAL_MUTANTS = [  # (what, the text in page_url.js, what it becomes)
    ("a whole number written with .0", "const numberText = (x) => String(x);",
     "const numberText = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));"),
    ("0.25 written .25", "const numberText = (x) => String(x);",
     'const numberText = (x) => String(x).replace(/^0\\./, ".");'),
    ("decimal stops rounded to whole numbers", "if (values.every(Number.isInteger)) {",
     "if (values.every(Number.isFinite)) {"),
]


@pytest.mark.parametrize("what, old, new", DECIMAL_MUTANTS, ids=[m[0] for m in DECIMAL_MUTANTS])
def test_a_changed_reading_of_decimal_stops_is_caught(decimals, tmp_path, what, old, new):
    entries, cases, answers, _ = decimals
    changed = js_twin.mutant(JS, tmp_path, old, new)
    assert disagreements(entries, cases, answers, run_js(entries, cases, changed)), what
