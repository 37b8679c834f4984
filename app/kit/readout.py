"""The one readout mechanism: text drawn once from an HTML template, then only its holes' text.

Every panel's changing text is a `Readout` (app/kit/chrome.py re-exports it): a live session
sends the holes whose text changed; a static page's switcher sets the same holes. A panel
makes one class per template, at module level, in one line:

    StatusReadout = readout_class("StatusReadout", STATUS, module=__name__)
"""

import html
import json
import re

import param
from panel.reactive import ReactiveHTML

from app.kit import resources

CSS_NOTE = resources.stylesheet("url-note.css")
# a note folded away in a panel (chrome.folded, a readout's <details>): closed on screen,
# open in print
FOLD_CSS = resources.stylesheet("fold.css")
READOUT_JS = resources.inline_script("readout.js")

HOLE = re.compile(r'data-s="([\w-]+)"')
HOLE_ELEMENT = re.compile(r'(<(\w+)[^>]*?\sdata-s="([\w-]+)"[^>]*>)(</\2>)')


class Readout(ReactiveHTML):
    """Text drawn once from an HTML template; afterwards only the text of its holes changes.

    Make one with `readout_class(name, template, module=__name__)`, once per template, at
    module level.
    Every element `<tag data-s="NAME"></tag>` in a subclass's `template` is a hole: empty
    in the template, its text is `values[NAME]`. The template and the first values (`base`)
    reach the browser once, with the page. A change sends `patch`: the holes whose text now
    differs from `base`; the browser sets the text of each hole that differs from what is
    shown, in the hole's one text node. So a change sends a few short strings and changes a
    few texts: no HTML is parsed and no stylesheet applied again. `patch` is relative to
    `base`, not to the previous change, so a view drawn later (a re-render) shows the same as
    one that saw every change; it never grows past one copy of the values.

    A ReactiveHTML, not a JSComponent: the server's Content-Security-Policy allows the
    'unsafe-eval' these scripts need, not the blob: module a JSComponent loads. The
    template travels inside the class's render script, not as a parameter (Panel strips
    the attributes, class, aria-live and data-s, from HTML in string parameters) nor as
    Panel's `_template` (parsed again for every session, then rendered through a virtual
    DOM in the browser); the script sets it as innerHTML once.
    """

    base = param.Dict(default={}, constant=True, doc="each hole's text when first drawn")
    patch = param.Dict(default={}, doc="the holes whose text differs from base: their text")

    template = ""  # subclasses: the HTML, every hole empty (their scripts follow from it)

    _template = '<div id="box"></div>'

    @staticmethod
    def scripts(template):  # -> the `_scripts` of a subclass drawing `template`: calls into
        # static/readout.js, which the render script carries (the template goes as JSON)
        draw = f"AE.readout.render(box, state, data, {json.dumps(template)})"
        return {"render": READOUT_JS + draw, "patch": "AE.readout.patch(state, data)"}

    def __init_subclass__(cls, **kwargs):  # a subclass's template -> its class's scripts
        super().__init_subclass__(**kwargs)
        if "template" in cls.__dict__:
            cls._scripts = Readout.scripts(cls.template)

    def __init__(self, values, **params):
        holes = HOLE.findall(self.template)
        if len(HOLE_ELEMENT.findall(self.template)) != len(holes) or set(holes) != set(values):
            raise ValueError(f"the template's empty holes {holes} must be the values' keys "
                             f"{sorted(values)}")
        super().__init__(base=dict(values), **params)
        self.values = dict(values)

    def show(self, values):  # {hole: text}, some or all: send the holes that differ from base
        self.values = {**self.values, **values}
        patch = {k: v for k, v in self.values.items() if v != self.base[k]}
        if patch != self.patch:
            self.patch = patch

    def filled(self):  # -> the template with each hole's current text, as the page shows it
        def fill(m):
            return m.group(1) + html.escape(self.values[m.group(3)], quote=False) + m.group(4)

        return HOLE_ELEMENT.sub(fill, self.template)

    def text(self):  # -> what a reader sees, without tags
        return html.unescape(re.sub(r"<[^>]+>", "", self.filled()))


def hole(name, tag="span", **attrs):  # -> an empty hole element for a Readout template
    extra = "".join(f' {k.rstrip("_")}="{v}"' for k, v in attrs.items())
    return f'<{tag}{extra} data-s="{name}"></{tag}>'


def scroll_box(label, class_="ae-scroll"):  # -> the opening tag of a box that scrolls sideways
    # (a wide table on a phone): in the Tab order and named from its first render, so a
    # keyboard can scroll it and a screen reader says what it holds
    return (f'<div class="{class_}" tabindex="0" role="region" '
            f'aria-label="{html.escape(label)}">')


def readout_class(name, template, *, module):  # -> the Readout subclass `name` that draws
    # `template`. Panel reads a ReactiveHTML's scripts from its class, so each template needs
    # a class of its own; make it once, at module level (creating a ReactiveHTML class is not
    # cheap). `name` also names the page's Bokeh model (StatusReadout1, ...); `module` (the
    # caller's `__name__`) is the class's, so it reads as defined where its template is.
    return type(name, (Readout,), {"template": template, "__module__": module})


# where a static page says how it repaired its deep link (the switcher fills it)
UrlNote = readout_class("UrlNote", '<div class="ae-note" role="status" data-s="url"></div>',
                        module=__name__)


def url_note():  # -> an empty note that a static page's switcher fills
    return UrlNote({"url": ""}, sizing_mode="stretch_width", stylesheets=[CSS_NOTE], margin=(0, 10))


