"""Predict, then see, without a browser: the `::: question` and `::: review` syntax of
app/chapters/content.py, the answers app/chapters/questions.py computes from
attention_core, the HTML they make,
and where the two chapters ask them (before the prose that gives the answer away)."""

import math
import re
from html.parser import HTMLParser

import pytest

from app.chapters import chapter_page, content, live_chapter, page_model, questions
from app.chapters.live_question import LiveQuestion
from app.hosting import build
from app.kit import fmt, registry, resources, url_state
from app.kit.url_state import coerce
from tests.prose_check import ProseCheck

CHAPTERS = {c.content: page_model.assemble(c) for c in registry.CHAPTERS}  # file -> model

SAMPLE = """# T

Some prose.

::: question mask-off-row2
kind: choice
ask: Turn the mask off. Which key gains
  the most weight in row 2?
option mat: *mat*, three words later
option none: none: the mask changes scores
if none: The softmax
  renormalises every row.
show: head mask=off query=2
why: Row 2 now gives {mat} to *mat*.
:::

::: question online-sum
kind: number
ask: What is the running sum?
unit: tokens
band: 5%
if low: Too low.
if high: Too high.
if no_rescale: Rescale it.
show: online online_scores="2, 1, 3, 0" block=2
why: About {value}.
:::

More prose.

::: review
"""


def test_parse_gives_a_question_item_and_a_review():
    sections = content.parse(SAMPLE, source="s.md").sections
    assert sections[0] == "# T\n\nSome prose." and sections[3] == "More prose."
    assert sections[4] == content.Review()
    assert sections[1] == content.Question(
        id="mask-off-row2", kind="choice",
        ask="Turn the mask off. Which key gains the most weight in row 2?",
        options=(("mat", "*mat*, three words later"), ("none", "none: the mask changes scores")),
        show_slot="head", show_params={"mask": "off", "query": "2"},
        why="Row 2 now gives {mat} to *mat*.", unit="", band=(),
        replies=(("none", "The softmax renormalises every row."),))
    number = sections[2]
    assert (number.kind, number.unit, number.band, number.options) == (
        "number", "tokens", ("relative", 0.05), ())
    assert number.replies == (("low", "Too low."), ("high", "Too high."),
                              ("no_rescale", "Rescale it."))
    assert (number.show_slot, number.show_params) == (
        "online", {"online_scores": "2, 1, 3, 0", "block": "2"})


@pytest.mark.parametrize("text, band", [("5%", ("relative", 0.05)), ("0.02", ("absolute", 0.02)),
                                        ("0", ("absolute", 0.0)), ("order", ("order", 3.0)),
                                        ("factor 2", ("order", 2.0))])
def test_bands(text, band):
    assert content.parse_band(text, "x") == band


def number_block(*lines):
    return ["kind: number", "ask: How many?", "show: head length=8", "why: Because.",
            "if low: Low.", "if high: High.", *lines]


CHOICE = ["kind: choice", "ask: Which?", "option a: A", "option b: B", "show: head",
          "why: Because."]


