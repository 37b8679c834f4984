"""Record, on a CUDA machine, which SDPA kernel runs for which inputs, and the GPU benchmark rows.

    python benchmarks/gpu_check.py [--out DIR] [--quick]

Prints (and with --out writes DIR/gpu_check.md) four parts:
1. the environment: torch, CUDA, device, SDPA priority order;
2. a dispatch matrix: for dtypes x masks x GQA x head_dim, what kernels.explain() says before
   running, what kernels.attend(verify=True) reports and what torch.profiler saw, the notes,
   and PyTorch's reasons for every refused kernel, with the error against the numpy reference;
3. each named backend forced, and require_fused with an explicit mask (flash refuses masks);
4. the CUDA rows of benchmarks/kernels.py (bf16, n = 1,024 .. 32,768), then pytest -m gpu.
Without CUDA it says so and exits 1; if `pytest -m gpu` fails (or runs no test) it prints
its output, writes the file, and exits 2. Expected run time on one H100/H200: about 2-4 minutes.
"""

import argparse
import contextlib
import io
import pathlib
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import kernels
from kernels.dispatch import numpy_reference

# the GPU tests, run last; their exit status is this script's verdict
GPU_TESTS = [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "tests/test_kernels.py"]
EXIT_NO_CUDA, EXIT_TESTS_FAILED = 1, 2


def short(reasons, limit=220):  # {name: (reason, ...)} -> one cell
    text = "; ".join(f"{name}: {' / '.join(r)}" for name, r in reasons.items())
    return (text[:limit] + "...") if len(text) > limit else text


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def arrays(heads, kv_heads, n, d, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((1, heads, n, d), dtype=np.float32),
            rng.standard_normal((1, kv_heads, n, d), dtype=np.float32),
            rng.standard_normal((1, kv_heads, n, d), dtype=np.float32))


def dispatch_matrix(quick):
    import torch
    print("## dispatch matrix (kernels.explain before, kernels.attend + torch.profiler after)\n")
    print("| dtype | n | heads/kv | d | input | explain | ran | profiler | max err | notes | "
          "refused because |")
    print("|---|---:|---|---:|---|---|---|---|---:|---|---|")
    dtypes = ("float32", "bfloat16") if quick else ("float32", "bfloat16", "float16")
    for dtype in dtypes:
        for n in (1, 1024) if quick else (1, 1024, 4096):
            for heads, kv in ((8, 8), (32, 8)):
                for d in (64, 128) if quick else (64, 128, 256):
                    for case in ("is_causal", "bool mask", "none"):
                        q, k, v = arrays(heads, kv, n, d)
                        mask = np.tril(np.ones((n, n), bool)) if case == "bool mask" else None
                        causal = case == "is_causal"
                        said = kernels.explain(q.shape, k.shape, dtype, "cuda", causal,
                                               mask is not None)
                        tq, tk, tv = (torch.from_numpy(a).to(getattr(torch, dtype))
                                      for a in (q, k, v))
                        try:
                            got = kernels.attend(tq, tk, tv, causal=causal, mask=mask,
                                                 verify=True)
                        except kernels.KernelUnavailable as e:
                            print(f"| {dtype} | {n:,} | {heads}/{kv} | {d} | {case} | "
                                  f"{said.backend} | raised | | | | {cell(short(e.reasons))} |")
                            continue
                        err = "not checked"  # the numpy reference is slow past n = 1,024
                        if n <= 1024:
                            want = numpy_reference(q, k, v, causal=causal, mask=mask)
                            out = got.output.float().cpu().numpy()
                            err = f"{float(np.abs(out - want).max()):.1e}"
                        print(f"| {dtype} | {n:,} | {heads}/{kv} | {d} | {case} | "
                              f"{said.backend} | {got.backend} | {', '.join(got.observed or ())} "
                              f"| {err} | {cell('; '.join(got.notes))} | "
                              f"{cell(short(got.reasons))} |", flush=True)


def named_backends():
    print("\n## each backend forced: float32 input, n = 2,048, 32 query / 8 kv heads, d 128\n")
    print("| backend | extra | ran | dtype | profiler | notes | refused because / error |")
    print("|---|---|---|---|---|---|---|")
    q, k, v = arrays(32, 8, 2048, 128)
    tri = np.tril(np.ones((2048, 2048), bool))
    cases = [(b, {"causal": True}, "causal") for b in ("flash", "efficient", "cudnn", "math")]
    cases += [("auto", {"causal": True, "require_fused": True}, "causal, require_fused"),
              ("auto", {"mask": tri, "require_fused": True}, "bool mask, require_fused"),
              ("flash", {"mask": tri}, "bool mask")]
    for backend, kwargs, extra in cases:
        try:
            got = kernels.attend(q, k, v, backend=backend, verify=True, **kwargs)
            print(f"| {backend} | {extra} | {got.backend} | {got.dtype} | "
                  f"{', '.join(got.observed or ())} | {cell('; '.join(got.notes))} | "
                  f"{cell(short(got.reasons))} |", flush=True)
        except kernels.KernelUnavailable as e:
            print(f"| {backend} | {extra} | KernelUnavailable | | | | "
                  f"{cell(str(e).splitlines()[0])}: {cell(short(e.reasons))} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, help="also write gpu_check.md here")
    parser.add_argument("--quick", action="store_true", help="a smaller matrix, n <= 2,048")
    args = parser.parse_args(argv)
    if not kernels.cuda_available():
        print("no CUDA here: nothing to check (kernels.environment(): "
              f"{kernels.environment()})")
        return EXIT_NO_CUDA
    started = time.perf_counter()
    buffer = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, s):
            sys.__stdout__.write(s)
            buffer.write(s)
            return len(s)

        def flush(self):
            sys.__stdout__.flush()

    with contextlib.redirect_stdout(Tee()):
        print(f"# GPU check\n\nenvironment: {kernels.environment()}\n")
        dispatch_matrix(args.quick)
        named_backends()
        print("\n## benchmark rows (benchmarks/kernels.py --gpu-only)\n")
        bench = _load_benchmark()
        bench.main(["--gpu-only"] + (["--quick"] if args.quick else []))
        print("\n## pytest -m gpu tests/test_kernels.py\n")
        tests = subprocess.run(GPU_TESTS, cwd=ROOT, capture_output=True, text=True,
                               check=False)
        print("```\n" + tests.stdout[-3000:] + tests.stderr[-1000:] + "\n```")
        if tests.returncode != 0:  # 5: none ran, which on a GPU machine is a failure too
            print(f"\nFAILED: pytest -m gpu exited {tests.returncode}")
        print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gpu_check.md").write_text(buffer.getvalue())
    return 0 if tests.returncode == 0 else EXIT_TESTS_FAILED


def _load_benchmark():  # benchmarks/kernels.py by path: its name collides with the package
    import importlib.util
    spec = importlib.util.spec_from_file_location("kernels_benchmark",
                                                  ROOT / "benchmarks" / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main())
