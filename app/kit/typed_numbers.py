"""Numbers a reader types into a live panel: a comma-separated list, checked before use.

Only the live pages take typed numbers (a static page offers presets). Whatever the text,
`parse_numbers` answers with the numbers or with one sentence saying what is wrong; it never
raises, and it accepts plain decimals only (no nan, inf, 1_000 or 0x1p3).
"""

import math
import re

from app.kit import fmt

LIMIT = 1e6  # largest magnitude accepted by default
TYPED = "typed"  # a preset list's value for typed numbers that are none of its presets
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def parse_numbers(text, *, count=None, max_count=None, limit=LIMIT, what="the list"):
    # str -> (tuple of floats, None) or (None, message): comma-separated finite numbers
    text = str(text).replace(fmt.MINUS, "-").strip()
    if not text:
        return None, f"{what} is empty; type numbers separated by commas"
    items = [item.strip() for item in text.split(",")]
    values = []
    for i, item in enumerate(items, start=1):
        if not item:
            return None, f"entry {i} of {what} is empty"
        if not NUMBER.match(item):
            shown = item if len(item) <= 12 else item[:12] + "…"
            return None, f"“{shown}” (entry {i} of {what}) is not a number"
        value = float(item)
        if not math.isfinite(value):
            return None, f"entry {i} of {what} is not a finite number"
        if abs(value) > limit:
            return None, f"entry {i} of {what} is beyond ±{fmt.significant(limit)}"
        values.append(value + 0.0)  # −0.0 -> 0.0
    if count is not None and len(values) != count:
        return None, f"{what} needs exactly {count} numbers, got {len(values)}"
    if max_count is not None and len(values) > max_count:
        return None, f"{what} takes at most {max_count} numbers, got {len(values)}"
    return tuple(values), None



def numbers_of(value, **kw):  # a text (a preset's: parse_numbers(value, **kw), ValueError if
    # it does not parse) or numbers already parsed -> tuple of floats
    if isinstance(value, str):
        values, error = parse_numbers(value, **kw)
        if error:
            raise ValueError(error)
        return values
    return tuple(float(x) + 0.0 for x in value)


def in_force(text, good, show, **kw):  # -> (the numbers in force, the message) for typed
    # text: a list that does not parse (parse_numbers(text, **kw)) leaves the last good one in
    # force, and the message says why and what is used (each number written by show)
    values, error = parse_numbers(text, **kw)
    if values is None:
        return good, f"{error}; still using {', '.join(show(x) for x in good)}"
    return values, ""


def preset_list(viewer, name, presets, *, static, label, typed_label="your own (typed)", **kw):
    # -> a Select over `presets` ({text: label}) that sets the viewer's text parameter `name`,
    # and follows it back: to the preset a typed text reads as, or on a live page to an entry
    # standing for a typed list that is none of them (a static page has no typing)
    import panel as pn

    options = {shown: text for text, shown in presets.items()}
    if not static:
        options[typed_label] = TYPED

    def preset_of(text):
        if text in presets:
            return text
        parsed = parse_numbers(text)[0]
        return next((p for p in presets if parsed is not None and parse_numbers(p)[0] == parsed),
                    TYPED)

    pick = pn.widgets.Select(label=label, options=options, value=preset_of(getattr(viewer, name)),
                             **kw)

    def to_param(event):
        if event.new in presets:
            setattr(viewer, name, event.new)

    def to_list(event):
        pick.value = preset_of(event.new)

    pick.param.watch(to_param, "value")
    viewer.param.watch(to_list, name)
    return pick


def scores_input(viewer, presets, *, static, route, max_scores, pick_width, box_width):
    # -> (the preset list of `viewer.scores`, beside it: the typed-scores box on a live page,
    # or on a static page the button that opens the live one, since typing needs Python)
    import panel as pn

    from app.kit import chrome

    pick = preset_list(viewer, "scores", presets, static=static, label="scores",
                       typed_label="your own (typed beside)", sizing_mode="stretch_width",
                       min_width=180, max_width=pick_width)
    if static:
        return pick, chrome.live_button(route, "Type your own scores (live explorable)")
    box = pn.widgets.TextInput.from_param(
        viewer.param.scores, label=f"scores (up to {max_scores}, commas between)",
        max_length=100, sizing_mode="stretch_width", min_width=180, max_width=box_width)
    return pick, box


def preset_control(name, presets):  # -> the Control of a preset_list: its Select holds the text
    from app.kit.states import Control

    return Control(name, tuple(presets), "value", tuple(presets), "choice")