@pytest.mark.parametrize("header, body, line, says", [
    ("::: question", CHOICE, 5, "needs one id"),
    ("::: question Bad_Id", CHOICE, 5, "needs one id"),
    ("::: question q", CHOICE[:1] + ["ask Which?"] + CHOICE[2:], 7, "reads 'field: value'"),
    ("::: question q", CHOICE + ["colour: red"], 12, "unknown question field 'colour'"),
    ("::: question q", CHOICE + ["why: Again."], 12, "a second 'why' line"),
    ("::: question q", CHOICE + ["option a: Again"], 12, "a second option 'a'"),
    ("::: question q", CHOICE[1:], 5, "has no 'kind:' line"),
    ("::: question q", [line for line in CHOICE if not line.startswith("show")], 5,
     "has no 'show:' line"),
    ("::: question q", ["kind: essay", *CHOICE[1:]], 6, "kind is 'choice' or 'number'"),
    ("::: question q", [line for line in CHOICE if line != "option b: B"], 5,
     "needs two options or more"),
    ("::: question q", CHOICE + ["band: 5%"], 12, "a choice question has no 'band:'"),
    ("::: question q", number_block(), 5, "needs a 'band:' line"),
    ("::: question q", number_block("band: wide"), 12, "a band is '5%'"),
    ("::: question q", number_block("band: factor 1"), 12, "a band is '5%'"),
    ("::: question q", number_block("band: 1")[:5] + ["band: 1"], 5, "needs an 'if high:' line"),
    ("::: question q", CHOICE + ["if c: No such option."], 5, "replies to 'c', which is none"),
    ("::: question q", CHOICE + ["if a: One.", "if a: Two."], 13, "a second reply to 'a'"),
    ("::: question q", CHOICE + ["if a b: Two words."], 12, "a reply names one answer"),
    ("::: question q", number_block("band: 1", "option a: A"), 5, "has options"),
    ("::: question q", ["kind: number", "ask: How many?", "show: mask=off", "why: W.",
                        "band: 1", "if low: L.", "if high: H."], 8, "names a panel slot first"),
    ("::: question q", ["kind: number", "ask: How many?", "show: head mask", "why: W.",
                        "band: 1", "if low: L.", "if high: H."], 8,
     "takes URL keys as key=value"),
    ("::: question q", ["  continued", *CHOICE], 6, "continues nothing"),
])
def test_a_malformed_question_names_its_file_and_line(header, body, line, says):
    text = "\n".join(["# T", "", "Prose.", "", header, *body, ":::", "", "More."]) + "\n"
    with pytest.raises(ValueError, match=f"line {line}:") as raised:
        content.parse(text, source="x.md")
    assert says in str(raised.value) and "x.md" in str(raised.value)


def test_an_unclosed_question_and_a_repeated_id_are_refused():
    with pytest.raises(ValueError, match=r"x\.md, line 3: '::: question' is never closed"):
        content.parse("# T\n\n::: question q\nkind: choice\n", source="x.md")
    block = "\n".join(["::: question q", *CHOICE, ":::"])
    with pytest.raises(ValueError, match=r"line 12: a second question with the id 'q'"):
        content.parse(f"# T\n\n{block}\n\n{block}\n", source="x.md")
    with pytest.raises(ValueError, match="'::: review' takes nothing"):
        content.parse("# T\n\n::: review everything\n")


# --- the two chapters' questions ------------------------------------------------------------

def chapter_questions(name):
    return questions.questions_of(content.load(name))


ALL = [(name, q) for name in CHAPTERS for q in chapter_questions(name)]


def test_enough_questions_in_each_chapter_and_ids_unique():
    counts = {name: len(chapter_questions(name)) for name in CHAPTERS}
    assert all(n >= 5 for n in counts.values()) and sum(counts.values()) >= 12, counts
    ids = [q.id for _, q in ALL]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(questions.ANSWERS), "one answer function per question, none spare"
    for name in CHAPTERS:  # each chapter ends with its review
        sections = content.load(name).sections
        assert sections.count(content.Review()) == 1
        assert sections.index(content.Review()) > max(
            i for i, s in enumerate(sections) if isinstance(s, content.Question))


@pytest.mark.parametrize("name, q", ALL, ids=[q.id for _, q in ALL])
def test_every_question_has_a_computed_answer_among_its_options(name, q):
    ans = questions.answer(q)
    if q.kind == "choice":
        assert ans.correct in dict(q.options), (q.id, ans.correct)
    else:
        assert isinstance(ans.correct, (int, float)) and math.isfinite(ans.correct)
    assert ans.values.get("value"), "every answer names its headline figure"
    page = questions.html(q, ans)  # every {placeholder} is one the answer computed
    assert not questions.PLACEHOLDER.search(page.split('<script type="application/json"')[0])


