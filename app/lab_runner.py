"""The kernel lab's engine: what a visitor may run, one worker for the whole process, the jobs.

A public server lends its CPU to whoever opens the lab, so every run passes three gates
before it is queued: a cap on prompt length, a cap on the bytes it would hold (q, k, v,
the output, and for the math path the n x n scores), and a cap on its arithmetic. Runs
then wait in one queue and execute one at a time on a single worker thread, never on the
server's event loop; each waiting run is told its place in line as the queue moves. A
job checks in between steps (between timed calls, between sweep points), which is where
cancelling and the per-run time budget take effect: one torch call cannot be stopped
halfway, so the size caps are what bound a single call.

Nothing here imports panel or bokeh; torch is imported only inside the jobs.
"""

import collections
import dataclasses
import itertools
import logging
import math
import os
import statistics
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

DTYPES = ("float32", "bfloat16", "float16")
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8}
MASKING_CODES = ("causal", "mask", "none")  # LabRequest.masking: what SDPA is passed
SWEEP_START = 256
REFERENCE_FULL_PAIRS = 2 ** 22  # compare every output row when b*h*n^2 is at most this
REFERENCE_ROWS = 256  # else: the last rows of two heads of batch 0
GB = 1e9
MB = 1e6


# ---------------------------------------------------------------- caps

