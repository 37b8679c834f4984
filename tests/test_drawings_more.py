"""The ladder's, online softmax's, decode bill's and cost panel's drawings (app/chapters/drawings):
every number they show against an independent computation here, in plain Python and math from
the models' published configs and the GPUs' datasheets; and every drawing inside its view box."""

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest

from app.chapters import content, figures
from app.chapters.drawings import catalogue as drawings
from app.panels import online_softmax as online_panel

W, CHAR = 320, 7  # the view box's width; about one character of 12-unit type

# the presets' published configs, by hand: layers, hidden, query heads, KV heads, head_dim,
# MLP width, vocabulary, MLP matrices (gated: 3), max positions
SHAPES = {
    "qwen3-8b": (36, 4096, 32, 8, 128, 12288, 151936, 3, 40960),
    "gpt2": (12, 768, 12, 12, 64, 3072, 50257, 2, 1024),
    "llama-3-8b": (32, 4096, 32, 8, 128, 14336, 128256, 3, 8192),
}
# the datasheets: name, dense BF16 FLOP/s, memory bytes/s
GPUS = {"a100-80gb": ("A100 80GB SXM", 312e12, 2.039e12),
        "h100-sxm": ("H100 SXM", 989e12, 3.35e12), "h200": ("H200", 989e12, 4.8e12),
        "b200": ("B200", 2250e12, 8.0e12), "rtx-4090": ("RTX 4090", 165e12, 1.008e12)}
SCORES = tuple(online_panel.PRESETS)


def texts(page):  # -> [(attributes, including those of an enclosing <g>), text]
    out = []

    def walk(node, inherited):
        attrs = {**inherited, **node.attrib}
        if inherited.get("class") and node.attrib.get("class"):
            attrs["class"] = f"{inherited['class']} {node.attrib['class']}"
        if node.tag == "text":
            out.append((attrs, node.text or ""))
        for child in node:
            walk(child, attrs if node.tag == "g" else {})

    walk(ET.fromstring(page), {})
    return out


def drawn(page, **data):  # -> the texts whose data- attributes are these
    return [t for a, t in texts(page)
            if all(a.get(f"data-{k}") == str(v) for k, v in data.items())]


def one(page, **data):
    (text,) = drawn(page, **data)
    return text


def attribute(page, name, **data):  # -> one drawn text's attribute
    (a,) = [a for a, _ in texts(page)
            if all(a.get(f"data-{k}") == str(v) for k, v in data.items())]
    return a.get(name, "")


def number(text):  # "1.553", "−0.5", "2 × 10^−5" -> float
    text = text.replace("−", "-").replace(",", "")
    if "× 10^" in text:
        mantissa, exponent = text.split(" × 10^")
        return float(mantissa) * 10.0 ** int(exponent)
    return float(text)


def box(page):  # -> (width, height) of the view box
    _, _, w, h = map(float, re.search(r'viewBox="([^"]+)"', page).group(1).split())
    return w, h


# --- the ladder: n² against n --------------------------------------------------------------

@pytest.mark.parametrize("length", range(3, 9))
def test_the_multiples_show_n_squared_for_prefill_and_n_for_decode(length):
    page = drawings.draw("ladder", "multiples", {"length": length, "phase": "prefill",
                                                 "prompt": 256, "response": 4096})
    for n in range(3, 9):
        assert one(page, step="prefill", n=n) == str(n * n)
        assert one(page, step="decode", n=n) == str(n)
        assert one(page, step="n", n=n) == f"n = {n}"
        # the cells drawn: an n × n square and a row of n
        assert f'data-phase="prefill" data-n="{n}" data-rows="{n}" data-cols="{n}"' in page
        assert f'data-phase="decode" data-n="{n}" data-rows="1" data-cols="{n}"' in page
        bold = "b" in attribute(page, "class", step="prefill", n=n).split()
        assert bold == (n == length)  # the panel's length stands out, and no other
    assert page.count('stroke-dasharray="3 2"') == 1  # its frame


# --- online softmax: the blocks' table ---------------------------------------------------------

