"""A figure's browser-side transforms, each declared once with its Python twin.

Some positions are worked out in the browser from a column (a heatmap cell's centre from its
length, a bar's place from its key), so a state ships a short column instead of the places
(docs/REPAINT.md). A panel makes each such transform here, as a `(js, py)` pair: the browser
runs `js`, and the stills (app/chapters/stills.py), which draw a figure at build time, apply `py`.
No panel is named outside its own file.
"""

from bokeh.models import CustomJSTransform

PYTHON = {}  # v_func -> py(values, data) -> values: every transform a panel has declared


def js_transform(js, py, **args):  # -> a CustomJSTransform running `js` (args: its JS
    # arguments); py(values, source data) -> the same values, for the stills
    PYTHON[js] = py  # the same js is the same arithmetic: a panel built again redeclares it
    return CustomJSTransform(args=args, v_func=js)


def python_twin(transform):  # a CustomJSTransform -> its declared py, or None
    return PYTHON.get(transform.v_func)
