"""Online softmax over blocks, and tiled attention against the naive square."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import online_softmax as ol


def test_documents_blocks():
    walk = ol.online_softmax([2, 1, 3, 0], block_size=2)
    assert round(walk.running_sum, 2) == 1.55
    assert walk.running_sum == pytest.approx(walk.full_sum, rel=1e-15)
    first, second = walk.steps
    assert (first.new_max, second.old_max, second.new_max) == (2, 2, 3)
    assert second.rescale == pytest.approx(np.exp(-1))
    np.testing.assert_allclose(walk.weights.sum(), 1)


def test_no_rescale_when_max_does_not_rise():
    walk = ol.online_softmax([3, 0, 2, 1], block_size=2)
    assert walk.steps[1].rescale == 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-30, 30, allow_nan=False), min_size=1, max_size=40),
       st.integers(1, 8))
def test_online_sum_equals_full_row(scores, block):
    walk = ol.online_softmax(scores, block)
    assert walk.running_sum == pytest.approx(walk.full_sum, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 9), st.integers(1, 32),
       st.integers(1, 32), st.booleans(), st.integers(0, 2**31))
def test_tiled_equals_naive(n_q, extra, d, bq, bk, causal, seed):
    rng = np.random.default_rng(seed)
    n_k = n_q + extra - 1
    q, k = rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d))
    v = rng.standard_normal((n_k, 3))
    r = ol.tiled_attention(q, k, v, causal=causal, block_q=bq, block_k=bk)
    np.testing.assert_allclose(r.output, ol.naive_attention(q, k, v, causal=causal), rtol=1e-6,
                               atol=1e-12)
    assert r.largest_scores_held <= bq * bk


def test_causal_tiling_skips_blocks_above_the_diagonal():
    rng = np.random.default_rng(0)
    q = k = v = rng.standard_normal((256, 8))
    r = ol.tiled_attention(q, k, v, causal=True, block_q=64, block_k=64)
    assert (r.blocks_computed, r.blocks_skipped) == (10, 6)


def test_attention_walk_ends_at_naive_output():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal(4), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    steps, out = ol.attention_walk(q, k, v, block_size=2)
    assert len(steps) == 3
    np.testing.assert_allclose(out, ol.naive_attention(q[None], k, v)[0], rtol=1e-12)
    np.testing.assert_allclose(steps[-1].output_so_far, out)


def test_scratch_sizes():
    assert ol.scores_held_bytes(8192, heads=32, bytes_per_value=2) == 8192**2 * 64
    assert ol.scores_held_bytes(8192, block=128) == 128 * 128 * 4


def test_bad_scores():
    with pytest.raises(ValueError):
        ol.online_softmax([], 2)
    with pytest.raises(ValueError):
        ol.online_softmax([1, float("nan")], 2)
    with pytest.raises(ValueError):
        ol.online_softmax([1, 2], 0)