def walk(scores, block):  # -> ([{step: value} per block], the one-pass sum): plain Python
    m, total, rows = -math.inf, 0.0, []
    for i in range(0, len(scores), block):
        part = scores[i:i + block]
        new = max(m, max(part))
        rescale = math.exp(m - new) if rows else None  # nothing to rescale before block 1
        terms = sum(math.exp(s - new) for s in part)
        total = (total * rescale if rows else 0.0) + terms
        rows.append({"scores": part, "max": max(part), "m": new, "rescale": rescale,
                     "block": terms, "sum": total})
        m = new
    return rows, sum(math.exp(s - max(scores)) for s in scores)


def read_table(page, blocks):  # -> ([{step: value} per block], the one-pass sum) as drawn
    rows = []
    for j in range(blocks):
        scores = " ".join(t for a, t in texts(page) if a.get("data-step") == "scores"
                          and a.get("data-block") == str(j))
        row = {"scores": [number(s) for s in scores.replace(",", " ").split()]}
        for step in ("max", "m", "rescale", "block", "sum"):
            text = one(page, step=step, block=j)
            row[step] = None if text == "—" else number(text)
        rows.append(row)
    return rows, number(one(page, step="full"))


@pytest.mark.parametrize(("scores", "block"), list(itertools.product(SCORES, (1, 2, 4))))
def test_the_online_table_is_a_plain_walk_of_the_blocks(scores, block):
    values = [float(s) for s in scores.split(",")]
    expected, full = walk(values, block)
    page = drawings.draw("online", "table", {"scores": scores, "block": block, "step": 0})
    got, got_full = read_table(page, len(expected))
    assert not drawn(page, step="max", block=len(expected))  # no block more
    for e, g in zip(expected, got):
        assert g["scores"] == e["scores"]
        for step in ("max", "m", "rescale", "block", "sum"):
            # four significant figures, as the panel's walk prints them
            assert g[step] == (None if e[step] is None else pytest.approx(e[step], rel=5e-4))
    assert got_full == pytest.approx(full, rel=5e-4)
    assert got[-1]["sum"] == got_full  # the walk's last ℓ, the whole row at once: one number


def test_the_online_tables_default_is_the_documents_two_blocks():
    page = drawings.draw("online", "table", {"scores": "2, 1, 3, 0", "block": 2, "step": 0})
    rows, full = read_table(page, 2)
    assert [r["m"] for r in rows] == [2, 3]
    assert rows[0]["sum"] == pytest.approx(1 + math.exp(-1), rel=5e-4)  # 1.368
    assert rows[1]["rescale"] == pytest.approx(math.exp(-1), rel=5e-4)  # e^(2 − 3)
    assert full == rows[1]["sum"] == pytest.approx(1 + math.exp(-1) + math.exp(-2)
                                                   + math.exp(-3), rel=5e-4)  # 1.553
    assert one(page, step="sum", block=1) == "1.553"


def test_a_core_that_forgets_the_rescale_fails_the_online_table(monkeypatch):
    real = online_panel.core.online_softmax

    def no_rescale(scores, block_size=2):  # adds each block's terms without the factor
        r = real(scores, block_size)
        steps, total = [], 0.0
        for b in r.steps:
            total += b.block_sum
            steps.append(online_panel.core.BlockStep(b.index, b.block, b.old_max, b.new_max,
                                                     b.rescale, b.old_sum, b.block_sum, total))
        return online_panel.core.OnlineSoftmax(tuple(steps), r.running_max, total, r.full_sum,
                                               r.weights)

    monkeypatch.setattr(online_panel.core, "online_softmax", no_rescale)
    page = drawings.draw("online", "table", {"scores": "2, 1, 3, 0", "block": 2, "step": 0})
    expected, _ = walk([2.0, 1.0, 3.0, 0.0], 2)
    assert read_table(page, 2)[0][1]["sum"] != pytest.approx(expected[1]["sum"], rel=5e-4)


# --- the decode bill: operations against bytes -------------------------------------------------

def hand_bill(model, context, gpu):  # -> (ops, bytes, intensity, ridge): one token, bf16
    layers, _, heads, kv, d, *_ = SHAPES[model]
    ops = 4 * layers * heads * d * context  # q·k and weight × value, 2 FLOPs a multiply-add
    read = 2 * layers * kv * d * 2 * context  # K and V, every layer, 2 bytes a value
    _, peak, bandwidth = GPUS[gpu]
    return ops, read, ops / read, peak / bandwidth


