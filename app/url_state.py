"""A panel's state in the URL query: restored on load, mirrored on every change.

Values from a URL are untrusted: each is coerced to its parameter's type and clamped to
its bounds, or ignored, and every such repair becomes a note the page shows. Nothing
from the query is ever allowed to raise.
"""

import math

import panel as pn
import param

TRUE = {"1", "true", "on", "yes"}
FALSE = {"0", "false", "off", "no"}
MAX_VALUE_CHARS = 100


def coerce(p, name, raw):  # param.Parameter, str, str -> (value, note | None); value None = ignore
    raw = raw.strip()[:MAX_VALUE_CHARS]
    shown = raw if len(raw) <= 24 else raw[:24] + "…"
    if isinstance(p, param.Boolean):
        low = raw.lower()
        if low in TRUE | FALSE:
            return low in TRUE, None
        return None, f"{name}={shown!r} is not on/off; ignored"
    if isinstance(p, param.Selector):
        for obj in p.objects:
            if str(obj).lower() == raw.lower():
                return obj, None
        choices = ", ".join(str(o) for o in p.objects)
        return None, f"{name}={shown!r} is not one of {choices}; ignored"
    if isinstance(p, param.Number):
        try:
            value = float(raw)
        except ValueError:
            return None, f"{name}={shown!r} is not a number; ignored"
        if not math.isfinite(value):
            return None, f"{name}={shown!r} is not a finite number; ignored"
        low, high = p.bounds or (None, None)
        clamped = min(max(value, low if low is not None else value),
                      high if high is not None else value)
        if isinstance(p, param.Integer):
            clamped = round(clamped)
        note = None if clamped == value else f"{name}={shown} is out of range; using {clamped}"
        return clamped, note
    if isinstance(p, param.String):
        return raw, None
    return None, f"{name} cannot be set from the URL; ignored"


def restore(viewer, names, args=None):  # -> list of notes; sets what it can
    args = pn.state.session_args if args is None else args
    notes, updates = [], {}
    for name in names:
        values = args.get(name)
        if not values:
            continue
        if len(values) > 1:
            notes.append(f"{name} given {len(values)} times; using the last")
        raw = values[-1]
        raw = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        value, note = coerce(viewer.param[name], name, raw)
        if note:
            notes.append(note)
        if value is not None:
            updates[name] = value
    if updates:
        viewer.param.update(**updates)
    return notes


def mirror(viewer, names):
    # keep the address bar's query in step, so the page's URL is always a deep link
    location = pn.state.location
    if location is None:
        return

    def write(*events):
        location.update_query(**{e.name: encode(e.new) for e in events})

    viewer.param.watch(write, list(names))


def encode(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
