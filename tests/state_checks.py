"""What the component tests of panels in the one shape share: settings of a panel's
controls (every one, or a random sample), and checks that a live panel's models hold exactly
what its `state()` gives."""

import contextlib
import itertools
import json
import random

from app.kit.targets import parse as parse_target


def every_setting(cls):  # -> every combination of the panel class's controls' stops
    controls = cls.controls()
    for combo in itertools.product(*(c.values for c in controls)):
        yield dict(zip((c.name for c in controls), combo))


def sample_states(cls, n, seed=0):  # -> n random settings of the controls' stops
    rng = random.Random(seed)
    return [{c.name: rng.choice(c.values) for c in cls.controls()} for _ in range(n)]


def mismatches(panel, state):  # -> the targets whose model does not hold the state's value
    bad = []
    for name, value in state.items():
        model = panel.targets[name]
        target = parse_target(name)
        kind = target.kind
        if kind == "source":
            ok = all(list(model.data[column]) == list(v) for column, v in value.items())
        elif kind == "holes":
            ok = all(model.values[hole] == text for hole, text in value.items())
        else:
            got = getattr(model, target.attr)
            ok = got == value or (isinstance(value, dict)  # a Value spec: {"value": ...}
                                  and getattr(got, "value", None) == value.get("value"))
        if not ok:
            bad.append(name)
    return bad


def assert_models_hold(panel, state):  # every target of `state` holds its value on `panel`
    wrong = mismatches(panel, state)
    assert not wrong, wrong


def assert_pure_and_no_widget_moved(panel, message, step=1):  # state() of every `step`th
    # setting is the same twice and JSON (no NaN), computing it moves no widget of the live
    # panel, and its current state is state() with the typed input's message
    cls = type(panel)
    before = {k: v.value for k, v in panel.widgets.items()}
    for params in itertools.islice(every_setting(cls), 0, None, step):
        first = cls.state(**params)
        assert cls.state(**params) == first
        assert json.loads(json.dumps(first, allow_nan=False)) == first
    assert {k: v.value for k, v in panel.widgets.items()} == before
    assert panel.current_state() == {**cls.state(**panel.params()), "holes:message": message}


def assert_sampled_states_pure(panel, n=20):  # state() of n sampled settings is the same
    # twice and JSON as it is, computing it moves no widget or readout of the live panel, and
    # the panel's models hold its current settings' state
    cls = type(panel)
    before = widget_values(panel)
    for params in sample_states(cls, n):
        first = cls.state(**params)
        assert cls.state(**params) == first
        assert json.loads(json.dumps(first)) == first
    assert widget_values(panel) == before
    assert_models_hold(panel, cls.state(**panel.params()))


def assert_url_defaults(panel, **defaults):  # the panel's URL keys are `defaults`' names, in
    # that order, and a new panel's values are theirs
    assert panel.url_keys == tuple(defaults)
    assert {key: getattr(panel, key) for key in defaults} == defaults


def assert_url_repairs(panel, args, *parts):  # restoring the query `args` ({key: [bytes]})
    # lists repairs that hold each of `parts` (where the values landed: the caller's asserts)
    from app.kit import url_state

    joined = " ".join(url_state.restore(panel, panel.url_keys, args))
    for part in parts:
        assert part in joined


def static_typed_panel(cls):  # -> a panel with typed input, built as a static page has it: no
    # typed box, and a button to its live page (returned: [that button])
    import panel as pn

    from app.kit import states

    with states.static_build():
        p = cls()
        p.__panel__()
    assert not p._layout.select(pn.widgets.TextInput)
    live = [b for b in p._layout.select(pn.widgets.Button) if "live" in b.label.lower()]
    assert live
    return p, live


def widget_values(panel):  # every widget's value and every readout's text, as drawn now
    return ({name: w.value for name, w in panel.widgets.items()},
            {name: dict(getattr(m, "values", {})) for name, m in panel.targets.items()})


def built_article(static):  # -> the Shelf of the first chapter's viewers, built with its page
    # (static: inside a static build, as `attention-explorable build` makes it)
    from app.chapters import live_chapter, page_model
    from app.kit import states

    shelf = live_chapter.Shelf(page_model.at("/").panels)
    with states.static_build() if static else contextlib.nullcontext():
        live_chapter.page("/", defer=False, shelf=shelf)
    return shelf