def test_the_bill_is_the_documents_for_llama_3_8b_on_an_h100():
    page = drawings.draw("decode", "bill", {"model": "llama-3-8b", "context": 4096,
                                            "users": 1, "gpu": "h100-sxm"})
    ops, read, intensity, ridge = hand_bill("llama-3-8b", 4096, "h100-sxm")
    assert (ops, read, intensity) == (2_147_483_648, 536_870_912, 4)
    assert ridge == pytest.approx(295.2, abs=0.05)
    assert one(page, step="ops") == "2.15 billion"
    assert one(page, step="bytes") == "0.54 GB (0.50 GiB)"
    assert one(page, step="intensity") == "4.0"
    assert one(page, step="ridge") == "H100 SXM ridge 295"
    # the bars to one scale: a quarter as many bytes as operations
    widths = {k: float(re.search(rf'width="([\d.]+)"[^>]*data-bar="{k}"', page).group(1))
              for k in ("ops", "bytes")}
    assert widths["bytes"] / widths["ops"] == pytest.approx(read / ops, abs=0.01)


def tick(page, label):  # -> x of a tick label of the intensity scale
    (x,) = [float(a["x"]) for a, t in texts(page) if t == label]
    return x


@pytest.mark.parametrize(("model", "gpu"), list(itertools.product(SHAPES, GPUS)))
def test_the_bill_places_intensity_and_ridge_on_the_log_scale(model, gpu):
    for context in (1, 4096, 1_048_576):
        page = drawings.draw("decode", "bill", {"model": model, "context": context,
                                                "users": 1, "gpu": gpu})
        ops, read, intensity, ridge = hand_bill(model, context, gpu)
        assert float(attribute(page, "data-value", step="ops")) == ops
        assert float(attribute(page, "data-value", step="bytes")) == read
        assert float(attribute(page, "data-value", step="intensity")) == intensity
        assert float(attribute(page, "data-value", step="ridge")) == pytest.approx(ridge)
        assert one(page, step="ridge") == f"{GPUS[gpu][0]} ridge {ridge:.0f}"
    # the scale's ends (whole units, as drawn) give its decade and where 1 FLOP/byte sits
    decade = (tick(page, "10,000") - tick(page, "0.1")) / 5
    one_x = tick(page, "0.1") + decade
    point = float(re.search(r'cx="([\d.]+)"[^>]*data-point="intensity"', page).group(1))
    assert point == pytest.approx(one_x + decade * math.log10(intensity), abs=0.5)
    ridge_x = float(attribute(page, "x", step="ridge"))  # centred on the ridge, in view
    assert ridge_x == pytest.approx(one_x + decade * math.log10(ridge), abs=1)
    assert float(tick(page, "memory-bound")) < ridge_x < float(tick(page, "compute-bound"))


# --- the cost panel: the crossover, a line crossing a line --------------------------------------

def matmul_params(model):  # -> every linear weight plus lm_head, by hand from the config
    layers, h, heads, kv, d, mlp, vocab, matrices, _ = SHAPES[model]
    attention = h * heads * d + 2 * h * kv * d + heads * d * h  # W_Q, W_K and W_V, W_O
    return layers * (attention + matrices * h * mlp) + h * vocab


def path_points(page, name):  # -> [(x, y)] of a drawn polyline
    d = re.search(rf'<path d="([^"]+)"[^>]*data-line="{name}"', page).group(1)
    return [tuple(map(float, p.split())) for p in re.split(r"[ML]", d) if p]


def y_at(points, x):  # a polyline's y at x, linearly between its points
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise AssertionError(f"{x} is off the line")


def test_qwen3_8b_by_hand():
    assert matmul_params("qwen3-8b") == 7_568_097_280
    assert 4 * 36 * 32 * 128 == 589_824  # one (query, key) pair, every layer and head


@pytest.mark.parametrize(("model", "kernel"),
                         list(itertools.product(SHAPES, ("triangular", "naive"))))
