"""The code of the Bokeh models that run JavaScript of their own, read from static/model_code.js.

A tick formatter, a button's CustomJS or a transform holds a function body as its `code` (or
`v_func`); each is written once, as a function of static/model_code.js, and a panel takes it
by the function's name. The values it needs travel as the model's `args`, never as text.
"""

import re

from bokeh.models import CustomJSTickFormatter

from app.kit import resources

FILE = "model_code.js"
FUNCTION = re.compile(r"^(?P<indent>[ ]*)function (?P<name>\w+)\((?P<params>[^)]*)\) \{\n"
                      r"(?P<body>.*?)^(?P=indent)\}$", re.MULTILINE | re.DOTALL)


def functions():  # -> {name: (parameters, body)} of static/model_code.js
    text = resources.static_file(FILE).read_text(encoding="utf-8")
    out = {}
    for m in FUNCTION.finditer(text):
        params = tuple(p.strip() for p in m["params"].split(",") if p.strip())
        lines = [line.strip() for line in m["body"].splitlines()]
        out[m["name"]] = (params, "\n".join(line for line in lines
                                            if line and not line.startswith("//")))
    return out


FUNCTIONS = functions()


def code(name, *params):  # -> the body of `name`, whose parameters must be `params` (in order)
    if name not in FUNCTIONS:
        raise KeyError(f"static/{FILE} has no function {name}")
    declared, body = FUNCTIONS[name]
    if declared != params:
        raise ValueError(f"static/{FILE}: {name}{declared} is called with {params}")
    return body


def tick_formatter(name, **args):  # -> a CustomJSTickFormatter running `name`(*args, tick)
    return CustomJSTickFormatter(args=args, code=code(name, *args, "tick"))
