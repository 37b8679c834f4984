"""The head panel without a browser: readout text and source data for the documents' figures."""

import itertools
import math

import numpy as np
import pytest

from app.kit import url_state
from app.panels.heatmap import HeadPanel
from attention_core import worked_example


def cell(panel, query, key, kind="weight"):  # -> that cell's data if drawn as `kind`, else None
    data = panel.drawn(kind)
    for i, (x, y) in enumerate(zip(data["x"], data["y"])):
        if (x, y) == (key, query):
            return {name: column[i] for name, column in data.items()}
    return None


def row_weights(panel, query):  # -> [n] weights of one query row, as drawn
    data = panel.drawn("weight")
    pairs = sorted((x, w) for x, y, w in zip(data["x"], data["y"], data["weight"]) if y == query)
    return np.array([w for _, w in pairs])


def hero(panel):  # the readouts' text as a reader sees it
    return panel._hero.text()


def caption(panel):
    return panel._caption.text()


def arithmetic(panel):
    return panel._arithmetic.text()


def notes(panel):  # the truncate line and the log
    return (panel._truncate.text() + panel._log_view.text())


def arithmetic_weight(panel, key):  # the weight cell of one key's line in the arithmetic table
    return panel._arithmetic.values[f"weight{key}"]


def masked_positions(panel):  # -> {(query, key)} the head hides, from its own numbers
    r = panel.numbers().result
    return {(int(q), k) for row, q in enumerate(r.query_positions) for k in range(r.n)
            if r.hidden[row, k]}


def outlined_row(panel):  # -> the query position the outline stands on, from where it is drawn
    (y,), (height,) = panel.row_source.data["y"], panel.row_source.data["height"]
    assert height == pytest.approx(1 / panel.length, abs=1e-4)  # one row high
    return round(y * panel.length - 0.5)


def shown_labels(panel, axis):  # -> {position: text} of the key or query labels drawn
    data = panel.position_source.data
    return {p: text for p, text, n in zip(data["p"], data[f"{axis}_label"], data["n"]) if n}


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
    assert cell(panel, 2, 1)["weight"] == pytest.approx(expected[1], abs=5e-5)  # colour only
    assert "effective tokens attended (row 2, sat): 1.98" in hero(panel)
    assert "0.77, on key 1 (cat)" in caption(panel)


def test_masked_cells_are_minus_infinity_not_small_weights(panel):
    assert cell(panel, 2, 3) is None  # not drawn as a weight
    assert cell(panel, 2, 3, "masked")["label"] == "−∞"
    assert len(panel.drawn("masked")["x"]) == 15  # 6·5/2 above the diagonal
    assert "−∞" in arithmetic(panel)


def test_mask_off_sends_023_to_mat_and_the_two_the_rows_match(panel):
    panel.mask = False
    assert arithmetic_weight(panel, 5) == "0.23"  # 5 mat
    assert cell(panel, 2, 5)["label"] == "0.23"
    assert np.array_equal(row_weights(panel, 0), row_weights(panel, 4))
    assert len(panel.drawn("masked")["x"]) == 0
    assert "discarded: 0 of 36" in hero(panel)


def test_divisor_off_sharpens_row_2(panel):
    panel.divide = False
    assert arithmetic_weight(panel, 1) == "0.97"
    assert "(row 2, sat): 1.17" in hero(panel)
    assert "÷ 1" in arithmetic(panel) and "÷√5" not in arithmetic(panel)


def test_pairs_discarded_at_length_8(panel):
    panel.length = 8
    assert "pairs computed then discarded: 28 of 64" in hero(panel)
    assert panel._hero.values["dots"] == "64"  # dot products, n²
    assert panel._hero.values["dots_formula"] == "n² = 8²"
    panel.mask = False
    assert "pairs computed then discarded: 0 of 64" in hero(panel)


