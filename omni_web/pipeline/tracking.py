"""The job's progress record while a conversion runs, fed from the render and assembly threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from omni_web.client.inflight import InFlightController
from omni_web.gpuwatch import GpuSampler, GpuUsage
from omni_web.master import ChapterState, MasteredChapter
from omni_web.pipeline.plan import ConversionPlan
from omni_web.pipeline.progress import ChapterProgress, ConvertProgress, PhaseProgress, PhaseState
from omni_web.render import RenderProgress

__all__ = ["ProgressCallback", "ProgressTracker", "finish_phases", "flow_fields", "gpu_fields"]

# Receives every progress snapshot; store it with ``to_dict()``.
ProgressCallback = Callable[[ConvertProgress], None]

# Progress documents are written at most this often while chunks stream in (phase changes and
# finished chapters are always written at once).
_PROGRESS_INTERVAL_S = 0.5


class ProgressTracker:
    """The job's progress record, updated from the render and assembly threads.

    Besides the chunk counts it keeps one :class:`PhaseProgress` per phase (rendering, finishing
    chapters, the book file, MP3s), each with its own count and ETA.
    """

    def __init__(
        self,
        plan: ConversionPlan,
        sink: ProgressCallback | None,
        *,
        finish_phases: tuple[PhaseProgress, ...] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._last_emit = 0.0
        self._clock = clock
        self._baselines: dict[str, int] = {}
        self._saved_message: str | None = None
        chunks_total = len({i.key for i in plan.items})
        self.doc = ConvertProgress(
            title=plan.tags.title,
            model=plan.entry.key,
            chunks_total=chunks_total,
            chapters=tuple(ChapterProgress(number=w.number, title=w.chapter.title) for w in plan.chapters),
            phases=(
                PhaseProgress(name="rendering", label="Rendering", total=chunks_total, unit="chunks"),
                PhaseProgress(
                    name="chapters", label="Finishing chapters", total=len(plan.chapters), unit="chapters"
                ),
                *finish_phases,
            ),
            words=sum(work.chapter.word_count for work in plan.chapters),
            chapters_to_master=len(plan.chapters),
        )

    def _emit(self, *, force: bool) -> None:
        now = time.monotonic()
        if self._sink is None or (not force and now - self._last_emit < _PROGRESS_INTERVAL_S):
            return
        self._last_emit = now
        self._sink(self.doc)

    def _advance(self, name: str, done: int, **changes: Any) -> bool:
        """Move phase ``name`` to ``done``; True when that finished it (callers hold the lock)."""
        phase = self.doc.phase_named(name)
        if phase is None:
            return False
        baseline = self._baselines.setdefault(name, done if phase.started_at is None else 0)
        moved = phase.advanced(done, now=self._clock(), baseline=baseline, **changes)
        self.doc = self.doc.with_phase(moved)
        return moved.state == PhaseState.DONE and phase.state != PhaseState.DONE

    def _follow_rendering(self) -> None:
        """While chunks render, chapters finish right behind them: their ETA is the renderer's."""
        rendering, chapters = self.doc.phase_named("rendering"), self.doc.phase_named("chapters")
        if (
            rendering
            and chapters
            and rendering.state == PhaseState.ACTIVE
            and chapters.state == PhaseState.ACTIVE
        ):
            self.doc = self.doc.with_phase(replace(chapters, eta_s=rendering.eta_s))

    def phase(self, phase: str, message: str = "") -> None:
        with self._lock:
            self._saved_message = None
            self.doc = replace(self.doc, phase=phase, message=message)
            self._emit(force=True)

    def server_status(self, line: str) -> None:
        """The serving handle's status line ("waiting for ..."), shown instead of the message until it clears."""
        with self._lock:
            if line and self._saved_message is None:
                self._saved_message = self.doc.message
            self.doc = self.doc.server_said(line, at=self._clock())
            if not line and self._saved_message is not None:
                self.doc = replace(self.doc, message=self._saved_message)
                self._saved_message = None
            self._emit(force=True)

    def found_done(self, chunks_cached: int, finished: Iterable[MasteredChapter]) -> None:
        """What a resumed run finds already made, shown before the first request goes out."""
        with self._lock:
            self.doc = replace(self.doc, chunks_done=chunks_cached, chunks_cached=chunks_cached)
            for record in finished:
                self._mastered(record)
            self._advance("rendering", chunks_cached)
            self._advance("chapters", len(self.doc.ready_chapters()))

    def render(self, progress: RenderProgress, extra: Mapping[str, Any] | None = None) -> None:
        with self._lock:
            self.doc = replace(self.doc, **progress.to_dict(), **(extra or {}))
            ended = self._advance(
                "rendering", progress.chunks_settled, eta_s=progress.eta_s, failed=progress.chunks_failed
            )
            self._follow_rendering()
            self._emit(force=ended or progress.chunks_settled == progress.chunks_total)

    def render_extra(self, extra: Mapping[str, Any]) -> None:
        """Fields beside the render's counts (the GPU's figures once sampling stops)."""
        with self._lock:
            self.doc = replace(self.doc, **extra)
            self._emit(force=True)

    def gave_up(self, lines: Iterable[str]) -> None:
        """Name the chunks given up so far (the count follows with the renderer's next snapshot)."""
        with self._lock:
            self.doc = replace(self.doc, failed_chunks=tuple(lines))

    def chapter_state(self, number: int, state: ChapterState) -> None:
        """A chapter is mastering or encoding (credits are not rows)."""
        if number > 0:
            with self._lock:
                self.doc = self.doc.with_chapter(number, state=state)
                self._follow_rendering()
                self._emit(force=True)

    def chapter_ready(self, record: MasteredChapter) -> None:
        """A chapter's files are made: it counts as mastered, and a book chapter can be played."""
        with self._lock:
            self._mastered(record)
            self._advance("chapters", len(self.doc.ready_chapters()))
            self._follow_rendering()
            self._emit(force=True)

    def _mastered(self, record: MasteredChapter) -> None:
        """Count a made chapter and show a book chapter ready (under the lock; emits nothing)."""
        done = self.doc.chapters_mastered + (1 if record.in_book else 0)
        self.doc = replace(self.doc, chapters_mastered=done, loudness_preset=record.preset)
        if record.in_book:
            audio = record.audio()
            self.doc = self.doc.with_chapter(
                record.number,
                state=ChapterState.READY,
                audio_path=audio.path,
                duration_s=audio.duration_ms / 1000,
            )

    def levels(self, report: Mapping[str, Any]) -> None:
        """The finished delivery report (the Jobs tab shows it)."""
        with self._lock:
            self.doc = replace(self.doc, levels=dict(report))

    def step(self, name: str, fraction: float) -> None:
        """A finishing phase (book, mp3) reached ``fraction`` of its total."""
        with self._lock:
            phase = self.doc.phase_named(name)
            if phase is not None:
                ended = self._advance(name, round(max(0.0, min(1.0, fraction)) * phase.total))
                self._emit(force=ended)