def test_the_crossover_is_where_the_two_lines_meet(model, kernel):
    layers, _, heads, _, d, *_, max_positions = SHAPES[model]
    pair, per_token = 4 * layers * heads * d, 2 * matmul_params(model)
    # pair × n² (× ½ triangular) = per_token × n, solved for n
    cross = per_token / pair * (2 if kernel == "triangular" else 1)
    page = drawings.draw("cost", "crossover", {"model": model, "kernel": kernel,
                                               "prompt": 4096, "generate": 4096})
    assert one(page, step="crossover") == f"crossover: {round(cross):,} tokens"
    assert float(attribute(page, "data-value", step="crossover")) == pytest.approx(cross,
                                                                                   rel=1e-12)
    assert one(page, step="max-position") == f"{max_positions:,}"
    # the dot sits on both lines; in log-log attention climbs twice as steeply as the rest
    x, y = (float(v) for v in re.search(r'cx="([\d.]+)" cy="([\d.]+)"[^>]*'
                                        r'data-point="crossover"', page).groups())
    attention, other = path_points(page, "attention"), path_points(page, "other")
    assert y_at(attention, x) == pytest.approx(y, abs=1)
    assert y_at(other, x) == pytest.approx(y, abs=1)

    def slope(points):
        (x0, y0), (x1, y1) = points[0], points[-1]
        return (y1 - y0) / (x1 - x0)

    assert slope(attention) / slope(other) == pytest.approx(2, rel=0.02)


def test_the_documents_crossovers_for_qwen3_8b():
    for kernel, tokens in (("triangular", "51,324"), ("naive", "25,662")):
        page = drawings.draw("cost", "crossover", {"model": "qwen3-8b", "kernel": kernel})
        assert one(page, step="crossover") == f"crossover: {tokens} tokens"
        assert one(page, step="max-position") == "40,960"


# --- every drawing: in its view box, and in a figure that opens its panel ---------------------

def every_state():  # -> (slot, name, settings) over the presets and stops the content uses
    for length in range(3, 9):
        yield "ladder", "multiples", {"length": length}
    for scores, block in itertools.product(SCORES, range(1, 9)):
        yield "online", "table", {"scores": scores, "block": block}
    for model, gpu, context in itertools.product(SHAPES, GPUS, (1, 4096, 1_048_576)):
        yield "decode", "bill", {"model": model, "context": context, "gpu": gpu}
    for model, kernel in itertools.product(SHAPES, ("triangular", "naive")):
        yield "cost", "crossover", {"model": model, "kernel": kernel}


def extents(page):  # -> [(left, right, top, bottom, text)] of every text, 7 units a character
    out = []
    for a, t in texts(page):
        x, y, w = float(a["x"]), float(a["y"]), len(t) * CHAR
        cls = a.get("class", "").split()
        left = x - w / 2 if "c" in cls else x - w if "e" in cls else x
        out.append((left, left + w, y - 10, y + 2, t))  # y is the baseline of 12-unit type
    return out


def test_every_drawing_keeps_its_text_inside_its_view_box_and_apart():
    for slot, name, settings in every_state():
        page = drawings.draw(slot, name, settings)
        width, height = box(page)
        assert width == W and "font-size" not in page
        placed = extents(page)
        for left, right, top, bottom, t in placed:
            assert 0 <= left and right <= W, (slot, name, settings, t)
            assert 0 <= top and bottom <= height, (slot, name, settings, t)
        for a, b in itertools.combinations(placed, 2):  # no two lines of text overlap
            apart = a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]
            assert apart, (slot, name, settings, a[4], b[4])
        for x, w in re.findall(r'<rect x="([\d.-]+)" y="[^"]+" width="([\d.]+)"', page):
            assert 0 <= float(x) and float(x) + float(w) <= W, (slot, name, settings)


@pytest.mark.parametrize(("slot", "name"), [("ladder", "multiples"), ("online", "table"),
                                            ("decode", "bill"), ("cost", "crossover")])
def test_each_drawing_renders_in_a_figure_that_opens_its_panel(slot, name):
    assert name in drawings.names(slot)
    page = figures.figure_html(content.FigureMarker(slot, (("draw", name),), "c"),
                               lambda text: text)
    assert f'data-drawing="{name}"' in page and f"#panel-{slot}" in page
    assert "<svg" in page and "<script" not in page
