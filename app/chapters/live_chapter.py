"""A live chapter's page, text first: its prose is HTML in the page, each widget part a root.

The server sends the chapter's text inside the page's HTML (rendered from the same content
file, by the same Markdown renderer and stylesheet as the static chapter), so a phone paints
it before any script has run; the header's controls are native HTML too. The parts that need
the session (each question, the review, each panel) are roots of the session's document,
each placed where the text has it through Bokeh's public document template
(`Document.template`, `{{ embed(roots[name]) }}`) extending Panel's own page template.
Bokeh's and Panel's scripts (without bokeh-gl: app/kit/panel_internals.py
`deferred_scripts`) and the session's plot script wait in a `<template>` after the text;
static/live_page.js runs them, in order, when the first such part comes within a screen of
view, at the reader's first scroll or key press, or when the address has a fragment. Until
then a phone parses no Bokeh (Lighthouse mobile: 66-70 with the bundles deferred, 100 held).
The session may attach for as long as its token lives (--reconnect-within): with
--reuse-sessions (the default) it is built when the page connects; without, the one built
for the GET is dropped once unused for --unused-session-lifetime and built again when the
page connects.

A reused first paint (Panel's session cache) is the cached session's HTML with the new
session's roots, which Bokeh's client matches to the page's root elements by position. So
every session of a chapter has the same roots in the same order: a part the address turns
off (`?questions=off`) is an empty hidden root, never a missing one.

`render` draws a page model (app/chapters/page_model.py) so: its text and the header's
native controls as HTML; each question, the review, each panel and the invisible support
components a root. Every panel sits below the first screenful of prose, so by default each
is built after the page has appeared (`Later`, on `pn.state.onload`, the hook under Panel's
own `defer_load`): opening the page costs the prose alone (a GET of "/" fell from about
450-650 ms to under 60 ms of server time here), and the panels arrive over the open
websocket a moment later, each restoring its URL state as it lands. A per-panel
`pn.panel(fn, defer_load=True)` was tried first: it nests each panel one layout deeper,
where the decode bill's roofline never draws, and it sends one message per panel, which the
browser took about a second longer to lay out.

Until its session's panel has landed, each panel's place shows what the static chapter shows
there (app/chapters/live_stills.py): its still, read from the build `serve` serves beside these
pages, with native controls that work at once; the session takes over holding the stops the
reader set there. Without a build the boxes are as above.
"""

import dataclasses
import functools
import html
import logging

import jinja2
import panel as pn
from bokeh.models import LayoutDOM
from panel.io.state import set_curdoc

from app.chapters import apparatus, content, figures, live_stills
from app.chapters.live_question import ChapterQuestions
from app.kit import chrome, embedding, panel_internals, resources, url_state

log = logging.getLogger(__name__)

# extends Panel's page template (its head: icons, Bokeh's and Panel's stylesheets); the
# scripts move from the head into a <template> after the text, which static/live_page.js
# runs as the first part needing the session nears
TEMPLATE = jinja2.Template("""{% extends ae_base %}
{% from macros import embed %}
{% block postamble %}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="{{ ae_description }}">
<meta name="color-scheme" content="{{ ae_color_scheme }}">
<style>{{ ae_css }}</style>
{{ ae_embed_head }}
{% endblock %}
{% block js_resources %}{% endblock %}
{% block body %}
<body class="ae-page ae-live-page ae-theme-{{ ae_theme }}">
{% for kind, value in ae_parts %}{% if kind == "html" %}{{ value }}
{% else %}{% set around = ae_around.get(value, ("", "")) %}<div class="ae-live-{{ kind }}">
{{- around[0] }}{{ embed(roots[value]) }}{{ around[1] }}</div>
{% endif %}{% endfor %}
{% for root in roots %}{% if root.name not in ae_placed %}{{ embed(root) }}{% endif %}{% endfor %}
{{ ae_stills }}
<template id="ae-session">{{ ae_scripts(bokeh_js) }}
{{ plot_script }}</template>
<script>{{ ae_page_js }}</script>
</body>
{% endblock %}
""")

# static/live_page.js: the header's native controls; the session's scripts run when needed
PAGE_JS = resources.inline_script("live_page.js")

# the roots' boxes keep about their drawn height before Bokeh draws them: little moves then
LIVE_CSS = resources.stylesheet("live-chapter.css")


@functools.cache
def stylesheet():  # -> the static chapters' stylesheet and the live page's few rules, minified
    chapter_css = resources.static_file("chapter.css").read_text(encoding="utf-8")
    return resources.minify_css(chapter_css + LIVE_CSS)