# id -> (the computed correct answer, {placeholder: the documents' figure})
EXPECTED = {
    "mask-off-row2": ("mat", {"mat": "0.23", "cat_on": "0.77"}),
    "mask-off-rows-0-4": ("same", {"gap": "0"}),
    "pairs-discarded-8": (28, {"value": "28", "total": "64"}),
    "decode-mask": ("nothing", {"moved": "0"}),
    "decode-growth": ("linear", {"value": "3, 4, 5, 6, 7, 8",
                                 "prefill": "9, 16, 25, 36, 49, 64"}),
    "cost-share-4096": (None, {"value": "7.4%"}),
    "first-crossover": ("gpt2", {"gpt2": "13,404", "qwen": "51,324", "times": "3.8"}),
    "divisor-off": ("sharper", {"cat": "0.97", "eff": "1.17", "cat_on": "0.77",
                                "eff_on": "1.98", "root": "2.24"}),
    "effective-keys-128": (None, {"value": "1.4"}),
    "agreement-perpendicular": ("perpendicular", {"score": "0", "products": "2, −2 and 0"}),
    "fp16-overflow": ("garbage", {"overflow": "inf", "value": "nan, 0, 0", "exp": "162,755",
                                  "largest": "65,504"}),
    "decode-intensity": (None, {"value": "4.0", "ridge": "295"}),
    "decode-batch": ("same", {"value": "4.0", "one": "4.0"}),
    "kv-one-user": (None, {"value": "122,532"}),
    "kv-32-users": ("cache", {"value": "17 GB", "weights": "16 GB"}),
    "online-sum": (None, {"value": "1.55", "long": "1.553", "full_long": "1.553"}),
}


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_the_answers_are_the_documents_numbers(qid):
    ans = questions.answer_for(qid)
    correct, values = EXPECTED[qid]
    if correct is not None:
        assert ans.correct == correct
    for name, figure in values.items():
        assert ans.values[name] == figure, (qid, name)


def test_the_number_answers_themselves():
    assert questions.answer_for("pairs-discarded-8").correct == 28
    assert round(questions.answer_for("cost-share-4096").correct, 1) == 7.4
    assert abs(questions.answer_for("effective-keys-128").correct / 1.44 - 1) <= 0.05
    assert round(questions.answer_for("decode-intensity").correct) == 4
    assert math.floor(questions.answer_for("kv-one-user").correct) == 122_532
    assert round(questions.answer_for("online-sum").correct, 2) == 1.55


@pytest.mark.parametrize("name, q", ALL, ids=[q.id for _, q in ALL])
def test_show_me_names_keys_its_panel_really_carries(name, q):
    model = CHAPTERS[name]
    plan = url_state.chapter_plan(model.panels, model.follows)
    assert q.show_slot in plan, f"{q.id}: no panel {q.show_slot!r} in {name}"
    cls = model.panels[q.show_slot][0]
    for key, value in q.show_params.items():
        assert key in plan[q.show_slot], f"{q.id}: {q.show_slot} does not carry {key!r}"
        parameter = plan[q.show_slot][key]
        coerced, repair = coerce(cls.param[parameter], key, value)
        assert coerced is not None and repair is None, (q.id, key, value, repair)


def number_pattern(figure):  # a figure, not part of a longer number ("4.0" is not in "4.05")
    return re.compile(rf"(?<![\d.,]){re.escape(figure)}(?![\d]|[.,]\d)")


PARAGRAPHS_ABOVE = 3  # no question's answer may stand in the paragraphs just above it


def paragraphs_above(sections, at):  # -> the prose paragraphs before sections[at], nearest last
    paragraphs = []
    for item in sections[:at]:
        if isinstance(item, str):
            paragraphs += [" ".join(p.split()) for p in re.split(r"\n\s*\n", item) if p.strip()]
    return paragraphs


@pytest.mark.parametrize("name, q", ALL, ids=[q.id for _, q in ALL])
def test_no_question_is_answered_by_the_paragraphs_above_it(name, q):
    sections = content.load(name).sections
    at = next(i for i, s in enumerate(sections) if s == q)
    above = paragraphs_above(sections, at)[-PARAGRAPHS_ABOVE:]
    assert len(above) == PARAGRAPHS_ABOVE or at < 8, (q.id, "too few paragraphs found")
    ans = questions.answer(q)
    figures = {ans.values["value"]}
    if q.kind == "number":  # the number itself, as the reader would type it, and rounded
        figures |= {fmt.count(round(ans.correct)) if ans.correct >= 10
                    else fmt.num(ans.correct, 1)}
    text = content.plain_text("\n\n".join(above))
    for figure in figures:
        assert not number_pattern(figure).search(text), (q.id, figure)


