"""The overflow panel without a browser: 66/24/10%, the float16 trap at 12, and the fix; and
the one panel shape: a pure state, live models that hold it, a small table of states."""

import math

import numpy as np
import pytest

from app.kit import chrome, typed_numbers, url_state
from app.panels import overflow
from app.panels.overflow import OverflowPanel
from attention_core import numerics
from tests.state_checks import (
    assert_models_hold,
    assert_pure_and_no_widget_moved,
    every_setting,
    static_typed_panel,
)


@pytest.fixture
def panel():
    return OverflowPanel()


def rows(panel):  # -> how many score rows the table shows
    return sum(1 for i in range(overflow.MAX_SCORES) if panel._table.values[f"x{i}"])


def column(panel, c):  # -> one column of the table, in order: "x" score ... "p" %
    return [panel._table.values[f"{c}{i}"] for i in range(rows(panel))]


def percents(panel):  # the % column of the table, in order
    return column(panel, "p")


def table_text(panel):
    return " ".join(v for v in panel._table.values.values())


def verdict(panel):  # -> the verdict a reader sees
    return panel._verdict.text()


def message(panel):
    return panel._message.values["text"]


def test_defaults_read_66_24_10(panel):
    assert (panel.scores, panel.precision, panel.subtract_max) == ("2, 1, 0.1", "float16", False)
    steps = numerics.softmax_steps([2, 1, 0.1], "float16", subtract_max=False)
    assert [f"{100 * w:.0f}%" for w in steps.weights] == ["66%", "24%", "10%"]
    assert percents(panel) == ["66%", "24%", "10%"]
    assert panel.bar_source.data["label"] == ["66%", "24%", "10%"]
    assert panel.bar_source.data["score"] == ["2", "1", "0.1"]
    assert "7.39" in column(panel, "e") and panel._table.values["total"] == "11.2"
    assert panel.broken_source.data["x"] == []
    assert panel._verdict.values["okay"] and not panel._verdict.values["alarm"]


def test_float32_gives_the_same_percentages(panel):
    panel.precision = "float32"
    assert percents(panel) == ["66%", "24%", "10%"]


@pytest.mark.parametrize("scores", ["2, 1, 12", "12, 1, 0.1"])
def test_12_in_float16_without_the_max_is_garbage(panel, scores):
    panel.scores = scores
    assert "inf" in column(panel, "e")
    assert "nan" in column(panel, "w")
    big = f"{math.exp(12):,.0f}"
    largest = f"{numerics.largest_finite('float16'):,.0f}"
    assert (big, largest) == ("162,755", "65,504")
    assert (f"The row is garbage: e^12 ≈ {big} > {largest}, the largest float16"
            in verdict(panel))
    where = [float(s) for s in scores.split(",")].index(12.0)
    weights = panel.bar_source.data["weight"]
    assert weights[where] is None  # no bar for a nan weight
    assert [w for i, w in enumerate(weights) if i != where] == [0.0, 0.0]
    assert panel.broken_source.data["x"] == [where]
    assert panel.broken_source.data["text"] == ["nan"]
    assert panel._table.values[f"f{where}"] == "✕"  # the row is marked
    assert "not a number" in panel._caption.text()


def test_subtracting_the_max_fixes_it(panel):
    panel.scores = "2, 1, 12"
    panel.subtract_max = True
    assert "inf" not in table_text(panel) and "nan" not in table_text(panel)
    assert "garbage" not in verdict(panel).split("Without")[0]
    weights = np.array(panel.bar_source.data["weight"], dtype=float)
    assert np.all(np.isfinite(weights)) and weights.sum() == pytest.approx(1, abs=1e-3)
    assert panel.broken_source.data["x"] == []
    assert "−10" in column(panel, "s")  # 2 − 12
    assert "nothing can overflow" in verdict(panel)


def test_the_documents_trap_as_a_preset(panel):
    panel._scores_pick.value = "12, 1, 0.1"  # the list sets the parameter
    assert panel.scores == "12, 1, 0.1"
    assert "e^12 ≈ 162,755 > 65,504" in verdict(panel)
    panel.subtract_max = True
    assert percents(panel)[0] == "100%" and "nan" not in table_text(panel)


def test_subtracting_the_max_keeps_the_weights(panel):
    panel.subtract_max = True
    assert percents(panel) == ["66%", "24%", "10%"]
    assert "−1.9" in column(panel, "s")  # 0.1 − 2


def test_float32_survives_12_but_not_100(panel):
    panel.precision = "float32"
    panel.scores = "2, 1, 12"
    assert "garbage" not in verdict(panel)
    panel.scores = "2, 1, 100"
    assert "garbage" in verdict(panel) and "float32" in verdict(panel)