@dataclasses.dataclass
class Root:
    kind: str  # "question", "review", "panel" or "support": its box's class, ae-live-<kind>
    name: str  # the root's name in the document and the template
    obj: object  # the viewable drawn there


class LiveChapter(pn.viewable.Viewer):
    """A live chapter: HTML text and named roots, in page order. `server_doc` puts it into a
    session's document; shown any other way (a notebook) it is one column of the same."""

    def __init__(self, *, title, description, theme="default"):
        super().__init__()
        self.title, self.description, self.theme = title, description, theme
        self.parts = []  # str (HTML) or Root
        self.around = {}  # root name -> (HTML before its element, after it): a panel's island
        self.stills_html = ""  # the stills' config and script (app/chapters/live_stills.py)

    def add_html(self, text):
        self.parts.append(text)

    def add_root(self, kind, name, obj):  # -> obj
        if any(r.name == name for r in self.roots):
            raise ValueError(f"a root named {name!r} is already on this page")
        self.parts.append(Root(kind, name, obj))
        return obj

    @property
    def roots(self):  # -> [Root], in page order
        return [p for p in self.parts if isinstance(p, Root)]

    @property
    def objects(self):  # -> the roots' viewables, in page order
        return [r.obj for r in self.roots]

    def root(self, name):  # -> the viewable of the root named so
        return next(r.obj for r in self.roots if r.name == name)

    def select(self, selector=None):  # -> every Panel object of every root matching selector
        return [obj for r in self.roots for obj in pn.panel(r.obj).select(selector)]

    def html(self):  # -> the page's text: every HTML part, without the roots
        return "\n".join(p for p in self.parts if isinstance(p, str))

    def server_doc(self, doc=None, title=None, location=True):  # -> the document, each root
        # added as Panel adds a page's one root (one Location, with the first)
        if doc is None:
            from bokeh.io import curdoc as bokeh_curdoc

            doc = pn.state.curdoc or bokeh_curdoc()
        with doc.models.freeze():  # the document's models are walked once, not once a root
            for i, root in enumerate(self.roots):
                before = set(doc.roots)
                pn.panel(root.obj).server_doc(doc, title=title or self.title,
                                              location=location and i == 0)
                [model] = [m for m in doc.roots if m not in before and isinstance(m, LayoutDOM)]
                model.name = root.name
        from panel.io.resources import BASE_TEMPLATE

        doc.template = TEMPLATE
        doc.template_variables.update(
            ae_base=BASE_TEMPLATE, ae_css=stylesheet(), ae_theme=self.theme,
            ae_color_scheme="dark" if self.theme == "dark" else "light",
            ae_description=html.escape(self.description),
            ae_embed_head=embedding.live_head(embedding.session_path(), title or self.title),
            ae_parts=[("html", p) if isinstance(p, str) else (p.kind, p.name)
                      for p in self.parts],
            ae_placed=[r.name for r in self.roots], ae_scripts=deferred_scripts(doc),
            ae_around=self.around, ae_stills=self.stills_html, ae_page_js=PAGE_JS)
        return doc

    def servable(self, title=None, location=True, area="main", target=None):  # `panel serve`
        # a script: the page goes into the session's document as `attention-explorable serve`
        # puts it there (outside a server, as Panel's own servable does: nothing)
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            self.server_doc(doc, title=title, location=location)
        return self

    def __panel__(self):
        if not hasattr(self, "_column"):
            objects = [pn.pane.HTML(p, sizing_mode="stretch_width") if isinstance(p, str)
                       else p.obj for p in self.parts]
            self._column = pn.Column(*objects, sizing_mode="stretch_width",
                                     max_width=chrome.CONTENT_MAX_WIDTH)
        return self._column


def deferred_scripts(doc):  # -> the template's filter of Panel's script tags, for this doc
    def scripts(bokeh_js):
        return panel_internals.deferred_scripts(bokeh_js, panel_internals.uses_webgl(doc))
    return scripts


# a deferred panel's box before it lands: tall enough that the page barely moves when it does
PLACEHOLDER_HEIGHT = 360


class Shelf:
    """One session's viewers: each slot is built on first request, then always the same."""

    def __init__(self, panels, static=False):  # {slot: (class, builder)}; static: for a
        # static page (the build's), else a live session's
        self._panels = panels
        self.static = static
        self.built = {}

    def __call__(self, slot):  # -> the slot's viewer
        if slot not in self.built:
            self.built[slot] = self._panels[slot][1](self, static=self.static)
        return self.built[slot]


def build_panels(panels):  # -> {slot: Viewer}, one fresh set, built now, in page order
    shelf = Shelf(panels)
    return {slot: shelf(slot) for slot in panels}


