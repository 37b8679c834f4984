"""A live chapter's stills (app/chapters/live_stills.py): read from the built static chapter as
chapter_page writes it, placed around each panel's root, and the session's half of the
hand-over: the stops the browser sends are set on the panels, untrusted, once they are built."""

import json

from app.chapters import chapter_page, live_chapter, live_stills, page_model
from app.kit import registry

STILL = ('<script type="application/json" class="ae-still-data">{}</script>'
         '<div class="ae-still-controls"></div><div class="ae-still-pane"><svg></svg></div>')


def built_page(route):  # -> a built chapter's HTML as chapter_page writes its islands
    model = page_model.at(route)
    groups = chapter_page.groups_of(model.panels, model.follows)
    up = "../" if route.strip("/") else ""
    for g in groups:
        g.stills = {slot: STILL.replace("{}", json.dumps({"slot": slot})) for slot in g.slots}
        g.elements = {slot: f"el-{slot}" for slot in g.slots}
        g.tables = {f"{slot}-table": {} for slot in g.slots}
    config = {"switcher": f"{up}assets/site-x/switcher.js", "groups": {
        g.name: {"slots": g.slots, "tables": [f"{up}assets/states/{r}.js" for r in g.tables]}
        for g in groups}}
    islands = "\n".join(chapter_page.island(slot, g) for g in groups for slot in g.slots)
    return (f"<main>{islands}</main><script type=\"application/json\" id=\"ae-islands\">"
            f"{json.dumps(config)}</script>\n"
            f'<script src="{up}assets/site-x/stills.js" defer></script>')


def test_the_built_chapters_stills_and_paths_are_read_back():
    stills = live_stills.parse(built_page("/math"), "/math")
    slots = list(page_model.at("/math").panels)
    assert list(stills.stills) == slots
    for slot in slots:
        assert stills.stills[slot] == STILL.replace("{}", json.dumps({"slot": slot}))
        assert stills.tables[slot] == [f"/assets/states/{slot}-table.js"]
    assert stills.switcher == "/assets/site-x/switcher.js"
    assert stills.bundle == "/assets/site-x/" + live_stills.BUNDLE


def test_a_live_chapter_without_a_build_is_as_before(tmp_path):
    assert live_stills.built("/math", "default", site=tmp_path) is None


def test_each_panel_is_an_island_around_its_root_and_the_lab_says_it_is_loading(
        tmp_path, monkeypatch):
    (tmp_path / "index.html").write_text(built_page("/"), encoding="utf-8")
    monkeypatch.setenv("AE_BUILD_DIR", str(tmp_path))
    page = live_chapter.page("/", defer=False)
    slots = list(page_model.at("/").panels)
    assert list(page.around) == [f"panel-{s}" for s in slots]
    for slot in slots:
        before, after = page.around[f"panel-{slot}"]
        assert f'id="panel-{slot}"' in before and before.endswith('<div class="ae-island-root">')
        has_still = registry.by_slot(slot).static_stand_in is None
        held = registry.island_height(slot) if has_still else live_chapter.PLACEHOLDER_HEIGHT
        assert f"--ae-island-height:{held}px" in before
        assert ('class="ae-still-data"' in after) == has_still
        assert ("loading" in after) == (not has_still)
    assert '"switcher":"/assets/site-x/switcher.js"' in page.stills_html


def test_the_stops_sent_are_set_once_built_and_answered_with_their_version():
    model = page_model.at("/math")
    shelf = live_chapter.Shelf(model.panels)
    hand = live_stills.Stills(shelf, list(model.panels))
    decode = registry.by_slot("decode").viewer_class
    model_control = next(c for c in decode.controls() if c.name == "model")
    other = next(i for i, v in enumerate(model_control.values)
                 if v != decode.param["model"].default)
    hand.link.stops = {"decode": {"version": 2, "stops": {"model": other}}}
    assert hand.link.taken == {} and shelf.built == {}  # nothing built yet: kept for then
    hand.filled()
    assert shelf("decode").model == model_control.values[other]
    assert hand.link.taken == {**dict.fromkeys(model.panels, 0), "decode": 2}
    # an older version, or stops no control has, change nothing
    hand.link.stops = {"decode": {"version": 1, "stops": {"model": 0}},
                       "online": {"version": 1, "stops": {"nothing": 1, "block": 999,
                                                          "scores": "0", "step": True}}}
    assert shelf("decode").model == model_control.values[other]
    assert hand.link.taken["online"] == 1


def test_stop_values_take_only_a_controls_own_stops():
    viewer = registry.by_slot("overflow").viewer_class()
    names = [c.name for c in type(viewer).controls()]
    assert live_stills.stop_values(viewer, {names[0]: 1, "x": 0}) == {
        names[0]: type(viewer).controls()[0].values[1]}
    assert live_stills.stop_values(viewer, {names[0]: -1}) == {}
    assert live_stills.stop_values(viewer, "stops") == {}
    assert live_stills.stop_values(object(), {names[0]: 1}) == {}
