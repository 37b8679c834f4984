"""Which model the cost panels count: one of the documents' three, or your own config.json.

`ModelPicker` is a reusable Viewer. Its `model` parameter picks a preset (or "custom");
its `shape` parameter is always the last model that parsed cleanly, so a bad upload shows
an error naming the field and leaves every number on the page as it was. An uploaded or
pasted config lives only in this session's memory: it is never written to disk and never
put in the URL (only the preset's key is).

The formatting helpers at the bottom are shared by the three cost panels, so that every
number reads the same way everywhere. `ink()` and `CODE_CSS`, at the very bottom, serve
every panel: what a figure draws on its canvas, where the theme's CSS variables cannot
reach, and inline code in a Markdown pane, in the page's theme.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import panel as pn
import param

from app import chrome
from attention_core import costs

PRESET_KEYS = tuple(costs.PRESETS)  # "qwen3-8b", "gpt2", "llama-3-8b"
CUSTOM = "custom"
MODEL_LABELS = {"Qwen3-8B": "qwen3-8b", "GPT-2": "gpt2", "Llama-3-8B": "llama-3-8b",
                "Custom": CUSTOM}
MARKUP = re.compile(r"[<>]")
SHOWN_STRINGS = ("_name_or_path", "model_type")  # config strings the page displays
TEXT_LIMIT = 2 * costs.MAX_CONFIG_BYTES  # the text box lets an oversized paste through to say so

PICKER_CSS = """
.ae-hint { font-size: 0.85em; opacity: 0.85; margin: 2px 0; }
.ae-error { color: var(--danger-text-color, #9b1c1c); border-left: 3px solid #d55e00;
            padding: 2px 8px; margin: 4px 0; overflow-wrap: anywhere; }
.ae-fields { border-collapse: collapse; font-size: 0.9em; margin: 4px 0; }
.ae-fields td { padding: 1px 8px 1px 0; vertical-align: top; }
.ae-fields code { overflow-wrap: normal; word-break: normal; }
.ae-caption { font-weight: 600; font-size: 0.9em; margin: 8px 0 0; }
.ae-readout p { margin: 4px 0; }
"""


def model_selector(default):  # -> a param.Selector over the presets and "custom"
    return param.Selector(default=default, objects=dict(MODEL_LABELS), label="model", doc="""
        Which model's config.json the numbers come from; "custom" uses one you upload or paste.""")


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


def fields_html(rows):  # rows from pair_fields -> an escaped HTML table
    body = "".join(f"<tr><td><code>{html.escape(f)}</code></td><td><b>{html.escape(v)}</b></td>"
                   f"<td>{html.escape(w)}</td></tr>" for f, v, w in rows)
    return f'<table class="ae-fields">{body}</table>'


def notes_html(notes):  # the model's approximations, escaped
    if not notes:
        return '<p class="ae-hint">No approximations needed for this config.</p>'
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (f'<p class="ae-hint">Approximations made for this config:</p>'
            f'<ul class="ae-hint">{items}</ul>')


class ModelPicker(pn.viewable.Viewer):
    """Pick a preset model or load a config.json; `shape` is the last model that parsed."""

    model = model_selector(PRESET_KEYS[0])
    shape = param.ClassSelector(class_=costs.ModelShape, doc="""
        The last model that parsed cleanly; a bad config leaves it as it was.""")
    error = param.String(default="", doc="The last config's problem, as plain text (unescaped).")

    def __init__(self, **params):
        super().__init__(**params)
        self._custom = None  # (ModelShape, cfg, source) of the last good custom config
        self._cfg = costs.PRESETS.get(self.model, costs.PRESETS[PRESET_KEYS[0]])
        if self.shape is None:
            key = self.model if self.model in costs.PRESETS else PRESET_KEYS[0]
            self.shape = costs.preset(key)
            self._cfg = costs.PRESETS[key]
        self._build()
        self.param.watch(self._on_model, "model")
        self._render()

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
        self._custom = (shape, cfg, source)
        if self.model != CUSTOM:
            self.model = CUSTOM  # _on_model installs it
        else:
            self._install(shape, cfg)
        return True

    def _error_html(self, field, problem, source):
        return ('<div class="ae-error" role="alert">'
                f"<b>Could not use {html.escape(source)}.</b> "
                f"<code>{html.escape(str(field))}</code>: {html.escape(problem)}. "
                f"Still counting {html.escape(self.shape.name)}.</div>")

    def _on_model(self, event):
        if event.new in costs.PRESETS:
            self._install(costs.preset(event.new), costs.PRESETS[event.new])
        elif self._custom is not None:
            self._install(*self._custom[:2])
        else:
            self._render()  # custom chosen, nothing loaded yet: keep the last model

    def _install(self, shape, cfg):
        self._cfg = cfg
        self.shape = shape
        self._render()

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

    def status_html(self):  # -> which model is counted, escaped
        name = html.escape(self.shape.name)
        if self.model in costs.PRESETS:
            where = "the preset config.json"
        elif self._custom is not None:
            where = f"your config ({html.escape(self._custom[2])})"
        else:
            return (f'<p aria-live="polite">No config loaded yet: still counting <b>{name}</b>. '
                    "Upload a config.json or paste one below.</p>")
        return f'<p aria-live="polite">Counting <b>{name}</b>, from {where}.</p>'

    def _render(self):
        self._status.object = self.status_html()
        self._fields.object = (
            '<div aria-live="polite"><p class="ae-hint">The fields that set the FLOPs per '
            "(query, key) pair:</p>" + fields_html(pair_fields(self._cfg, self.shape))
            + notes_html(self.shape.notes) + "</div>")
        self._custom_box.visible = self.model == CUSTOM

    def _build(self):
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
        self._status = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10))
        self._error_pane = pn.pane.HTML("", visible=False, sizing_mode="stretch_width",
                                        margin=(0, 10), stylesheets=[PICKER_CSS])
        self._fields = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                    stylesheets=[PICKER_CSS])
        hint = pn.pane.HTML(
            '<p class="ae-hint">Your config is read in this session\'s memory only: never '
            "saved to disk and never put in the URL, so a link to this page shows a preset "
            "(or Custom with no config) until a config is loaded again. Limit: "
            f"{costs.MAX_CONFIG_BYTES:,} bytes.</p>",
            sizing_mode="stretch_width", margin=(0, 10), stylesheets=[PICKER_CSS])
        self._custom_box = pn.Column(
            self.file_input,
            self.text_input, self.use_button, hint, sizing_mode="stretch_width", margin=0)
        self._layout = pn.Column(
            pn.pane.HTML("<b>Model</b>", margin=(0, 10)), self.model_buttons, self._status,
            self._error_pane, self._custom_box, self._fields, sizing_mode="stretch_width",
            margin=0, stylesheets=[chrome.CSS, PICKER_CSS])

    def __panel__(self):
        return self._layout


