"""The chapters' apparatus without a browser (app/chapters/apparatus.py): every term is
defined where it is first used, in each chapter that uses it, and listed in that chapter's
glossary; later uses link to the glossary; citations are numbered in order and listed; the
data files are whole."""

import re

import pytest

from app.chapters import apparatus, content
from app.kit import registry

CHAPTERS = tuple(c.content for c in registry.CHAPTERS)
FORMULA = re.compile(r'<div class="ae-formula">.*?</div>', re.DOTALL)  # the formula is not prose
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HEADING = re.compile(r"^#+ .*$", re.MULTILINE)  # a heading announces a term; the prose defines it
TAG = re.compile(r"<[^>]+>")


def notes_of(name):  # a chapter file's name -> its apparatus.Apparatus
    return apparatus.Apparatus(content.load(name).sections)


def reading_text(sections):  # -> the chapter's text in reading order, masked where it is markup
    # (tags, link targets, the formula) with spaces of the same length, so positions hold
    text = "\n\n".join(apparatus._texts(sections[1:]))  # after the title: it names the chapter
    for pattern in (FORMULA, LINK_TARGET, TAG, HEADING):
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


def raw_text(sections):
    return "\n\n".join(apparatus._texts(sections[1:]))


def form_pattern(form):
    return re.compile(rf"(?<![\w-]){re.escape(form)}(?![\w-])", re.IGNORECASE)


def first_uses(sections):  # -> {term id: position of its first use}, and of its definition
    raw, masked = raw_text(sections), reading_text(sections)
    uses, defined = {}, {}
    for tid, term in apparatus.glossary().items():
        found = [m.start() for form in term.forms for m in form_pattern(form).finditer(masked)]
        if found:
            uses[tid] = min(found)
        dfn = raw.find(f'<dfn id="term-{tid}">')
        if dfn >= 0:
            defined[tid] = dfn
    return uses, defined


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_term_is_defined_at_or_before_its_first_use(name):
    sections = content.load(name).sections
    uses, defined = first_uses(sections)
    undefined = sorted(set(uses) - set(defined))
    assert not undefined, f"{name} uses terms it never defines: {undefined}"
    early = {tid: raw_text(sections)[uses[tid]:uses[tid] + 40]
             for tid in uses if uses[tid] < defined[tid]}
    assert not early, f"{name} uses these before their <dfn>: {early}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_defined_term_is_in_the_glossary_in_page_order(name):
    sections = content.load(name).sections
    notes = apparatus.Apparatus(sections)
    assert notes.defined, name
    page = notes.glossary_html()
    listed = re.findall(r'<dt id="glossary-([a-z0-9-]+)"><a href="#term-\1">', page)
    assert listed == notes.defined
    assert sections.count(content.Glossary()) == 1, f"{name} places its glossary once"
    for tid in notes.defined:  # each entry carries its definition, by the id links describe
        assert f'<dd id="glossary-{tid}-def">' in page


def test_every_glossary_term_is_defined_somewhere_and_its_data_is_whole():
    defined = {tid for name in CHAPTERS for tid in notes_of(name).defined}
    terms = apparatus.glossary()
    assert set(terms) == defined, ("terms no chapter defines", set(terms) - defined)
    for term in terms.values():
        assert term.forms[0] == term.name and term.definition.endswith(".")


def test_the_rule_catches_a_term_used_before_its_definition():  # the test above can fail
    sections = ["# T", "The KV cache grows.",
                ('Each step reads the <dfn id="term-kv-cache">KV cache</dfn>, the keys and '
                 "values kept."), content.Glossary()]
    uses, defined = first_uses(sections)
    assert uses["kv-cache"] < defined["kv-cache"]
    sections[1] = "Link to it later: [the cache](#term-kv-cache), <b>KV</b> aside."
    uses, defined = first_uses(sections)
    assert uses["kv-cache"] > defined["kv-cache"]  # a link's target is not a use


def test_a_later_use_links_to_the_glossary_and_is_described_by_it():
    sections = ["# T", 'The <dfn id="term-kv-cache">KV cache</dfn> holds keys.',
                "Later, [the cache](#term-kv-cache) grows [@vaswani2017].", content.Glossary(),
                content.References()]
    notes = apparatus.Apparatus(sections)
    later = notes.prose(sections[2])
    assert ('<a class="ae-term" href="#glossary-kv-cache" '
            'aria-describedby="glossary-kv-cache-def">the cache</a>') in later
    assert '<a class="ae-cite" href="#ref-vaswani2017" aria-describedby="ref-vaswani2017">[1]' \
        in later
    assert '<li id="ref-vaswani2017">' in notes.references_html()
    with pytest.raises(ValueError, match="never defines"):
        apparatus.Apparatus(["# T", "[x](#term-mlp)"]).prose("[x](#term-mlp)")
    with pytest.raises(ValueError, match="names no reference"):
        apparatus.Apparatus(["# T", "Said so [@nobody1999]."])
    with pytest.raises(ValueError, match="names no term"):
        apparatus.Apparatus(["# T", '<dfn id="term-nothing">x</dfn>'])


@pytest.mark.parametrize("name", CHAPTERS)
def test_citations_are_numbered_in_order_and_all_listed(name):
    sections = content.load(name).sections
    notes = apparatus.Apparatus(sections)
    assert len(notes.numbers) >= 4, f"{name} cites too little"
    assert sorted(notes.numbers.values()) == list(range(1, len(notes.numbers) + 1))
    page = notes.references_html()
    assert re.findall(r'<li id="ref-([a-z0-9-]+)">', page) == sorted(notes.numbers,
                                                                     key=notes.numbers.get)
    assert sections.count(content.References()) == 1
    text = "\n".join(notes.prose(s) for s in sections if isinstance(s, str))
    assert "[@" not in text


def test_every_reference_is_cited_and_has_an_address():
    cited = {rid for name in CHAPTERS for rid in notes_of(name).numbers}
    refs = apparatus.references()
    assert set(refs) == cited, ("listed but never cited", set(refs) - cited)
    assert all(r.url.startswith("https://") for r in refs.values())


def test_each_preset_cites_the_config_it_came_from():
    # the cost panel's presets: the chapter cites each one's config.json where it names them
    notes = notes_of("attention.md")
    for ref in ("qwen3-8b", "gpt2", "llama3-8b"):
        assert ref in notes.numbers and "config.json" in apparatus.references()[ref].url