def chapter_href(route):  # the other chapter's address, keeping this session's theme
    return route + ("?theme=dark" if chrome.theme() == "dark" else "")


def chapter_link(text, route):  # -> HTML: a link to the other chapter, in the reading column
    return (f'<p><a class="ae-chapter-link" href="{html.escape(chapter_href(route))}">'
            f"{html.escape(text)}</a></p>")


def back_link(text, route):  # -> HTML: the same, small, at the left of the header row
    return (f'<a class="ae-back-link" href="{html.escape(chapter_href(route))}">'
            f"{html.escape(text)}</a>")


def show_state(get, plan, slot, params):  # "Show me" on a live page: the panel of `slot`
    # takes the chapter's query keys in params, as a deep link would set them
    keys = plan.get(slot, {})
    present = {keys[k]: [str(v)] for k, v in params.items() if k in keys}  # as a query has them
    url_state.restore(get(slot), list(present), present)


class Later:
    """Panels built once the page has appeared: a box with a spinner now, the panel a moment
    later. All of a page's panels are built in one go, on the next turn of the server's loop
    after the browser reports the page ready, with the document held, so the model graph is
    walked once and they reach the browser in a single message. Each box is a root of the
    page and holds its panel directly, as a page's own column does (one Column deeper and
    the decode bill's roofline never draws)."""

    def __init__(self):
        self.pending = []  # [(box, build)]
        self.then = []  # [callable]: called once the panels are built, in the same message

    def place(self, build):  # build: () -> [viewable]; -> the box it fills
        holder = pn.Column(sizing_mode="stretch_width", min_height=PLACEHOLDER_HEIGHT, margin=0,
                           loading=True, stylesheets=[chrome.CSS])
        self.pending.append((holder, build))
        return holder

    def start(self):  # once the page is built: ask for the fill when it is ready
        if self.pending:
            pn.state.onload(self._schedule)

    def _schedule(self):  # document ready: build on the next tick, when the session is live
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:  # no server: tests, notebooks
            self.fill()
            return
        doc.add_next_tick_callback(functools.partial(self._fill_in, doc))

    def _fill_in(self, doc):
        with set_curdoc(doc):
            self.fill()

    def fill(self):  # build every pending panel into its box
        pending, self.pending = self.pending, []
        with pn.io.hold(freeze=True):
            for holder, build in pending:
                holder.param.update(objects=build(), loading=False, min_height=None)
            for then in self.then:
                then()


def panel_block(slot, get, keys):  # -> the slot's URL note and viewer
    try:
        viewer = get(slot)
        repairs = url_state.with_url_state(viewer, keys)  # restores first, then mirrors
    except Exception:  # one broken panel must not keep the others from loading
        log.exception("the %s panel could not be built", slot)
        return [chrome.placeholder("This panel could not be loaded",
                                   "Something went wrong on the server while building it. "
                                   "The rest of the page works; reloading may help.")]
    return [repairs, viewer]


def add_part(page, item, get, plan, terms_refs, later=None, asked=None):
    # one SECTIONS item -> onto the LiveChapter: text as HTML, a question, the review or a
    # panel as a root. asked: the page's ChapterQuestions, or None when the address turned
    # them off (each still has its root, empty and hidden: every session, the same roots);
    # terms_refs: the chapter's apparatus.Apparatus (its terms and references)
    match item:
        case str():
            page.add_html(terms_refs.prose(item))
        case content.Glossary():
            page.add_html(terms_refs.glossary_html())
        case content.References():
            page.add_html(terms_refs.references_html())
        case content.Placeholder(title, text):
            page.add_html(chrome.placeholder_html(title, text))
        case content.ChapterLink(text, route):
            page.add_html(chapter_link(text, route))
        case content.FigureMarker():
            page.add_html(figures.figure_html(item, terms_refs.prose))
        case content.Question():
            add_asked(page, "question", f"q-{item.id}",
                      None if asked is None else asked.question(item.id))
        case content.Review():
            add_asked(page, "review", "review", None if asked is None else asked.review)
        case content.PanelMarker(slot) if slot not in plan:
            page.add_html(chrome.placeholder_html("A panel is coming here",
                                                   f"The {slot} panel is on its way."))
        case content.PanelMarker(slot):
            add_panel(page, slot, get, plan, later)


def add_asked(page, kind, name, shown):  # a question's or the review's root; empty and
    # hidden where none is shown, so every session has the same roots
    page.add_root(kind, name, shown if shown is not None else
                  pn.pane.HTML("", visible=False, margin=0))


