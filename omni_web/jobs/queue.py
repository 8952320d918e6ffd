"""Steering the queue: priority, place in line, pause and resume (queue and single jobs), samples first.

Everything here is a write to the job store (see :mod:`omni_web.jobs.store`), so the UI, the API
and the CLI steer the same queue, and a restart keeps the order, the pauses and the samples-first
switch. The worker reads them when it claims its next job.
"""

from __future__ import annotations

from dataclasses import dataclass

from omni_web.errors import JobError
from omni_web.jobs.store import Job, JobState, JobStore

__all__ = ["MOVES", "QueueControl", "QueueStatus"]

MOVES = ("top", "up", "down", "bottom")
_PAUSED = "paused"
_SAMPLES_FIRST = "samples_first"
_SAMPLE_MINUTES = "sample_minutes"


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """The queue-wide switches and the line as the worker will take it."""

    paused: bool
    samples_first: bool
    queued: tuple[Job, ...]


class QueueControl:
    """Queue steering over one :class:`JobStore`; safe from any thread."""

    def __init__(self, store: JobStore) -> None:
        self.store = store

    # --- queue-wide ------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        """True while the worker takes no new job (a running one goes on)."""
        return self.store.flag(_PAUSED) == "1"

    def pause(self) -> None:
        """Take no new job until :meth:`resume`; the running job finishes."""
        self.store.set_flag(_PAUSED, "1")

    def resume(self) -> None:
        """Let the worker take jobs again."""
        self.store.set_flag(_PAUSED, "0")

    @property
    def samples_first(self) -> bool:
        """True when every queued book's sample (its first chapter) is made before any full book."""
        return self.store.flag(_SAMPLES_FIRST) == "1"

    def set_samples_first(self, on: bool) -> None:
        """Switch samples first on or off (jobs whose sample exists are not sampled again)."""
        self.store.set_flag(_SAMPLES_FIRST, "1" if on else "0")

    @property
    def sample_minutes(self) -> float:
        """How long a sample is at least (0: the first chapter only); whole chapters are taken."""
        try:
            return max(0.0, float(self.store.flag(_SAMPLE_MINUTES, "0")))
        except ValueError:
            return 0.0

    def set_sample_minutes(self, minutes: float) -> None:
        """Make samples at least ``minutes`` long (0: the first chapter)."""
        self.store.set_flag(_SAMPLE_MINUTES, str(max(0.0, float(minutes))))

    def status(self) -> QueueStatus:
        """The switches and the queued jobs in the order they will run."""
        return QueueStatus(self.paused, self.samples_first, tuple(self.store.queued()))

    # --- single jobs -----------------------------------------------------------------------

    def pause_job(self, job_id: str) -> Job:
        """Hold a queued job in its place: the worker passes over it until it is resumed.

        Raises:
            JobError: the job is not queued (a running job is stopped with cancel, then resumed).
        """
        return self._set_queued(job_id, "pause", paused=1)

    def resume_job(self, job_id: str) -> Job:
        """Release a paused queued job; a failed or cancelled one goes back in the queue."""
        job = self.store.get(job_id)
        if job.state in (JobState.FAILED, JobState.CANCELLED):
            return self.store.resume(job_id)
        return self._set_queued(job_id, "resume", paused=0)

    def set_priority(self, job_id: str, priority: int) -> Job:
        """Higher runs first; jobs of equal priority keep their order."""
        return self._set_queued(job_id, "reprioritise", priority=int(priority))

    def move(self, job_id: str, where: str) -> Job:
        """Move a queued job: ``top``, ``up``, ``down`` or ``bottom`` of the line as it runs.

        Moving past a job of another priority takes that priority, so the job lands exactly where
        it was moved to in the order shown.

        Raises:
            JobError: not queued, or an unknown move.
        """
        if where not in MOVES:
            raise JobError(f"Unknown move '{where}': use one of {', '.join(MOVES)}.")
        line = self.store.queued()
        ids = [job.id for job in line]
        if job_id not in ids:
            return self._set_queued(job_id, "move", priority=self.store.get(job_id).priority)  # raises
        index = ids.index(job_id)
        target = {"top": 0, "up": max(index - 1, 0), "down": min(index + 1, len(ids) - 1),
                  "bottom": len(ids) - 1}[where]
        if target == index:
            return line[index]
        neighbour = line[target]
        if where in ("top", "up"):
            position = _position(neighbour) - (1.0 if where == "top" else _gap(line, target - 1, target))
        else:
            position = _position(neighbour) + (1.0 if where == "bottom" else _gap(line, target, target + 1))
        return self._set_queued(job_id, "move", priority=neighbour.priority, position=position)

    def _set_queued(self, job_id: str, verb: str, **values: object) -> Job:
        if not self.store._transition(job_id, (JobState.QUEUED,), **values):  # noqa: SLF001 - same package
            job = self.store.get(job_id)
            raise JobError(f"Cannot {verb} '{job.title}': it is {job.state.value}, and only a queued job can "
                           "be.")
        return self.store.get(job_id)


def _position(job: Job) -> float:
    return job.position


def _gap(line: list[Job], before: int, after: int) -> float:
    """Half the distance between two neighbours in line (1.0 past either end)."""
    if before < 0 or after >= len(line) or line[before].priority != line[after].priority:
        return 1.0
    return abs(_position(line[after]) - _position(line[before])) / 2 or 0.5
