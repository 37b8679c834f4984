"""The √d_k sweep: the documents' shape in the default draw, and in expectation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import sqrt_dk

D_KS = (4, 16, 128, 512)


def test_default_draw_has_the_documents_shape():
    points = [sqrt_dk.sweep_point(d) for d in D_KS]
    raw = np.array([p.effective_raw for p in points])
    scaled = np.array([p.effective_scaled for p in points])
    assert np.all(np.diff(raw) < 0) and raw[-1] < 1.5
    assert np.all(np.abs(scaled / scaled.mean() - 1) <= 0.10)
    for p in points:
        assert abs(p.spread / np.sqrt(p.d_k) - 1) <= 0.15


def test_expectation_matches_the_documents_figures():
    mean = sqrt_dk.expectation(D_KS, draws=2000)
    np.testing.assert_allclose(mean.effective_raw, [6.68, 2.84, 1.44, 1.19], rtol=0.05)
    np.testing.assert_allclose(mean.effective_scaled, [11.19, 10.96, 10.71, 10.76], rtol=0.05)
    np.testing.assert_allclose(mean.spread[[0, 2, 3]], [1.82, 10.72, 21.48], rtol=0.05)


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 1024), st.integers(2, 1024))
def test_scaled_sharpness_does_not_depend_on_d_k_in_expectation(a, b):
    mean = sqrt_dk.expectation(tuple(sorted({a, b, 64})), draws=600)
    # once d_k is past the first few, scaled scores are ~N(0, 1) whatever d_k is
    assert np.ptp(mean.effective_scaled) / mean.effective_scaled.mean() < 0.12


def test_curve_agrees_with_points():
    raw, scaled = sqrt_dk.effective_curve([1, 7, 300])
    for i, d in enumerate([1, 7, 300]):
        p = sqrt_dk.sweep_point(d)
        assert raw[i] == pytest.approx(p.effective_raw, rel=1e-9)
        assert scaled[i] == pytest.approx(p.effective_scaled, rel=1e-9)


def test_weights_sum_to_one_and_bounds():
    p = sqrt_dk.sweep_point(64, n_keys=40)
    assert p.weights_raw.shape == (40,)
    assert p.weights_raw.sum() == pytest.approx(1) and p.weights_scaled.sum() == pytest.approx(1)
    with pytest.raises(ValueError):
        sqrt_dk.sweep_point(0)
    with pytest.raises(ValueError):
        sqrt_dk.sweep_point(2048)
    with pytest.raises(ValueError):
        sqrt_dk.sweep_point(4, n_keys=0)


def test_three_sigma_and_exp_ratio():
    assert round(sqrt_dk.three_sigma_range(128)) == 34
    assert int(sqrt_dk.exp_ratio_log10(128)) == 29
