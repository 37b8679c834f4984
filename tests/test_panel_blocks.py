"""The fourth chapter's panels and drawings, without a browser: the blocks story's pool after
every event and block size, the fit panel's bar to scale, and the drawings' tables against
hand-worked values."""

import re

import pytest

from app.chapters.drawings import catalogue
from app.panels import blocks, fit
from app.panels.blocks import BlocksPanel
from app.panels.fit import FitPanel
from tests.test_paged import invariants


@pytest.mark.parametrize("size", blocks.BLOCK_SIZES)
def test_every_event_of_the_story_leaves_a_whole_pool(size):
    for event in blocks.EVENTS:
        pool = blocks.pool_after(size, event)
        assert invariants(pool) == [], (size, event)
        state = BlocksPanel.state(block_size=size, event=event)
        counts = state["source:pool"]["count"]
        assert [c for c in counts if c] == [f"×{r}" for r in pool.refs if r > 1]
    # the copy-on-write is made at event 6, not at the fork (event 5)
    assert [blocks.pool_after(size, e).copies for e in (4, 5, 6)] == [0, 0, 1]
    # Ana's departure (event 7) returns exactly the blocks only she held
    before, after = blocks.pool_after(size, 6), blocks.pool_after(size, 7)
    only_ana = [b for b in before.tables["Ana"] if before.refs[b] == 1]
    assert set(after.free) - set(before.free) == set(only_ana)


def test_the_pool_drawing_draws_each_table_box_by_box():
    svg = catalogue.draw("blocks", "pool", {"block_size": 4, "event": 6})
    pool = blocks.pool_after(4, 6)
    for seq, table in pool.tables.items():
        drawn = re.findall(rf'data-seq="{re.escape(seq)}" data-block="(\d+)"', svg)
        assert [int(b) for b in drawn] == table
    refs = re.findall(r'data-block="(\d+)" data-refs="(\d+)"', svg)
    assert [int(r) for _, r in refs] == pool.refs


def test_the_fit_bar_is_to_scale_and_says_the_blocks():
    total, *parts, _, blocks_ = fit.fit("llama-3-8b", 80, 0.9)
    svg = catalogue.draw("fit", "bar", {"model": "llama-3-8b", "gpu": 80, "utilization": 0.9,
                                        "context": 8192})
    widths = [float(w) for w in re.findall(r'width="([\d.]+)" height="26"', svg)]
    assert len(widths) == 4
    for w, size in zip(widths, parts[:4]):
        assert w / sum(widths) == pytest.approx(size / total, abs=0.01)
    # hand-worked: 80 GiB × 0.9 − 16,060,522,496 − 2 GiB = 59,101,405,184 bytes;
    # ÷ 65,536 ÷ 32 = 28,181 blocks
    assert blocks_ == 59_101_405_184 // 65_536 // 32 == 28_181
    assert "28,181 blocks" in svg and "450,896 token slots" in svg
    state = FitPanel.state(model="llama-3-8b", gpu=80, utilization=0.9, context=8192)
    assert state["holes:fit"]["users"] == str(28_181 // 512)


def test_the_kinds_table_against_hand_worked_bytes():
    html = catalogue.draw("fit", "kinds", {})
    rows = dict(re.findall(r'<th scope="row">([^<]+)</th><td>[^<]*</td><td>([^<]*)</td>', html))
    # 2 × layers × KV heads × 128 × 2 bytes; MLA: layers × (512 + 64) × 2
    assert rows["multi-head (MHA)"] == f"{2 * 32 * 32 * 128 * 2:,}"
    assert rows["grouped-query (GQA)"] == f"{2 * 32 * 8 * 128 * 2:,}"
    assert rows["multi-query (MQA)"] == f"{2 * 32 * 1 * 128 * 2:,}"
    assert rows["latent (MLA)"] == f"{32 * 576 * 2:,}"
    held = dict(re.findall(r'<th scope="row">([^<]+)</th>(?:<td>[^<]*</td>){2}<td>([^<]*)</td>',
                           html))
    # a 4,096 window on every layer: 131,072 × 4,096; chunks of 8,192 on 24 of 32 layers
    assert held["sliding window, 4,096"] == "537 MB"  # 536,870,912
    assert held["chunked, 8,192"] == "1.88 GB"  # 4,096 × (8 × 32,768 + 24 × 8,192)


def test_the_recompute_table_against_a_hand_worked_step():
    html = catalogue.draw("fit", "recompute", {"model": "llama-3-8b", "context": 8192})
    first = re.search(r"<tr><th scope=\"row\">one step[^<]*</th><td>(.*?)</td>"
                      r"<td>(.*?)</td><td>(.*?)</td>", html)
    # with the cache: 15,009,316,864 for the token's matmuls + 524,288 a key × 8,192 keys
    with_ = 15_009_316_864 + 524_288 * 8192
    without = 8192 * 15_009_316_864 + 524_288 * 8192 * 8193 // 2
    assert first.group(1) == "1.93 × 10<sup>10</sup>" and f"{with_:.3g}" == "1.93e+10"
    assert first.group(2) == "1.41 × 10<sup>14</sup>" and f"{without:.3g}" == "1.41e+14"
    assert first.group(3) == f"{without / with_:,.0f}×"
