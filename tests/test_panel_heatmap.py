"""The head panel without a browser: readout text and source data for the documents' figures."""

import numpy as np
import pytest

from app import url_state
from app.panels.heatmap import HeadPanel
from attention_core import worked_example


def cell(panel, query, key, source="cell"):  # -> the row of a source's data at (key, query)
    data = getattr(panel, f"{source}_source").data
    for i, (x, y) in enumerate(zip(data["x"], data["y"])):
        if (x, y) == (key, query):
            return {name: column[i] for name, column in data.items()}
    return None


def row_weights(panel, query):  # -> [n] weights of one query row from the cell source
    data = panel.cell_source.data
    pairs = sorted((x, w) for x, y, w in zip(data["x"], data["y"], data["weight"]) if y == query)
    return np.array([w for _, w in pairs])


def text(panel):  # every readout pane's text, joined
    return "\n".join(str(p.object) for p in (panel._hero, panel._caption, panel._arithmetic,
                                              panel._checks, panel._log_pane))


def arithmetic_weight(panel, key):  # the weight cell of one key's line in the arithmetic table
    table = panel._arithmetic.object
    start = table.index(f"<th scope='row'>{key} ")
    line = table[start:table.index("</tr>", start)]
    return line.split("<b>")[1].split("</b>")[0]


@pytest.fixture
def panel():
    return HeadPanel()


def test_defaults_row_2_puts_077_on_cat_and_007_on_the(panel):
    expected = worked_example.run(6).weights[2]
    assert f"{expected[1]:.2f}" == "0.77" and f"{expected[0]:.2f}" == "0.07"
    assert arithmetic_weight(panel, 1) == "0.77"  # 1 cat
    assert arithmetic_weight(panel, 0) == "0.07"  # 0 the
    assert cell(panel, 2, 1)["label"] == "0.77"
    assert cell(panel, 2, 0)["label"] == "0.07"
    assert cell(panel, 2, 1)["weight"] == expected[1]
    assert "effective tokens attended</b> (row 2, sat): 1.98" in panel._hero.object
    assert "0.77, on key 1 (cat)" in panel._caption.object


def test_masked_cells_are_minus_infinity_not_small_weights(panel):
    assert cell(panel, 2, 3) is None  # not drawn as a weight
    assert cell(panel, 2, 3, "masked")["label"] == "−∞"
    assert len(panel.masked_source.data["x"]) == 15  # 6·5/2 above the diagonal
    assert "−∞" in panel._arithmetic.object


def test_mask_off_sends_023_to_mat_and_the_two_the_rows_match(panel):
    panel.mask = False
    assert arithmetic_weight(panel, 5) == "0.23"  # 5 mat
    assert cell(panel, 2, 5)["label"] == "0.23"
    assert np.array_equal(row_weights(panel, 0), row_weights(panel, 4))
    assert len(panel.masked_source.data["x"]) == 0
    assert "discarded:</b> 0 of 36" in panel._hero.object


def test_divisor_off_sharpens_row_2(panel):
    panel.divide = False
    assert arithmetic_weight(panel, 1) == "0.97"
    assert "(row 2, sat): 1.17" in panel._hero.object
    assert "÷ 1" in panel._arithmetic.object and "÷√5" not in panel._arithmetic.object


def test_pairs_discarded_at_length_8(panel):
    panel.length = 8
    assert "pairs computed then discarded:</b> 28 of 64" in panel._hero.object
    assert ">64<" in panel._hero.object  # dot products, n²
    panel.mask = False
    assert "pairs computed then discarded:</b> 0 of 64" in panel._hero.object


def test_decode_mask_toggle_changes_nothing_and_the_log_says_why(panel):
    panel.phase = "decode"
    assert set(panel.cell_source.data["y"]) == {5}  # only the last query's row
    assert len(panel.cell_source.data["x"]) == 6
    assert ">6<" in panel._hero.object  # n dot products
    before = dict(panel.cell_source.data)
    panel.mask = False
    assert panel.cell_source.data["weight"] == before["weight"]
    latest = panel._log[0]
    assert latest.startswith("causal mask off: no weight changed")
    assert "no future key to hide" in latest
    panel.mask = True
    assert panel.cell_source.data["weight"] == before["weight"]
    assert "no future key to hide" in panel._log[0]
    assert "no future key to hide" in panel._log_pane.object


def test_decode_pins_the_query_and_prefill_gives_it_back(panel):
    panel.phase = "decode"
    assert panel.query == 5 and panel._query_w.disabled
    assert panel.row_source.data["y"] == [5]
    panel.phase = "prefill"
    assert panel.query == 2 and not panel._query_w.disabled


def test_truncate_line_matches_with_mask_and_not_without(panel):
    assert "row 2 matches a pass over the first 3 tokens, bit for bit" in panel._checks.object
    panel.mask = False
    assert "mismatch: largest disagreement 6.0e−01" in panel._checks.object
    panel.mask = True
    blas = worked_example.truncate(6, 2, exact=False)
    if not blas.equal:
        assert f"{blas.largest_disagreement:.1e}".replace("-", "−") in panel._checks.object
    assert "BLAS matmul path" in panel._checks.object


def test_query_clamps_when_length_shrinks(panel):
    panel.length = 8
    panel.query = 7
    panel.length = 4
    assert panel.query == 3
    assert panel._query_w.end == 3
    assert any("moved to 3" in line for line in panel._log)
    assert panel.row_source.data["y"] == [3]


def test_figure_is_built_once(panel):
    fig, pane_fig = panel.figure, panel._figure_pane.object
    x_range, source = fig.x_range, panel.cell_source
    panel.param.update(length=8, query=7)
    panel.mask = False
    panel.divide = False
    panel.phase = "decode"
    panel.length = 3
    assert panel.figure is fig and panel._figure_pane.object is fig is pane_fig
    assert fig.x_range is x_range and panel.cell_source is source
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, 2.5)
    assert fig.xaxis[0].ticker.ticks == [0, 1, 2]
    assert fig.yaxis[0].major_label_overrides == {0: "0 the", 1: "1 cat", 2: "2 sat"}


def test_tick_labels_tell_the_two_thes_apart(panel):
    labels = panel.figure.yaxis[0].major_label_overrides
    assert labels[0] == "0 the" and labels[4] == "4 the"


def test_url_restore_clamps_and_ignores_with_notes(panel):
    args = {"length": [b"99"], "mask": [b"off"], "phase": [b"bogus"]}
    notes = url_state.restore(panel, panel.url_keys, args)
    assert panel.length == 8 and panel.mask is False and panel.phase == "prefill"
    assert any("length=99" in n and "using 8" in n for n in notes)
    assert any("phase='bogus'" in n and "ignored" in n for n in notes)
    assert "0 of 64" in panel._hero.object


def test_url_restore_length_8_query_7_is_kept(panel):
    url_state.restore(panel, panel.url_keys, {"length": [b"8"], "query": [b"7"]})
    assert (panel.length, panel.query) == (8, 7)
    assert "row 7" in panel._hero.object
