"""A chapter's prose, read from its Markdown file in app/chapters/content/ (see its README.md).

The file starts with `# Title`. Markdown runs between markers, each alone on its line:
`::: panel SLOT` places a panel, `::: link ROUTE TEXT` a link to another chapter,
`::: placeholder TITLE | TEXT` a dashed box, `::: question ID` a question the reader
answers before the text reveals it (its fields on the lines below, up to a bare `:::`),
`::: review` the list of questions still to revisit, `::: glossary` and `::: references`
the chapter's terms and sources (app/chapters/apparatus.py), and a bare `:::` ends one prose block.
"""

import functools
import html
import importlib.resources
import re
import shlex
from dataclasses import dataclass, field

MARKER = ":::"
QUESTION_KINDS = ("choice", "number")
QUESTION_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # ids become element ids: q-<id>
OPTION_KEY = re.compile(r"[A-Za-z0-9_-]+")
URL_KEY = re.compile(r"[A-Za-z0-9_]+")
BAND = re.compile(r"(\d+(?:\.\d+)?)(%?)")  # "5%" relative, "0.02" absolute; or "order"
FACTOR_BAND = re.compile(r"factor (\d+(?:\.\d+)?)")  # "factor 2": within a factor of 2
ORDER_FACTOR = 3.0  # band: order = the same order of magnitude, within a factor of 3
NUMBER_REPLIES = ("low", "high")  # every number question says why an answer is too low, too high


@dataclass(frozen=True)
class Chapter:
    title: str  # the first line's heading, without the "# "
    sections: list  # in page order: a str is a block of Markdown (the first "# <title>"),
    # the rest are the markers' sections below and Questions


# --- the sections a marker places, one small class per kind -------------------------------

@dataclass(frozen=True)
class PanelMarker:  # `::: panel SLOT`: the panel of that slot in the registry
    slot: str


@dataclass(frozen=True)
class FigureMarker:  # `::: figure SLOT name=value ... | CAPTION`: a small fixed figure of
    # that panel's charts in that state, with a link that opens the panel there
    slot: str
    params: tuple  # ((name, raw value), ...), in the marker's order
    caption: str


@dataclass(frozen=True)
class ChapterLink:  # `::: link ROUTE TEXT`: a link to another chapter
    text: str
    route: str


@dataclass(frozen=True)
class Placeholder:  # `::: placeholder TITLE | TEXT`: a dashed box for what is still to come
    title: str
    text: str


@dataclass(frozen=True)
class Review:  # `::: review`: the questions still to revisit (the static page's list)
    pass


@dataclass(frozen=True)
class Glossary:  # `::: glossary`: the chapter's terms (apparatus.py)
    pass


@dataclass(frozen=True)
class References:  # `::: references`: the chapter's sources, numbered as cited
    pass


MARKER_SECTIONS = {"review": Review, "glossary": Glossary, "references": References}


@dataclass(frozen=True)
class Question:
    """A prediction the reader commits to before the text or a panel reveals the answer.

    The answer itself is never written here: app/chapters/questions.py computes it from
    attention_core, by the question's id, and fills the `{name}` placeholders of ask, options
    and why with what it computed."""

    id: str  # "mask-off-row2": the element is #q-<id>, questions.py's function its name
    kind: str  # "choice" or "number"
    ask: str  # Markdown (inline)
    options: tuple = ()  # ((key, Markdown text), ...): choice only
    show_slot: str = ""  # the panel that shows the answer ...
    show_params: dict = field(default_factory=dict)  # ... in the state these URL keys set
    why: str = ""  # Markdown (inline): one or two sentences on why
    unit: str = ""  # number only, optional: "%", "tokens"
    band: tuple = ()  # number only: ("relative", 0.05), ("absolute", 0.02) or ("order", 3.0)
    replies: tuple = ()  # ((key, Markdown), ...): what a reader who gave that answer is told.
    # choice: an option's key; number: "low", "high", or a slip the answer function computes


@functools.cache
def markdown_parser():  # -> the one Markdown renderer of the prose and questions (HTML allowed)
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table")


def read(name):  # -> the text of app/chapters/content/<name>, from the repo or an installed wheel
    folder = importlib.resources.files("app").joinpath("chapters", "content")
    return folder.joinpath(name).read_text(encoding="utf-8")


def load(name):  # -> Chapter of app/chapters/content/<name>
    return parse(read(name), source=name)