def test_underflow_and_a_sum_that_overflows_are_garbage_too(panel):
    panel.scores = "-20, -21, -22"  # every e^x rounds to 0 in float16: 0 ÷ 0
    assert "every e^x rounded to 0 in float16" in verdict(panel)
    assert column(panel, "w") == ["nan"] * 3
    panel.subtract_max = True
    assert percents(panel) == ["67%", "24%", "9%"]
    panel.param.update(scores=overflow.SIXTEEN_NINES, subtract_max=False)
    assert "the sum overflowed float16" in verdict(panel)
    assert "8,104" in verdict(panel) and rows(panel) == 16
    panel.subtract_max = True
    assert percents(panel) == ["6%"] * 16


def test_bad_scores_show_a_message_and_keep_the_last_good_row(panel):
    panel.scores = "2, 1, 12"
    panel.scores = "2, one, 12"
    assert "is not a number" in message(panel)
    assert "still using 2, 1, 12" in message(panel)
    assert "inf" in column(panel, "e")
    assert panel._scores_pick.value == typed_numbers.TYPED
    panel.scores = ", ".join(["1"] * 17)
    assert "at most 16 numbers, got 17" in message(panel)
    panel.scores = "<b>x</b>"
    assert "<b>x</b>" not in panel._message.filled()
    assert "&lt;b&gt;" in panel._message.filled()
    panel.scores = "2, 1, 0.1"
    assert message(panel) == "" and percents(panel) == ["66%", "24%", "10%"]
    assert panel._scores_pick.value == "2, 1, 0.1"


def test_figure_is_built_once(panel):
    fig, source, x_range = panel.figure, panel.bar_source, panel.figure.x_range
    panel.scores = "2, 1, 12, 3, 4"
    panel.precision = "float32"
    panel.subtract_max = True
    panel.scores = "bad"
    assert panel.figure is fig and panel._figure_pane.object is fig
    assert panel.bar_source is source and fig.x_range is x_range
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 4.5)
    assert panel.bar_source.data["x"] == [0, 1, 2, 3, 4]
    assert panel.bar_source.data["score"] == ["2", "1", "12", "3", "4"]


def test_url_restore_ignores_float8_with_a_note(panel):
    args = {"precision": [b"float8"], "subtract_max": [b"maybe"], "scores": [b"2, 1, 12"]}
    repairs = url_state.restore(panel, panel.url_keys, args)
    assert panel.precision == "float16" and panel.subtract_max is False
    assert any("precision='float8'" in n and "ignored" in n for n in repairs)
    assert any("subtract_max='maybe'" in n for n in repairs)
    assert "garbage" in verdict(panel)
    url_state.restore(panel, panel.url_keys, {"subtract_max": [b"on"]})
    assert panel.subtract_max is True and "garbage" not in verdict(panel).split("Without")[0]


def test_the_toggle_looks_off_when_off_and_keeps_its_name(panel):
    from app.panels.overflow import TOGGLE_STYLE

    toggle = panel._subtract_w
    assert toggle.name == "subtract the max" and toggle.value is False
    assert toggle.variant == "outline" and TOGGLE_STYLE in toggle.stylesheets  # solid = on
    # the visible "off" / "on" mark carries empty alternative text: the name stays the same
    assert 'content: "off" / ""' in TOGGLE_STYLE and 'content: "on" / ""' in TOGGLE_STYLE
    panel.subtract_max = True
    assert toggle.value is True


def test_in_the_article_the_heading_is_left_to_the_section():
    import panel as pn

    def headings(p):
        return [h.object for h in p.__panel__().select(pn.pane.HTML) if "ae-heading" in h.object]

    assert len(headings(OverflowPanel())) == 1
    assert "<h3 " in headings(OverflowPanel())[0]  # in a chapter, under the section's h2
    assert "Softmax and the overflow trap</h3>" in headings(OverflowPanel())[0]
    assert headings(OverflowPanel(in_chapter=True)) == []
    alone = chrome.single_page(OverflowPanel, "Softmax and the overflow trap")
    assert any("Softmax and the overflow trap</h1>" in h.object
               for h in alone.select(pn.pane.HTML))  # on its own page, the page's h1


def test_dark_theme_paints_the_bar_labels_light(monkeypatch):
    from app.kit import chrome
    from app.kit.theme import DARK_INK, LIGHT_INK

    def label_colours(p):
        return {g.glyph.text_color for g in p.figure.renderers if hasattr(g.glyph, "text")}

    assert LIGHT_INK.text in label_colours(OverflowPanel())
    monkeypatch.setattr(chrome, "theme", lambda: "dark")
    dark = label_colours(OverflowPanel())
    assert DARK_INK.text in dark and LIGHT_INK.text not in dark


# --- the one shape: pure state, live == state, the table ------------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_pure_and_no_widget_moved(panel, {"text": ""})


def test_live_models_hold_exactly_the_state(panel):
    for params in every_setting(OverflowPanel):
        panel.param.update(**params)
        assert_models_hold(panel, OverflowPanel.state(**params))
        assert panel._scores_pick.value == panel.scores


def test_a_static_build_hides_the_typed_box_and_offers_the_live_page():
    p, _ = static_typed_panel(OverflowPanel)
    assert list(p._scores_pick.options.values()) == list(overflow.PRESETS)
