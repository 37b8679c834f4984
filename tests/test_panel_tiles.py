"""The third chapter's two panels and their drawings, without a browser: the stepper's square,
tile and readout against attention_core.flash and numpy; the drawings' numbers against the same;
the traffic panel's bars to scale."""

import re

import numpy as np
import pytest

from app.chapters.drawings import catalogue
from app.panels import tiles, traffic
from app.panels.tiles import TilesPanel
from app.panels.traffic import TrafficPanel
from attention_core import flash, worked_example

SETTINGS = [(r, c, causal) for r in (2, 4) for c in (2, 4) for causal in (False, True)]


@pytest.mark.parametrize("rows, cols, causal", SETTINGS)
def test_the_stepper_walks_every_visited_tile_and_stops_at_the_last(rows, cols, causal):
    visited = [(r0, c0) for r0 in range(0, 8, rows) for c0 in range(0, 8, cols)
               if not (causal and c0 > r0 + rows - 1)]
    for step in range(1, tiles.MOST_STEPS + 1):
        state = TilesPanel.state(block_rows=rows, block_cols=cols, causal=causal, step=step)
        r0, c0 = visited[min(step, len(visited)) - 1]
        tile = state["source:tile"]
        assert (tile["x"][0], tile["y"][0]) == (c0 + cols / 2, r0 + rows / 2)
        assert state["holes:step"]["of"] == str(len(visited))
        labels = state["source:tiles"]["label"]
        assert labels.count("skipped") == len(range(0, 8, rows)) * len(range(0, 8, cols)) \
            - len(visited)
        if step >= len(visited):
            assert state["holes:step"]["end"].startswith("The last tile: every row is finished")
    # the cells masked inside diagonal tiles: every key after its row that a visited tile holds
    hidden = TilesPanel.state(block_rows=rows, block_cols=cols, causal=causal, step=1)
    cells = set(zip(hidden["source:hidden"]["y"], hidden["source:hidden"]["x"]))
    want = {(q + 0.5, k + 0.5) for r0, c0 in visited for q in range(r0, r0 + rows)
            for k in range(c0, c0 + cols) if causal and k > q}
    assert cells == want


def test_the_readout_shows_the_tile_nows_rows_as_the_core_carries_them():
    h = worked_example.run(8)
    state = TilesPanel.state(block_rows=2, block_cols=2, causal=True, step=5)["holes:step"]
    # tile 5 is rows 4-5 against keys 2-3: m over keys 0-3, relative sums, output so far
    for a, q in enumerate((4, 5)):
        s = h.masked_scores[q, :4]
        top = s.max()
        assert state[f"m{a}"].endswith(tiles.num(top))
        assert state[f"l{a}"].endswith(tiles.num(np.exp(s - top).sum()))
        so_far = np.exp(s - top) @ h.v[:4] / np.exp(s - top).sum()
        assert state[f"o{a}"] == ", ".join(tiles.num(x, 2) for x in so_far)
    assert state["rescale0"] == tiles.num(np.exp(h.masked_scores[4, :2].max()
                                                 - h.masked_scores[4, :4].max()))
    first = TilesPanel.state(block_rows=2, block_cols=2, causal=True, step=4)["holes:step"]
    assert first["rescale0"] == first["rescale1"] == "—"  # a row block's first tile


def numbers_in(svg, attr, value):  # -> the texts of a drawing's elements with data-attr=value
    return re.findall(rf'data-{attr}="{value}"[^>]*>([^<]*)<', svg)


@pytest.mark.parametrize("rows, cols, causal", SETTINGS)
def test_the_grid_numbers_tiles_in_visit_order(rows, cols, causal):
    svg = catalogue.draw("tiles", "grid", {"block_rows": rows, "block_cols": cols, "causal": causal,
                                               "step": 16})
    run = tiles.run(rows, cols, causal)
    visits = [int(v) for v in re.findall(r'data-visit="(\d+)"', svg)]
    assert sorted(visits) == list(range(1, len(run.steps) + 1))
    assert svg.count('data-kind="skipped"') == sum(k == flash.SKIPPED for row in run.kinds
                                                   for k in row)
    assert svg.count("−∞") == sum(k > q for s in run.steps if s.kind == flash.DIAGONAL
                                  for q in range(*s.rows) for k in range(*s.cols))


def test_the_step_drawing_shows_the_cores_numbers():
    svg = catalogue.draw("tiles", "step", {"block_rows": 2, "block_cols": 2, "causal": True,
                                           "step": 5})
    s = tiles.run(2, 2, True).steps[4]
    assert re.search(r'data-row="4" data-step="rescale"[^>]*>rescale ([^<]*)<', svg).group(1) \
        == tiles.num(s.rescale[0])
    assert re.search(r'data-row="5" data-step="m"[^>]*>m ([^<]*)<', svg).group(1) == \
        f"{tiles.num(s.old_max[1])} → {tiles.num(s.new_max[1])}"
    # row 4's max rose: its rescale is bold; row 5's held at 1
    assert re.search(r'class="b"[^>]*data-row="4" data-step="rescale"', svg)
    assert tiles.num(s.rescale[1]) == "1"


def test_the_check_table_holds_the_tiled_pass_against_the_formula():
    html = catalogue.draw("tiles", "check", {"block_rows": 2, "block_cols": 2, "causal": True,
                                                 "step": 16})
    rows = re.findall(r"<tr><th scope=\"row\">(\d) [a-z]+</th><td>([^<]*)</td><td>([^<]*)</td>"
                      r"<td>([^<]*)</td></tr>", html)
    assert len(rows) == 8
    _, lse = flash.reference(*(getattr(worked_example.run(8), a) for a in "qkv"), causal=True)
    for (q, tiled, whole, gap), want in zip(rows, lse):
        assert tiled == whole and float(whole) == pytest.approx(want, abs=5e-6)
        assert gap == "0" or re.fullmatch(r"\d × 10\^−1[5-7]", gap), gap


@pytest.mark.parametrize("causal", [False, True])
def test_the_traffic_bars_are_to_one_scale(causal):
    svg = catalogue.draw("traffic", "bars", {"prompt": 8192, "causal": causal})
    t = traffic.layer_traffic(8192, causal)
    # each bar's outline, and its parts: widths in proportion to the bytes they stand for
    widths = {bar: float(w) for w, bar in re.findall(
        r'width="([\d.]+)" height="22" fill="none" class="k" data-bar="(\w+)"', svg)}
    assert widths["tiled"] / widths["standard"] == pytest.approx(t.tiled / t.standard, rel=0.02)
    parts = re.findall(r'width="([\d.]+)" height="22" fill="#\w+"[^>]*data-bar="(\w+)" '
                       r'data-part="[^"]*" data-bytes="(\d+)"', svg)
    assert len(parts) == 4
    for w, bar, nbytes in parts:
        assert float(w) / widths[bar] == pytest.approx(
            int(nbytes) / (t.standard if bar == "standard" else t.tiled), abs=0.02)
    assert f"standard: {traffic.fmt.decimal_bytes(t.standard)}" in svg


def test_the_traffic_panels_states_at_each_prompt():
    for n in traffic.PROMPTS:
        state = TrafficPanel.state(prompt=n, causal=True)
        t = traffic.layer_traffic(n, True)
        assert state["source:marker"]["bytes"] == [t.standard, t.tiled]
        assert state["holes:traffic"]["blocks"] == f"{-(-n // 128):,}"
    with pytest.raises(ValueError):
        flash.block_sizes(10, 128)
