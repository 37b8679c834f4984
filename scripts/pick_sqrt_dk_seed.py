"""Pick the √d_k panel's fixed draw once: the first seed whose draw shows the documents' shape.

Shape, as the documents describe it over d_k = 4, 16, 128, 512 with 16 keys: unscaled
effective keys fall monotonically and end below 1.5; scaled ones stay within ±10% of
their mean; the measured spread is within 15% of √d_k at each. Among the first 10,000
seeds that qualify, take the one nearest the expectation over many draws (which is what
the document's own figures sit next to). Prints the seed for attention_core/sqrt_dk.py.
"""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from attention_core import sqrt_dk

D_KS = np.array([4, 16, 128, 512])


def shape_holds(raw_eff, scaled_eff, spread):
    return (np.all(np.diff(raw_eff) < 0) and raw_eff[-1] < 1.5
            and np.all(np.abs(scaled_eff / scaled_eff.mean() - 1) <= 0.10)
            and np.all(np.abs(spread / np.sqrt(D_KS) - 1) <= 0.15))


def main(seeds=10_000):
    mean = sqrt_dk.expectation(D_KS, draws=2000)
    target = np.concatenate([mean.effective_raw, mean.effective_scaled])
    best = None
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        q = rng.standard_normal(sqrt_dk.MAX_D_K)
        k = rng.standard_normal((sqrt_dk.DEFAULT_KEYS, sqrt_dk.MAX_D_K))
        raw = sqrt_dk.scores_over_d_k(q, k, D_KS)
        raw_eff = sqrt_dk.effective_count(sqrt_dk.softmax(raw))
        scaled_eff = sqrt_dk.effective_count(sqrt_dk.softmax(raw / np.sqrt(D_KS)[:, None]))
        if not shape_holds(raw_eff, scaled_eff, raw.std(axis=1)):
            continue
        err = np.abs(np.concatenate([raw_eff, scaled_eff]) / target - 1).max()
        if best is None or err < best[0]:
            best = (err, seed)
    print(f"DEFAULT_SEED = {best[1]}  (largest relative distance from the expectation {best[0]:.3f})")  # noqa: E501


if __name__ == "__main__":
    main()
