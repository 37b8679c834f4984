"""static/model_code.js, the code our Bokeh models run (app/kit/model_code.py reads it): each
function body, run in node as Bokeh runs it (a function of its own, its parameters the model's
args and what Bokeh passes), gives what the panels meant; each transform gives what its
Python twin, which the stills apply, gives."""

import functools
import json
import math
import subprocess

import pytest

from app.kit import model_code, transforms
from app.kit.resources import static_file
from app.panels.heatmap import centre_py, share_py
from app.panels.sqrt_dk import key_centre_py, key_width_py
from tests import js_twin

# each: (function, its arguments, what it must return), run in one node process
RUN = """const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([params, body, args]) => {
  const fn = new Function(...params, body);
  const result = fn(...args);
  return result === undefined ? args : result;  // a callback's effect: its arguments after
});
process.stdout.write(JSON.stringify(out));"""

KEYS = [1, 2, 3, 4, 5]
POSITIONS, LENGTHS = [0, 1, 2, 3, 0, 7], [4, 4, 4, 4, 0, 8]


def run_js(cases):  # [(name, args)] -> [result]
    job = [[list(model_code.FUNCTIONS[name][0]), model_code.FUNCTIONS[name][1], args]
           for name, args in cases]
    out = subprocess.run([js_twin.node(model_code.FILE), "-e", RUN], input=json.dumps(job),
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def nan_as_none(values):  # JSON writes NaN as null
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


def test_every_function_of_the_file_is_read():
    text = static_file(model_code.FILE).read_text(encoding="utf-8")
    declared = text.count("\n  function ")
    assert declared == len(model_code.FUNCTIONS) >= 7, sorted(model_code.FUNCTIONS)
    assert all(body and "//" not in body for _, body in model_code.FUNCTIONS.values())


def test_the_bodies_give_what_the_panels_and_the_twins_give():
    cases = [
        ("powerOfTwoTick", [10]),
        ("stopLabelTick", [["1", "2", "4"], 2]),
        ("stopLabelTick", [["1", "2", "4"], 5]),  # past the labels: the index itself
        ("keyCentre", [KEYS]),
        ("keyWidth", [KEYS]),
        ("cellCentre", [POSITIONS, {"data": {"n": LENGTHS}}]),
        ("cellShare", [LENGTHS, 0.96]),
        ("stepSlider", [{"end": 5, "value": 4}, 1]),
        ("stepSlider", [{"end": 5, "value": 5}, 1]),  # at the end it stays
        ("stepSlider", [{"end": 5, "value": 0}, -1]),
        ("stepSlider", [{"end": 5, "value": 3}, 0]),  # reset
    ]
    got = run_js(cases)
    assert got[:3] == ["1,024", "4", "5"]
    assert got[3] == pytest.approx(key_centre_py(KEYS, {}))
    assert got[4] == pytest.approx(key_width_py(KEYS, {}))
    assert got[5] == nan_as_none(centre_py(POSITIONS, {"n": LENGTHS}))
    assert got[6] == pytest.approx(share_py(0.96, LENGTHS, {}))
    assert [g[0]["value"] for g in got[7:]] == [5, 5, 0, 0]


def test_a_body_is_checked_against_the_arguments_it_is_given():
    assert model_code.code("stopLabelTick", "labels", "tick")
    with pytest.raises(ValueError, match="stopLabelTick"):
        model_code.tick_formatter("stopLabelTick", stops=[1])
    with pytest.raises(KeyError, match="noSuchFunction"):
        model_code.code("noSuchFunction")


def test_each_transform_finds_its_own_twin_by_code_and_values():
    # the same code with another value is another transform (the heat map's two shares)
    wide, narrow = (transforms.static_transform("cellShare", functools.partial(share_py, s),
                                                share=s) for s in (0.96, 0.9))
    assert transforms.python_twin(wide).args == (0.96,)
    assert transforms.python_twin(narrow).args == (0.9,)
    assert transforms.python_twin(transforms.static_transform("keyWidth", key_width_py)) \
        is key_width_py
