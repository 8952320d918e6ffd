"""Run one conversion: EPUB → chunk audio (N in flight) → chapter files → m4b / MP3s.

A chapter's file is assembled in a background thread as soon as its last chunk lands, so it is
playable while later chapters render and the GPU never waits for ffmpeg. Every file is named by a
hash of what shapes it, so running the same request again (resume after a cancel, a crash or a
SIGKILL) renders only the chunks and chapters that are missing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from omni_web.assemble import AudioFormat, ChapterAudio, probe_chapters, safe_filename
from omni_web.assemble.metadata import ChapterMark, plan_chapter_marks
from omni_web.book import Book, load_book
from omni_web.cast import DIALOGUE, Cast
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, VoiceKind, check_voice_choice
from omni_web.client.inflight import InFlightController
from omni_web.deliver.folder import complete_book_folder
from omni_web.deliver.layout import BookPlace, OutputLayout, book_place, default_name, narrator_parts
from omni_web.deliver.metadata import effective_metadata
from omni_web.deliver.sidecars import Narration
from omni_web.errors import PoisonChunk, UnknownVoice, VoiceError
from omni_web.gpuwatch import GpuSampler
from omni_web.master import ChapterSpec, LoudnessPreset, MasteredChapter, get_preset, write_work_keys
from omni_web.paths import DataPaths
from omni_web.pipeline.mastering import (
    BookFiles,
    ChapterFinisher,
    chapter_specs,
    credit_specs,
    finish_book,
    request_master_options,
)
from omni_web.pipeline.missing import MissingChunk, MissingChunks
from omni_web.pipeline.plan import ConversionPlan, plan_conversion
from omni_web.pipeline.quality import JobQa, apply_text_edits, load_text_edits, progress_fields
from omni_web.pipeline.readalong import ConversionReadalong, start_readalong
from omni_web.pipeline.request import ConvertRequest
from omni_web.pipeline.tracking import (
    ProgressCallback,
    ProgressTracker,
    finish_phases,
    flow_fields,
    gpu_fields,
)
from omni_web.qa import QaStore
from omni_web.records import JsonRecord
from omni_web.render import (
    RenderItem,
    RenderProgress,
    RenderSummary,
    RetryPolicy,
    chunk_audio_path,
    render_chunks,
)
from omni_web.server.serving import Serving
from omni_web.settings import Settings
from omni_web.text import LexiconStore, Pronouncer, book_identity
from omni_web.timefmt import duration_words
from omni_web.voices import fit_reference
from omni_web.voices.reference import reference_cache_dir

__all__ = ["ConvertResult", "ProgressCallback", "prepare_cast", "prepare_voice", "run_conversion"]

log = logging.getLogger(__name__)

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
            ChapterAudio(
                index=int(row.get("number", 0)),
                title=str(row.get("title", "")),
                path=Path(row["path"]),
                duration_ms=round(float(row.get("duration_s") or 0) * 1000),
            )
            for row in rows
            if isinstance(row, Mapping) and row.get("path")
        )
        return replace(base, chapters=chapters)


def prepare_voice(
    entry: CatalogEntry, voice: VoiceChoice, *, client: SpeechClient, paths: DataPaths
) -> VoiceChoice:
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


def prepare_cast(
    entry: CatalogEntry, cast: Cast | None, *, client: SpeechClient, paths: DataPaths
) -> Cast | None:
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


def _write_cover(book: Book, parts_dir: Path) -> Path | None:
    if book.cover is None:
        return None
    path = parts_dir / f"cover.{book.cover.extension}"
    if not path.is_file():
        path.write_bytes(book.cover.data)
    return path


@dataclass(frozen=True, slots=True)
class _Job:
    """What one request resolves to before any speech request: model, voices, plan, where files go."""

    request: ConvertRequest
    entry: CatalogEntry
    preset: LoudnessPreset
    book: Book
    voice: VoiceChoice
    pronouncer: Pronouncer
    plan: ConversionPlan
    output_format: str
    also_mp3: bool
    out_root: Path
    parts_dir: Path


def _resolve(
    request: ConvertRequest, *, paths: DataPaths, settings: Settings, client: SpeechClient, book: Book | None
) -> _Job:
    """Read the book, check its voices against the server and plan its chunks (reviewer's edits in)."""
    entry = get_entry(request.model_key)
    preset = get_preset(request.loudness or settings.loudness)
    book = (
        book
        if book is not None
        else load_book(request.book_path, options=settings.read_options(paths, footnotes=request.footnotes))
    )
    voice = prepare_voice(entry, request.voice, client=client, paths=paths)
    cast = prepare_cast(entry, request.cast, client=client, paths=paths)
    pronouncer = LexiconStore(paths).pronouncer(book_identity(book))
    plan = plan_conversion(
        book, replace(request, voice=voice, cast=cast), entry, settings, pronouncer=pronouncer
    )
    out_root = Path(request.output_dir) if request.output_dir else settings.output_path(paths)
    parts_dir = out_root / ".parts" / plan.folder_name
    return _Job(
        request=request,
        entry=entry,
        preset=preset,
        book=book,
        voice=voice,
        pronouncer=pronouncer,
        plan=apply_text_edits(plan, load_text_edits(parts_dir)),
        output_format=request.output_format or settings.output_format,
        also_mp3=settings.also_mp3_chapters
        if request.also_mp3_chapters is None
        else request.also_mp3_chapters,
        out_root=out_root,
        parts_dir=parts_dir,
    )


def _concurrency(job: _Job, settings: Settings, serving: Serving | None) -> int | InFlightController:
    """Requests in flight: the request's or the settings' number (the user's wins), else the serving
    handle's controller (the width the server was started with, a router's workers, or found)."""
    if job.request.concurrency:
        return job.request.concurrency
    if serving is None:
        return settings.concurrency or job.entry.default_concurrency
    if settings.concurrency and serving.concurrency() is None:
        return settings.concurrency  # for a router the setting is each worker's batch (its capacity)
    return serving.in_flight(job.entry.default_concurrency)


def _chapter_work(job: _Job) -> tuple[list[RenderItem], list[ChapterSpec]]:
    """The chunks to render and the chapter files to master (ACX's credits around the book)."""
    items, specs = list(job.plan.items), chapter_specs(job.plan)
    if job.preset.acx:
        credit_items, credits = credit_specs(job.plan)
        items, specs = [*credit_items[:1], *items, *credit_items[1:]], [*credits[:1], *specs, *credits[1:]]
    return items, specs


def _cached_chunk(cache_dir: Path, key: str) -> Path | None:
    path = chunk_audio_path(cache_dir, key)
    return path if path.is_file() else None


def _start_finisher(job: _Job, specs: list[ChapterSpec], *, settings: Settings, paths: DataPaths,
                    tracker: ProgressTracker,
                    readalong: ConversionReadalong | None, remaster: Iterable[int]) -> tuple[ChapterFinisher,
                                                                                             Path | None]:
    """The chapter finisher (with the book's cover), told what a resumed run already finished."""
    options = request_master_options(job.request, settings)
    works = {work.number: work for work in job.plan.chapters}
    chunk_paths = {item.key: chunk_audio_path(paths.chunk_cache_dir, item.key) for item in job.plan.items}

    def aligned(record: MasteredChapter) -> None:
        if readalong is not None and record.in_book:
            readalong.chapter_ready(works[record.number], chunk_paths, record.audio(),
                                    chunk_starts_ms=record.chunk_starts_ms)

    def ready(record: MasteredChapter) -> None:
        tracker.chapter_ready(record)
        aligned(record)

    cached_chunk = partial(_cached_chunk, paths.chunk_cache_dir)
    cover = _write_cover(job.plan.book, job.parts_dir)
    write_work_keys(job.parts_dir, specs)  # storage ties the chunks to this book before it is finished
    finisher = ChapterFinisher(specs, job.parts_dir, options, on_state=tracker.chapter_state, on_ready=ready,
                               remaster=remaster,
                               cached_chunk=cached_chunk,
                               m4b_tags=job.plan.tags if job.output_format == "m4b" else None,
                               cover=cover)
    # A resumed job's first progress already shows what is made: cached chunks, finished chapters.
    tracker.found_done(sum(1 for key in {item.key for item in job.plan.items} if cached_chunk(key)),
                       finisher.finished_at_start)
    for record in finisher.finished_at_start:
        aligned(record)
    return finisher, cover


def _render(
    job: _Job,
    items: list[RenderItem],
    *,
    client: SpeechClient,
    serving: Serving | None,
    qa: JobQa,
    tracker: ProgressTracker,
    finisher: ChapterFinisher,
    missing: MissingChunks,
    paths: DataPaths,
    cancelled: Callable[[], bool],
    retry: RetryPolicy,
    flow: InFlightController | None,
) -> RenderSummary:
    """Render every missing chunk while the serving handle watches the server; QA is closed after.

    With ``flow``, every speech request of the job (QA retakes too) is told to it through the client."""

    def synthesize(item: RenderItem) -> bytes:
        speech = SpeechRequest(text=item.text, voice=item.voice or job.voice, language=job.request.language)
        return client.speech(job.entry, speech).audio

    def gave_up(item: RenderItem, error: PoisonChunk) -> None:
        missing.failed(item, error)
        tracker.gave_up(chunk.line for chunk in missing.chunks)

    watch = (
        serving.watch(on_status=tracker.server_status, cancelled=cancelled)
        if serving is not None
        else contextlib.nullcontext()
    )
    metered = client.metered(flow) if flow is not None else contextlib.nullcontext()
    # Only a server we started runs on this machine's GPU: its utilisation and memory over the job.
    sampler = GpuSampler() if serving is not None and serving.endpoint.owned else None
    if sampler is not None and not sampler.start():
        sampler = None
    try:
        with watch, metered:
            return render_chunks(
                items,
                synthesize,
                cache_dir=paths.chunk_cache_dir,
                concurrency=qa.render_concurrency,
                cancelled=cancelled,
                progress=lambda p: tracker.render(
                    p, {**progress_fields(qa), **flow_fields(flow), **gpu_fields(sampler, p.realtime_factor)}
                ),
                on_done=finisher.chunk_done,
                recover=serving.recover if serving is not None else None,
                retry=retry,
                check=qa.check,
                on_failed=gave_up,
            )
    finally:
        qa.close()
        if sampler is not None:
            tracker.render_extra(gpu_fields(sampler, None, final=sampler.stop()))


def _place(job: _Job) -> tuple[str, BookPlace]:
    """The book's file name and folder; a job's own name (claimed when it was queued) keeps two jobs of one book apart."""
    layout = OutputLayout(job.request.output_layout)
    plan = job.plan
    name = job.request.output_name or (
        default_name(plan.tags, plan.entry, plan.voice, layout)
        if layout is OutputLayout.LIBRARY
        else safe_filename(plan.tags.title, fallback="audiobook")
    )
    return name, book_place(job.out_root, plan.tags, name, layout=layout, mp3_only=job.output_format == "mp3")


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
    # Kept with the request (and so with its QA report): a regenerate masters as this run did.
    request = request.with_mastering(settings)
    settings = request.mastering_settings(settings)
    job = _resolve(request, paths=paths, settings=settings, client=client, book=book)
    plan = job.plan
    tracker = ProgressTracker(plan, progress, finish_phases=finish_phases(job.output_format, job.also_mp3,
                                                                          len(plan.chapters)))
    job.parts_dir.mkdir(parents=True, exist_ok=True)
    concurrency = _concurrency(job, settings, serving)
    qa = JobQa.for_job(request, settings, entry=job.entry, voice=job.voice, client=client, paths=paths,
                       concurrency=concurrency, language=request.language or job.book.metadata.language,
                       book=job.book, pronouncer=job.pronouncer)
    readalong = start_readalong(request, plan, settings, paths)
    items, specs = _chapter_work(job)
    finisher, cover = _start_finisher(job, specs, settings=settings, paths=paths, tracker=tracker,
                                      readalong=readalong, remaster=remaster)
    shown = concurrency() if callable(concurrency) else concurrency
    tracker.phase("rendering",
                  f"{len(plan.chapters)} chapters, {tracker.doc.words:,} words, {shown} requests in flight")
    missing = MissingChunks(job.parts_dir, AudioFormat(job.entry.sample_rate_hz, job.entry.channels),
                            QaStore(paths.chunk_cache_dir), qa_level=qa.options.level.value,
                            chunk_done=finisher.chunk_done)
    try:
        summary = _render(job, items, client=client, serving=serving, qa=qa, tracker=tracker,
                          finisher=finisher,
                          missing=missing, paths=paths, cancelled=cancelled, retry=retry,
                          flow=concurrency if isinstance(concurrency, InFlightController) else None)
        tracker.phase("mastering", "Mastering and encoding the last chapters")
        name, place = _place(job)
        files = finish_book(finisher, place=place, tags=plan.tags, cover=cover,
                            output_format=job.output_format,
                            also_mp3=job.also_mp3, phase=tracker.phase, step=tracker.step)
        epub = None
        if readalong is not None:
            epub = readalong.finish(list(files.chapters), place=place, mp3_dir=files.mp3_dir,
                                    settings=settings,
                                    phase=tracker.phase)
    finally:
        finisher.close()
        if readalong is not None:
            readalong.close()
    _complete_folder(place, plan, request, files, cover, settings)
    result = replace(_result(files, summary.progress, tracker, missing.summary()), readalong_epub=epub,
                     missing_chunks=missing.chunks)
    report = qa.write_report(result.output_dir, plan, replace(request, output_name=name), job.parts_dir,
                             paths,
                             stem=place.stem, always=bool(missing.chunks))
    return replace(result, qa_report=report)


def _complete_folder(
    place: BookPlace,
    plan: ConversionPlan,
    request: ConvertRequest,
    files: BookFiles,
    cover: Path | None,
    settings: Settings,
) -> None:
    """The sidecars and cover a library reads beside the audio (library layout only)."""
    if files.m4b is not None:
        marks = [ChapterMark(m.title, m.start_ms, m.end_ms) for m in probe_chapters(files.m4b)]
    else:
        marks = list(
            plan_chapter_marks(
                [(c.index, c.title, c.duration_ms * 1000) for c in files.chapters],
                pause_between_ms=settings.pause_between_chapters_ms,
            )
        )
    voice, model = narrator_parts(plan.entry, plan.voice)
    meta = effective_metadata(plan.book.metadata, request.metadata)
    meta = replace(meta, title=plan.tags.title)
    complete_book_folder(place, meta, Narration(plan.tags.narrator, voice, model), marks, cover=cover)


def _result(
    files: BookFiles, rendered: RenderProgress, tracker: ProgressTracker, missing: str
) -> ConvertResult:
    duration_s = sum(c.duration_ms for c in files.chapters) / 1000
    tracker.levels(files.levels)
    tracker.phase(
        "done",
        f"{len(files.chapters)} chapters, {duration_words(duration_s)} of audio"
        + (f". {missing}" if missing else ""),
    )
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
