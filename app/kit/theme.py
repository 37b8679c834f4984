"""The page's theme where CSS variables cannot reach: a figure's canvas and inline code.

Colours come from the variables Panel's design sets (app/kit/chrome.py's stylesheets); a Bokeh
figure paints its glyph text and guides on a canvas, where they do not reach, so a panel asks
`ink()` for this session's colours once, when it is built. `CODE_CSS` styles inline code in
a Markdown pane in both themes.
"""

from dataclasses import dataclass

from app.kit import chrome, resources


@dataclass(frozen=True)
class Ink:
    """Colours a Bokeh figure paints on its canvas (glyph text, labels, reference lines),
    which the theme's CSS variables cannot reach. Each reads on its theme's plot background
    (white; Panel's dark theme paints plots #2b3035)."""

    text: str  # labels on bars and in the plot
    muted: str  # secondary labels ("unread", a guide's name)
    strong: str  # a line or arrow meant to stand out: black on white, near-white on dark
    rule: str  # grey guides and reference lines
    paper: str  # the plot's own background, behind a label that sits on lines
    warm: str  # vermillion-family text (Okabe-Ito #D55E00 is too faint for 11 px text)
    cool: str  # blue text and lines: Okabe-Ito blue on white, its sky blue on dark


LIGHT_INK = Ink(text="#222222", muted="#555555", strong="#000000", rule="#6b6b6b",
                paper="#ffffff", warm="#8a3b00", cool="#0072B2")
DARK_INK = Ink(text="#e0e0e0", muted="#b8b8b8", strong="#f2f2f2", rule="#a8a8a8",
               paper="#2b3035", warm="#ff9a5c", cool="#56B4E9")


def ink():  # -> the Ink for this session's theme; switching the theme reloads the page, so
    # a panel reads it once, when it is built
    return DARK_INK if chrome.theme() == "dark" else LIGHT_INK


# Inline code in a Markdown pane: Panel's own style is pale blue text on no background, hard
# to read on white. Plain text colour on the theme's surface colour reads in both themes.
CODE_CSS = resources.stylesheet("code.css")
