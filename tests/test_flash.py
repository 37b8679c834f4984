"""FlashAttention tile by tile (attention_core.flash): the tiled forward pass against the formula,
every intermediate against its definition, the erratum and a dropped rescale caught, and the
counts of tiles, FLOPs and bytes against hand-worked sums."""

import math

import numpy as np
import pytest
import torch

from attention_core import flash, worked_example

BLOCKS = (1, 2, 3, 4, 5, 8, 13, 32)


def inputs(n, d, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)) * 2 for _ in range(3))


def formula(q, k, v, causal):  # softmax(QKᵀ/√d)V and each row's log-sum-exp, written out again
    n, d = q.shape
    out, lse = np.empty_like(v), np.empty(n)
    for i in range(n):
        keys = range(i + 1) if causal else range(n)
        s = [float(q[i] @ k[j]) / math.sqrt(d) for j in keys]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        total = math.fsum(e)
        out[i] = sum(w / total * v[j] for w, j in zip(e, keys))
        lse[i] = top + math.log(total)
    return out, lse


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n, d", [(8, 4), (13, 8), (32, 8), (32, 4)])
def test_the_output_and_log_sum_exp_equal_the_formula_for_every_tiling(n, d, causal):
    q, k, v = inputs(n, d, seed=n + d)
    want_out, want_lse = formula(q, k, v, causal)
    for rows in BLOCKS:
        for cols in BLOCKS:
            run = flash.tiled_forward(q, k, v, block_rows=rows, block_cols=cols, causal=causal)
            np.testing.assert_allclose(run.output, want_out, rtol=0, atol=1e-12)
            np.testing.assert_allclose(run.lse, want_lse, rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_the_worked_example_agrees_with_pytorchs_sdpa(causal):
    h = worked_example.run(8, causal=causal)
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a)[None, None] for a in (h.q, h.k, h.v)), is_causal=causal)[0, 0]
    for rows, cols in ((2, 2), (4, 2), (2, 4), (3, 5)):
        run = flash.tiled_forward(h.q, h.k, h.v, block_rows=rows, block_cols=cols, causal=causal)
        np.testing.assert_allclose(run.output, want.numpy(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(run.output, h.output, rtol=0, atol=1e-12)


def intermediates_problems(run, q, k, v):  # -> [what disagrees]: every step's m, ℓ and O
    # against their definitions over the keys read so far (no recurrence), and every tile's
    # kind against where it lies
    d, out = q.shape[1], []
    for s in run.steps:
        for a, row in enumerate(range(*s.rows)):
            for end, m, ell, acc, when in ((s.cols[0], s.old_max, s.old_sum, s.old_acc, "before"),
                                           (s.cols[1], s.new_max, s.new_sum, s.new_acc, "after")):
                keys = [j for j in range(end) if not (run.causal and j > row)]
                scores = np.array([q[row] @ k[j] / math.sqrt(d) for j in keys])
                top = scores.max() if keys else -math.inf
                weights = np.exp(scores - top) if keys else np.zeros(0)
                want = (top, weights.sum(), weights @ v[keys] if keys else np.zeros(v.shape[1]))
                got = (m[a], ell[a], acc[a])
                if not (np.isclose(got[0], want[0], atol=1e-12, rtol=0) or got[0] == want[0]):
                    out.append(f"step {s.index} row {row} m {when}")
                if not np.isclose(got[1], want[1], atol=1e-12, rtol=0):
                    out.append(f"step {s.index} row {row} ℓ {when}")
                if not np.allclose(got[2], want[2], atol=1e-12, rtol=0):
                    out.append(f"step {s.index} row {row} O {when}")
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("rows, cols", [(2, 2), (4, 2), (2, 4), (3, 5), (8, 1)])
def test_every_intermediate_equals_its_definition(rows, cols, causal):
    q, k, v = inputs(16, 4, seed=3)
    run = flash.tiled_forward(q, k, v, block_rows=rows, block_cols=cols, causal=causal)
    assert intermediates_problems(run, q, k, v) == []
    for s in run.steps:  # what a step shows follows from what it carries
        np.testing.assert_allclose(s.rescale, np.exp(s.old_max - s.new_max), rtol=1e-15)
        if s.last:
            np.testing.assert_allclose(s.output, s.new_acc / s.new_sum[:, None], rtol=1e-15)
            np.testing.assert_allclose(s.lse, s.new_max + np.log(s.new_sum), rtol=1e-15)


@pytest.mark.parametrize("mutant", [
    lambda values, factor: values / factor if values.ndim == 2 else factor * values,  # erratum
    lambda values, factor: values,  # the rescale dropped
])
def test_the_erratums_inverse_and_a_dropped_rescale_are_caught(monkeypatch, mutant):
    q, k, v = inputs(16, 4, seed=3)
    for causal in (False, True):  # the honest pass first: the checks can pass
        run = flash.tiled_forward(q, k, v, block_rows=4, block_cols=4, causal=causal)
        assert intermediates_problems(run, q, k, v) == []
    with monkeypatch.context() as m:
        m.setattr(flash, "carried", lambda values, factor: mutant(values, np.where(
            factor == 0, 1e-300, factor)))  # a first tile's factor of 0 stays finite
        run = flash.tiled_forward(q, k, v, block_rows=4, block_cols=4, causal=False)
    assert intermediates_problems(run, q, k, v)
    assert not np.allclose(run.output, formula(q, k, v, False)[0], atol=1e-6)


def test_the_causal_kernel_visits_no_tile_above_the_diagonal():
    run = flash.tiled_forward(*inputs(8, 4), block_rows=2, block_cols=4, causal=True)
    # rows 0-3 against keys 4-7 lie above the diagonal; the diagonal crosses keys 0-3 for
    # rows 0-1 and 2-3 (key 3 follows row 2) and keys 4-7 for rows 4-5 and 6-7
    assert run.kinds == (("diagonal", "skipped"), ("diagonal", "skipped"),
                         ("full", "diagonal"), ("full", "diagonal"))
    assert [(s.row_block, s.col_block) for s in run.steps] == [
        (0, 0), (1, 0), (2, 0), (2, 1), (3, 0), (3, 1)]
    assert [s.last for s in run.steps] == [True, True, False, True, False, True]
    with pytest.raises(ValueError, match="at least 1"):
        flash.tiled_forward(*inputs(8, 4), block_rows=0, block_cols=2)


def test_tiles_and_flops_skipped_at_llama_sizes_match_a_hand_count():
    # 8,192 tokens in 128-row, 64-key tiles: query block i ends at row 128i + 127, so key
    # blocks j ≥ 2i + 2 lie above the diagonal, 126 − 2i of the 128: Σ over i < 64 is 4,032
    c = flash.tile_count(8192, 128, 128, 64, causal=True)
    assert (c.tiles, c.skipped, c.diagonal) == (64 * 128, 4032, 64 * 2)
    assert c.full == 8192 - 4032 - 128
    assert c.flops_square == 4 * 8192 ** 2 * 128
    assert c.flops_visited == 4 * 128 * 64 * 128 * (8192 - 4032)
    assert c.pairs_kept == 8192 * 8193 // 2
    # tile by tile on a ragged square: 10 tokens, 4 × 3 tiles
    c = flash.tile_count(10, 2, 4, 3, causal=True)
    areas = {(r, k): (min(r + 4, 10) - r) * (min(k + 3, 10) - k)
             for r in range(0, 10, 4) for k in range(0, 10, 3)}
    skipped = [(r, k) for r, k in areas if k > min(r + 4, 10) - 1]
    assert c.skipped == len(skipped) == 3
    assert c.flops_visited == 4 * 2 * sum(a for t, a in areas.items() if t not in skipped)
    assert flash.tile_count(10, 2, 4, 3, causal=False).skipped == 0


def test_the_tile_count_row_by_row_equals_the_grid_tile_by_tile():
    # tile_count and traffic count a row of tiles at once; tile_kinds classifies each tile: on
    # every size up to 40 tokens, with square, tall, wide and ragged tiles, they agree
    for n in range(1, 41):
        for block_rows, block_cols in ((1, 1), (2, 3), (3, 2), (4, 4), (5, 7), (8, 3), (64, 1)):
            for causal in (True, False):
                kinds = [k for row in flash.tile_kinds(n, block_rows, block_cols, causal)
                         for k in row]
                areas = [(r1 - r0) * (c1 - c0) for r0, r1 in flash.blocks(n, block_rows)
                         for c0, c1 in flash.blocks(n, block_cols)]
                c = flash.tile_count(n, 3, block_rows, block_cols, causal)
                at = (n, block_rows, block_cols, causal)
                assert (c.tiles, c.full, c.diagonal, c.skipped) == (
                    len(kinds), kinds.count(flash.FULL), kinds.count(flash.DIAGONAL),
                    kinds.count(flash.SKIPPED)), at
                assert c.flops_visited == 4 * 3 * sum(
                    a for k, a in zip(kinds, areas) if k != flash.SKIPPED), at
                widths = [c1 - c0 for _ in flash.blocks(n, block_rows)
                          for c0, c1 in flash.blocks(n, block_cols)]
                assert flash.traffic(n, 3, block_rows, block_cols, causal=causal).kv_reads \
                    == 2 * 2 * 3 * sum(w for k, w in zip(kinds, widths) if k != flash.SKIPPED), at


def test_traffic_against_hand_worked_bytes():
    # Llama 3 8B's head: n = 8,192, d = 128, bf16; FlashAttention-2's 128 × 64 tiles
    n, d = 8192, 128
    t = flash.traffic(n, d, 128, 64, causal=False)
    assert t.standard == (4 * n * d + 4 * n * n) * 2 == 545_259_520
    assert t.standard_square == 4 * n * n * 2
    assert t.kv_reads == 2 * n * d * (n // 128) * 2 == 268_435_456  # 64 query blocks
    assert t.tiled == 2 * n * d * 2 + t.kv_reads + n * 4 == 272_662_528
    # causal: query block i reads keys 0 .. 128i + 127, i.e. 128(i + 1) of them
    t = flash.traffic(n, d, 128, 64, causal=True)
    assert t.kv_reads == sum(2 * 128 * (i + 1) * d * 2 for i in range(64))
    assert t.standard == 545_259_520  # a generic mask computes every score
    # the saving without the mask: 4n² against 2n²d/B_r, a factor 2B_r/d
    assert flash.traffic(n, 64, 128, 64).standard_square / flash.traffic(n, 64, 128, 64).kv_reads \
        == pytest.approx(2 * 128 / 64, rel=1e-12)


def test_block_sizes_follow_flashattentions_rule():
    # 192 KB of 2-byte values, d = 128: B_c = ⌈98,304 / 512⌉ = 192, B_r = min(192, 128)
    assert flash.block_sizes(192 * 1024 // 2, 128) == (128, 192)
    assert flash.block_sizes(1000, 4) == (4, 63)  # ⌈1000 / 16⌉ = 63
    with pytest.raises(ValueError, match="holds no tile"):
        flash.block_sizes(100, 128)
