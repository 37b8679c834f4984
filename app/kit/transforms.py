"""A figure's browser-side transforms, each declared once with its Python twin.

Some positions are worked out in the browser from a column (a heatmap cell's centre from its
length, a bar's place from its key), so a state ships a short column instead of the places
(docs/REPAINT.md). A panel makes each such transform here, as a `(js, py)` pair: the browser
runs `js` (a function of static/model_code.js, `static_transform`), and the stills
(app/chapters/stills.py), which draw a figure at build time, apply `py`. No panel is named
outside its own file.
"""

from bokeh.model import Model
from bokeh.models import CustomJSTransform

from app.kit import model_code

PYTHON = {}  # (v_func, its plain args) -> py(values, data) -> values: every transform declared


def key(js, args):  # the same js with the same plain values is the same arithmetic (a panel
    # built again redeclares it); a model among the args (a source) is the data py reads
    return js, tuple(sorted((k, v) for k, v in args.items() if not isinstance(v, Model)))


def js_transform(js, py, **args):  # -> a CustomJSTransform running `js` (args: its JS
    # arguments); py(values, source data) -> the same values, for the stills
    PYTHON[key(js, args)] = py
    return CustomJSTransform(args=args, v_func=js)


def static_transform(name, py, **args):  # -> js_transform of static/model_code.js's function
    # `name`(xs, *args)
    return js_transform(model_code.code(name, "xs", *args), py, **args)


def python_twin(transform):  # a CustomJSTransform -> its declared py, or None
    return PYTHON.get(key(transform.v_func, dict(transform.args)))
