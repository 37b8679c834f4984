"""The kernel lab's engine without a browser: caps, the one-at-a-time queue, the jobs."""

import dataclasses
import itertools
import threading
import time

import pytest

from app import lab

CAPS = lab.Caps()


def req(**kw):
    return dataclasses.replace(lab.LabRequest(), **kw)


# ---------------------------------------------------------------- caps

def test_length_over_the_cap_is_refused_naming_the_cap():
    why = lab.refusal(req(length=CAPS.max_length + 1), CAPS)
    assert why and "8,192 tokens" in why and "cap" in why
    assert lab.refusal(req(length=CAPS.max_length), CAPS) is None


def test_bytes_over_the_cap_are_refused_naming_the_cap():
    big = req(batch=8, heads=64, kv_heads=64, length=8192, head_dim=256)
    why = lab.refusal(big, CAPS)
    assert why and "1.50 GB" in why and "cap" in why
    assert lab.estimate(big).total > CAPS.max_bytes


def test_math_is_refused_earlier_because_it_builds_the_n_by_n_scores():
    assert lab.refusal(req(length=8192, backend="auto"), CAPS) is None
    why = lab.refusal(req(length=8192, backend="math"), CAPS)
    assert why and "n × n" in why and "1.50 GB" in why
    assert lab.refusal(req(length=4096, backend="math"), CAPS) is None
    assert lab.estimate(req(length=8192, backend="math")).scores == 8 * 8192 ** 2 * 9


def test_arithmetic_and_numpy_caps():
    why = lab.refusal(req(batch=8, heads=64, kv_heads=64, length=4096, head_dim=16), CAPS)
    assert why and "floating-point operations" in why and "5 × 10¹¹" in why
    assert lab.times_ten(2.7e11) == "2.7 × 10¹¹" and lab.times_ten(1e9) == "1 × 10⁹"
    why = lab.refusal(req(length=8192, backend="numpy"), CAPS)
    assert why and "numpy reference" in why and f"{CAPS.numpy_max_pairs:,}" in why


def test_kv_heads_must_divide_query_heads():
    why = lab.shape_error(req(heads=8, kv_heads=3))
    assert "must divide" in why and "1, 2, 4, 8" in why
    assert lab.refusal(req(heads=8, kv_heads=3), CAPS) == why
    assert lab.shape_error(req(heads=8, kv_heads=2)) is None


def test_caps_from_the_environment():
    caps = lab.caps_from_env({"AE_LAB_MAX_LENGTH": "2048", "AE_LAB_MAX_GB": "0.5",
                              "AE_LAB_TIMEOUT_S": "nope"})
    assert caps.max_length == 2048 and caps.max_bytes == 0.5e9
    assert caps.run_timeout_s == lab.Caps().run_timeout_s
    assert lab.sweep_lengths(caps) == (256, 512, 1024, 2048)
    assert lab.sweep_lengths(CAPS) == (256, 512, 1024, 2048, 4096, 8192)


def test_estimate_counts_inputs_mask_and_scores():
    e = lab.estimate(req(batch=2, heads=8, kv_heads=2, length=100, head_dim=16,
                         dtype="bfloat16", masking="mask", backend="math"))
    assert e.inputs == (2 * 2 * 8 * 100 * 16 + 2 * 2 * 2 * 100 * 16) * 2
    assert e.mask == 100 * 100 * 3
    assert e.scores == 2 * 8 * 100 ** 2 * 9
    assert e.score_matrix == 2 * 8 * 100 ** 2 * 2  # batch × heads × n² × bytes


