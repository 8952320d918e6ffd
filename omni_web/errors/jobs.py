"""Rendering chunks, jobs and background tasks, and the QA review."""

from __future__ import annotations

from omni_web.errors.base import OmniWebError

__all__ = [
    "ChunkFailed",
    "DeliveryError",
    "JobCancelled",
    "JobError",
    "JobExists",
    "JobNotFound",
    "PoisonChunk",
    "ReviewError",
    "TaskBusy",
]


class ChunkFailed(OmniWebError):
    """A chunk still failed after its retries; the job stops instead of leaving a silent gap."""

    def __init__(
        self, *, chapter_title: str, chapter_number: int, chunk_number: int, text: str, cause: str
    ) -> None:
        self.chapter_title = chapter_title
        self.chapter_number = chapter_number
        self.chunk_number = chunk_number
        self.text = text
        self.cause = cause
        excerpt = text if len(text) <= 160 else text[:157] + "..."
        super().__init__(
            f"Chunk {chunk_number} of chapter {chapter_number} ('{chapter_title}') failed: {cause}\n"
            f'Text: "{excerpt}"\nFinished chunks are kept; fix the cause and resume the job.'
        )


class PoisonChunk(ChunkFailed):
    """A chunk that was in flight at two server crashes in a row killed the server again when it
    was rendered alone; it is failed by itself and every other chunk of the book is rendered."""

    def __init__(
        self, *, chapter_title: str, chapter_number: int, chunk_number: int, text: str, cause: str
    ) -> None:
        super().__init__(
            chapter_title=chapter_title,
            chapter_number=chapter_number,
            chunk_number=chunk_number,
            text=text,
            cause=cause,
        )
        excerpt = text if len(text) <= 160 else text[:157] + "..."
        # Not "resume the job": the book is finished without it (see omni_web/pipeline/missing.py).
        self.args = (
            f"Chunk {chunk_number} of chapter {chapter_number} ('{chapter_title}') failed: {cause}\n"
            f'Text: "{excerpt}"',
        )


class JobError(OmniWebError):
    """A job cannot be queued, run, resumed or cancelled."""


class JobNotFound(JobError, KeyError):
    """No job with that id."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"No job with id '{job_id}'.")

    def __str__(self) -> str:
        return str(self.args[0])


class JobCancelled(JobError):
    """The job was cancelled by the user; finished chunks are kept for a resume."""


class JobExists(JobError):
    """A conversion was submitted that an existing job already asks for (same book, chapters,
    model, voice and chunk size); ``job_id`` is that job, to open instead of queueing a twin."""

    def __init__(self, job_id: str, title: str, state: str) -> None:
        self.job_id = job_id
        self.title = title
        self.state = state
        super().__init__(
            f"A job for this exact request already exists: '{title}' (job {job_id}, {state}). "
            "Open it in the Jobs tab (resume or re-run it there), or change the voice, model, chapters "
            "or chunk size for a new book."
        )


class TaskBusy(JobError):
    """A background task of the same kind (backend install, model changes, server start) is running."""

    def __init__(self, kind: str, title: str) -> None:
        self.kind = kind
        self.title = title
        super().__init__(f"'{title}' is still running. Wait for it to finish or cancel it, then try again.")


class ReviewError(OmniWebError):
    """A QA review action cannot be done: no QA report for the book or job, or no such chunk."""


class DeliveryError(OmniWebError):
    """Delivering a finished book to a library failed (Audiobookshelf refused, or is unreachable).

    The book itself is done; the job shows this message with a Retry. ``status`` is the HTTP
    status when the server answered.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
