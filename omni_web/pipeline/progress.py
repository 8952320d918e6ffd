"""The job's progress document: what the Jobs tab, the CLI's progress bar and the job store read.

One frozen record, written by the conversion (``run_conversion``'s ``progress`` callback) and
stored as JSON with :meth:`~omni_web.records.JsonRecord.to_dict`; readers rebuild it with
``ConvertProgress.from_dict(job.progress)`` instead of reading keys. Add a field with a default
to extend it; documents stored before the field existed still read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.master.records import ChapterState
from omni_web.qa import QaProgress
from omni_web.records import JsonRecord

__all__ = [
    "MAX_EVENTS",
    "ChapterProgress",
    "ConvertProgress",
    "JobEvent",
    "PhaseProgress",
    "PhaseState",
    "QaProgress",
]

MAX_EVENTS = 50  # the newest events a job keeps (a flapping server must not grow the document)


@dataclass(frozen=True, slots=True)
class JobEvent(JsonRecord):
    """Something that happened to a job worth a line in its log: the server went away, came back,
    was restarted. ``at`` is wall-clock time (seconds since the epoch)."""

    at: float = 0.0
    text: str = ""
    kind: str = "server"  # server (down, restarted, back) | info


@dataclass(frozen=True, slots=True)
class ChapterProgress(JsonRecord):
    """One chapter's row and where it is (:class:`~omni_web.master.records.ChapterState`)."""

    number: int = 0
    title: str = ""
    state: ChapterState = ChapterState.PENDING
    audio_path: Path | None = None
    duration_s: float | None = None

    @property
    def ready(self) -> bool:
        """True when the chapter's audio file is assembled (it may still be missing on disk)."""
        return self.state == ChapterState.READY and self.audio_path is not None


class PhaseState(enum.StrEnum):
    """Where a phase is."""

    PENDING = "pending"
    ACTIVE = "active"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class PhaseProgress(JsonRecord):
    """One phase of a job with its own count and ETA, so no phase looks hung behind a full bar.

    Phases overlap: chapters are finished while later chunks render. ``done``/``total`` count
    ``unit`` (chunks, chapters, or percent of the book file); ``started_at`` is wall-clock time
    (the first progress in this run) and ``eta_s`` comes from this run's own rate.
    """

    name: str = ""  # rendering | chapters | book | mp3 (others may add their own)
    label: str = ""
    done: int = 0
    total: int = 0
    unit: str = ""
    state: PhaseState = PhaseState.PENDING
    started_at: float | None = None
    eta_s: float | None = None
    failed: int = 0  # of ``done``: given up, not made (a chunk no server could say)

    @property
    def counts(self) -> str:
        """``87/88 chunks, 1 failed``: what is made of the total, and what was given up."""
        if self.unit == "%":
            return f"{self.done}%"
        if not self.total:
            return self.unit
        made = f"{self.done - self.failed:,}/{self.total:,} {self.unit}"
        return made + (f", {self.failed:,} failed" if self.failed else "")

    def advanced(
        self,
        done: int,
        *,
        now: float,
        total: int | None = None,
        eta_s: float | None = None,
        baseline: int = 0,
        failed: int | None = None,
    ) -> PhaseProgress:
        """A copy at ``done`` (of ``total``, ``failed`` of them given up); the ETA is measured from
        ``baseline`` (work found done)."""
        total = self.total if total is None else total
        failed = self.failed if failed is None else failed
        started = self.started_at if self.started_at is not None else now
        finished = total > 0 and done >= total
        if eta_s is None and not finished and done > baseline and now > started:
            eta_s = (total - done) * (now - started) / (done - baseline)
        return replace(
            self,
            done=done,
            total=total,
            started_at=started,
            eta_s=None if finished else eta_s,
            state=PhaseState.DONE if finished else PhaseState.ACTIVE,
            failed=failed,
        )


