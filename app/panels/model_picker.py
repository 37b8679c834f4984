"""Which model the cost panels count: one of the documents' three, or your own config.json.

A preset is a discrete choice: a static page switches between the three in the browser, from
states computed here. Your own config.json is counted live: a static page shows the presets
and a button to the live explorable; a live session parses the upload and counts it with the
same pure functions a preset goes through. The cost panel's own static page (`calculator=True`)
also carries an empty box, `CALCULATOR`, which static/cost_calculator.js fills: your config
counted in the browser by the JavaScript twin of the cost core, sent nowhere. The build writes
the box into the page's own HTML, under the panel's island, so it works before and without
Bokeh; the panel, once mounted, points to it (`CALCULATOR_POINTER`).

`Model` is what a panel's parts count: a shape, the config fields that set its FLOPs per
(query, key) pair, and where it came from. A part is given a preset's key (the table's
values) or a `Model` (your config, live) and `resolve`s either to a `Model`.
`picker_state(model)` is the picker's own part of a panel's state: its status line and its
fields table, as `chrome.Readout` holes.

`ModelPicker` holds the widgets. Its `model` parameter picks a preset (or "custom"); its
`shape` is always the last model that parsed cleanly, so a bad upload shows an error naming
the field and leaves every number on the page as it was. An uploaded or pasted config lives
only in this session's memory: it is never written to disk and never put in the URL (only
the preset's key is).
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
from dataclasses import dataclass

import panel as pn
import param

from app.kit import chrome, readout, resources, states
from app.kit.chrome import hole, readout_class
from attention_core import costs

PRESET_KEYS = tuple(costs.PRESETS)  # "qwen3-8b", "gpt2", "llama-3-8b"
CUSTOM = "custom"
MODEL_LABELS = {"Qwen3-8B": "qwen3-8b", "GPT-2": "gpt2", "Llama-3-8B": "llama-3-8b",
                "Custom": CUSTOM}
PRESET_LABELS = {label: key for label, key in MODEL_LABELS.items() if key != CUSTOM}
MARKUP = re.compile(r"[<>]")
SHOWN_STRINGS = ("_name_or_path", "model_type")  # config strings the page displays
TEXT_LIMIT = 2 * costs.MAX_CONFIG_BYTES  # the text box lets an oversized paste through to say so
FIELD_ROWS = 4  # pair_fields: layers, query heads, KV heads, head width
NOTE_LINES = 8  # the most approximations a config gets (costs.ModelShape.from_config)

PICKER_CSS = resources.stylesheet("model-picker.css")
# the static page's box for a config of your own, counted in the browser: the build writes it
# under the island of a panel whose class says `calculator` (cost_base.py), and loads
# static/cost_calculator.js, which fills it (app/hosting/build.py)
CALCULATOR_CLASS = "ae-cost-calculator"
CALCULATOR_ID = "your-config"
CALCULATOR = (f'<div class="{CALCULATOR_CLASS}" id="{CALCULATOR_ID}"><noscript><p class="ae-hint">'
              "A config.json of your own is counted here by this page's script, in your "
              "browser, so it needs JavaScript. Without it, "
              "<code>attention-explorable costs --config FILE</code> prints the same figures."
              "</p></noscript></div>")
# what the mounted panel says in the box's place: the box is the page's, under the island
CALCULATOR_POINTER = (f'<p class="ae-hint">Or count it in this browser, in '
                      f'<a href="#{CALCULATOR_ID}">the box under this panel</a>.</p>')


def model_selector(default):  # -> a param.Selector over the presets and "custom"
    return param.Selector(default=default, objects=dict(MODEL_LABELS), label="model", doc="""
        Which model's config.json the numbers come from; "custom" uses one you upload or paste.""")


# --- reading a config -----------------------------------------------------------------------

def _language_part(cfg):  # multimodal config -> the dict holding the text model's fields
    if "num_hidden_layers" in cfg or "n_layer" in cfg:
        return cfg
    text = cfg.get("text_config")
    return {**cfg, **text} if isinstance(text, dict) else cfg


def _reject_markup(cfg):  # strings the page shows must be plain text
    parts = [cfg] + ([cfg["text_config"]] if isinstance(cfg.get("text_config"), dict) else [])
    for part in parts:
        for key in SHOWN_STRINGS:
            value = part.get(key)
            if isinstance(value, str) and MARKUP.search(value):
                raise costs.ConfigError(key, "contains < or >, which looks like HTML markup; "
                                        "a model name must be plain text")


