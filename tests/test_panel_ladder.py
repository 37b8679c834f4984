"""The n² ladder without a browser: bar data per phase, following the head, response sums,
the pure state and its table."""

import json
import re

import panel as pn
import pytest

from app.kit import states
from app.panels.heatmap import HeadPanel
from app.panels.ladder import LENGTHS, TOKEN_STOPS, LadderPanel, decode_total
from tests.state_checks import built_article, mismatches


def bars(panel, phase):  # -> bar heights of one phase for n = 3..8
    data = panel.ladder_source.data
    return [top for top, p in zip(data["top"], data["phase"]) if p == phase]


def outlined(panel):  # -> (x, phase) of the highlighted bar(s)
    data = panel.ladder_source.data
    return [(x, p) for x, p, w in zip(data["x"], data["phase"], data["line_width"]) if w > 0]


def html(readout):  # the readout as the page draws it: holes filled, hole markers left out
    return re.sub(r"</?span>", "", re.sub(r' data-s="[\w-]+"', "", readout.filled()))


def test_ladder_values_per_phase():
    panel = LadderPanel()
    assert bars(panel, "prefill") == [9, 16, 25, 36, 49, 64]
    assert bars(panel, "decode") == [3, 4, 5, 6, 7, 8]
    assert "9, 16, 25, 36, 49, 64" in html(panel._ladder_text)
    assert "3, 4, 5, 6, 7, 8" in html(panel._ladder_text)
    # the square is the queries times the keys, not the context alone
    assert "The square is n queries times n keys; a decode step keeps the n keys but has one " \
           "query" in html(panel._ladder_text)


def test_follows_the_head():
    head = HeadPanel()
    panel = LadderPanel(head=head)
    assert panel.url_keys == ("prompt", "response")
    # the head's own widgets are the ladder's length and phase controls (a static page's
    # switcher listens to them for both panels)
    assert panel.widgets["length"] is head.widgets["length"]
    assert panel.widgets["phase"] is head.widgets["phase"]
    assert outlined(panel) == [(6 - 0.2, "prefill")]
    for n, square in zip(LENGTHS, [9, 16, 25, 36, 49, 64]):
        head.length = n
        assert panel.length == n
        assert f"<b>{square}</b> dot products" in html(panel._ladder_text)
    head.phase = "decode"
    for n in LENGTHS:
        head.length = n
        assert f"At n = {n}, decode: <b>{n}</b> dot products" in html(panel._ladder_text)
        assert outlined(panel) == [(n + 0.2, "decode")]
        assert panel.head_marker_source.data["y"] == [float(n * n), float(n)]


def test_a_follower_starts_where_the_head_is():
    head = HeadPanel(length=8, phase="decode")
    panel = LadderPanel(head=head)
    assert (panel.length, panel.phase) == (8, "decode")
    assert "At n = 8, decode: <b>8</b>" in html(panel._ladder_text)


def test_standalone_params_and_url_keys():
    panel = LadderPanel(length=8, phase="decode")
    assert LadderPanel.url_keys == ("length", "phase", "prompt", "response")
    assert "At n = 8, decode: <b>8</b>" in html(panel._ladder_text)
    assert set(panel.widgets) == {"length", "phase", "prompt", "response"}


def test_response_is_a_sum_of_linear_steps():
    assert decode_total(256, 4096) == sum(range(256, 256 + 4096)) == 9_435_136
    panel = LadderPanel()
    text = html(panel._context_text)
    assert "4,096 decode steps, each linear" in text
    assert "9,435,136" in text and "4,352² = 18,939,904" in text
    # the sum's two terms: 256 × 4,096 + 4,096 × 4,095 / 2, linear until R passes 2P
    assert "sum is R·P + R(R − 1)/2, here 1,048,576 + 8,386,560" in text
    assert "only once the response is more than twice the prompt" in text
    panel.param.update(prompt=4096, response=256)  # the review's case: 97% linear
    assert "here 1,048,576 + 32,640" in html(panel._context_text)
    panel.param.update(prompt=256, response=4096)
    assert panel.marker_source.data == {"n": [4352], "total": [9_435_136.0]}
    figure = panel.context_figure
    panel.param.update(prompt=1, response=65_536)
    assert panel.context_figure is figure
    assert decode_total(1, 65_536) == 65_536 * 65_537 // 2
    assert f"{decode_total(1, 65_536):,}" in html(panel._context_text)
    resp = panel.response_source.data
    assert resp["n"][-1] <= 131_072 and max(panel.curve_source.data["n"]) == 131_072