def test_decode_mask_toggle_changes_nothing_and_the_log_says_why(panel):
    panel.phase = "decode"
    assert set(panel.drawn()["y"]) == {5}  # only the last query's row
    assert len(panel.drawn()["x"]) == 6
    assert panel._hero.values["dots"] == "6"  # n dot products
    assert panel._hero.values["dots_formula"] == "n = 6"
    before = panel.drawn()
    panel.mask = False
    assert panel.drawn() == before
    latest = panel.log[0]
    assert latest.startswith("causal mask off: no weight changed")
    assert "no future key to hide" in latest
    panel.mask = True
    assert panel.drawn() == before
    assert "no future key to hide" in panel.log[0]
    assert "no future key to hide" in notes(panel)


def test_decode_shows_the_last_row_and_prefill_gives_the_query_back(panel):
    panel.phase = "decode"
    assert panel.inspected() == 5 and panel._query_w.disabled
    assert outlined_row(panel) == 5
    assert "so row 5 (mat) is shown" in panel.log[0]
    panel.phase = "prefill"
    assert panel.inspected() == 2 and not panel._query_w.disabled
    assert outlined_row(panel) == 2


def test_truncate_line_matches_with_mask_and_not_without(panel):
    assert "row 2 matches a pass over the first 3 tokens, bit for bit" in notes(panel)
    panel.mask = False
    assert "mismatch: largest disagreement 6.0e−01" in notes(panel)
    panel.mask = True
    blas = worked_example.truncate(6, 2, exact=False)
    if not blas.equal:
        assert f"{blas.largest_disagreement:.1e}".replace("-", "−") in notes(panel)
    assert "BLAS matmul path" in notes(panel)


def test_query_clamps_when_length_shrinks(panel):
    panel.length = 8
    panel.query = 7
    panel.length = 4
    assert panel.inspected() == 3 and panel.query == 7  # kept for when the length grows
    assert panel._query_w.end == 3
    assert "inspect query 7 is past the last token, so row 3 (on) is shown" in panel.log[0]
    assert outlined_row(panel) == 3
    panel.length = 8
    assert panel.inspected() == 7


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
    assert (fig.x_range.start, fig.x_range.end) == (0, 1)
    assert set(panel.cell_source.data["n"]) == {3, 0}  # the browser places the cells by it
    assert shown_labels(panel, "key") == {0: "0\nthe", 1: "1\ncat", 2: "2\nsat"}
    assert shown_labels(panel, "query") == {0: "0 the", 1: "1 cat", 2: "2 sat"}


def test_position_labels_tell_the_two_thes_apart(panel):
    labels = shown_labels(panel, "query")
    assert labels[0] == "0 the" and labels[4] == "4 the"


@pytest.mark.parametrize("length", range(3, 9))
def test_cells_fill_the_fixed_axes_side_by_side(length):
    # every length's matrix spans the whole 0..1 square in n equal columns and rows, no two
    # cells overlapping, the masked layer inside the cell it stands in for
    from app.panels.heatmap import CELL_SIZE, MASKED_SIZE, place

    centres = [place(p, length) for p in range(length)]
    edges = sorted(c + s * CELL_SIZE / length / 2 for c in centres for s in (-1, 1))
    assert 0 < edges[0] and edges[-1] < 1 and edges == sorted(set(edges))
    assert all(b - a == pytest.approx(1 / length, abs=1e-4) for a, b in itertools.pairwise(centres))
    assert MASKED_SIZE < CELL_SIZE < 1


