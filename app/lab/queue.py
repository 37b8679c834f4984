"""One worker for the whole process: runs wait in one queue and execute one at a time on a
single thread, never on the server's event loop; a waiting run is told its place in line;
a job checks in between steps, where cancelling and the time budget take effect."""

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable

from app.lab.limits import caps_from_env

log = logging.getLogger(__name__)


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


def set_torch_threads(threads):  # the worker's torch threads (torch imported here only)
    import torch
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


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