def test_place_in_line_text():
    assert lab.place_text(0) == "running now"
    assert "2nd in line" in lab.place_text(1) and "1 run ahead" in lab.place_text(1)
    assert "3rd in line" in lab.place_text(2)
    assert [lab.ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st"]


# ---------------------------------------------------------------- the queue

def slow_job(seconds, spans, name, started=None):
    # a job that works for `seconds`; `started` (an Event) is set once it runs
    def job(ctx):
        if started is not None:
            started.set()
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:  # bounded: its deadline, and ctx.check() each turn
            ctx.check()
            time.sleep(0.01)  # the job's "work" between checks, not a wait on a condition
        spans.append((name, start, time.monotonic()))
        return name
    return job


@pytest.fixture
def runner():
    r = lab.LabRunner()
    yield r
    r.shutdown()


def test_three_jobs_wait_their_turn_one_at_a_time(runner):
    spans, seen = [], {i: [] for i in range(3)}
    gate = threading.Event()

    def first(ctx):  # holds the worker until all three are queued
        gate.wait(5)
        return slow_job(0.15, spans, 0)(ctx)

    jobs = [first, slow_job(0.15, spans, 1), slow_job(0.15, spans, 2)]
    tickets = [runner.submit(job, timeout_s=10, on_position=seen[i].append)
               for i, job in enumerate(jobs)]
    assert [seen[i][0] for i in range(3)] == [0, 1, 2]
    assert [runner.position(t) for t in tickets] == [0, 1, 2]
    gate.set()
    for t in tickets:
        assert t.wait(10) and t.state == lab.DONE
    assert [t.result for t in tickets] == [0, 1, 2]
    assert seen[1] == [1, 0] and seen[2] == [2, 1, 0]  # told as the line moved
    spans.sort(key=lambda s: s[1])
    assert [s[0] for s in spans] == [0, 1, 2]
    for (_, _, end), (_, start, _) in itertools.pairwise(spans):
        assert start >= end  # no overlap
    assert runner.queue_length() == 0


# serial: it asserts a time, so it runs in `make test`'s pass alone, not beside a worker
@pytest.mark.serial
def test_cancel_a_waiting_job_and_a_running_one(runner):
    spans, done = [], []
    started = threading.Event()
    running = runner.submit(slow_job(5, spans, "long", started), timeout_s=10,
                            on_done=done.append)
    waiting = runner.submit(slow_job(0.1, spans, "never"), timeout_s=10)
    third_seen = []
    third = runner.submit(slow_job(0.05, spans, "third"), timeout_s=10,
                          on_position=third_seen.append)
    # the worker sets RUNNING and tells the line its places before it calls the job
    assert started.wait(5), "the first job never started"
    assert running.state == lab.RUNNING and not waiting.done
    assert runner.position(waiting) == 1 and third_seen[-1] == 2
    assert waiting.cancel()
    assert waiting.state == lab.CANCELLED and waiting.done
    assert third_seen[-1] == 1  # moved up when the one ahead left the line
    t0 = time.monotonic()
    assert running.cancel()
    assert running.wait(2) and running.state == lab.CANCELLED
    assert time.monotonic() - t0 < 1
    assert done == [running]
    assert third.wait(5) and third.state == lab.DONE
    assert [s[0] for s in spans] == ["third"]
    assert not third.cancel()  # already finished


def test_a_job_over_its_budget_is_reported_timed_out(runner):
    ticket = runner.submit(slow_job(5, [], "slow"), timeout_s=0.2)
    assert ticket.wait(3)
    assert ticket.state == lab.TIMED_OUT
    assert "over its 0.2 s budget" in ticket.error


def test_a_failing_job_is_reported_and_the_worker_carries_on(runner):
    def boom(ctx):
        raise RuntimeError("no kernel")
    bad = runner.submit(boom, timeout_s=5)
    good = runner.submit(lambda ctx: 42, timeout_s=5)
    assert bad.wait(5) and bad.state == lab.FAILED and "no kernel" in bad.error
    assert good.wait(5) and good.result == 42


def test_progress_is_reported_in_order(runner):
    got = []

    def job(ctx):
        for k in range(1, 6):
            ctx.check()
            ctx.progress(k, 5, f"point {k}")
        return "ok"

    t = runner.submit(job, timeout_s=5, on_progress=lambda k, n, p: got.append((k, n, p)))
    assert t.wait(5) and t.result == "ok"
    assert got == [(k, 5, f"point {k}") for k in range(1, 6)]


# ---------------------------------------------------------------- the torch jobs

import torch  # a test dependency: missing torch fails here, it does not skip

# The runner uses the GPU when there is one. On a CPU PyTorch's one fused kernel is flash; on
# CUDA it picks flash, efficient or cuDNN by shape and dtype, and may cast float32 to bf16
# (benchmarks/gpu_check.py lists which, for which inputs).
ON_CUDA = torch.cuda.is_available()
FUSED = ("flash attention", "efficient attention", "cudnn attention")
TOLERANCE = {"float32": 1e-5, "float16": 3e-3, "bfloat16": 3e-2}  # against float64 numpy


def fused_as_expected(name):
    return name in FUSED if ON_CUDA else name == "flash attention"


def run(job, timeout_s=30):
    r = lab.LabRunner(on_start=lambda: lab.set_torch_threads(1))
    try:
        t = r.submit(job, timeout_s=timeout_s)
        assert t.wait(60)
        return t
    finally:
        r.shutdown()


def test_a_small_run_is_a_fused_kernel_and_agrees_with_the_reference():
    t = run(lab.run_job(req(length=64), CAPS))
    assert t.state == lab.DONE, t.error
    res = t.result
    assert fused_as_expected(res.backend), res.backend
    assert res.dtype == "float32" or (ON_CUDA and res.dtype in ("bfloat16", "float16"))
    assert res.comparison.disagreement < TOLERANCE[res.dtype]
    assert "every output value" in res.comparison.where
    assert len(res.seconds) >= 3 and res.threads == 1


def test_math_backend_reports_math_and_a_large_shape_compares_on_a_slice():
    t = run(lab.run_job(req(length=1100, heads=4, kv_heads=2, head_dim=16, backend="math",
                            masking="mask"), CAPS))
    assert t.state == lab.DONE, t.error
    assert t.result.backend == "math"
    assert t.result.comparison.disagreement < 1e-5
    assert "slice" in t.result.comparison.where and "last 256" in t.result.comparison.where


def test_a_sweep_reports_progress_k_of_n_and_both_backends():
    caps = dataclasses.replace(CAPS, max_length=512)
    got = []
    r = lab.LabRunner(on_start=lambda: lab.set_torch_threads(1))
    try:
        t = r.submit(lab.sweep_job(req(heads=2, kv_heads=2, head_dim=16), caps, (64, 128, 256)),
                     timeout_s=30, on_progress=lambda k, n, p: got.append((k, n, len(p.points))))
        assert t.wait(60) and t.state == lab.DONE, t.error
    finally:
        r.shutdown()
    assert [(k, n) for k, n, _ in got] == [(1, 3), (2, 3), (3, 3)]
    assert [m for _, _, m in got] == [2, 4, 6]
    ran = {(p.length, p.backend): p.ran for p in t.result.points}
    assert fused_as_expected(ran[(256, "auto")]) and ran[(256, "math")] == "math"
    assert all(3 <= len(p.seconds) <= 7 for p in t.result.points)


def test_a_sweep_refuses_math_points_over_the_byte_cap():
    caps = dataclasses.replace(CAPS, max_bytes=3e6)  # math at n=256 needs 8 × 256² × 9 B
    t = run(lab.sweep_job(req(head_dim=16), caps, (128, 256)))
    assert t.state == lab.DONE, t.error
    by = {(p.length, p.backend): p for p in t.result.points}
    assert by[(128, "math")].ran == "math"
    assert by[(256, "math")].refused and "3.0 MB" in by[(256, "math")].refused
    assert fused_as_expected(by[(256, "auto")].ran)


def test_a_cancelled_sweep_keeps_the_points_it_measured():
    r = lab.LabRunner(on_start=lambda: lab.set_torch_threads(1))
    try:
        holder = {}

        def stop_after_first(k, n, partial):
            holder["t"].cancel()

        holder["t"] = t = r.submit(lab.sweep_job(req(heads=2, kv_heads=2, head_dim=16), CAPS,
                                                 (64, 128, 256)),
                                   timeout_s=30, on_progress=stop_after_first)
        assert t.wait(60)
    finally:
        r.shutdown()
    assert t.state == lab.CANCELLED
    assert [p.length for p in t.result.points] == [64, 64]
    assert t.result.stopped == "was cancelled after 1 of 3 lengths"


def test_slope_of_the_last_doubling():
    assert lab.slope([(256, 1.0), (512, 4.0)]) == pytest.approx(2.0)
    assert lab.slope([(256, 1.0), (512, 2.0), (1024, 4.0)]) == pytest.approx(1.0)
    assert lab.slope([(256, 1.0)]) is None


def test_a_run_reports_how_peak_memory_was_measured_by_kernels_probe():
    from kernels import probe
    t = run(lab.run_job(req(length=64), CAPS))
    assert t.state == lab.DONE, t.error
    assert t.result.peak_method in probe.PEAK_METHODS.values()
    assert (t.result.peak_bytes is None) == (t.result.peak_method == probe.PEAK_METHODS[None])


def test_the_lab_measures_only_through_kernels_probe():
    # timing and peak memory are written once, in kernels/probe.py; the lab keeps its runner
    import ast
    import inspect
    tree = ast.Module(body=[node for module in (lab.limits, lab.queue, lab.jobs)
                            for node in ast.parse(inspect.getsource(module)).body],
                      type_ignores=[])
    names = {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(tree)
             if isinstance(n, (ast.Attribute, ast.Name))}
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, str)}
    own = {"perf_counter", "tracemalloc", "max_memory_allocated", "reset_peak_memory_stats",
           "synchronize", "rss_peak", "cuda_peak"} & names
    assert not own, f"app/lab/ measures on its own again: {sorted(own)}"
    assert not [s for s in strings if "VmHWM" in s or "clear_refs" in s]
    assert {"timings", "peak_memory", "sync_for"} <= names