def test_a_length_places_every_cell_and_label_it_shows(panel):
    from app.chapters.stills import column
    from app.panels.heatmap import MASKED_SIZE, place

    for length in (8, 3, 5):
        panel.length = length
        data = panel.cell_source.data
        assert panel.shown_length() == length and set(data["n"]) == {length, 0}
        masked = panel.masked_source.data
        assert {(q, k) for q, k, n in zip(masked["q"], masked["k"], masked["n"]) if n} == {
            (q, k) for q in range(length) for k in range(q + 1, length)}
        # the −∞ labels where the browser places them (the still applies the same
        # transforms in Python), on the hatched cells of the one layer shown
        label = next(r.glyph for r in panel.figure.renderers
                     if r.data_source is panel.masked_source)
        rows = len(masked["k"])
        xs, ys = column(label, "x", masked, rows), column(label, "y", masked, rows)
        shown = [i for i, n in enumerate(masked["n"]) if n]
        places = {(place(masked["k"][i], length), place(masked["q"][i], length)) for i in shown}
        assert {(round(xs[i], 4), round(ys[i], 4)) for i in shown} == places
        assert all(math.isnan(xs[i]) for i in range(rows) if i not in shown)
        # a row not drawn holds no text (Bokeh would make and measure a box for it)
        assert [i for i, t in enumerate(masked["label"]) if t is not None] == shown
        positions = panel.position_source.data
        for labels in (positions["key_label"], positions["query_label"]):
            assert [p for p, t in enumerate(labels) if t is not None] == list(range(length))
        layers = [n for n, r in panel.masked_layers.items() if r.visible]
        layer = panel.masked_layers[length]
        assert layers == [length] and set(zip(layer.data_source.data["x"],
                                              layer.data_source.data["y"])) == places
        assert layer.glyph.width == layer.glyph.height == round(MASKED_SIZE / length, 4)
        positions = panel.position_source.data
        assert [p for p, n in zip(positions["p"], positions["n"]) if n] == list(range(length))
        assert {n for n in positions["n"] if n} == {length}
        assert {(q, k) for q, k, n in zip(data["q"], data["k"], data["n"]) if n} == {
            (q, k) for q in range(length) for k in range(q + 1)}  # mask on: the weights
        assert list(shown_labels(panel, "key")) == list(range(length))
        assert list(shown_labels(panel, "query")) == list(range(length))


def test_url_restore_clamps_and_ignores_listing_repairs(panel):
    args = {"length": [b"99"], "mask": [b"off"], "phase": [b"bogus"]}
    repairs = url_state.restore(panel, panel.url_keys, args)
    assert panel.length == 8 and panel.mask is False and panel.phase == "prefill"
    assert any("length=99" in n and "using 8" in n for n in repairs)
    assert any("phase='bogus'" in n and "ignored" in n for n in repairs)
    assert "0 of 64" in hero(panel)


def test_url_restore_length_8_query_7_is_kept(panel):
    url_state.restore(panel, panel.url_keys, {"length": [b"8"], "query": [b"7"]})
    assert (panel.length, panel.query) == (8, 7)
    assert "row 7" in hero(panel)


# --- one interaction, one small message: only what changed is written ----------------------


def test_the_masked_layer_shows_exactly_the_masked_cells(panel):
    for change in ({}, {"mask": False}, {"mask": True, "length": 8}, {"length": 3},
                   {"phase": "decode"}, {"mask": False}, {"phase": "prefill"}, {"mask": True}):
        panel.param.update(**change)
        drawn = panel.drawn("masked")
        assert set(zip(drawn["y"], drawn["x"])) == masked_positions(panel), change
        weights = panel.drawn("weight")
        assert not set(zip(weights["y"], weights["x"])) & masked_positions(panel), change


def test_the_table_shows_one_line_per_key(panel):
    panel.length = 4
    assert [panel._arithmetic.values[f"key{j}"] for j in range(8)] == [
        "0 the", "1 cat", "2 sat", "3 on", "", "", "", ""]  # empty lines are not shown
    assert "4 the" not in arithmetic(panel)
    panel.length = 8
    assert panel._arithmetic.values["key7"] == "7 purred"


def test_a_readout_sends_only_what_differs_from_what_it_first_drew(panel):
    assert panel._hero.patch == {} and panel._arithmetic.patch == {}
    panel.mask = False
    assert panel._hero.patch == {"discarded": "0 of 36", "eff": "3.73"}
    assert panel._arithmetic.patch["weight5"] == "0.23"
    assert "key0" not in panel._arithmetic.patch  # unchanged text is not sent
    panel.mask = True  # back where it started: nothing differs from the first drawing
    assert panel._hero.patch == {} and panel._arithmetic.patch == {}


def test_readout_text_is_set_as_text_not_parsed_as_html():
    from app.panels.heatmap import HeroReadout

    values = {"dots": "<b>36</b>", "dots_formula": "", "discarded": "", "eff_row": "",
              "eff": ""}
    readout = HeroReadout(values)
    assert "&lt;b&gt;36&lt;/b&gt;" in readout.filled()  # what the browser's textContent shows
    assert 'aria-live="polite"' in readout.template
    with pytest.raises(ValueError):
        HeroReadout({"dots": "1"})  # every hole needs a value


