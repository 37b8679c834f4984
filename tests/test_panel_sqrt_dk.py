"""The √d_k sweep panel without a browser: readouts, source data, URL state, speed, the pure
state and its table."""

import json
import re
import time

import numpy as np
import pytest

from app.kit import fmt, registry, states, url_state
from app.panels import sqrt_dk as panel_module
from app.panels.sqrt_dk import D_K_STOPS, KEY_STOPS, SqrtDkPanel
from attention_core import sqrt_dk as core
from tests.state_checks import built_article, mismatches

DOC_D_KS = (4, 16, 128, 512)
# The documents' figures over 16 keys: effective keys without and with the divisor.
DOC_RAW = (6.68, 2.84, 1.44, 1.19)
DOC_SCALED = (11.19, 10.96, 10.71, 10.76)


def html(readout):  # the readout as the page draws it: holes filled, hole markers left out
    return re.sub(r"</?span>", "", re.sub(r' data-s="[\w-]+"', "", readout.filled()))


def readout_numbers(panel):  # -> (effective raw, effective scaled, spread, √d_k) read from text
    text = html(panel.readout)
    raw = float(re.search(r"Without the divisor</b>: <b>([\d.]+)</b>", text).group(1))
    scaled = float(re.search(r"Divided by √d_k</b>: <b>([\d.]+)</b>", text).group(1))
    spread, root = re.search(r"spread of the raw scores: <b>([\d.]+)</b> against "
                             r"√\d+ = <b>([\d.]+)</b>", text).groups()
    return raw, scaled, float(spread), float(root)


@pytest.fixture(scope="module")
def sweep():  # the readouts at the documents' four d_k, 16 keys
    panel = SqrtDkPanel()
    rows = []
    for d_k in DOC_D_KS:
        panel.d_k = d_k
        rows.append(readout_numbers(panel))
    return np.array(rows)


def test_defaults_and_url_keys():
    panel = SqrtDkPanel()
    assert (panel.d_k, panel.keys) == (128, core.DEFAULT_KEYS)
    assert panel.url_keys == ("d_k", "keys")
    assert panel.param.d_k.bounds == (1, core.MAX_D_K)
    assert panel.param.keys.bounds == (2, core.MAX_KEYS)
    assert "measured spread of the raw scores" in panel.readout.text().lower()


def test_unscaled_effective_keys_fall_monotonically(sweep):
    assert np.all(np.diff(sweep[:, 0]) < 0)


def test_scaled_effective_keys_stay_flat(sweep):
    scaled = sweep[:, 1]
    assert np.all(np.abs(scaled / scaled.mean() - 1) <= 0.10)


def test_measured_spread_tracks_sqrt_d_k(sweep):
    np.testing.assert_allclose(sweep[:, 3], np.sqrt(DOC_D_KS), atol=0.005)
    assert np.all(np.abs(sweep[:, 2] / sweep[:, 3] - 1) <= 0.15)


def test_readouts_match_the_core():
    panel = SqrtDkPanel(d_k=512)
    point = core.sweep_point(512, 16)
    assert f"{point.effective_raw:.2f}" in html(panel.readout)
    assert f"<b>{point.spread:.2f}</b>" in html(panel.readout)


def test_swing_and_exponential_ratio_at_128():
    text = html(SqrtDkPanel(d_k=128).readout)
    assert "±34" in text  # 3·√128 ≈ 33.9
    assert "e<sup>68</sup>" in text and "10<sup>29</sup>" in text


def test_mean_curve_near_the_documents_figures():
    panel = SqrtDkPanel(mean_draws=4000)  # the panel's own draws are too few for 5%
    data = panel.curve_source.data
    at = [list(data["d_k"]).index(d) for d in DOC_D_KS]
    np.testing.assert_allclose(np.asarray(data["mean_raw"])[at], DOC_RAW, rtol=0.05)
    np.testing.assert_allclose(np.asarray(data["mean_scaled"])[at], DOC_SCALED, rtol=0.05)


def test_curve_covers_one_to_max_on_powers_of_two():
    d_ks = SqrtDkPanel().curve_source.data["d_k"]
    assert d_ks[0] == 1 and d_ks[-1] == core.MAX_D_K
    assert {2 ** e for e in range(11)} <= set(d_ks)


def test_fixed_draw_curve_meets_the_marker():
    panel = SqrtDkPanel(d_k=64)
    data = panel.curve_source.data
    i = list(data["d_k"]).index(64)
    assert data["draw_raw"][i] == pytest.approx(panel.marker_source.data["raw"][0])
    assert data["draw_scaled"][i] == pytest.approx(panel.marker_source.data["scaled"][0])
    assert panel.marker_span.location == 64


@pytest.mark.parametrize("d_k", [1, 5, 128, 1024])
def test_each_bar_row_sums_to_one(d_k):
    data = SqrtDkPanel(d_k=d_k).bar_source.data
    assert np.sum(data["w_raw"]) == pytest.approx(1.0)
    assert np.sum(data["w_scaled"]) == pytest.approx(1.0)


