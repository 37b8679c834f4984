"""The agreement panel without a browser: the documents' numbers in the readouts, and the
one panel shape: a pure state, live models that hold it, a small table of states."""

import itertools
import math

import numpy as np
import pytest

from app.kit import typed_numbers, url_state
from app.kit.typed_numbers import parse_numbers
from app.panels import agreement
from app.panels.agreement import AgreementPanel
from attention_core import dot_product
from attention_core.sqrt_dk import effective_count
from tests.state_checks import (
    assert_models_hold,
    assert_pure_and_no_widget_moved,
    every_setting,
    static_typed_panel,
)

A, B = (2, -1, 0.5), (3, 4, 2)


@pytest.fixture
def panel():
    return AgreementPanel()


def shows(readout):  # -> the text a reader sees in a Readout
    return readout.text()


def message(panel):  # -> the live message's text ("" when nothing is wrong)
    return " ".join(v for v in panel._message.values.values() if v)


def test_defaults_score_3_built_from_the_products(panel):
    assert dot_product.dot(A, B) == 3
    text = shows(panel._arithmetic)
    assert "2 × 3 + (−1) × 4 + 0.5 × 2" in text
    assert "= 6 − 4 + 1 = 3" in text
    assert panel._arithmetic.values["score"] == "3"
    assert 'class="ae-big" data-s="score">3</span>' in panel._arithmetic.filled()
    assert panel.url_keys == ("a", "b", "d")


def test_angle_and_verdict(panel):
    angle = dot_product.angle_degrees(A, B)
    assert panel._verdict.values["angle"] == f"{angle:.1f}°"
    # 75.9°: more with than against, but not "aligned" (under 45°)
    assert f"{angle:.1f}" == "75.9"
    assert ("verdict: leaning together: the score is positive; the angle is 45° to 80°: more "
            "with each other than against, but far from the same way.") in shows(panel._verdict)
    x, y = panel.gauge_source.data["x"][1], panel.gauge_source.data["y"][1]
    assert math.degrees(math.atan2(y, x)) == pytest.approx(angle)
    panel.b = "-1, -2, 0"  # a·b = −2 + 2 + 0 = 0: perpendicular
    assert "verdict: perpendicular:" in shows(panel._verdict)
    assert panel._arithmetic.values["score"] == "0"
    panel.b = "-2, 1, -0.5"
    assert ("verdict: opposed: the score is negative; the angle is over 135°: they point "
            "nearly opposite ways.") in shows(panel._verdict)
    assert panel._verdict.values["angle"] == "180.0°"
    panel.b = "6, -3, 1.5"  # a itself, twice as long: 0°
    assert ("verdict: aligned: the score is positive; the angle is under 45°: they point nearly "
            "the same way.") in shows(panel._verdict)
    panel.b = "-3, -4, -2"  # 104.1°
    assert ("verdict: leaning apart: the score is negative; the angle is 100° to 135°: more "
            "against each other than with, but far from opposite.") in shows(panel._verdict)


def test_the_presets_show_the_documents_three_cases(panel):
    verdicts = {}
    for b in ("3, 4, 2", "1, 2, 0", "-3, -4, -2"):
        panel._b_pick.value = b  # the list sets the parameter
        assert panel.b == b
        verdicts[b] = (panel._arithmetic.values["score"], panel._verdict.values["verdict"])
    assert verdicts == {"3, 4, 2": ("3", "leaning together"), "1, 2, 0": ("0", "perpendicular"),
                        "-3, -4, -2": ("−3", "leaning apart")}
    panel._a_pick.value = "4, -2, 1"  # twice as long: the score doubles, the angle stays
    panel._b_pick.value = "3, 4, 2"
    assert panel._arithmetic.values["score"] == "6"
    assert panel._verdict.values["angle"] == f"{dot_product.angle_degrees(A, B):.1f}°"


def test_a_typed_vector_moves_the_list_to_its_preset_or_to_typed(panel):
    panel.b = "1,2,0"  # reads as a preset, however typed
    assert panel._b_pick.value == "1, 2, 0"
    panel.b = "5, 5, 5"
    assert panel._b_pick.value == typed_numbers.TYPED
    assert panel._arithmetic.values["score"] == "7.5"


def test_zero_vector_has_no_angle(panel):
    panel.a = "0, 0, 0"
    assert "no angle" in shows(panel._verdict)
    assert panel._verdict.values["verdict"] == ""  # the verdict line is hidden
    assert not panel.arrow_a.visible


def test_256_operations_at_128_and_the_count_follows_d(panel):
    assert dot_product.operations(128) == 256
    assert "Operations per dot product: 256 at 128 numbers" in shows(panel._ops)
    panel.d = 4096
    assert f"{dot_product.operations(4096):,} at 4,096 numbers" in shows(panel._ops)


def test_d_moves_over_powers_of_two_containing_128(panel):
    assert 128 in agreement.D_STOPS and agreement.D_STOPS == tuple(2 ** i for i in range(13))
    assert panel._d_w.value == 7  # the slider holds the exponent
    panel._d_w.value = 4
    assert panel.d == 16 and "at 16 numbers" in shows(panel._ops)


