"""What the three cost panels share: the model picker, power-of-two controls, readouts, frame.

The cost panel, the decode bill and the memory bill each count a model's config: one of the
documents' three presets, or (live only) your own config.json. Each keeps its own file, its
own parts and figures; this base holds what would otherwise be written three times:

- the `model` control and the picker's part of the state (its status line and fields);
- `params()`: a preset's key as it is, or your config's `Model` while "custom" is picked,
  so the same pure parts count a preset (static table or live) and your config (live);
- controls on power-of-two stops: a slider over exponents that shows the tokens, and on a
  live page a number box that takes any count;
- readouts whose holes may come from several parts (`add_readout`), and the panel's frame.
"""

from __future__ import annotations

import panel as pn

from app.kit import chrome, fmt, model_code, registry, resources, states
from app.kit.states import Control, Part, StatePanel
from app.kit.theme import CODE_CSS, ink
from app.panels.model_picker import (
    CUSTOM,
    PICKER_CSS,
    PRESET_KEYS,
    ModelPicker,
    link_model,
    picker_state,
)

READOUT_CSS = PICKER_CSS + resources.stylesheet("cost-readout.css")


def power_stops(top):  # 131072 -> (1, 2, 4, ..., 131072): every power of two up to top
    return tuple(2 ** e for e in range(top.bit_length()))


def power_control(name, top):  # a slider over exponents 0..log2(top); its stops the powers
    stops = power_stops(top)
    return Control(name, stops, "value", tuple(range(len(stops))), "number")


def rounded(values, digits=4):  # [floats] -> the same to `digits` significant digits: a
    # curve only needs what the chart can show, and the table ships every curve
    return [float(f"{float(v):.{digits}g}") for v in values]


class CostStatePanel(StatePanel):
    """One cost panel: a model picker, controls on stops, readouts; parts over the model.

    Subclasses set `model` (a `model_selector`), `intro`, `conventions`, `own_controls` and
    `own_parts` (what follows the picker's control and part), and define `build_body(state)`,
    which returns the panel's own objects (the frame adds the heading, the URL note, the
    picker and the counting conventions around them). The URL carries every control.
    """

    readout_css = READOUT_CSS  # each readout carries it: a shadow root of its own

    # whether its own static page also counts your config.json in the browser
    # (static/cost_calculator.js); in a chapter the panel keeps the live button alone
    calculator = False
    intro = ""
    conventions = ""
    own_controls = ()  # Controls after the model's
    own_parts = ()  # Parts after the picker's

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "url_keys" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: a cost panel's URL carries every control; "
                            "url_keys comes from own_controls")
        cls.url_keys = tuple(c.name for c in cls.controls())

    def __init__(self, **params):
        self._ink = ink()
        # the picker comes first: the first state asks it what "custom" counts
        model = params.get("model", type(self).param["model"].default)
        route = registry.route_of(type(self))  # the live page your config.json opens
        self.picker = ModelPicker(model=model, hosted=True, route=route,
                                  calculator=self.calculator and not params.get("in_chapter"),
                                  static=states.page_static(params.get("static")))
        super().__init__(**params)
        link_model(self, self.picker)
        self.picker.param.watch(self._on_shape, "shape")

    @classmethod
    def controls(cls):
        return [Control.choice("model", PRESET_KEYS), *cls.own_controls]

    @classmethod
    def parts(cls):
        return [Part(("model",), picker_state), *cls.own_parts]

    def params(self):  # -> {control: value}; "custom" -> your config's Model (live only)
        values = super().params()
        if values["model"] == CUSTOM:
            values["model"] = self.picker.custom_model()
        return values

    def _on_shape(self, event):  # a config of your own loaded while "custom" is picked
        if self.model == CUSTOM:
            self._on_change()

    # ---- the view ------------------------------------------------------------------------

    def build(self, state):
        self.widgets["model"] = self.picker.model_buttons
        self.targets.update(self.picker.targets)
        return self.frame(self.build_body(state))

    def build_body(self, state):  # -> [objects] below the picker; fills widgets and targets
        raise NotImplementedError

    def add_readout(self, cls, state, *names, **kw):
        # a Readout whose holes come from the state's targets `names` (one or several parts)
        values = {}
        for name in names:
            values.update(state[name])
        return self.new_readout(cls, values, *names, **kw)

    def power_slider(self, name, label, top, **kw):
        # a slider over exponents that lands on powers of two and shows the tokens
        slider = chrome.power_of_two_slider(self, name, label, top, **kw)
        labels = [fmt.count(v) for v in power_stops(top)]
        slider.param.update(show_value=True, format=model_code.tick_formatter(
            "stopLabelTick", labels=labels))
        self.widgets[name] = slider
        return slider

    def context_and_users(self, max_context, context_step, max_users, users, users_box,
                          users_box_width):  # -> the context's slider and (live) number box,
        # then the users'; `users` names them on the slider, `users_box` in the box's label
        context_slider = self.power_slider(
            "context", "context tokens, powers of two", max_context,
            sizing_mode="stretch_width", min_width=180, max_width=320)
        context_box = self.number_box(
            "context", f"context tokens (1–{max_context:,})", step=context_step, width=210)
        users_slider = self.power_slider(
            "users", f"{users}, powers of two", max_users, sizing_mode="stretch_width",
            min_width=160, max_width=280)
        users_box = self.number_box("users", f"{users_box} (1–{max_users:,})",
                                    width=users_box_width)
        return context_slider, context_box, users_slider, users_box

    def number_box(self, name, label, **kw):  # a live page also takes any count, typed
        if self.static:
            return None
        return pn.widgets.IntInput.from_param(self.param[name], label=label, **kw)

    def choice_buttons(self, name, **kw):  # a RadioButtonGroup over a Selector's objects
        buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param[name], color="primary", variant="outline", **kw)
        self.widgets[name] = buttons
        return buttons

    @staticmethod
    def labelled(label, widget, **kw):  # a visible label above a button group
        return pn.Column(pn.pane.HTML(label, margin=(0, 10)), widget, margin=0, **kw)

    @staticmethod
    def row(*objects):  # a wrapping row of controls; live-only ones are None on static pages
        return pn.FlexBox(*[o for o in objects if o is not None], align_items="flex-end",
                          sizing_mode="stretch_width")

    def frame(self, body):  # the panel: heading, URL note, picker, body, conventions
        own = self.own(
            chrome.heading(registry.title_of(type(self))),
            pn.pane.Markdown(self.intro, sizing_mode="stretch_width", stylesheets=[CODE_CSS]))
        return pn.Column(
            *own, self.url_note, self.picker, *body,
            pn.pane.Markdown(chrome.folded("How this counts", self.conventions),
                             sizing_mode="stretch_width", stylesheets=[CODE_CSS, chrome.FOLD_CSS]),
            css_classes=["ae-panel"], sizing_mode="stretch_width",
            stylesheets=[chrome.CSS, PICKER_CSS])
