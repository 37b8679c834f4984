"""FlashAttention, tile by tile: the forward pass that never writes the n × n scores down.

`tiled_forward` follows FlashAttention-2's forward pass (Dao, 2023, Algorithm 1): an outer
loop over blocks of B_r query rows, an inner loop over blocks of B_c keys. For each tile it
computes S = Q_i K_jᵀ / √d, the tile's row maxima, the new running max m, P̃ = e^(S − m),
the rescale e^(m_old − m_new), the running sum ℓ and the output accumulator O, then after
a row block's last tile divides O by ℓ and keeps the log-sum-exp L = m + log ℓ. The
published algorithm's line 10 has an extra inverse on the rescale (an erratum, reported as
Dao-AILab/flash-attention issue 991); this follows the corrected form, O ← diag(e^(m_old −
m_new)) O + P̃ V_j. With the causal mask a tile wholly above the diagonal is never visited
and a tile the diagonal crosses is masked, as the real kernels do.

The rest counts what the tiling buys: the bytes moved between GPU memory (HBM) and on-chip
memory by the standard implementation (S and P written and read back) against the tiled one
(Q read once, K and V once per query block, O written once), the block sizes FlashAttention's
rule picks for an on-chip memory of M values, and the tiles and FLOPs causal skipping saves.
"""

import math
from dataclasses import dataclass

import numpy as np

FULL, DIAGONAL, SKIPPED = "full", "diagonal", "skipped"  # a tile under the causal mask


@dataclass(frozen=True)
class TileStep:
    """One visited tile: query rows [row_start, row_stop) against keys [col_start, col_stop)."""

    index: int  # visit order, from 0
    row_block: int
    col_block: int
    rows: tuple  # (start, stop)
    cols: tuple  # (start, stop)
    kind: str  # FULL or DIAGONAL (masked inside)
    scores: np.ndarray  # [B_r, B_c] S = Q_i K_jᵀ / √d, −∞ where the mask hides a key
    tile_max: np.ndarray  # [B_r] the tile's row maxima (−∞ for a row it hides wholly)
    old_max: np.ndarray  # [B_r] m before this tile (−∞ before the first)
    new_max: np.ndarray  # [B_r] max(m_old, tile_max)
    rescale: np.ndarray  # [B_r] e^(m_old − m_new): 0 at the first tile, 1 where m held
    p: np.ndarray  # [B_r, B_c] P̃ = e^(S − m_new)
    old_sum: np.ndarray  # [B_r] ℓ before
    new_sum: np.ndarray  # [B_r] rescale · ℓ_old + rowsum(P̃)
    old_acc: np.ndarray  # [B_r, d_v] O before (not yet divided by ℓ)
    new_acc: np.ndarray  # [B_r, d_v] rescale · O_old + P̃ V_j
    last: bool  # the row block's last tile: its rows are finished after it
    output: np.ndarray | None  # [B_r, d_v] O / ℓ, on a row block's last tile
    lse: np.ndarray | None  # [B_r] L = m + log ℓ, on a row block's last tile


@dataclass(frozen=True)
class TiledRun:
    steps: tuple  # of TileStep, in the order the kernel visits them
    output: np.ndarray  # [n, d_v]
    lse: np.ndarray  # [n] the log-sum-exp of each row's scores, kept for the backward pass
    block_rows: int
    block_cols: int
    causal: bool
    kinds: tuple  # [T_r][T_c] FULL, DIAGONAL or SKIPPED for every tile of the grid


def blocks(n, size):  # -> [(start, stop)] covering 0..n in blocks of size (the last may be short)
    if size < 1:
        raise ValueError(f"a block size must be at least 1, got {size}")
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def tile_kind(rows, cols, causal):  # (start, stop) x2 -> FULL, DIAGONAL or SKIPPED
    if not causal or cols[1] - 1 <= rows[0]:  # every key at or before the first row
        return FULL
    if cols[0] > rows[1] - 1:  # every key after the last row: above the diagonal
        return SKIPPED
    return DIAGONAL


def tile_kinds(n, block_rows, block_cols, causal):  # -> [T_r][T_c] of the three kinds
    return tuple(tuple(tile_kind(r, c, causal) for c in blocks(n, block_cols))
                 for r in blocks(n, block_rows))


def carried(values, factor):  # [B_r] or [B_r, d_v], [B_r] -> ℓ or O carried into the new max:
    # multiplied by e^(m_old − m_new) (the published line 10 divides O by it: the erratum)
    return factor * values if values.ndim == 1 else factor[:, None] * values


