"""Online softmax and tiled attention: never write the whole row, or the n × n square.

Walk the keys block by block keeping a running max m and a running sum l of
e^(s − m). When a block raises the max, the old sum is rescaled by e^(m_old − m_new)
before the block's terms are added; at the end l is exactly the full row's sum relative
to the row max. Attention carries an output accumulator rescaled the same way, as the
tiled loop of PyTorch's CPU FlashAttention kernel does (max, sum, rescale, accumulate).
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BlockStep:
    index: int
    block: tuple  # the scores of this block
    old_max: float  # −inf before the first block
    new_max: float
    rescale: float  # e^(old max − new max): 1.0 when the max did not rise, 0.0 at the start
    old_sum: float
    block_sum: float  # Σ e^(s − new max) over the block
    new_sum: float  # old_sum · rescale + block_sum


@dataclass(frozen=True)
class OnlineSoftmax:
    steps: tuple  # of BlockStep
    running_max: float
    running_sum: float  # Σ e^(s − max) over the whole row, built block by block
    full_sum: float  # the same sum computed over the whole row at once
    weights: np.ndarray  # [n] e^(s − max) / running_sum


def blocks_of(scores, block_size):  # [n], int -> list of [≤ block_size]
    if block_size < 1:
        raise ValueError(f"block size must be at least 1, got {block_size}")
    return [scores[i:i + block_size] for i in range(0, len(scores), block_size)]


def online_softmax(scores, block_size=2):  # [n] -> OnlineSoftmax
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty list of numbers")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite numbers")
    m, l, steps = -np.inf, 0.0, []
    for i, block in enumerate(blocks_of(scores, block_size)):
        m_new = max(m, float(block.max()))
        rescale = float(np.exp(m - m_new))  # e^(−inf) = 0 before the first block
        block_sum = float(np.exp(block - m_new).sum())
        steps.append(BlockStep(i, tuple(block.tolist()), m, m_new, rescale, l, block_sum,
                               l * rescale + block_sum))
        m, l = m_new, l * rescale + block_sum
    full_sum = float(np.exp(scores - scores.max()).sum())
    return OnlineSoftmax(tuple(steps), m, l, full_sum, np.exp(scores - m) / l)


def naive_attention(q, k, v, *, causal=False, scale=None):
    # [n_q, d], [n_k, d], [n_k, d_v] -> [n_q, d_v]; builds the whole n_q × n_k matrix
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.T) * scale
    if causal:  # query i is position i + (n_k − n_q): the last query sees every key
        offset = k.shape[0] - q.shape[0]
        s = np.where(np.arange(k.shape[0])[None] > np.arange(q.shape[0])[:, None] + offset,
                     -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


@dataclass(frozen=True)
class TiledResult:
    output: np.ndarray  # [n_q, d_v]
    blocks_computed: int
    blocks_skipped: int  # whole blocks above the diagonal, never touched
    largest_scores_held: int  # the most scores alive at once: one block


def tiled_attention(q, k, v, *, causal=False, scale=None, block_q=64, block_k=64):
    # [n_q, d], [n_k, d], [n_k, d_v] -> TiledResult; holds one block_q × block_k tile of scores
    n_q, n_k = q.shape[0], k.shape[0]
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    offset = n_k - n_q
    out = np.empty((n_q, v.shape[-1]), dtype=np.result_type(q, k, v))
    computed = skipped = held = 0
    for q0 in range(0, n_q, block_q):
        qb = q[q0:q0 + block_q]
        rows = np.arange(q0, q0 + qb.shape[0])[:, None] + offset
        m = np.full((qb.shape[0], 1), -np.inf)
        l = np.zeros((qb.shape[0], 1))
        acc = np.zeros((qb.shape[0], v.shape[-1]))
        for k0 in range(0, n_k, block_k):
            if causal and k0 > rows[-1, 0]:  # the whole tile lies above the diagonal
                skipped += 1
                continue
            computed += 1
            s = (qb @ k[k0:k0 + block_k].T) * scale
            held = max(held, s.size)
            if causal:
                s = np.where(np.arange(k0, k0 + s.shape[1])[None] > rows, -np.inf, s)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            safe = np.where(np.isfinite(m_new), m_new, 0.0)  # a row with nothing seen yet
            rescale = np.exp(m - safe)
            p = np.exp(s - safe)
            l = l * rescale + p.sum(axis=-1, keepdims=True)
            acc = acc * rescale + p @ v[k0:k0 + block_k]
            m = m_new
        out[q0:q0 + qb.shape[0]] = acc / l
    return TiledResult(out, computed, skipped, held)


@dataclass(frozen=True)
class AttentionStep:
    index: int
    keys: tuple  # key positions in this block
    scores: tuple
    running_max: float
    rescale: float
    running_sum: float
    accumulator: tuple  # Σ e^(s − m) v so far, before dividing by the sum
    output_so_far: tuple  # accumulator / running_sum


def attention_walk(q_row, k, v, *, block_size=2, scale=None):
    # [d], [n, d], [n, d_v] -> (steps, output [d_v]): one query's tiled pass, for stepping through
    q_row, k, v = (np.asarray(a, dtype=np.float64) for a in (q_row, k, v))
    scale = 1.0 / np.sqrt(q_row.shape[-1]) if scale is None else scale
    m, l, acc, steps = -np.inf, 0.0, np.zeros(v.shape[-1]), []
    for i, k0 in enumerate(range(0, k.shape[0], block_size)):
        s = (k[k0:k0 + block_size] @ q_row) * scale
        m_new = max(m, float(s.max()))
        rescale = float(np.exp(m - m_new))
        p = np.exp(s - m_new)
        l = l * rescale + float(p.sum())
        acc = acc * rescale + p @ v[k0:k0 + block_size]
        m = m_new
        steps.append(AttentionStep(i, tuple(range(k0, k0 + len(s))), tuple(s.tolist()), m,
                                   rescale, l, tuple(acc.tolist()), tuple((acc / l).tolist())))
    return tuple(steps), acc / l


def scores_held_bytes(n, *, heads=1, bytes_per_value=4, block=None):
    # the naive kernel holds n × n scores per head; the tiled one a block × block tile
    side = n if block is None else min(block, n)
    return heads * side * side * bytes_per_value
