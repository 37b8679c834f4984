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
import random
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
    return {i: f"{key}={shown_as(raw)} is not one of this page's stops; using {v}{BETWEEN}"
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
    for a, b in itertools.pairwise(stops):
        mid = (a + b) / 2
        out += [repr(x) for x in (a + 1, b - 1, mid, mid - 0.5, mid + 0.5, mid - 0.1, mid + 0.1)]
    for _ in range(20):  # anywhere, and whole numbers anywhere
        out += [repr(rng.uniform(low - 2, high + 2)), str(rng.randint(low - 2, high + 2))]
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


@pytest.fixture(scope="module")
def both():  # -> (entries, cases, what the page may answer, what page_url.js answered)
    rng = random.Random(SEED)
    entries, cases, answers = [], [], []
    for record in SHAPED:
        cls = record.viewer_class
        keys = keys_of(record)
        for control, entry in zip(cls.controls(), cls.table()["controls"], strict=True):
            assert entry["name"] == control.name and entry["kind"] == control.kind
            entries.append(entry)
            raws = list(dict.fromkeys(ANY + control_raws(control, rng)))
            for key in keys[control.name]:
                for raw in raws:
                    cases.append([len(entries) - 1, key, raw])
                    answers.append(page_answers(control, cls.param[control.name], key, raw))
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
