"""Run one conversion: EPUB → chunk audio (N in flight) → chapter files → m4b / MP3s.

A chapter's file is assembled in a background thread as soon as its last chunk lands, so it is
playable while later chapters render and the GPU never waits for ffmpeg. Every file is named by a
hash of what shapes it, so running the same request again (resume after a cancel, a crash or a
SIGKILL) renders only the chunks and chapters that are missing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.assemble import AudioFormat, ChapterAudio, probe_chapters, safe_filename
from omni_web.assemble.metadata import ChapterMark, plan_chapter_marks
from omni_web.book import Book, load_book
from omni_web.cast import DIALOGUE, Cast
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, VoiceKind, check_voice_choice
from omni_web.deliver.folder import complete_book_folder
from omni_web.deliver.layout import BookPlace, OutputLayout, book_place, default_name, narrator_parts
from omni_web.deliver.metadata import effective_metadata
from omni_web.deliver.sidecars import Narration
from omni_web.errors import UnknownVoice, VoiceError
from omni_web.master import ChapterState, MasteredChapter, get_preset
from omni_web.paths import DataPaths
from omni_web.pipeline.mastering import (
    BookFiles,
    ChapterFinisher,
    chapter_specs,
    credit_specs,
    finish_book,
    master_options,
)
from omni_web.pipeline.missing import MissingChunk, MissingChunks
from omni_web.pipeline.plan import ConversionPlan, plan_conversion
from omni_web.pipeline.progress import ChapterProgress, ConvertProgress, PhaseProgress, PhaseState
from omni_web.pipeline.quality import JobQa, apply_text_edits, load_text_edits, progress_fields
from omni_web.pipeline.readalong import start_readalong
from omni_web.pipeline.request import ConvertRequest
from omni_web.qa import QaStore
from omni_web.records import JsonRecord
from omni_web.render import RenderItem, RenderProgress, RetryPolicy, chunk_audio_path, render_chunks
from omni_web.server.serving import Serving
from omni_web.settings import Settings
from omni_web.text import LexiconStore, book_identity
from omni_web.timefmt import duration_words
from omni_web.voices import fit_reference
from omni_web.voices.reference import reference_cache_dir

__all__ = ["ConvertResult", "ProgressCallback", "prepare_cast", "prepare_voice", "run_conversion"]

log = logging.getLogger(__name__)

# Receives every progress snapshot; store it with ``to_dict()``.
ProgressCallback = Callable[[ConvertProgress], None]

# Progress documents are written at most this often while chunks stream in (phase changes and
# finished chapters are always written at once).
_PROGRESS_INTERVAL_S = 0.5
_DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True, slots=True)
class ConvertResult(JsonRecord):
    """What a finished conversion produced; stored as the job's ``result`` (``to_dict``/``from_dict``).

    Add a field with a default to extend it: results stored before it existed still read.
    """

    output_dir: Path
    m4b: Path | None = None
    mp3_dir: Path | None = None
    chapters: tuple[ChapterAudio, ...] = ()
    chunks_total: int = 0
    chunks_cached: int = 0
    duration_s: float = 0.0
    readalong_epub: Path | None = None
    # The delivery report (``<Title>.levels.json``) and its JSON; the ACX folder for ``acx``.
    levels_path: Path | None = None
    levels: Mapping[str, Any] | None = None
    acx_dir: Path | None = None
    # Chapter number -> where each chunk starts in its final chapter file, in ms (read-along
    # timings survive mastering: the limiter is delay-compensated and the gain is linear).
    chunk_starts_ms: Mapping[str, Any] | None = None
    qa_report: Path | None = None  # ``<name>.qa.json`` (None with QA off and nothing missing)
    # Chunks the server could not say (each killed it alone): silence in the book, flagged.
    missing_chunks: tuple[MissingChunk, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for the job store; a chapter is ``{number, title, path, duration_s}``."""
        doc = JsonRecord.to_dict(self)
        doc["duration_s"] = round(self.duration_s, 3)
        doc["chapters"] = [
            {"number": c.index, "title": c.title, "path": str(c.path), "duration_s": c.duration_ms / 1000}
            for c in self.chapters
        ]
        return doc

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ConvertResult:
        """The result a stored document describes (see :meth:`to_dict`)."""
        data = dict(data or {})
        rows = data.pop("chapters", None) or []
        data.setdefault("output_dir", "")
        base = JsonRecord.from_dict.__func__(cls, data)  # type: ignore[attr-defined]
        chapters = tuple(
            ChapterAudio(index=int(row.get("number", 0)), title=str(row.get("title", "")), path=Path(row["path"]),
                         duration_ms=round(float(row.get("duration_s") or 0) * 1000))
            for row in rows
            if isinstance(row, Mapping) and row.get("path")
        )
        return replace(base, chapters=chapters)


