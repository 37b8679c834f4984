"""The dot product as an agreement score, and why 128-number scores need the divisor."""

from dataclasses import dataclass

import numpy as np


def dot(a, b):  # [d], [d] -> float: multiply pair by pair, then add
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("the two vectors must be non-empty and the same length")
    return float(np.add.accumulate(a * b)[-1])


def angle_degrees(a, b):  # [d], [d] -> float in [0, 180]; nan when a vector is zero
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    if norms == 0:
        return float("nan")
    return float(np.degrees(np.arccos(np.clip(dot(a, b) / norms, -1.0, 1.0))))


# The verdict's zones, symmetric about 90°: within 10° of a right angle is perpendicular,
# within 45° of either end aligned or opposed, and between them the vectors only lean.
PERPENDICULAR_WITHIN = 10.0
PARALLEL_WITHIN = 45.0
AGREEMENT_ZONES = (  # (verdict, from°, to°) in the order of the angle
    ("aligned", 0.0, PARALLEL_WITHIN),
    ("leaning together", PARALLEL_WITHIN, 90.0 - PERPENDICULAR_WITHIN),
    ("perpendicular", 90.0 - PERPENDICULAR_WITHIN, 90.0 + PERPENDICULAR_WITHIN),
    ("leaning apart", 90.0 + PERPENDICULAR_WITHIN, 180.0 - PARALLEL_WITHIN),
    ("opposed", 180.0 - PARALLEL_WITHIN, 180.0),
)


def agreement(a, b):  # -> one of AGREEMENT_ZONES' verdicts, or "undefined (a zero vector)"
    angle = angle_degrees(a, b)
    if np.isnan(angle):
        return "undefined (a zero vector)"
    if abs(angle - 90) <= PERPENDICULAR_WITHIN:  # both edges of 80°-100° included
        return "perpendicular"
    near = min(angle, 180 - angle) < PARALLEL_WITHIN  # within 45° of parallel
    if angle < 90:
        return "aligned" if near else "leaning together"
    return "opposed" if near else "leaning apart"


def operations(d):  # d multiplies and d − 1 adds, counted as 2d (a multiply-add is 2)
    return 2 * d


@dataclass(frozen=True)
class ScaleDemo:
    d: int
    raw: np.ndarray  # [n_keys] q·k with unit-variance entries
    scaled: np.ndarray  # [n_keys] divided by √d
    weights_raw: np.ndarray
    weights_scaled: np.ndarray
    spread_raw: float  # measured standard deviation
    spread_scaled: float


def scale_demo(d=128, n_keys=8, seed=4):  # unit-variance query and keys -> ScaleDemo
    # seed 4: a draw whose raw spread (10.9) sits at the documents' ±11
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal((n_keys, d))
    raw = k @ q
    scaled = raw / np.sqrt(d)

    def softmax(s):
        e = np.exp(s - s.max())
        return e / e.sum()

    return ScaleDemo(d, raw, scaled, softmax(raw), softmax(scaled), float(raw.std()),
                     float(scaled.std()))
