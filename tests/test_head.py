"""One head: the mask before the softmax, fixed-order reductions, counts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import head, worked_example

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


def arrays(shape):
    return st.lists(finite, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
        lambda xs: np.array(xs).reshape(shape))


@st.composite
def heads(draw):
    n = draw(st.integers(1, 8))
    d_model, d_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    return (draw(arrays((n, d_model))), draw(arrays((d_model, d_k))),
            draw(arrays((d_model, d_k))), draw(arrays((d_model, d_k))))


@settings(max_examples=60, deadline=None)
@given(heads(), st.booleans(), st.booleans())
def test_rows_sum_to_one(h, causal, scaled):
    r = head.attention_head(*h, causal=causal, scaled=scaled)
    np.testing.assert_allclose(r.weights.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(r.weights >= 0)


@settings(max_examples=60, deadline=None)
@given(heads(), st.booleans(), st.data())
def test_masked_row_is_truncated_row_bit_for_bit(h, scaled, data):
    position = data.draw(st.integers(0, h[0].shape[0] - 1))
    check = head.truncate_check(*h, position, causal=True, scaled=scaled)
    assert check.equal and check.largest_disagreement == 0.0


def test_mask_is_applied_before_the_softmax():
    r = worked_example.run(6)
    assert np.all(r.masked_scores[r.hidden] == -np.inf)
    assert np.all(r.weights[r.hidden] == 0.0)
    # zeroing after the softmax instead would leave rows summing to less than 1
    unmasked = worked_example.run(6, causal=False)
    zeroed_after = np.where(r.hidden, 0.0, unmasked.weights).sum(axis=1)
    assert np.all(zeroed_after[:-1] < 1.0)
    np.testing.assert_allclose(r.weights.sum(axis=1), 1.0, rtol=1e-15)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_the_softmax_subtracts_each_rows_max(causal, scaled, phase):
    # exp(s - max s) is exactly 1 at the row's largest score and below 1 elsewhere; without the
    # subtraction the largest would be exp(max s), which is 1 only when max s is 0
    for n in range(worked_example.MIN_LENGTH, worked_example.MAX_LENGTH + 1):
        r = worked_example.run(n, causal=causal, scaled=scaled, phase=phase)
        assert np.all(np.max(r.masked_scores, axis=1) != 0.0)  # so the check means something
        for sum_fn in (head.ordered_sum, np.sum):
            exps, _, _ = head.softmax_parts(r.masked_scores, sum_fn)
            assert np.all(exps.max(axis=1) == 1.0), (n, sum_fn)
            rows = np.arange(exps.shape[0])
            assert np.all(exps[rows, np.argmax(r.masked_scores, axis=1)] == 1.0)
            assert np.all(exps <= 1.0)
        assert np.all(r.exps.max(axis=1) == 1.0)  # and the head's own intermediates say so


def test_matches_textbook_formula():
    x = worked_example.embeddings(8)
    q, k, v = (x @ w for w in (worked_example.W_QUERY, worked_example.W_KEY,
                               worked_example.W_VALUE))
    s = q @ k.T / np.sqrt(k.shape[1])
    s[np.triu_indices(8, 1)] = -np.inf
    w = np.exp(s - s.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    r = worked_example.run(8)
    np.testing.assert_allclose(r.weights, w, rtol=1e-12)
    np.testing.assert_allclose(r.output, w @ v, rtol=1e-12, atol=1e-15)


def test_effective_tokens_bounds():
    r = worked_example.run(8, causal=False)
    assert np.all(r.effective_tokens >= 1.0 - 1e-12)
    assert np.all(r.effective_tokens <= 8.0 + 1e-12)
    uniform = head.effective_tokens(np.full((1, 4), 0.25))
    np.testing.assert_allclose(uniform, 4.0)


@pytest.mark.parametrize("n", range(1, 9))
def test_counts(n):
    prefill = worked_example.run(n)
    decode = worked_example.run(n, phase="decode")
    assert prefill.dot_products == n * n == head.dot_products(n, "prefill")
    assert decode.dot_products == n == head.dot_products(n, "decode")
    assert prefill.pairs_discarded == n * (n - 1) // 2 == head.pairs_discarded(n, "prefill", True)
    assert worked_example.run(n, causal=False).pairs_discarded == 0
    assert decode.pairs_discarded == 0 == head.pairs_discarded(n, "decode", True)


def test_decode_is_the_last_prefill_row_and_ignores_the_mask():
    for n in range(1, 9):
        on = worked_example.run(n, phase="decode")
        off = worked_example.run(n, phase="decode", causal=False)
        assert on.mask_changes_nothing and "nothing" in on.mask_note
        assert np.array_equal(on.output, off.output)
        assert np.array_equal(on.output[0], worked_example.run(n).output[n - 1])
        assert list(on.query_positions) == [n - 1]


def test_blas_path_agrees_to_rounding():
    for n in range(1, 9):
        for i in range(n):
            check = worked_example.truncate(n, i, exact=False)
            assert check.largest_disagreement < 1e-12


def test_unmasked_truncate_reports_a_mismatch():
    check = worked_example.truncate(6, 2, causal=False)
    assert not check.equal and check.largest_disagreement > 1e-3
    assert worked_example.truncate(6, 5, causal=False).equal  # the last row sees everything


def test_bad_input():
    with pytest.raises(ValueError, match="phase"):
        worked_example.run(6, phase="training")
    with pytest.raises(ValueError, match="sequence length"):
        worked_example.run(9)
    with pytest.raises(ValueError, match="position"):
        worked_example.truncate(6, 6)
