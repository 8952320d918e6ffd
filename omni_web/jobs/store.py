"""The persistent job queue: one SQLite file in the data root.

Jobs outlive the browser and the app: a page refresh, a second browser and an app restart all read
the same rows. Every call opens its own connection (SQLite connections must not cross threads), in
WAL mode so the UI can read while the worker writes.

Every state change is one conditional ``UPDATE ... WHERE id = ? AND state = ?`` whose row count is
checked, never a read followed by a write: a cancel racing the worker's claim, a finish racing a
cancel, or two resumes at once each end in one consistent state, and an impossible transition is
refused with a clear error.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omni_web.errors import JobError, JobNotFound
from omni_web.jobs._record import URGENT_PRIORITY, Job, JobState

__all__ = ["Job", "JobState", "JobStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    params TEXT NOT NULL,
    progress TEXT NOT NULL DEFAULT '{}',
    result TEXT NOT NULL DEFAULT '{}',
    error TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    updated_at REAL NOT NULL,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_state_seq ON jobs(state, seq);
CREATE TABLE IF NOT EXISTS queue_flags (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, job_id TEXT NOT NULL, created_at REAL NOT NULL);
"""
# Steering columns added after the first release; a store created before them gets them on open.
# position orders the queue (a move rewrites it, ``seq`` keeps creation order for listings);
# run_kind is "sample" while a samples-first pass runs, "full" otherwise.
_ADDED_COLUMNS = {
    "priority": "INTEGER NOT NULL DEFAULT 0",
    "paused": "INTEGER NOT NULL DEFAULT 0",
    "position": "REAL",
    "sample_done": "INTEGER NOT NULL DEFAULT 0",
    "run_kind": "TEXT NOT NULL DEFAULT 'full'",
    "sample": "TEXT NOT NULL DEFAULT '{}'",
}
# The order the worker takes queued jobs in: higher priority first, then by place in line.
QUEUE_ORDER = "priority DESC, COALESCE(position, seq), seq"