def test_changing_keys_changes_the_bar_count():
    panel = SqrtDkPanel()
    assert len(panel.bar_source.data["key"]) == 16
    panel.keys = 40
    assert len(panel.bar_source.data["key"]) == 40
    assert len(panel.bar_source.data["w_raw"]) == 40
    # the axes stay put; the bars fill them, key i centred at (i - ½) / n
    assert (panel.raw_figure.x_range.start, panel.raw_figure.x_range.end) == (0, 1)
    bars = panel.raw_figure.renderers[0].glyph
    assert bars.x.field == "key" and bars.width.field == "key"  # placed in the browser
    assert panel.all_keys_span.location == 40
    assert "of 40" in html(panel.readout)


def test_figures_and_sources_are_built_once():
    panel = SqrtDkPanel()
    before = [id(x) for x in (panel.raw_figure, panel.scaled_figure, panel.curve_figure,
                              panel.bar_source, panel.curve_source, panel.marker_source)]
    for d_k, keys in [(4, 16), (1024, 3), (5, 256), (128, 16)]:
        panel.param.update(d_k=d_k, keys=keys)
    after = [id(x) for x in (panel.raw_figure, panel.scaled_figure, panel.curve_figure,
                             panel.bar_source, panel.curve_source, panel.marker_source)]
    assert before == after
    assert panel.__panel__() is panel.__panel__()


def test_widgets_follow_the_parameters():
    panel = SqrtDkPanel()
    panel.d_k_slider.value = 3  # the slider moves in powers of two
    assert panel.d_k == 8
    panel.d_k = 5  # any value, e.g. from the URL: the slider rests on the nearest power
    assert panel.d_k_slider.value == 2 and panel.d_k == 5
    assert panel.d_k_input.value == 5
    panel.keys = 30  # any number, e.g. typed: the slider rests on the nearest stop, 32
    assert KEY_STOPS[panel.keys_slider.value] == 32 and panel.keys_input.value == 30
    panel.keys_input.value = 12
    assert panel.keys == 12 and len(panel.bar_source.data["key"]) == 12
    panel.keys_slider.value = 0  # the keys slider moves over its stops
    assert panel.keys == 2 and len(panel.bar_source.data["key"]) == 2


def test_url_restore_clamps_and_ignores_listing_repairs():
    panel = SqrtDkPanel()
    repairs = url_state.restore(panel, panel.url_keys, args={"d_k": [b"5000"], "keys": [b"abc"]})
    assert panel.d_k == core.MAX_D_K and panel.keys == core.DEFAULT_KEYS
    assert any("d_k" in n and "1024" in n for n in repairs)
    assert any("keys" in n and "ignored" in n for n in repairs)
    assert "effective keys of 16" in html(panel.readout)
    assert "√1024 = <b>32.00</b>" in html(panel.readout)


def test_url_restore_accepts_a_value_between_powers_of_two():
    panel = SqrtDkPanel()
    repairs = url_state.restore(panel, panel.url_keys, args={"d_k": [b"5"], "keys": [b"7"]})
    assert repairs == [] and (panel.d_k, panel.keys) == (5, 7)
    assert "√5 = <b>2.24</b>" in html(panel.readout)


def test_mean_draws_budget():
    assert panel_module.mean_draws(2) == panel_module.MAX_MEAN_DRAWS
    for keys in (16, 64, 256):
        draws = panel_module.mean_draws(keys)
        assert panel_module.MIN_MEAN_DRAWS <= draws <= panel_module.MAX_MEAN_DRAWS
        assert draws * keys <= max(panel_module.MEAN_WORK, panel_module.MIN_MEAN_DRAWS * keys)


# serial: it asserts a time, so it runs in `make test`'s pass alone, not beside a worker
@pytest.mark.serial
def test_a_d_k_interaction_is_fast():
    panel = SqrtDkPanel()
    times = []
    for d_k in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] * 3:
        start = time.perf_counter()
        panel.d_k = d_k
        times.append(time.perf_counter() - start)
    assert np.median(times) < 0.020


def test_page_builds():
    page = registry.by_route("/sqrt-dk").page()
    assert page.name == "The √d_k sweep"


def test_in_the_article_the_sweep_leaves_its_heading_to_the_section():
    import panel as pn

    from app.panels.sqrt_dk import INTRO, LOOK_FOR

    def shown(panel):  # the text of its Markdown and HTML panes
        return " ".join(str(md.object) for md in panel.__panel__().select(pn.pane.Markdown)
                        + panel.__panel__().select(pn.pane.HTML))

    alone, in_chapter = shown(SqrtDkPanel(mean_draws=4)), shown(SqrtDkPanel(mean_draws=4,
                                                                            in_chapter=True))
    for text in ("The √d_k sweep</h3>", INTRO):
        assert text in alone and text not in in_chapter
    assert LOOK_FOR in in_chapter


