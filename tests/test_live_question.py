"""A question on a live chapter (app/live_question.py): judged in Python with the answer
app/questions.py computes, by the bands the static page's script uses, and "Show me" puts the
panel in the state its question names."""

import math

import pytest

from app import article, article_math, questions, url_state
from app.live_question import LiveQuestion, within

CHAPTERS = (article, article_math)


def every_question():
    for chapter in CHAPTERS:
        for item in chapter.SECTIONS:
            if isinstance(item, tuple) and item[0] == "question":
                yield chapter, item[1]


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
    assert live.judge(None)["verdict"].endswith("first.")
    assert question.kind == "choice" or math.isfinite(float(answer))


@pytest.mark.parametrize(("chapter", "question"), list(every_question()),
                         ids=lambda v: getattr(v, "id", ""))
def test_show_me_sets_the_panel_as_its_query_says(chapter, question):
    shelf = article.Shelf(chapter.PANELS)
    plan = article.chapter_plan(chapter.PANELS, chapter.FOLLOWS)
    live = LiveQuestion(question, show=lambda slot, params: article.show_state(
        shelf, plan, slot, params))
    live.show()
    viewer = shelf(question.show_slot)
    for key, value in question.show_params.items():
        name = plan[question.show_slot][key]
        shown, _ = url_state.coerce(viewer.param[name], name, str(value))
        assert getattr(viewer, name) == shown, (key, value)
