"""How numbers and bytes read on every page: one module, so "fmt" means one thing.

Real minus signs (−), −∞ for a masked score, thousands separators, and a unit on every
byte count (GB = 10⁹, GiB = 2³⁰).
"""

import math

MINUS = "−"


def num(x, digits=2):  # float -> fixed digits with a real minus sign; −∞ for masked scores
    x = float(x)
    if math.isinf(x):
        return f"{MINUS}∞" if x < 0 else "∞"
    return f"{x:.{digits}f}".replace("-", MINUS)


def sci(x, digits=1):  # float -> "1.2e−01"
    return f"{float(x):.{digits}e}".replace("-", MINUS)


def vector(v, digits=2):  # [d] -> "[0.12, −0.34, ...]"
    return "[" + ", ".join(num(x, digits) for x in v) + "]"


def short(x, digits=6):  # float -> the shortest text that reads back the same, minus sign real
    x = float(x)
    if math.isinf(x):
        return f"{MINUS}∞" if x < 0 else "∞"
    if math.isnan(x):
        return "nan"
    text = f"{x:.{digits}g}"
    if "e" not in text and "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", MINUS)


def count(n):  # int -> "4,194,304"
    return f"{int(n):,}"
