"""One job as read from the queue: its state and its row, the record every reader of the store gets."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from omni_web.runstate import RunState

__all__ = ["URGENT_PRIORITY", "Job", "JobState"]

URGENT_PRIORITY = 100  # a job this urgent (a regenerate's few chunks) is never a sample run: it is the fix


# Where a job is in its life: the run state tasks share (omni_web/runstate.py), under the name the
# queue's code reads it by.
JobState = RunState


@dataclass(frozen=True, slots=True)
class Job:
    """One row of the queue, as read; ``params``, ``progress`` and ``result`` are plain JSON."""

    id: str
    kind: str
    title: str
    state: JobState
    params: Mapping[str, Any]
    progress: Mapping[str, Any] = field(default_factory=dict)
    result: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""
    cancel_requested: bool = False
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    updated_at: float = 0.0
    priority: int = 0
    position: float = 0.0  # place in line among equal priorities (lower runs first)
    paused: bool = False
    sample_done: bool = False
    run_kind: str = "full"  # "sample" while a samples-first pass of the job runs
    sample: Mapping[str, Any] = field(default_factory=dict)  # the sample pass's result

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Job:
        """Convert a database row (the one boundary where dicts become records)."""
        return cls(
            id=row["id"],
            kind=row["kind"],
            title=row["title"],
            state=JobState(row["state"]),
            params=json.loads(row["params"]),
            progress=json.loads(row["progress"]),
            result=json.loads(row["result"]),
            error=row["error"],
            cancel_requested=bool(row["cancel_requested"]),
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            updated_at=row["updated_at"],
            priority=int(row["priority"]),
            position=float(row["position"] if row["position"] is not None else row["seq"]),
            paused=bool(row["paused"]),
            sample_done=bool(row["sample_done"]),
            run_kind=row["run_kind"],
            sample=json.loads(row["sample"]),
        )

    @property
    def is_sample_run(self) -> bool:
        """True while the worker runs this job's samples-first pass (the runner renders a sample)."""
        return self.run_kind == "sample"

    @property
    def owes_sample(self) -> bool:
        """A samples-first pass runs this job's sample first: none made yet, and it is not urgent."""
        return not self.sample_done and self.priority < URGENT_PRIORITY
