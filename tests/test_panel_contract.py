"""What every panel of the one shape promises (docs/PANEL_CONTRACT.md), checked for each
panel of the registry: its table of states weighs less than its record's `table_budget`,
holds every setting of its controls under the index the browser's switcher computes, and
gives what `state()` gives; `state()` is pure and JSON; its URL keys are its parameters. A
panel without the shape has a stand-in for static pages. Its stylesheets live in
static/css/, not in Python strings.

How long a table takes to build is a benchmark's question, not a test's (this machine is
shared): the sizes and times are printed, the sizes asserted.
"""

import ast
import gzip
import json
import re
import time
from pathlib import Path

import pytest

from app.kit import registry, states
from tests.state_checks import mismatches, sample_states

ROOT = Path(__file__).resolve().parents[1]

SHAPED = [r for r in registry.PANELS if issubclass(r.viewer_class, states.StatePanel)]


def test_a_panel_without_the_shape_has_a_stand_in_for_static_pages():
    # it has no table of states for a static page to switch, so a static page shows its
    # stand-in (the kernel lab, which runs torch, links to its live page)
    for record in registry.PANELS:
        if record not in SHAPED:
            assert record.static_stand_in, f"{record.slot}: not a StatePanel and no stand-in"


def looked_up(table, params):  # -> the state the browser's switcher reads for `params`
    names = [c["name"] for c in table["controls"]]
    at = [table["controls"][i]["values"].index(params[n]) for i, n in enumerate(names)]
    out = {}
    for part in table["parts"]:
        index = 0
        for c in part["controls"]:  # row-major over the part's controls, as switcher.js does
            index = index * len(table["controls"][c]["values"]) + at[c]
        out.update(part["values"][part["index"][index]])
    return out


@pytest.mark.parametrize("record", SHAPED, ids=lambda r: r.slot)
def test_the_table_is_small_and_holds_what_state_gives(record):
    cls = record.viewer_class
    t0 = time.perf_counter()
    table = states.table(cls.controls(), cls.parts())
    seconds = time.perf_counter() - t0
    raw = json.dumps(table, allow_nan=False).encode()  # NaN is not JSON: the browser reads it
    print(f"{record.slot} table: {len(raw):,} B, {len(gzip.compress(raw)):,} B gzip, "
          f"built in {seconds:.2f} s")
    assert len(raw) < record.table_budget  # its record's (app/kit/registry.py)
    assert [c["name"] for c in table["controls"]] == [c.name for c in cls.controls()]
    for params in sample_states(cls, 25, seed=7):
        assert looked_up(table, params) == cls.state(**params), params


@pytest.mark.parametrize("record", SHAPED, ids=lambda r: r.slot)
def test_state_is_pure_and_every_default_is_a_stop(record):
    cls = record.viewer_class
    defaults = {c.name: cls.param[c.name].default for c in cls.controls()}
    for control in cls.controls():
        assert defaults[control.name] in control.values, control.name
    first = states.canonical(cls.state(**defaults))
    cls.state(**sample_states(cls, 1, seed=3)[0])  # another state between: nothing carries
    assert states.canonical(cls.state(**defaults)) == first


@pytest.mark.parametrize("record", SHAPED, ids=lambda r: r.slot)
def test_its_url_keys_are_its_parameters(record):
    cls = record.viewer_class
    assert cls.url_keys and set(cls.url_keys) <= set(cls.param), cls.url_keys


# a CSS rule: a selector, then declarations `name: value;` in braces, on lines of their own
CSS_RULE = re.compile(r"(?m)^\s*[.#:@a-z][^{}\n;]*\{\s*(?:[a-z-]+\s*:\s*[^;{}]+;\s*)+\}?")


def css_in_python(source):  # -> the first CSS rule found in a string literal of the source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = CSS_RULE.search(node.value)
            if found:
                return f"line {node.lineno}: {found.group(0).strip()[:60]}"
    return None


def test_stylesheets_live_in_static_css_not_in_python():
    assert css_in_python('S = """\n.ae-x p { margin: 4px 0; }\n"""\n')  # the scan sees one
    assert css_in_python('H = "<p style=\\"margin: 0\\">x</p>"\n') is None  # a style attribute
    found = {str(p.relative_to(ROOT)): css_in_python(p.read_text(encoding="utf-8"))
             for p in sorted((ROOT / "app").rglob("*.py"))}
    assert not {p: f for p, f in found.items() if f}, "CSS belongs in static/css/"
    for path in (ROOT / "static" / "css").glob("*.css"):  # each one read by some module
        assert any(f'"{path.name}"' in p.read_text(encoding="utf-8")
                   for p in (ROOT / "app").rglob("*.py")), path.name


@pytest.mark.parametrize("record", SHAPED, ids=lambda r: r.slot)
def test_a_live_panel_holds_exactly_what_state_gives(record):
    # a live session pushes each new state into the models: after every change, each target
    # holds its value of state() (the live half of "live and static apply the same state";
    # a log's lines depend on the order of changes, so they are left to the panels' tests)
    cls = record.viewer_class
    panel = cls()
    for params in sample_states(cls, 25, seed=11):
        panel.param.update(**params)
        expected = {k: v for k, v in cls.state(**params).items() if not k.startswith("log:")}
        assert mismatches(panel, expected) == [], params
