"""A chapter as a static page, text first: its prose is plain HTML, its panels are islands.

The page a reader gets holds the whole chapter as semantic HTML (headings, paragraphs, the
formula), styled by one inline stylesheet, so it paints before any script runs, on a phone,
with scripts off and in print. Each panel is an island: a box in the text that holds the
panel's Bokeh root once it mounts, and until then a short note. `static/islands.js`
mounts a panel's Bokeh document when the reader nears it (or a deep link, a link in the
prose, or the keyboard reaches it); no Bokeh or Panel script loads before that.

A panel that follows another (the ladder follows the head's controls) shares its leader's
Bokeh document, so one group of islands mounts together; every other panel is a document
of its own. The build saves each group's document with Panel (so its models, stylesheets
and scripts are exactly Panel's) and lifts out of that page the scripts to load, the
document's JSON and the map from root to element.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re

import jinja2

from app.chapters import apparatus, content, figures, questions
from app.chapters.content import TAG, description, markdown_html, plain_text
from app.kit import island_documents, registry, resources
from app.kit.panel_internals import document_parts  # what Panel's save would put in a page
from app.kit.resources import minify_css

NO_SCRIPT_NOTE = registry.NO_SCRIPT_NOTE  # under a still, with scripts off


@dataclasses.dataclass(frozen=True)
class Asked:  # a section of a panel's own page: a question of its chapter, hidden in a
    # template until a link asks for it (?ask=<id>)
    question: content.Question


@dataclasses.dataclass
class Group:
    """One Bokeh document of the page: the panels mounted together."""

    name: str  # "g0", "g1", ...: the key islands.js knows it by
    slots: list  # the panels' slots, leader first
    scripts: list = dataclasses.field(default_factory=list)  # Bokeh and Panel script URLs
    docs_json: str = ""  # the document's JSON text, as Panel would save it
    render_items: list = dataclasses.field(default_factory=list)  # [{docid, roots, ...}]
    tables: dict = dataclasses.field(default_factory=dict)  # {ref: table} its panels ship
    elements: dict = dataclasses.field(default_factory=dict)  # slot -> element id
    stills: dict = dataclasses.field(default_factory=dict)  # slot -> HTML of its default state
    # its panels' stills carry native controls that switch them before Bokeh has loaded
    # (static/still_controls.js), for the panels whose record asks (`still_controls`): set
    # by the static build, on a panel's own page and a chapter's
    still_controls: bool = False
    # its island is on the panel's page of its own, where the panel is taller (its title,
    # what its own() holds): the island holds the record's page heights
    own_page: bool = False


def groups_of(panels, follows):  # {slot: ...}, {follower: leader} -> [Group], in page order
    out, by_leader = [], {}
    for slot in panels:
        leader = follows.get(slot, slot)
        if leader not in by_leader:
            by_leader[leader] = Group(name=f"g{len(out)}", slots=[])
            out.append(by_leader[leader])
        by_leader[leader].slots.append(slot)
    return out


def panel_description(module, title):  # -> a panel page's description: its docstring's lede
    return plain_text((module.__doc__ or title).strip().split("\n\n")[0])


def chapter_blocks(group, shelf, plan):  # -> a builder of the group's [(slot, blocks)]
    def build():
        from app.chapters import live_chapter
        from app.kit import chrome

        blocks = [live_chapter.panel_block(slot, shelf, plan[slot]) for slot in group.slots]
        for block in blocks:  # every panel's callbacks on its widgets exist before a root
            for item in block:  # is made, so a leader's widgets also carry its followers'
                if hasattr(item, "attach_switcher"):
                    item.__panel__()
        blocks[0] = [chrome.a11y(), *blocks[0]]  # names Bokeh's controls, once a document
        return list(zip(group.slots, blocks))

    return build


def save_group(group, build, theme, scripts_used=lambda scripts, doc: scripts):
    # Group -> the same, filled: build() -> [(slot, [viewables])], each slot one root of one
    # Document, built in a static build in `theme`; its document, render items and scripts
    # as Panel's save would write them (panel_internals.document_parts); scripts_used:
    # (scripts, the Bokeh Document) -> the scripts the build ships (by its models' types)
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.kit import chrome, states

    doc = Document()
    with states.static_build() as site, pn.config.set(theme=theme), set_curdoc(doc):
        chrome.apply_figure_theme()
        built = build()
        switched = {}  # slot -> the panel whose still its controls switch
        if group.still_controls:
            for slot in [s for s in group.slots if registry.by_slot(s).still_controls
                         and issubclass(registry.by_slot(s).viewer_class, states.StatePanel)]:
                cls = registry.by_slot(slot).viewer_class
                switched[slot] = next(p for p in site.panels if type(p) is cls)
        group.stills = {slot: still(block, switched.get(slot),
                                    switched.get(registry.by_slot(slot).follows), slot)
                        for slot, block in built}
        roots = {}
        for slot, block in built:
            if len(block) == 1 and isinstance(block[0], pn.layout.ListPanel):
                column = block[0]  # a page's own column: no layout deeper (rooflines draw)
            else:
                column = pn.Column(*block, sizing_mode="stretch_width", margin=0,
                                   stylesheets=[chrome.CSS])
            model = column.get_root(doc)
            doc.add_root(model)
            roots[model.id] = slot
        group.docs_json, group.render_items, scripts = document_parts(doc)
        group.tables = site.tables
    group.scripts = scripts_used(scripts, doc)
    for root_id, element in island_documents.root_elements(group.render_items):
        group.elements[roots[root_id]] = element
    return group


HEADING = re.compile(r"^\s*<h[1-6]\b")


def still(block, switched=None, leader=None, slot=None):  # a panel's [repairs, viewer] -> HTML
    # of its titles, readouts, tables and charts as built (its default state): what the island
    # shows before it mounts, and without scripts; each chart a picture drawn at build time
    # (app/chapters/stills.py). switched: the block's StatePanel when native controls switch
    # its still (static/still_controls.js): then its data goes first, as JSON, its controls
    # above the first thing a state changes, and each readout a state sets and each chart's
    # pane are marked by their index in it. leader: the panel whose widgets drive it, for a
    # follower in a chapter; slot: its island's
    import panel as pn

    from app.chapters import still_figures, stills
    from app.kit.readout import Readout

    def shown(obj):
        return isinstance(obj, (Readout, pn.pane.HTML, pn.pane.Markdown, pn.pane.Bokeh))

    parts, readouts, panes = [], {}, {}
    controls = ""  # the native controls, placed above the first thing a state changes
    first_changed = None  # the index in parts of that first thing
    if switched is not None:
        described = still_figures.still_data(switched, leader)
        data = json.dumps(described, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).replace("</", "<\\/")
        parts.append(f'<script type="application/json" class="ae-still-data">{data}</script>')
        controls = still_figures.controls_html(described, f"panel-{slot}")
        readouts = {id(r): i for i, (r, _) in enumerate(still_figures.still_readouts(switched))}
        panes = {id(p): i for i, p in enumerate(still_figures.panes_of(switched.__panel__()))}
    for item in block:
        layout = item.__panel__() if isinstance(item, pn.viewable.Viewer) else item
        if not hasattr(layout, "select"):
            continue
        for obj in layout.select(shown):
            if isinstance(obj, Readout):
                filled = still_html(obj.filled())
                empty = not TAG.sub("", filled).strip()
                if id(obj) in readouts:  # kept, empty or not: a state may fill it
                    first_changed = len(parts) if first_changed is None else first_changed
                    hidden = " hidden" if empty else ""
                    parts.append(f'<div class="ae-still-readout" data-ae-readout='
                                 f'"{readouts[id(obj)]}"{hidden}>{filled}</div>')
                elif not empty:
                    parts.append(f'<div class="ae-still-readout">{filled}</div>')
            elif isinstance(obj, pn.pane.Bokeh):
                if obj.visible and obj.object is not None and id(obj) in panes:
                    first_changed = len(parts) if first_changed is None else first_changed
                    parts.append(f'<div class="ae-still-pane" data-ae-pane="{panes[id(obj)]}">'
                                 f'{stills.stills_of(obj.object)}</div>')
                elif obj.visible and obj.object is not None:
                    parts.append(stills.stills_of(obj.object))
            elif isinstance(obj, pn.pane.Markdown) and isinstance(obj.object, str):
                parts.append(markdown_html(obj.object))
            elif isinstance(obj, pn.pane.HTML) and isinstance(obj.object, str) and (
                    HEADING.match(obj.object) or "<table" in obj.object):
                parts.append(still_html(obj.object))
    if controls:
        parts.insert(len(parts) if first_changed is None else first_changed, controls)
    return "\n".join(p for p in parts if p)


LIVE_ONLY = re.compile(r' (?:data-s|aria-live)="[^"]*"')  # holes the switcher fills, live regions
EMPTY = re.compile(r"<(li|span|b|small|sup|sub|p|div|ul|em|strong)(?: [^>]*)?></\1>"
                   r"|(?:<t([dh])(?: [^>]*)?></t\2>)+(?=</tr>)|<tr></tr>")  # a row's empty end


# a line the panels' stylesheets hide while its hole is empty (static/css: `.ae-end:has(> b:empty)`,
# `.ae-if:has(> b:empty)`, `.ae-if:has(> span:empty)`); a still has no such rule, so it drops them
UNMET = re.compile(r'<div class="ae-end">(?:(?!</div>).)*?<b data-s="[\w-]+"></b>'
                   r'(?:(?!</div>).)*?</div>'
                   r'|<div class="ae-if">(?:(?!</div>).)*?<(b|span) data-s="[\w-]+"></\1>'
                   r'(?:(?!</div>).)*?</div>', re.DOTALL)


def still_html(text):  # a readout's HTML -> the same for a still: nothing there changes, so
    # no holes, no live regions, no empty hole (a table row keeps its empty cells but the
    # last ones: its grid), no line its stylesheet hides
    text = UNMET.sub("", text)
    text, before = LIVE_ONLY.sub("", text).replace(' role="status"', ""), None
    while before != text:
        before, text = text, EMPTY.sub("", text)
    return text


WAIT_NOTES = {  # the note under a still until its island mounts: by whether native controls
    # switch the still (then it mounts only on intent: static/islands.js)
    False: ("The interactive panel loads as you reach it.", "Load it now"),
    True: (("Its controls work as they are; Bokeh's chart, with hover values and zoom, loads "
            "when you rest the pointer on a chart."), "Load the interactive chart"),
}


def island(slot, group):  # -> the HTML box a panel mounts into, with its note until then
    height = registry.island_height(slot, own_page=group.own_page)
    phone = registry.phone_height(slot, own_page=group.own_page)
    still = group.stills.get(slot, "")
    note, button = WAIT_NOTES['class="ae-still-data"' in still]
    return (f'<section class="ae-island" id="panel-{slot}" data-group="{group.name}" '
            f'data-slot="{slot}" style="--ae-island-height:{height}px;--ae-phone-height:{phone}px" '
            f'aria-label="{html.escape(slot)} panel">\n'
            f'<div class="ae-island-root" id="{group.elements[slot]}"></div>\n'
            '<div class="ae-island-still">'
            f'<div class="ae-still-body">{still}</div>'
            f'<p class="ae-island-wait">{html.escape(note)} '
            f'<button type="button" class="ae-island-load">{html.escape(button)}</button></p>'
            f"<noscript><p>{html.escape(NO_SCRIPT_NOTE)}</p></noscript></div>\n</section>")


def chapter_href(page_folder, route, theme):  # the other chapter's file, relative, same theme
    target = route.strip("/") if route not in ("./", "/") else ""
    rel = os.path.relpath(target or ".", page_folder or ".").replace(os.sep, "/")
    rel = "" if rel == "." else rel + "/"
    return rel + ("index-dark.html" if theme == "dark" else "")


def body(chapter, groups, page_folder, theme):  # -> the <main> of the page: prose, islands
    from app.kit import chrome

    group_of = {slot: g for g in groups for slot in g.slots}
    terms_refs = apparatus.Apparatus(chapter.sections)
    parts = []
    for item in chapter.sections:
        match item:
            case str():
                parts.append(terms_refs.prose(item))
            case content.PanelMarker(slot) if slot in group_of:
                parts.append(island(slot, group_of[slot]))
            case content.FigureMarker():
                parts.append(figures.figure_html(item, terms_refs.prose))
            case content.ChapterLink(text, route):
                href = chapter_href(page_folder, route, theme)
                parts.append(f'<p><a class="ae-chapter-link" href="{html.escape(href or "./")}">'
                             f"{html.escape(text)}</a></p>")
            case content.Placeholder(title, text):
                parts.append(chrome.placeholder_html(title, text))
            case content.Question():
                parts.append(questions.html(item, questions.answer(item)))
            case content.Review():
                parts.append(questions.review_html(chapter))
            case content.Glossary():
                parts.append(terms_refs.glossary_html())
            case content.References():
                parts.append(terms_refs.references_html())
            case Asked(q):  # a panel page's question, shown when a link asks for it: a
                # template until then, so it is no part of the page (nor its text)
                parts.append(f'<template class="ae-asked" data-question="{html.escape(q.id)}">'
                             f"{questions.html(q, questions.answer(q))}</template>")
    return "\n".join(parts)


def asked_questions(record):  # a panel's registry record -> (its slot, its chapter's
    # questions about it, their "show me" keys renamed to the page's own)
    from app.kit import url_state

    panels = registry.chapter_panels(record.chapter)
    plan = url_state.chapter_plan(panels, registry.follows(record.chapter))[record.slot]
    asked = [dataclasses.replace(q, show_params={plan[k]: v for k, v in q.show_params.items()
                                                 if k in plan})
             for q in questions.questions_of(content.load(record.chapter))
             if q.show_slot == record.slot]
    return record.slot, asked


def embed_link(embed):  # (href, site root) -> the "Embed" link: without scripts the build's
    # page on embedding; static/embedding.js makes it a button opening the dialog
    if not embed:
        return ""
    href, root = embed
    return (f'<a class="ae-embed-link" href="{html.escape(href)}" '
            f'data-root="{html.escape(root)}">Embed</a>')


def header(back, page_folder, theme, embed=None):  # -> the top row: a link to the other
    # chapter, "Embed", the theme
    left = ""
    if back:
        text, route = back
        href = chapter_href(page_folder, route, theme) or "./"
        left = f'<a class="ae-back-link" href="{html.escape(href)}">{html.escape(text)}</a>'
    other = "index.html" if theme == "dark" else "index-dark.html"
    label = "Light theme" if theme == "dark" else "Dark theme"
    return (f'<header class="ae-top">{left}{embed_link(embed)}<a class="ae-theme-link" '
            f'href="{other}" data-theme-file>{label}</a></header>')


# the page around a chapter: app/chapters/templates/chapter.html, a Jinja2 template (Bokeh's own
# template engine); every value is escaped unless the template marks it as our own HTML
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(resources.package_dir() / "chapters" / "templates")),
    autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


# static/page_head.js, in every page's head: the classes set before the first paint, AE.page
HEAD_JS = resources.inline_script("page_head.js")


def page_html(chapter, groups, *, title, theme, page_folder, back, urls, live_url=None,
              about=None, top=True, canonical=None, oembed=None, embed=None):
    # -> the chapter's whole page. urls: {"switcher", "islands", "questions", "terms",
    # "stills" (loaded where a group's stills have native controls): src, "css":
    # text, "doc": Group -> src, "table": ref -> src}; Bokeh's and Panel's script URLs are
    # still the CDN's here (the build points them at its own copies afterwards, as for every
    # page). about: the page's description (default: the chapter's lede); top: the header;
    # canonical: the page's own absolute address (both themes name the one route), or None;
    # oembed: its oEmbed response's address; embed: (href, site root) of its "Embed" link,
    # in the header, or without one (a panel's page) in a footer
    # when: a chapter mounts an island as the reader nears it, a panel's page at idle once
    # it has painted; each group names the Bokeh and Panel bundles its own models need
    config = {"when": "near" if top else "idle", "switcher": urls["switcher"], "groups": {}}
    for g in groups:  # a group's document is a script of its own, loaded when it mounts
        config["groups"][g.name] = {"scripts": g.scripts, "doc": urls["doc"](g),
                                    "render_items": g.render_items,
                                    "slots": g.slots,
                                    "tables": [urls["table"](ref) for ref in g.tables]}
    config_text = json.dumps(config, separators=(",", ":")).replace("</", "<\\/")
    return TEMPLATES.get_template("chapter.html").render(
        title=title, description=description(chapter) if about is None else about,
        canonical=canonical, css=minify_css(urls["css"]), theme=theme, live_url=live_url,
        head_js=HEAD_JS,
        header=header(back, page_folder, theme, embed) if top else "",
        foot="" if top else embed_link(embed), oembed=oembed,
        main=body(chapter, groups, page_folder, theme), config=config_text,
        islands_js=urls["islands"], questions_js=urls["questions"], terms_js=urls["terms"],
        stills_js=urls.get("stills") if any(g.still_controls for g in groups) else None)

