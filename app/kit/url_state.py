"""A panel's state in the URL query: the one place that maps parameters to query keys.

A chapter's plan gives each panel its keys (`url_plan`: a name two panels share goes plain to
the first and as `<slot>_<name>` to the later one, or to the one whose `url_yields` is true);
`with_url_state` restores a panel from the query on load and mirrors every change back, under
those keys. Values from a URL are
untrusted: each is coerced to its parameter's type and clamped to its bounds, or ignored, and
every such repair becomes a note the page shows. Nothing from the query is ever allowed to
raise. On a static page the browser's switcher reads the query with the same keys.
"""

import html
import math
from collections.abc import Mapping
from decimal import Decimal

import panel as pn
import param

from app.kit import resources

# Query keys a page itself uses; no panel may take them.
PAGE_KEYS = frozenset({"theme"})
NOTE_CSS = resources.stylesheet("panel.css")

TRUE = {"1", "true", "on", "yes"}
FALSE = {"0", "false", "off", "no"}
MAX_VALUE_CHARS = 100


def coerce(p, name, raw):  # param.Parameter, str, str -> (value, repair | None); None = ignore
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
        repair = (None if clamped == value
                  else f"{name}={shown} is out of range; using {number_text(clamped)}")
        return clamped, repair
    if isinstance(p, param.String):
        return raw, None
    return None, f"{name} cannot be set from the URL; ignored"


def number_text(x):  # -> x as JavaScript's String(x) writes it, as page_url.js's repairs do
    # (ECMAScript Number::toString): the shortest digits that read back as x (repr's), no ".0"
    # on a whole number, an exponent only below 1e-6 or from 1e21: "4", "0.25", "1e-7", "1e+21"
    x = float(x)
    if x == 0:
        return "0"  # -0 too
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("-" if x < 0 else "") + "Infinity"
    _, digits, exp = Decimal(repr(abs(x))).normalize().as_tuple()
    s, k = "".join(map(str, digits)), len(digits)
    n = exp + k  # x is 0.<s> times 10**n
    sign = "-" if x < 0 else ""
    if k <= n <= 21:
        return sign + s + "0" * (n - k)
    if 0 < n <= 21:
        return sign + s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + s
    mantissa = s[0] + ("." + s[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"


def restore(viewer, names, args=None):  # -> list of repairs; sets what it can
    args = pn.state.session_args if args is None else args
    repairs, updates = [], {}
    for name in names:
        values = args.get(name)
        if not values:
            continue
        if len(values) > 1:
            repairs.append(f"{name} given {len(values)} times; using the last")
        raw = values[-1]
        raw = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        value, repair = coerce(viewer.param[name], name, raw)
        if repair:
            repairs.append(repair)
        if value is not None:
            updates[name] = value
    if updates:
        viewer.param.update(**updates)
    return repairs


def mirror(viewer, keys):  # keys: {query key: parameter}
    # keep the address bar's query in step, so the page's URL is always a deep link
    location = pn.state.location
    if location is None:
        return
    by_param = {name: key for key, name in keys.items()}

    def write(*events):
        location.update_query(**{by_param[e.name]: encode(e.new) for e in events})

    viewer.param.watch(write, list(by_param))


def encode(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def key_map(viewer, keys=None):  # -> {query key: parameter name}
    keys = viewer.url_keys if keys is None else keys
    if isinstance(keys, Mapping):
        return dict(keys)
    return {name: name for name in keys}


def rename_repair(repair, by_param):  # a repair of a parameter -> the same of its query key
    for param_name, key in by_param.items():
        if key != param_name and repair.startswith((param_name + "=", param_name + " ")):
            return key + repair[len(param_name):]
    return repair


def repairs_pane(repairs):  # list of str -> a visible note, escaped, or an empty hidden pane
    text = "; ".join(html.escape(r) for r in repairs)
    return pn.pane.HTML(f'<div class="ae-note" role="status">URL: {text}</div>' if repairs
                        else "", visible=bool(repairs), sizing_mode="stretch_width",
                        stylesheets=[NOTE_CSS])


def with_url_state(viewer, keys=None, static=None):
    # restore the viewer from the query, mirror it back; -> the pane of its repairs.
    # keys: the parameters the URL carries (default viewer.url_keys), or a mapping
    # {query key: parameter} when a page holding several panels must rename one.
    # static: a static page's (no session: the browser's switcher reads the query itself);
    # None: as the viewer says (a state panel knows which page it was built for), else live
    keys = key_map(viewer, keys)
    if static is None:
        static = getattr(viewer, "static", False)
    if static:
        viewer.url_map = keys
        return repairs_pane([])
    args = pn.state.session_args or {}
    present = {name: args[key] for key, name in keys.items() if key in args}
    repairs = restore(viewer, list(keys.values()), present)
    by_param = {name: key for key, name in keys.items()}
    mirror(viewer, keys)
    return repairs_pane([rename_repair(r, by_param) for r in repairs])


def url_plan(panels, follows, page_keys=PAGE_KEYS):
    # {slot: Viewer or Viewer class} -> {slot: {query key: parameter}}, no key twice: a name
    # two panels share goes plain to the first and as `<slot>_<name>` to the later one; a
    # follower (follows: {slot: leader slot}) leaves its leader's names to the leader; a
    # panel whose `url_yields` is true takes `<slot>_<name>` for a name any other panel has,
    # even a later one (a panel put above another keeps that one's links working)
    taken, plan = set(page_keys), {}
    others = {slot: {n for s, v in panels.items() if s != slot
                     and not getattr(v, "url_yields", False) for n in v.url_keys}
              for slot, viewer in panels.items() if getattr(viewer, "url_yields", False)}
    for slot, viewer in panels.items():
        leader = plan.get(follows.get(slot), {})
        keys = {}
        for name in viewer.url_keys:
            if name in leader.values():  # the leader's URL already sets it
                continue
            plain = name not in taken and name not in others.get(slot, ())
            key = name if plain else f"{slot}_{name}"
            keys[key] = name
            taken.add(key)
        plan[slot] = keys
    return plan


def chapter_plan(panels, follows):  # {slot: ChapterPanel} -> the URL plan from the classes
    return url_plan({slot: panel.cls for slot, panel in panels.items()}, follows)
