"""A state's target: which model a value goes to, and how (docs/PANEL_CONTRACT.md).

A panel's `state()` keys each value by its target's name, spelled as the panel writes it:

- ``"source:NAME"``: a ColumnDataSource; the value is its columns;
- ``"holes:NAME"``: a `Readout` (its holes); the value is {hole: text};
- ``"prop:NAME.attr"``: one property of a model; the value is that property's value;
- ``"log:NAME"``: a `Readout` of log holes; the value is {control: line}.

`parse` is the one reader of that spelling. The browser reads none: what a page ships names
each target by a `record` (its name, kind and property), written here once, so the
switcher (static/switcher.js) and the stills (static/stills.js) dispatch on fields, not on
a name's text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

KINDS = ("source", "holes", "prop", "log")


@dataclass(frozen=True)
class Target:
    kind: str  # one of KINDS
    model: str  # the panel's name for the model
    attr: str | None = None  # the property a "prop" target sets; None for the others

    @property
    def name(self):  # -> the spelling a state keys its value by
        return f"{self.kind}:{self.model}" + (f".{self.attr}" if self.attr else "")

    def record(self):  # -> the target as a page ships it: {"name", "kind"[, "attr"]}
        out = {"name": self.name, "kind": self.kind}
        if self.attr is not None:
            out["attr"] = self.attr
        return out


@functools.cache  # names are the panels' own, a few dozen: each is read once, then looked up
def parse(name):  # "prop:arrow_b.x_end" -> Target("prop", "arrow_b", "x_end"); a bad name
    # raises ValueError, naming it (a live session's every change reads its state's names)
    kind, colon, rest = name.partition(":") if isinstance(name, str) else ("", "", "")
    if not colon or kind not in KINDS or not rest:
        raise ValueError(f"not a state target: {name!r} (kind:NAME, kind one of "
                         f"{', '.join(KINDS)}; prop:NAME.attr)")
    if kind != "prop":
        return Target(kind, rest)
    model, dot, attr = rest.rpartition(".")
    if not dot or not model or not attr:
        raise ValueError(f"not a state target: {name!r} (a prop target is prop:NAME.attr)")
    return Target(kind, model, attr)