@dataclasses.dataclass(frozen=True)
class Caps:
    max_length: int = 8192  # tokens per prompt
    max_bytes: float = 1.5 * GB  # what one call may hold: inputs, output, mask, math's scores
    max_flops: float = 5e11  # 4 * batch * heads * n^2 * head_dim: about 3 s a call on a core
    numpy_max_pairs: int = 2 ** 27  # batch * heads * n^2 for the (slow) numpy reference
    run_timeout_s: float = 30.0
    sweep_timeout_s: float = 60.0
    threads: int = max(1, (os.cpu_count() or 2) // 2)  # torch.set_num_threads for lab runs


ENV = {"max_length": ("AE_LAB_MAX_LENGTH", int), "max_bytes": ("AE_LAB_MAX_GB", float),
       "run_timeout_s": ("AE_LAB_TIMEOUT_S", float),
       "sweep_timeout_s": ("AE_LAB_SWEEP_TIMEOUT_S", float), "threads": ("AE_LAB_THREADS", int)}


def caps_from_env(env=None):  # -> Caps, with AE_LAB_* environment variables applied
    env = os.environ if env is None else env
    changes = {}
    for name, (var, kind) in ENV.items():
        raw = env.get(var)
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            log.warning("ignoring %s=%r: not a number", var, raw)
            continue
        if value > 0:
            changes[name] = value * GB if name == "max_bytes" else value
    return dataclasses.replace(Caps(), **changes)


@dataclasses.dataclass(frozen=True)
class LabRequest:
    batch: int = 1
    heads: int = 8  # query heads
    kv_heads: int = 8
    length: int = 1024  # prompt length n: queries = keys = n (a prefill)
    head_dim: int = 64
    dtype: str = "float32"
    masking: str = "causal"  # "causal" (is_causal=True), "mask" (explicit triangle), "none"
    backend: str = "auto"

    @property
    def causal(self):
        return self.masking == "causal"

    @property
    def bytes_per_value(self):
        return DTYPE_BYTES[self.dtype]


def shape_error(req):  # LabRequest -> why these shapes cannot run at all, or None
    for name in ("batch", "heads", "kv_heads", "length", "head_dim"):
        if getattr(req, name) < 1:
            return f"{name.replace('_', ' ')} must be at least 1"
    if req.heads % req.kv_heads:
        fits = ", ".join(str(d) for d in range(1, req.heads + 1) if req.heads % d == 0)
        return (f"KV heads ({req.kv_heads}) must divide query heads ({req.heads}): each KV head "
                f"serves an equal group of query heads. Try {fits}.")
    if req.dtype not in DTYPES:
        return f"dtype must be one of {', '.join(DTYPES)}"
    if req.masking not in MASKING_CODES:
        return f"masking must be one of {', '.join(MASKING_CODES)}"
    return None


@dataclasses.dataclass(frozen=True)
class Estimate:
    inputs: int  # q, k, v and the output, in the run dtype
    mask: int  # an explicit mask: the bool triangle and the float copy the kernel makes
    scores: int  # the math path's working set: scores + softmax in float32, + a bool mask
    score_matrix: int  # batch x heads x n^2 x bytes: the matrix an eager/math path builds

    @property
    def total(self):
        return self.inputs + self.mask + self.scores


def pairs(req):  # -> batch * heads * n^2: (query, key) pairs of a naive prefill
    return req.batch * req.heads * req.length ** 2


def flops(req):  # -> 4 * batch * heads * n^2 * head_dim (a multiply-add = 2, score + value)
    return 4 * pairs(req) * req.head_dim


def estimate(req):  # LabRequest -> Estimate of the bytes one call holds (CPU, measured here)
    b, h, kv, n, d, by = req.batch, req.heads, req.kv_heads, req.length, req.head_dim, \
        req.bytes_per_value
    inputs = (2 * b * h * n * d + 2 * b * kv * n * d) * by
    mask = n * n * (1 + by) if req.masking == "mask" else 0
    scores = 0
    if req.backend == "math":
        # PyTorch 2.13 on CPU, measured: ~9.9 bytes per (query, key) pair in every dtype; the
        # math path widens 16-bit inputs to float32 and keeps scores and their softmax.
        scores = pairs(req) * (2 * 4 + (0 if req.masking == "none" else 1))
    return Estimate(inputs, mask, scores, pairs(req) * by)


def fmt_bytes(n):  # bytes -> "1.50 GB" / "34 MB" / "12 kB" (decimal units, as the UI says)
    if n >= GB:
        return f"{n / GB:.2f} GB"
    if n >= MB:
        return f"{n / MB:,.0f} MB" if n >= 10 * MB else f"{n / MB:.1f} MB"
    return f"{n / 1e3:,.0f} kB"


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def times_ten(x):  # 5e11 -> "5 × 10¹¹"; 2.7e11 -> "2.7 × 10¹¹" (app.fmt.sci: "5.0e+11")
    exponent = math.floor(math.log10(x))
    mantissa = f"{x / 10 ** exponent:.2g}"
    return f"{mantissa} × 10{str(exponent).translate(SUPERSCRIPT)}"


def refusal(req, caps):  # LabRequest, Caps -> why the lab will not run it, or None
    problem = shape_error(req)
    if problem:
        return problem
    if req.length > caps.max_length:
        return (f"Refused: a prompt of {req.length:,} tokens is over this server's cap of "
                f"{caps.max_length:,} tokens per run.")
    est = estimate(req)
    if est.total > caps.max_bytes:
        what = "q, k, v and the output"
        if est.mask:
            what += ", the explicit mask"
        if est.scores:
            what += (f", and the math path's {req.batch * req.heads:,} × {req.length:,}² "
                     "scores and softmax (it builds the whole n × n matrix)")
        return (f"Refused: this run would hold about {fmt_bytes(est.total)} ({what}), over "
                f"this server's cap of {fmt_bytes(caps.max_bytes)} per run.")
    if flops(req) > caps.max_flops:
        return (f"Refused: this run is {times_ten(flops(req))} floating-point operations "
                f"(4 × batch × heads × n² × head_dim), over this server's cap of "
                f"{times_ten(caps.max_flops)} per call.")
    if req.backend == "numpy" and pairs(req) > caps.numpy_max_pairs:
        return (f"Refused: the numpy reference computes {pairs(req):,} scores one head at a time; "
                f"this server caps it at {caps.numpy_max_pairs:,} (batch × heads × n²).")
    return None


def sweep_lengths(caps, start=SWEEP_START):  # -> (256, 512, ..., max_length), doubling
    out, n = [], start
    while n <= caps.max_length:
        out.append(n)
        n *= 2
    return tuple(out) or (caps.max_length,)


# ---------------------------------------------------------------- the queue

class Cancelled(Exception):
    """The visitor cancelled the job."""


class TimedOut(Exception):
    """The job ran past its time budget."""


QUEUED, RUNNING, DONE, CANCELLED, TIMED_OUT, FAILED = (
    "queued", "running", "done", "cancelled", "timed out", "failed")
FINISHED = (DONE, CANCELLED, TIMED_OUT, FAILED)


class JobContext:
    """What a running job sees: its budget, whether it was cancelled, a progress reporter."""

    def __init__(self, ticket, timeout_s, clock=time.monotonic):
        self.ticket = ticket
        self.timeout_s = timeout_s
        self._clock = clock
        self.started = clock()

    def elapsed(self):
        return self._clock() - self.started

    def time_left(self):
        return self.timeout_s - self.elapsed()

    def cancelled(self):
        return self.ticket.cancel_requested

    def check(self):  # call between steps: raises Cancelled or TimedOut
        if self.cancelled():
            raise Cancelled("cancelled")
        if self.elapsed() > self.timeout_s:
            raise TimedOut(f"stopped at {self.elapsed():.1f} s, over its "
                           f"{self.timeout_s:g} s budget")

    def progress(self, done, total, payload=None):  # job reports: done of total steps
        self.ticket.progress = (done, total)
        self.ticket.notify("on_progress", done, total, payload)


class Ticket:
    """One submitted job: its place in line, its state and, when finished, its result."""

    _ids = itertools.count(1)

    def __init__(self, job, label, timeout_s, callbacks, runner=None):
        self.id = next(self._ids)
        self.job, self.label, self.timeout_s = job, label, timeout_s
        self.state = QUEUED
        self.position = None  # runs ahead of this one (0: running, or next to run)
        self.progress = None
        self.result = self.error = None
        self.submitted_at = time.monotonic()
        self.started_at = self.finished_at = None
        self._callbacks = callbacks
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._position_lock = threading.Lock()
        self._runner = runner

    @property
    def done(self):  # finished, one way or another (on_done may still be running)
        return self.state in FINISHED

    @property
    def cancel_requested(self):  # the visitor (or a shutdown) asked it to stop
        return self._cancel.is_set()

    def wait(self, timeout=None):  # -> True once finished (any way)
        return self._finished.wait(timeout)

    def cancel(self):  # -> True if it was still queued or running
        if self.done:
            return False
        self._cancel.set()
        if self._runner is not None:
            self._runner.drop(self)
        return True

    def finish(self, state, result, error):  # once: its end, told to on_done, then wait() returns
        with self._position_lock:
            if self.done:
                return
            self.state, self.result, self.error = state, result, error
            self.finished_at = time.monotonic()
            self.position = None
        self.notify("on_done", self)  # before wait() returns: waiters see its effects
        self._finished.set()

    def notify(self, name, *args):  # a visitor's callback must never take the worker down
        fn = self._callbacks.get(name)
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:  # a visitor's callback failing must not stop the worker
            log.exception("lab callback %s failed", name)

    def refresh_position(self):  # read the live place in line; tell the visitor when it changed
        with self._position_lock:
            if self.done or self._runner is None:
                return
            position = self._runner.position(self)
            if position is not None and position != self.position:
                self.position = position
                self.notify("on_position", position)


class LabRunner:
    """One worker thread; jobs run one at a time in the order they were submitted.

    on_start: called on the worker thread before each job (e.g. to set torch's threads).
    """

    def __init__(self, on_start=None):
        self._on_start = on_start
        self._cond = threading.Condition()
        self._waiting = collections.deque()
        self._running = None
        self._thread = None
        self._stopped = False

    # ---- submitting
    def submit(self, job: Callable, *, timeout_s, label="run", on_position=None,
               on_progress=None, on_done=None):
        # job(ctx: JobContext) -> result; callbacks run on the worker thread (on_position
        # also on the submitter's, for its first place in line) -> Ticket
        callbacks = {"on_position": on_position, "on_progress": on_progress, "on_done": on_done}
        ticket = Ticket(job, label, timeout_s, callbacks, runner=self)
        with self._cond:
            if self._stopped:
                raise RuntimeError("the lab runner has been shut down")
            self._waiting.append(ticket)
            self._ensure_thread_locked()
            self._cond.notify_all()
        ticket.refresh_position()
        return ticket

    def queue_length(self):  # -> jobs waiting or running
        with self._cond:
            return len(self._waiting) + (self._running is not None)

    def position(self, ticket):  # -> runs ahead of it, or None once it has left the queue
        with self._cond:
            return self._position_locked(ticket)

    def shutdown(self, wait=True):
        with self._cond:
            self._stopped = True
            dropped = list(self._waiting)
            self._waiting.clear()
            self._cond.notify_all()
            thread = self._thread
        for t in dropped:
            t.cancel()  # out of the line already: cancelled here
            t.finish(CANCELLED, None, "the lab was shut down")
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join()

    # ---- internals
    def _position_locked(self, ticket):
        if ticket is self._running:
            return 0
        try:
            index = self._waiting.index(ticket)
        except ValueError:
            return None
        return index + (self._running is not None)

    def _ensure_thread_locked(self):
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._work, name="kernel-lab", daemon=True)
            self._thread.start()


    def drop(self, ticket):  # a cancelled ticket: leave the line now if it has not started
        with self._cond:
            if ticket not in self._waiting:
                return  # running: the job sees the flag at its next check
            self._waiting.remove(ticket)
            moved = list(self._waiting)
        for t in moved:
            t.refresh_position()
        ticket.finish(CANCELLED, None, "cancelled before it started")

    def _work(self):
        while True:
            with self._cond:
                while not self._waiting and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                ticket = self._waiting.popleft()
                self._running = ticket
                ticket.state = RUNNING
                ticket.started_at = time.monotonic()
                moved = list(self._waiting)
            for t in (ticket, *moved):
                t.refresh_position()
            state, result, error = self._run(ticket)
            with self._cond:
                self._running = None
                moved = list(self._waiting)
            ticket.finish(state, result, error)
            for t in moved:
                t.refresh_position()

    def _run(self, ticket):  # -> (state, result, error text)
        ctx = JobContext(ticket, ticket.timeout_s)
        try:
            ctx.check()
            if self._on_start is not None:
                self._on_start()
            return DONE, ticket.job(ctx), None
        except Cancelled as e:
            return CANCELLED, getattr(e, "partial", None), "cancelled"
        except TimedOut as e:
            return TIMED_OUT, getattr(e, "partial", None), str(e)
        except Exception as e:  # reported to the visitor, logged here
            log.exception("lab job %s failed", ticket.label)
            return FAILED, None, f"{type(e).__name__}: {e}"



_RUNNER = None
_RUNNER_LOCK = threading.Lock()


def shared_runner(caps=None):  # -> the process's one LabRunner (created on first use)
    global _RUNNER
    with _RUNNER_LOCK:
        if _RUNNER is None:
            threads = (caps or caps_from_env()).threads
            _RUNNER = LabRunner(on_start=lambda: set_torch_threads(threads))
        return _RUNNER


def ordinal(k):  # 1 -> "1st", 2 -> "2nd", 11 -> "11th"
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def place_text(position):  # runs ahead -> what a waiting visitor reads
    if position is None:
        return ""
    if position == 0:
        return "running now"
    runs = "run" if position == 1 else "runs"
    return (f"waiting: you are {ordinal(position + 1)} in line ({position} {runs} ahead of "
            "you; this server runs one lab job at a time)")


# ---------------------------------------------------------------- the jobs (torch)

def set_torch_threads(threads):
    import torch
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


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
