"""The worker thread that runs queued jobs one at a time, outside any web request.

One worker per data root: jobs share one GPU server, so they run in queue order (priority, place in
line, pauses and samples first: :mod:`omni_web.jobs.queue`). A job's runner
receives a :class:`JobContext` to report progress and to notice a cancel request; the runner
raises :class:`JobCancelled` to stop, or any :class:`OmniWebError` to fail with its message.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from omni_web.errors import JobCancelled, JobError, OmniWebError, internal_error_message
from omni_web.jobs.queue import QueueControl
from omni_web.jobs.store import Job, JobState, JobStore

__all__ = ["JobContext", "JobRunner", "JobWorker", "OverlapRule", "UrgentRule"]

log = logging.getLogger(__name__)


class JobContext:
    """What a running job may do: report progress, ask whether it should stop, hand the GPU on."""

    def __init__(self, store: JobStore, job: Job, *, cancel_poll_s: float = 0.5,
                 on_hand_off: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.job = job
        self.cancel_event = threading.Event()
        self.handed_off = threading.Event()
        self._on_hand_off = on_hand_off
        self._cancel_poll_s = cancel_poll_s
        self._last_poll = 0.0

    def report(self, progress: Mapping[str, Any]) -> None:
        """Store the job's latest progress document (the UI polls it)."""
        self.store.update_progress(self.job.id, progress)

    def hand_off(self) -> None:
        """Say the job's server work is nearly over (its last requests are in flight, or it is
        mastering): the worker may start the next job beside it, so the server never idles
        between books. Calling it again does nothing."""
        if not self.handed_off.is_set():
            self.handed_off.set()
            self._on_hand_off()

    def cancelled(self) -> bool:
        """True once a cancel was requested; reads the store at most every ``cancel_poll_s``."""
        if self.cancel_event.is_set():
            return True
        now = time.monotonic()
        if now - self._last_poll >= self._cancel_poll_s:
            self._last_poll = now
            if self.store.cancel_requested(self.job.id):
                self.cancel_event.set()
        return self.cancel_event.is_set()

    def raise_if_cancelled(self) -> None:
        """Raise JobCancelled when a cancel was requested."""
        if self.cancelled():
            raise JobCancelled("Cancelled. Finished chunks are kept; resume the job to go on.")


JobRunner = Callable[[Job, JobContext], Mapping[str, Any]]
# May ``following`` start beside ``running`` once ``running`` handed off? (e.g. the same model)
OverlapRule = Callable[[Job, Job], bool]
# Is ``job`` a few requests' work (a one-chunk fix) that may start beside a running job that has
# not handed off yet, provided ``overlap`` allows it (the same server and model)?
UrgentRule = Callable[[Job], bool]


