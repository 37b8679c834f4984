"""The n² ladder without a browser: bar data per phase, following the head, response sums."""

from app.panels.heatmap import HeadPanel
from app.panels.ladder import LENGTHS, LadderPanel, decode_total


def bars(panel, phase):  # -> bar heights of one phase for n = 3..8
    data = panel.ladder_source.data
    return [top for top, p in zip(data["top"], data["phase"]) if p == phase]


def outlined(panel):  # -> (x, phase) of the highlighted bar(s)
    data = panel.ladder_source.data
    return [(x, p) for x, p, w in zip(data["x"], data["phase"], data["line_width"]) if w > 0]


def test_ladder_values_per_phase():
    panel = LadderPanel()
    assert bars(panel, "prefill") == [9, 16, 25, 36, 49, 64]
    assert bars(panel, "decode") == [3, 4, 5, 6, 7, 8]
    assert "9, 16, 25, 36, 49, 64" in panel._ladder_text.object
    assert "3, 4, 5, 6, 7, 8" in panel._ladder_text.object


def test_follows_the_head():
    head = HeadPanel()
    panel = LadderPanel(head=head)
    assert panel.url_keys == ("prompt", "response")
    assert outlined(panel) == [(6 - 0.2, "prefill")]
    for n, square in zip(LENGTHS, [9, 16, 25, 36, 49, 64]):
        head.length = n
        assert panel.length == n
        assert f"<b>{square}</b> dot products" in panel._ladder_text.object
    head.phase = "decode"
    for n in LENGTHS:
        head.length = n
        assert f"At n = {n}, decode: <b>{n}</b> dot products" in panel._ladder_text.object
        assert outlined(panel) == [(n + 0.2, "decode")]
        assert panel.head_marker_source.data["y"] == [float(n * n), float(n)]


def test_standalone_params_and_url_keys():
    panel = LadderPanel(length=8, phase="decode")
    assert LadderPanel.url_keys == ("length", "phase", "prompt", "response")
    assert "At n = 8, decode: <b>8</b>" in panel._ladder_text.object


def test_response_is_a_sum_of_linear_steps():
    assert decode_total(256, 4096) == sum(range(256, 256 + 4096)) == 9_435_136
    panel = LadderPanel()
    text = panel._context_text.object
    assert "4,096 decode steps, each linear" in text
    assert "9,435,136" in text and "4,352² = 18,939,904" in text
    assert panel.marker_source.data == {"n": [4352], "total": [9_435_136.0]}
    figure = panel.context_figure
    panel.param.update(prompt=1, response=65_536)
    assert panel.context_figure is figure
    assert decode_total(1, 65_536) == 65_536 * 65_537 // 2
    assert f"{decode_total(1, 65_536):,}" in panel._context_text.object
    resp = panel.response_source.data
    assert resp["n"][-1] <= 131_072 and max(panel.curve_source.data["n"]) == 131_072