def tiled_forward(q, k, v, *, block_rows, block_cols, causal=False, scale=None):
    # [n, d], [n, d], [n, d_v] -> TiledRun: FlashAttention-2's forward pass, every tile kept
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n = q.shape[0]
    if k.shape[0] != n or v.shape[0] != n:
        raise ValueError("the stepper runs a prefill: Q, K and V have the same number of rows")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    kinds = tile_kinds(n, block_rows, block_cols, causal)
    output, lse, steps = np.empty((n, v.shape[-1])), np.empty(n), []
    for i, rows in enumerate(blocks(n, block_rows)):
        r0, r1 = rows
        m = np.full(r1 - r0, -np.inf)
        ell = np.zeros(r1 - r0)
        acc = np.zeros((r1 - r0, v.shape[-1]))
        visited = [(j, cols) for j, cols in enumerate(blocks(n, block_cols))
                   if kinds[i][j] != SKIPPED]
        for at, (j, cols) in enumerate(visited):
            c0, c1 = cols
            s = (q[r0:r1] @ k[c0:c1].T) * scale
            if kinds[i][j] == DIAGONAL:
                s = np.where(np.arange(c0, c1)[None] > np.arange(r0, r1)[:, None], -np.inf, s)
            tile_max = s.max(axis=1)
            m_new = np.maximum(m, tile_max)  # finite: the first tile holds key 0
            rescale = np.exp(m - m_new)
            p = np.exp(s - m_new[:, None])
            ell_new = carried(ell, rescale) + p.sum(axis=1)
            acc_new = carried(acc, rescale) + p @ v[c0:c1]
            last = at == len(visited) - 1
            out = acc_new / ell_new[:, None] if last else None
            row_lse = m_new + np.log(ell_new) if last else None
            steps.append(TileStep(len(steps), i, j, rows, cols, kinds[i][j], s, tile_max, m,
                                  m_new, rescale, p, ell, ell_new, acc, acc_new, last, out,
                                  row_lse))
            m, ell, acc = m_new, ell_new, acc_new
        output[r0:r1], lse[r0:r1] = acc / ell[:, None], m + np.log(ell)
    return TiledRun(tuple(steps), output, lse, block_rows, block_cols, causal, kinds)


def reference(q, k, v, *, causal=False, scale=None):
    # -> (output [n, d_v], lse [n]): the whole square at once, softmax(QKᵀ/√d)V, in float64
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.T) * scale
    if causal:
        s = np.where(np.triu(np.ones(s.shape, dtype=bool), 1), -np.inf, s)
    top = s.max(axis=1, keepdims=True)
    e = np.exp(s - top)
    total = e.sum(axis=1, keepdims=True)
    return (e / total) @ v, (top + np.log(total))[:, 0]


# --- what the tiling buys: tiles skipped, FLOPs, bytes moved --------------------------------

@dataclass(frozen=True)
class TileCount:
    tiles: int  # T_r × T_c
    full: int
    diagonal: int
    skipped: int
    flops_square: int  # QKᵀ and PV over all n² pairs: 4 n² d (an additive mask computes all)
    flops_visited: int  # the same over the tiles a causal kernel visits
    pairs_kept: int  # n (n + 1) / 2 under the mask, n² without


def tile_rows(n, block_rows, block_cols, causal):  # -> [(rows, full, skipped, keys seen)]
    # tile_kind's rule for a whole row of tiles at once, not tile by tile (a long prompt has
    # millions of tiles: 131,072 tokens in 128 x 64 tiles, 2 M): per query block, its FULL
    # and SKIPPED tiles and the keys of the tiles it visits
    cols = len(blocks(n, block_cols))
    out = []
    for r0, r1 in blocks(n, block_rows):
        if not causal:
            out.append(((r0, r1), cols, 0, n))
            continue
        # key blocks ending at or before row r0; key blocks starting after row r1 - 1
        full = cols if n <= r0 + 1 else min(cols, (r0 + 1) // block_cols)
        skipped = cols - min(cols, -(-r1 // block_cols))
        out.append(((r0, r1), full, skipped, min((cols - skipped) * block_cols, n)))
    return out


def tile_count(n, d, block_rows, block_cols, causal):  # -> TileCount
    rows, cols = tile_rows(n, block_rows, block_cols, causal), len(blocks(n, block_cols))
    full = sum(r[1] for r in rows)
    skipped = sum(r[2] for r in rows)
    visited = sum((r1 - r0) * seen for (r0, r1), _, _, seen in rows)
    return TileCount(
        tiles=len(rows) * cols, full=full, diagonal=len(rows) * cols - full - skipped,
        skipped=skipped, flops_square=4 * n * n * d, flops_visited=4 * visited * d,
        pairs_kept=n * (n + 1) // 2 if causal else n * n)


def block_sizes(on_chip_values, d):  # M values of on-chip memory, head dim -> (B_r, B_c)
    # FlashAttention's rule (Dao et al., 2022, Algorithm 1): B_c = ⌈M / 4d⌉, B_r = min(B_c, d)
    if on_chip_values < 4 * d:
        raise ValueError(f"on-chip memory of {on_chip_values} values holds no tile of d = {d}")
    cols = math.ceil(on_chip_values / (4 * d))
    return min(cols, d), cols


@dataclass(frozen=True)
class Traffic:
    """Bytes between GPU memory and on-chip memory for one head's forward pass."""

    standard: int  # S written, read, P written, read back: (4 n d + 4 n²) values
    tiled: int  # Q and O once, K and V once per visited tile, L once (fp32)
    standard_square: int  # of standard: the 4 n² values of S and P
    kv_reads: int  # of tiled: K and V, read again for every query block


def traffic(n, d, block_rows, block_cols, *, causal=False, bytes_per_value=2, lse_bytes=4):
    # -> Traffic. Standard: FlashAttention's Algorithm 0 (S = QKᵀ written, read for the
    # softmax, P written, read for PV); the mask's own pass over S is not counted.
    square = 4 * n * n * bytes_per_value
    standard = 4 * n * d * bytes_per_value + square
    # K and V: the keys of every tile a query block visits
    kv = sum(2 * seen * d for *_, seen in tile_rows(n, block_rows, block_cols, causal))
    kv *= bytes_per_value
    tiled = 2 * n * d * bytes_per_value + kv + n * lse_bytes
    return Traffic(standard, tiled, square, kv)