@dataclass(frozen=True, slots=True)
class ConvertProgress(JsonRecord):
    """A snapshot of one conversion; durations in seconds."""

    phase: str = "preparing"
    message: str = ""
    server_status: str = ""  # the serving handle's status line while it has one ("Waiting for ...")
    title: str = ""
    model: str = ""
    chunks_done: int = 0
    chunks_total: int = 0
    chunks_cached: int = 0
    # Given up (a second of silence in the book, flagged for review), and each one named.
    chunks_failed: int = 0
    failed_chunks: tuple[str, ...] = ()
    audio_s: float = 0.0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    realtime_factor: float | None = None
    chapters: tuple[ChapterProgress, ...] = ()
    qa: QaProgress | None = None  # None with QA off
    phases: tuple[PhaseProgress, ...] = ()
    words: int = 0  # words to be spoken (the selected chapters), as the Generate tab counts them
    # Background mastering/encoding: chapters whose final files exist, of all selected.
    chapters_mastered: int = 0
    chapters_to_master: int = 0
    loudness_preset: str | None = None
    # The delivery report's JSON once the book is done (see omni_web.master.report).
    levels: dict[str, Any] | None = None
    server_down_since: float | None = None  # since when the server has been away (with server_status)
    # Requests in flight (omni_web/client/inflight.py): now, the most at once, the server's width as
    # measured or configured, queue-full refusals, and the line that says it ("48 in flight, server full at ~48").
    in_flight: int | None = None
    peak_in_flight: int = 0
    server_full_at: int | None = None
    refusals: int = 0
    in_flight_line: str = ""
    # GPU 0 over the job, from NVML, when the server runs on this machine (omni_web/gpuwatch.py).
    gpu_line: str = ""
    gpu_util_pct: float | None = None
    gpu_memory_peak_gib: float | None = None
    audio_per_gpu_s: float | None = None  # audio seconds per GPU-busy second
    events: tuple[JobEvent, ...] = ()

    def server_said(self, line: str, *, at: float) -> ConvertProgress:
        """A copy after the serving handle's status line changed: ``line`` ("Waiting for …") while the
        server is away (logged, with since when), "" once it answers again (logged with how long)."""
        if line:
            since = self.server_down_since or at
            return replace(self, message=line, server_status=line, server_down_since=since).with_event(
                line, at=at
            )
        if self.server_down_since is None:
            return self
        away = max(0.0, at - self.server_down_since)
        back = replace(self, server_status="", server_down_since=None)
        return back.with_event(f"The server answers again after {away:.0f} s; the job goes on.", at=at)

    def with_event(self, text: str, *, at: float, kind: str = "server") -> ConvertProgress:
        """A copy with ``text`` added to the job's log (the newest :data:`MAX_EVENTS` kept)."""
        return replace(self, events=(*self.events, JobEvent(at=at, text=text, kind=kind))[-MAX_EVENTS:])

    @property
    def fraction(self) -> float | None:
        """Share of chunks done or given up, 0..1; None before the chunk count is known."""
        if not self.chunks_total:
            return None
        return min(1.0, (self.chunks_done + self.chunks_failed) / self.chunks_total)

    @property
    def chunk_counts(self) -> str:
        """``87/88 chunks, 1 failed`` (``?`` for a total not known yet)."""
        made = f"{self.chunks_done:,}/{self.chunks_total or '?'} chunks"
        return made + (f", {self.chunks_failed:,} failed" if self.chunks_failed else "")

    def ready_chapters(self) -> tuple[ChapterProgress, ...]:
        """The chapters whose audio file is assembled, in book order."""
        return tuple(chapter for chapter in self.chapters if chapter.ready)

    def phase_named(self, name: str) -> PhaseProgress | None:
        """The phase called ``name``, if this job has it."""
        return next((phase for phase in self.phases if phase.name == name), None)

    def with_phase(self, phase: PhaseProgress) -> ConvertProgress:
        """A copy with the phase of the same name replaced."""
        return replace(self, phases=tuple(phase if row.name == phase.name else row for row in self.phases))

    def with_chapter(self, number: int, **changes: Any) -> ConvertProgress:
        """A copy with chapter ``number``'s row changed (other rows as they are)."""
        rows = tuple(replace(row, **changes) if row.number == number else row for row in self.chapters)
        return replace(self, chapters=rows)