def test_stops_hold_the_documents_figures():
    assert D_K_STOPS == tuple(2 ** e for e in range(11))
    assert set(DOC_D_KS) <= set(D_K_STOPS)
    assert KEY_STOPS == tuple(2 ** e for e in range(1, 9)) and core.DEFAULT_KEYS in KEY_STOPS
    controls = {c.name: c for c in SqrtDkPanel.controls()}
    assert controls["d_k"].values == D_K_STOPS
    assert controls["d_k"].raw_values() == tuple(range(11))  # the slider's position
    assert controls["keys"].values == KEY_STOPS


# --- the one shape: a pure state, the live models hold it, a small table ------------------

SAMPLE = [{"d_k": d, "keys": k} for d, k in [(128, 16), (4, 16), (512, 16), (1, 2), (1024, 256),
                                            (16, 64), (2, 8), (256, 128)]]


def test_state_is_pure_json_and_leaves_the_widgets_alone():
    panel = SqrtDkPanel()
    before = (panel.d_k_slider.value, panel.keys_slider.value, dict(panel.readout.values),
              list(panel.bar_source.data["w_raw"]))
    for params in SAMPLE:
        first, second = SqrtDkPanel.state(**params), SqrtDkPanel.state(**params)
        assert first == second
        assert json.loads(states.canonical(first)) == first  # plain JSON values
    after = (panel.d_k_slider.value, panel.keys_slider.value, dict(panel.readout.values),
             list(panel.bar_source.data["w_raw"]))
    assert after == before and (panel.d_k, panel.keys) == (128, 16)


def test_a_live_panel_shows_exactly_its_state():
    panel = SqrtDkPanel()
    for params in SAMPLE + SAMPLE[::-1]:
        panel.param.update(**params)
        assert mismatches(panel, SqrtDkPanel.state(**params)) == [], params


def test_the_states_a_static_page_ships_hold_the_documents_figures():
    for d_k, root in zip(DOC_D_KS, ("2.00", "4.00", "11.31", "22.63")):
        values = SqrtDkPanel.state(d_k=d_k, keys=16)["holes:readout"]
        assert (values["d_k"], values["root"], values["n"]) == (str(d_k), root, "16")
    values = SqrtDkPanel.state(d_k=128, keys=16)["holes:readout"]
    assert (values["swing"], values["two_swing"], values["ratio"], values["ratio_exp"]) == (
        "34", "68", "10", "29")


def test_a_bar_row_is_the_cores_softmax_to_the_wire_precision():
    for d_k, keys in [(1, 2), (128, 16), (1024, 256)]:
        point = core.sweep_point(d_k, keys)
        bars = SqrtDkPanel.state(d_k=d_k, keys=keys)["source:bars"]
        for column, weights in (("w_raw", point.weights_raw),
                                ("w_scaled", point.weights_scaled)):
            np.testing.assert_allclose(bars[column], weights, rtol=1e-6, atol=1e-9)
            assert sum(bars[column]) == pytest.approx(1.0)


def test_a_static_build_hides_the_any_value_boxes():
    import panel as pn

    with states.static_build():
        panel = SqrtDkPanel(in_chapter=True)
        layout = pn.panel(panel)
    assert not layout.select(pn.widgets.IntInput)
    assert set(panel.widgets) == {"d_k", "keys"}
    assert len(pn.panel(SqrtDkPanel()).select(pn.widgets.IntInput)) == 2  # live: any value


@pytest.mark.parametrize("static", [False, True], ids=["live", "static"])
def test_the_article_builds_the_sweep(static):
    shelf = built_article(static)
    sweep = shelf("sweep")
    assert sweep.in_chapter and sweep.url_map == {"d_k": "d_k", "keys": "keys"}
    sweep.d_k = 512
    assert readout_numbers(sweep)[3] == pytest.approx(22.63)


def test_the_curve_note_says_why_its_means_differ_from_the_chapters():
    panel = SqrtDkPanel()
    draws = panel_module.mean_draws(16)
    mean = core.expectation(panel_module.CURVE_D_KS, 16, draws)
    error = max((mean.effective_raw_se / mean.effective_raw).max(),
                (mean.effective_scaled_se / mean.effective_scaled).max())
    assert draws == 75 and 0.01 < error < 0.2
    text = panel.curve_note.text()
    assert (f"the mean over 75 fresh draws, few enough that a change of keys redraws at once, "
            f"so a point of them is uncertain by up to ±{fmt.percent(error, 2)} (one standard "
            "error); the chapter's averages use far more draws and are steadier.") in text
    panel.keys = 256  # 4 draws: the note says how rough that is
    assert "mean over 4 fresh draws" in panel.curve_note.text()
    assert panel_module.mean_uncertainty(256, 4) > error
