"""A chapter, assembled once into the page both renderers draw.

A chapter is a record (app/kit/registry.py's CHAPTERS: its content file, route and the chapter
its header links back to). `assemble` turns it into a `ChapterModel`: its title and sections
from the content file (prose blocks, panel markers, questions, glossary, references), its
panels from the registry in page order, which panel follows which, and its back link. The
static renderer (app/chapters/chapter_page.py, through app/hosting/build.py) and the live one
(app/chapters/live_chapter.py) read nothing else about a chapter.
"""

from __future__ import annotations

import dataclasses
import functools

from app.chapters import content
from app.kit import registry


@dataclasses.dataclass(frozen=True)
class ChapterModel:
    route: str  # its page: "/", "/math", "/numbers"
    title: str
    sections: tuple  # content.py's sections, in page order
    panels: dict  # slot -> registry.ChapterPanel, in page order
    follows: dict  # follower slot -> leader slot
    back: tuple[str, str] | None  # (link text, the other chapter's route), or None

    @property
    def chapter(self) -> content.Chapter:  # the content as a Chapter (descriptions, apparatus)
        return content.Chapter(title=self.title, sections=list(self.sections))

    @property
    def description(self) -> str:
        return content.description(self.chapter)


def href(route):  # a chapter's route -> its address relative to another chapter's page
    return "./" if route == "/" else route.strip("/")


@functools.cache
def _content(file):  # the content file, parsed once per process
    return content.load(file)


def assemble(record: registry.ChapterRecord) -> ChapterModel:
    """A chapter's record -> its page model. The registry is read now, so a test that adds a
    panel record sees it."""
    chapter = _content(record.content)
    back = back_to(record.back) if record.back else None
    return ChapterModel(route=record.route, title=chapter.title, sections=tuple(chapter.sections),
                        panels=registry.chapter_panels(record.content),
                        follows=registry.follows(record.content), back=back)


NUMBERS_ROUTE = "/numbers"  # the ledger's page: text only, made from the ledger, not a file


def at(route) -> ChapterModel:  # "/math" -> its model; KeyError for a route with no text page
    record = registry.chapter_at(route)
    if record is not None:
        return assemble(record)
    if route == NUMBERS_ROUTE:  # text only: the ledger's sections, made on first use
        from app.chapters import numbers_page

        ledger = numbers_page.chapter()
        return ChapterModel(route=route, title=ledger.title, sections=tuple(ledger.sections),
                            panels={}, follows={}, back=back_to(registry.CHAPTERS[0].content))
    raise KeyError(f"no chapter is at {route!r}")


def back_to(content_file):  # -> the back link (text, route) to the chapter of content_file
    other = registry.chapter(content_file)
    return f"← {_content(other.content).title}", href(other.route)