def test_token_stops_are_powers_of_two_holding_the_documents_figures():
    assert TOKEN_STOPS == tuple(2 ** e for e in range(17))
    assert {256, 4096, 1, 65_536} <= set(TOKEN_STOPS)
    controls = {c.name: c for c in LadderPanel.controls()}
    for name in ("prompt", "response"):
        assert controls[name].values == TOKEN_STOPS
        assert controls[name].raw_values() == tuple(range(17))  # the slider's exponent


def test_the_sliders_land_on_stops_and_follow_the_parameters():
    panel = LadderPanel()
    prompt, response = panel.widgets["prompt"], panel.widgets["response"]
    assert (prompt.value, response.value) == (8, 12)  # 2⁸ = 256, 2¹² = 4,096
    prompt.value = 10
    assert panel.prompt == 1024
    panel.response = 65_536
    assert response.value == 16
    assert "65,536 decode steps" in html(panel._context_text)


def test_every_response_stop_is_on_the_drawn_curve():
    for prompt in (1, 256, 65_536):
        curve = LadderPanel.state(length=6, phase="prefill", prompt=prompt,
                                  response=1)["source:response"]
        points = set(zip(curve["n"], curve["total"]))
        for response in TOKEN_STOPS:
            assert (prompt + response, decode_total(prompt, response)) in points


# --- the one shape: a pure state, the live models hold it, a small table ------------------

SAMPLE = [{"length": n, "phase": ph, "prompt": p, "response": m} for n, ph, p, m in [
    (6, "prefill", 256, 4096), (3, "decode", 1, 1), (8, "prefill", 65_536, 65_536),
    (5, "decode", 4096, 256), (7, "prefill", 32, 16_384), (4, "decode", 2, 2048)]]


def test_state_is_pure_json_and_leaves_the_widgets_alone():
    panel = LadderPanel()
    before = {name: w.value for name, w in panel.widgets.items()}
    texts = dict(panel._context_text.values)
    for params in SAMPLE:
        first, second = LadderPanel.state(**params), LadderPanel.state(**params)
        assert first == second
        assert json.loads(states.canonical(first)) == first  # plain JSON values
    assert {name: w.value for name, w in panel.widgets.items()} == before
    assert panel._context_text.values == texts and panel.prompt == 256


@pytest.mark.parametrize("head", [False, True], ids=["alone", "following"])
def test_a_live_panel_shows_exactly_its_state(head):
    leader = HeadPanel() if head else None
    panel = LadderPanel(head=leader)
    for params in SAMPLE:
        if leader is not None:
            leader.param.update(length=params["length"], phase=params["phase"])
            panel.param.update(prompt=params["prompt"], response=params["response"])
        else:
            panel.param.update(**params)
        assert mismatches(panel, LadderPanel.state(**params)) == [], params


def test_a_static_build_has_no_number_boxes_and_carries_the_switcher():
    with states.static_build():
        panel = LadderPanel()
        layout = pn.panel(panel)
    assert not layout.select(pn.widgets.IntInput)
    assert panel.spec()["url"] == {k: k for k in LadderPanel.url_keys}
    live = pn.panel(LadderPanel())
    assert len(live.select(pn.widgets.IntInput)) == 2  # a live page also takes any count


@pytest.mark.parametrize("static", [False, True], ids=["live", "static"])
def test_the_article_builds_the_ladder_following_its_head(static):
    shelf = built_article(static)
    head, ladder = shelf("head"), shelf("ladder")
    assert ladder.head is head and ladder.in_chapter
    assert ladder.widgets["length"] is head.widgets["length"]
    assert ladder.url_map == {"prompt": "prompt", "response": "response"}
    assert "Where the n² lives</h3>" not in str(ladder.__panel__().objects[0])
    head.param.update(length=8, phase="decode")
    assert "At n = 8, decode: <b>8</b>" in html(ladder._ladder_text)