def test_the_paragraph_rule_catches_an_answer_three_paragraphs_up():  # the rule can fail
    sections = ["# T", "Zero.\n\nIt is 28\npairs.\n\nOne.", content.PanelMarker("head"), "Two.",
                content.Review()]
    above = paragraphs_above(sections, 4)
    assert above[-PARAGRAPHS_ABOVE:] == ["It is 28 pairs.", "One.", "Two."]
    assert number_pattern("28").search(" ".join(above[-PARAGRAPHS_ABOVE:]))
    assert not number_pattern("28").search(" ".join(above[-2:]))


@pytest.mark.parametrize("name, q", ALL, ids=[q.id for _, q in ALL])
def test_every_wrong_answer_gets_its_own_reply_with_a_computed_number(name, q):
    ans = questions.answer(q)
    said = dict(q.replies)
    if q.kind == "choice":
        wrong = [key for key, _ in q.options if key != ans.correct]
    else:
        wrong = ["low", "high", *ans.slips]
    assert wrong and all(key in said for key in wrong), (q.id, set(wrong) - set(said))
    texts = [said[key] for key in wrong]
    assert len(set(texts)) == len(texts), f"{q.id}: two wrong answers share one reply"
    for key in wrong:  # each names a number attention_core computed for this question
        assert questions.PLACEHOLDER.search(said[key]), (q.id, key, "no computed number")
        assert said[key] != q.why
    filled = questions.replies(q, ans)
    assert not any(questions.PLACEHOLDER.search(text) for text in filled.values())


NUMBER_QUESTIONS = [(name, q) for name, q in ALL if q.kind == "number"]


@pytest.mark.parametrize("name, q", NUMBER_QUESTIONS, ids=[q.id for _, q in NUMBER_QUESTIONS])
def test_a_number_answer_is_told_its_direction_or_its_slip(name, q):
    ans = questions.answer(q)
    correct = float(ans.correct)
    assert questions.verdict(q, ans, correct) == (True, None)
    for slip_name, slip in ans.slips.items():  # a slip is a wrong answer, and is recognised
        assert not questions.within(slip, correct, q.band), (q.id, slip_name, "inside the band")
        assert questions.verdict(q, ans, slip) == (False, slip_name)
    slips = list(ans.slips.values())

    def plain_miss(candidates):  # the first candidate outside the band and every slip's
        return next(x for x in candidates if not questions.within(x, correct, q.band)
                    and not any(questions.within(x, s, questions.slip_band(q.band))
                                for s in slips))

    low = plain_miss([correct * f for f in (0.5, 0.3, 0.1, 0.01)] + [correct - 10])
    high = plain_miss([correct * f for f in (1.5, 2.5, 5, 40, 1000)] + [correct + 10])
    assert questions.verdict(q, ans, low) == (False, "low")
    assert questions.verdict(q, ans, high) == (False, "high")


def test_the_slips_are_the_usual_mistakes():  # computed by the answers, checked by hand here
    assert questions.answer_for("pairs-discarded-8").slips == {
        "kept": 36, "total": 64, "both": 56, "diagonal": 8, "half": 32, "none": 0}
    kv = questions.answer_for("kv-one-user")
    assert kv.slips["limit"] == 8192 and math.isclose(kv.slips["keys_only"], 2 * kv.correct)
    assert round(kv.slips["one_layer"] / kv.correct) == 32
    intensity = questions.answer_for("decode-intensity").slips
    assert (intensity["scores"], intensity["one_layer"]) == (2.0, 128.0)
    assert round(intensity["ridge"]) == 295  # 989 TFLOP/s over 3.35 TB/s
    online = questions.answer_for("online-sum").slips
    assert round(online["no_rescale"], 3) == round(1.368 + 1 + math.exp(-3), 3)
    assert round(online["no_max"], 2) == round(sum(math.exp(x) for x in (2, 1, 3, 0)), 2)