def link_model(viewer, picker):  # keep viewer.model and picker.model the same, both ways
    picker.model = viewer.model
    viewer.param.watch(lambda e: setattr(picker, "model", e.new), "model")
    picker.param.watch(lambda e: setattr(viewer, "model", e.new), "model")


# ---- formatting shared by the cost panels --------------------------------------------

def grouped(x):  # 4194304 -> "4,194,304"
    return f"{round(x):,}"


def short(x, digits=3):  # 1073741824 -> "1.07 billion"; significant digits, words for scale
    if not math.isfinite(x):
        return "∞"
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"),
                       (1e3, "thousand")):
        if abs(x) >= size:
            return f"{_sig(x / size, digits)} {word}"
    return _sig(x, digits)


def _sig(x, digits):  # 1.0737, 3 -> "1.07"; 15.009, 3 -> "15.0"; 122.5, 2 -> "120"
    if x == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    if places < 0:  # round the integer part too: 122.5 at 2 digits -> 120
        x = round(x, places)
    return f"{x:,.{max(places, 0)}f}"


def percent(share, digits=2):  # 0.0739 -> "7.4%"; 0.00496 -> "0.50%"; 0.9950 -> "99.5%"
    text = _sig(share * 100, digits)
    while text in ("100", "100.0", "100.00") and share < 1 and digits < 8:
        digits += 1  # never print 100% for something short of all of it
        text = _sig(share * 100, digits)
    return text + "%"


def size_text(nbytes, digits=2):  # bytes -> "0.54 GB (0.50 GiB)": decimal and binary, named
    if not math.isfinite(nbytes):
        return "∞"
    for power, dec, binary in ((3, "GB", "GiB"), (2, "MB", "MiB"), (1, "kB", "KiB")):
        if nbytes >= 1000 ** power / 10:  # 0.54 GB rather than 537 MB
            return (f"{_sig(nbytes / 1000 ** power, digits)} {dec} "
                    f"({_sig(nbytes / 1024 ** power, digits)} {binary})")
    return f"{nbytes:,.0f} bytes"


def binary_size(nbytes):  # 4096 -> "4 KiB"; binary units, exact when it divides
    for size, unit in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= size:
            value = nbytes / size
            return f"{value:g} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{nbytes:g} B"


def tokens(n):  # 51324.4 -> "51,324"; inf -> "never"
    return "never" if not math.isfinite(n) else f"{round(n):,}"


def at_tokens(n):  # 51324.4 -> "at <b>51,324</b> tokens"; inf -> "<b>never</b>"
    return "<b>never</b>" if not math.isfinite(n) else f"at <b>{round(n):,}</b> tokens"


# ---- the page's theme, where CSS variables cannot reach -----------------------------------

@dataclass(frozen=True)
class Ink:
    """Colours a Bokeh figure paints on its canvas (glyph text, labels, reference lines),
    which the theme's CSS variables cannot reach. Each reads on its theme's plot background
    (white; Panel's dark theme paints plots #2b3035)."""

    text: str  # labels on bars and in the plot
    muted: str  # secondary labels ("unread", a guide's name)
    strong: str  # a line or arrow meant to stand out: black on white, near-white on dark
    rule: str  # grey guides and reference lines
    paper: str  # the plot's own background, behind a label that sits on lines
    warm: str  # vermillion-family text (Okabe-Ito #D55E00 is too faint for 11 px text)
    cool: str  # blue text and lines: Okabe-Ito blue on white, its sky blue on dark


LIGHT_INK = Ink(text="#222222", muted="#555555", strong="#000000", rule="#6b6b6b",
                paper="#ffffff", warm="#8a3b00", cool="#0072B2")
DARK_INK = Ink(text="#e0e0e0", muted="#b8b8b8", strong="#f2f2f2", rule="#a8a8a8",
               paper="#2b3035", warm="#ff9a5c", cool="#56B4E9")


def ink():  # -> the Ink for this session's theme; switching the theme reloads the page, so
    # a panel reads it once, when it is built
    return DARK_INK if chrome.theme() == "dark" else LIGHT_INK


# Inline code in a Markdown pane: Panel's own style is pale blue text on no background, hard
# to read on white. Plain text colour on the theme's surface colour reads in both themes.
CODE_CSS = """
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
       font-size: 0.92em; padding: 0 0.2em; border-radius: 3px; color: inherit;
       background: var(--panel-surface-color, #f3f3f3); }
"""