# The markers are read here, line by line, not by mdit-py-plugins' `container`: a marker is
# one line with no closing fence (`::: panel head`), and it splits the chapter into the
# sections the pages are made of before any Markdown is rendered (each prose block alone, a
# panel or a question an item of its own). A container would need each of the chapters'
# 40-odd one-line markers closed by a second `:::`, and a walk over its tokens to split them.
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

    ids, number = set(), 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if not line.startswith(MARKER):
            block.append(line)
            continue
        flush()
        rest, where = line[len(MARKER):].strip(), f"{source}, line {number}"
        if rest.partition(" ")[0] == "question":
            end = next((i for i in range(number, len(lines)) if lines[i].strip() == MARKER),
                       None)
            if end is None:
                raise ValueError(f"{where}: '::: question' is never closed by a bare ':::'")
            item = question(rest, lines[number:end], source, number)
            if item.id in ids:
                raise ValueError(f"{where}: a second question with the id {item.id!r}")
            ids.add(item.id)
            sections.append(item)
            number = end + 1
            continue
        item = marker(rest, where)
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
        return PanelMarker(args)
    if kind == "figure":
        head, bar, caption = args.partition("|")
        try:  # a value with spaces is quoted: scores="12, 1, 0.1"
            words = shlex.split(head)
        except ValueError as error:
            raise ValueError(f"{where}: a figure's settings could not be read ({error})") from None
        if not bar or not words or not caption.strip():
            raise ValueError(f"{where}: '::: figure' needs a slot, its settings and a caption, "
                             "as '::: figure head mask=off query=2 | Row 2 sees every key'")
        pairs = [w.partition("=") for w in words[1:]]
        if any(not eq or not name or not value for name, eq, value in pairs):
            raise ValueError(f"{where}: a figure's settings read name=value, not {head!r}")
        return FigureMarker(words[0], tuple((n, v) for n, _, v in pairs), caption.strip())
    if kind == "link":
        route, _, label = args.partition(" ")
        if not route or not label.strip():
            raise ValueError(f"{where}: '::: link' needs a route and the link text, "
                             "as '::: link math Next: the math →'")
        return ChapterLink(label.strip(), route)
    if kind == "placeholder":
        title, bar, body = args.partition("|")
        if not bar or not title.strip() or not body.strip():
            raise ValueError(f"{where}: '::: placeholder' needs 'Title | text'")
        return Placeholder(title.strip(), body.strip())
    if kind in MARKER_SECTIONS:
        if args:
            raise ValueError(f"{where}: '::: {kind}' takes nothing after it")
        return MARKER_SECTIONS[kind]()
    raise ValueError(f"{where}: unknown marker kind {kind!r} (known: panel, figure, link, "
                     "placeholder, "
                     "question, review, glossary, references, or a bare ':::' for a block "
                     "break)")