def test_ranges_and_toggle_classes_never_change(panel):
    # a changed range, axis or CSS class makes the browser lay the figure or the page out
    # again; the ranges span 0..1 for every length, and the labels and titles are glyphs
    fig = panel.figure
    ranges = (fig.x_range.start, fig.x_range.end, fig.y_range.start, fig.y_range.end)
    assert ranges == (0, 1, 1, 0) and not any(a.visible for a in fig.axis)
    titles = [r.data_source.data.get("text") for r in fig.renderers
              if r.data_source.data.get("text") in (["keys"], ["queries"])]
    assert titles == [["keys"], ["queries"]]
    classes = (list(panel._mask_w.css_classes), panel._mask_w.variant)
    for change in ({"mask": False}, {"divide": False}, {"query": 4}, {"length": 8},
                   {"phase": "decode"}, {"length": 3}):
        panel.param.update(**change)
        assert (fig.x_range.start, fig.x_range.end, fig.y_range.start,
                fig.y_range.end) == ranges, change
    assert (list(panel._mask_w.css_classes), panel._mask_w.variant) == classes
    panel.length = 8
    assert shown_labels(panel, "key")[7] == "7\npurred"  # two lines over the keys


def test_a_labels_colour_follows_the_drawn_shade():
    from bokeh.palettes import Cividis256

    from app.panels.heatmap import black_or_white, text_mapper

    mapper = text_mapper()
    low, high = mapper.low, mapper.high
    for i in range(256):
        w = (i + 0.5) / 256
        # the two-colour mapper's bin, as Bokeh computes it in the browser
        browser = mapper.palette[min(int((w - low) / (high - low) * 2), 1)]
        shade = Cividis256[min(int(w * 256), 255)]  # the bin the cells' mapper (0..1) draws
        assert browser == black_or_white(shade)


def test_every_interaction_is_one_message_under_5_5_kib():
    # what one interaction sends, collected as the server collects it (one held batch),
    # serialized as the PATCH-DOC it becomes; the benchmark measures it on the wire
    import json

    import panel as pn
    from bokeh.document import Document
    from bokeh.document.events import DocumentPatchedEvent
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        panel = HeadPanel()
        pn.panel(panel).server_doc(doc)
        for change in ({"mask": False}, {"mask": True}, {"divide": False}, {"query": 4},
                       {"length": 8}, {"length": 3}, {"length": 8}, {"phase": "decode"},
                       {"mask": False}, {"phase": "prefill"}, {"mask": True}, {"query": 0}):
            doc.hold("collect")
            panel.param.update(**change)
            events = [e for e in doc.callbacks._held_events
                      if isinstance(e, DocumentPatchedEvent)]
            doc.callbacks._held_events = []
            doc.unhold()
            content = Protocol().create("PATCH-DOC", events).content
            size = len(json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode())
            # 4 KiB before the weights table for screen readers (64 more text holes), which
            # adds up to 0.6 KiB when the length changes, and a length sends the browser the
            # length each cell, masked cell and label is placed by (0.6 KiB)
            assert size <= 5.5 * 1024, (change, size)
            kinds = {type(e.model).__name__ for e in events}
            assert "HTML" not in kinds and "LinearAxis" not in kinds, change  # nothing redrawn


def test_the_weights_table_holds_the_cells_numbers(panel):
    for change in ({}, {"mask": False}, {"length": 8}, {"phase": "decode"}, {"length": 3}):
        panel.param.update(**change)
        values, r = panel._weights_table.values, panel.numbers().result
        drawn = panel.drawn()
        for x, y, label in zip(drawn["x"], drawn["y"], drawn["label"]):
            assert values[f"w{y}_{x}"] == label  # every drawn weight, as the cell shows it
        masked = panel.drawn("masked")
        assert all(values[f"w{y}_{x}"] == "masked" for x, y in zip(masked["x"], masked["y"]))
        assert [values[f"kh{k}"] != "" for k in range(8)] == [k < r.n for k in range(8)]
        if panel.phase == "decode":
            assert values["w0_0"] == "not computed"