def prepare_voice(entry: CatalogEntry, voice: VoiceChoice, *, client: SpeechClient, paths: DataPaths) -> VoiceChoice:
    """Check the voice against the server and the clip limit before any speech request.

    Named voices are matched case-insensitively to the server's spelling (an unknown one raises
    UnknownVoice listing the valid names); a reference clip over the server's 10 MiB limit is
    replaced by a re-encoded copy that fits.
    """
    if voice.kind in (VoiceKind.SPEAKER, VoiceKind.PRESET, VoiceKind.UPLOADED):
        return voice.with_name(client.resolve_voice_name(entry, voice.name))
    if voice.kind is VoiceKind.CLONE and voice.reference is not None:
        fitted = fit_reference(voice.reference, cache_dir=reference_cache_dir(paths))
        return replace(voice, reference=fitted)
    return voice


def prepare_cast(entry: CatalogEntry, cast: Cast | None, *, client: SpeechClient, paths: DataPaths) -> Cast | None:
    """Check every voice of a cast like the narrator's, before any speech request.

    Each voice must be a kind the model can use (a speaker name on CustomVoice, a clip on a clone
    model, a description on VoiceDesign) and a name the server knows; clips are fitted to the
    server's limit. Raises VoiceError or UnknownVoice naming the voice.
    """
    if cast is None:
        return None

    def check(role: str, voice: VoiceChoice) -> VoiceChoice:
        try:
            check_voice_choice(entry, voice)
            return prepare_voice(entry, voice, client=client, paths=paths)
        except (VoiceError, UnknownVoice) as exc:
            # Name the part whose voice is wrong: "The cast's voice for Hatter: Unknown voice 'x'…".
            exc.args = (f"The cast's voice for {'the dialogue' if role == DIALOGUE else role}: {exc}",)
            raise

    return cast.map_voices(check)


class _Progress:
    """The job's progress record, updated from the render and assembly threads.

    Besides the chunk counts it keeps one :class:`PhaseProgress` per phase (rendering, finishing
    chapters, the book file, MP3s), each with its own count and ETA.
    """

    def __init__(self, plan: ConversionPlan, sink: ProgressCallback | None, *,
                 finish_phases: tuple[PhaseProgress, ...] = (), clock: Callable[[], float] = time.time) -> None:
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
                PhaseProgress(name="chapters", label="Finishing chapters", total=len(plan.chapters), unit="chapters"),
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
        if rendering and chapters and rendering.state == PhaseState.ACTIVE and chapters.state == PhaseState.ACTIVE:
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
                if record.in_book:
                    self.doc = replace(self.doc, chapters_mastered=self.doc.chapters_mastered + 1,
                                       loudness_preset=record.preset)  # fmt: skip
                    self.doc = self.doc.with_chapter(record.number, state=ChapterState.READY, audio_path=record.m4a,
                                                     duration_s=record.duration_ms / 1000)  # fmt: skip
            self._advance("rendering", chunks_cached)
            self._advance("chapters", len(self.doc.ready_chapters()))

    def render(self, progress: RenderProgress, extra: Mapping[str, Any] | None = None) -> None:
        with self._lock:
            self.doc = replace(self.doc, **progress.to_dict(), **(extra or {}))
            ended = self._advance("rendering", progress.chunks_done, eta_s=progress.eta_s)
            self._follow_rendering()
            self._emit(force=ended or progress.chunks_done == progress.chunks_total)

    def mastered(self, number: int, state: ChapterState, record: MasteredChapter | None) -> None:
        """A chapter's mastering state: mastering, encoding or ready (credits are not rows)."""
        if state is ChapterState.READY and record is not None:
            with self._lock:
                done = self.doc.chapters_mastered + (1 if record.in_book else 0)
                self.doc = replace(self.doc, chapters_mastered=done, loudness_preset=record.preset)
            if record.in_book:
                audio = ChapterAudio(index=record.number, title=record.title, path=record.m4a,
                                     duration_ms=round(record.duration_ms))  # fmt: skip
                self.chapter(number, ChapterState.READY, audio)
        elif number > 0:
            self.chapter(number, state)

    def levels(self, report: Mapping[str, Any]) -> None:
        """The finished delivery report (the Jobs tab shows it)."""
        with self._lock:
            self.doc = replace(self.doc, levels=dict(report))

    def chapter(self, number: int, state: ChapterState, audio: ChapterAudio | None = None) -> None:
        with self._lock:
            changes: dict[str, Any] = {"state": state}
            if audio is not None:
                changes.update(audio_path=audio.path, duration_s=audio.duration_ms / 1000)
            self.doc = self.doc.with_chapter(number, **changes)
            self._advance("chapters", len(self.doc.ready_chapters()))
            self._follow_rendering()
            self._emit(force=True)

    def step(self, name: str, fraction: float) -> None:
        """A finishing phase (book, mp3) reached ``fraction`` of its total."""
        with self._lock:
            phase = self.doc.phase_named(name)
            if phase is not None:
                ended = self._advance(name, round(max(0.0, min(1.0, fraction)) * phase.total))
                self._emit(force=ended)


