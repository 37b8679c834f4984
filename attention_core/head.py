"""One attention head, every reduction in a fixed order.

softmax(Q Kᵀ / √d_k) V with the causal mask applied as −∞ before the softmax.
Sums run in index order (np.add.accumulate is sequential by definition), so row i
of a masked pass over n tokens is bit-for-bit row i of a pass over i + 1 tokens:
the extra keys add exact zeros. `head_blas` is the same head with `@` and np.sum,
whose order of additions changes with the array's shape.
"""

from dataclasses import dataclass

import numpy as np

PHASES = ("prefill", "decode")


def ordered_sum(x, axis=-1):  # [..., m, ...] -> [...]: x[0] + x[1] + ... in index order
    return np.take(np.add.accumulate(x, axis=axis), -1, axis=axis)


def linear(x, w):  # [n, d_in], [d_in, d_out] -> [n, d_out]
    return ordered_sum(x[:, :, None] * w[None, :, :], axis=1)


def dot_scores(q, k):  # [n_q, d_k], [n_k, d_k] -> [n_q, n_k]
    return ordered_sum(q[:, None, :] * k[None, :, :], axis=-1)


def causal_mask(query_positions, n_k):  # [n_q], int -> [n_q, n_k] bool, True where hidden
    return np.arange(n_k)[None, :] > np.asarray(query_positions)[:, None]


def softmax_parts(scores, sum_fn=ordered_sum):  # [n_q, n_k] -> exps, sums [n_q], weights
    row_max = np.max(scores, axis=-1, keepdims=True)  # max is exact in any order
    exps = np.exp(scores - row_max)
    sums = sum_fn(exps, axis=-1)
    return exps, sums, exps / sums[:, None]


def weighted_sum(weights, v):  # [n_q, n_k], [n_k, d_v] -> [n_q, d_v]
    return ordered_sum(weights[:, :, None] * v[None, :, :], axis=1)


def effective_tokens(weights, sum_fn=ordered_sum):  # [n_q, n_k] -> [n_q]: exp(entropy)
    safe = np.where(weights > 0, weights, 1.0)
    return np.exp(-sum_fn(np.where(weights > 0, weights * np.log(safe), 0.0), axis=-1))


@dataclass(frozen=True)
class HeadResult:
    """Every intermediate of one head for one setting of the controls."""

    phase: str
    causal: bool
    scaled: bool
    d_k: int
    query_positions: np.ndarray  # [n_q]
    q: np.ndarray  # [n_q, d_k]
    k: np.ndarray  # [n, d_k]
    v: np.ndarray  # [n, d_v]
    raw_scores: np.ndarray  # [n_q, n]  q·k
    scaled_scores: np.ndarray  # [n_q, n]  after the divisor (or raw when it is off)
    hidden: np.ndarray  # [n_q, n] bool: the mask's −∞ cells
    masked_scores: np.ndarray  # [n_q, n]  −∞ where hidden
    exps: np.ndarray  # [n_q, n]
    sums: np.ndarray  # [n_q]
    weights: np.ndarray  # [n_q, n]
    output: np.ndarray  # [n_q, d_v]
    effective_tokens: np.ndarray  # [n_q]

    @property
    def n(self):
        return self.k.shape[0]

    @property
    def dot_products(self):  # prefill n², decode n
        return int(self.raw_scores.size)

    @property
    def pairs_discarded(self):  # scores computed, then overwritten with −∞
        return int(self.hidden.sum())

    @property
    def mask_changes_nothing(self):
        return not self.hidden.any()

    @property
    def mask_note(self):
        if self.phase == "decode":
            return ("decode runs one query, the newest token, and every key is at or before it: "
                    "the causal mask has no future key to hide, so turning it on or off changes nothing")  # noqa: E501
        if not self.causal:
            return "mask off: every query sees every key, future ones included"
        return (f"mask on: {self.pairs_discarded} of {self.dot_products} scores are computed, "
                "then set to −∞ before the softmax")

    def row(self, position):  # index into the query rows by token position
        rows = np.flatnonzero(self.query_positions == position)
        if rows.size == 0:
            raise ValueError(f"position {position} is not a query in {self.phase}")
        return int(rows[0])


def attention_head(x, w_q, w_k, w_v, *, causal=True, scaled=True, phase="prefill", exact=True):
    # [n, d_model], [d_model, d_k] x3 -> HeadResult. exact=False uses BLAS and pairwise sums.
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if n < 1:
        raise ValueError("need at least one token")
    positions = np.arange(n) if phase == "prefill" else np.array([n - 1])
    if exact:
        proj, scores_fn, sum_fn, mix = linear, dot_scores, ordered_sum, weighted_sum
    else:
        proj, scores_fn, mix = np.matmul, lambda a, b: a @ b.T, np.matmul
        sum_fn = np.sum
    q = proj(x[positions], w_q)
    k, v = proj(x, w_k), proj(x, w_v)
    d_k = k.shape[1]
    raw = scores_fn(q, k)
    scaled_scores = raw / np.sqrt(d_k) if scaled else raw
    hidden = causal_mask(positions, n) if causal else np.zeros(raw.shape, dtype=bool)
    masked = np.where(hidden, -np.inf, scaled_scores)
    exps, sums, weights = softmax_parts(masked, sum_fn)
    return HeadResult(
        phase=phase, causal=causal, scaled=scaled, d_k=d_k, query_positions=positions,
        q=q, k=k, v=v, raw_scores=raw, scaled_scores=scaled_scores, hidden=hidden,
        masked_scores=masked, exps=exps, sums=sums, weights=weights,
        output=mix(weights, v), effective_tokens=effective_tokens(weights, sum_fn),
    )


@dataclass(frozen=True)
class TruncateCheck:
    """Row i of the pass over n tokens against row i of a pass over the first i + 1."""

    position: int
    n: int
    equal: bool  # bit for bit
    largest_disagreement: float  # max |difference| over the output row and the weights


def truncate_check(x, w_q, w_k, w_v, position, *, causal=True, scaled=True, exact=True):
    # [n, d_model], ... , int -> TruncateCheck
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if not 0 <= position < n:
        raise ValueError(f"position must be in 0..{n - 1}, got {position}")
    full = attention_head(x, w_q, w_k, w_v, causal=causal, scaled=scaled, exact=exact)
    cut = attention_head(x[: position + 1], w_q, w_k, w_v, causal=causal, scaled=scaled,
                         exact=exact)
    full_weights = full.weights[position]
    diffs = np.concatenate([
        np.abs(full.output[position] - cut.output[position]),
        np.abs(full_weights[: position + 1] - cut.weights[position]),
        np.abs(full_weights[position + 1:]),  # a pass over i + 1 tokens gives these 0
    ])
    largest = float(diffs.max())
    return TruncateCheck(position=position, n=n, equal=largest == 0.0,
                         largest_disagreement=largest)


def dot_products(n, phase):  # prefill runs n queries against n keys, decode one query
    return n * n if phase == "prefill" else n


def pairs_discarded(n, phase, causal):  # a naive masked prefill computes, then drops, these
    return n * (n - 1) // 2 if (phase == "prefill" and causal) else 0
