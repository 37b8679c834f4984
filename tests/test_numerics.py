"""float16 overflow in a naive softmax, and the max-subtraction fix; the dot product."""

import itertools
import math

import numpy as np
import pytest

from attention_core import dot_product, numerics
from attention_core.sqrt_dk import effective_count


def test_documents_softmax():
    s = numerics.softmax_steps([2, 1, 0.1], subtract_max=False)
    assert [round(float(w) * 100) for w in s.weights] == [66, 24, 10]
    assert [round(float(e), 2) for e in s.exps] == [7.39, 2.72, 1.11]
    assert round(s.total, 1) == 11.2
    fixed = numerics.softmax_steps([2, 1, 0.1], subtract_max=True)
    np.testing.assert_allclose(fixed.shifted, [0, -1, -1.9], atol=1e-6)
    np.testing.assert_allclose(fixed.weights, s.weights, rtol=1e-6)


def test_float16_overflow_and_fix():
    assert math.exp(12) > numerics.largest_finite("float16") == 65504
    naive = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=False)
    assert naive.overflowed and naive.garbage
    assert np.isnan(naive.weights).any()
    fixed = numerics.softmax_steps([12, 1, 0.1], "float16", subtract_max=True)
    assert not fixed.overflowed and not fixed.garbage
    assert np.all(np.isfinite(fixed.weights))
    assert float(fixed.weights.astype(np.float64).sum()) == pytest.approx(1, abs=1e-3)
    assert not numerics.softmax_steps([12, 1, 0.1], "float32", subtract_max=False).overflowed


def test_bad_precision_and_scores():
    with pytest.raises(ValueError):
        numerics.softmax_steps([1.0], "float8")
    with pytest.raises(ValueError):
        numerics.softmax_steps([])


def test_dot_product_agreement():
    assert dot_product.dot([2, -1, 0.5], [3, 4, 2]) == 3
    assert dot_product.agreement([1, 0], [2, 0]) == "aligned"
    assert dot_product.agreement([1, 0], [0, 3]) == "perpendicular"
    assert dot_product.agreement([1, 0], [-1, 0.1]) == "opposed"
    # the documents' pair sits at 75.9°: it leans together, it is not aligned
    assert dot_product.agreement([2, -1, 0.5], [3, 4, 2]) == "leaning together"
    assert dot_product.agreement([2, -1, 0.5], [-3, -4, -2]) == "leaning apart"  # 104.1°
    # each zone by the angle of a unit vector against (1, 0), edges included as documented
    for degrees, verdict in ((0, "aligned"), (44.9, "aligned"), (45, "leaning together"),
                             (79.9, "leaning together"), (80.1, "perpendicular"),
                             (99.9, "perpendicular"), (100.1, "leaning apart"),
                             (135.1, "opposed"), (180, "opposed")):
        b = [np.cos(np.radians(degrees)), np.sin(np.radians(degrees))]
        assert dot_product.agreement([1, 0], b) == verdict, degrees
    zones = dot_product.AGREEMENT_ZONES
    assert [z[0] for z in zones] == ["aligned", "leaning together", "perpendicular",
                                     "leaning apart", "opposed"]
    assert zones[0][1] == 0 and zones[-1][2] == 180
    assert all(z[2] == nxt[1] for z, nxt in itertools.pairwise(zones))  # no gap, no overlap
    assert dot_product.operations(128) == 256
    with pytest.raises(ValueError):
        dot_product.dot([1, 2], [1])


def test_scale_demo_spreads():
    d = dot_product.scale_demo()  # the draw the UI shows: 8 keys, 128 numbers each
    assert 8 < d.spread_raw < 14 and 0.7 < d.spread_scaled < 1.3
    # raw: one winner takes nearly everything; scaled: a blend over several keys
    assert effective_count(d.weights_raw) < 1.5
    assert effective_count(d.weights_scaled) > 4