class JobWorker:
    """Runs queued jobs in queue order, one at a time on the server, overlapping at book boundaries.

    A job runs in its own thread. Once every running job handed off (:meth:`JobContext.hand_off`:
    its last chunks are in flight, or it is mastering) and the next job in line passes ``overlap``
    with each of them, that job starts while they finish. Only one job at a time has work left to
    send; at most ``max_running`` run at once (the others finishing: mastering, joining, QA
    report). Without ``overlap`` jobs never overlap.

    The one exception is a job ``urgent`` names (a few chunks to redo): when it is next in line
    and ``overlap`` allows it beside every running job, it starts at once, its few requests
    sharing the server's batch with the long job's. Next in line still means what the queue says
    (a paused queue or job holds it); it is never taken past the job in front of it.
    """

    def __init__(
        self,
        store: JobStore,
        runners: Mapping[str, JobRunner],
        *,
        idle_poll_s: float = 1.0,
        overlap: OverlapRule | None = None,
        on_finished: Callable[[Job], None] | None = None,
        max_running: int = 3,
        urgent: UrgentRule | None = None,
    ) -> None:
        self.store = store
        self.runners = dict(runners)
        self.queue = QueueControl(store)
        self._idle_poll_s = idle_poll_s
        self._overlap = overlap
        self._urgent = urgent
        self._on_finished = on_finished
        self._max_running = max(1, max_running)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._running: dict[str, tuple[JobContext, threading.Thread]] = {}
        self._lock = threading.Lock()
        store.on_change(self.wake)  # the queue wakes its worker: a queued or steered job is looked at now

    def start(self) -> list[str]:
        """Requeue jobs a previous process left running, then start the thread.

        Returns the ids of the requeued (interrupted) jobs.
        """
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return []
            interrupted = self.store.requeue_interrupted()
            if interrupted:
                log.info("Resuming interrupted jobs: %s", ", ".join(interrupted))
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="omni-web-jobs", daemon=True)
            self._thread.start()
            return interrupted

    def wake(self) -> None:
        """Look at the queue now instead of at the next poll (the store calls it after each change)."""
        self._wake.set()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Ask the running jobs to stop at their next check and wait for the threads.

        The jobs are left RUNNING in the store on purpose, so the next start resumes them.
        """
        self._stop.set()
        self._wake.set()
        with self._lock:
            running = list(self._running.values())
        for context, _ in running:
            context.cancel_event.set()
        deadline = time.monotonic() + timeout_s
        if self._thread is not None:
            self._thread.join(timeout_s)
        for _, thread in running:
            thread.join(max(deadline - time.monotonic(), 0.1))

    @property
    def running_job_id(self) -> str | None:
        """The id of the job that holds the server (the newest running one), if any."""
        with self._lock:
            ids = list(self._running)
        return ids[-1] if ids else None

    @property
    def running_job_ids(self) -> list[str]:
        """Every running job, oldest first (two only across a book boundary)."""
        with self._lock:
            return list(self._running)

    def _run(self) -> None:
        while not self._stop.is_set():
            job = self._claim()
            if job is None:
                self._wake.wait(self._idle_poll_s)
                self._wake.clear()
                continue
            context = JobContext(self.store, job, on_hand_off=self.wake)
            thread = threading.Thread(
                target=self._run_one, args=(job, context), name=f"omni-web-job-{job.id}", daemon=True
            )
            with self._lock:
                self._running[job.id] = (context, thread)
            thread.start()

    def _claim(self) -> Job | None:
        """The next job, when none runs, or every running one handed off and the next may overlap
        them, or the next is urgent and may overlap them (see the class docstring)."""
        with self._lock:
            running = [context for context, _ in self._running.values()]
        if not running:
            accept = None
        elif len(running) < self._max_running and self._overlap is not None:
            jobs, rule, urgent = [context.job for context in running], self._overlap, self._urgent
            drained = all(context.handed_off.is_set() for context in running)
            if not drained and urgent is None:
                return None

            def accept(following: Job) -> bool:
                return (drained or urgent(following)) and all(rule(job, following) for job in jobs)
        else:
            return None
        return self.store.claim_next(samples_first=self.queue.samples_first, accept=accept)

    def _run_one(self, job: Job, context: JobContext) -> None:
        try:
            runner = self.runners.get(job.kind)
            if runner is None:
                self._finish(job.id, JobState.FAILED, error=f"No runner for job kind '{job.kind}'.")
                return
            result = runner(job, context)
            if job.is_sample_run:
                self._keep_sample(job.id, result)
            else:
                self._finish(job.id, JobState.DONE, result=result)
        except JobCancelled as exc:
            if self._stop.is_set() and not self.store.cancel_requested(job.id):
                return  # app shutting down: stay RUNNING so the next start resumes the job
            self._finish(job.id, JobState.CANCELLED, error=str(exc))
        except OmniWebError as exc:
            self._finish(job.id, JobState.FAILED, error=str(exc))
        except Exception as exc:  # a bug: keep the worker alive, record it, log the traceback
            log.exception("Job %s failed with an internal error", job.id)
            self._finish(job.id, JobState.FAILED, error=internal_error_message(exc))
        finally:
            with self._lock:
                self._running.pop(job.id, None)
            self._wake.set()

    def _keep_sample(self, job_id: str, result: Mapping[str, Any]) -> None:
        try:
            self.store.finish_sample(job_id, result)
        except JobError as exc:
            log.error("Job %s made its sample, but the store refused it: %s", job_id, exc)

    def _finish(self, job_id: str, state: JobState, **fields: Any) -> None:
        """Record the end of a run; a refused transition is logged, the worker goes on."""
        try:
            job = self.store.finish(job_id, state, **fields)
        except JobError as exc:
            log.error("Job %s ended %s, but the store refused it: %s", job_id, state.value, exc)
            return
        if self._on_finished is not None:
            try:
                self._on_finished(job)
            except Exception:  # a notification's trouble is never the job's
                log.exception("The finish hook failed for job %s", job_id)
