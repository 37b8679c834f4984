"""Figures carry the ideas: every section of a chapter has a small fixed figure of its own, the
prose never steers a panel, and the model tables hold the core's figures."""

import re
from html.parser import HTMLParser

import pytest

from app.chapters import content
from app.chapters.drawings import model_table
from app.kit import registry
from attention_core import costs

# h2 sections that are not an idea of the chapter: its apparatus and the list of what is next
NOT_IDEAS = {"Where to go next", "Questions to revisit", "Glossary", "References",
             "Terms", "Sources"}
STEERING = [
    re.compile(r"\b(press|drag|switch|set|turn|move|pick|type|raise|change|choose|read)\b[^.]{0,40}"
               r"\*\*[^*]+\*\*", re.IGNORECASE),  # an imperative aimed at a named control
    re.compile(r"\bBack to the\b|\b(count|readout|panel|chart)\b[^.]{0,40}\breads \d"
               # a panel's state narrated as if the reader had set it
               r"|\b(as )?the panel opens\b", re.IGNORECASE),
]


class Sections(HTMLParser):
    """<main>'s h2 sections: [title, whether a small figure lies in it]."""

    def __init__(self):
        super().__init__()
        self.sections, self.in_h2, self.depth_main = [], False, 0

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "main":
            self.depth_main += 1
        elif tag == "h2" and self.depth_main:
            self.sections.append(["", False])
            self.in_h2 = True
        elif tag == "figure" and "ae-small-figure" in classes and self.sections:
            self.sections[-1][1] = True

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
        elif tag == "main":
            self.depth_main -= 1

    def handle_data(self, data):
        if self.in_h2:
            self.sections[-1][0] += data


def sections_without_a_figure(page_html):  # -> titles of idea sections with no small figure
    parser = Sections()
    parser.feed(page_html)
    titles = [" ".join(title.split()) for title, _ in parser.sections]
    assert titles, "no h2 sections found"
    return [t for t, (_, has) in zip(titles, parser.sections, strict=True)
            if not has and t not in NOT_IDEAS]


def test_the_section_rule_can_fail():
    page = ('<main><h2>One</h2><p>x</p><figure class="ae-small-figure"></figure>'
            "<h2>Two</h2><p>y</p><h2>Glossary</h2></main>")
    assert sections_without_a_figure(page) == ["Two"]


@pytest.mark.parametrize("page", ["index.html", "math/index.html"])
def test_every_section_of_a_built_chapter_holds_a_figure(page, site_build):
    text = (site_build / page).read_text(encoding="utf-8")
    assert sections_without_a_figure(text) == []


def prose_blocks():
    for record in registry.CHAPTERS:
        for item in content.load(record.content).sections:
            if isinstance(item, str):
                yield record.content, item


def test_the_steering_rule_catches_what_it_should():
    for old in ("**Try it:** switch the **phase** of the panel below to decode.",
                "Raise **users / batch** to 64: attention stays at 4",
                "Back to the opening state: row 2, mask on.",
                "the dot-product count at the top of the head panel reads 9, 16, 25"):
        assert any(p.search(old) for p in STEERING), old


def test_no_paragraph_steers_a_panel_or_narrates_its_state():
    for name, block in prose_blocks():
        for pattern in STEERING:
            found = pattern.search(block)
            assert not found, (name, found and block[max(0, found.start() - 60):found.end()])


@pytest.mark.parametrize("record", registry.CHAPTERS, ids=lambda r: r.content)
def test_try_it_appears_at_most_once_per_chapter(record):
    assert content.read(record.content).count("Try it") <= 1


@pytest.mark.parametrize("key", ["qwen3-8b", "gpt2", "llama-3-8b"])
def test_each_model_tables_cells_are_the_cores(key):
    page = model_table.table(key)
    cells = dict(re.findall(r'<td data-figure="([^"]+)">(?:<a [^>]*>)?([^<]+)', page))
    m = costs.preset(key)
    number = {k: float(v.replace(",", "").split()[0]) for k, v in cells.items()}
    assert number["FLOPs per (query, key) pair"] == 4 * m.layers * m.heads * m.head_dim
    assert number["Matmul parameters"] == costs.matmul_params(m)
    assert number["Weight FLOPs per token"] == 2 * costs.matmul_params(m)
    for kernel, label in (("triangular", "Crossover, triangular kernel"),
                          ("naive", "Crossover, naive kernel")):
        assert number[label] == round(costs.crossover_tokens(m, kernel))
    assert number["Max positions"] == m.max_positions
    assert number["KV bytes per token, bf16"] == 2 * m.layers * m.kv_heads * m.head_dim * 2


def test_a_model_tables_links_land_on_rows_of_the_numbers_page():
    from app.chapters import numbers_page

    ids = set(re.findall(r'<tr id="([^"]+)"', "".join(numbers_page.sections())))
    links = [a for key in ("qwen3-8b", "gpt2", "llama-3-8b")
             for a in re.findall(r'href="numbers/#([^"]+)"', model_table.table(key))]
    assert len(links) >= 5 and set(links) <= ids


def test_every_caption_is_at_most_40_words():
    for record in registry.CHAPTERS:
        for item in content.load(record.content).sections:
            if isinstance(item, content.FigureMarker):
                words = len(content.plain_text(item.caption).split())
                assert words <= 40, (record.content, item.slot, words)