def _finish_phases(output_format: str, also_mp3: bool, chapters: int) -> tuple[PhaseProgress, ...]:
    phases = []
    if output_format == "m4b":
        phases.append(PhaseProgress(name="book", label="Encoding the m4b", total=100, unit="%"))
    if output_format == "mp3" or also_mp3:
        phases.append(PhaseProgress(name="mp3", label="MP3 chapters", total=chapters, unit="chapters"))
    return tuple(phases)


def _write_cover(book: Book, parts_dir: Path) -> Path | None:
    if book.cover is None:
        return None
    path = parts_dir / f"cover.{book.cover.extension}"
    if not path.is_file():
        path.write_bytes(book.cover.data)
    return path


def run_conversion(
    request: ConvertRequest,
    *,
    paths: DataPaths,
    settings: Settings,
    client: SpeechClient,
    serving: Serving | None = None,
    progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    book: Book | None = None,
    retry: RetryPolicy = _DEFAULT_RETRY,
    remaster: Iterable[int] = (),
) -> ConvertResult:
    """Convert one book with a server that already hosts the request's model.

    Each chapter is mastered and encoded in the background as soon as its chunks are in; the m4b
    is then joined by stream copy. ``remaster`` names chapters (1-based numbers) whose mastered
    files are rebuilt even though their chunks did not change.

    ``serving`` (see :mod:`omni_web.server.serving`) brings a dead server back or waits for it,
    and, for a router, sizes the requests in flight while the job runs unless the request or the
    settings fix a number. A chunk that kills the server alone is left out (a second of silence,
    flagged for review, listed in ``missing_chunks``) and the book is finished without it.

    Raises:
        BookError, UnknownVoice, VoiceError: before any speech request.
        ChunkFailed: a chunk failed after its retries (chapter, chunk and text named).
        ServerNotRunning: the server was stopped, or a foreign one stayed away past its patience.
        JobCancelled: ``cancelled()`` turned true; finished chunks and chapters are kept.
        FfmpegError, DiskFullError: assembly failed; rendered chunks are kept.
    """
    entry = get_entry(request.model_key)
    preset = get_preset(request.loudness or settings.loudness)
    book = book if book is not None else load_book(request.book_path, options=settings.read_options(paths, footnotes=request.footnotes))
    voice = prepare_voice(entry, request.voice, client=client, paths=paths)
    cast = prepare_cast(entry, request.cast, client=client, paths=paths)
    pronouncer = LexiconStore(paths).pronouncer(book_identity(book))
    plan = plan_conversion(book, replace(request, voice=voice, cast=cast), entry, settings, pronouncer=pronouncer)
    output_format = request.output_format or settings.output_format
    also_mp3 = settings.also_mp3_chapters if request.also_mp3_chapters is None else request.also_mp3_chapters
    out_root = Path(request.output_dir) if request.output_dir else settings.output_path(paths)
    parts_dir = out_root / ".parts" / plan.folder_name
    plan = apply_text_edits(plan, load_text_edits(parts_dir))  # the reviewer's edited chunks
    tracker = _Progress(plan, progress, finish_phases=_finish_phases(output_format, also_mp3, len(plan.chapters)))
    parts_dir.mkdir(parents=True, exist_ok=True)
    live = serving is not None and serving.concurrency() is not None  # a router: follows its workers
    fixed = request.concurrency or (None if live else settings.concurrency)
    concurrency: int | Callable[[], int] = fixed or entry.default_concurrency
    if live and not fixed:
        concurrency = lambda: serving.concurrency() or 1  # noqa: E731 - asked before every refill
    shown = concurrency() if callable(concurrency) else concurrency
    qa = JobQa.for_job(request, settings, entry=entry, voice=voice, client=client, paths=paths,
                       concurrency=concurrency, language=request.language or book.metadata.language,
                       book=book, pronouncer=pronouncer)
    speech_voice = voice

    def synthesize(item: RenderItem) -> bytes:
        voice = item.voice or speech_voice
        return client.speech(entry, SpeechRequest(text=item.text, voice=voice, language=request.language)).audio

    readalong = start_readalong(request, plan, settings, paths)
    options = master_options(
        preset,
        AudioFormat(entry.sample_rate_hz, entry.channels),
        aac_kbps=settings.aac_bitrate_kbps,
        mp3=output_format == "mp3" or also_mp3,
        pause_between_chapters_ms=settings.pause_between_chapters_ms,
    )
    items, specs = plan.items, chapter_specs(plan)
    if preset.acx:
        credit_items, credits = credit_specs(plan)
        items, specs = [*credit_items[:1], *items, *credit_items[1:]], [*credits[:1], *specs, *credits[1:]]
    works = {work.number: work for work in plan.chapters}
    chunk_paths = {item.key: chunk_audio_path(paths.chunk_cache_dir, item.key) for item in plan.items}

    def chapter_ready(record: MasteredChapter) -> None:
        if readalong is not None and record.in_book:
            readalong.chapter_ready(works[record.number], chunk_paths, _chapter_audio(record),
                                    chunk_starts_ms=record.chunk_starts_ms)

    def on_state(number: int, state: ChapterState, record: MasteredChapter | None) -> None:
        tracker.mastered(number, state, record)
        if state is ChapterState.READY and record is not None:
            chapter_ready(record)

    def cached_chunk(key: str) -> Path | None:
        path = chunk_audio_path(paths.chunk_cache_dir, key)
        return path if path.is_file() else None

    cover = _write_cover(plan.book, parts_dir)
    fmt = AudioFormat(entry.sample_rate_hz, entry.channels)
    finisher = ChapterFinisher(specs, parts_dir, options, on_state=on_state, remaster=remaster,
                               cached_chunk=cached_chunk, m4b_tags=plan.tags if output_format == "m4b" else None,
                               cover=cover)  # fmt: skip
    # A resumed job's first progress already shows what is made: cached chunks, finished chapters.
    tracker.found_done(sum(1 for key in {item.key for item in plan.items} if cached_chunk(key)),
                       finisher.finished_at_start)  # fmt: skip
    for record in finisher.finished_at_start:
        chapter_ready(record)
    tracker.phase("rendering", f"{len(plan.chapters)} chapters, {tracker.doc.words:,} words, "
                               f"{shown} requests in flight")
    missing = MissingChunks(parts_dir, fmt, QaStore(paths.chunk_cache_dir), qa_level=qa.options.level.value,
                            chunk_done=finisher.chunk_done)  # fmt: skip
    watch = (serving.watch(on_status=tracker.server_status, cancelled=cancelled) if serving is not None
             else contextlib.nullcontext())  # fmt: skip
    try:
        try:
            with watch:
                summary = render_chunks(
                    items,
                    synthesize,
                    cache_dir=paths.chunk_cache_dir,
                    concurrency=qa.render_concurrency,
                    cancelled=cancelled,
                    progress=lambda p: tracker.render(p, progress_fields(qa)),
                    on_done=finisher.chunk_done,
                    recover=serving.recover if serving is not None else None,
                    retry=retry,
                    check=qa.check,
                    on_failed=missing.failed,
                )
        finally:
            qa.close()
        tracker.phase("mastering", "Mastering and encoding the last chapters")
        # A job's own file names (claimed when it was queued) keep two jobs of one book apart.
        layout = OutputLayout(request.output_layout)
        name = request.output_name or (default_name(plan.tags, plan.entry, plan.voice, layout)
                                       if layout is OutputLayout.LIBRARY
                                       else safe_filename(plan.tags.title, fallback="audiobook"))  # fmt: skip
        place = book_place(out_root, plan.tags, name, layout=layout, mp3_only=output_format == "mp3")
        files = finish_book(
            finisher,
            out_root=out_root,
            folder=place.folder,
            m4b_path=place.m4b,
            mp3_folder=place.mp3_dir,
            acx_folder=place.acx_dir,
            tags=plan.tags,
            cover=cover,
            output_format=output_format,
            also_mp3=also_mp3,
            phase=tracker.phase,
            step=tracker.step,
        )
        epub = None
        if readalong is not None:
            epub = readalong.finish(list(files.chapters), folder=files.folder, mp3_dir=files.mp3_dir,
                                    settings=settings, phase=tracker.phase, stem=place.stem)  # fmt: skip
    finally:
        finisher.close()
        if readalong is not None:
            readalong.close()
    _complete_folder(place, plan, request, files, cover, settings)
    result = replace(_result(files, summary.progress, tracker, missing.summary()), readalong_epub=epub,
                     missing_chunks=missing.chunks)  # fmt: skip
    report = qa.write_report(result.output_dir, plan, replace(request, output_name=name), parts_dir, paths, stem=place.stem,
                             always=bool(missing.chunks))  # fmt: skip
    return replace(result, qa_report=report)


