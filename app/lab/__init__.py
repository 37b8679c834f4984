"""The kernel lab's engine: what a visitor may run (limits), one worker for the whole process
(queue), the measured runs (jobs), and which kernel a run would get (plan).

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

# what the kernel lab panel and its tests use, from the three modules that define it
from app.lab.jobs import (  # noqa: F401
    SWEEP_BACKENDS,
    RunResult,
    SweepResult,
    run_job,
    slope,
    sweep_job,
)
from app.lab.limits import (  # noqa: F401
    DTYPES,
    SWEEP_START,
    Caps,
    LabRequest,
    caps_from_env,
    estimate,
    fmt_bytes,
    refusal,
    shape_error,
    sweep_lengths,
    times_ten,
)
from app.lab.queue import (  # noqa: F401
    CANCELLED,
    DONE,
    FAILED,
    RUNNING,
    TIMED_OUT,
    LabRunner,
    ordinal,
    place_text,
    set_torch_threads,
    shared_runner,
)