class Form(HTMLParser):
    """What a question's HTML holds: its tags, the inputs and the labels that name them."""

    def __init__(self):
        super().__init__()
        self.tags, self.inputs, self.labels, self.attrs = [], [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.attrs.append((tag, attrs))
        if tag == "input":
            self.inputs.append(attrs)
        if tag == "label" and "for" in attrs:
            self.labels.add(attrs["for"])


@pytest.mark.parametrize("name, q", ALL, ids=[q.id for _, q in ALL])
def test_the_html_is_accessible_by_construction(name, q):
    ans = questions.answer(q)
    form = Form()
    form.feed(questions.html(q, ans))
    top = form.attrs[0]
    assert top[0] == "fieldset" and top[1]["id"] == f"q-{q.id}"
    assert top[1]["class"] == "ae-question" and top[1]["data-question"] == q.id
    assert form.tags[1] == "legend", "the legend comes first: it names the group"
    assert all(i["id"] in form.labels for i in form.inputs), "every input has its label"
    if q.kind == "choice":
        assert [i["value"] for i in form.inputs] == [k for k, _ in q.options]
        assert {i["type"] for i in form.inputs} == {"radio"}
        assert top[1]["data-correct"] == ans.correct
    else:
        assert [i["type"] for i in form.inputs] == ["number"]
        assert float(top[1]["data-correct"]) == float(ans.correct)
    buttons = [a for t, a in form.attrs if t == "button"]
    assert [b["class"] for b in buttons] == ["ae-q-check", "ae-q-show"]
    assert buttons[1]["data-slot"] == q.show_slot
    assert any(a.get("aria-live") == "polite" for _, a in form.attrs)
    assert "details" in form.tags and "summary" in form.tags


def test_the_details_hold_the_answer_and_why():
    q = next(q for _, q in ALL if q.id == "mask-off-row2")
    page = questions.html(q, questions.answer(q))
    details = page.split("<details", 1)[1].split("</details>", 1)[0]
    assert "<em>mat</em>, three words further on" in details and "0.23" in details
    assert "<summary>Answer</summary>" in details
    for key, _ in q.options:  # with scripts off, every wrong option's reason is there too
        if key != "mat":
            assert questions.replies(q, questions.answer(q))[key] in details, key
    number = next(q for _, q in ALL if q.id == "pairs-discarded-8")
    details = questions.html(number, questions.answer(number)).split("<details", 1)[1]
    assert "<strong>Too low</strong>" in details and "<strong>About 36</strong>" in details


def test_the_review_links_every_question_of_its_chapter():
    for name in CHAPTERS:
        chapter = content.load(name)
        review = questions.review_html(chapter)
        links = re.findall(r'href="#q-([a-z0-9-]+)"', review)
        assert links == [q.id for q in questions.questions_of(chapter)]
        assert review.startswith('<section class="ae-review"')


def test_the_static_chapter_and_the_live_one_show_them():
    for name, model in CHAPTERS.items():
        chapter = content.load(name)
        main = chapter_page.body(chapter, [], "", "default")
        for q in questions.questions_of(chapter):
            assert main.count(f'id="q-{q.id}"') == 1
        assert main.count('class="ae-review"') == 1
        live = live_chapter.page(model.route)  # judged in Python: each question a root
        for q in questions.questions_of(chapter):
            assert isinstance(live.root(f"q-{q.id}"), LiveQuestion)
            assert live.root(f"q-{q.id}").question == q
        assert [r.kind for r in live.roots].count("review") == 1
    assert "questions.js" in build.SITE_SCRIPTS
    assert resources.static_file("questions.js").read_text(encoding="utf-8").strip()


SEEDS = {"attention.md": ("scaled-dot-product-attention.txt", 1000),
         "math.md": ("dot-products-softmax-attention-math.txt", 500)}


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_the_questions_are_in_our_own_words(name):
    # a chapter with no document of its own (flash.md) is held against both documents
    text = "\n".join(" ".join([q.ask, *(t for _, t in q.options), q.why])
                     for q in chapter_questions(name))
    for seed, words in [SEEDS[name]] if name in SEEDS else SEEDS.values():
        ProseCheck(seed, [], min_words=words).in_our_own_words(text)
