"""The model picker without a browser: presets, custom configs, bad configs kept out."""

import builtins
import json
import pathlib

import pytest

from app.kit import fmt, states
from app.kit.theme import DARK_INK, LIGHT_INK, ink
from app.panels.model_picker import (
    CUSTOM,
    Model,
    ModelPicker,
    picker_state,
    resolve,
)
from attention_core import costs

LLAMA = costs.PRESETS["llama-3-8b"]


def custom_text(**changes):  # Llama-3-8B's config with some fields changed -> JSON text
    return json.dumps({**LLAMA, **changes})


BAD_CONFIGS = [  # (text, the field the error must name)
    ("this is not json {", "config.json"),
    ("{" + " " * costs.MAX_CONFIG_BYTES + "}", "config.json"),
    (custom_text().replace('"num_hidden_layers": 32', '"num_hidden_layers": NaN'),
     "num_hidden_layers"),
    (custom_text(num_hidden_layers=1e12), "num_hidden_layers"),
    (custom_text(num_hidden_layers=10**12), "num_hidden_layers"),
    (custom_text(num_attention_heads="32"), "num_attention_heads"),
    (custom_text(num_attention_heads="<script>alert(1)</script>"), "num_attention_heads"),
    (custom_text(_name_or_path="<script>alert(1)</script>"), "_name_or_path"),
    (custom_text(model_type="<img src=x onerror=alert(1)>"), "model_type"),
    ("[1, 2, 3]", "config.json"),
]


def test_defaults_are_the_first_preset():
    picker = ModelPicker()
    assert picker.model == "qwen3-8b"
    assert picker.shape.name == "Qwen3-8B"
    assert set(picker.param.model.objects) == {"qwen3-8b", "gpt2", "llama-3-8b", CUSTOM}
    assert not picker.error and not picker._error_pane.visible
    assert not picker._custom_box.visible
    assert picker.status.text() == "Counting Qwen3-8B, from the preset config.json."


