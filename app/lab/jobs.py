"""The kernel lab's measured runs (torch, imported only inside a job): one call timed and
checked against numpy, and a sweep of time and memory against the prompt's length."""

import dataclasses
import logging
import math
import statistics

from app.lab.limits import (
    REFERENCE_FULL_PAIRS,
    REFERENCE_ROWS,
    Estimate,
    LabRequest,
    estimate,
    pairs,
    refusal,
    sweep_lengths,
)
from app.lab.queue import Cancelled, TimedOut

log = logging.getLogger(__name__)


def lab_device(torch):  # -> the device every lab job runs on: the GPU when there is one
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def make_inputs(torch, req, device, dtype=None, seed=0):  # -> q, k, v, causal flag, mask
    gen = torch.Generator().manual_seed(seed)
    dtype = getattr(torch, req.dtype) if dtype is None else dtype

    def one(heads):
        return torch.randn(req.batch, heads, req.length, req.head_dim,
                           generator=gen).to(device=device, dtype=dtype)

    q, k, v = one(req.heads), one(req.kv_heads), one(req.kv_heads)
    mask = None
    if req.masking == "mask":
        mask = torch.ones(req.length, req.length, dtype=torch.bool, device=device).tril()
    return q, k, v, req.causal, mask


# timing and peak memory are kernels.probe's (timings, peak_memory, sync_for): measured the
# same way as benchmarks/kernels.py measures them; a job passes ctx.check to stop between calls


@dataclasses.dataclass(frozen=True)
class Comparison:
    disagreement: float  # max |output - reference|
    where: str  # which part of the output was compared


