"""Prefill attention against prompt length, per kernel, on this machine: time and peak memory.

    python benchmarks/kernels.py              # CPU rows, then CUDA rows (or "not measured")
    python benchmarks/kernels.py --quick      # n = 1,024 and 2,048 only
    python benchmarks/kernels.py --gpu-only   # just the CUDA rows (benchmarks/gpu_check.py)

Shape: batch 1, 8 heads, head_dim 64, causal. CPU rows run in float32; CUDA rows in bfloat16.
Time: median of the timed calls after one warm-up call (the warm-up doubles as the memory
run), with min-max spread; 7 timed calls up to n = 2,048, 3 above. Memory: see METHODS.
A row whose estimated peak exceeds --max-gb (default 6) prints "skipped (needs X GB)".
"""

import argparse
import contextlib
import os
import pathlib
import platform
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import kernels
from attention_core.attend import numpy_attention, tiled_numpy_attention
from kernels import probe
from kernels.dispatch import LONG_NAMES

HEADS, HEAD_DIM = 8, 64
CPU_SIZES = (1024, 2048, 4096, 8192)
GPU_SIZES = (1024, 2048, 4096, 8192, 16384, 32768)
TILE = 128  # block_q = block_k of the numpy online-softmax path
METHODS = {
    "tracemalloc": "tracemalloc peak during the call (numpy reports its buffers to it)",
    "RSS": ("peak resident set above the start: VmHWM after malloc_trim and writing 5 to "
            "/proc/self/clear_refs"),
    "CUDA": "torch.cuda.max_memory_allocated above the start, after reset_peak_memory_stats",
}


def fmt_time(s):
    return f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def fmt_bytes(b):
    if b is None:
        return "n/a"
    return f"{b / 1e9:.2f} GB" if b >= 1e8 else f"{b / 1e6:.1f} MB"


def repeats_for(n):
    return 7 if n <= 2048 else 3


class Table:
    def __init__(self):
        self.rows = []
        self.ratios = {}  # n -> (median, min, max) of explicit-mask / is_causal, paired calls
        print("| n | path | kernel | median | min-max | runs | peak memory | memory method |")
        print("|---:|---|---|---:|---:|---:|---:|---|")

    def row(self, n, path, kernel, seconds=None, memory=None, method="", text=None):
        if text is not None:
            cells = [f"{n:,}" if isinstance(n, int) else n, path, kernel, text, "", "", "", ""]
        else:
            med, lo, hi = probe.summary(seconds)
            cells = [f"{n:,}", path, kernel, fmt_time(med), f"{fmt_time(lo)}-{fmt_time(hi)}",
                     str(len(seconds)), fmt_bytes(memory), method]
            self.rows.append((n, path, med))
        print("| " + " | ".join(cells) + " |", flush=True)

    def median(self, n, path):
        return next((m for rn, rp, m in self.rows if rn == n and rp == path), None)


def measured(fn, n, memory_probe, sync=None):  # -> (seconds list, peak bytes)
    peak = memory_probe(fn)  # the warm-up call
    return probe.timings(fn, repeats_for(n), warmup=0, sync=sync), peak


def cpu_rows(table, sizes, max_gb):
    torch = kernels.torch_or_none()
    if torch is None:
        print("torch is not importable: no PyTorch rows")
    rng = np.random.default_rng(0)
    if torch is not None:  # first-call costs (thread pool, kernel selection) out of the way
        x = torch.randn(1, HEADS, 128, HEAD_DIM)
        torch.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)
    for n in sizes:
        q, k, v = (rng.standard_normal((1, HEADS, n, HEAD_DIM), dtype=np.float32)
                   for _ in range(3))
        if torch is not None:
            torch_cpu_rows(table, torch, n, q, k, v, max_gb)
        numpy_rows(table, n, q, k, v, max_gb)


def torch_cpu_rows(table, torch, n, q, k, v, max_gb):  # [1, h, n, d] float32 arrays
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    tri = torch.ones(n, n, dtype=torch.bool).tril()
    shape = (1, HEADS, n, HEAD_DIM)
    plain = kernels.explain(shape, shape, "float32", "cpu", True, False).backend
    masked = kernels.explain(shape, shape, "float32", "cpu", False, True).backend

    def default():
        return F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)

    def explicit():
        return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tri)

    def math_only():
        with sdpa_kernel([SDPBackend.MATH]):
            return F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)

    table.row(n, "PyTorch SDPA, is_causal=True", plain, *measured(default, n, probe.rss_peak),
              "RSS")
    need = 2.5 * HEADS * n * n * 4  # float32 scores and softmax for all heads, plus the mask
    if need > max_gb * 1e9:
        table.row(n, "PyTorch SDPA, MATH only", "math",
                  text=f"skipped (needs ~{need / 1e9:.1f} GB)")
    else:
        table.row(n, "PyTorch SDPA, MATH only", "math", *measured(math_only, n, probe.rss_peak),
                  "RSS")
    table.row(n, "PyTorch SDPA, explicit bool mask", masked,
              *measured(explicit, n, probe.rss_peak), "RSS")
    pairs = []  # the two calls back to back, so both see the same load on a shared machine
    for _ in range(repeats_for(n)):
        a, b = probe.timings(default, 1, warmup=0)[0], probe.timings(explicit, 1, warmup=0)[0]
        pairs.append(b / a)
    table.ratios[n] = probe.summary(pairs)


