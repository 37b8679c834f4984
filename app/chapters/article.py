"""The article at "/": scaled dot-product attention, walked through with live panels.

The prose follows the lesson's sections: what attention is, the formula, one real head,
what the causal mask masks, where the n² lives, how much of the bill attention is, why the
√d_k, and how to check it on a real system. Each panel sits under the paragraph that
invites the reader to try it. All panels on the page share one query string, so each
URL key is carried by exactly one panel (see `url_state.url_plan`).

The machinery here is shared with the second chapter (`app.chapters.article_math`): a chapter is a
list of sections and a table of panels, and `render` turns it into a live page
(`live_chapter.LiveChapter`): its text as HTML in the page itself, the header's buttons,
each question, the review and each panel a root of the session's document. Every panel
sits below the first screenful of prose, so by default each is built after the page has
appeared (`Later`, on `pn.state.onload`, the hook under Panel's own `defer_load`): opening
the page costs the prose alone (a GET of "/" fell from about 450-650 ms to under 60 ms of
server time here), and the panels arrive over the open websocket a moment later, each
restoring its URL state as it lands. A per-panel `pn.panel(fn, defer_load=True)` was tried
first: it nests each panel one layout deeper, where the decode bill's roofline never draws,
and it sends one message per panel, which the browser took about a second longer to lay out.
"""

import functools
import html
import logging

import panel as pn
from panel.io.state import set_curdoc

from app.chapters import apparatus, content
from app.chapters.live_question import ChapterQuestions
from app.kit import chrome, registry, url_state

log = logging.getLogger(__name__)

# the prose, titles included, lives in app/chapters/content/*.md (see app/chapters/content.py)
CHAPTER_FILE = "attention.md"
CHAPTER = content.load(CHAPTER_FILE)
TITLE = CHAPTER.title
MATH_TITLE = content.load("math.md").title

# the chapters link to each other by relative address, so a prefix the host adds survives
ROUTE = "./"
MATH_ROUTE = "math"

# slot -> registry.ChapterPanel (class, builder), from the one table of panels (app/kit/registry.py)
PANELS = registry.chapter_panels(CHAPTER_FILE)

# slot -> the slot whose controls it follows; a follower never carries those keys itself
FOLLOWS = registry.follows(CHAPTER_FILE)

# a deferred panel's box before it lands: tall enough that the page barely moves when it does
PLACEHOLDER_HEIGHT = 360


class Shelf:
    """One session's viewers: each slot is built on first request, then always the same."""

    def __init__(self, panels):  # {slot: (class, builder)}
        self._panels = panels
        self.built = {}

    def __call__(self, slot):  # -> the slot's viewer
        if slot not in self.built:
            self.built[slot] = self._panels[slot][1](self)
        return self.built[slot]


def build_panels(panels=PANELS):  # -> {slot: Viewer}, one fresh set, built now, in page order
    shelf = Shelf(panels)
    return {slot: shelf(slot) for slot in panels}


# The prose, in order, from app/chapters/content/attention.md: blocks of Markdown and the
# sections its markers place (content.py). A slot with no panel in the table shows a
# placeholder instead.
SECTIONS = CHAPTER.sections


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


def panel_block(slot, get, keys):  # -> the slot's URL note and viewer
    try:
        viewer = get(slot)
        notes = url_state.with_url_state(viewer, keys)  # restores first, then mirrors
    except Exception:  # one broken panel must not keep the others from loading
        log.exception("the %s panel could not be built", slot)
        return [chrome.placeholder("This panel could not be loaded",
                                   "Something went wrong on the server while building it. "
                                   "The rest of the page works; reloading may help.")]
    return [notes, viewer]


def add_part(page, item, get, plan, notes, later=None, asked=None):
    # one SECTIONS item -> onto the LiveChapter: text as HTML, a question, the review or a
    # panel as a root. asked: the page's ChapterQuestions, or None when the address turned
    # them off (each still has its root, empty and hidden: every session, the same roots);
    # notes: the chapter's apparatus.Apparatus (its terms and references)
    match item:
        case str():
            page.add_html(notes.prose(item))
        case content.Glossary():
            page.add_html(notes.glossary_html())
        case content.References():
            page.add_html(notes.references_html())
        case content.Placeholder(title, text):
            page.add_html(chrome.placeholder_html(title, text))
        case content.ChapterLink(text, route):
            page.add_html(chapter_link(text, route))
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


def header(asked=None):  # the header's buttons: "Hide questions" (a live chapter with
    # questions) and the theme; and the component that names the page's controls
    ask = [asked.hide, asked.memory] if asked is not None else []
    return pn.Column(chrome.a11y(), pn.Row(*ask, chrome.theme_button(), margin=0), margin=0)


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


def render(sections, panels, *, title, follows=FOLLOWS, back=None, defer=True, shelf=None):
    # a chapter -> its live page (app/chapters/live_chapter.py). panels: {slot: (class, builder)};
    # back: (text, route) of a link shown above the title; defer: build panels after the
    # page appears; shelf: the Shelf to build into (tests pass one to look at the viewers)
    from app.chapters.live_chapter import LiveChapter

    shelf = Shelf(panels) if shelf is None else shelf
    plan = url_state.chapter_plan(panels, follows)
    later = Later() if defer else None
    asked = chapter_questions(sections, shelf, plan)
    notes = apparatus.Apparatus(sections)
    chrome.apply_figure_theme()
    page = LiveChapter(title=title, theme=chrome.theme(),
                       description=content.description(content.Chapter(title, list(sections))))
    page.add_html('<header class="ae-top ae-live-top">'
                  + (back_link(*back) if back else ""))
    page.add_root("header", "header", header(asked))
    page.add_html("</header>")
    page.add_html('<main class="ae-article" id="main">')
    for item in sections:
        add_part(page, item, shelf, plan, notes, later, asked)
    page.add_html("</main>")
    if later is not None:
        later.start()
    return page


def page(defer=True, shelf=None):  # a fresh article per session
    return render(SECTIONS, PANELS, title=TITLE, defer=defer, shelf=shelf)
