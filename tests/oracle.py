"""An independent oracle for the static build's tables of states (assets/states/*.js).

Every value a panel ships precomputed is recomputed here from the definitions the two
documents give (textbook formulas: attention as softmax(QKᵀ/√d_k)V, the FLOP and byte counts
of a decoder's config, softmax and its online form), with numpy and nothing of `app` or
`attention_core`: the only things taken from the project are inputs — the worked example's
word vectors and projections (attention_core/worked_example_constants.py, parsed as a data
file: its literal assignments are read with `ast.literal_eval`, no code of it runs) — and the
model shapes below, typed from the models' cards.

A table is read as the browser reads it: the file registers {controls, parts}; each part names
its controls and holds, per combination of their stops (row-major), an index into its values.
`problems(ref, table)` walks every combination of every part and returns one line per value
that disagrees, naming the panel, the state (its controls) and the value.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# --- reading a table as the browser does ----------------------------------------------------


def read_states_file(path):  # assets/states/<ref>.js -> (ref, table)
    # the file: AE.states.register("<ref>", '<the table's JSON text>'), the text's backslashes
    # and quotes escaped, and U+2028 / U+2029 as \u escapes (JavaScript's single-quoted string)
    text = Path(path).read_text(encoding="utf-8")
    match = re.fullmatch(r"AE\.states\.register\((\"[^\"]+\"), '(.*)'\);\s*", text, re.DOTALL)
    if match is None:
        raise ValueError(f"{path}: not an AE.states.register(...) file")
    escapes = {"\\": "\\", "'": "'", "u2028": "\u2028", "u2029": "\u2029"}
    body = re.sub(r"\\(\\|'|u2028|u2029)", lambda m: escapes[m.group(1)], match.group(2))
    return json.loads(match.group(1)), json.loads(body)


class Table:
    def __init__(self, table):
        self.controls = table["controls"]
        self.names = [c["name"] for c in self.controls]
        self.parts = table["parts"]

    def combos(self, part):  # -> every {control: value} of a part's controls, in table order
        ctl = [self.controls[i] for i in part["controls"]]
        for combo in itertools.product(*(c["values"] for c in ctl)):
            yield dict(zip((c["name"] for c in ctl), combo))

    def value(self, part, params):  # the part's value (a {target: value}) at those controls
        index = 0
        for i in part["controls"]:
            c = self.controls[i]
            index = index * len(c["values"]) + c["values"].index(params[c["name"]])
        return part["values"][part["index"][index]]

    def states(self):  # -> (params of one part, its {target: value}) for every part's combo
        for part in self.parts:
            for params in self.combos(part):
                yield params, self.value(part, params)

    def lookup(self, target, **params):  # one target at a full or partial set of controls
        for part in self.parts:
            if target in part["values"][0]:
                full = {c["name"]: params.get(c["name"], c["values"][0]) for c in self.controls}
                return self.value(part, full)[target]
        raise KeyError(target)


# --- comparing shown text with a recomputed number -------------------------------------------

NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?")


def numbers(text):  # "15 of 36 …, −0.07" -> [15.0, 36.0, -0.07]
    return [float(m.replace(",", "").replace("−", "-")) for m in NUMBER.findall(text or "")]


def shown_decimals(text):
    match = NUMBER.search(text or "")
    return len(match.group().partition(".")[2]) if match else 0


def sci(text):  # "4.54 × 10^−5" -> 4.54e-5; "162,755" -> 162755.0; "inf", "nan" as floats
    t = (text or "").replace("−", "-").strip()
    if t in ("inf", "∞"):
        return math.inf
    if t.lower() == "nan":
        return math.nan
    match = re.fullmatch(r"(-?[\d,.]+)\s*×\s*10\^(-?\d+)", t)
    if match:
        return float(match.group(1).replace(",", "")) * 10 ** int(match.group(2))
    return float(t.replace(",", ""))


def significant(number):  # "1,270" -> 3, "0.54" -> 2, "4.0" -> 2: the figures it shows
    digits = number.replace(",", "").replace("−", "").replace("-", "")
    if "." not in digits:
        digits = digits.rstrip("0") or "0"
    return max(len(digits.replace(".", "").lstrip("0")), 1)


class Checks:
    """Collects disagreements: each names the panel, the state and the value."""

    def __init__(self, panel):
        self.panel, self.out = panel, []

    def where(self, params, name):
        state = ", ".join(f"{k}={v}" for k, v in params.items())
        return f"{self.panel} [{state}] {name}"

    def fail(self, params, name, got, want):
        want = float(want) if isinstance(want, np.floating) else want
        self.out.append(f"{self.where(params, name)}: the table says {got!r}, the oracle {want!r}")

    def equal(self, params, name, got, want):
        if got != want:
            self.fail(params, name, got, want)

    def close(self, params, name, got, want, rel=1e-9, abs_=0.0):
        ok = got is not None and math.isclose(float(got), float(want), rel_tol=rel,
                                              abs_tol=abs_)
        if not ok:
            self.fail(params, name, got, want)

    def text(self, params, name, text, want, scale=1.0):
        # a number as shown (to its decimals) against the oracle's value in the same unit
        got = numbers(text)
        tol = 0.5 * 10 ** -shown_decimals(text) * (1 + 1e-9) + 1e-12
        if not got or abs(got[0] - want / scale) > tol + abs(want / scale) * 1e-12:
            self.fail(params, name, text, round(want / scale, 6))

    def int_text(self, params, name, text, want):  # a whole number, shown with commas
        got = numbers(text)
        if got != [float(want)]:
            self.fail(params, name, text, f"{int(want):,}")

    def sig_text(self, params, name, text, want, scale=1.0, rel=0.0):  # "4.95 trillion"
        # a number shown to a few significant figures; `rel`: how far the oracle's own value
        # may be from the app's for a stated reason (PARAMS_REL)
        got = numbers(text)
        v = want / scale
        digits = significant(NUMBER.search(text).group()) if got else 0
        tol = 0.5 * 10 ** (math.floor(math.log10(abs(v))) - digits + 1) if v else 0
        if not got or abs(got[0] - v) > tol * (1 + 1e-9) + rel * abs(v):
            self.fail(params, name, text, v)

    def rel_text(self, params, name, text, want, rel):  # a count to within `rel`
        got = numbers(text)
        if not got or not math.isclose(got[0], want, rel_tol=rel):
            self.fail(params, name, text, f"{want:,.0f} (within {rel:.0e})")

    def bytes_text(self, params, name, text, nbytes, rel=0.0):  # "16 GB (15 GiB)"
        units = {"bytes": 1, "byte": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
                 "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}
        found = re.findall(r"([\d,.]+)\s*(KiB|MiB|GiB|TiB|KB|MB|GB|TB|bytes|byte|B)\b", text or "")
        if not found:
            self.fail(params, name, text, f"{nbytes} bytes")
        for number, unit in found:  # shown to a few significant figures
            self.sig_text(params, f"{name} ({unit})", number, nbytes, units[unit], rel)


# --- the worked example's head ---------------------------------------------------------------


def literal_assignments(text):  # Python source -> {NAME: value} of its `NAME = <literal>` lines
    out = {}
    for node in ast.parse(text).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            out[node.targets[0].id] = ast.literal_eval(node.value)  # data only: no code runs
    return out


def worked_example_inputs():  # the word vectors and W_Q, W_K, W_V: data, read from their file
    path = ROOT / "attention_core" / "worked_example_constants.py"
    data = literal_assignments(path.read_text(encoding="utf-8"))
    return (list(data["WORDS"]), {w: np.array(v) for w, v in data["EMBEDDINGS"].items()},
            np.array(data["W_Q"]), np.array(data["W_K"]), np.array(data["W_V"]))


def dot(a, b):  # a correctly rounded sum of products: the same bits in any pass
    return math.fsum(float(x) * float(y) for x, y in zip(a, b, strict=True))


def softmax(x):  # a row of scores (−inf allowed) -> weights
    x = [float(s) for s in x]
    top = max(x)
    e = [math.exp(s - top) for s in x]
    total = math.fsum(e)
    return np.array([t / total for t in e])


def effective(w):  # e to the entropy of the weights: how many tokens a row attends to
    return math.exp(-math.fsum(p * math.log(p) for p in np.asarray(w, dtype=float) if p > 0))


@functools.cache
def attention(n, mask, divide):  # Vaswani et al. 2017, eq. 1, over the first n words
    words, emb, wq, wk, wv = worked_example_inputs()
    x = [emb[w] for w in words[:n]]
    q, k, v = ([[dot(row, m[:, c]) for c in range(m.shape[1])] for row in x]
               for m in (wq, wk, wv))
    d_k = wk.shape[1]
    raw = np.array([[dot(qi, kj) for kj in k] for qi in q])
    scaled = raw / math.sqrt(d_k) if divide else raw.copy()
    masked = scaled.copy()
    if mask:
        masked[np.triu_indices(n, 1)] = -np.inf  # −∞ before the softmax, not after
    weights = np.array([softmax(row) for row in masked])
    return {"words": words[:n], "raw": raw, "scaled": scaled, "masked": masked,
            "weights": weights, "v": np.array(v), "d_k": d_k}


def weighted_sum(w, v):  # Σ_j w_j v_j, each component correctly rounded
    return np.array([dot(w, v[: len(w), c]) for c in range(v.shape[1])])


HEAD_MAX = 8


def check_head(table, checks):
    for params, state in table.states():
        n = params["length"]
        a = attention(n, params.get("mask", True), params.get("divide", True))
        words = a["words"]
        if "prop:query_widget.end" in state:
            checks.equal(params, "query_widget.end", state["prop:query_widget.end"], n - 1)
            pos = state["source:positions"]
            for j in range(HEAD_MAX):
                want = f"{j}\n{words[j]}" if j < n else None
                checks.equal(params, f"positions.key_label[{j}]", pos["key_label"][j], want)
            pairs = [(i, j) for i in range(HEAD_MAX) for j in range(i + 1, HEAD_MAX)]
            for (i, j), label in zip(pairs, state["source:masked"]["label"], strict=True):
                checks.equal(params, f"masked.label[{i},{j}]", label, "−∞" if j < n else None)
            for k in range(3, HEAD_MAX + 1):
                checks.equal(params, f"masked_layer_{k}.visible",
                             state[f"prop:masked_layer_{k}.visible"], k == n)
        if "source:cells" in state:
            decode = params["phase"] == "decode"
            checks.equal(params, "query_widget.disabled", state["prop:query_widget.disabled"],
                         decode)
            cells, table_ = state["source:cells"], state["holes:weights_table"]
            for j in range(HEAD_MAX):
                label = f"{j} {words[j]}" if j < n else ""
                checks.equal(params, f"weights_table.kh{j}", table_[f"kh{j}"], label)
                checks.equal(params, f"weights_table.qh{j}", table_[f"qh{j}"], label)
            for i, j in itertools.product(range(HEAD_MAX), range(HEAD_MAX)):
                c, name = i * HEAD_MAX + j, f"[{i},{j}]"
                text = table_[f"w{i}_{j}"]
                if i >= n or j >= n:
                    checks.equal(params, "cells.label" + name, cells["label"][c], None)
                    checks.equal(params, "cells.weight" + name, cells["weight"][c], 0.0)
                    checks.equal(params, "weights_table.w" + name, text, "")
                elif decode and i < n - 1:  # decode runs the newest query only: no weight
                    checks.equal(params, "cells.label" + name, cells["label"][c], None)
                    if cells["weight"][c] not in (0.0, -1.0):  # -1: a cell drawn as cached
                        checks.fail(params, "cells.weight" + name, cells["weight"][c], "none")
                    checks.equal(params, "weights_table.w" + name, text, "not computed")
                elif params["mask"] and not decode and j > i:
                    checks.equal(params, "cells.label" + name, cells["label"][c], None)
                    checks.equal(params, "cells.weight" + name, cells["weight"][c], 0.0)
                    checks.equal(params, "weights_table.w" + name, text, "masked")
                else:
                    w = a["weights"][i, j] if not decode else softmax(a["scaled"][n - 1])[j]
                    checks.close(params, "cells.weight" + name, cells["weight"][c], w,
                                 abs_=0.5e-4 + 1e-12)
                    checks.text(params, "cells.label" + name, cells["label"][c], w)
                    checks.text(params, "weights_table.w" + name, text, w)
        if "holes:arithmetic" in state:
            check_head_row(params, state, a, n, checks)


def check_head_row(params, state, a, n, checks):
    decode = params["phase"] == "decode"
    r = n - 1 if decode else min(params["query"], n - 1)
    words = a["words"]
    # decode: one query, the newest, against every key; nothing to mask
    masked = a["scaled"][r] if decode else a["masked"][r]
    w = softmax(masked)
    exps = np.exp(masked - masked.max())
    output = weighted_sum(w, a["v"])
    ar = state["holes:arithmetic"]
    checks.equal(params, "arithmetic.caption_row", ar["caption_row"], str(r))
    checks.equal(params, "arithmetic.d_k", ar["d_k"], str(a["d_k"]))
    for j in range(HEAD_MAX):
        if j >= n:
            checks.equal(params, f"arithmetic.raw{j}", ar[f"raw{j}"], "")
            continue
        checks.text(params, f"arithmetic.raw{j}", ar[f"raw{j}"], a["raw"][r, j])
        checks.text(params, f"arithmetic.scaled{j}", ar[f"scaled{j}"], a["scaled"][r, j])
        if np.isinf(masked[j]):
            checks.equal(params, f"arithmetic.masked{j}", ar[f"masked{j}"], "−∞")
        else:
            checks.text(params, f"arithmetic.masked{j}", ar[f"masked{j}"], masked[j])
        checks.text(params, f"arithmetic.exp{j}", ar[f"exp{j}"], exps[j])
        checks.text(params, f"arithmetic.weight{j}", ar[f"weight{j}"], w[j])
    checks.text(params, "arithmetic.exp_sum", ar["exp_sum"], exps.sum())
    checks.text(params, "arithmetic.weight_sum", ar["weight_sum"], w.sum())
    got = numbers(ar["output"])
    if len(got) != len(output) or np.abs(np.array(got) - output).max() > 0.005 + 1e-9:
        checks.fail(params, "arithmetic.output", ar["output"], np.round(output, 2).tolist())
    cap = state["holes:caption"]
    top = int(np.argmax(w))
    checks.equal(params, "caption.row", cap["row"], f"{r} ({words[r]})")
    checks.equal(params, "caption.top_key", cap["top_key"], f"{top} ({words[top]})")
    checks.text(params, "caption.top_weight", cap["top_weight"], w[top])
    hero = state["holes:hero"]
    dots = n if decode else n * n
    discarded = n * (n - 1) // 2 if (params["mask"] and not decode) else 0
    checks.int_text(params, "hero.dots", hero["dots"], dots)
    checks.equal(params, "hero.discarded", numbers(hero["discarded"]), [discarded, dots])
    checks.text(params, "hero.eff", hero["eff"], effective(w))
    checks.equal(params, "hero.eff_row", hero["eff_row"], f"{r}, {words[r]}")
    log = state["log:log"]
    checks.equal(params, "log.length (numbers)", numbers(log["length"])[:3],
                 [n, dots, discarded])
    checks.text(params, "log.query (effective tokens)",
                log["query"].partition("effective tokens attended ")[2], effective(w))
    checks.text(params, "log.divide (tokens attended)", log["divide"].partition(" attends ")[2],
                effective(w))
    # truncation: row r of the n-token pass against row r of a pass over the first r + 1
    cut = attention(r + 1, params["mask"], params["divide"])
    cut_w = softmax(cut["scaled"][r] if decode else cut["masked"][r])
    cut_out = weighted_sum(cut_w, cut["v"])
    largest = max(np.abs(output - cut_out).max(), np.abs(w[: r + 1] - cut_w).max(),
                  np.abs(w[r + 1:]).max() if r + 1 < n else 0.0)
    line = state["holes:truncate"]["truncate"]
    if largest == 0.0:
        if "bit for bit" not in line or "mismatch" in line:
            checks.fail(params, "truncate", line, "matches, bit for bit")
    elif "mismatch" not in line or not math.isclose(sci(line.rpartition(" ")[2]), largest,
                                                    rel_tol=0.05):
        checks.fail(params, "truncate", line, f"mismatch: largest disagreement {largest:.1e}")


# --- the cost panel and the two bills: closed forms over a decoder's config ----------------

# Each model's shape, typed from its card's config.json (huggingface.co/<model>/config.json):
# layers, query heads, key/value heads, head width, hidden width, MLP width and its number of
# matrices (3 for a gated MLP, 2 for GPT-2's), vocabulary, max positions; and every parameter
# (embeddings, biases and norms included), as the cards count them.
MODELS = {
    "qwen3-8b": {"name": "Qwen3-8B", "layers": 36, "heads": 32, "kv_heads": 8,
                 "head_dim": 128, "hidden": 4096, "ffn": 12288, "mlp_mats": 3,
                 "vocab": 151936, "max_pos": 40960, "params": 8_190_735_360},
    "gpt2": {"name": "GPT-2 small", "layers": 12, "heads": 12, "kv_heads": 12,
             "head_dim": 64, "hidden": 768, "ffn": 3072, "mlp_mats": 2,
             "vocab": 50257, "max_pos": 1024, "params": 124_439_808},
    "llama-3-8b": {"name": "Llama-3-8B", "layers": 32, "heads": 32, "kv_heads": 8,
                   "head_dim": 128, "hidden": 4096, "ffn": 14336, "mlp_mats": 3,
                   "vocab": 128256, "max_pos": 8192, "params": 8_030_261_248},
}
TIED = {"gpt2"}  # lm_head is the token embedding (tie_word_embeddings)
# A count of parameters from config.json alone can leave out small tensors the checkpoint holds
# (biases; Qwen3's per-head query and key norms): the memory bill's parameters, and what follows
# from them, agree with the cards' counts to this relative tolerance.
PARAMS_REL = 1e-3
# the H100 SXM's peak and bandwidth, as the second document gives them (989 TFLOPS ÷ 3.35 TB/s)
H100 = {"peak": 989.0, "bandwidth": 3.35}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp32": 4}
WORD_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
              "quadrillion": 1e15}


def matmul_params(m):  # the weights a token multiplies: projections, MLP and the output layer
    per_layer = (m["hidden"] * m["heads"] * m["head_dim"] * 2  # W_Q and W_O
                 + m["hidden"] * m["kv_heads"] * m["head_dim"] * 2  # W_K and W_V
                 + m["mlp_mats"] * m["hidden"] * m["ffn"])
    return m["layers"] * per_layer + m["hidden"] * m["vocab"]


def pair_flops(m):  # 4 × layers × heads × head_dim: a score and a weighted value, 2 FLOPs each
    return 4 * m["layers"] * m["heads"] * m["head_dim"]


def prefill_share(m, n, kernel):  # attention's share of a prefill of n tokens
    pairs = n * n / 2 if kernel == "triangular" else n * n
    attention = pair_flops(m) * pairs
    return attention / (attention + 2 * matmul_params(m) * n)


def decode_share(m, context):  # attention's share of one decode step at that context
    attention = pair_flops(m) * context
    return attention / (attention + 2 * matmul_params(m))


def crossover(m, kernel):  # the n where attention's FLOPs equal everything else's
    return (4 if kernel == "triangular" else 2) * matmul_params(m) / pair_flops(m)


def kv_bytes_per_token(m, nbytes=2):  # K and V, every KV head, every layer
    return 2 * m["kv_heads"] * m["head_dim"] * m["layers"] * nbytes


def scaled_words(checks, params, name, text, want):  # "4.95 trillion" against a count
    word = (text or "").split()[-1] if text else ""
    checks.sig_text(params, name, text, want, WORD_SCALE.get(word, 1.0))


def check_model_fields(checks, params, state):
    m = MODELS[params["model"]]
    fields = state["holes:model_fields"]
    for i, key in enumerate(("layers", "heads", "kv_heads", "head_dim")):
        checks.int_text(params, f"model_fields.value{i}", fields[f"value{i}"], m[key])
    checks.equal(params, "model_status.name", state["holes:model_status"]["name"], m["name"])


def checked_model_states(table, checks):  # -> (params, state, its model) of each state of a
    # model panel, its model picker's fields checked on the way (the cost panel and both bills
    # show the same ones)
    for params, state in table.states():
        if "holes:model_fields" in state:
            check_model_fields(checks, params, state)
        yield params, state, MODELS.get(params.get("model"))


def check_cost(table, checks):
    for params, state, m in checked_model_states(table, checks):
        if "holes:crossover" in state:
            cross = state["holes:crossover"]
            for kernel, hole in (("triangular", "tri"), ("naive", "naive")):
                checks.int_text(params, f"crossover.{hole}", cross[hole],
                                math.floor(crossover(m, kernel)))
            checks.int_text(params, "pairs.pair_flops", state["holes:pairs"]["pair_flops"],
                            pair_flops(m))
            checks.int_text(params, "params.params", state["holes:params"]["params"],
                            matmul_params(m))
            scaled_words(checks, params, "params.params_short",
                         state["holes:params"]["params_short"], matmul_params(m))
            checks.close(params, "maxpos_span.location", state["prop:maxpos_span.location"],
                         m["max_pos"])
            curve = state["source:curve"]
            for i, (tri, naive) in enumerate(zip(curve["triangular"], curve["naive"],
                                                 strict=True)):
                # the tokens at which the triangular share is `tri`, then the naive share there
                n = tri / (1 - tri) * crossover(m, "triangular")
                checks.close(params, f"curve.naive[{i}] (at n = {n:.0f})", naive,
                             prefill_share(m, n, "naive"), rel=1e-3)
        if "prop:cross_span.location" in state:
            checks.close(params, "cross_span.location", state["prop:cross_span.location"],
                         crossover(m, params["kernel"]))
        if "holes:prefill" in state:
            n, kernel = params["prompt"], params["kernel"]
            share = prefill_share(m, n, kernel)
            pre = state["holes:prefill"]
            checks.text(params, "prefill.share", pre["share"], share * 100)
            checks.text(params, "prefill.rest", pre["rest"], (1 - share) * 100)
            pairs = n * n / 2 if kernel == "triangular" else n * n
            scaled_words(checks, params, "prefill.attention", pre["attention"],
                         pair_flops(m) * pairs)
            scaled_words(checks, params, "prefill.other", pre["other"],
                         2 * matmul_params(m) * n)
            checks.close(params, "marker.share", state["source:marker"]["share"][0], share)
            checks.equal(params, "marker.n", state["source:marker"]["n"], [n])
        if "holes:first_step" in state:
            first = state["holes:first_step"]
            checks.int_text(params, "first_step.first_context", first["first_context"],
                            params["prompt"])
            checks.text(params, "first_step.first", first["first"],
                        decode_share(m, params["prompt"]) * 100)
        if "holes:last_step" in state:
            last = state["holes:last_step"]
            context = params["prompt"] + params["generate"] - 1
            checks.int_text(params, "last_step.last_context", last["last_context"], context)
            checks.text(params, "last_step.last", last["last"], decode_share(m, context) * 100)


def check_decode_bill(table, checks):
    for params, state, m in checked_model_states(table, checks):
        if "holes:per_token" in state:
            per = state["holes:per_token"]
            checks.int_text(params, "per_token.kv_layer", per["kv_layer"],
                            kv_bytes_per_token(m) // m["layers"])
            checks.int_text(params, "per_token.kv_token", per["kv_token"], kv_bytes_per_token(m))
            checks.int_text(params, "per_token.layers", per["layers"], m["layers"])
            weights = state["holes:weights_line"]
            checks.int_text(params, "weights_line.matmul", weights["matmul"], matmul_params(m))
            checks.int_text(params, "weights_line.weight_ops", weights["weight_ops"],
                            2 * matmul_params(m))
        if "holes:ops" in state:
            c = params["context"]
            ops = state["holes:ops"]
            dots = m["layers"] * m["heads"] * c
            scores = dots * m["head_dim"] * 2  # a multiply and an add per component
            attention = 2 * scores  # and as many for the weighted sum of values
            checks.int_text(params, "ops.dots", ops["dots"], dots)
            checks.int_text(params, "ops.scores", ops["scores"], scores)
            checks.int_text(params, "ops.values", ops["values"], scores)
            scaled_words(checks, params, "ops.attention", ops["attention"], attention)
            checks.text(params, "ops.share", ops["share"],
                        100 * attention / (attention + 2 * matmul_params(m)))
            intensity = state["holes:intensity"]
            checks.text(params, "intensity.intensity", intensity["intensity"],
                        attention / (c * kv_bytes_per_token(m)))
            checks.bytes_text(params, "intensity.kv_one", intensity["kv_one"],
                              c * kv_bytes_per_token(m))
        if "holes:batch_ops" in state and params["users"] > 1:
            users, c = params["users"], params["context"]
            got = state["holes:batch_ops"]["users"]
            counts = re.findall(r"([\d.,]+ (?:thousand|million|billion|trillion))", got)
            checks.equal(params, "batch_ops.users (users)", numbers(got)[:1], [users])
            if len(counts) != 2:
                checks.fail(params, "batch_ops.users", got, "two counts")
            else:
                scaled_words(checks, params, "batch_ops (attention FLOPs)", counts[0],
                             users * pair_flops(m) * c)
                scaled_words(checks, params, "batch_ops (parameter FLOPs)", counts[1],
                             users * 2 * matmul_params(m))
        if "holes:reuse" in state:  # a parameter read once per step serves every user
            shown = state["holes:reuse"]["weights_intensity"]  # "32", "1.02e+03"
            if not math.isclose(float(shown), params["users"], rel_tol=0.005):
                checks.fail(params, "reuse.weights_intensity", shown, params["users"])
        if "holes:gqa" in state:
            gqa = state["holes:gqa"]
            grouped = m["kv_heads"] < m["heads"]
            checks.equal(params, "gqa.gqa_factor", gqa["gqa_factor"],
                         f"×{m['heads'] // m['kv_heads']}" if grouped else "")
        if "holes:kv_all" in state:
            nbytes = params["users"] * params["context"] * kv_bytes_per_token(m)
            checks.int_text(params, "kv_all.kv_all", state["holes:kv_all"]["kv_all"], nbytes)
            checks.bytes_text(params, "kv_all.kv_all_size", state["holes:kv_all"]["kv_all_size"],
                              nbytes)
        if "holes:context" in state:
            checks.int_text(params, "context", state["holes:context"]["context"],
                            params["context"])
        if "holes:ridge" in state:
            ridge = state["holes:ridge"]
            peak, bandwidth = sci(ridge["peak"]), sci(ridge["bandwidth"])
            # the peak and bandwidth as shown: rounded, so what follows agrees to their digits
            rel = sum(0.5 * 10 ** -shown_decimals(ridge[k]) / sci(ridge[k])
                      for k in ("peak", "bandwidth"))
            if params["gpu"] == "h100-sxm":
                checks.equal(params, "ridge.peak, bandwidth (the document's)", (peak, bandwidth),
                             (H100["peak"], H100["bandwidth"]))
            checks.close(params, "ridge_span.location", state["prop:ridge_span.location"],
                         peak / bandwidth, rel=rel)
            checks.close(params, "ridge.ridge", numbers(ridge["ridge"])[0], peak / bandwidth,
                         rel=rel, abs_=0.5)
            roof = state["source:roof"]
            for i, (x, y) in enumerate(zip(roof["x"], roof["y"], strict=True)):
                checks.close(params, f"roof.y[{i}] at x = {x}", y, min(x * bandwidth, peak),
                             rel=rel)
        if "source:point" in state:
            # decode attention reads each K/V value (2 bytes) for 4 FLOPs per query head
            # sharing it: H/KV heads share one, so FLOP/byte = heads / kv_heads
            x = m["heads"] / m["kv_heads"]
            peak = sci(table.lookup("holes:ridge", gpu=params["gpu"])["peak"])
            bandwidth = sci(table.lookup("holes:ridge", gpu=params["gpu"])["bandwidth"])
            point = state["source:point"]
            checks.close(params, "point.x", point["x"][0], x)
            checks.close(params, "point.y", point["y"][0], min(x * bandwidth, peak), rel=1e-2)
            verdict = state["holes:verdict"]["verdict"]
            if x < peak / bandwidth:  # left of the ridge: bound by memory, by ridge ÷ x
                factor = numbers(verdict)
                if "Memory-bound" not in verdict or not factor or not math.isclose(
                        factor[0], peak / bandwidth / x, rel_tol=0.01, abs_tol=0.5):
                    checks.fail(params, "verdict.verdict", verdict,
                                f"Memory-bound by a factor of ~{peak / bandwidth / x:.0f}")
        if "source:weights_point" in state:
            # each weight (2 bytes) read once per step does one multiply-add per user
            x = params["users"]
            peak = sci(table.lookup("holes:ridge", gpu=params["gpu"])["peak"])
            bandwidth = sci(table.lookup("holes:ridge", gpu=params["gpu"])["bandwidth"])
            wp = state["source:weights_point"]
            checks.close(params, "weights_point.x", wp["x"][0], x)
            checks.close(params, "weights_point.y", wp["y"][0], min(x * bandwidth, peak),
                         rel=1e-2)


def check_memory_bill(table, checks):
    for params, state, m in checked_model_states(table, checks):
        b = DTYPE_BYTES.get(params.get("dtype"))
        if "holes:weights" in state:
            w = state["holes:weights"]
            checks.rel_text(params, "weights.params", w["params"], m["params"], PARAMS_REL)
            checks.int_text(params, "weights.bytes", w["bytes"], b)
            checks.bytes_text(params, "weights.weights", w["weights"], m["params"] * b,
                              PARAMS_REL)
            checks.int_text(params, "weights.kv_token", w["kv_token"], kv_bytes_per_token(m, b))
            # a decode step streams all but the lookup tables: the token embedding, or, where
            # lm_head reuses it (GPT-2), the learned position table
            table_rows = m["max_pos"] if params["model"] in TIED else m["vocab"]
            checks.bytes_text(params, "weights.read", w["read"],
                              (m["params"] - table_rows * m["hidden"]) * b, PARAMS_REL)
            checks.rel_text(params, "one_user.one", state["holes:one_user"]["one"],
                            m["params"] * b / kv_bytes_per_token(m, b), PARAMS_REL)
        if "holes:all_users" in state:
            at = m["params"] * b / (params["users"] * kv_bytes_per_token(m, b))
            if params["users"] > 1:  # one user's crossing is one_user's line
                checks.rel_text(params, "all_users.all", state["holes:all_users"]["all"], at,
                                PARAMS_REL + 1 / at)
            if state["prop:cross_span.visible"]:  # hidden where it falls off the chart
                checks.close(params, "cross_span.location", state["prop:cross_span.location"],
                             at, rel=PARAMS_REL)
                checks.rel_text(params, "cross_label.text", state["prop:cross_label.text"], at,
                                PARAMS_REL + 1 / at)
        if "source:curve_kv" in state:  # every user's cache is one user's, times users
            one = table.lookup("source:curve_one", model=params["model"],
                               dtype=params["dtype"])["kv_one"]
            for i, (kv, kv_one) in enumerate(zip(state["source:curve_kv"]["kv"], one,
                                                 strict=True)):
                checks.close(params, f"curve_kv.kv[{i}]", kv, kv_one * params["users"],
                             rel=2e-3)
        if "holes:cache" in state:
            kv = params["users"] * params["context"] * kv_bytes_per_token(m, b)
            checks.bytes_text(params, "cache.kv_all", state["holes:cache"]["kv_all"], kv)
            checks.bytes_text(params, "cache.total", state["holes:cache"]["total"],
                              kv + m["params"] * b, PARAMS_REL)
        if "source:marker_kv" in state:  # drawn where the context marker is (its x)
            [x] = table.lookup("source:marker_x", context=params["context"])["context"]
            kv = params["users"] * x * kv_bytes_per_token(m, b)
            checks.close(params, "marker_kv.kv (GB)", state["source:marker_kv"]["kv"][0],
                         kv / 1e9, rel=1e-6)
        if "holes:context" in state:
            checks.int_text(params, "context", state["holes:context"]["context"],
                            params["context"])
            [x] = state["source:marker_x"]["context"]
            if x != params["context"] and not params["context"] < x:  # at the chart's edge
                checks.fail(params, "marker_x.context", x, params["context"])
        if "holes:scratch" in state:
            n, sc = params["prompt"], state["holes:scratch"]
            eager = m["heads"] * n * n * b  # every head's n × n scores, one layer
            checks.int_text(params, "scratch.scores", sc["scores"], n * n)
            checks.int_text(params, "scratch.heads", sc["heads"], m["heads"])
            checks.bytes_text(params, "scratch.eager", sc["eager"], eager)
            tile = int(sci(sc["tile"]))
            checks.int_text(params, "scratch.tile_scores", sc["tile_scores"], tile * tile)
            checks.bytes_text(params, "scratch.fused", sc["fused"], m["heads"] * tile * tile * b)
            checks.int_text(params, "scratch.ratio", sc["ratio"],
                            eager // (m["heads"] * tile * tile * b))


# --- softmax in a narrow float, and the online softmax ----------------------------------------


def scores_of(text):  # "12, 1, 0.1" -> [12.0, 1.0, 0.1]
    return [float(x.replace("−", "-")) for x in text.split(",")]


def approx(checks, params, name, text, want):  # a shown number (any format) against a value
    if isinstance(want, float) and math.isnan(want):
        checks.equal(params, name, text, "nan")
        return
    if isinstance(want, float) and math.isinf(want):
        checks.equal(params, name, text, "inf")
        return
    try:
        got = sci(text.rstrip("%"))
    except ValueError:
        checks.fail(params, name, text, want)
        return
    mantissa = re.split(r"\s*×|e", text.rstrip("%"))[0]  # "4.54 × 10^−5", "1e−41"
    digits = significant(mantissa)
    v = float(want)
    tol = 0.5 * 10 ** (math.floor(math.log10(abs(v))) - digits + 1) if v else 0.0
    if "." in mantissa and "×" not in text and "e" not in text:  # fixed decimals: half the last
        tol = max(tol, 0.5 * 10 ** -shown_decimals(mantissa))
    if abs(got - v) > tol * (1 + 1e-6) + 1e-300:
        checks.fail(params, name, text, v)


def narrow_softmax(scores, dtype, subtract_max):  # every step in that float, as a GPU would
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        x = np.array(scores, dtype=dtype)
        s = x - x.max() if subtract_max else x
        e = np.exp(s).astype(dtype)
        total = np.sum(e, dtype=dtype)
        w = (e / total).astype(dtype)
    return x, s, e, total, w


def check_overflow(table, checks):
    for params, state in table.states():
        scores = scores_of(params["scores"])
        dtype = np.dtype(params["precision"])
        _, s, e, total, w = narrow_softmax(scores, dtype, params["subtract_max"])
        t = state["holes:table"]
        for i, score in enumerate(scores):
            approx(checks, params, f"table.x{i}", t[f"x{i}"], score)
            approx(checks, params, f"table.s{i}", t[f"s{i}"], float(s[i]))
            approx(checks, params, f"table.e{i}", t[f"e{i}"], float(e[i]))
            approx(checks, params, f"table.w{i}", t[f"w{i}"], float(w[i]))
            approx(checks, params, f"table.p{i}", t[f"p{i}"], float(w[i]) * 100)
            checks.equal(params, f"table.f{i}", t.get(f"f{i}", ""),
                         "✕" if math.isnan(w[i]) else "")
            bar = state["source:bars"]["weight"][i]
            if math.isnan(w[i]):
                checks.equal(params, f"bars.weight[{i}]", bar, None)
            else:
                checks.close(params, f"bars.weight[{i}]", bar, float(w[i]), rel=1e-3,
                             abs_=1e-12)
        for i in range(len(scores), 16):
            checks.equal(params, f"table.e{i}", t[f"e{i}"], "")
        approx(checks, params, "table.total", t["total"], float(total))
        approx(checks, params, "table.weight_sum", t["weight_sum"], float(np.sum(w)))
        broken = not np.all(np.isfinite(w)) or not np.isfinite(total)
        verdict = state["holes:verdict"]
        checks.equal(params, "verdict (alarm raised)", bool(verdict["alarm"]), bool(broken))
        checks.equal(params, "verdict (all is well)", bool(verdict["okay"]), not broken)


def online_walk(scores, block):  # -> after each block: (old max, new max, rescale, sum)
    steps, top, total = [], -math.inf, 0.0
    for start in range(0, len(scores), block):
        chunk = scores[start:start + block]
        new = max(top, max(chunk))
        rescale = math.exp(top - new) if top > -math.inf else None
        total = (total * rescale if rescale is not None else 0.0) + math.fsum(
            math.exp(c - new) for c in chunk)
        steps.append((top, new, rescale, total, chunk))
        top = new
    return steps


def check_online_attention(params, state, checks):
    # the attention walk: each block's scores as shown, then the running max, rescale and sum
    at = state["holes:attention"]
    top, total = -math.inf, 0.0
    for b in range(6):
        shown = at[f"as{b}"]
        if not shown or shown == "not read yet":
            continue
        chunk = scores_of(shown)
        new = max(top, max(chunk))
        rescale = math.exp(top - new) if top > -math.inf else None
        total = (total * rescale if rescale is not None else 0.0) + math.fsum(
            math.exp(c - new) for c in chunk)
        approx(checks, params, f"attention.am{b}", at[f"am{b}"], new)
        # the scores are shown to 3 figures: what follows from them agrees to about 1%
        checks.close(params, f"attention.al{b}", numbers(at[f"al{b}"])[0], total, rel=0.01)
        if rescale is None:
            checks.equal(params, f"attention.ar{b}", at[f"ar{b}"], "—")
        else:
            checks.close(params, f"attention.ar{b}", numbers(at[f"ar{b}"])[0], rescale,
                         rel=0.01)
        top = new


def check_online_softmax(table, checks):
    for params, state in table.states():
        if "holes:attention" in state:
            check_online_attention(params, state, checks)
        if "holes:history" not in state:
            continue
        scores, block = scores_of(params["scores"]), params["block"]
        steps = online_walk(scores, block)
        k = min(params["step"], len(steps))  # blocks read so far
        checks.equal(params, "step_widget.end", state["prop:step_widget.end"], len(steps))
        h = state["holes:history"]
        for b, (old, new, rescale, total, chunk) in enumerate(steps):
            checks.equal(params, f"history.hb{b}", h[f"hb{b}"], str(b + 1))
            checks.equal(params, f"history.hs{b}", scores_of(h[f"hs{b}"]), chunk)
            if b >= k:
                checks.equal(params, f"history.hm{b}", h[f"hm{b}"], "not read yet")
                continue
            got = h[f"hm{b}"].replace("−∞", "-inf").replace("−", "-").split(" → ")
            checks.equal(params, f"history.hm{b}", [float(x) for x in got], [old, new])
            approx(checks, params, f"history.hl{b}", h[f"hl{b}"], total)
            if rescale is None:
                checks.equal(params, f"history.hr{b}", h[f"hr{b}"], "—")
            else:
                approx(checks, params, f"history.hr{b}", h[f"hr{b}"].split(" (")[0], rescale)
        now = state["holes:now"]
        bars = state["source:bars"]
        if k == 0:
            checks.equal(params, "bars.x", bars["x"], [])
            continue
        top, total = steps[k - 1][1], steps[k - 1][3]
        approx(checks, params, "now.sum", now["sum"], total)
        read = len(scores) if k == len(steps) else k * block
        checks.equal(params, "bars.x", bars["x"], list(range(read)))
        for j in range(read):
            checks.close(params, f"bars.term[{j}]", bars["term"][j],
                         math.exp(scores[j] - top), rel=1e-12)
        checks.equal(params, "unread.x", state["source:unread"]["x"],
                     list(range(read, len(scores))))
        if k == len(steps):  # the end: the running sum against one pass over the whole row
            full = math.fsum(math.exp(x - max(scores)) for x in scores)
            approx(checks, params, "now.end_sum", now["end_sum"], total)
            approx(checks, params, "now.end_full", now["end_full"], full)
            approx(checks, params, "now.end_max", now["end_max"], max(scores))
            checks.equal(params, "now.end_n", now["end_n"], str(len(scores)))


# --- the √d_k sweep: one fixed draw, and the mean over fresh draws ----------------------------

SWEEP_DRAWS = 200  # the oracle's own draws per (keys, d_k), for the mean curves
SWEEP_SIGMAS = 5  # agreement to 5 standard errors of the two means' difference


def effective_columns(x):  # [keys, columns] of scores -> e^entropy of each column's softmax
    x = x - x.max(axis=0)
    w = np.exp(x)
    w /= w.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(w > 0, w * np.log(w), 0.0).sum(axis=0)
    return np.exp(h)


@functools.cache
def sweep_means(keys, d_ks):  # -> (mean, std) of effective keys, unscaled and scaled, per d_k
    # q and k with independent unit-variance components (the paper's assumption); a head of
    # width d uses the first d components of each draw
    rng = np.random.default_rng(20171206 + keys)
    d = np.array(d_ks)
    raw_eff, scaled_eff = [], []
    for _ in range(SWEEP_DRAWS):
        q = rng.standard_normal(d.max())
        k = rng.standard_normal((keys, d.max()))
        scores = np.cumsum(k * q, axis=1)[:, d - 1]  # [keys, d_k]: every prefix's q · k
        raw_eff.append(effective_columns(scores))
        scaled_eff.append(effective_columns(scores / np.sqrt(d)))
    out = {}
    for i, width in enumerate(d_ks):
        out[width] = tuple((float(np.mean(e[:, i])), float(np.std(e[:, i], ddof=1)))
                           for e in (np.array(raw_eff), np.array(scaled_eff)))
    return out


def check_sqrt_dk(table, checks):
    for params, state in table.states():
        if "source:curve" in state:
            keys = params["keys"]
            curve = state["source:curve"]
            note = table.lookup("holes:curve_note", keys=keys)
            draws = int(note["draws"])
            means = sweep_means(keys, tuple(curve["d_k"]))
            for i, d in enumerate(curve["d_k"]):
                for column, (mean, std) in zip(("mean_raw", "mean_scaled"), means[d]):
                    tol = SWEEP_SIGMAS * std * math.sqrt(1 / draws + 1 / SWEEP_DRAWS) + 1e-3
                    checks.close(params, f"curve.{column} at d_k = {d}", curve[column][i],
                                 mean, abs_=tol)
            checks.equal(params, "all_keys.location", state["prop:all_keys.location"], keys)
        if "source:bars" in state:
            d, keys = params["d_k"], params["keys"]
            bars, readout = state["source:bars"], state["holes:readout"]
            raw = np.array(bars["raw"], dtype=float)  # the fixed draw's scores, as shipped
            checks.equal(params, "bars.key", bars["key"], list(range(1, keys + 1)))
            for j, r in enumerate(raw):  # shown to 2 decimals: ÷ √d_k within that rounding
                checks.close(params, f"bars.scaled[{j}]", bars["scaled"][j], r / math.sqrt(d),
                             abs_=0.005 / math.sqrt(d) + 0.005 + 1e-9)
            for column, row in (("w_raw", raw), ("w_scaled", raw / math.sqrt(d))):
                w = softmax(row)
                # the weights of scores rounded to 0.005: e^±0.005 relative, plus tiny ones
                for j in range(keys):
                    checks.close(params, f"bars.{column}[{j}]", bars[column][j], w[j],
                                 rel=0.011, abs_=1e-6)
            marker = state["source:marker"]
            for column, row in (("raw", raw), ("scaled", raw / math.sqrt(d))):
                checks.close(params, f"marker.{column} (effective keys)", marker[column][0],
                             effective(softmax(row)), rel=0.02)
                checks.text(params, f"readout.eff_{column}", readout[f"eff_{column}"],
                            marker[column][0])
            checks.text(params, "readout.root", readout["root"], math.sqrt(d))
            if not (math.isclose(sci(readout["spread"]), float(np.std(raw)), abs_tol=0.011)
                    or math.isclose(sci(readout["spread"]), float(np.std(raw, ddof=1)),
                                    abs_tol=0.011)):
                checks.fail(params, "readout.spread", readout["spread"], float(np.std(raw)))
            # three standard deviations (√d_k each) either side: scores span 6√d_k, and the
            # largest exponential over the smallest is e^(6√d_k) = 10^x
            span = 6 * math.sqrt(d)
            checks.int_text(params, "readout.swing", readout["swing"], round(span / 2))
            checks.int_text(params, "readout.two_swing", readout["two_swing"], round(span))
            if readout["ratio_exp"]:
                checks.int_text(params, "readout.ratio_exp", readout["ratio_exp"],
                                round(span / math.log(10)))  # "roughly 10^x"
            else:
                checks.int_text(params, "readout.ratio", readout["ratio"],
                                round(math.exp(span)))
            checks.equal(params, "span.location", table.lookup("prop:span.location", d_k=d), d)
            curve = table.lookup("source:curve", keys=keys)  # the fixed draw's curve meets it
            if d in curve["d_k"]:
                i = curve["d_k"].index(d)
                for column in ("raw", "scaled"):
                    checks.close(params, f"curve.draw_{column} at the marker",
                                 curve[f"draw_{column}"][i], marker[column][0], rel=1e-4)


# --- the ladder: n² in prefill, n per decode step -----------------------------------------------


def check_ladder(table, checks):
    for params, state in table.states():
        if "holes:ladder" in state:
            n, lad = params["length"], state["holes:ladder"]
            checks.int_text(params, "ladder.prefill", lad["prefill"], n * n)
            checks.int_text(params, "ladder.decode", lad["decode"], n)
            checks.equal(params, "ladder.prefill_all", lad["prefill_all"],
                         ", ".join(str(m * m) for m in range(3, 9)))
            checks.equal(params, "ladder.decode_all", lad["decode_all"],
                         ", ".join(str(m) for m in range(3, 9)))
            checks.equal(params, "head_marker.y", state["source:head_marker"]["y"], [n * n, n])
        if "holes:context" in state:
            prompt, response = params["prompt"], params["response"]
            final = prompt + response
            steps = sum(range(prompt, final))  # a decode step at each context prompt … final−1
            ctx = state["holes:context"]
            checks.int_text(params, "context.prompt_prefill", ctx["prompt_prefill"],
                            prompt * prompt)
            checks.int_text(params, "context.final", ctx["final"], final)
            checks.int_text(params, "context.final_square", ctx["final_square"], final * final)
            checks.int_text(params, "context.last_step", ctx["last_step"], final - 1)
            checks.int_text(params, "context.total", ctx["total"], steps)
            # the sum's split: every step sees the prompt, plus 0 … response−1 tokens of its own
            checks.int_text(params, "context.linear", ctx["linear"], response * prompt)
            checks.int_text(params, "context.square", ctx["square"], sum(range(response)))
            checks.text(params, "context.ratio", ctx["ratio"], 100 * steps / (final * final))
            checks.equal(params, "marker", (state["source:marker"]["n"],
                                            state["source:marker"]["total"]), ([final], [steps]))


# --- the shapes of one head ---------------------------------------------------------------


def check_shapes(table, checks):  # every box rows × columns, from the inputs' own sizes
    _, _, wq, wk, wv = worked_example_inputs()
    d_model, d_k, d_v = wq.shape[0], wk.shape[1], wv.shape[1]
    for params, state in table.states():
        n = params["length"]
        asking = n if params["phase"] == "prefill" else 1  # decode: the newest token alone
        want = [(asking, d_model), (asking, d_k), (n, d_k), (n, d_v), (asking, n), (asking, n),
                (asking, d_v)]
        boxes, labels = state["source:boxes"], state["source:labels"]
        checks.equal(params, "boxes.h×w", list(zip(boxes["h"], boxes["w"], strict=True)), want)
        checks.equal(params, "labels (sizes)", labels["text"][1::2],
                     [f"{r} × {c}" for r, c in want])
        said = numbers(state["holes:shapes"]["where"])  # prefill: n, n × n, n²; decode: 1, n,
        # n − 1 cached, n
        checks.equal(params, "shapes.where", said, [float(x) for x in (
            (n, n, n, n * n) if asking == n else (1, n, n - 1, n))])


# --- many heads, one block ------------------------------------------------------------------


def check_block(table, checks):  # every size and count of the two diagrams, from MODELS
    for params, state in table.states():
        if "source:model_labels" not in state:
            continue
        m = MODELS[params["model"]]
        h, hd, kv, d, f, v = (m["heads"], m["head_dim"], m["kv_heads"], m["hidden"], m["ffn"],
                              m["vocab"])
        attention = 2 * d * h * hd + 2 * d * kv * hd  # W_Q, W_O; W_K, W_V (no biases counted)
        mlp = m["mlp_mats"] * d * f
        whole = state["source:model_labels"]["text"]
        want = [f"token embedding: {v:,} × {d:,}", f"{v * d:,} parameters",
                f"residual stream: n × {d:,}", f"× {m['layers']} layers",
                f"attention: {h} heads", f"{attention:,} parameters",
                f"MLP: {d:,} → {f:,} → {d:,}", f"{mlp:,} parameters",
                f"lm_head: {d:,} → {v:,}", f"logits: n × {v:,}"]
        for text in want:
            checks.equal(params, f"model label {text!r}", text in whole, True)
        heads = state["source:heads_labels"]["text"]
        want = [f"Q: {h} heads, n × {hd} each", f"K and V: {kv} heads, n × {hd} each",
                f"per head: softmax(QKᵀ ÷ √{hd}) V",
                f"concatenated: n × ({h} × {hd}) = n × {h * hd:,}",
                f"W_O: {h * hd:,} × {d:,}", f"{h * hd * d:,} parameters",
                f"W_Q: {d * h * hd:,} · W_K, W_V: {d * kv * hd:,} each"]
        for text in want:
            checks.equal(params, f"heads label {text!r}", text in heads, True)
        said = state["holes:block"]["params"]
        share = attention / (attention + mlp)
        checks.equal(params, "block.params (attention, layer, MLP)", numbers(said)[:4],
                     [float(attention), float(attention + mlp), round(100 * share), float(mlp)])
        checks.equal(params, "block.params (total)", numbers(said)[-1], float(m["params"]))


# --- the dot product as agreement -----------------------------------------------------------


def check_agreement(table, checks):
    for params, state in table.states():
        if "holes:arithmetic" in state:
            a, b = np.array(scores_of(params["a"])), np.array(scores_of(params["b"]))
            score = math.fsum(a * b)
            ar, v = state["holes:arithmetic"], state["holes:verdict"]
            approx(checks, params, "arithmetic.score", ar["score"], score)
            checks.equal(params, "arithmetic.terms (numbers)",
                         [abs(x) for x in numbers(ar["terms"])], [abs(x) for x in a * b])
            na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
            if na == 0 or nb == 0:  # a zero vector has no direction
                checks.equal(params, "verdict.angle", v["angle"], "")
                checks.equal(params, "verdict (zero said)", bool(v["zero"]), True)
                checks.equal(params, "arrow_b.visible", state["prop:arrow_b.visible"], False)
                continue
            cos = score / (na * nb)
            angle = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
            checks.text(params, "verdict.cos", v["cos"], cos)
            checks.text(params, "verdict.angle", v["angle"], angle)
            checks.text(params, "verdict.norm_a", v["norm_a"], na)
            checks.text(params, "verdict.norm_b", v["norm_b"], nb)
            checks.equal(params, "verdict.sign", v["sign"],
                         "positive" if score > 0 else "negative" if score < 0 else "zero")
            # perpendicular within 10° of 90°; aligned / opposed within 45° of 0° / 180°
            near = min(angle, 180 - angle) < 45
            word = ("perpendicular" if abs(angle - 90) <= 10 else
                    ("aligned" if near else "leaning together") if angle < 90 else
                    ("opposed" if near else "leaning apart"))
            checks.equal(params, "verdict.verdict", v["verdict"], word)
            checks.close(params, "arc.end (radians)", state["source:arc"]["end"][0],
                         math.radians(angle), rel=1e-9, abs_=1e-12)
            checks.close(params, "arrow_b.x_end (cos)", state["prop:arrow_b.x_end"], cos,
                         abs_=1e-9)
            checks.close(params, "arrow_b.y_end (sin)", state["prop:arrow_b.y_end"],
                         math.sin(math.radians(angle)), abs_=1e-9)
        if "holes:ops" in state:
            d = params["d"]
            ops = state["holes:ops"]
            checks.int_text(params, "ops.ops", ops["ops"], 2 * d)  # d multiplies, ~d adds
            checks.int_text(params, "ops.adds", ops["adds"], d - 1)
            demo, shown = state["source:demo"], state["holes:demo"]
            raw = np.array(demo["raw"])  # the demonstration's fixed draw of scores
            scaled = raw / math.sqrt(d)
            for j in range(len(raw)):
                checks.close(params, f"demo.scaled[{j}]", demo["scaled"][j], scaled[j],
                             rel=1e-9, abs_=1e-12)
            for column, row, eff in (("w_raw", raw, "eff_raw"),
                                     ("w_scaled", scaled, "eff_scaled")):
                w = softmax(row)
                for j in range(len(raw)):
                    checks.close(params, f"demo.{column}[{j}]", demo[column][j], w[j],
                                 rel=1e-9, abs_=1e-15)
                checks.text(params, f"demo.{eff}", shown[eff], effective(w))
            w = softmax(scaled)
            checks.text(params, "demo.root", shown["root"], math.sqrt(d))
            checks.text(params, "demo.top_scaled", shown["top_scaled"], 100 * w.max())
            wr = softmax(raw)
            checks.equal(params, "demo.winner", shown["winner"], str(int(np.argmax(wr))))
            checks.text(params, "demo.winner_weight", shown["winner_weight"], 100 * wr.max())
            for hole, row in (("spread_raw", raw), ("spread_scaled", scaled)):
                tol = 0.5 * 10 ** -shown_decimals(shown[hole]) + 1e-9
                got = numbers(shown[hole])[0]
                if not any(abs(got - np.std(row, ddof=k)) <= tol for k in (0, 1)):
                    checks.fail(params, f"demo.{hole}", shown[hole], float(np.std(row)))


# --- FlashAttention, tile by tile, and the bytes it moves ------------------------------------


def tile_grid(n, rows, cols, causal):  # -> [(r0, r1, c0, c1, skipped)] row-major: FA-2's loops
    out = []
    for r0 in range(0, n, rows):
        for c0 in range(0, n, cols):
            r1, c1 = min(r0 + rows, n), min(c0 + cols, n)
            out.append((r0, r1, c0, c1, causal and c0 > r1 - 1))  # every key after every row
    return out


def check_tiles(table, checks):
    # the tiles drawn and the tile now; each of its rows' running max, sum and output against
    # their definitions over the keys read so far (a prefix of the row): no recurrence
    for params, state in table.states():
        if "source:tiles" not in state:
            continue
        rows, cols, causal = params["block_rows"], params["block_cols"], params["causal"]
        a = attention(8, causal, True)
        grid = tile_grid(8, rows, cols, causal)
        visited = [t for t in grid if not t[4]]
        now = visited[min(params["step"], len(visited)) - 1]
        r0, r1, c0, c1, _ = now
        labels = state["source:tiles"]["label"]
        checks.equal(params, "tiles.skipped", labels.count("skipped"),
                     sum(t[4] for t in grid))
        t = state["source:tile"]
        checks.equal(params, "tile", [t["x"][0], t["y"][0], t["w"][0], t["h"][0]],
                     [(c0 + c1) / 2, (r0 + r1) / 2, c1 - c0, r1 - r0])
        want = [a["masked"][q, k] for q in range(r0, r1) for k in range(c0, c1)]
        shown = state["source:scores"]["label"]
        checks.equal(params, "scores.count", len(shown), len(want))
        for j, (text, value) in enumerate(zip(shown, want)):
            if np.isfinite(value):
                approx(checks, params, f"scores[{j}]", text, value)
            else:
                checks.equal(params, f"scores[{j}]", text, "−∞")
        h = state["holes:step"]
        checks.equal(params, "step.of", h["of"], str(len(visited)))
        for i, q in enumerate(range(r0, r1)):
            for side, end in enumerate((c0, c1)):  # before this tile's keys, and after them
                seen = [a["masked"][q, k] for k in range(end) if np.isfinite(a["masked"][q, k])]
                top = max(seen, default=-math.inf)
                total = math.fsum(math.exp(x - top) for x in seen)
                m_text, l_text = (h[f"{x}{i}"].split(" → ")[side] for x in ("m", "l"))
                if seen:
                    approx(checks, params, f"step.m{i}[{side}]", m_text, top)
                else:
                    checks.equal(params, f"step.m{i}[{side}]", m_text, "−∞")
                approx(checks, params, f"step.l{i}[{side}]", l_text, total)
            w = [math.exp(a["masked"][q, k] - top) / total if np.isfinite(a["masked"][q, k])
                 else 0.0 for k in range(c1)]
            out = weighted_sum(w, a["v"])
            for c, text in enumerate(h[f"o{i}"].split(", ")):
                approx(checks, params, f"step.o{i}[{c}]", text, out[c])


def layer_bytes(n, causal, heads=32, d=128, rows=128, cols=64, nbytes=2):
    # -> (standard, tiled): S and P written and read once each (4n²) with Q, K, V, O; tiled:
    # Q, O once, K and V read by every query block up to its last row, L in fp32
    standard = heads * (4 * n * d + 4 * n * n) * nbytes
    keys = 0
    for r0 in range(0, n, rows):
        last = min(r0 + rows, n) - 1
        keys += min(n, (last // cols + 1) * cols) if causal else n
    tiled = heads * ((2 * n * d + 2 * keys * d) * nbytes + 4 * n)
    return standard, tiled


def check_traffic(table, checks):
    for params, state in table.states():
        if "holes:traffic" in state:
            n, causal = params["prompt"], params["causal"]
            standard, tiled = layer_bytes(n, causal)
            h = state["holes:traffic"]
            checks.bytes_text(params, "traffic.standard", h["standard"], standard)
            checks.bytes_text(params, "traffic.tiled", h["tiled"], tiled)
            approx(checks, params, "traffic.ratio", h["ratio"], standard / tiled)
            checks.bytes_text(params, "traffic.scratch", h["scratch"], 32 * n * n * 2)
        if "source:curves" in state:
            curves = state["source:curves"]
            for n, got_s, got_t in zip(curves["n"], curves["standard"], curves["tiled"]):
                checks.equal(params, f"curves[{n}]", [got_s, got_t],
                             list(layer_bytes(n, params["causal"])))


# --- the KV cache's blocks and how many fit -------------------------------------------------


STORY_TOKENS = {  # the blocks panel's story: each sequence's tokens after each event (1-8)
    "system": [10] * 8, "Ana": [None, 15, 15, 21, 21, 21, None, None],
    "Ben": [None, None, 17, 17, 17, 17, 17, 21], "Ben, 2nd": [None] * 4 + [17, 18, 18, 18]}


def check_blocks(table, checks):
    # each table as long as its tokens need, the prompt's full blocks shared, every block's
    # count the number of tables listing it, the free list the blocks no table lists
    for params, state in table.states():
        size, event = params["block_size"], params["event"]
        h, tables = state["holes:blocks"], {}
        for i in range(4):
            if h[f"name{i}"]:
                tables[h[f"name{i}"]] = [int(b) for b in h[f"blocks{i}"].split(", ")]
        for seq, tokens in STORY_TOKENS.items():
            want = tokens[event - 1]
            checks.equal(params, f"blocks.name{list(STORY_TOKENS).index(seq)}", seq in tables,
                         want is not None)
            if want is None or seq not in tables:
                continue
            i = list(STORY_TOKENS).index(seq)
            checks.int_text(params, f"blocks.tokens{i}", h[f"tokens{i}"], want)
            checks.equal(params, f"blocks.blocks{i}", len(tables[seq]), -(-want // size))
            checks.int_text(params, f"blocks.empty{i}", h[f"empty{i}"], -want % size)
            if seq != "system":  # the system prompt's full blocks, held by every user
                checks.equal(params, f"blocks.blocks{i} shared", tables[seq][:10 // size],
                             tables["system"][:10 // size])
        listed = [b for t in tables.values() for b in t]
        counts = state["source:pool"]["count"]
        for block in range(16):
            n = listed.count(block)
            checks.equal(params, f"pool.count[{block}]", counts[block], f"×{n}" if n > 1 else "")
        free = {int(b) for b in h["free"].split(", ")} if h["free"] != "none" else set()
        checks.equal(params, "free", free, set(range(16)) - set(listed))
        checks.int_text(params, "used", h["used"], len(set(listed)))


GIB = 1 << 30


def check_fit(table, checks):
    # vLLM's arithmetic: total × utilization − weights − 2 GiB, ÷ (2 × 16 × KV heads ×
    # head_dim × 2) ÷ layers, floored; 16 slots a block; a request takes ⌈context / 16⌉
    for params, state in table.states():
        if "holes:fit" not in state:
            continue
        m = MODELS[params["model"]]
        cache = params["gpu"] * GIB * params["utilization"] - m["params"] * 2 - 2 * GIB
        page = 2 * 16 * m["kv_heads"] * m["head_dim"] * 2
        blocks = max(int(cache // page // m["layers"]), 0)
        h = state["holes:fit"]
        checks.int_text(params, "fit.page", h["page"], page)
        checks.rel_text(params, "fit.blocks", h["blocks"], blocks, PARAMS_REL)
        checks.rel_text(params, "fit.tokens", h["tokens"], blocks * 16, PARAMS_REL)
        per_request = -(-params["context"] // 16)
        got = numbers(h["users"])[0]
        if abs(got - blocks // per_request) > 1 + PARAMS_REL * blocks / per_request:
            checks.fail(params, "fit.users", h["users"], blocks // per_request)


# --- every table -------------------------------------------------------------------------------

CHECKS = {"HeadPanel": check_head, "CostPanel": check_cost, "DecodeBillPanel": check_decode_bill,
          "MemoryBillPanel": check_memory_bill, "OverflowPanel": check_overflow,
          "OnlineSoftmaxPanel": check_online_softmax, "SqrtDkPanel": check_sqrt_dk,
          "LadderPanel": check_ladder, "AgreementPanel": check_agreement,
          "ShapesPanel": check_shapes, "BlockPanel": check_block, "TilesPanel": check_tiles,
          "TrafficPanel": check_traffic, "BlocksPanel": check_blocks, "FitPanel": check_fit}


def problems(ref, table):  # -> one line per value the oracle disagrees with
    panel = ref.rpartition("-")[0]
    checks = Checks(panel)
    CHECKS[panel](Table(table), checks)
    return checks.out
