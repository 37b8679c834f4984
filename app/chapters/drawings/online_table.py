"""Online softmax as a table: a row per block of the running max, the rescale and the sum.

Read the scores a block at a time and keep two numbers, the running max m and the running
sum ℓ of e^(s − m). A block whose max beats m raises it, and the sum so far is rescaled by
e^(m_old − m_new) before the block's own terms, Σ e^(s − m) over the block, are added. The
last line sums the whole row in one pass: the same ℓ, though no block ever saw the row.
Every number is the core's (attention_core.online_softmax, through the online panel's
online_numbers), formatted as the panel formats its walk.
"""

from app.chapters.drawings import svg
from app.panels.online_softmax import num, online_numbers

HEADS = ("max", "m", "rescale", "block Σ", "ℓ")
STEPS = ("max", "m", "rescale", "block", "sum")
ROW_H = 16
PAD = 12  # between two columns: room, too, for a bold rescale wider than 7 units a character
NARROWEST = svg.text_width("max")  # a column of one-digit numbers still reads as a column


def edges(texts):  # [{step: text}] -> (the number columns' right edges, the scores' width)
    # each number column as wide as its widest text, from the right edge leftward; the
    # scores take the room left, wrapped to it
    right, out = svg.W - 4, []
    for head, step in zip(reversed(HEADS), reversed(STEPS)):
        out.insert(0, right)
        right -= max(NARROWEST, *(svg.text_width(t) for t in [head] + [row[step] for row in texts]))
        right -= PAD
    return tuple(out), right - 4


def wrapped(scores, width):  # -> the block's scores as lines that fit their column
    lines, line = [], ""
    for text in (num(x) for x in scores):
        joined = f"{line}, {text}" if line else text
        if line and svg.text_width(joined + ",") > width:
            lines.append(line + ",")
            joined = text
        line = joined
    return lines + [line]


def cell_texts(b):  # one BlockStep -> {step: text}
    # the first block has no sum to rescale: the core's factor e^(−∞) = 0 multiplies nothing
    return {"max": num(max(b.block)), "m": num(b.new_max),
            "rescale": "—" if b.index == 0 else num(b.rescale),
            "block": num(b.block_sum), "sum": num(b.new_sum)}


def draw(scores, block):  # -> (height, body, label)
    r = online_numbers(scores, block, 0).result
    texts = [cell_texts(b) for b in r.steps]
    at, room = edges(texts)
    out = [svg.text(4, 8, f"Blocks of {block}: the running max m and sum ℓ", bold=True)]
    y = 30
    out.append(svg.text(4, y, "scores", muted=True))
    for edge, head in zip(at, HEADS):
        out.append(svg.text(edge, y, head, anchor="end", muted=True))
    out.append(svg.line(0, y + 9, svg.W, y + 9, muted=True))
    y += 20
    for b, row in zip(r.steps, texts):
        lines = wrapped(b.block, room)
        for k, line in enumerate(lines):
            out.append(svg.text(4, y + k * ROW_H, line,
                                data={"step": "scores", "block": b.index, "line": k}))
        raised = b.index > 0 and b.new_max > b.old_max  # the rows where the rescale matters
        for edge, step in zip(at, STEPS):
            out.append(svg.text(edge, y, row[step], anchor="end",
                                bold=step == "rescale" and raised,
                                data={"step": step, "block": b.index}))
        y += ROW_H * len(lines)
    y -= 6
    out.append(svg.line(0, y, svg.W, y, muted=True))
    y += 14
    for note in ("rescale = e^(m before − m now)", "block Σ = Σ e^(s − m) over the block",
                 "ℓ = ℓ before × rescale + block Σ"):
        out.append(svg.text(4, y, note, muted=True))
        y += ROW_H
    y += 4
    # the whole row summed at once, under the running sum it equals
    out.append(svg.text(4, y, f"One pass over the row, Σ e^(s − {num(r.running_max)}) =",
                        bold=True))
    out.append(svg.text(at[-1], y, num(r.full_sum), anchor="end", bold=True,
                        data={"step": "full"}))
    row = ", ".join(num(x) for b in r.steps for x in b.block)
    label = (f"Online softmax of {row} in blocks of {block}: "
             + "; ".join(f"block {b.index + 1}, m {num(b.new_max)}, ℓ {num(b.new_sum)}"
                         for b in r.steps)
             + f"; the whole row at once: {num(r.full_sum)}")
    return y + 12, "".join(out), label
