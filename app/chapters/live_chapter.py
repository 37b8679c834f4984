"""A live chapter's page, text first: its prose is HTML in the page, each widget part a root.

The server sends the chapter's text inside the page's HTML (rendered from the same content
file, by the same Markdown renderer and stylesheet as the static chapter), so a phone paints
it before any script has run; Bokeh's and Panel's scripts come at the end of the body. The
parts that need the session (the header's buttons, each question, the review, each panel)
are roots of the session's document, each placed where the text has it through Bokeh's
public document template (`Document.template`, `{{ embed(roots[name]) }}`) extending Panel's
own page template.

A reused first paint (Panel's session cache) is the cached session's HTML with the new
session's roots, which Bokeh's client matches to the page's root elements by position. So
every session of a chapter has the same roots in the same order: a part the address turns
off (`?questions=off`) is an empty hidden root, never a missing one.
"""

import dataclasses
import functools
import html

import jinja2
import panel as pn
from bokeh.models import LayoutDOM

from app.kit import chrome, resources

# extends Panel's page template (its head: icons, Bokeh's and Panel's stylesheets); the
# scripts move from the head to the end of the body, after the text
TEMPLATE = jinja2.Template("""{% extends ae_base %}
{% from macros import embed %}
{% block postamble %}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="{{ ae_description }}">
<meta name="color-scheme" content="{{ ae_color_scheme }}">
<style>{{ ae_css }}</style>
{% endblock %}
{% block js_resources %}{% endblock %}
{% block body %}
<body class="ae-page ae-live-page ae-theme-{{ ae_theme }}">
{% for kind, value in ae_parts %}{% if kind == "html" %}{{ value }}
{% else %}<div class="ae-live-{{ kind }}">{{ embed(roots[value]) }}</div>
{% endif %}{% endfor %}
{% for root in roots %}{% if root.name not in ae_placed %}{{ embed(root) }}{% endif %}{% endfor %}
{{ bokeh_js }}
{{ plot_script }}
</body>
{% endblock %}
""")

# the roots' boxes keep about their drawn height before Bokeh draws them: little moves then
LIVE_CSS = resources.stylesheet("live-chapter.css")


@functools.cache
def stylesheet():  # -> the static chapters' stylesheet and the live page's few rules, minified
    chapter_css = resources.static_file("chapter.css").read_text(encoding="utf-8")
    return resources.minify_css(chapter_css + LIVE_CSS)


@dataclasses.dataclass
class Root:
    kind: str  # "header", "question", "review" or "panel": its box's class, ae-live-<kind>
    name: str  # the root's name in the document and the template
    obj: object  # the viewable drawn there


class LiveChapter(pn.viewable.Viewer):
    """A live chapter: HTML text and named roots, in page order. `server_doc` puts it into a
    session's document; shown any other way (a notebook) it is one column of the same."""

    def __init__(self, *, title, description, theme="default"):
        super().__init__()
        self.title, self.description, self.theme = title, description, theme
        self.parts = []  # str (HTML) or Root

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
            ae_parts=[("html", p) if isinstance(p, str) else (p.kind, p.name)
                      for p in self.parts],
            ae_placed=[r.name for r in self.roots])
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
