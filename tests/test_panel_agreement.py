"""The agreement panel without a browser: the documents' numbers in the readouts."""

import math

import numpy as np
import pytest

from app import url_state
from app.panels.agreement import AgreementPanel, parse_numbers
from attention_core import dot_product
from attention_core.sqrt_dk import effective_count

A, B = (2, -1, 0.5), (3, 4, 2)


@pytest.fixture
def panel():
    return AgreementPanel()


def test_defaults_score_3_built_from_the_products(panel):
    assert dot_product.dot(A, B) == 3
    text = panel._arithmetic.object
    assert "2 × 3 + (−1) × 4 + 0.5 × 2" in text
    assert "= 6 − 4 + 1 = " in text
    assert '<span class="ae-big">3</span>' in text
    assert panel.url_keys == ("a", "b", "d")


def test_angle_and_verdict(panel):
    angle = dot_product.angle_degrees(A, B)
    assert f"{angle:.1f}°" in panel._verdict.object
    assert "verdict: <b>aligned</b>" in panel._verdict.object
    x, y = panel.gauge_source.data["x"][1], panel.gauge_source.data["y"][1]
    assert math.degrees(math.atan2(y, x)) == pytest.approx(angle)
    panel.b = "-1, -2, 0"  # a·b = −2 + 2 + 0 = 0: perpendicular
    assert "verdict: <b>perpendicular</b>" in panel._verdict.object
    assert '<span class="ae-big">0</span>' in panel._arithmetic.object
    panel.b = "-2, 1, -0.5"
    assert "verdict: <b>opposed</b>" in panel._verdict.object
    assert "180.0°" in panel._verdict.object


def test_zero_vector_has_no_angle(panel):
    panel.a = "0, 0, 0"
    assert "no angle" in panel._verdict.object
    assert not panel.arrow_a.visible


def test_256_operations_at_128_and_the_count_follows_d(panel):
    assert dot_product.operations(128) == 256
    assert "Operations per dot product: 256 at 128 numbers" in panel._ops.object
    panel.d = 4096
    assert f"{dot_product.operations(4096):,} at 4,096 numbers" in panel._ops.object


def test_demo_raw_spreads_to_11_and_picks_one_scaled_blends(panel):
    demo = dot_product.scale_demo()
    assert round(demo.spread_raw) == 11 and round(demo.spread_scaled) == 1
    text = panel._demo.object
    assert f"±{demo.spread_raw:.1f}" in text and f"±{demo.spread_scaled:.2f}" in text
    assert f"<b>{float(effective_count(demo.weights_raw)):.2f}</b> effective keys" in text
    assert f"<b>{float(effective_count(demo.weights_scaled)):.2f}</b> effective keys" in text
    assert float(effective_count(demo.weights_raw)) < 1.5 < float(
        effective_count(demo.weights_scaled))
    np.testing.assert_array_equal(panel.demo_source.data["raw"], demo.raw)
    np.testing.assert_array_equal(panel.demo_source.data["w_scaled"], demo.weights_scaled)


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
    assert panel._message.visible
    assert says in panel._message.object
    assert "still using a = (1, 1, 1)" in panel._message.object
    assert '<span class="ae-big">9</span>' in panel._arithmetic.object
    panel.a = "2, -1, 0.5"
    assert not panel._message.visible
    assert '<span class="ae-big">3</span>' in panel._arithmetic.object


def test_user_text_is_escaped(panel):
    panel.b = "<script>alert(1)</script>"
    assert "<script>" not in panel._message.object
    assert "&lt;script&gt;" in panel._message.object


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
    assert scores.y_range.end == pytest.approx(np.abs(demo.raw).max() * 1.15)


def test_url_restore_clamps_and_validates_with_notes(panel):
    args = {"d": [b"99999"], "a": [b"1, two, 3"], "b": [b"1, 0, 0"]}
    notes = url_state.restore(panel, panel.url_keys, args)
    assert panel.d == 4096
    assert any("d=99999" in n and "using 4096" in n for n in notes)
    assert "“two” (entry 2 of vector a) is not a number" in panel._message.object
    assert '<span class="ae-big">2</span>' in panel._arithmetic.object  # (2, −1, 0.5)·(1, 0, 0)
    notes = url_state.restore(panel, panel.url_keys, {"d": [b"abc"]})
    assert panel.d == 4096 and any("not a number" in n for n in notes)
