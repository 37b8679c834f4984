"""A question on a live chapter: the reader predicts, then checks, then asks to be shown.

The static chapters judge a question in the browser (static/questions.js); a live chapter
is a Panel session, so here the same question is Panel widgets judged in Python, with the
same answer (`questions.py`, computed by `attention_core`) and the same bands. "Show me"
sets the panel's controls to the state that shows the answer, as a deep link would.
"""

import math
from typing import ClassVar

import panel as pn
import param
from panel.reactive import ReactiveHTML

from app.chapters import questions
from app.kit import chrome, resources
from app.kit.readout import readout_class

PICK = "Pick an answer…"
ASKED = "ae-asked-box"  # the class of every question's box and the review's


FeedbackReadout = readout_class(
    "FeedbackReadout", '<div class="ae-q-feedback" aria-live="polite"><p><b data-s="verdict">'
    '</b> <span data-s="yours"></span></p><p data-s="reply"></p><p data-s="answer"></p>'
    '<p data-s="why"></p></div>', module=__name__)


CSS = resources.stylesheet("live-question.css")


class LiveQuestion(pn.viewable.Viewer):
    """One question: its text, the answer widget, Check, Show me and the feedback."""

    answered = param.Parameter(default=None, doc="the reader's last checked answer")
    result = param.Selector(default=None, objects=[None, "right", "wrong"],
                            doc="whether the last checked answer was right")

    def __init__(self, question, show=None):  # show(slot, {query key: value}) or None
        super().__init__()
        self.question, self.answer = question, questions.answer(question)
        self._show = show
        q, ans = question, self.answer
        ask = questions.inline(questions.fill(q.ask, ans.values, q.id))
        self.plain_ask = questions.plain(questions.fill(q.ask, ans.values, q.id))
        # the id and tabindex let the review's links bring the reader back here
        self.legend = pn.pane.HTML(f'<p class="ae-q-legend" id="q-{q.id}" tabindex="-1">'
                                   f"<b>Predict</b> {ask}</p>",
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
        holes = ("verdict", "yours", "reply", "answer", "why")
        self.feedback = FeedbackReadout(dict.fromkeys(holes, ""),
                                        sizing_mode="stretch_width",
                                        stylesheets=[chrome.CSS, CSS])
        self.check.on_click(lambda event: self.judge(self.input.value))
        self.show_button.on_click(lambda event: self.show())
        hint = ([] if q.kind == "choice" else
                [pn.pane.HTML(f'<p class="ae-hint">{questions.band_text(q.band)}</p>',
                              stylesheets=[chrome.CSS])])
        self._layout = pn.Column(self.legend, self.input, *hint,
                                 pn.Row(self.check, self.show_button),
                                 self.feedback, css_classes=["ae-panel", ASKED],
                                 sizing_mode="stretch_width", max_width=700,
                                 align="center", stylesheets=[chrome.CSS])

    def is_right(self, value):  # an option key or a number -> whether it is the answer
        return questions.verdict(self.question, self.answer, value)[0]

    def judge(self, value):  # -> the feedback's texts, shown
        q, ans = self.question, self.answer
        if value in (None, "") or (isinstance(value, float) and not math.isfinite(value)):
            texts = {"verdict": "Pick an answer first." if q.kind == "choice"
                     else "Type a number first.", "yours": "", "reply": "", "answer": "",
                     "why": ""}
            self.feedback.show(texts)
            return texts
        right, reply = questions.verdict(q, ans, value)
        said = dict(q.replies).get(reply, "") if reply is not None else ""
        if q.kind == "choice":
            picked = next(text for text, key in self.options.items() if key == value)
            yours = "" if right else f"You picked: {picked}."
            correct = next(text for text, key in self.options.items() if key == ans.correct)
            solution = f"Answer: {correct}. Computed: {questions.plain(ans.shown)}."
        else:
            yours = f"You said {value:g}{' ' + q.unit if q.unit else ''}."
            solution = f"Answer: {questions.plain(ans.shown)}."
        texts = {"verdict": "Right." if right else "Not quite.", "yours": yours,
                 "reply": questions.plain(questions.fill(said, ans.values, q.id)),
                 "answer": solution, "why": questions.plain(questions.fill(q.why, ans.values,
                                                                           q.id))}
        self.feedback.show(texts)
        self.result = "right" if right else "wrong"
        self.answered = value
        return texts

    def restore(self, value):  # an answer this browser kept: shown as if checked again
        if self.question.kind == "choice":
            if value not in self.options.values():
                return  # the question changed since: ask again
        else:
            try:
                value = float(value)
            except (TypeError, ValueError):
                return
            if not math.isfinite(value):
                return
        self.input.value = value
        self.judge(value)

    def show(self):  # put the question's panel in the state that shows its answer
        if self._show is not None:
            self._show(self.question.show_slot, dict(self.question.show_params))

    def __panel__(self):
        return self._layout


# The live chapter's memory and review, in static/live_answers.js and static/live_review.js: a
# live page's questions are judged in the session, but what the reader answered is kept in
# this browser only, as the static chapters keep theirs. Each render script carries its file
# (a ReactiveHTML's scripts are all it brings into the page); the other scripts call it.
ANSWERS_JS = resources.inline_script("live_answers.js")
REVIEW_JS = resources.inline_script("live_review.js")


class AnswerMemory(ReactiveHTML):
    """The page's answers, kept in this browser: read once when the page is drawn (`kept`),
    written whenever the session changes them. ("Hide questions" is the page's own: it
    needs no session, static/live_page.js.)"""

    ids = param.List(default=[], constant=True, doc="the page's question ids")
    kept = param.Dict(default={}, doc="{id: answer} the browser kept, sent once when drawn")
    answers = param.Dict(default={}, doc="{id: answer} checked in this session: kept")

    _template = '<div id="box"></div>'
    _scripts: ClassVar[dict] = {
        "render": ANSWERS_JS + "AE.liveAnswers.recall(data)",
        "answers": "AE.liveAnswers.keepAnswers(data)",
    }


class LiveReview(ReactiveHTML):
    """The list at a live chapter's end: the questions not yet answered right, each a link
    back to its question (which sits in a pane of its own, so the link finds it by id
    through the page's shadow roots)."""

    items = param.List(default=[], doc="[[id, question, tag]] still to answer")
    status = param.String(default="")

    _template = '<div id="box"></div>'
    _scripts: ClassVar[dict] = {
        "render": REVIEW_JS + "AE.liveReview.draw(box, data)",
        "items": "AE.liveReview.draw(box, data)",
        "status": "AE.liveReview.draw(box, data)",
    }


REVIEW_CSS = resources.stylesheet("live-review.css")


class ChapterQuestions:
    """A live chapter's questions together: what the browser kept comes back into them when
    the page opens, every checked answer is kept, and the review follows them. (Their
    "Hide questions" switch is the page's, native: static/live_page.js.)"""

    def __init__(self, chapter_questions, show=None):  # [content.Question], show as above
        self.questions = [LiveQuestion(q, show=show) for q in chapter_questions]
        self.by_id = {live.question.id: live for live in self.questions}
        self.memory = AnswerMemory(ids=list(self.by_id), height=0, width=0, margin=0)
        self.review = LiveReview(sizing_mode="stretch_width", align="center",
                                 css_classes=[ASKED],
                                 stylesheets=[chrome.CSS, chrome.PROSE_CSS, chrome.link_css(),
                                              REVIEW_CSS])
        for live in self.questions:
            live.param.watch(self._answered, "answered")
        self.memory.param.watch(self._kept, "kept")
        self.update_review()

    def _kept(self, event):  # the browser's answers, once: judged as if checked again
        pn.state.onload(lambda: self.restore(event.new))

    def restore(self, kept):  # {id: answer} -> each shown as if checked again
        for qid, answer in kept.items():
            live = self.by_id.get(qid)
            if live is not None and live.answered is None:
                live.restore(answer)

    def _answered(self, event):
        qid = event.obj.question.id
        if self.memory.answers.get(qid) != event.new:
            self.memory.answers = {**self.memory.answers, qid: event.new}
        self.update_review()

    def update_review(self):  # the review lists exactly the questions not answered right
        items = []
        for live in self.questions:
            if live.result == "right":
                continue
            tag = " (answered wrongly)" if live.result == "wrong" else " (not answered yet)"
            items.append([live.question.id, live.plain_ask, tag])
        total = len(self.questions)
        self.review.status = (f"You have answered all {total} questions of this chapter right."
                              if not items else
                              f"{len(items)} of {total} questions still to answer, or to "
                              "answer again:")
        self.review.items = items

    def question(self, qid):  # -> the LiveQuestion of an id
        return self.by_id[qid]
