"""One table of panels (app/kit/registry.py): a panel added in one record gets its route, its
island, its still and its static page, and nothing else names a panel.

The throwaway panel (tests/throwaway_panel.py) is in no chapter's table until the test adds
its record (tests/with_throwaway.py's); the chapters, the routes and the build then find it
through the registry alone. tests/test_throwaway_contract.py runs this file and the other
contract tests with it added in all three of the contract's places, its marker included.
"""

import dataclasses
import re
from pathlib import Path

import pytest

from app.chapters import chapter_page, content, live_chapter, page_model
from app.hosting import build, routes
from app.kit import registry, url_state
from tests.with_throwaway import RECORD

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def with_throwaway(monkeypatch):  # -> the registry with the throwaway's record added last
    # (already there when tests/with_throwaway.py runs as a plugin, marker and all)
    if RECORD not in registry.PANELS:
        monkeypatch.setattr(registry, "PANELS", (*registry.PANELS, RECORD))
    return RECORD


def test_the_added_record_has_a_route_a_page_and_an_island(with_throwaway):
    assert registry.panel_routes()["/count-bars"] == "tests.throwaway_panel:CountPanel"
    assert registry.by_route("/count-bars") is RECORD and registry.by_slot("count") is RECORD
    assert registry.island_height("count") == 333
    page = routes.page_factory("tests.throwaway_panel:CountPanel")()
    assert page.name == RECORD.title
    panels = registry.chapter_panels("math.md")
    assert list(panels)[-1] == "count" and panels["count"].cls.__name__ == "CountPanel"
    built = live_chapter.Shelf(panels)("count")
    assert built.in_chapter and built.count == 2
    plan = url_state.chapter_plan(panels, registry.follows("math.md"))
    assert plan["count"] == {"count": "count"}  # no other panel of the chapter takes `count`


def test_the_added_panel_gets_its_static_page_with_its_still(with_throwaway):
    page = build.Page("/count-bars", RECORD.viewer)
    assets = build.Assets(build.site_files())
    text, tables, docs = build.render(page, RECORD.title, "default", assets)
    island = re.search(r'<section class="ae-island" id="panel-count"[^>]*>', text)
    assert island and "--ae-island-height:333px" in island.group(0)
    assert "<span>2</span> bars" in text  # the readout's default state, in the still
    # its figure's two bars, placed by the transform's Python twin at 0.25 and 0.75 of the
    # axis: each bar's centre is where the axis's tick of that value is drawn
    svg = re.search(r'<svg class="ae-chart".*?</svg>', text, re.DOTALL).group(0)
    labels = re.findall(r'<text x="([\d.]+)" y="112">([\d.]+)</text>', svg)  # the x axis's
    ticks = {float(v): float(x) for x, v in labels}
    bars = re.findall(r"M([\d.]+) [\d.]+h([\d.]+)v[\d.]+h-[\d.]+z", svg)
    assert [float(x) + float(w) / 2 for x, w in bars] == [ticks[0.25], ticks[0.75]]
    assert len(tables) == 1 and next(iter(tables)).startswith("CountPanel-")
    assert len(docs) == 1


def test_no_module_but_the_registry_names_a_panel():
    # the routes, the chapters, the static page, the build and the stills read the table
    names = {r.slot for r in registry.PANELS} | {r.viewer.split(":")[1] for r in registry.PANELS}
    names |= {r.module.rsplit(".", 1)[1] for r in registry.PANELS}
    for rel in ("app/hosting/routes.py", "app/chapters/page_model.py",
                "app/chapters/live_chapter.py", "app/chapters/chapter_page.py",
                "app/hosting/build.py", "app/chapters/stills.py"):
        code = "\n".join(line.split("#")[0] for line in
                         (ROOT / rel).read_text(encoding="utf-8").splitlines())
        quoted = set(re.findall(r'"([A-Za-z_]+)"', code)) | set(re.findall(r"\b[A-Z]\w+Panel\b",
                                                                           code))
        assert not quoted & names, f"{rel} names {sorted(quoted & names)}"


def test_every_chapter_marker_is_a_record_of_that_chapter_and_back():
    for chapter_record in registry.CHAPTERS:
        model = page_model.assemble(chapter_record)
        markers = [item.slot for item in model.sections
                   if isinstance(item, content.PanelMarker)]
        assert markers == list(model.panels), model.route
    for record in registry.PANELS:
        assert registry.chapter(record.chapter)  # a chapter's content file
        chapter = content.load(record.chapter)
        assert content.PanelMarker(record.slot) in chapter.sections, record.slot
    assert len({r.slot for r in registry.PANELS}) == len(registry.PANELS)
    assert len({r.route for r in registry.PANELS}) == len(registry.PANELS)


def test_an_unknown_slot_is_named():
    with pytest.raises(KeyError, match="no panel has the slot 'nope'"):
        registry.by_slot("nope")
    assert registry.by_route("/nope") is None


def test_a_record_is_data():
    # records are frozen: a test or a host cannot change one in place, only replace the table
    with pytest.raises(dataclasses.FrozenInstanceError):
        RECORD.slot = "x"
    assert chapter_page.registry is registry


def test_a_chapter_is_one_record_and_no_renderer_names_one():
    # the routes, the page model and both renderers read CHAPTERS; the content files are
    # named in registry.py alone
    files = {c.content for c in registry.CHAPTERS}
    for rel in ("app/hosting/routes.py", "app/chapters/page_model.py",
                "app/chapters/live_chapter.py", "app/chapters/chapter_page.py",
                "app/hosting/build.py", "app/hosting/server.py"):
        code = "\n".join(line.split("#")[0] for line in
                         (ROOT / rel).read_text(encoding="utf-8").splitlines())
        assert not {f for f in files if f'"{f}"' in code}, rel
    assert [c.route for c in registry.CHAPTERS] == [r for r in routes.CHAPTER_ROUTES
                                                    if r != page_model.NUMBERS_ROUTE]
    for record in registry.CHAPTERS:
        model = page_model.assemble(record)
        assert model.route == record.route and model.title == content.load(record.content).title
        if record.back:
            assert model.back[0].endswith(content.load(record.back).title)


@pytest.mark.parametrize("record", registry.CHAPTERS, ids=lambda c: c.content)
def test_each_chapters_markers_follow_its_records_order(record):
    model = page_model.at(record.route)
    markers = [i.slot for i in model.sections if isinstance(i, content.PanelMarker)]
    records = [r.slot for r in registry.PANELS if r.chapter == record.content]
    assert markers == list(model.panels) == records and records
