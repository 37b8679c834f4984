"""A question on a live chapter: the reader predicts, then checks, then asks to be shown.

The static chapters judge a question in the browser (app/static/questions.js); a live chapter
is a Panel session, so here the same question is Panel widgets judged in Python, with the
same answer (`app/questions.py`, computed by `attention_core`) and the same bands. "Show me"
sets the panel's controls to the state that shows the answer, as a deep link would.
"""

import math

import panel as pn
import param

from app import chrome, questions
from app.readout import Readout


def within(value, correct, band):  # the bands questions.js judges a number by, in Python
    kind, amount = band
    if kind == "order":
        if value <= 0 or correct <= 0:
            return value == correct
        return value / correct <= amount and correct / value <= amount
    slack = 1e-9 * max(1.0, abs(correct))  # a typed 1.55 is 1.55, not 1.5500...1
    if kind == "relative":
        return abs(value - correct) <= amount * abs(correct) + slack
    return abs(value - correct) <= amount + slack


PICK = "Pick an answer…"


class FeedbackReadout(Readout):
    template = ('<div class="ae-q-feedback" aria-live="polite"><p><b data-s="verdict"></b> '
                '<span data-s="yours"></span></p><p data-s="answer"></p><p data-s="why"></p>'
                "</div>")


CSS = """
.ae-q-feedback p:empty { display: none; }
.ae-q-feedback { border-left: 4px solid currentColor; padding-left: 0.8em; }
.ae-q-feedback:has(b:empty) { display: none; }
"""


class LiveQuestion(pn.viewable.Viewer):
    """One question: its text, the answer widget, Check, Show me and the feedback."""

    answered = param.Parameter(default=None, doc="the reader's last checked answer")

    def __init__(self, question, show=None):  # show(slot, {query key: value}) or None
        super().__init__()
        self.question, self.answer = question, questions.answer(question)
        self._show = show
        q, ans = question, self.answer
        ask = questions.inline(questions.fill(q.ask, ans.values, q.id))
        self.legend = pn.pane.HTML(f'<p class="ae-q-legend"><b>Predict</b> {ask}</p>',
                                   sizing_mode="stretch_width",
                                   stylesheets=[chrome.CSS, chrome.PROSE_CSS])
        if q.kind == "choice":
            self.options = {questions.plain(questions.fill(text, ans.values, q.id)): key
                            for key, text in q.options}
            # a list that starts on no answer: Panel's radio groups always hold one
            self.input = pn.widgets.Select(options={PICK: "", **self.options}, value="",
                                           label="Your answer", max_width=420,
                                           sizing_mode="stretch_width")
        else:
            label = "Your answer" + (f" ({q.unit})" if q.unit else "")
            self.input = pn.widgets.FloatInput(label=label, value=None, width=220)
        self.check = pn.widgets.Button(label="Check", width=100)
        self.show_button = pn.widgets.Button(label="Show me", width=100,
                                             disabled=show is None)
        self.feedback = FeedbackReadout({"verdict": "", "yours": "", "answer": "", "why": ""},
                                        sizing_mode="stretch_width",
                                        stylesheets=[chrome.CSS, CSS])
        self.check.on_click(lambda event: self.judge(self.input.value))
        self.show_button.on_click(lambda event: self.show())
        hint = ([] if q.kind == "choice" else
                [pn.pane.HTML(f'<p class="ae-hint">{questions.band_text(q.band)}</p>',
                              stylesheets=[chrome.CSS])])
        self._layout = pn.Column(self.legend, self.input, *hint,
                                 pn.Row(self.check, self.show_button),
                                 self.feedback, css_classes=["ae-panel"],
                                 sizing_mode="stretch_width", max_width=700,
                                 align="center", stylesheets=[chrome.CSS])

    def is_right(self, value):  # an option key or a number -> whether it is the answer
        if self.question.kind == "choice":
            return value == self.answer.correct
        return within(float(value), float(self.answer.correct), self.question.band)

    def judge(self, value):  # -> the feedback's texts, shown
        q, ans = self.question, self.answer
        if value in (None, "") or (isinstance(value, float) and not math.isfinite(value)):
            texts = {"verdict": "Pick an answer first." if q.kind == "choice"
                     else "Type a number first.", "yours": "", "answer": "", "why": ""}
            self.feedback.show(texts)
            return texts
        right = self.is_right(value)
        if q.kind == "choice":
            picked = next(text for text, key in self.options.items() if key == value)
            yours = "" if right else f"You picked: {picked}."
            correct = next(text for text, key in self.options.items() if key == ans.correct)
            solution = f"Answer: {correct}. Computed: {questions.plain(ans.shown)}."
        else:
            yours = f"You said {value:g}{' ' + q.unit if q.unit else ''}."
            solution = f"Answer: {questions.plain(ans.shown)}."
        texts = {"verdict": "Right." if right else "Not quite.", "yours": yours,
                 "answer": solution, "why": questions.plain(questions.fill(q.why, ans.values,
                                                                           q.id))}
        self.feedback.show(texts)
        self.answered = value
        return texts

    def show(self):  # put the question's panel in the state that shows its answer
        if self._show is not None:
            self._show(self.question.show_slot, dict(self.question.show_params))

    def __panel__(self):
        return self._layout