def add_panel(page, slot, get, plan, later):  # a panel's block, a root of the page
    build = functools.partial(panel_block, slot, get, plan[slot])
    box = (later.place(build) if later is not None else
           pn.Column(*build(), sizing_mode="stretch_width", margin=0, stylesheets=[chrome.CSS]))
    page.add_root("panel", f"panel-{slot}", box)


def header(back, asked):  # -> HTML: the top row: the other chapter, "Hide questions" (a
    # chapter showing questions), the theme; native controls (static/live_page.js), working
    # before the session does
    left = back_link(*back) if back else ""
    toggle = ('<button type="button" class="ae-q-toggle" aria-pressed="false">Hide questions'
              "</button>" if asked is not None else "")
    target = "default" if chrome.theme() == "dark" else "dark"
    label = "Light theme" if target == "default" else "Dark theme"
    theme = (f'<a class="ae-theme-link" href="?theme={target}" data-ae-switch-theme="{target}">'
             f"{label}</a>")
    return f'<header class="ae-top ae-live-top">{left}{toggle}{theme}</header>'


def support(asked, stills=None):  # -> the root of the page's invisible components: the
    # names of Bokeh's controls, the browser's memory of the answers, the stills' hand-over
    memory = [asked.memory] if asked is not None else []
    link = [stills.link] if stills is not None else []
    return pn.Column(chrome.a11y(), *memory, *link, margin=0, height=0,
                     sizing_mode="stretch_width")


def questions_off():  # -> whether this session's address says ?questions=off
    args = pn.state.session_args if pn.state.curdoc is not None else {}
    value = (args.get("questions") or [b""])[0]
    return value.decode("utf-8", "replace").strip().lower() == "off"


def chapter_questions(sections, get, plan):  # -> the live page's ChapterQuestions, or None
    # (no questions, or ?questions=off: then none are shown)
    asked = [item for item in sections if isinstance(item, content.Question)]
    if not asked or questions_off():
        return None
    return ChapterQuestions(asked, show=functools.partial(show_state, get, plan))


def render(model, *, defer=True, shelf=None):
    # a page model (app/chapters/page_model.py) -> its live page. defer: build panels after
    # the page appears; shelf: the Shelf to build into (tests pass one to look at the viewers)
    shelf = Shelf(model.panels) if shelf is None else shelf
    plan = url_state.chapter_plan(model.panels, model.follows)
    later = Later() if defer else None
    asked = chapter_questions(model.sections, shelf, plan)
    terms_refs = apparatus.Apparatus(model.sections)
    chrome.apply_figure_theme()
    page = LiveChapter(title=model.title, theme=chrome.theme(), description=model.description)
    page.add_html(header(model.back, asked))
    page.add_html('<main class="ae-article" id="main">')
    for item in model.sections:
        add_part(page, item, shelf, plan, terms_refs, later, asked)
    page.add_html("</main>")
    hand_over = with_stills(page, model, shelf, later)
    page.add_root("support", "support", support(asked, hand_over))
    if later is not None:
        later.start()
    return page


def with_stills(page, model, get, later):  # -> live_stills.Stills, or None: each panel of
    # the page an island showing the built static chapter's still until its session's panel
    # takes over (app/chapters/live_stills.py); none where there is no build
    slots = [s for s in model.panels if f"panel-{s}" in {r.name for r in page.roots}]
    built = live_stills.built(model.route, chrome.theme()) if slots else None
    if built is None:
        return None
    boxes = {id(r.obj): r.name.removeprefix("panel-") for r in page.roots if r.kind == "panel"}
    for slot in slots:
        page.around[f"panel-{slot}"] = live_stills.island_parts(slot, built,
                                                                PLACEHOLDER_HEIGHT)
    if later is not None:  # each panel ends with a sign that it has been drawn
        later.pending = [(box, live_stills.landed(build, boxes[id(box)])) if id(box) in boxes
                         else (box, build) for box, build in later.pending]
    else:
        for r in page.roots:
            if id(r.obj) in boxes:
                r.obj.append(live_stills.Landed(slot=boxes[id(r.obj)], height=0, width=0,
                                                margin=0))
    page.stills_html = live_stills.head_html(built, slots)
    stills = live_stills.Stills(get, slots)
    if later is None:  # built with the page
        stills.filled()
    else:
        later.then.append(stills.filled)
    return stills


def page(route="/", defer=True, shelf=None):  # a fresh live page of the chapter at `route`
    # (or the ledger's text page) per session
    from app.chapters import page_model

    return render(page_model.at(route), defer=defer, shelf=shelf)