def numpy_rows(table, n, q, k, v, max_gb):  # [1, h, n, d] float32 arrays
    need = 4 * n * n * 4  # per head: scores, masked scores, exponentials, weights
    if need > max_gb * 1e9:
        table.row(n, "numpy naive (per head)", "numpy reference",
                  text=f"skipped (needs ~{need / 1e9:.1f} GB)")
    else:
        table.row(n, "numpy naive (per head)", "numpy reference",
                  *measured(lambda: numpy_attention(q, k, v, causal=True), n,
                            probe.tracemalloc_peak), "tracemalloc")
    table.row(n, f"numpy tiled online softmax ({TILE} x {TILE})", "numpy tiled",
              *measured(lambda: tiled_numpy_attention(q, k, v, causal=True, block=TILE), n,
                        probe.tracemalloc_peak), "tracemalloc")


GPU_BACKENDS = (("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"),
                ("cudnn", "CUDNN_ATTENTION"), ("math", "MATH"))


def gpu_rows(table, sizes):
    torch = kernels.torch_or_none()
    if torch is None or not torch.cuda.is_available():
        for name, _ in GPU_BACKENDS:
            table.row(f"{GPU_SIZES[0]:,}-{GPU_SIZES[-1]:,}", f"CUDA bf16, {name} only", name,
                      text="not measured (no CUDA here)")
        return
    free, total = torch.cuda.mem_get_info()
    for n in sizes:
        gpu_rows_at(table, torch, n, free)
    print(f"\nGPU: {torch.cuda.get_device_name()}, {total / 2**30:.0f} GiB")


def gpu_rows_at(table, torch, n, free):  # one prompt length on CUDA, bfloat16
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = torch.device("cuda")
    q, k, v = (torch.randn(1, HEADS, n, HEAD_DIM, device=dev, dtype=torch.bfloat16)
               for _ in range(3))
    shape = (1, HEADS, n, HEAD_DIM)

    def run(backends, mask):
        def call():  # a fresh sdpa_kernel context per call: one can be entered only once
            with sdpa_kernel(backends) if backends else contextlib.nullcontext():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                      is_causal=mask is None)
        return call

    rows = [("CUDA bf16, default is_causal", None, False, "auto")]
    rows += [(f"CUDA bf16, {name} only", [getattr(SDPBackend, e)], False, name)
             for name, e in GPU_BACKENDS]
    rows.append(("CUDA bf16, explicit bool mask", None, True, "auto"))
    for path, backends, use_mask, name in rows:
        said = kernels.explain(shape, shape, "bfloat16", "cuda", not use_mask, use_mask,
                               backend=name)
        if said.backend is None:
            why = said.reasons.get(LONG_NAMES[name], ()) or (said.error,)
            table.row(n, path, name, text=f"unavailable: {why[0]}"[:160])
            continue
        need = 3 * HEADS * n * n * 4 if said.backend == "math" else 0
        if need > 0.8 * free:
            table.row(n, path, said.backend, text=f"skipped (needs ~{need / 1e9:.0f} GB)")
            continue
        mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril() if use_mask else None
        try:
            table.row(n, path, said.backend, *measured(run(backends, mask), n, probe.cuda_peak,
                                                       sync=torch.cuda.synchronize), "CUDA")
        except torch.cuda.OutOfMemoryError:
            table.row(n, path, said.backend, text="out of memory")
        del mask
        torch.cuda.empty_cache()


def profiler_check():  # which aten kernel each PyTorch CPU row really ran, seen by the profiler
    torch = kernels.torch_or_none()
    if torch is None:
        return
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(1, HEADS, 256, HEAD_DIM)
    tri = torch.ones(256, 256, dtype=torch.bool).tril()

    def math_only():
        with sdpa_kernel([SDPBackend.MATH]):
            return F.scaled_dot_product_attention(q, q, q, is_causal=True)

    seen = {name: probe.observed_kernels(fn)[1] for name, fn in (
        ("is_causal", lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
        ("MATH only", math_only),
        ("explicit mask", lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=tri)))}
    print("\ntorch.profiler saw, on CPU: " + "; ".join(
        f"{name} -> {', '.join(k) or 'nothing'}" for name, k in seen.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1,024 and 2,048 only")
    parser.add_argument("--gpu-only", action="store_true", help="only the CUDA rows")
    parser.add_argument("--max-gb", type=float, default=6.0, help="skip rows estimated above")
    args = parser.parse_args(argv)
    env = kernels.environment()
    print(f"# attention kernels: batch 1, {HEADS} heads, head_dim {HEAD_DIM}, causal\n")
    print(f"torch {env['torch']}, {env.get('threads')} threads; {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.machine()}); load average at start "
          f"{os.getloadavg()[0]:.1f}; CUDA: {env['cuda']}\n")
    started = time.perf_counter()
    table = Table()
    if not args.gpu_only:
        sizes = CPU_SIZES[:2] if args.quick else CPU_SIZES
        cpu_rows(table, sizes, args.max_gb)
    gpu_rows(table, GPU_SIZES[:2] if args.quick else GPU_SIZES)
    if not args.gpu_only:
        print("\n| n | explicit mask / is_causal: ratio of the medians above | paired calls: "
              "median (min-max) |\n|---:|---:|---:|")
        for n in sizes:
            a = table.median(n, "PyTorch SDPA, is_causal=True")
            b = table.median(n, "PyTorch SDPA, explicit bool mask")
            if a and b and n in table.ratios:
                med, lo, hi = table.ratios[n]
                print(f"| {n:,} | {b / a:.2f}x | {med:.2f}x ({lo:.2f}-{hi:.2f}) |")
        profiler_check()
    print("\nMemory methods: " + "; ".join(f"{k}: {v}" for k, v in METHODS.items()) + ". RSS "
          "counts the whole process at page granularity; the inputs (and the explicit mask, "
          f"n x n bool) exist before the call and are not counted. Tiled block {TILE}.")
    print(f"Total wall time {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
