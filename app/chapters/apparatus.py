"""The chapters' apparatus: defined terms, the glossary and the references.

A chapter marks a term's first use `<dfn id="term-ID">`; a later use is a Markdown link to it,
`[words](#term-ID)`, which the page turns into a link to the term's glossary entry that also
describes itself by it (`aria-describedby`): with scripts on, static/terms.js shows that
definition in a popover on hover, focus or tap; with scripts off, and in print, it stays a
plain link. `[@ID]` cites a reference: a numbered link to the chapter's list, numbered in
order of first citation. `::: glossary` and `::: references` place the two lists.

The terms live in app/chapters/content/glossary.md, the references in
app/chapters/content/references.md (one line each: `ID | ... | ...`). Nothing here knows a
chapter by name; it reads the sections.
"""

import functools
import html
import re
from dataclasses import dataclass

from app.chapters import content

LINE = re.compile(r"([a-z0-9][a-z0-9-]*) \| (.+?) \| (.+)")
DFN = re.compile(r'<dfn id="term-([a-z0-9-]+)">')
TERM_LINK = re.compile(r'<a href="#term-([a-z0-9-]+)">(.*?)</a>', re.DOTALL)
CITE = re.compile(r"\s*\[@([a-z0-9][a-z0-9-]*)\]")  # the space before it too: it stays by its word


@dataclass(frozen=True)
class Term:
    id: str  # "kv-cache": the first use is #term-<id>, the glossary entry #glossary-<id>
    name: str  # "KV cache"
    forms: tuple  # ("KV cache",): the words the test looks for before the definition
    definition: str  # one sentence, Markdown


@dataclass(frozen=True)
class Reference:
    id: str  # "vaswani2017": cited as [@vaswani2017], listed as #ref-<id>
    text: str  # Markdown: authors, title, venue, year
    url: str


def _rows(name):  # app/chapters/content/<name> -> [(id, second, third)], in file order
    rows = []
    for number, line in enumerate(content.read(name).splitlines(), start=1):
        if " | " not in line:
            continue
        match = LINE.fullmatch(line.strip())
        if not match:
            raise ValueError(f"{name}, line {number}: a row reads 'ID | ... | ...', not "
                             f"{line!r}")
        rows.append(match.groups())
    ids = [row[0] for row in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: an ID is listed twice")
    return rows


@functools.cache
def glossary():  # -> {id: Term}
    terms = {}
    for tid, names, definition in _rows("glossary.md"):
        forms = tuple(f.strip() for f in names.split(";") if f.strip())
        terms[tid] = Term(tid, forms[0], forms, definition)
    return terms


@functools.cache
def references():  # -> {id: Reference}
    return {rid: Reference(rid, text, url) for rid, text, url in _rows("references.md")}


def _texts(sections):  # -> every text of the sections that a reader reads, in page order
    for item in sections:
        if isinstance(item, str):
            yield item
        elif isinstance(item, content.Question):
            q = item
            yield from (q.ask, *(text for _, text in q.options), *(t for _, t in q.replies),
                        q.why)


class Apparatus:
    """One chapter's terms and citations, from its sections: what it defines (in order), the
    number of each reference it cites, and the HTML of its prose, glossary and references."""

    def __init__(self, sections):
        self.defined, self.numbers = [], {}
        terms, refs = glossary(), references()
        for text in _texts(sections):
            for tid in DFN.findall(text):
                if tid not in terms:
                    raise ValueError(f"<dfn id=\"term-{tid}\"> names no term of glossary.md")
                if tid in self.defined:
                    raise ValueError(f"the term {tid!r} is defined twice in one chapter")
                self.defined.append(tid)
            for rid in CITE.findall(text):
                if rid not in refs:
                    raise ValueError(f"[@{rid}] names no reference of references.md")
                self.numbers.setdefault(rid, len(self.numbers) + 1)

    def term_link(self, match):  # <a href="#term-ID">words</a> -> the glossary link
        tid, words = match.group(1), match.group(2)
        if tid not in self.defined:
            raise ValueError(f"a link to the term {tid!r}, which this chapter never defines")
        return (f'<a class="ae-term" href="#glossary-{tid}" '
                f'aria-describedby="glossary-{tid}-def">{words}</a>')

    def cite(self, match):  # [@ID] -> its number, a link to the reference
        ref = references()[match.group(1)]
        n = self.numbers[ref.id]
        return (f'<a class="ae-cite" href="#ref-{ref.id}" aria-describedby="ref-{ref.id}">'
                f"[{n}]</a>")

    def annotate(self, text):  # HTML -> the same with its term links and citations made
        return CITE.sub(self.cite, TERM_LINK.sub(self.term_link, text))

    def prose(self, block):  # a Markdown block -> its HTML
        return self.annotate(content.markdown_html(block))

    def glossary_html(self):  # -> the chapter's glossary: every term it defines, in order
        terms = glossary()
        rows = "\n".join(
            f'<dt id="glossary-{tid}"><a href="#term-{tid}">{html.escape(terms[tid].name)}'
            f'</a></dt>\n<dd id="glossary-{tid}-def">'
            f"{content.markdown_parser().renderInline(terms[tid].definition)}</dd>"
            for tid in self.defined)
        return ('<section class="ae-glossary" aria-labelledby="ae-glossary-title">\n'
                '<h2 id="ae-glossary-title">Terms</h2>\n'
                "<p>Every term this chapter defines, linked to where it first appears.</p>\n"
                f'<dl class="ae-glossary-list">\n{rows}\n</dl>\n</section>')

    def references_html(self):  # -> the numbered list of the references the chapter cites
        refs = references()
        items = "\n".join(
            f'<li id="ref-{rid}">{content.markdown_parser().renderInline(refs[rid].text)} '
            f'<a class="ae-ref-link" href="{html.escape(refs[rid].url)}">'
            f"{html.escape(refs[rid].url.split('://', 1)[1])}</a></li>"
            for rid in sorted(self.numbers, key=self.numbers.get))
        return ('<section class="ae-references" aria-labelledby="ae-references-title">\n'
                '<h2 id="ae-references-title">References</h2>\n'
                f'<ol class="ae-references-list">\n{items}\n</ol>\n</section>')