def question(rest, body, source, first):
    # "question ID", the lines up to the closing ":::" (the first is line `first` + 1)
    # -> ("question", Question); a ValueError names the file and the line
    where = f"{source}, line {first}"
    qid = rest.partition(" ")[2].strip()
    if not QUESTION_ID.fullmatch(qid):
        raise ValueError(f"{where}: '::: question' needs one id of lowercase letters, digits "
                         "and hyphens, as '::: question mask-off-row2'")
    fields, options, replies = {}, [], []
    keyed = {"option": (options, "an option's key is one word, as 'option mat: ...'",
                        "a second option"),
             "if": (replies, "a reply names one answer, as 'if none: ...'", "a second reply to")}
    last = None  # the field a continuation line extends: a name, "option" or "if"
    for offset, line in enumerate(body, start=first + 1):
        at = f"{source}, line {offset}"
        if not line.strip():
            last = None
            continue
        if line[0] in " \t":  # an indented line continues the field above it
            if last is None:
                raise ValueError(f"{at}: an indented line continues nothing")
            if last in ("option", "if"):
                items = options if last == "option" else replies
                key, text = items[-1]
                items[-1] = (key, f"{text} {line.strip()}")
            else:
                fields[last] = (f"{fields[last][0]} {line.strip()}", fields[last][1])
            continue
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not value:
            raise ValueError(f"{at}: a question's line reads 'field: value' "
                             f"(kind, ask, option KEY, if KEY, show, why, unit, band), "
                             f"not {line!r}")
        prefix, space, key = name.partition(" ")
        if space and prefix in keyed:  # "option KEY: text" or "if KEY: text"
            items, one_word, again = keyed[prefix]
            key = key.strip()
            if not OPTION_KEY.fullmatch(key):
                raise ValueError(f"{at}: {one_word}")
            if key in dict(items):
                raise ValueError(f"{at}: {again} {key!r}")
            items.append((key, value))
            last = prefix
            continue
        if name not in ("kind", "ask", "show", "why", "unit", "band"):
            raise ValueError(f"{at}: unknown question field {name!r} "
                             "(known: kind, ask, option KEY, if KEY, show, why, unit, band)")
        if name in fields:
            raise ValueError(f"{at}: a second {name!r} line")
        fields[name] = (value, at)
        last = name
    for name in ("kind", "ask", "show", "why"):
        if name not in fields:
            raise ValueError(f"{where}: question {qid!r} has no '{name}:' line")
    kind, at = fields["kind"]
    if kind not in QUESTION_KINDS:
        raise ValueError(f"{at}: a question's kind is 'choice' or 'number', not {kind!r}")
    unit, band = fields.get("unit", ("", ""))[0], ()
    if kind == "choice":
        if len(options) < 2:
            raise ValueError(f"{where}: the choice question {qid!r} needs two options or more")
        for name in ("unit", "band"):
            if name in fields:
                raise ValueError(f"{fields[name][1]}: a choice question has no '{name}:'")
        stray = [key for key, _ in replies if key not in dict(options)]
        if stray:
            raise ValueError(f"{where}: question {qid!r} replies to {stray[0]!r}, which is "
                             "none of its options")
    else:
        if options:
            raise ValueError(f"{where}: the number question {qid!r} has options; "
                             "a number question takes 'band:' (and 'unit:') instead")
        if "band" not in fields:
            raise ValueError(f"{where}: the number question {qid!r} needs a 'band:' line "
                             "(as 'band: 5%', 'band: 0.02' or 'band: order')")
        band = parse_band(*fields["band"])
        missing = [key for key in NUMBER_REPLIES if key not in dict(replies)]
        if missing:
            raise ValueError(f"{where}: the number question {qid!r} needs an 'if {missing[0]}:' "
                             "line: what an answer on that side of the band is told")
    slot, params = parse_show(*fields["show"])
    return Question(id=qid, kind=kind, ask=fields["ask"][0], options=tuple(options),
                    show_slot=slot, show_params=params, why=fields["why"][0], unit=unit,
                    band=band, replies=tuple(replies))


def parse_band(text, at):
    # "5%" | "0.02" | "factor 2" | "order" -> ("relative" | "absolute" | "order", x)
    if text == "order":
        return ("order", ORDER_FACTOR)
    factor = FACTOR_BAND.fullmatch(text)
    if factor and float(factor.group(1)) > 1:
        return ("order", float(factor.group(1)))
    match = BAND.fullmatch(text)
    if not match:
        raise ValueError(f"{at}: a band is '5%' (relative), '0.02' (absolute), 'factor 2' "
                         f"or 'order' (within a factor of {ORDER_FACTOR:g}), not {text!r}")
    amount = float(match.group(1))
    return ("relative", amount / 100) if match.group(2) else ("absolute", amount)


def parse_show(text, at):  # 'head mask=off query=2' -> ("head", {"mask": "off", "query": "2"})
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"{at}: 'show:' could not be read ({error})") from None
    if not words or "=" in words[0]:
        raise ValueError(f"{at}: 'show:' names a panel slot first, as 'show: head mask=off'")
    params = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or not URL_KEY.fullmatch(key) or not value:
            raise ValueError(f"{at}: 'show:' takes URL keys as key=value (quote a value with "
                             f"spaces: scores=\"12, 1, 0.1\"), not {word!r}")
        params[key] = value
    return words[0], params


TAG = re.compile(r"<[^>]+>")


@functools.lru_cache(maxsize=512)  # a live chapter renders the same blocks every session
def markdown_html(text):  # Markdown (with inline HTML) -> HTML: the static and live chapters
    return markdown_parser().render(text)


def plain_text(markdown):  # -> the words of a block, without tags or Markdown marks
    text = TAG.sub("", markdown_html(markdown))
    return " ".join(html.unescape(text).replace("*", "").split())


def description(chapter, limit=160):  # -> the lede's first sentences, for link previews
    lede = next(item for item in chapter.sections[1:] if isinstance(item, str))
    words, out = plain_text(lede).split(), ""
    for word in words:
        if len(out) + len(word) + 1 > limit - 1:
            return out.rstrip(",;:") + "…"
        out = f"{out} {word}".strip()
    return out
