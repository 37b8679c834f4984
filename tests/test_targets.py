"""A state's target names (app/kit/targets.py): every name a panel's state uses reads as a
record of its kind, model and property, the records are what a page ships (so the browser
parses no name: no script of static/ does, which a scan checks), and a misspelt name fails as
the panel is built."""

import re
from pathlib import Path

import pytest

from app.kit import registry, states
from app.kit.targets import KINDS, Target, parse

ROOT = Path(__file__).resolve().parents[1]


def state_panels():
    return [r for r in registry.PANELS if issubclass(r.viewer_class, states.StatePanel)]


def built(record):
    kw = ({record.follows: registry.by_slot(record.follows).viewer_class()}
          if record.follows else {})
    return record.viewer_class(**kw)


@pytest.mark.parametrize("name, target", [
    ("source:cells", Target("source", "cells")),
    ("holes:readout", Target("holes", "readout")),
    ("log:log", Target("log", "log")),
    ("prop:arrow_b.x_end", Target("prop", "arrow_b", "x_end")),
    ("prop:fig.x_range.end", Target("prop", "fig.x_range", "end")),  # the last dot: the property
])
def test_a_name_reads_as_its_record_and_back(name, target):
    assert parse(name) == target and target.name == name
    record = target.record()
    assert record["name"] == name and record["kind"] == target.kind
    assert record.get("attr") == target.attr


@pytest.mark.parametrize("name", ["", "cells", "source:", "sources:cells", "prop:fig",
                                  "prop:.end", "prop:fig.", ":cells", None, 3])
def test_a_bad_name_is_refused_naming_it(name):
    with pytest.raises(ValueError, match="not a state target"):
        parse(name)


@pytest.mark.parametrize("record", state_panels(), ids=lambda r: r.slot)
def test_every_panels_targets_parse_and_ship_as_records(record):
    panel = built(record)
    assert {parse(name).kind for name in panel.targets} <= set(KINDS)
    shipped = panel.spec()["targets"]
    assert [t["name"] for t in shipped] == list(panel.targets)  # in the models' order
    assert all(parse(t["name"]).record() == t for t in shipped)


def test_a_misspelt_target_fails_as_the_panel_is_built(monkeypatch):
    record = next(r for r in state_panels() if not r.follows)
    cls = record.viewer_class
    build = cls.build

    def misspelt(self, state):
        layout = build(self, state)
        name, model = next(iter(self.targets.items()))
        self.targets["sorce:" + name.partition(":")[2]] = model
        return layout

    monkeypatch.setattr(cls, "build", misspelt)
    with pytest.raises(ValueError, match="not a state target: 'sorce:"):
        cls()


# a browser script that reads a target's kind or property from its name: a prefix literal
# ("prop:"), or the text after a name's last dot or colon
PARSES_A_NAME = re.compile(r"""["'`](?:source|holes|prop|log):["'`]"""
                           r"""|\b(?:target|name)\.(?:slice|indexOf|lastIndexOf)\(""")


@pytest.mark.parametrize("snippet", [
    'if (name.startsWith("source:")) {}', "const kind = target.slice(0, target.indexOf(':'));",
    'const attr = name.slice(name.lastIndexOf(".") + 1);',
])
def test_the_scan_sees_a_name_parsed(snippet):
    assert PARSES_A_NAME.search(snippet)


def test_no_browser_script_parses_a_target_name():
    found = [f"{p.name}:{n}: {line.strip()}" for p in sorted((ROOT / "static").glob("*.js"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if PARSES_A_NAME.search(line)]
    assert not found, "read the shipped record's kind and attr instead:\n" + "\n".join(found)
