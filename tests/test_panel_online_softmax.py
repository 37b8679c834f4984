"""The online-softmax panel without a browser: ≈ 1.55 after two blocks, the attention walk;
and the one panel shape: a pure state, live models that hold it, a small table of states."""

import json
import math

import numpy as np
import pytest

from app.kit import typed_numbers, url_state
from app.panels import online_softmax as module
from app.panels.online_softmax import OnlineSoftmaxPanel
from attention_core import online_softmax as core
from tests.state_checks import assert_pure_and_no_widget_moved, static_typed_panel


@pytest.fixture
def panel():
    return OnlineSoftmaxPanel()


def now(panel):  # -> the step's readout as a reader sees it
    return panel._now.text()


def message(panel):
    return panel._message.values["text"]


def attention_rows(panel):  # -> the attention table's rows, read or not
    return sum(1 for j in range(module.WALK_KEYS) if panel._attention.values[f"ab{j}"])


def attention_read(panel):  # -> the rows of blocks already read
    return sum(1 for j in range(module.WALK_KEYS) if panel._attention.values[f"am{j}"])


def test_defaults(panel):
    assert (panel.scores, panel.block, panel.step) == ("2, 1, 3, 0", 2, 0)
    assert panel.url_keys == ("scores", "block", "step")
    assert "Nothing read yet" in now(panel)
    assert panel._prev_w.disabled and not panel._next_w.disabled
    assert panel.bar_source.data["x"] == [] and len(panel.unread_source.data["x"]) == 4
    assert panel.score_source.data["score"] == ["2", "1", "3", "0"]


def test_two_blocks_end_at_155_equal_to_the_full_row(panel):
    r = core.online_softmax([2, 1, 3, 0], 2)
    assert round(r.running_sum, 2) == 1.55 and r.running_sum == pytest.approx(r.full_sum)
    panel._next_w.clicks += 1  # block 1: [2, 1]
    assert panel.step == 1
    assert "The first block sets the running max to 2" in now(panel)
    assert panel._now.values["sum"] == f"{r.steps[0].new_sum:.4g}" == "1.368"
    panel._next_w.clicks += 1  # block 2: [3, 0] raises the max
    assert panel.step == 2 and panel._next_w.disabled
    text = now(panel)
    assert "the max rises to 3" in text
    assert f"e^(2 − 3) = {math.exp(-1):.4f}" in text and "e^(2 − 3) = 0.3679" in text
    assert panel._now.values["rescale"] == "e^(2 − 3) = 0.3679"
    assert f"Running sum {r.running_sum:.4g}" in text and "1.553" in text
    assert panel._now.values["end_sum"] == f"{r.running_sum:.4g}"
    assert panel._now.values["end_full"] == f"{r.full_sum:.4g}" == "1.553"
    assert "equal" in panel._now.values["end_agree"]
    assert panel.bar_source.data["term"] == pytest.approx(
        np.exp(np.array([2, 1, 3, 0]) - 3).tolist())


def test_every_step_is_a_stop_with_its_own_state():
    texts = [OnlineSoftmaxPanel.state(scores="2, 1, 3, 0", block=2, step=s,
                                      attention_step=0)["holes:now"] for s in range(3)]
    assert len({json.dumps(t, sort_keys=True) for t in texts}) == 3
    assert texts[1]["head"] == "Block 1 of 2: (2, 1)."
    assert texts[2]["end_sum"] == "1.553"


def test_a_block_that_does_not_raise_the_max_says_so(panel):
    panel.scores = "3, 1, 2, 0"
    panel.step = 2
    assert "does not beat the running max 3" in now(panel)
    assert "nothing is rescaled" in now(panel)
    assert "1 (max kept)" in panel._history.values.values()


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
    np.testing.assert_array_equal(panel.numbers().output, output)
    diff = float(np.abs(panel.numbers().output - panel.numbers().naive).max())
    assert diff < 1e-12
    assert "largest difference" in panel._attention.text()
    assert panel._attention.values["diff"] == module.fmt.sig_figures(diff, 2)
    assert attention_rows(panel) == attention_read(panel) == len(steps) == 3
    panel.block = 4
    assert attention_rows(panel) == attention_read(panel) == 2
    assert np.abs(panel.numbers().output - panel.numbers().naive).max() < 1e-12


def test_the_attention_walk_steps_too(panel):
    panel._attention_reset_w.clicks += 1
    assert panel.attention_step == 0 and attention_read(panel) == 0
    assert attention_rows(panel) == 3  # the blocks to come are listed, not read
    assert panel._attention.values["diff"] == ""  # no verdict before the end
    panel._attention_next_w.clicks += 1
    assert attention_read(panel) == 1 and "Block 1 of 3 (keys 0–1)" in panel._attention.text()
    panel._attention_next_w.clicks += 1
    steps, _ = module.attention_walk(2)
    rescale = f"{steps[1].rescale:.3g}"
    assert f"rescaled by e^(0.0876 − 0.629) = {rescale}" in panel._attention.text()
    panel._attention_next_w.clicks += 1
    assert panel._attention_next_w.disabled and attention_read(panel) == 3
    assert panel._attention.values["diff_says"] == "float rounding"


def test_memory_readout(panel):
    big = core.scores_held_bytes(8192, heads=32, bytes_per_value=2)
    tile = core.scores_held_bytes(8192, heads=32, bytes_per_value=2, block=128)
    assert round(big / 1e9, 1) == 4.3
    text = panel._memory.text()
    assert f"{big:,} bytes ≈ 4.29 GB" in text and f"{tile:,} bytes ≈ 1.05 MB" in text


def test_bad_scores_keep_the_last_good_walk(panel):
    panel.step = 2
    panel.scores = "2, 1, three"
    assert "is not a number" in message(panel)
    assert "still using 2, 1, 3, 0" in message(panel)
    assert "1.553" in now(panel)
    assert panel._scores_pick.value == typed_numbers.TYPED
    panel.scores = "1, 2, 3"
    assert message(panel) == ""


def test_step_past_the_end_shows_the_end_with_a_note(panel):
    panel.block = 1
    panel.step = 4
    panel.block = 3
    assert panel.shown_step() == 2 and panel._step_w.end == 2
    assert "All 4 scores read" in now(panel)
    assert "past the last block" in panel._step_note.values["text"]
    panel._prev_w.clicks += 1  # from the end shown, not from the step beyond it
    assert panel.step == 1 and panel._step_note.values["text"] == ""


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


def test_url_restore_clamps_block_and_step_listing_repairs(panel):
    repairs = url_state.restore(panel, panel.url_keys, {"block": [b"0"], "step": [b"999"]})
    assert any("block=0" in n and "using 1" in n for n in repairs)
    assert any("step=999" in n for n in repairs)
    assert (panel.block, panel.shown_step()) == (1, 4)
    assert "past the last block" in panel._step_note.values["text"]
    assert "All 4 scores read" in now(panel)


# --- the one shape: pure state, live == state, the table ------------------------------------

def test_state_is_pure_and_touches_no_widget(panel):
    assert_pure_and_no_widget_moved(panel, {"text": ""}, step=37)


def test_a_static_build_hides_the_typed_box_and_steps_in_the_browser():
    p, _ = static_typed_panel(OnlineSoftmaxPanel)
    # the step buttons move their slider in the browser: a click callback, no Python one
    for button in (p._next_w, p._prev_w, p._reset_w, p._attention_next_w):
        assert button.get_root().js_event_callbacks["button_click"]
    p._next_w.clicks += 1
    assert p.step == 0