def _complete_folder(place: BookPlace, plan: ConversionPlan, request: ConvertRequest, files: BookFiles,
                     cover: Path | None, settings: Settings) -> None:  # fmt: skip
    """The sidecars and cover a library reads beside the audio (library layout only)."""
    if files.m4b is not None:
        marks = [ChapterMark(m.title, m.start_ms, m.end_ms) for m in probe_chapters(files.m4b)]
    else:
        marks = list(plan_chapter_marks([(c.index, c.title, c.duration_ms * 1000) for c in files.chapters],
                                        pause_between_ms=settings.pause_between_chapters_ms))  # fmt: skip
    voice, model = narrator_parts(plan.entry, plan.voice)
    meta = effective_metadata(plan.book.metadata, request.metadata)
    meta = replace(meta, title=plan.tags.title)
    complete_book_folder(place, meta, Narration(plan.tags.narrator, voice, model), marks, cover=cover)


def _chapter_audio(record: MasteredChapter) -> ChapterAudio:
    return ChapterAudio(index=record.number, title=record.title, path=record.m4a, duration_ms=round(record.duration_ms))


def _result(files: BookFiles, rendered: RenderProgress, tracker: _Progress, missing: str) -> ConvertResult:
    duration_s = sum(c.duration_ms for c in files.chapters) / 1000
    tracker.levels(files.levels)
    tracker.phase("done", f"{len(files.chapters)} chapters, {duration_words(duration_s)} of audio"
                          + (f". {missing}" if missing else ""))
    return ConvertResult(
        output_dir=files.folder,
        m4b=files.m4b,
        mp3_dir=files.mp3_dir,
        chapters=files.chapters,
        chunks_total=rendered.chunks_total,
        chunks_cached=rendered.chunks_cached,
        duration_s=duration_s,
        levels_path=files.levels_path,
        levels=files.levels,
        acx_dir=files.acx_dir,
        chunk_starts_ms={str(r.number): [round(v, 2) for v in r.chunk_starts_ms] for r in files.records},
    )
