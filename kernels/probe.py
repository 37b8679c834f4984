"""Timing and memory probes for the kernel lab (app/lab/) and benchmarks/kernels.py:
the one place they are written.

Every probe takes a zero-argument callable. Methods, so that a readout can say which:
- time: time.perf_counter around each call (after torch.cuda.synchronize on CUDA);
- numpy memory: tracemalloc's peak (numpy reports its buffers to tracemalloc);
- torch CPU memory: the process's peak resident set (VmHWM in /proc/self/status) after
  resetting it by writing 5 to /proc/self/clear_refs (after glibc's malloc_trim, so that
  reused heap shows up), minus the resident set before; Linux only, and it counts every
  allocation in the process at page granularity;
- CUDA memory: torch.cuda.max_memory_allocated after reset_peak_memory_stats, minus the
  memory allocated before;
- which kernel ran: the aten operators torch.profiler records during the call
  (kernels.dispatch.observed_kernels, re-exported here).
probe builds on kernels.dispatch (sdpa_callable plans its call there); dispatch never
imports probe. torch is imported only inside the functions that need it.
"""

import contextlib
import statistics
import time
import tracemalloc

from kernels import dispatch
from kernels.dispatch import KERNEL_OPS, observed_kernels

__all__ = ["KERNEL_OPS", "PEAK_METHODS", "cuda_peak", "observed_kernels", "peak_memory",
           "rss_peak", "sdpa_callable", "summary", "sync_for", "timings", "tracemalloc_peak"]


def timings(fn, repeats=3, warmup=1, sync=None, *, check=None, target_s=None,
            max_repeats=None):
    # -> [seconds per call]: `warmup` untimed calls, then at least `repeats` timed ones
    """Time fn() with time.perf_counter, calling sync() (e.g. torch.cuda.synchronize) after
    the warm-up and after each call, so queued GPU work is inside the time.

    check: called before every call (warm-up too); it may raise to stop, as the kernel lab's
    cancel and time budget do. target_s: keep calling past `repeats` until the calls add up
    to about target_s, but no more than max_repeats calls (default: repeats).
    """
    most = max(repeats, max_repeats or repeats)
    for _ in range(warmup):
        if check:
            check()
        fn()
    if sync:
        sync()
    out = []
    while True:
        if check:
            check()
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        out.append(time.perf_counter() - t0)
        enough = target_s is None or sum(out) >= target_s or len(out) >= most
        if len(out) >= repeats and enough:
            return out


def sync_for(device):  # torch.device or "cuda:0"/"cpu" -> torch.cuda.synchronize on CUDA, else None
    if _device_type(device) != "cuda":
        return None
    import torch
    return torch.cuda.synchronize


def _device_type(device):
    return getattr(device, "type", str(device).split(":")[0])


def summary(seconds):  # -> (median, min, max) in seconds
    return statistics.median(seconds), min(seconds), max(seconds)


def tracemalloc_peak(fn):  # -> bytes: the peak of Python-tracked allocations during fn()
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    if not was:
        tracemalloc.stop()
    return max(0, peak - base)


def _status_kb(field):  # -> kB of one line of /proc/self/status, or None off Linux
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_peak_supported():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return _status_kb("VmHWM") is not None


def trim_heap():  # hand freed heap pages back to the OS (glibc), so reuse shows up in RSS
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def rss_peak(fn):  # -> bytes the resident set rose to above where it started, or None
    trim_heap()
    if not rss_peak_supported():  # also resets VmHWM to the current RSS
        return None
    base = _status_kb("VmRSS")
    fn()
    return max(0, _status_kb("VmHWM") - base) * 1024


def cuda_peak(fn):  # -> bytes torch's CUDA allocator peaked at above where it started
    import torch
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return max(0, torch.cuda.max_memory_allocated() - base)


PEAK_METHODS = {
    "cuda": ("torch.cuda.max_memory_allocated during one call, above what was allocated "
             "before it"),
    "rss": ("the server process's peak resident memory (VmHWM, reset through "
            "/proc/self/clear_refs) during one call, above where it started; it counts whole "
            "pages, and anything else the process allocated meanwhile"),
    None: "not measured: peak resident memory needs Linux's /proc",
}


def peak_memory(fn, device):  # -> (bytes or None, how it was measured, in words)
    """One call's peak memory where it runs: CUDA's allocator on a GPU, else the process's
    peak resident set (Linux); None with the reason where neither can be read."""
    if _device_type(device) == "cuda":
        return cuda_peak(fn), PEAK_METHODS["cuda"]
    peak = rss_peak(fn)
    return peak, PEAK_METHODS["rss" if peak is not None else None]


def sdpa_callable(q, k, v, *, causal=False, mask=None, backend="auto"):
    # tensors [b, h, n, d], [b, h_kv, n, d] x2 on one device and dtype
    #   -> (zero-argument callable running that SDPA call, name of the kernel it runs)
    """The very call kernels.attend makes, planned once, for timing it without the planning.

    backend is one of kernels.BACKENDS. "numpy" times the numpy reference on arrays made
    once beforehand; every other backend is planned by kernels.dispatch.plan, so the call
    runs under the same sdpa_kernel settings, enable_gqa or expanded key/value heads, as
    attend() would use. Raises kernels.KernelUnavailable when the backend cannot run them.
    """
    import torch

    if backend == "numpy":
        qa, ka, va = (dispatch.to_numpy(torch, a) for a in (q, k, v))
        ma = None if mask is None else dispatch.to_numpy(torch, mask)
        return (lambda: dispatch.numpy_reference(qa, ka, va, causal=causal, mask=ma),
                dispatch.NUMPY)
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    with dispatch.RUN_LOCK:
        p = dispatch.plan(torch, q, k, v, mask, causal, None, backend, False)
    if p.index < 0:
        raise dispatch.KernelUnavailable(f"{backend} cannot run these inputs: {p.error}",
                                         p.reasons)
    if p.expand:
        k, v = dispatch.expand_kv(k, v, q.shape[1] // k.shape[1])
    kwargs = {"attn_mask": mask, "is_causal": causal}
    if p.gqa:
        kwargs["enable_gqa"] = True
    allowed = list(p.allowed) if p.allowed is not None else None

    def call():  # under kernels' lock: sdpa_kernel flips process-wide flags, as attend() knows
        with dispatch.RUN_LOCK, (sdpa_kernel(allowed) if allowed is not None
                              else contextlib.nullcontext()):
            return F.scaled_dot_product_attention(q, k, v, **kwargs)

    return call, dispatch.NAMES.get(p.index, f"SDPBackend {p.index}")