def finish_phases(output_format: str, also_mp3: bool, chapters: int) -> tuple[PhaseProgress, ...]:
    phases = []
    if output_format == "m4b":
        phases.append(PhaseProgress(name="book", label="Encoding the m4b", total=100, unit="%"))
    if output_format == "mp3" or also_mp3:
        phases.append(PhaseProgress(name="mp3", label="MP3 chapters", total=chapters, unit="chapters"))
    return tuple(phases)


def flow_fields(flow: InFlightController | None) -> dict[str, Any]:
    """The requests in flight for the progress document (nothing without a controller)."""
    if flow is None:
        return {}
    state = flow.state()
    return {
        "in_flight": state.in_flight,
        "in_flight_line": state.line,
        "peak_in_flight": state.peak_in_flight,
        "server_full_at": state.full_at,
        "refusals": state.refusals,
    }


def gpu_fields(
    sampler: GpuSampler | None, audio_per_wall_s: float | None, *, final: GpuUsage | None = None
) -> dict[str, Any]:
    """GPU 0's utilisation and memory so far (or ``final``), and audio seconds per GPU-busy second."""
    usage = final if final is not None else (sampler.snapshot() if sampler is not None else None)
    if usage is None:
        return {}
    fields: dict[str, Any] = {
        "gpu_line": usage.line,
        "gpu_util_pct": round(usage.util_mean_pct, 1),
        "gpu_memory_peak_gib": round(usage.memory_peak_bytes / 1024**3, 2),
    }
    if audio_per_wall_s:
        per_gpu_s = usage.audio_per_gpu_s(audio_per_wall_s)
        fields["audio_per_gpu_s"] = round(per_gpu_s, 2) if per_gpu_s is not None else None
    return fields
