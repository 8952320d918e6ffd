"""The API's JSON shapes (pydantic models: they also write the OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from omni_web.jobs import Job
from omni_web.pipeline import ConvertProgress

__all__ = [
    "FileOut",
    "JobOut",
    "MoveIn",
    "PresetOut",
    "PriorityIn",
    "ProgressOut",
    "QueueOut",
    "SamplesIn",
    "job_out",
]


class ProgressOut(BaseModel):
    """Where a job is: its phase and chunk counts (``fraction`` 0..1, None before the count is known)."""

    phase: str = ""
    message: str = ""
    chunks_done: int = 0
    chunks_total: int = 0
    chunks_failed: int = 0  # given up (silence in the book, flagged for review); settled, like done ones
    fraction: float | None = None
    eta_s: float | None = None


class JobOut(BaseModel):
    """One job as the queue holds it."""

    id: str
    title: str
    state: Literal["queued", "running", "done", "failed", "cancelled"]
    queue_position: int = Field(0, description="1-based place in line while queued, else 0")
    priority: int = 0
    paused: bool = False
    sample_done: bool = False
    error: str = ""
    progress: ProgressOut
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    files_url: str


class FileOut(BaseModel):
    """A file a job wrote; ``url`` downloads it."""

    name: str
    kind: Literal["book", "chapter", "mp3", "readalong", "subtitles", "report", "other"] = "other"
    path: str = Field(description="relative to the output folder")
    size: int
    url: str


class QueueOut(BaseModel):
    """The queue-wide switches and the line in run order."""

    paused: bool
    samples_first: bool
    sample_minutes: float = Field(
        0.0, description="0: a sample is the first chapter; else whole chapters of at least this long"
    )
    queued: list[JobOut]


class PresetOut(BaseModel):
    """A saved preset (named job settings)."""

    name: str
    settings: dict[str, Any]


class MoveIn(BaseModel):
    """Where to move a queued job."""

    where: Literal["top", "up", "down", "bottom"]


class SamplesIn(BaseModel):
    """Samples first: every queued book's sample before any full book."""

    on: bool
    minutes: float | None = Field(
        None, ge=0, description="at least this long (whole chapters); 0: the first chapter"
    )


class PriorityIn(BaseModel):
    """A queued job's new priority (higher runs first)."""

    priority: int


def job_out(job: Job, *, position: int = 0, base: str = "/api/v1") -> JobOut:
    """The API's view of a job."""
    doc = ConvertProgress.from_dict(job.progress)  # a queued job has no progress yet: its state is the phase
    progress = ProgressOut(
        phase=doc.phase if job.progress else job.state.value,
        message=doc.message,
        chunks_done=doc.chunks_done,
        chunks_total=doc.chunks_total,
        chunks_failed=doc.chunks_failed,
        fraction=doc.fraction,
        eta_s=doc.eta_s,
    )
    return JobOut(
        id=job.id,
        title=job.title,
        state=job.state.value,
        queue_position=position,
        priority=job.priority,
        paused=job.paused,
        sample_done=job.sample_done,
        error=job.error,
        progress=progress,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        files_url=f"{base}/jobs/{job.id}/files",
    )
