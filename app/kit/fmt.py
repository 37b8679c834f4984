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


def sci(x, digits=1):  # 0.1234 -> "1.2e−01": scientific notation, `digits` after the point
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


# --- counts, shares and byte sizes: the cost panels ------------------------------------------

def thousands(x):  # 4194304.4 -> "4,194,304": rounded to a whole number, thousands grouped
    return f"{round(x):,}"


def significant(x, digits):  # 1.0737, 3 -> "1.07"; 15.009, 3 -> "15.0"; 122.5, 2 -> "120"
    if x == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    if places < 0:  # round the integer part too: 122.5 at 2 digits -> 120
        x = round(x, places)
    return f"{x:,.{max(places, 0)}f}"


def scale_words(x, digits=3):  # 1073741824 -> "1.07 billion": significant digits, a word for scale
    if not math.isfinite(x):
        return "∞"
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"),
                       (1e3, "thousand")):
        if abs(x) >= size:
            return f"{significant(x / size, digits)} {word}"
    return significant(x, digits)


def percent(share, digits=2):  # 0.0739 -> "7.4%"; 0.00496 -> "0.50%"; 0.9950 -> "99.5%"
    text = significant(share * 100, digits)
    while text in ("100", "100.0", "100.00") and share < 1 and digits < 8:
        digits += 1  # never print 100% for something short of all of it
        text = significant(share * 100, digits)
    return text + "%"


def gb_and_gib(nbytes, digits=2):  # 536870912 -> "0.54 GB (0.50 GiB)": decimal and binary, named
    if not math.isfinite(nbytes):
        return "∞"
    for power, dec, binary in ((3, "GB", "GiB"), (2, "MB", "MiB"), (1, "kB", "KiB")):
        if nbytes >= 1000 ** power / 10:  # 0.54 GB rather than 537 MB
            return (f"{significant(nbytes / 1000 ** power, digits)} {dec} "
                    f"({significant(nbytes / 1024 ** power, digits)} {binary})")
    return f"{nbytes:,.0f} bytes"


def binary_bytes(nbytes):  # 4096 -> "4 KiB": binary units, exact when they divide
    for size, unit in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= size:
            value = nbytes / size
            return f"{value:g} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{nbytes:g} B"


def tokens_or_never(n):  # 51324.4 -> "51,324"; inf -> "never"
    return "never" if not math.isfinite(n) else f"{round(n):,}"


def about_times(x):  # 73.8 -> "~74"; 3.2 -> "~3.2": a ratio, roughly
    return f"~{x:.0f}" if x >= 10 else f"~{x:.1f}"


# --- the second chapter's walks: significant figures, float specials, softmax shares ---------

def sig_figures(x, digits=6):  # 0.36787944, 4 -> "0.3679"; 2e-16 -> "2 × 10^−16"; nan -> "nan"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return f"{MINUS}∞" if x < 0 else "∞"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa} × 10^{int(exponent)}"
    return text.replace("-", MINUS)


def bracket_negative(x, digits=6):  # a factor in a product: -1 -> "(−1)", 4 -> "4"
    return f"({sig_figures(x, digits)})" if x < 0 else sig_figures(x, digits)


def sig_figures_or_whole(x, digits=3):  # 7.389 -> "7.39", 162754.8 -> "162,755"; inf -> "inf"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else f"{MINUS}inf"
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace("-", MINUS)
    return sig_figures(x, digits)


def weight_percent(w):  # a softmax weight as a share: 0.659 -> "66%", 4.5e-05 -> "0.0045%"
    w = float(w)
    if not math.isfinite(w):
        return sig_figures_or_whole(w)
    if w == 0:
        return "0%"
    return f"{100 * w:.0f}%" if 100 * w >= 0.5 else f"{100 * w:.2g}%".replace("-", MINUS)


def big_number(x):  # 162754.79 -> "162,755"; 2.69e43 -> "2.69 × 10^43"
    return f"{x:,.0f}" if x < 1e7 else sig_figures(x, 3)


def tuple_text(v, digits=3):  # [d] -> "(0.12, −0.34, ...)", significant figures
    return "(" + ", ".join(sig_figures(float(x), digits) for x in v) + ")"


def decimal_bytes(nbytes):  # 4294967296 -> "4.29 GB"; 1048576 -> "1.05 MB" (powers of 10)
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:,} B"
