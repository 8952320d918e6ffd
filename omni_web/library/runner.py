"""The job runner for ``convert`` jobs: serve the model, render, assemble, deliver."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omni_web.book import load_book
from omni_web.cast.design import design_voices, pending_designs
from omni_web.catalog import get_entry
from omni_web.deliver.abs_config import load_abs_config
from omni_web.deliver.abs_delivery import deliver_after_job
from omni_web.jobs import Job, JobContext, JobRunner, QueueControl
from omni_web.library.kinds import ConvertExtras
from omni_web.library.opds import apply_catalog_metadata
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertProgress, ConvertRequest, convert_served, select_chapters, serving_for
from omni_web.server import ServerManager
from omni_web.settings import load_settings
from omni_web.voices import VoiceLibrary

__all__ = ["HAND_OFF_LEAD_S", "make_convert_runner", "sample_request"]

# How long before a book's render ends the next book may start preparing (see _hand_off_when_draining).
HAND_OFF_LEAD_S = 10.0
_WORDS_PER_MINUTE = 150  # a narrator's pace, to turn a sample's minutes into chapters


def sample_request(request: ConvertRequest, *, minutes: float = 0.0) -> ConvertRequest:
    """A samples-first pass of ``request``: its first chapter, in its own "(sample)" file.

    With ``minutes``, as many chapters from the start as make at least that much speech (at
    ~150 words a minute; whole chapters, so a short prologue does not make the whole sample). The
    chapters' chunks and mastered files are the ones the full run makes, so it reuses them.
    """
    book = load_book(request.book_path)
    chosen = select_chapters(book, request.chapters)
    taken, words = [], 0
    for chapter in chosen:
        taken.append(chapter)
        words += chapter.word_count
        if words >= minutes * _WORDS_PER_MINUTE:
            break
    numbers = tuple(i for i, chapter in enumerate(book.chapters, start=1) if any(chapter is t for t in taken))
    name = f"{request.output_name} (sample)" if request.output_name else None
    return dataclasses.replace(request, chapters=numbers, output_name=name, readalong=False,
                               also_mp3_chapters=False)


def _hand_off_when_draining(ctx: JobContext, in_flight: int,
                            lead_s: float = HAND_OFF_LEAD_S) -> Callable[[ConvertProgress], None]:
    """A progress sink that hands the server on once no chunk is left to send (the last ones are
    in flight) or the render is due to end within ``lead_s``: the next book's preparation (book,
    plan, voice check, a second or two) then overlaps this book's tail, and its first chunks fill
    the slots as this book's last ones leave."""

    def sink(snapshot: ConvertProgress) -> None:
        ctx.report(snapshot.to_dict())
        # A given-up chunk is not left.
        left = snapshot.chunks_total - snapshot.chunks_done - snapshot.chunks_failed
        near = left <= in_flight or (snapshot.eta_s is not None and snapshot.eta_s <= lead_s)
        if snapshot.phase not in ("preparing", "starting server") and snapshot.chunks_total and near:
            ctx.hand_off()

    return sink


def _design_cast_voices(
    request: ConvertRequest, server: ServerManager, paths: DataPaths, ctx: JobContext
) -> None:
    """Designed character voices the cast still lacks, made on VoiceDesign before the book's model
    is served (one server switch for all of them)."""
    designs = pending_designs(request.cast)
    if not designs:
        return

    def told(done: int, total: int, who: str) -> None:
        ctx.report(
            ConvertProgress(
                phase="starting server", message=f"Designed {done}/{total} character voices ({who})"
            ).to_dict()
        )

    ctx.report(
        ConvertProgress(
            phase="starting server",
            message=f"Designing {len(designs)} character voices with Qwen3-TTS VoiceDesign",
        ).to_dict()
    )
    design_voices(
        designs,
        VoiceLibrary(paths),
        progress=told,
        open_client=lambda entry: serving_for(server, entry, api_url=request.api_url).open_client(),
    )
    ctx.raise_if_cancelled()


def make_convert_runner(paths: DataPaths, server: ServerManager) -> JobRunner:
    """The job runner for ``convert`` jobs: serve the model, render, assemble."""

    def run(job: Job, ctx: JobContext) -> Mapping[str, Any]:
        request = ConvertRequest.from_dict(job.params)
        if job.is_sample_run:
            request = sample_request(request, minutes=QueueControl(ctx.store).sample_minutes)
        settings = load_settings(paths)
        server.use_settings(settings)
        entry = get_entry(request.model_key)
        # Keep what an earlier run reported (a resume shows its cached chunks, not 0/0).
        before = ConvertProgress.from_dict(job.progress)
        ctx.report(
            dataclasses.replace(
                before, phase="starting server", message=f"Getting a server for {entry.label}"
            ).to_dict()
        )
        _design_cast_voices(request, server, paths, ctx)
        serving = serving_for(server, entry, api_url=request.api_url)
        ctx.raise_if_cancelled()
        catalog = ConvertExtras.from_dict(job.params).catalog_metadata
        book = None
        if catalog:
            options = settings.read_options(paths, footnotes=request.footnotes)
            book = apply_catalog_metadata(load_book(request.book_path, options=options), catalog)
        in_flight = request.concurrency or settings.concurrency or entry.default_concurrency
        result = convert_served(
            request,
            serving,
            paths=paths,
            settings=settings,
            book=book,
            progress=_hand_off_when_draining(ctx, in_flight),
            cancelled=ctx.cancelled,
        )
        # A step after the book: a failed delivery is recorded for the job's Retry, never raised.
        output_root = Path(request.output_dir) if request.output_dir else settings.output_path(paths)
        deliver_after_job(paths, load_abs_config(paths), job.id, result.output_dir, output_root=output_root)
        return result.to_dict()

    return run
