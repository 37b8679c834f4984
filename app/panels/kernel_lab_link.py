"""The kernel lab on a static page: a link that opens it live, in the page's state."""

import functools

import panel as pn
import param

from app.kit import chrome, registry
from app.kit.theme import CODE_CSS
from app.panels.kernel_lab_text import INTRO, STYLE


class KernelLabLink(pn.viewable.Viewer):
    """The lab on a static page: it runs PyTorch on the server, so it is always live; a
    reader who never opens it costs nothing. One click opens it, in the page's state."""

    def __init__(self, lab, in_chapter=False, route="/kernel-lab"):
        # lab: the live panel's class (KernelLabPanel): the link takes its URL keys and their
        # defaults, so a chapter's URL plan is the same on a static page and a live one
        super().__init__()
        self.url_keys = lab.url_keys
        for name in self.url_keys:  # the parameters, so a chapter's URL plan can name them
            self.param.add_parameter(name, param.Parameter(lab.param[name].default))
        md = functools.partial(pn.pane.Markdown, sizing_mode="stretch_width",
                               disable_anchors=True, stylesheets=[CODE_CSS])
        heading = [] if in_chapter else [
            chrome.heading(registry.title_of(lab)), md(INTRO)]
        self._layout = pn.Column(
            *heading,
            md("The kernel lab runs PyTorch's scaled dot-product attention on the explorable's "
               "server: which kernel it picks, how far it lands from a float64 reference, its "
               "time and peak memory, and a prefill sweep. That needs Python, so it opens on "
               "the live explorable."),
            chrome.live_button(route, "Open the kernel lab (live)"),
            css_classes=["ae-panel"], sizing_mode="stretch_width", stylesheets=[STYLE])

    def __panel__(self):
        return self._layout
