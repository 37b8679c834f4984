"""The documents' figures for the worked example, at 2-decimal rounding."""

import numpy as np

from attention_core import worked_example as we


def test_defaults_row_2():
    r = we.run(6)
    assert we.tokens(6)[1:3] == ("cat", "sat")
    assert round(r.weights[2, 1], 2) == 0.77
    assert round(r.weights[2, 0], 2) == 0.07
    assert round(r.effective_tokens[2], 2) == 1.98


def test_mask_off():
    r = we.run(6, causal=False)
    assert we.tokens(6)[5] == "mat"
    assert round(r.weights[2, 5], 2) == 0.23
    assert np.array_equal(r.weights[0], r.weights[4])
    assert np.array_equal(r.output[0], r.output[4])


def test_mask_on_rows_0_and_4_differ():
    r = we.run(6)
    assert not np.array_equal(r.weights[0], r.weights[4])


def test_divisor_off():
    r = we.run(6, scaled=False)
    assert round(r.weights[2, 1], 2) == 0.97
    assert round(r.effective_tokens[2], 2) == 1.17
    np.testing.assert_allclose(r.scaled_scores / we.run(6).scaled_scores, np.sqrt(5))


def test_length_8_discards_28_of_64():
    r = we.run(8)
    assert (r.pairs_discarded, r.dot_products) == (28, 64)
    assert we.run(8, causal=False).pairs_discarded == 0


def test_truncate_identity_every_row_every_length():
    for n in range(1, 9):
        for i in range(n):
            for scaled in (True, False):
                check = we.truncate(n, i, scaled=scaled)
                assert check.equal and check.largest_disagreement == 0.0, (n, i, scaled)


def test_fit_script_is_deterministic(tmp_path):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "scripts" / "fit_worked_example.py"
    spec = importlib.util.spec_from_file_location("fit", path)
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    seed, emb, w_q, w_k, w_v, _ = fit.fit()
    written = (path.parents[1] / "attention_core" / "worked_example_constants.py").read_text()
    assert fit.render(seed, emb, w_q, w_k, w_v) == written
