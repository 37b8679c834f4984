"""What the component tests of panels in the one shape share: settings of a panel's
controls (every one, or a random sample), and checks that a live panel's models hold exactly
what its `state()` gives."""

import contextlib
import itertools
import random


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
        kind, _, rest = name.partition(":")
        if kind == "source":
            ok = all(list(model.data[column]) == list(v) for column, v in value.items())
        elif kind == "slots":
            ok = all(model.values[slot] == text for slot, text in value.items())
        else:
            got = getattr(model, rest.rpartition(".")[2])
            ok = got == value or (isinstance(value, dict)  # a Value spec: {"value": ...}
                                  and getattr(got, "value", None) == value.get("value"))
        if not ok:
            bad.append(name)
    return bad


def assert_models_hold(panel, state):  # every target of `state` holds its value on `panel`
    wrong = mismatches(panel, state)
    assert not wrong, wrong


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
