"""Softmax in finite precision: the float16 overflow trap and the max-subtraction fix."""

from dataclasses import dataclass

import numpy as np

DTYPES = {"float32": np.float32, "float16": np.float16}


def largest_finite(dtype):  # float16 -> 65504
    return float(np.finfo(DTYPES[dtype]).max)


@dataclass(frozen=True)
class SoftmaxSteps:
    dtype: str
    subtract_max: bool
    inputs: np.ndarray  # [n] the scores in this dtype
    shifted: np.ndarray  # [n] after subtracting the max (or the inputs)
    exps: np.ndarray  # [n] e^x in this dtype
    total: float
    weights: np.ndarray  # [n]

    @property
    def overflowed(self):  # some e^x exceeded the dtype's largest value
        return bool(np.isinf(self.exps).any())

    @property
    def garbage(self):  # the row no longer sums to 1: inf or nan somewhere
        return bool(~np.all(np.isfinite(self.weights)) or abs(float(self.weights.sum()) - 1) > 1e-2)


def softmax_steps(scores, dtype="float32", subtract_max=True):  # [n] -> SoftmaxSteps
    if dtype not in DTYPES:
        raise ValueError(f"precision must be one of {sorted(DTYPES)}, got {dtype!r}")
    t = DTYPES[dtype]
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("scores must be a non-empty list of finite numbers")
    x = x.astype(t)
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = (x - x.max()).astype(t) if subtract_max else x
        exps = np.exp(shifted).astype(t)
        total = exps.sum(dtype=t)
        weights = (exps / total).astype(t)
    return SoftmaxSteps(dtype, subtract_max, x, shifted, exps, float(total), weights)
