"""The throwaway panel added the way docs/PANEL_CONTRACT.md says, in its first three places and
no other: its file (tests/throwaway_panel.py), its record in the registry's PANELS, and its
marker in its chapter's content file (the fourth, the oracle's check, is for panels the site
ships).

As a pytest plugin (`python -m pytest -p tests.with_throwaway ...`, as
tests/test_throwaway_contract.py runs the contract's tests) it adds the record and the marker
before the suite's conftest imports anything that reads the registry or the chapters. The
committed table and content file stay as they are: the record is added to the table in
memory, the marker to the chapter's text as it is read. It also leaves out the cases
parametrized by another panel, which the main suite runs. Nothing in app/ knows of this module.
"""

import pytest

from app.chapters import content
from app.kit import registry

RECORD = registry.PanelRecord("count", "tests.throwaway_panel:CountPanel", "/count-bars",
                              "Counting bars", "math.md", island_height=333)
MARKER = ["", "**Try it:** move **bars**; the bars share the axis evenly, whatever their count.",
          "", f"::: panel {RECORD.slot}", ""]


def with_marker(text):  # a chapter's text -> the same, the marker after its last panel's
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("::: panel "))
    return "\n".join(lines[:last + 1] + MARKER + lines[last + 1:]) + "\n"


def add():  # the record last in the table, its marker last among its chapter's panels
    if RECORD in registry.PANELS:
        return
    registry.PANELS = (*registry.PANELS, RECORD)
    read = content.read

    def read_with_marker(name):
        text = read(name)
        return with_marker(text) if name == RECORD.chapter else text

    content.read = read_with_marker


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):  # before tests/conftest.py
    add()


def _names_a_panel(value):  # -> the slot or route a parameter stands for, or None
    value = getattr(value, "slot", value)
    if not isinstance(value, str):
        return None
    for r in registry.PANELS:
        if value in (r.slot, r.route):
            return r.slot
    return None


def pytest_collection_modifyitems(config, items):
    # The main suite runs every shipped panel's cases; here only the throwaway's are new.
    # A case parametrized by another panel (its slot, route or record) is left out; a test
    # that walks the panels itself, or is parametrized by anything else, still runs.
    kept, left = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        named = {_names_a_panel(v) for v in params.values()} - {None}
        (left if named and RECORD.slot not in named else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