def compare(torch, req, q, k, v, mask, out):  # -> Comparison against numpy in float64
    from kernels.dispatch import numpy_reference
    group = req.heads // req.kv_heads
    if pairs(req) <= REFERENCE_FULL_PAIRS:
        batches, heads, rows = list(range(req.batch)), list(range(req.heads)), req.length
        where = (f"every output value ({req.batch} × {req.heads} × {req.length:,} × "
                 f"{req.head_dim})")
    else:
        batches, heads = [0], sorted({0, req.heads - 1})
        rows = min(req.length, REFERENCE_ROWS)
        names = " and ".join(str(h + 1) for h in heads)
        where = (f"a slice, to keep it cheap: batch 1, head{'s' if len(heads) > 1 else ''} "
                 f"{names}, the last {rows:,} of {req.length:,} query rows")
    b_idx, h_idx = torch.tensor(batches), torch.tensor(heads)
    kv_idx = torch.tensor([h // group for h in heads])

    def f64(t):
        return t.detach().to("cpu", torch.float64).numpy()

    qs = f64(q[b_idx][:, h_idx, -rows:])
    ks, vs = f64(k[b_idx][:, kv_idx]), f64(v[b_idx][:, kv_idx])
    ms = None if mask is None else f64(mask[-rows:].to(torch.float64)).astype(bool)
    # last rows with causal=True: numpy_reference puts query i at key i + (n - rows), as here
    want = numpy_reference(qs, ks, vs, causal=req.causal, mask=ms)
    got = f64(out[b_idx][:, h_idx, -rows:])
    return Comparison(float(abs(got - want).max()), where)


@dataclasses.dataclass(frozen=True)
class RunResult:
    request: LabRequest
    backend: str  # the kernel that ran
    device: str
    dtype: str
    reasons: dict  # backend -> why it did not run
    notes: tuple
    comparison: Comparison
    seconds: tuple  # every timed call
    peak_bytes: int | None
    peak_method: str
    estimate: Estimate
    threads: int

    @property
    def median(self):
        return statistics.median(self.seconds)


def run_job(req, caps):  # LabRequest, Caps -> job(ctx) -> RunResult: one measured run
    def job(ctx):
        import torch

        import kernels
        from kernels import probe

        device = lab_device(torch)
        q, k, v, causal, mask = make_inputs(torch, req, device)
        ctx.check()
        result = kernels.attend(q, k, v, causal=causal, mask=mask, backend=req.backend,
                                device=str(device))
        ctx.check()
        comparison = compare(torch, req, q, k, v, mask, result.output)
        result = dataclasses.replace(result, output=None)  # free it before timing
        if result.dtype != req.dtype and result.backend != kernels.NUMPY:  # cast by attend
            q, k, v = (t.to(getattr(torch, result.dtype)) for t in (q, k, v))
        call, name = probe.sdpa_callable(q, k, v, causal=causal, mask=mask, backend=req.backend)
        notes = list(result.notes)
        if name != result.backend:
            notes.append(f"timed call planned {name}; attend ran {result.backend}")
        seconds = probe.timings(call, repeats=3, max_repeats=9, target_s=2.0,
                                sync=probe.sync_for(device), check=ctx.check)
        ctx.check()
        peak, method = probe.peak_memory(call, device)
        return RunResult(req, result.backend, result.device, result.dtype, dict(result.reasons),
                         tuple(notes), comparison, tuple(seconds), peak, method, estimate(req),
                         torch.get_num_threads())

    return job


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    length: int
    backend: str  # "auto" or "math": what was asked
    ran: str | None  # the kernel that ran, None when refused
    seconds: tuple = ()
    peak_bytes: int | None = None
    refused: str | None = None

    @property
    def median(self):
        return statistics.median(self.seconds) if self.seconds else None


@dataclasses.dataclass(frozen=True)
class SweepResult:
    request: LabRequest
    points: tuple  # SweepPoint, in the order measured
    lengths: tuple
    stopped: str | None = None  # why it ended early
    peak_method: str = ""


def stopped_text(e, done, lengths):  # Cancelled | TimedOut, lengths finished -> "was cancelled…"
    how = "was cancelled" if isinstance(e, Cancelled) else str(e)
    return f"{how} after {done} of {len(lengths)} lengths"


SWEEP_BACKENDS = ("auto", "math")
CALLS_PER_POINT = 5  # a warm-up, three timed calls (more only when quick), one for memory


def sweep_job(req, caps, lengths=None):  # -> job(ctx) -> SweepResult: time and memory against n
    lengths = tuple(lengths or sweep_lengths(caps))

    def job(ctx):
        import torch

        from kernels import probe

        device = lab_device(torch)
        sync = probe.sync_for(device)
        points, method, last = [], "", {}
        for i, n in enumerate(lengths):
            partial = SweepResult(req, tuple(points), lengths, None, method)
            try:
                ctx.check()
            except (Cancelled, TimedOut) as e:
                e.partial = dataclasses.replace(partial, stopped=stopped_text(e, i, lengths))
                raise
            # doubling n at most quadruples a call: stop before a point that cannot finish
            guess = sum(4 * last.get(b, 0.0) * CALLS_PER_POINT for b in SWEEP_BACKENDS
                        if not refusal(dataclasses.replace(req, length=n, backend=b), caps))
            if points and guess > ctx.time_left():
                return dataclasses.replace(partial, stopped=(
                    f"stopped before n = {n:,}: it would take about {guess:.0f} s, past the "
                    f"{ctx.timeout_s:g} s budget per sweep"))
            for backend in SWEEP_BACKENDS:
                sub = dataclasses.replace(req, length=n, backend=backend)
                why = refusal(sub, caps)
                if why:
                    points.append(SweepPoint(n, backend, None, refused=why))
                    continue
                q, k, v, causal, mask = make_inputs(torch, sub, device)
                try:
                    call, name = probe.sdpa_callable(q, k, v, causal=causal, mask=mask,
                                                     backend=backend)
                    seconds = probe.timings(call, repeats=3, max_repeats=7, target_s=0.5,
                                            sync=sync, check=ctx.check)
                    peak, method = probe.peak_memory(call, device)
                except (Cancelled, TimedOut) as e:
                    e.partial = SweepResult(req, tuple(points), lengths,
                                            stopped_text(e, i, lengths), method)
                    raise
                except Exception as e:  # noqa: BLE001 - e.g. KernelUnavailable: shown per point
                    points.append(SweepPoint(n, backend, None, refused=str(e).splitlines()[0]))
                    continue
                finally:
                    del q, k, v, mask
                last[backend] = statistics.median(seconds)
                points.append(SweepPoint(n, backend, name, tuple(seconds), peak))
            ctx.progress(i + 1, len(lengths), SweepResult(req, tuple(points), lengths, None,
                                                          method))
        return SweepResult(req, tuple(points), lengths, None, method)

    return job


def slope(points):  # [(n, seconds)] -> log-log slope between the last two, or None
    pts = [(n, s) for n, s in points if s]
    if len(pts) < 2:
        return None
    (n0, s0), (n1, s1) = pts[-2], pts[-1]
    return math.log(s1 / s0) / math.log(n1 / n0)
