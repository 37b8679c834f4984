"""The article at "/": scaled dot-product attention, walked through with live panels.

The prose follows the lesson's sections: what attention is, the formula, one real head,
what the causal mask masks, where the n² lives, how much of the bill attention is, why the
√d_k, and how to check it on a real system. Each panel sits under the paragraph that
invites the reader to try it. All panels on the page share one query string, so each
URL key is carried by exactly one panel (see `url_plan`).

The machinery here is shared with the second chapter (`app.article_math`): a chapter is a
list of sections and a table of panels, and `render` turns it into a page. Every panel
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

from app import chrome, content, questions, url_state
from app.live_question import ChapterQuestions, LiveQuestion
from app.panels.cost import CostPanel
from app.panels.heatmap import HeadPanel
from app.panels.kernel_lab import KernelLabPanel
from app.panels.kernel_lab_link import KernelLabLink
from app.panels.ladder import LadderPanel
from app.panels.sqrt_dk import SqrtDkPanel
from app.states import is_static

log = logging.getLogger(__name__)

# the prose, titles included, lives in app/content/*.md (see app/content.py)
CHAPTER = content.load("attention.md")
TITLE = CHAPTER.title
MATH_TITLE = content.load("math.md").title

# the chapters link to each other by relative address, so a prefix the host adds survives
ROUTE = "./"
MATH_ROUTE = "math"

# Query keys the page itself uses; no panel may take them.
PAGE_KEYS = frozenset({"theme"})

# slot -> (Viewer class, builder). The class says which URL keys the slot carries before
# anything is built; the builder makes a fresh viewer from `get` (slot -> that slot's
# viewer, built on first use), so a follower can reach its leader in any order.
PANELS = {
    "head": (HeadPanel, lambda get: HeadPanel()),
    "ladder": (LadderPanel, lambda get: LadderPanel(head=get("head"), in_article=True)),
    "cost": (CostPanel, lambda get: CostPanel(in_article=True)),
    "sweep": (SqrtDkPanel, lambda get: SqrtDkPanel(in_article=True)),
    # the lab runs PyTorch on the server: a static page links to the live one instead
    "lab": (KernelLabPanel, lambda get: (KernelLabLink(KernelLabPanel, in_article=True, route="/")
                                         if is_static() else KernelLabPanel(in_article=True))),
}

# slot -> the slot whose controls it follows; a follower never carries those keys itself
FOLLOWS = {"ladder": "head"}

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


def url_plan(panels, follows=FOLLOWS, page_keys=PAGE_KEYS):
    # {slot: Viewer or Viewer class} -> {slot: {query key: parameter}}, no key twice: a name
    # two panels share goes plain to the first and as `<slot>_<name>` to the later one
    taken, plan = set(page_keys), {}
    for slot, viewer in panels.items():
        leader = plan.get(follows.get(slot), {})
        keys = {}
        for name in viewer.url_keys:
            if name in leader.values():  # the leader's URL already sets it
                continue
            key = name if name not in taken else f"{slot}_{name}"
            keys[key] = name
            taken.add(key)
        plan[slot] = keys
    return plan


def chapter_plan(panels=PANELS, follows=FOLLOWS):  # the URL plan from the classes alone
    return url_plan({slot: cls for slot, (cls, _) in panels.items()}, follows)


# The prose, in order, from app/content/attention.md. A string is a block of markdown;
# ("panel", slot) places a panel; ("link", text, route) a link to the other chapter;
# ("placeholder", title, text) a box for something still to come; ("question", Question) a
# question the reader answers first (app/questions.py); ("review",) the static page's list of
# questions to revisit. A slot with no panel in the table shows a placeholder instead.
SECTIONS = CHAPTER.sections


def chapter_href(route):  # the other chapter's address, keeping this session's theme
    return route + ("?theme=dark" if chrome.theme() == "dark" else "")


def chapter_link(text, route):  # a link to the other chapter, set in the reading column
    return pn.pane.HTML(f'<a class="ae-chapter-link" href="{html.escape(chapter_href(route))}">'
                        f"{html.escape(text)}</a>", sizing_mode="stretch_width",
                        stylesheets=[chrome.CSS, chrome.PROSE_CSS, LINK_CSS, chrome.link_css()])


def back_link(text, route):  # the same, small, at the left of the header row
    return pn.pane.HTML(f'<a class="ae-back-link" href="{html.escape(chapter_href(route))}">'
                        f"{html.escape(text)}</a>", align="center", margin=(5, 10),
                        stylesheets=[chrome.CSS, LINK_CSS, chrome.link_css()])


LINK_CSS = """
a { color: var(--primary-bg-color, #0072b5); text-underline-offset: 0.15em; }
.ae-chapter-link { display: inline-block; margin: 1.4em 0 0.4em; font-weight: 600;
                   font-size: 1.1rem; }
.ae-back-link { font-size: 0.95rem; }
"""


def show_state(get, plan, slot, params):  # "Show me" on a live page: the panel of `slot`
    # takes the chapter's query keys in params, as a deep link would set them
    keys = plan.get(slot, {})
    present = {keys[k]: [str(v)] for k, v in params.items() if k in keys}  # as a query has them
    url_state.restore(get(slot), list(present), present)


def question_pane(question):  # a content.Question -> its HTML, as the static chapter has it
    return pn.pane.HTML(questions.html(question, questions.answer(question)),
                        sizing_mode="stretch_width",
                        stylesheets=[chrome.CSS, chrome.PROSE_CSS, questions.LIVE_CSS,
                                     chrome.link_css()])


class Later:
    """Panels built once the page has appeared: a placeholder with a spinner now, the panel
    a moment later. All of a page's panels are built in one go, on the next turn of the
    server's loop after the browser reports the page ready, with the document held, so the
    model graph is walked once and they reach the browser in a single message. Each panel
    then takes its placeholder's spot in the page's column, exactly where an eager page puts
    it (one Column deeper and the decode bill's roofline never draws)."""

    def __init__(self):
        self.pending = []  # [(placeholder, build)]
        self.frame = None  # the page's column, which holds the placeholders

    def place(self, build):  # build: () -> [viewable]; -> the placeholder that stands in
        holder = pn.Column(sizing_mode="stretch_width", min_height=PLACEHOLDER_HEIGHT, margin=0,
                           loading=True)
        self.pending.append((holder, build))
        return holder

    def start(self, frame):  # once the page is built: ask for the fill when it is ready
        self.frame = frame
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

    def fill(self):  # build every pending panel in place of its placeholder
        pending, self.pending = self.pending, []
        built = {id(holder): build for holder, build in pending}
        with pn.io.hold(freeze=True):
            objects = []
            for obj in self.frame.objects:
                objects.extend(built[id(obj)]() if id(obj) in built else [obj])
            self.frame.objects = objects


def panel_block(slot, get, keys, later=None):  # -> the slot's URL note and viewer, or a
    # placeholder that `later` replaces with them once the page has appeared
    def build():
        try:
            viewer = get(slot)
            notes = chrome.with_url_state(viewer, keys)  # restores first, then mirrors
        except Exception:  # one broken panel must not keep the others from loading
            log.exception("the %s panel could not be built", slot)
            return [chrome.placeholder("This panel could not be loaded",
                                       "Something went wrong on the server while building it. "
                                       "The rest of the page works; reloading may help.")]
        return [notes, viewer]

    return build() if later is None else [later.place(build)]


def block(item, get, plan, later=None, asked=None):  # one SECTIONS item -> list of
    # viewables; asked: the live page's ChapterQuestions (else a question stands alone)
    if isinstance(item, str):
        return [chrome.prose(item)]
    if item[0] == "placeholder":
        return [chrome.placeholder(item[1], item[2])]
    if item[0] == "link":
        return [chapter_link(item[1], item[2])]
    if item[0] == "question":  # judged in Python on a live page; "Show me" sets the panel
        if is_static():
            return [question_pane(item[1])]
        if asked is not None:
            return [asked.question(item[1].id)]
        return [LiveQuestion(item[1], show=functools.partial(show_state, get, plan))]
    if item[0] == "review":  # the static page's review is questions.js's; the live one's
        return [asked.review] if asked is not None else []
    slot = item[1]
    if slot not in plan:
        return [chrome.placeholder("A panel is coming here", f"The {slot} panel is on its way.")]
    return panel_block(slot, get, plan[slot], later)


def header(link=None, asked=None):  # the top row: a link back to the other chapter (if
    # any), "Hide questions" (a live chapter with questions), the theme
    left = [back_link(*link)] if link else []
    ask = [asked.hide, asked.memory] if asked is not None else []
    return pn.Row(*left, pn.layout.HSpacer(), *ask, chrome.theme_button(),
                  sizing_mode="stretch_width", margin=0, stylesheets=[chrome.HEADER_CSS])


def questions_off():  # -> whether this session's address says ?questions=off
    args = pn.state.session_args if pn.state.curdoc is not None else {}
    value = (args.get("questions") or [b""])[0]
    return value.decode("utf-8", "replace").strip().lower() == "off"


def chapter_questions(sections, get, plan):  # -> the live page's ChapterQuestions, or None
    # (a static build, no questions, or ?questions=off: then none are shown)
    asked = [item[1] for item in sections if isinstance(item, tuple) and item[0] == "question"]
    if is_static() or not asked or questions_off():
        return None
    return ChapterQuestions(asked, show=functools.partial(show_state, get, plan))


def render(sections, panels, *, title, follows=FOLLOWS, back=None, defer=True, shelf=None):
    # a chapter -> its page. panels: {slot: (class, builder)}; back: (text, route) of a link
    # shown above the title; defer: build panels after the page appears; shelf: the Shelf
    # to build into (tests pass one to look at the viewers)
    shelf = Shelf(panels) if shelf is None else shelf
    plan = chapter_plan(panels, follows)
    later = Later() if defer and not is_static() else None  # a static page has every panel
    asked = chapter_questions(sections, shelf, plan)
    if asked is None and not is_static():  # ?questions=off: the prose alone
        sections = [item for item in sections
                    if not (isinstance(item, tuple) and item[0] in ("question", "review"))]
    objects = [header(back, asked)]
    for item in sections:
        objects.extend(block(item, shelf, plan, later, asked))
    frame = chrome.article_frame(*objects, title=title)
    if asked is not None:
        asked.attach(frame)
    if later is not None:
        later.start(frame)
    return frame


def page(defer=True, shelf=None):  # a fresh article per session
    return render(SECTIONS, PANELS, title=TITLE, defer=defer, shelf=shelf)