def test_every_cells_label_meets_aa_contrast_on_its_shade():
    from bokeh.palettes import Cividis256

    from app.panels.heatmap import black_or_white, contrast

    worst = min(contrast(black_or_white(c), c) for c in Cividis256)
    assert worst >= 4.5, worst  # WCAG AA for normal text; the labels are 11 px


def test_only_the_length_redraws_the_masked_layer_and_the_labels(panel):
    # the masked layer and the position labels change with the length alone: they are drawn
    # with the axes, the weights on the overlay canvas that every other control redraws
    from bokeh.models import GlyphRenderer

    levels = {}
    for r in panel.figure.select({"type": GlyphRenderer}):
        levels.setdefault(r.data_source, set()).add(r.level)
    assert levels[panel.masked_source] == levels[panel.position_source] == {"annotation"}
    assert all(levels[r.data_source] == {"annotation"} for r in panel.masked_layers.values())
    assert levels[panel.cell_source] == levels[panel.row_source] == {"overlay"}
    parts = {p.fn.__name__: p.controls for p in HeadPanel.parts()}
    assert parts["places_state"] == ("length",)
    places = (panel.masked_source, panel.position_source)
    before = [dict(s.data) for s in places]
    layers = {n: dict(r.data_source.data) for n, r in panel.masked_layers.items()}
    panel.length = 4  # the labels get one number a row: where it is placed, if at all
    assert panel.shown_length() == 4
    for source, old in zip(places, before):
        changed = {c for c in old if source.data[c] != old[c]}
        assert "n" in changed and changed <= {"n", "label", "key_label", "query_label"}
    # and another hatched layer shows; no layer's data changes (a hatch is made again then)
    assert {n: dict(r.data_source.data) for n, r in panel.masked_layers.items()} == layers
    shown = {name for name, on in HeadPanel.parts()[0].fn(length=5).items() if on is True}
    assert shown == {"prop:masked_layer_5.visible"}


def test_no_glyph_keeps_selected_unselected_or_muted_copies():
    # no panel selects or mutes; every such copy is work the browser does on each change
    import panel as pn
    from bokeh.models import GlyphRenderer

    from app.chapters import live_chapter, page_model
    from app.kit.states import StatePanel

    panels = {**live_chapter.build_panels(page_model.at("/").panels),
              **live_chapter.build_panels(page_model.at("/math").panels)}
    renderers = [r for viewer in panels.values() if isinstance(viewer, StatePanel)
                 for pane in pn.panel(viewer).select(pn.pane.Bokeh)
                 for r in pane.object.select({"type": GlyphRenderer})]
    assert len(renderers) > 40
    assert all(r.selection_glyph is None and r.nonselection_glyph is None
               and r.muted_glyph is None for r in renderers)


def test_the_divisor_log_and_the_notes_say_what_changes(panel):
    # off: q·k is unchanged, the softmax's inputs grow by √5; a row with one visible key
    # keeps its weight of 1
    panel.divide = False
    assert panel.log[0].startswith("divide scores by √d_k off: the softmax's inputs are q·k "
                                   "itself, 2.24× larger, so it is sharper; row 2 attends")
    panel.query = 0
    panel.divide = True
    assert "inputs are q·k ÷ √5 ≈ q·k ÷ 2.24; row 0 attends 1.00 tokens" in panel.log[0]
    panel.divide = False
    assert "2.24× larger, but row 0 sees one key, so its weight stays 1" in panel.log[0]
    # the BLAS line names what regrouping does, and no undefined "batch"
    panel.param.update(query=2, divide=True)
    if not worked_example.truncate(6, 2, exact=False).equal:
        assert ("so results can differ in the last digits between runs of different sizes"
                in notes(panel))
    assert "batch" not in notes(panel)
    # the table's exp(s − max): s named, and the max's subtraction said to change no weight
    assert ("s is the softmax's input; subtracting the row's max changes no weight"
            in panel._arithmetic.text())
