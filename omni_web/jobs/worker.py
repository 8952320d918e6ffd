"""The worker thread that runs queued jobs one at a time, outside any web request.

One worker per data root: jobs share one GPU server, so they run in queue order. A job's runner
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
from omni_web.jobs.store import Job, JobState, JobStore

__all__ = ["JobContext", "JobRunner", "JobWorker"]

log = logging.getLogger(__name__)


class JobContext:
    """What a running job may do: report progress and ask whether it should stop."""

    def __init__(self, store: JobStore, job: Job, *, cancel_poll_s: float = 0.5) -> None:
        self.store = store
        self.job = job
        self.cancel_event = threading.Event()
        self._cancel_poll_s = cancel_poll_s
        self._last_poll = 0.0

    def report(self, progress: Mapping[str, Any]) -> None:
        """Store the job's latest progress document (the UI polls it)."""
        self.store.update_progress(self.job.id, progress)

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


class JobWorker:
    """Runs queued jobs in a background thread, in queue order."""

    def __init__(
        self,
        store: JobStore,
        runners: Mapping[str, JobRunner],
        *,
        idle_poll_s: float = 1.0,
    ) -> None:
        self.store = store
        self.runners = dict(runners)
        self._idle_poll_s = idle_poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._current: JobContext | None = None
        self._lock = threading.Lock()

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
        """Look at the queue now instead of at the next poll (call after enqueue)."""
        self._wake.set()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Ask the running job to stop at its next check and wait for the thread.

        The job is left RUNNING in the store on purpose, so the next start resumes it.
        """
        self._stop.set()
        self._wake.set()
        current = self._current
        if current is not None:
            current.cancel_event.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    @property
    def running_job_id(self) -> str | None:
        """The id of the job being run, if any."""
        current = self._current
        return current.job.id if current is not None else None

    def _run(self) -> None:
        while not self._stop.is_set():
            job = self.store.claim_next()
            if job is None:
                self._wake.wait(self._idle_poll_s)
                self._wake.clear()
                continue
            self._run_one(job)

    def _run_one(self, job: Job) -> None:
        context = JobContext(self.store, job)
        self._current = context
        try:
            runner = self.runners.get(job.kind)
            if runner is None:
                self._finish(job.id, JobState.FAILED, error=f"No runner for job kind '{job.kind}'.")
                return
            result = runner(job, context)
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
            self._current = None

    def _finish(self, job_id: str, state: JobState, **fields: Any) -> None:
        """Record the end of a run; a refused transition is logged, the worker goes on."""
        try:
            self.store.finish(job_id, state, **fields)
        except JobError as exc:
            log.error("Job %s ended %s, but the store refused it: %s", job_id, state.value, exc)
