"""A chapter's prose, read from its Markdown file in app/content/ (see its README.md).

The file starts with `# Title`. Markdown runs between markers, each alone on its line:
`::: panel SLOT` places a panel, `::: link ROUTE TEXT` a link to another chapter,
`::: placeholder TITLE | TEXT` a dashed box, and a bare `:::` ends one prose block.
"""

import importlib.resources
from dataclasses import dataclass

MARKER = ":::"


@dataclass(frozen=True)
class Chapter:
    title: str  # the first line's heading, without the "# "
    sections: list  # str (a Markdown block), ("panel", slot), ("link", text, route) or
    # ("placeholder", title, text), in page order; the first block is "# <title>"


def read(name):  # -> the text of app/content/<name>, from the repo or an installed wheel
    return importlib.resources.files("app").joinpath("content", name).read_text(encoding="utf-8")


def load(name):  # -> Chapter of app/content/<name>
    return parse(read(name), source=name)


def parse(text, source="<text>"):  # -> Chapter; ValueError names source and line
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# ") or not lines[0][2:].strip():
        raise ValueError(f"{source}, line 1: a chapter starts with its title, '# Title'")
    sections, block = [], []

    def flush():
        while block and not block[-1].strip():
            block.pop()
        while block and not block[0].strip():
            block.pop(0)
        if block:
            sections.append("\n".join(block))
        block.clear()

    for number, line in enumerate(lines, start=1):
        if not line.startswith(MARKER):
            block.append(line)
            continue
        flush()
        item = marker(line[len(MARKER):].strip(), f"{source}, line {number}")
        if item is not None:
            sections.append(item)
    flush()
    return Chapter(title=lines[0][2:].strip(), sections=sections)


def marker(rest, where):  # the words after ":::" -> a section item, or None for a block break
    if not rest:
        return None
    kind, _, args = rest.partition(" ")
    args = args.strip()
    if kind == "panel":
        if not args or len(args.split()) != 1:
            raise ValueError(f"{where}: '::: panel' needs one slot name, as '::: panel head'")
        return ("panel", args)
    if kind == "link":
        route, _, label = args.partition(" ")
        if not route or not label.strip():
            raise ValueError(f"{where}: '::: link' needs a route and the link text, "
                             "as '::: link math Next: the math →'")
        return ("link", label.strip(), route)
    if kind == "placeholder":
        title, bar, body = args.partition("|")
        if not bar or not title.strip() or not body.strip():
            raise ValueError(f"{where}: '::: placeholder' needs 'Title | text'")
        return ("placeholder", title.strip(), body.strip())
    raise ValueError(f"{where}: unknown marker kind {kind!r} "
                     "(known: panel, link, placeholder, or a bare ':::' for a block break)")
