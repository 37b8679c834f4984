"""Time attention_core's two hot paths: the cost model over 10^5 prompt lengths, and the
head's math for one UI state (the head, its truncate check, and the BLAS comparison).

    python benchmarks/core.py        # prints median, p10-p90 spread, and the target
"""

import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from attention_core import costs, worked_example


def measure(fn, repeats, inner=1):  # -> per-call seconds of each repeat
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        out.append((time.perf_counter() - t0) / inner)
    return out


def cost_curve():
    model = costs.preset("qwen3-8b")
    n = np.geomspace(1, 131072, 100_000)
    costs.prefill_attention_share(model, n, "triangular")
    costs.prefill_attention_share(model, n, "naive")
    costs.decode_attention_share(model, n)


def head_state():  # what app/panels/heatmap.py head_numbers computes for one UI state
    worked_example.run(6, causal=True, scaled=True, phase="prefill")
    worked_example.truncate(6, 2, causal=True, scaled=True)
    worked_example.truncate(6, 2, causal=True, scaled=True, exact=False)  # the BLAS comparison


def head_only():
    worked_example.run(6, causal=True, scaled=True, phase="prefill")


def report(name, samples, target):
    ms = np.array(samples) * 1e3
    p10, p90 = np.percentile(ms, [10, 90])
    med = statistics.median(ms)
    mark = "meets" if med <= target else "MISSES"
    print(f"| {name} | {med:.3f} ms | {p10:.3f}-{p90:.3f} ms | ≤ {target} ms ({mark}) |")


def main():
    print("| what | median | p10-p90 | target |")
    print("|---|---|---|---|")
    report("cost model, 10^5 prompt lengths (3 share curves)", measure(cost_curve, 30), 10)
    report("head math for one UI state (head + truncate check + BLAS comparison)",
           measure(head_state, 50, 20), 0.2)
    report("head alone (one pass)", measure(head_only, 50, 20), 0.2)


if __name__ == "__main__":
    main()
