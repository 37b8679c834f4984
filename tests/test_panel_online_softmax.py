"""The online-softmax panel without a browser: ≈ 1.55 after two blocks, the attention walk."""

import math

import numpy as np
import pytest

from app import url_state
from app.panels import online_softmax as module
from app.panels.online_softmax import OnlineSoftmaxPanel
from attention_core import online_softmax as core


@pytest.fixture
def panel():
    return OnlineSoftmaxPanel()


def test_defaults(panel):
    assert (panel.scores, panel.block, panel.step) == ("2, 1, 3, 0", 2, 0)
    assert panel.url_keys == ("scores", "block", "step")
    assert "Nothing read yet" in panel._now.object
    assert panel._prev_w.disabled and not panel._next_w.disabled
    assert panel.bar_source.data["x"] == [] and len(panel.unread_source.data["x"]) == 4


def test_two_blocks_end_at_155_equal_to_the_full_row(panel):
    r = core.online_softmax([2, 1, 3, 0], 2)
    assert round(r.running_sum, 2) == 1.55 and r.running_sum == pytest.approx(r.full_sum)
    panel._next_w.clicks += 1  # block 1: [2, 1]
    assert panel.step == 1
    assert "The first block sets the running max to 2" in panel._now.object
    assert f"<b>{r.steps[0].new_sum:.4g}</b>" in panel._now.object
    panel._next_w.clicks += 1  # block 2: [3, 0] raises the max
    assert panel.step == 2 and panel._next_w.disabled
    now = panel._now.object
    assert "the max rises to 3" in now
    assert f"e^(2 − 3) = {math.exp(-1):.4f}" in now
    assert f"Running sum <b>{r.running_sum:.4g}</b>" in now and "1.553" in now
    assert f"<b>{r.full_sum:.4g}</b>" in now
    assert "equal" in now
    assert panel.bar_source.data["term"] == pytest.approx(
        np.exp(np.array([2, 1, 3, 0]) - 3).tolist())


def test_a_block_that_does_not_raise_the_max_says_so(panel):
    panel.scores = "3, 1, 2, 0"
    panel.step = 2
    assert "does not beat the running max 3" in panel._now.object
    assert "nothing is rescaled" in panel._now.object
    assert "1 (max kept)" in panel._history.object


def test_previous_and_reset(panel):
    panel.step = 2
    panel._prev_w.clicks += 1
    assert panel.step == 1
    panel._reset_w.clicks += 1
    assert panel.step == 0 and panel._reset_w.disabled


def test_attention_walk_equals_naive(panel):
    q, k, v = module.walk_inputs()
    steps, output = core.attention_walk(q, k, v, block_size=2)
    naive = core.naive_attention(q[None], k, v)[0]
    assert np.abs(output - naive).max() < 1e-12
    np.testing.assert_array_equal(panel._numbers.output, output)
    assert np.abs(panel._numbers.output - panel._numbers.naive).max() < 1e-12
    assert "largest difference" in panel._attention.object
    assert panel._attention.object.count("<tr><th scope='row'>") == len(steps) == 3
    panel.block = 4
    assert panel._attention.object.count("<tr><th scope='row'>") == 2
    assert np.abs(panel._numbers.output - panel._numbers.naive).max() < 1e-12


def test_memory_readout(panel):
    big = core.scores_held_bytes(8192, heads=32, bytes_per_value=2)
    tile = core.scores_held_bytes(8192, heads=32, bytes_per_value=2, block=128)
    assert round(big / 1e9, 1) == 4.3
    text = panel._memory.object
    assert f"{big:,} bytes ≈ 4.29 GB" in text and f"{tile:,} bytes ≈ 1.05 MB" in text


def test_bad_scores_keep_the_last_good_walk(panel):
    panel.step = 2
    panel.scores = "2, 1, three"
    assert panel._message.visible and "is not a number" in panel._message.object
    assert "still using 2, 1, 3, 0" in panel._message.object
    assert "1.553" in panel._now.object
    panel.scores = "1, 2, 3"
    assert not panel._message.visible


def test_step_clamps_when_blocks_shrink(panel):
    panel.block = 1
    panel.step = 4
    panel.block = 3
    assert panel.step == 2 and panel._step_w.end == 2
    assert "past the last block" in panel._message.object


def test_figure_is_built_once(panel):
    fig, source, x_range = panel.figure, panel.bar_source, panel.figure.x_range
    panel.step = 2
    panel.scores = "5, 1, 2, 8, 0, 3"
    panel.block = 3
    panel.scores = "nope"
    assert panel.figure is fig and panel._figure_pane.object is fig
    assert panel.bar_source is source and fig.x_range is x_range
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 5.5)
    assert panel.edge_source.data["x"] == [2.5]


def test_url_restore_clamps_block_and_step_with_notes(panel):
    notes = url_state.restore(panel, panel.url_keys, {"block": [b"0"], "step": [b"999"]})
    assert any("block=0" in n and "using 1" in n for n in notes)
    assert any("step=999" in n for n in notes)
    assert (panel.block, panel.step) == (1, 4)
    assert "past the last block" in panel._message.object
    assert "All 4 scores read" in panel._now.object