def read_config(text):  # str | bytes -> (ModelShape, cfg dict) or ConfigError naming the field
    cfg = costs.parse_config_text(text)
    _reject_markup(cfg)
    try:
        shape = costs.ModelShape.from_config(cfg)
    except costs.ConfigError:
        raise
    except (ValueError, TypeError, OverflowError, RecursionError) as e:  # never a crash
        raise costs.ConfigError(costs.WHOLE_FILE, f"could not be read ({type(e).__name__})") \
            from None
    return shape, cfg


def _used_key(cfg, keys):  # aliases -> the one the config spells, else the first
    return next((k for k in keys if k in cfg), keys[0])


def pair_fields(cfg, shape):  # -> [(config field, value text, what it is)], the four fields
    cfg = _language_part(cfg)
    rows = [
        (_used_key(cfg, ("num_hidden_layers", "n_layer")), f"{shape.layers:,}", "layers"),
        (_used_key(cfg, ("num_attention_heads", "n_head")), f"{shape.heads:,}",
         "query heads: these do the dot products"),
    ]
    if not shape.attention_layers:  # Mamba: the heads the core counts back out are no model's
        return rows[:1] + [
            ("(none)", "none", "query heads: no layer attends, so no dot products"),
            ("(none)", "none", "KV heads: no KV cache; each layer keeps a fixed state"),
            ("(none)", "none", "head width: no heads")]
    if cfg.get("num_key_value_heads") is not None:
        rows.append(("num_key_value_heads", f"{shape.kv_heads:,}",
                     "KV heads: these size the cache, not the FLOPs"))
    else:
        rows.append(("num_key_value_heads", f"(absent) = {shape.kv_heads:,}",
                     "one KV head per query head"))
    if shape.mla:
        rows.append(("qk_nope_head_dim + qk_rope_head_dim", f"{shape.head_dim:,}",
                     f"query/key width per head (values: v_head_dim = {shape.v_head_dim:,})"))
    elif cfg.get("head_dim") is not None:
        rows.append(("head_dim", f"{shape.head_dim:,}", "width of one head"))
    else:
        hidden_key = _used_key(cfg, ("hidden_size", "n_embd"))
        rows.append((f"{hidden_key} / {rows[1][0]}", f"{shape.head_dim:,}",
                     "no head_dim field, so hidden size ÷ heads"))
    return rows


# --- what a panel counts: a preset's key or your config, as a Model ---------------------------

@dataclass(frozen=True)
class Model:
    """A model a cost panel counts. Frozen and hashable: the parts may cache on it."""

    shape: costs.ModelShape
    fields: tuple  # pair_fields rows: ((config field, value text, what it is), ...)
    source: str  # "the preset config.json", "your config (name)"; "" when none is loaded yet
    key: str = CUSTOM


def load(shape, cfg, source):  # a parsed config -> the Model of your config
    return Model(shape, tuple(pair_fields(cfg, shape)), f"your config ({source})")


@functools.cache
def preset_model(key):  # "qwen3-8b" -> its Model, parsed once per process
    shape = costs.preset(key)
    return Model(shape, tuple(pair_fields(costs.PRESETS[key], shape)),
                 "the preset config.json", key)


def resolve(model):  # a preset's key | Model -> Model
    return model if isinstance(model, Model) else preset_model(model)


def shape_of(model):  # a preset's key | Model -> ModelShape
    return resolve(model).shape


# --- the picker's part of a panel's state ---------------------------------------------------

STATUS = f'<p aria-live="polite">{hole("lead")}<b data-s="name"></b>{hole("tail")}</p>'

FIELDS = (
    '<div class="ae-readout" aria-live="polite"><p class="ae-hint">The fields that set the '
    'FLOPs per (query, key) pair:</p><table class="ae-fields">'
    + "".join(f"<tr><th scope=\"row\">{hole(f'field{i}', 'code')}</th>"
              f"<td>{hole(f'value{i}', 'b')}</td>"
              f"{hole(f'what{i}', 'td')}</tr>" for i in range(FIELD_ROWS))
    + f'</table>{hole("notes", "p", class_="ae-hint")}<ul class="ae-hint">'
    + "".join(hole(f"note{i}", "li") for i in range(NOTE_LINES)) + "</ul></div>")


StatusReadout = readout_class("StatusReadout", STATUS, module=__name__)
FieldsReadout = readout_class("FieldsReadout", FIELDS, module=__name__)


