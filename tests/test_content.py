"""Chapter files: the marker syntax of app/chapters/content.py, and the two real chapters."""

import html
import re
from pathlib import Path

import pytest

import app
from app.chapters import content, page_model
from app.kit import registry

SAMPLE = """# A title

:::

First block,
two lines.

:::

Second block.

::: panel head

::: link math Next: the math →

::: placeholder Coming soon | A box for it.

::: link ./ ← Back
"""


def test_parse_gives_each_marker_kind_its_item():
    chapter = content.parse(SAMPLE)
    assert chapter.title == "A title"
    assert chapter.sections == [
        "# A title",
        "First block,\ntwo lines.",
        "Second block.",
        content.PanelMarker("head"),
        content.ChapterLink("Next: the math →", "math"),
        content.Placeholder("Coming soon", "A box for it."),
        content.ChapterLink("← Back", "./"),
    ]


def test_without_a_break_adjacent_prose_stays_one_block():
    assert content.parse("# T\n\nOne.\n\nTwo.\n").sections == ["# T\n\nOne.\n\nTwo."]


@pytest.mark.parametrize("line, says", [
    ("::: chart head", "unknown marker kind 'chart'"),
    ("::: panel", "'::: panel' needs one slot name"),
    ("::: link math", "'::: link' needs a route and the link text"),
    ("::: placeholder no bar", "'::: placeholder' needs 'Title | text'"),
])
def test_a_bad_marker_names_its_line(line, says):
    with pytest.raises(ValueError, match="line 5") as raised:
        content.parse(f"# T\n\nProse.\n\n{line}\n\nMore.\n", source="x.md")
    assert says in str(raised.value) and "x.md" in str(raised.value)


def test_a_file_without_a_title_line_is_refused():
    with pytest.raises(ValueError, match="line 1"):
        content.parse("Prose with no title.\n")


@pytest.mark.parametrize("record", registry.CHAPTERS, ids=lambda c: c.content)
def test_the_real_chapters_load(record):
    chapter, model = content.load(record.content), page_model.assemble(record)
    assert chapter.sections == list(model.sections) and chapter.title == model.title
    assert chapter.sections[0] == f"# {chapter.title}"
    slots = [item.slot for item in chapter.sections if isinstance(item, content.PanelMarker)]
    assert slots == list(model.panels)
    assert all(isinstance(item, str) and item.strip() == item or not isinstance(item, str)
               for item in chapter.sections), "no block carries blank lines at its ends"


def test_the_titles_are_written_once_in_the_files():
    titles = [page_model.assemble(c).title for c in registry.CHAPTERS]
    assert titles == [content.load(c.content).title for c in registry.CHAPTERS]
    for rel in ("kit/registry.py", "chapters/page_model.py", "chapters/live_chapter.py",
                "hosting/routes.py"):
        source = (Path(app.__file__).parent / rel).read_text(encoding="utf-8")
        assert not [t for t in titles if t in source], rel


def test_the_files_are_found_through_the_package():
    package = Path(app.__file__).resolve().parent / "chapters"
    for name in ("attention.md", "math.md"):
        found = content.importlib.resources.files("app").joinpath("chapters", "content", name)
        assert Path(str(found)).resolve().parent == package / "content"
        assert content.read(name) == (package / "content" / name).read_text(encoding="utf-8")


def test_no_paragraph_steers_a_panel_back_to_a_state_an_earlier_section_left():
    # a state the prose needs is shown where it is needed (a `::: figure`), not restored by
    # the reader
    steering = re.compile(r"\b(return|reset|put|set) the \w+ panel (back )?to\b|\byou left it\b",
                          re.IGNORECASE)
    for record in registry.CHAPTERS:
        for item in content.load(record.content).sections:
            if isinstance(item, str):
                assert not steering.search(item), (record.content, item[:120])


def test_each_small_figure_is_a_state_its_panel_has_and_links_there():
    from app.chapters import figures

    found = 0
    for record in registry.CHAPTERS:
        for item in content.load(record.content).sections:
            if isinstance(item, content.FigureMarker):
                found += 1
                cls = registry.by_slot(item.slot).viewer_class
                stops = {c.name: c.values for c in cls.controls()}
                for name, value in figures.settings(item).items():
                    assert value in stops[name], (item, name, value)
                page = figures.figure_html(item, lambda text: text)
                assert f'#panel-{item.slot}"' in page and ("<svg" in page or "<table" in page)
                assert html.escape("?" + figures.query(item)) in page
    assert found >= 2


def test_a_figure_marker_is_read_and_a_bad_one_is_refused():
    chapter = content.parse("# T\n\n::: figure head mask=off query=2 | Row 2, unmasked.\n")
    [marker] = [s for s in chapter.sections if isinstance(s, content.FigureMarker)]
    assert marker == content.FigureMarker("head", (("mask", "off"), ("query", "2")),
                                          "Row 2, unmasked.")
    for bad in ("::: figure head mask=off", "::: figure | caption", "::: figure head mask | c"):
        with pytest.raises(ValueError, match="line 3"):
            content.parse(f"# T\n\n{bad}\n")


def test_a_varied_figure_draws_one_still_per_stop_under_a_native_control():
    from app.chapters import figures

    marker = content.FigureMarker("head", (("vary", "phase"), ("length", "6")), "Caption.")
    page = figures.figure_html(marker, lambda text: text)
    cls = registry.by_slot("head").viewer_class
    stops = next(c for c in cls.controls() if c.name == "phase").values
    assert page.count('type="radio"') == len(stops) == page.count('class="ae-figure-state"')
    assert page.count(" checked") == 1  # the panel's default stop, and only it
    assert re.search(r'value="prefill" checked', page)
    stills = [figures.charts(figures.at_stop(marker, figures.varied(marker), v)) for v in stops]
    assert len(set(stills)) == len(stops), "each stop draws its own still"
    assert all(still in page for still in stills)
    assert "vary" not in figures.query(marker) and "length=6" in figures.query(marker)
    for bad in ((("vary", "nothing"),), (("vary", "query"),),  # no such control; 8 stops
                (("vary", "phase"), ("phase", "decode")), (("vary", "mask"), ("vary", "phase"))):
        with pytest.raises(figures.FigureError):
            figures.settings(content.FigureMarker("head", bad, "c"))
