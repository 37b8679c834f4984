"""The drawing kit: SVG elements in the stills' visual language (app/chapters/stills.py).

A 320-unit-wide view box, 12-unit type (12 px on a phone, where the figure is about 320 px
wide), and the theme's ink, muted and paper colours as classes of chapter.css (`.ae-chart`):
`k` a stroke in ink, `m` a stroke in muted, `q` a muted fill, `p` a paper fill, `c`/`e`
centred/end-anchored text, `b` bold. Colours that mean a kind of matrix are Okabe-Ito hexes.
A figure that is numbers to copy is an HTML `table` instead.
"""

from app.chapters.stills import CHAR, LINE, W, compact, esc, num

__all__ = ["CHAR", "LINE", "W", "arrow", "box", "figure", "line", "stacked", "table", "text",
           "text_width"]

TEXT_SHIFT = 4  # a 12-unit line's middle sits this far above its baseline


def classes(*names):
    names = [n for n in names if n]
    return f' class="{" ".join(names)}"' if names else ""


def text(x, y, body, *, anchor="start", bold=False, muted=False, data=None):
    # one line of 12-unit type whose middle is at y
    cls = classes({"middle": "c", "end": "e"}.get(anchor, ""), "b" if bold else "",
                  "q" if muted else "")
    extra = "".join(f' data-{k}="{esc(v)}"' for k, v in (data or {}).items())
    return f'<text x="{num(x)}" y="{num(y + TEXT_SHIFT)}"{cls}{extra}>{esc(body)}</text>'


def text_width(body):  # -> about how wide a line of 12-unit type is
    return len(str(body)) * CHAR


def line(x1, y1, x2, y2, *, muted=False, dash=None):
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<path d="M{num(x1)} {num(y1)}L{num(x2)} {num(y2)}"'
            f'{classes("m" if muted else "k")} fill="none"{d}/>')


def arrow(x1, y, x2, *, muted=True):  # a short rightward arrow along y
    head = f"M{num(x2 - 5)} {num(y - 4)}L{num(x2)} {num(y)}L{num(x2 - 5)} {num(y + 4)}"
    return (f'<path d="M{num(x1)} {num(y)}L{num(x2)} {num(y)}{head}"'
            f'{classes("m" if muted else "k")} fill="none"/>')


def box(x, y, w, h, *, colour=None, opacity=None, outline=True, paper=False, dash=None,
        data=None):  # paper: filled with the page's background (a cell left blank)
    fill = f' fill="{colour}"' if colour else ("" if paper else ' fill="none"')
    alpha = f' fill-opacity="{opacity}"' if opacity is not None else ""
    d = f' stroke-dasharray="{dash}"' if dash else ""
    extra = "".join(f' data-{k}="{esc(v)}"' for k, v in (data or {}).items())
    return (f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}"{fill}{alpha}'
            f'{classes("k" if outline else "n", "p" if paper else "")}{d}{extra}/>')


GAP = 14  # between two drawings stacked one under the other


def stacked(parts):  # [(heading, (height, body, label))] -> (height, body, label): the
    # drawings one under the other, each under its heading in bold
    out, labels, y = [], [], 0.0
    for heading, (height, body, label) in parts:
        out.append(text(4, y + 8, heading, bold=True)
                   + f'<g transform="translate(0 {y + 20:g})">{body}</g>')
        labels.append(f"{heading}: {label}")
        y += 20 + height + GAP
    return y - GAP, "".join(out), "; ".join(labels)


def table(kind, caption, heads, rows):  # -> a figure's <table>, which a reader can select and
    # copy: rows are (the row's heading, [each cell's HTML]); the caption and headings are text
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    body = "".join(f'<tr><th scope="row">{esc(name)}</th>'
                   + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"
                   for name, cells in rows)
    return (f'<table class="ae-model-table" data-table="{esc(kind)}"><caption>{esc(caption)}'
            f"</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def figure(height, body, label, *, width=W, kind=""):
    # -> the <svg>: an image whose accessible name says what it shows in words
    data = f' data-drawing="{esc(kind)}"' if kind else ""
    return (f'<svg class="ae-chart ae-drawing" viewBox="0 0 {num(width)} {num(height)}" '
            f'role="img" aria-label="{esc(label)}"{data}>{compact(body)}</svg>')
