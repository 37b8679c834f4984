"""The overflow panel without a browser: 66/24/10%, the float16 trap at 12, and the fix."""

import math

import numpy as np
import pytest

from app import url_state
from app.panels.overflow import OverflowPanel
from attention_core import numerics


@pytest.fixture
def panel():
    return OverflowPanel()


def percents(panel):  # the % column of the table, in order
    return [cell.split("</b>")[0] for cell in panel._table.object.split("<td><b>")[1:]]


def test_defaults_read_66_24_10(panel):
    assert (panel.scores, panel.precision, panel.subtract_max) == ("2, 1, 0.1", "float16", False)
    steps = numerics.softmax_steps([2, 1, 0.1], "float16", subtract_max=False)
    assert [f"{100 * w:.0f}%" for w in steps.weights] == ["66%", "24%", "10%"]
    assert percents(panel) == ["66%", "24%", "10%"]
    assert panel.bar_source.data["label"] == ["66%", "24%", "10%"]
    assert "<td>7.39</td>" in panel._table.object and "<td>11.2</td>" in panel._table.object
    assert panel.broken_source.data["x"] == []
    assert "ae-okay" in panel._verdict.object


def test_float32_gives_the_same_percentages(panel):
    panel.precision = "float32"
    assert percents(panel) == ["66%", "24%", "10%"]


def test_12_in_float16_without_the_max_is_garbage(panel):
    panel.scores = "2, 1, 12"
    assert "<td>inf</td>" in panel._table.object
    assert "<td>nan</td>" in panel._table.object
    big = f"{math.exp(12):,.0f}"
    largest = f"{numerics.largest_finite('float16'):,.0f}"
    assert (big, largest) == ("162,755", "65,504")
    assert (f"The row is garbage: e^12 ≈ {big} &gt; {largest}, the largest float16"
            in panel._verdict.object)
    weights = panel.bar_source.data["weight"]
    assert weights[:2] == [0.0, 0.0] and math.isnan(weights[2])
    assert panel.broken_source.data["x"] == [2]
    assert panel.broken_source.data["text"] == ["nan"]
    assert "not a number" in panel._caption.object


def test_subtracting_the_max_fixes_it(panel):
    panel.scores = "2, 1, 12"
    panel.subtract_max = True
    assert "inf" not in panel._table.object and "nan" not in panel._table.object
    assert "garbage" not in panel._verdict.object.split("Without")[0]
    weights = np.array(panel.bar_source.data["weight"])
    assert np.all(np.isfinite(weights)) and weights.sum() == pytest.approx(1, abs=1e-3)
    assert panel.broken_source.data["x"] == []
    assert "<td>−10</td>" in panel._table.object  # 2 − 12


def test_subtracting_the_max_keeps_the_weights(panel):
    panel.subtract_max = True
    assert percents(panel) == ["66%", "24%", "10%"]
    assert "<td>−1.9</td>" in panel._table.object  # 0.1 − 2


def test_float32_survives_12_but_not_100(panel):
    panel.precision = "float32"
    panel.scores = "2, 1, 12"
    assert "garbage" not in panel._verdict.object
    panel.scores = "2, 1, 100"
    assert "garbage" in panel._verdict.object and "float32" in panel._verdict.object


def test_bad_scores_show_a_message_and_keep_the_last_good_row(panel):
    panel.scores = "2, 1, 12"
    panel.scores = "2, one, 12"
    assert panel._message.visible and "is not a number" in panel._message.object
    assert "still using 2, 1, 12" in panel._message.object
    assert "<td>inf</td>" in panel._table.object
    panel.scores = ", ".join(["1"] * 17)
    assert "at most 16 numbers, got 17" in panel._message.object
    panel.scores = "<b>x</b>"
    assert "<b>x</b>" not in panel._message.object and "&lt;b&gt;" in panel._message.object
    panel.scores = "2, 1, 0.1"
    assert not panel._message.visible and percents(panel) == ["66%", "24%", "10%"]


def test_figure_is_built_once(panel):
    fig, source, x_range = panel.figure, panel.bar_source, panel.figure.x_range
    panel.scores = "2, 1, 12, 3, 4"
    panel.precision = "float32"
    panel.subtract_max = True
    panel.scores = "bad"
    assert panel.figure is fig and panel._figure_pane.object is fig
    assert panel.bar_source is source and fig.x_range is x_range
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 4.5)
    assert fig.xaxis[0].ticker.ticks == [0, 1, 2, 3, 4]


def test_url_restore_ignores_float8_with_a_note(panel):
    args = {"precision": [b"float8"], "subtract_max": [b"maybe"], "scores": [b"2, 1, 12"]}
    notes = url_state.restore(panel, panel.url_keys, args)
    assert panel.precision == "float16" and panel.subtract_max is False
    assert any("precision='float8'" in n and "ignored" in n for n in notes)
    assert any("subtract_max='maybe'" in n for n in notes)
    assert "garbage" in panel._verdict.object
    url_state.restore(panel, panel.url_keys, {"subtract_max": [b"on"]})
    assert panel.subtract_max is True and "garbage" not in panel._verdict.object.split(
        "Without")[0]


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
        return [h.object for h in p.__panel__().select(pn.pane.HTML) if "<h3" in h.object]

    assert headings(OverflowPanel()) == [
        "<h3 style='margin:0'>Softmax and the overflow trap</h3>"]
    assert headings(OverflowPanel(in_article=True)) == []


def test_dark_theme_paints_the_bar_labels_light(monkeypatch):
    from app import chrome
    from app.model_picker import DARK_INK, LIGHT_INK

    def label_colours(p):
        return {g.glyph.text_color for g in p.figure.renderers if hasattr(g.glyph, "text")}

    assert LIGHT_INK.text in label_colours(OverflowPanel())
    monkeypatch.setattr(chrome, "theme", lambda: "dark")
    dark = label_colours(OverflowPanel())
    assert DARK_INK.text in dark and LIGHT_INK.text not in dark
