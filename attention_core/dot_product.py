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


def agreement(a, b, tolerance_degrees=10.0):  # -> "aligned" | "perpendicular" | "opposed" | ...
    angle = angle_degrees(a, b)
    if np.isnan(angle):
        return "undefined (a zero vector)"
    if abs(angle - 90) <= tolerance_degrees:
        return "perpendicular"
    return "aligned" if angle < 90 else "opposed"


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
