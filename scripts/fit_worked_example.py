"""Fit the worked example's constants once, deterministically, and write them out.

The documents quote what one head over "the cat sat on the mat" does at length 6,
query 2 ("sat"): 0.77 on "cat" and 0.07 on "the" with the mask, 0.23 on "mat" without
it, 0.97 on "cat" without the divisor. Those are targets for the scaled scores of row 2;
the embeddings, W_k and W_v are random, rounded to 2 decimals, and W_q is nudged (the
smallest change, along the embedding of "sat") so that row 2 hits them. Seeds are tried
in order until the rounded constants reproduce every target at 2-decimal rounding with
margin to spare.

    python scripts/fit_worked_example.py   # rewrites attention_core/worked_example_constants.py
"""

import math
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core import head

WORDS = ("the", "cat", "sat", "on", "the", "mat", "and", "purred")
VOCAB = ("the", "cat", "sat", "on", "mat", "and", "purred")
D_MODEL, D_K = 8, 5


def target_scores():
    # scaled scores of row 2 over the, cat, sat, on, mat (softmax ignores a shared offset)
    p_the, p_cat, p_sat = 0.07, 0.77, 0.16
    s_the, s_cat, s_sat = 0.0, math.log(p_cat / p_the), math.log(p_sat / p_the)
    s_on = -0.5
    masked_total = sum(math.exp(s) for s in (s_the, s_cat, s_sat))
    rest = masked_total + math.exp(s_the) + math.exp(s_on)  # the second "the" equals the first
    s_mat = math.log(0.23 * rest / 0.77)  # e^mat / (rest + e^mat) = 0.23
    return {"the": s_the, "cat": s_cat, "sat": s_sat, "on": s_on, "mat": s_mat}


def build(seed):
    rng = np.random.default_rng(seed)
    emb = np.round(rng.normal(0.0, 1.0, (len(VOCAB), D_MODEL)), 2)
    w_k = np.round(rng.normal(0.0, 0.5, (D_MODEL, D_K)), 2)
    w_v = np.round(rng.normal(0.0, 0.5, (D_MODEL, D_K)), 2)
    w_q = rng.normal(0.0, 0.5, (D_MODEL, D_K))
    targets = target_scores()
    names = list(targets)
    k_sel = emb[[VOCAB.index(w) for w in names]] @ w_k  # [5, d_k]
    offset = float(np.mean(emb[VOCAB.index("sat")] @ w_q @ k_sel.T)) / math.sqrt(D_K)
    want = (np.array([targets[w] for w in names]) + offset) * math.sqrt(D_K)
    q_sat = np.linalg.solve(k_sel, want)
    e_sat = emb[VOCAB.index("sat")]
    w_q = w_q + np.outer(e_sat, q_sat - e_sat @ w_q) / (e_sat @ e_sat)
    return emb, w_q, w_k, w_v


def embed(emb, n):  # -> [n, d_model]
    return emb[[VOCAB.index(w) for w in WORDS[:n]]]


def checks(emb, w_q, w_k, w_v):
    # the documents' figures, each with how far it sits from a rounding edge
    x = embed(emb, 6)
    on = head.attention_head(x, w_q, w_k, w_v, causal=True, scaled=True)
    off = head.attention_head(x, w_q, w_k, w_v, causal=False, scaled=True)
    raw = head.attention_head(x, w_q, w_k, w_v, causal=True, scaled=False)
    got = {
        "cat": (on.weights[2, 1], 0.77), "the": (on.weights[2, 0], 0.07),
        "eff": (on.effective_tokens[2], 1.98), "mat": (off.weights[2, 5], 0.23),
        "cat_raw": (raw.weights[2, 1], 0.97), "eff_raw": (raw.effective_tokens[2], 1.17),
    }
    return {k: (float(v), t, 0.005 - abs(v - t)) for k, (v, t) in got.items()}


def fit(max_seeds=5000, margin=0.0015):
    for seed in range(max_seeds):
        emb, w_q, w_k, w_v = build(seed)
        if np.abs(w_q).max() > 3:
            continue
        w_q = np.round(w_q, 3)
        result = checks(emb, w_q, w_k, w_v)
        if all(m >= margin for _, _, m in result.values()):
            return seed, emb, w_q, w_k, w_v, result
    raise SystemExit("no seed reproduced the targets")


def render(seed, emb, w_q, w_k, w_v):
    def rows(a, fmt):
        return "\n".join("    (" + ", ".join(fmt.format(v) for v in r) + ")," for r in a)

    emb_rows = "\n".join(f'    "{w}": (' + ", ".join(f"{v:.2f}" for v in emb[i]) + "),"
                         for i, w in enumerate(VOCAB))
    return f'''"""Constants of the worked example, written by scripts/fit_worked_example.py (seed {seed}).

Do not edit by hand: rerun the script. Each word is a fixed 8-dimensional vector; W_Q,
W_K and W_V project it into a d_k = 5 head. There is no positional encoding.
"""

WORDS = {WORDS!r}

EMBEDDINGS = {{  # word -> [d_model = 8]
{emb_rows}
}}

W_Q = (  # [d_model = 8, d_k = 5]
{rows(w_q, "{:.3f}")}
)

W_K = (  # [8, 5]
{rows(w_k, "{:.2f}")}
)

W_V = (  # [8, 5]
{rows(w_v, "{:.2f}")}
)
'''


def main():
    seed, emb, w_q, w_k, w_v, result = fit()
    out = ROOT / "attention_core" / "worked_example_constants.py"
    out.write_text(render(seed, emb, w_q, w_k, w_v))
    print(f"seed {seed} -> {out.relative_to(ROOT)}")
    for name, (value, target, margin) in result.items():
        print(f"  {name:8s} {value:.4f}  (document {target}, margin {margin:.4f})")


if __name__ == "__main__":
    main()