def test_demo_raw_spreads_to_11_and_picks_one_scaled_blends(panel):
    demo = dot_product.scale_demo()
    assert round(demo.spread_raw) == 11 and round(demo.spread_scaled) == 1
    values = panel._demo.values
    assert (values["spread_raw"], values["spread_scaled"]) == ("10.9", "0.96")
    assert (values["eff_raw"], values["eff_scaled"]) == ("1.00", "5.15")
    assert values["spread_raw"] == f"{demo.spread_raw:.1f}"
    assert values["spread_scaled"] == f"{demo.spread_scaled:.2f}"
    assert values["eff_raw"] == f"{float(effective_count(demo.weights_raw)):.2f}"
    assert values["eff_scaled"] == f"{float(effective_count(demo.weights_scaled)):.2f}"
    assert "1.00 effective keys: it picks one" in shows(panel._demo)
    assert "5.15 effective keys of 8: it blends" in shows(panel._demo)
    assert float(effective_count(demo.weights_raw)) < 1.5 < float(
        effective_count(demo.weights_scaled))
    np.testing.assert_array_equal(panel.demo_source.data["raw"], demo.raw)
    np.testing.assert_array_equal(panel.demo_source.data["w_scaled"], demo.weights_scaled)


def test_at_small_d_the_raw_softmax_blends_too(panel):
    panel.d = 4
    assert "effective keys: it blends" in shows(panel._demo)


@pytest.mark.parametrize("bad, says", [
    ("1, x, 3", "is not a number"),
    ("1, 2", "needs exactly 3 numbers, got 2"),
    ("nan, 1, 2", "is not a number"),
    ("1e999, 1, 1", "not a finite number"),
    ("1,,2", "is empty"),
    ("", "is empty"),
])
def test_bad_vector_shows_a_message_and_keeps_the_last_good_values(panel, bad, says):
    panel.a = "1, 1, 1"  # a good value first: 3 + 4 + 2 = 9
    panel.a = bad
    assert says in message(panel)
    assert "still using a = (1, 1, 1)" in message(panel)
    assert panel._arithmetic.values["score"] == "9"
    panel.a = "2, -1, 0.5"
    assert message(panel) == ""
    assert panel._arithmetic.values["score"] == "3"


def test_user_text_is_escaped(panel):
    panel.b = "<script>alert(1)</script>"
    assert "<script>" not in panel._message.filled()
    assert "&lt;script&gt;" in panel._message.filled()


def test_parse_accepts_the_real_minus_sign():
    assert parse_numbers("−1, 2.5, 3e1", count=3) == ((-1.0, 2.5, 30.0), None)


def test_figures_are_built_once(panel):
    gauge, scores, weights = panel.gauge, panel.scores_figure, panel.weights_figure
    sources = (panel.gauge_source, panel.demo_source, panel.arc_source)
    panel.a = "1, 0, 0"
    panel.b = "0, 1, 0"
    panel.d = 16
    panel.a = "oops"
    assert (panel.gauge, panel.scores_figure, panel.weights_figure) == (gauge, scores, weights)
    assert panel._gauge_pane.object is gauge and panel._scores_pane.object is scores
    assert (panel.gauge_source, panel.demo_source, panel.arc_source) == sources
    demo = dot_product.scale_demo(d=16)
    np.testing.assert_array_equal(panel.demo_source.data["raw"], demo.raw)
    # the axes stay put: the tallest bar is the largest score over 1.15 of itself, and the
    # score axis's numbers stand at their scores over that same reach
    assert (scores.y_range.start, scores.y_range.end) == (-1, 1)
    reach = np.abs(demo.raw).max() * 1.15
    assert max(np.abs(panel.demo_source.data["raw_h"])) == pytest.approx(1 / 1.15, rel=1e-5)
    ticks = panel.score_tick_source.data
    assert "0" in ticks["text"] and len(ticks["text"]) >= 3
    for y, text in zip(ticks["y"], ticks["text"]):
        assert y * reach == pytest.approx(float(text.replace("−", "-")), abs=1e-4)
        assert -1 <= y <= 1


def test_url_restore_clamps_and_validates_listing_repairs(panel):
    args = {"d": [b"99999"], "a": [b"1, two, 3"], "b": [b"1, 0, 0"]}
    repairs = url_state.restore(panel, panel.url_keys, args)
    assert panel.d == 4096
    assert any("d=99999" in n and "using 4096" in n for n in repairs)
    assert "“two” (entry 2 of vector a) is not a number" in message(panel)
    assert panel._arithmetic.values["score"] == "2"  # (2, −1, 0.5)·(1, 0, 0)
    repairs = url_state.restore(panel, panel.url_keys, {"d": [b"abc"]})
    assert panel.d == 4096 and any("not a number" in n for n in repairs)


# --- the one shape: pure state, live == state, the table ------------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_pure_and_no_widget_moved(panel, {"a": "", "b": ""}, step=7)


def test_live_models_hold_exactly_the_state(panel):
    for params in itertools.islice(every_setting(AgreementPanel), 3, None, 11):
        panel.param.update(**params)
        assert_models_hold(panel, AgreementPanel.state(**params))
    # and the controls' widgets stand where the state's stops are
    assert panel._a_pick.value == panel.a and panel._b_pick.value == panel.b
    assert 2 ** panel._d_w.value == panel.d


def test_a_static_build_hides_the_typed_boxes_and_offers_the_live_page():
    p, buttons = static_typed_panel(AgreementPanel)
    assert len(buttons) == 1
    assert typed_numbers.TYPED not in p._a_pick.options.values()
    assert list(p._b_pick.options.values()) == list(agreement.B_PRESETS)
