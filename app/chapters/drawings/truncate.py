"""The causal mask's identity, drawn: row i of a pass over n words against row i of a pass
over the first i + 1 words. With the mask on the two rows agree bit for bit, so one pass over
a sentence computes what a pass per prefix would; with it off, row i also weighs the later
words and the two differ. Both rows are the worked row (row.py) of the core's head; the
verdict is attention_core.head.truncate_check's.
"""

from app.chapters.drawings import row, svg
from app.panels.heatmap import inspected
from attention_core import worked_example


def draw(length, query, mask, divide, phase):  # -> (height, body, label); phase: prefill's
    # rows only (a decode pass has no earlier row to cut at)
    position = inspected(length, query, "prefill")
    check = worked_example.truncate(length, position, causal=mask, scaled=divide)
    height, body, label = svg.stacked([
        (f"A pass over all {length} words", row.draw(length, position, mask, divide, "prefill")),
        (f"A pass over the first {position + 1}",
         row.draw(position + 1, position, mask, divide, "prefill"))])
    y = height + svg.GAP
    verdict = (f"Row {position}: the same, bit for bit" if check.equal else
               f"Row {position} differs (by up to {check.largest_disagreement:.2g})")
    body += svg.text(4, y, verdict, bold=True, data={"step": "truncate",
                                                    "equal": str(check.equal).lower()})
    return y + 12, body, f"{label}; {verdict}"
