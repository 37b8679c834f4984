"""A question on a live chapter (app/chapters/live_question.py): judged in Python with the
answer app/chapters/questions.py computes, by the bands the static page's script uses, and
"Show me" puts the panel in the state its question names."""

import math

import pytest

from app.chapters import content, live_chapter, page_model, questions
from app.chapters.live_question import ASKED, ChapterQuestions, LiveQuestion
from app.chapters.questions import within
from app.kit import registry, url_state

CHAPTERS = tuple(page_model.assemble(c) for c in registry.CHAPTERS)


def every_question():
    for chapter in CHAPTERS:
        for item in chapter.sections:
            if isinstance(item, content.Question):
                yield chapter, item


@pytest.mark.parametrize(("value", "correct", "band", "right"), [
    (28, 28, ("absolute", 0), True), (27, 28, ("absolute", 0), False),
    (1.55, 1.553, ("absolute", 0.02), True), (1.6, 1.553, ("absolute", 0.02), False),
    (120_000, 122_532, ("relative", 0.25), True), (60_000, 122_532, ("relative", 0.25), False),
    (10, 4.0, ("order", 3), True), (13, 4.0, ("order", 3), False), (0, 4.0, ("order", 3), False),
])
def test_a_number_is_judged_by_its_band(value, correct, band, right):
    assert within(value, correct, band) is right


@pytest.mark.parametrize(("chapter", "question"), list(every_question()),
                         ids=lambda v: getattr(v, "id", ""))
def test_the_computed_answer_is_right_and_a_wrong_one_is_not(chapter, question):
    live = LiveQuestion(question)
    answer = questions.answer(question).correct
    assert live.judge(answer)["verdict"] == "Right."
    if question.kind == "choice":
        wrong = next(key for key, _ in question.options if key != answer)
    else:
        wrong = float(answer) * 100 + 1000  # far outside every band
    texts = live.judge(wrong)
    assert texts["verdict"] == "Not quite."
    assert texts["answer"].startswith("Answer:") and texts["why"]
    said = questions.replies(question, questions.answer(question))
    if question.kind == "choice":  # every wrong option: its own reply, as the static page
        for key, _ in question.options:
            if key != answer:
                assert live.judge(key)["reply"] == questions.plain(said[key]), key
    else:
        assert texts["reply"] == questions.plain(said["high"])
        assert live.judge(float(answer) / 1000 - 1)["reply"] == questions.plain(said["low"])
        for name, slip in questions.answer(question).slips.items():
            assert live.judge(slip)["reply"] == questions.plain(said[name]), name
    assert live.judge(None)["verdict"].endswith("first.")
    assert question.kind == "choice" or math.isfinite(float(answer))


@pytest.mark.parametrize(("chapter", "question"), list(every_question()),
                         ids=lambda v: getattr(v, "id", ""))
def test_show_me_sets_the_panel_as_its_query_says(chapter, question):
    shelf = live_chapter.Shelf(chapter.panels)
    plan = url_state.chapter_plan(chapter.panels, chapter.follows)
    live = LiveQuestion(question, show=lambda slot, params: live_chapter.show_state(
        shelf, plan, slot, params))
    live.show()
    viewer = shelf(question.show_slot)
    for key, value in question.show_params.items():
        name = plan[question.show_slot][key]
        shown, _ = url_state.coerce(viewer.param[name], name, str(value))
        assert getattr(viewer, name) == shown, (key, value)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.route)
def test_a_live_chapter_restores_keeps_and_reviews_its_answers(chapter):
    asked = questions.questions_of(chapter.chapter)
    group = ChapterQuestions(asked)
    total = len(asked)
    assert group.review.status == (f"{total} of {total} questions still to answer, "
                                   "or to answer again:")
    first, second = asked[0], asked[1]
    right = questions.answer(first).correct
    wrong = (next(key for key, _ in second.options if key != questions.answer(second).correct)
             if second.kind == "choice" else float(questions.answer(second).correct) * 100 + 1000)
    # what this browser kept comes back, judged; what no longer fits a question is dropped
    unfit = "not-an-option" if asked[2].kind == "choice" else "not a number"
    group.memory.kept = {first.id: right, second.id: wrong, asked[2].id: unfit,
                         "no-such-question": 3}
    assert group.question(first.id).result == "right"
    assert group.question(second.id).result == "wrong"
    assert group.question(asked[2].id).result is None
    assert [item[0] for item in group.review.items] == [q.id for q in asked[1:]]
    assert group.review.items[0][2] == " (answered wrongly)"
    assert group.review.items[1][2] == " (not answered yet)"
    assert group.memory.answers == {first.id: right, second.id: wrong}  # kept again
    for q in asked:  # every one right: the review says so and lists none
        group.question(q.id).judge(questions.answer(q).correct)
    assert group.review.items == []
    assert group.review.status == f"You have answered all {total} questions of this chapter right."
    assert set(group.memory.answers) == {q.id for q in asked}


def test_a_live_chapter_hides_its_questions_natively_and_a_chapter_without_has_no_switch():
    # "Hide questions" is HTML in the header (static/live_page.js hides the question and
    # review roots' boxes by their kind, live-chapter.css), so it works before the session
    page = live_chapter.page("/")
    top = page.html()[:page.html().index("<main")]
    assert top.count('class="ae-q-toggle" aria-pressed="false">Hide questions</button>') == 1
    kinds = [root.kind for root in page.roots]
    asked = [i for i in page_model.at("/").sections if isinstance(i, content.Question)]
    assert kinds.count("question") == len(asked) > 0 and kinds.count("review") == 1
    assert kinds[-1] == "support"  # the a11y names and the answers' memory, out of sight
    assert all(ASKED in q.__panel__().css_classes for q in
               [page.root(f"q-{q.id}") for q in asked])
    numbers = live_chapter.page("/numbers")  # no questions: no switch, no session part
    assert "ae-q-toggle" not in numbers.html()
    assert [root.kind for root in numbers.roots] == ["support"]