def test_switching_presets_swaps_the_shape_and_the_fields():
    picker = ModelPicker(model="llama-3-8b")
    assert picker.shape.name == "Llama-3-8B"
    fields = picker.fields.values
    assert [fields[f"field{i}"] for i in range(4)] == [
        "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "hidden_size / num_attention_heads"]
    assert fields["value3"] == "128"  # Llama-3-8B has no head_dim field: 4096 / 32
    assert "<b data-s=\"value3\"></b>" in picker.fields.template  # the value in bold
    picker.model = "gpt2"
    assert picker.shape.name == "GPT-2 small"
    fields = picker.fields.values
    assert (fields["field0"], fields["field1"], fields["field3"]) == (
        "n_layer", "n_head", "n_embd / n_head")
    assert fields["value3"] == "64"  # 768 / 12


def test_preset_notes_and_custom_notes_are_shown():
    picker = ModelPicker()
    assert "No approximations" in picker.fields.text()
    assert picker.load_config(custom_text(model_type="mystery"))
    assert "'mystery' is not one this version knows" in picker.fields.text()  # the core's line
    assert picker.load_config(custom_text(model_type="lfm3"))
    assert "'lfm3' is a Transformers" in picker.fields.text()


def test_a_good_custom_config_becomes_the_model():
    picker = ModelPicker()
    assert picker.load_config(custom_text(_name_or_path="my-llama", num_hidden_layers=16))
    assert picker.model == CUSTOM
    assert picker.shape.layers == 16 and picker.shape.name == "my-llama"
    assert picker._custom_box.visible
    assert "my-llama" in picker.status.text()


def test_a_model_with_no_attention_shows_no_heads():
    """Mamba: no layer attends. The fields under the picker name no head count, KV heads or
    head width (the core's stand-ins for them are no model's), and say why."""
    mamba = {"model_type": "mamba", "hidden_size": 768, "intermediate_size": 1536,
             "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16, "conv_kernel": 4,
             "expand": 2, "time_step_rank": 48}
    picker = ModelPicker()
    assert picker.load_config(json.dumps(mamba))
    shown = picker._state["holes:model_fields"]
    assert (shown["field0"], shown["value0"]) == ("num_hidden_layers", "24")
    assert [shown[f"value{i}"] for i in (1, 2, 3)] == ["none"] * 3
    assert "no layer attends" in shown["what1"] and "fixed state" in shown["what2"]
    # a model that attends keeps its four figures
    assert picker.load_config(custom_text())
    assert picker._state["holes:model_fields"]["value1"] == "32"


@pytest.mark.parametrize("text, field", BAD_CONFIGS)
def test_a_bad_config_names_the_field_and_keeps_the_last_model(text, field):
    picker = ModelPicker(model="gpt2")
    before = picker.shape
    assert not picker.load_config(text)
    assert picker.shape is before and picker.model == "gpt2"
    shown = picker._error_pane.object
    assert picker._error_pane.visible and 'role="alert"' in shown
    assert f"<code>{field}</code>" in shown
    assert picker.error.startswith(field)
    assert "<script" not in shown and "<img" not in shown
    assert "Still counting GPT-2 small" in shown


def test_markup_is_escaped_in_the_error():
    picker = ModelPicker()
    picker.load_config(custom_text(num_attention_heads="<script>alert(1)</script>"))
    assert "&lt;script&gt;" in picker._error_pane.object


def test_a_bad_config_after_a_good_one_keeps_the_good_custom():
    picker = ModelPicker()
    picker.load_config(custom_text(num_hidden_layers=16))
    good = picker.shape
    assert not picker.load_config('{"num_hidden_layers": NaN}')
    assert picker.shape is good and picker.model == CUSTOM
    assert picker.load_config(custom_text(num_hidden_layers=8))  # and a fix clears the error
    assert not picker._error_pane.visible and picker.error == ""


def test_custom_without_a_config_keeps_the_model_and_says_so():
    picker = ModelPicker(model="llama-3-8b")
    picker.model = CUSTOM
    assert picker.shape.name == "Llama-3-8B"
    assert "No config loaded yet" in picker.status.text()
    assert picker._custom_box.visible


def test_the_custom_config_comes_back_after_a_preset():
    picker = ModelPicker()
    picker.load_config(custom_text(num_hidden_layers=16))
    custom = picker.shape
    picker.model = "gpt2"
    assert picker.shape.name == "GPT-2 small"
    picker.model = CUSTOM
    assert picker.shape is custom


def test_upload_and_paste_paths():
    picker = ModelPicker()
    picker.file_input.filename = "<b>evil</b>.json"
    picker.file_input.value = custom_text(num_hidden_layers=20).encode()
    assert picker.shape.layers == 20
    assert "<b>evil</b>.json" in picker.status.values["tail"]  # set as text, never parsed
    assert "&lt;b&gt;evil&lt;/b&gt;.json" in picker.status_html()
    picker.text_input.value = custom_text(num_hidden_layers=24)
    picker.use_button.clicks += 1
    assert picker.shape.layers == 24
    picker.file_input.filename = "big.json"
    picker.file_input.value = b" " * (costs.MAX_CONFIG_BYTES + 1)
    assert picker.shape.layers == 24 and "big.json" in picker._error_pane.object


def test_nothing_is_written_to_disk(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the picker tried to write a file")

    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            refuse()
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(pathlib.Path, "write_text", refuse)
    monkeypatch.setattr(pathlib.Path, "write_bytes", refuse)
    picker = ModelPicker()
    assert picker.load_config(custom_text().encode())
    assert not picker.load_config(b"\x00\x01binary")


def test_the_hint_says_the_config_is_not_in_the_url():
    picker = ModelPicker()
    text = " ".join(str(getattr(o, "object", "")) for o in picker._custom_box.objects)
    assert "never put in the URL" in text and "never saved to disk" in text


def test_formatting_helpers():
    assert fmt.percent(0.07390774) == "7.4%" and fmt.percent(0.004963) == "0.50%"
    assert fmt.percent(0.3943) == "39%" and fmt.percent(0.99951) != "100%"
    assert fmt.scale_words(1_073_741_824) == "1.07 billion"
    assert fmt.scale_words(122_532, 2) == "120 thousand"
    assert fmt.gb_and_gib(536_870_912) == "0.54 GB (0.50 GiB)"
    assert fmt.gb_and_gib(4_294_967_296) == "4.3 GB (4.0 GiB)"
    assert fmt.binary_bytes(4096) == "4 KiB" and fmt.binary_bytes(131_072) == "128 KiB"
    assert fmt.thousands(4_194_304.4) == "4,194,304"
    assert fmt.tokens_or_never(51_324.4) == "51,324" and fmt.tokens_or_never(float("inf")) == \
        "never"
    assert fmt.about_times(73.8) == "~74" and fmt.about_times(3.24) == "~3.2"


def test_figure_ink_follows_the_theme(monkeypatch):
    from app.kit import chrome

    assert ink() == LIGHT_INK and LIGHT_INK.paper == "#ffffff"
    monkeypatch.setattr(chrome, "theme", lambda: "dark")
    assert ink() == DARK_INK
    # Panel's dark theme paints plots #2b3035: a label's paper must be that, not white
    from panel.theme.base import BOKEH_DARK

    assert DARK_INK.paper == BOKEH_DARK["attrs"]["Plot"]["background_fill_color"]


# ---- the picker's part of a panel's state ----------------------------------------------------

def test_picker_state_is_pure_and_a_preset_key_means_its_model():
    for key in costs.PRESETS:
        assert picker_state(key) == picker_state(key) == picker_state(resolve(key))
        assert resolve(key).shape == costs.preset(key)
    state = picker_state("gpt2")
    assert state["holes:model_status"]["name"] == "GPT-2 small"
    assert state["holes:model_fields"]["notes"] == "No approximations needed for this config."


def test_the_pickers_readouts_show_exactly_its_state():
    picker = ModelPicker()
    for key in ("gpt2", "llama-3-8b", CUSTOM, "qwen3-8b"):
        picker.model = key
        state = picker_state(picker.current())
        assert picker.status.values == state["holes:model_status"]
        assert picker.fields.values == state["holes:model_fields"]
    assert picker.load_config(custom_text(_name_or_path="mine", num_hidden_layers=16),
                              source="mine.json")
    model = picker.current()
    assert isinstance(model, Model) and model.source == "your config (mine.json)"
    assert picker.status.values == picker_state(model)["holes:model_status"]
    assert picker.fields.values["value0"] == "16"


def test_custom_with_nothing_loaded_counts_the_last_model():
    picker = ModelPicker(model="gpt2")
    picker.model = CUSTOM
    model = picker.current()
    assert model.shape.name == "GPT-2 small" and model.source == ""
    assert picker.status.text().startswith("No config loaded yet: still counting GPT-2 small")


def test_a_static_picker_offers_the_presets_and_the_live_explorable():
    import panel as pn

    with states.static_build():
        picker = ModelPicker(hosted=True, route="/cost", static=True)
    assert list(picker.model_buttons.options) == ["Qwen3-8B", "GPT-2", "Llama-3-8B"]
    assert not hasattr(picker, "file_input") and not hasattr(picker, "_custom_box")
    labels = [b.label for b in picker._layout.select(pn.widgets.Button)]
    assert labels == ["Open this in the live explorable"]