class JobStore:
    """CRUD and state transitions for jobs; safe to use from any thread."""

    def __init__(self, db_path: Path, *, clock=time.time) -> None:
        self.db_path = db_path
        self._clock = clock
        self._listeners: list[Callable[[], None]] = []
        db_path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)
            have = {row["name"] for row in conn.execute("PRAGMA table_info(jobs)")}
            for name, spec in _ADDED_COLUMNS.items():
                if name not in have:
                    conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {spec}")

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every write that may let a queued job start (a job queued,
        resumed, re-run or steered, a queue switch): the worker listens, so no caller wakes it."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            yield conn
        finally:
            conn.close()

    # --- reading ---------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        """The job with ``job_id``; raise JobNotFound."""
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(job_id)
        return Job.from_row(row)

    def list(self, *, limit: int = 200) -> list[Job]:
        """Newest first."""
        with self._connect() as conn:
            rows = conn.execute("SELECT * FROM jobs ORDER BY seq DESC LIMIT ?", (limit,)).fetchall()
        return [Job.from_row(row) for row in rows]

    def queue_position(self, job_id: str) -> int:
        """1-based place among queued jobs (0 when not queued)."""
        job = self.get(job_id)
        if job.state is not JobState.QUEUED:
            return 0
        return self.queue_positions().get(job_id, 0)

    def queue_positions(self) -> dict[str, int]:
        """Every queued job's 1-based place in line, by id, from one query (for pages that poll)."""
        return {job.id: place for place, job in enumerate(self.queued(), start=1)}

    def queued(self) -> list[Job]:
        """The queued jobs in the order the worker takes them (paused ones keep their place)."""
        with self._connect() as conn:
            rows = conn.execute(f"SELECT * FROM jobs WHERE state = ? ORDER BY {QUEUE_ORDER}",  # noqa: S608
                                (JobState.QUEUED.value,)).fetchall()
        return [Job.from_row(row) for row in rows]

    def flag(self, name: str, default: str = "") -> str:
        """A queue-wide setting stored with the jobs (paused, samples first), so it survives restarts."""
        with self._connect() as conn:
            row = conn.execute("SELECT value FROM queue_flags WHERE name = ?", (name,)).fetchone()
        return row["value"] if row is not None else default

    def set_flag(self, name: str, value: str) -> None:
        """Store a queue-wide setting (see :meth:`flag`)."""
        with self._connect() as conn:
            conn.execute("INSERT INTO queue_flags (name, value) VALUES (?, ?)"
                         " ON CONFLICT(name) DO UPDATE SET value = excluded.value", (name, value))
        self._changed()

    # --- writing ---------------------------------------------------------------------------

    def enqueue(self, kind: str, params: Mapping[str, Any], *, title: str = "", priority: int = 0,
                idempotency_key: str | None = None) -> Job:
        """Add a job at the end of its priority's line.

        With ``idempotency_key``, a second call with the same key returns the first call's job
        instead of adding one (a client retrying a POST it did not see answered).
        """
        job_id = uuid.uuid4().hex[:12]
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            if idempotency_key:
                row = conn.execute("SELECT job_id FROM idempotency WHERE key = ?", (idempotency_key,
                                                                                    )).fetchone()
                if (
                    row is not None
                    and conn.execute("SELECT 1 FROM jobs WHERE id = ?", (row["job_id"],)).fetchone()
                ):
                    conn.execute("COMMIT")
                    return self.get(row["job_id"])
            now = self._clock()  # read under the write lock, so created_at follows queue order
            (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()
            (position,) = conn.execute(
                "SELECT COALESCE(MAX(COALESCE(position, seq)), 0) + 1 FROM jobs"
            ).fetchone()
            conn.execute(
                "INSERT INTO jobs (id, kind, title, state, params, created_at, updated_at, seq, position, "
                "priority)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    kind,
                    title or kind,
                    JobState.QUEUED.value,
                    json.dumps(dict(params)),
                    now,
                    now,
                    seq,
                    position,
                    int(priority),
                ),
            )
            if idempotency_key:
                conn.execute(
                    "INSERT OR REPLACE INTO idempotency (key, job_id, created_at) VALUES (?, ?, ?)",
                    (idempotency_key, job_id, now),
                )
            conn.execute("COMMIT")
        self._changed()
        return self.get(job_id)

    def job_for_key(self, idempotency_key: str) -> Job | None:
        """The job an earlier call with ``idempotency_key`` created, if it still exists."""
        with self._connect() as conn:
            row = conn.execute("SELECT job_id FROM idempotency WHERE key = ?", (idempotency_key,)).fetchone()
        try:
            return self.get(row["job_id"]) if row is not None else None
        except JobNotFound:
            return None

    def claim_next(
        self, *, samples_first: bool = False, accept: Callable[[Job], bool] | None = None
    ) -> Job | None:
        """Atomically move the next queued job to RUNNING and return it.

        The next job is the first in queue order that is not paused (none while the whole queue
        is paused). When ``accept`` refuses that job, nothing is claimed: the line is never
        jumped (the worker asks again later). With ``samples_first``, a job whose sample was not
        made yet goes before any full run and is claimed as a sample run (``run_kind`` "sample").
        """
        now = self._clock()
        # Samples first: every job still owing its sample, and every urgent one, before full runs.
        owing_first = f"(sample_done = 1 AND priority < {URGENT_PRIORITY}) ASC, "
        order = (owing_first if samples_first else "") + QUEUE_ORDER
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            paused = conn.execute("SELECT value FROM queue_flags WHERE name = 'paused'").fetchone()
            rows = (
                []
                if paused is not None and paused["value"] == "1"
                else conn.execute(
                    f"SELECT * FROM jobs WHERE state = ? AND paused = 0 ORDER BY {order}",  # noqa: S608
                    (JobState.QUEUED.value,),
                ).fetchall()
            )
            job = Job.from_row(rows[0]) if rows else None
            if job is None or (accept is not None and not accept(job)):
                conn.execute("COMMIT")
                return None
            run_kind = "sample" if samples_first and job.owes_sample else "full"
            conn.execute(
                "UPDATE jobs SET state = ?, started_at = ?, updated_at = ?, error = '', run_kind = ?"
                " WHERE id = ? AND state = ?",
                (JobState.RUNNING.value, now, now, run_kind, job.id, JobState.QUEUED.value),
            )
            conn.execute("COMMIT")
        return self.get(job.id)

    def finish_sample(self, job_id: str, sample: Mapping[str, Any]) -> Job:
        """A sample run ended: keep its result and put the job back in line (same place) for its full run.

        Raises:
            JobError: the job is not running a sample (cancelled meanwhile, or finished).
        """
        if not self._transition(
            job_id,
            (JobState.RUNNING,),
            state=JobState.QUEUED.value,
            sample_done=1,
            run_kind="full",
            sample=json.dumps(dict(sample)),
        ):
            raise JobError(f"Job '{job_id}' is {self.get(job_id).state.value}; its sample was not kept.")
        return self.get(job_id)

    def update_progress(self, job_id: str, progress: Mapping[str, Any]) -> None:
        """Replace the job's progress document."""
        self._update(job_id, progress=json.dumps(dict(progress)))

    def finish(
        self,
        job_id: str,
        state: JobState,
        *,
        result: Mapping[str, Any] | None = None,
        error: str = "",
    ) -> Job:
        """Move a running job to a finished state.

        Raises:
            JobError: the job is not running (finished already, queued, or cancelled while queued).
        """
        if not state.finished:
            raise JobError(f"finish() needs a finished state, not {state.value}.")
        fields_: dict[str, Any] = {"state": state.value, "error": error, "finished_at": self._clock()}
        if result is not None:
            fields_["result"] = json.dumps(dict(result))
        if not self._transition(job_id, (JobState.RUNNING,), **fields_):
            current = self.get(job_id)
            raise JobError(
                f"Job '{job_id}' is {current.state.value}, not running; it cannot be marked {state.value}."
            )
        return self.get(job_id)

    def request_cancel(self, job_id: str) -> Job:
        """Cancel a queued job at once; ask a running one to stop at its next check.

        A finished job is left as it is. Whichever the worker's claim and this call do first, a
        job the worker holds is never marked cancelled under it.
        """
        if not self._transition(
            job_id,
            (JobState.QUEUED,),
            state=JobState.CANCELLED.value,
            finished_at=self._clock(),
            cancel_requested=1,
        ):
            self._transition(job_id, (JobState.RUNNING,), cancel_requested=1)
        return self.get(job_id)

    def resume(self, job_id: str) -> Job:
        """Put a failed or cancelled job back in the queue; finished chunks are reused.

        A queued or running job is returned as it is (resumed twice, it is queued once).

        Raises:
            JobError: the job is done.
        """
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()
            cursor = conn.execute(
                "UPDATE jobs SET state = ?, cancel_requested = 0, error = '', finished_at = NULL,"
                " position = NULL, updated_at = ?, seq = ? WHERE id = ? AND state IN (?, ?)",
                (
                    JobState.QUEUED.value,
                    self._clock(),
                    seq,
                    job_id,
                    JobState.FAILED.value,
                    JobState.CANCELLED.value,
                ),
            )
            conn.execute("COMMIT")
        self._changed()
        job = self.get(job_id)
        if cursor.rowcount == 0 and job.state is JobState.DONE:
            raise JobError(f"Job '{job_id}' is already done; start a new one to render it again.")
        return job

    def rerun(self, job_id: str) -> Job:
        """Queue a finished job again (a done one too): it renders into its own files again.

        Finished chunks are reused, so a re-run after a settings change or a deleted file only
        redoes what is missing; the previous result is cleared until the new one lands. The write
        is conditional, like every transition: a job a resume and the worker took in the meantime
        is never queued again under its running self.

        Raises:
            JobNotFound: there is no such job.
            JobError: the job is queued or running.
        """
        finished = [s.value for s in JobState if s.finished]
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()
            cursor = conn.execute(
                "UPDATE jobs SET state = ?, cancel_requested = 0, error = '', finished_at = NULL, result = "
                "'{}',"
                " position = NULL, updated_at = ?, seq = ? WHERE id = ? AND state IN "
                f"({', '.join('?' * len(finished))})",  # noqa: S608
                (JobState.QUEUED.value, self._clock(), seq, job_id, *finished),
            )
            conn.execute("COMMIT")
        self._changed()
        job = self.get(job_id)  # JobNotFound when it is gone
        if cursor.rowcount == 0:
            raise JobError(
                f"Job '{job_id}' is {job.state.value}; it is not finished, so it cannot run again yet."
            )
        return job

    def requeue_interrupted(self) -> list[str]:
        """Jobs left RUNNING by a previous app process go back to the front of the queue.

        Called once when a worker starts: no worker of this data root is running then, so a
        RUNNING row can only be a job whose process died (crash, kill, power cut).
        """
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            rows = conn.execute("SELECT id FROM jobs WHERE state = ?", (JobState.RUNNING.value,)).fetchall()
            conn.execute(
                "UPDATE jobs SET state = ?, updated_at = ? WHERE state = ?",
                (JobState.QUEUED.value, self._clock(), JobState.RUNNING.value),
            )
            conn.execute("COMMIT")
        return [row["id"] for row in rows]

    def cancel_requested(self, job_id: str) -> bool:
        """Whether someone asked this job to stop."""
        with self._connect() as conn:
            row = conn.execute("SELECT cancel_requested FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(job_id)
        return bool(row["cancel_requested"])

    def delete(self, job_id: str) -> None:
        """Forget a finished job (its output files stay)."""
        finished = [s.value for s in JobState if s.finished]
        marks = ", ".join("?" * len(finished))
        with self._connect() as conn:
            cursor = conn.execute(
                f"DELETE FROM jobs WHERE id = ? AND state IN ({marks})",  # noqa: S608 - our placeholders
                (job_id, *finished),
            )
        if cursor.rowcount == 0:
            job = self.get(job_id)  # JobNotFound when it is gone
            raise JobError(f"Job '{job_id}' is {job.state.value}; cancel it before deleting it.")

    def _transition(self, job_id: str, from_states: tuple[JobState, ...], **values: Any) -> bool:
        """Set ``values`` only while the job is in one of ``from_states``; False when it was not.

        Raises:
            JobNotFound: there is no such job.
        """
        values["updated_at"] = self._clock()
        assignments = ", ".join(f"{name} = ?" for name in values)
        states = ", ".join("?" * len(from_states))
        with self._connect() as conn:
            cursor = conn.execute(
                f"UPDATE jobs SET {assignments} WHERE id = ? AND state IN ({states})",  # noqa: S608
                (*values.values(), job_id, *(s.value for s in from_states)),
            )
            if (
                cursor.rowcount == 0
                and conn.execute("SELECT 1 FROM jobs WHERE id = ?", (job_id,)).fetchone() is None
            ):
                raise JobNotFound(job_id)
        if cursor.rowcount > 0:
            self._changed()
        return cursor.rowcount > 0

    def replace_record(self, job_id: str, *, params: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """Replace a job's request and result (its books were moved: omni_web/deliver/migrate.py)."""
        self._update(job_id, params=json.dumps(dict(params)), result=json.dumps(dict(result)))

    def _update(self, job_id: str, **values: Any) -> None:
        values["updated_at"] = self._clock()
        assignments = ", ".join(f"{name} = ?" for name in values)
        with self._connect() as conn:
            cursor = conn.execute(
                f"UPDATE jobs SET {assignments} WHERE id = ?",  # noqa: S608 - column names are ours
                (*values.values(), job_id),
            )
        if cursor.rowcount == 0:
            raise JobNotFound(job_id)
