"""Why the √d_k: a query and n keys with independent unit-variance components.

q·k sums d_k products of unit variance, so its standard deviation is √d_k. Without
the divisor the softmax sharpens as d_k grows; with it, the sharpness does not depend
on d_k. One fixed draw of 1024 components is made once; a head of d_k uses the first
d_k of them, so dragging d_k changes only how many components each dot product sums.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MAX_D_K = 1024
DEFAULT_KEYS = 16
MAX_KEYS = 256
# Chosen once by scripts/pick_sqrt_dk_seed.py: a draw with the documents' shape, nearest the
# expectation over many draws (the documents' own figures sit next to that expectation).
DEFAULT_SEED = 3479


@lru_cache(maxsize=32)
def draw(n_keys=DEFAULT_KEYS, seed=DEFAULT_SEED):  # -> q [MAX_D_K], k [n_keys, MAX_D_K]
    if not 1 <= n_keys <= MAX_KEYS:
        raise ValueError(f"number of keys must be in 1..{MAX_KEYS}, got {n_keys}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(MAX_D_K)
    k = rng.standard_normal((n_keys, MAX_D_K))
    q.flags.writeable = k.flags.writeable = False
    return q, k


def softmax(scores):  # [..., n] -> [..., n]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def spread(raw):  # [..., n] scores -> [...]: their standard deviation over the n keys (ddof 0)
    return raw.std(axis=-1)


def effective_count(weights):  # [..., n] -> [...]: exp(entropy), 1 for one-hot, n for uniform
    return np.exp(-np.sum(weights * np.log(np.where(weights > 0, weights, 1.0)), axis=-1))


@dataclass(frozen=True)
class SweepPoint:
    d_k: int
    raw_scores: np.ndarray  # [n_keys] q·k
    scaled_scores: np.ndarray  # [n_keys] q·k / √d_k
    weights_raw: np.ndarray  # [n_keys] softmax without the divisor
    weights_scaled: np.ndarray  # [n_keys] softmax with it
    effective_raw: float
    effective_scaled: float
    spread: float  # measured standard deviation of the raw scores
    sqrt_d_k: float  # what theory says the spread is


def check_d_k(d_k):
    if not 1 <= int(d_k) <= MAX_D_K:
        raise ValueError(f"d_k must be in 1..{MAX_D_K}, got {d_k}")
    return int(d_k)


def sweep_point(d_k, n_keys=DEFAULT_KEYS, seed=DEFAULT_SEED):  # int -> SweepPoint
    d_k = check_d_k(d_k)
    q, k = draw(n_keys, seed)
    raw = k[:, :d_k] @ q[:d_k]
    scaled = raw / np.sqrt(d_k)
    w_raw, w_scaled = softmax(raw), softmax(scaled)
    return SweepPoint(d_k=d_k, raw_scores=raw, scaled_scores=scaled, weights_raw=w_raw,
                      weights_scaled=w_scaled, effective_raw=float(effective_count(w_raw)),
                      effective_scaled=float(effective_count(w_scaled)),
                      spread=float(spread(raw)), sqrt_d_k=float(np.sqrt(d_k)))


def scores_over_d_k(q, k, d_ks):  # [D], [n, D], [m] -> raw [m, n]: prefix dot products
    partial = np.cumsum(k * q, axis=-1)  # [n, D]: every prefix length at once
    return partial[:, np.asarray(d_ks) - 1].T


def effective_curve(d_ks, n_keys=DEFAULT_KEYS, seed=DEFAULT_SEED):
    # [m] -> (effective raw [m], effective scaled [m]) for the one fixed draw
    d_ks = np.asarray([check_d_k(d) for d in d_ks])
    q, k = draw(n_keys, seed)
    raw = scores_over_d_k(q, k, d_ks)
    scaled = raw / np.sqrt(d_ks)[:, None]
    return effective_count(softmax(raw)), effective_count(softmax(scaled))


@dataclass(frozen=True)
class Expectation:
    d_ks: np.ndarray  # [m]
    effective_raw: np.ndarray  # [m] mean over draws
    effective_scaled: np.ndarray  # [m]
    spread: np.ndarray  # [m] mean measured standard deviation of the raw scores
    draws: int
    # the standard error of each mean above: the draws' sample standard deviation / √draws
    effective_raw_se: np.ndarray | None = None
    effective_scaled_se: np.ndarray | None = None
    spread_se: np.ndarray | None = None


@lru_cache(maxsize=16)
def _expectation(d_ks, n_keys, draws, seed, chunk=100):
    d_ks = np.asarray(d_ks)
    rng = np.random.default_rng(seed)
    d_max = int(d_ks.max())
    totals = np.zeros((3, d_ks.size))
    squares = np.zeros((3, d_ks.size))  # for the standard errors of the means
    for start in range(0, draws, chunk):  # chunks keep memory to a few MB
        m = min(chunk, draws - start)
        q = rng.standard_normal((m, 1, d_max))
        k = rng.standard_normal((m, n_keys, d_max))
        raw = np.cumsum(k * q, axis=-1)[:, :, d_ks - 1].transpose(0, 2, 1)  # [m, d, n]
        scaled = raw / np.sqrt(d_ks)[None, :, None]
        per_draw = np.stack([effective_count(softmax(raw)), effective_count(softmax(scaled)),
                             spread(raw)])  # [3, m, d]
        totals += per_draw.sum(1)
        squares += (per_draw ** 2).sum(1)
    mean = totals / draws
    # sample variance of one draw (ddof 1), then the standard error of the mean of `draws`
    var = np.maximum(squares - draws * mean ** 2, 0.0) / max(draws - 1, 1)
    se = np.sqrt(var / draws)
    return Expectation(d_ks=d_ks, effective_raw=mean[0], effective_scaled=mean[1],
                       spread=mean[2], draws=draws, effective_raw_se=se[0],
                       effective_scaled_se=se[1], spread_se=se[2])


def expectation(d_ks, n_keys=DEFAULT_KEYS, draws=400, seed=1):
    # [m] -> Expectation: the mean over many fresh draws, not only the one shown
    d_ks = tuple(check_d_k(d) for d in d_ks)
    return _expectation(d_ks, int(n_keys), int(draws), int(seed))


def three_sigma_range(d_k):  # the ± that unscaled scores swing across three standard deviations
    return 3.0 * np.sqrt(d_k)


def exp_ratio_log10(d_k):  # log10 of e^(2 · 3√d_k): largest over smallest exponential
    return 2.0 * three_sigma_range(d_k) / np.log(10.0)