def status_values(model):  # -> {hole: text}: which model is counted, and from where
    m = resolve(model)
    if m.source:
        return {"lead": "Counting ", "name": m.shape.name, "tail": f", from {m.source}."}
    return {"lead": "No config loaded yet: still counting ", "name": m.shape.name,
            "tail": ". Upload a config.json or paste one below."}


def fields_values(model):  # -> {hole: text}: the four fields and the approximations made
    m = resolve(model)
    values = {}
    for i, (field, value, what) in enumerate(m.fields):
        values.update({f"field{i}": field, f"value{i}": value, f"what{i}": what})
    notes = list(m.shape.notes)
    if len(notes) > NOTE_LINES:  # never happens today; the last line takes the rest
        notes[NOTE_LINES - 1:] = [" ".join(notes[NOTE_LINES - 1:])]
    values["notes"] = ("Approximations made for this config:" if notes
                       else "No approximations needed for this config.")
    values.update({f"note{i}": notes[i] if i < len(notes) else "" for i in range(NOTE_LINES)})
    return values


def picker_state(model):  # a preset's key | Model -> {target: value}
    return {"holes:model_status": status_values(model), "holes:model_fields": fields_values(model)}


# --- the widgets ----------------------------------------------------------------------------

class ModelPicker(pn.viewable.Viewer):
    """Pick a preset model or load a config.json; `shape` is the last model that parsed.

    A panel that holds the picker (`hosted=True`) puts `picker_state` among its parts and the
    picker's `targets` among its own, so its `push` draws the status and fields with the rest
    of its state; a picker on its own pushes its state itself. A static page gets the presets
    only, and `chrome.live_button(route)` for your own config.
    """

    model = model_selector(PRESET_KEYS[0])
    shape = param.ClassSelector(class_=costs.ModelShape, doc="""
        The last model that parsed cleanly; a bad config leaves it as it was.""")
    error = param.String(default="", doc="The last config's problem, as plain text (unescaped).")

    def __init__(self, hosted=False, route=None, calculator=False, static=False, **params):
        # calculator: a static page also gets the in-browser calculator's box (CALCULATOR, in
        # the page's HTML: the panel points to it);
        # static: on a static page (its panel says: cost_base.py)
        super().__init__(**params)
        self._hosted, self._route, self._static = hosted, route, bool(static)
        self._calculator = calculator
        self._custom = None  # Model of the last good config of your own
        self._last = preset_model(self.model if self.model in costs.PRESETS else PRESET_KEYS[0])
        if self.shape is None:
            self.shape = self._last.shape
        self._state = picker_state(self.current())
        self._build()
        self.targets = {"holes:model_status": self.status, "holes:model_fields": self.fields}
        self.param.watch(self._on_model, "model")
        self._refresh()

    # ---- what is counted -----------------------------------------------------------

    def custom_model(self):  # -> Model: your config, or the last model while none is loaded
        if self._custom is not None:
            return self._custom
        return dataclasses.replace(self._last, source="", key=CUSTOM)

    def current(self):  # -> a preset's key or your config's Model: what a panel's parts count
        return self.model if self.model in costs.PRESETS else self.custom_model()

    # ---- loading -------------------------------------------------------------------

    def load_config(self, text, source="pasted text"):  # -> True if it became the model
        try:
            shape, cfg = read_config(text)
        except costs.ConfigError as e:
            self.error = f"{e.field}: {e.problem}"
            self._error_pane.object = self._error_html(e.field, e.problem, source)
            self._error_pane.visible = True
            return False
        self.error = ""
        self._error_pane.object, self._error_pane.visible = "", False
        self._custom = load(shape, cfg, source)
        if self.model != CUSTOM:
            self.model = CUSTOM  # _on_model installs it
        else:
            self._install(self._custom)
            self._refresh()
        return True

    def _error_html(self, field, problem, source):
        return ('<div class="ae-error" role="alert">'
                f"<b>Could not use {html.escape(source)}.</b> "
                f"<code>{html.escape(str(field))}</code>: {html.escape(problem)}. "
                f"Still counting {html.escape(self.shape.name)}.</div>")

    def _on_model(self, event):
        if event.new in costs.PRESETS:
            self._install(preset_model(event.new))
        elif self._custom is not None:
            self._install(self._custom)
        self._refresh()  # custom chosen, nothing loaded yet: the last model stays

    def _install(self, model):
        self._last = model
        self.shape = model.shape

    def _refresh(self):
        if not self._static:
            self._custom_box.visible = self.model == CUSTOM
        if not self._hosted:  # on its own: the same push a panel would do
            new = picker_state(self.current())
            states.push(self.targets, self._state, new)
            self._state = new

    def _on_file(self, *events):
        # an empty file arrives as value None with a filename: still answer it; a new
        # filename with a value is answered by that value's own event
        value, filename = self.file_input.value, self.file_input.filename
        if value is None and not filename:
            return
        if value is not None and "value" not in {e.name for e in events}:
            return
        name = self.file_input.filename or "the uploaded file"
        self.load_config(self.file_input.value or b"", source=name)

    def _on_use(self, event):
        text = self.text_input.value_input or self.text_input.value or ""
        self.load_config(text, source="the pasted text")

    # ---- display -------------------------------------------------------------------

    def status_html(self):  # -> the status line as HTML, every text escaped
        values = self.status.values
        return readout.HOLE_ELEMENT.sub(
            lambda m: m.group(1) + html.escape(values[m.group(3)]) + m.group(4), STATUS)

    def _build(self):
        readout = {"sizing_mode": "stretch_width", "margin": (0, 10),
                   "stylesheets": [PICKER_CSS]}
        self.status = StatusReadout(self._state["holes:model_status"], **readout)
        self.fields = FieldsReadout(self._state["holes:model_fields"], **readout)
        self._error_pane = pn.pane.HTML("", visible=False, sizing_mode="stretch_width",
                                        margin=(0, 10), stylesheets=[PICKER_CSS])
        label = pn.pane.HTML("<b>Model</b>", margin=(0, 10))
        if self._static:  # the presets switch in the browser; your own config needs Python
            self.model_buttons = pn.widgets.RadioButtonGroup(
                label="model", options=dict(PRESET_LABELS),
                value=self.model if self.model in costs.PRESETS else PRESET_KEYS[0],
                color="primary", variant="outline", sizing_mode="stretch_width", max_width=440)
            live = [] if self._route is None else [pn.FlexBox(
                pn.pane.HTML('<p class="ae-hint">To count a config.json of your own:</p>',
                             margin=(0, 10), stylesheets=[PICKER_CSS]),
                chrome.live_button(self._route), align_items="center",
                sizing_mode="stretch_width", margin=0)]
            if self._calculator:
                live.append(pn.pane.HTML(CALCULATOR_POINTER, sizing_mode="stretch_width",
                                         margin=(0, 10), stylesheets=[PICKER_CSS]))
            self._layout = pn.Column(
                label, self.model_buttons, self.status, *live, self.fields,
                sizing_mode="stretch_width", margin=0, stylesheets=[chrome.CSS, PICKER_CSS])
            return
        self.model_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.model, label="model", color="primary", variant="outline",
            sizing_mode="stretch_width", max_width=440)
        self.file_input = pn.widgets.FileInput(label="Upload a config.json",
                                               accept=".json,application/json",
                                               sizing_mode="stretch_width", max_width=320,
                                               description="Upload a config.json")
        self.text_input = pn.widgets.TextAreaInput(
            label="or paste config.json here", placeholder='{"num_hidden_layers": 32, ...}',
            rows=4, max_length=TEXT_LIMIT, sizing_mode="stretch_width", max_width=440)
        self.use_button = pn.widgets.Button(label="Use this config", color="primary",
                                            width=150)
        self.file_input.param.watch(self._on_file, ["value", "filename"])
        self.use_button.on_click(self._on_use)
        hint = pn.pane.HTML(
            '<p class="ae-hint">Your config is read in this session\'s memory only: never '
            "saved to disk and never put in the URL, so a link to this page shows a preset "
            "(or Custom with no config) until a config is loaded again. Limit: "
            f"{costs.MAX_CONFIG_BYTES:,} bytes.</p>",
            sizing_mode="stretch_width", margin=(0, 10), stylesheets=[PICKER_CSS])
        self._custom_box = pn.Column(
            self.file_input, self.text_input, self.use_button, hint,
            sizing_mode="stretch_width", margin=0)
        self._layout = pn.Column(
            label, self.model_buttons, self.status, self._error_pane, self._custom_box,
            self.fields, sizing_mode="stretch_width", margin=0,
            stylesheets=[chrome.CSS, PICKER_CSS])

    def __panel__(self):
        return self._layout


def link_model(viewer, picker):  # keep viewer.model and picker.model the same, both ways
    picker.model = viewer.model
    viewer.param.watch(lambda e: setattr(picker, "model", e.new), "model")
    picker.param.watch(lambda e: setattr(viewer, "model", e.new), "model")
