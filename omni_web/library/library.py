"""The library: where the UI, the API, the CLI and the inbox queue, steer and find books.

One submit checks its idempotency key once, reads the book once (through the shared
:class:`~omni_web.book.cache.BookCache`, so a book the UI has open is not read again) and scans the
job table once (the twin and the names other jobs claimed come from the same scan). Queueing wakes
the worker by itself (the store tells it), so no caller wakes it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omni_web.book import Book
from omni_web.book.cache import BookCache
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import BookError, BookNotFound, JobError, JobExists, OmniWebError, PresetError
from omni_web.jobs import Job, JobStore, QueueControl
from omni_web.library.deletion import JobDeletion
from omni_web.library.fetch import fetch_book
from omni_web.library.files import reported_files
from omni_web.library.intake import keep_book, keep_book_bytes
from omni_web.library.kinds import (
    CATALOG_KEY,
    CONVERT_JOB,
    TEXT_FINGERPRINT_KEY,
    fingerprint_or,
    text_fingerprint,
)
from omni_web.library.notify import Notifier
from omni_web.library.opds import OpdsClient, OpdsEntry, apply_catalog_metadata
from omni_web.library.presets import Preset, PresetBook
from omni_web.library.sources import BookSource, Link, Prepared, Submitted, Upload
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, voice_to_dict
from omni_web.pipeline.claims import OutputClaims
from omni_web.pipeline.fix import FIX_KEY, FixPlan
from omni_web.pipeline.outputs import claim_output_name, plan_output_removal
from omni_web.pipeline.review import REGENERATE_PRIORITY
from omni_web.settings import Settings, load_settings

__all__ = ["Library"]

log = logging.getLogger(__name__)


class Library:
    """Queue, steer and find books over one job store; safe from any thread."""

    def __init__(self, paths: DataPaths, store: JobStore, *, books: BookCache | None = None,
                 notifier: Notifier | None = None) -> None:
        self.paths = paths
        self.jobs = store
        self.books = books if books is not None else BookCache()
        self.notifier = notifier

    @property
    def queue(self) -> QueueControl:
        """Steering for the job queue (priority, order, pauses, samples first)."""
        return QueueControl(self.jobs)

    @property
    def presets(self) -> PresetBook:
        """Saved presets and the rules that pick them."""
        return PresetBook(self.paths.presets_file)

    @property
    def settings(self) -> Settings:
        """The settings as saved now."""
        return load_settings(self.paths)

    # --- submitting ------------------------------------------------------------------------

    def prepare(self, request: ConvertRequest, *, book: Book | None = None) -> Prepared:
        """Check ``request``, read its book (unless given) and scan the jobs once: its twin, and
        its own output name when it has none.

        Raises:
            UnknownModel, BookError (BookNotFound): the request cannot run at all.
        """
        entry = get_entry(request.model_key)
        if not request.book_path.is_file():
            raise BookNotFound(request.book_path, remedy="Upload it again.")
        settings = self.settings
        if book is None:
            book = self.books.load(request.book_path,
                                   options=settings.read_options(self.paths, footnotes=request.footnotes))
        text = text_fingerprint(self.paths)
        jobs = self._conversion_jobs()
        twin = next((job for job, other in jobs
                     if other.same_work_as(request) and fingerprint_or(job, text) == text), None)
        if request.output_name is None:
            output_root = Path(request.output_dir) if request.output_dir else settings.output_path(self.paths)
            request = dataclasses.replace(request, output_layout=settings.output_layout)
            claimed = _job_names(jobs) | OutputClaims(self.paths.output_claims_file).names()  # the CLI's too
            name = claim_output_name(output_root, book, entry, request.voice, layout=request.output_layout,
                                     metadata=request.metadata, claimed=claimed)
            request = dataclasses.replace(request, output_name=name)
        return Prepared(request=request, book=book, twin=twin, text_fingerprint=text)

    def enqueue(self, prepared: Prepared, *, allow_twin: bool = False, priority: int = 0,
                idempotency_key: str | None = None, extra: Mapping[str, Any] | None = None) -> Job:
        """Queue a prepared conversion.

        Raises:
            JobExists: it has a twin (unless ``allow_twin``).
        """
        twin = prepared.twin
        if twin is not None and not allow_twin:
            raise JobExists(twin.id, twin.title, twin.state.value)
        params = {**prepared.request.to_dict(), TEXT_FINGERPRINT_KEY: prepared.text_fingerprint,
                  **(extra or {})}
        return self.jobs.enqueue(
            CONVERT_JOB, params, title=prepared.title, priority=priority, idempotency_key=idempotency_key
        )

    def submit_conversion(
        self,
        request: ConvertRequest,
        *,
        allow_twin: bool = False,
        priority: int = 0,
        idempotency_key: str | None = None,
    ) -> Job:
        """Check the request, give it its own output name and queue it.

        A second call with the same ``idempotency_key`` returns the first call's job.

        Raises:
            JobExists: a job for the same request is already there (unless ``allow_twin``).
            UnknownModel, BookError (BookNotFound), ChapterSelectionError: the request cannot run at all.
        """
        if idempotency_key and (earlier := self.jobs.job_for_key(idempotency_key)) is not None:
            return earlier
        return self.enqueue(
            self.prepare(request), allow_twin=allow_twin, priority=priority, idempotency_key=idempotency_key
        )

    def claim_run_name(self, request: ConvertRequest, book: Book, entry: CatalogEntry) -> ConvertRequest:
        """The request of a command-line run with its own output name: the one the same run claimed
        before, else one no book file, queued job or other run holds (a second voice never overwrites)."""
        settings = self.settings
        output_root = Path(request.output_dir) if request.output_dir else settings.output_path(self.paths)
        request = dataclasses.replace(request, output_layout=settings.output_layout)
        name = OutputClaims(self.paths.output_claims_file).name_for(
            request, output_root, book, entry, claimed=_job_names(self._conversion_jobs()))
        return dataclasses.replace(request, output_name=name)

    def submit_fix(self, request: ConvertRequest, fix: FixPlan, *, title: str) -> Job:
        """Queue a regenerate (see :mod:`omni_web.pipeline.fix`) of the book ``title`` first in line;
        the worker starts it beside a running book of the same server and model (its few requests
        share the batch). The request is the finished book's own, name claimed, so the book is not
        read again here (a click stays quick while a long job loads the machine)."""
        if not request.book_path.is_file():
            raise BookNotFound(request.book_path, remedy="Upload it again.")
        params = {
            **request.to_dict(),
            TEXT_FINGERPRINT_KEY: text_fingerprint(self.paths),
            FIX_KEY: fix.to_dict(),
        }
        return self.jobs.enqueue(CONVERT_JOB, params, title=title, priority=REGENERATE_PRIORITY)

    def intake(
        self,
        source: BookSource,
        *,
        preset: Preset | str | None = None,
        fallback: Preset | str | None = None,
        voice: VoiceChoice | None = None,
        model_key: str | None = None,
        priority: int = 0,
        idempotency_key: str | None = None,
        catalog: Mapping[str, Any] | None = None,
    ) -> Submitted:
        """Queue one book with the settings of a preset, as the CLI, the API, the inbox and multi-upload do.

        An upload or a link is kept in the data root first, after the key is checked (a retried
        POST downloads nothing). The settings come from, first that applies: ``preset`` (a name or
        explicit settings), ``model_key`` (with ``voice``), the first rule matching the book's
        metadata, ``fallback`` (e.g. the inbox's preset).

        Raises:
            PresetError: none of them gives settings, or a named preset does not exist.
            JobExists, UnknownModel, BookError: as :meth:`submit_conversion`.
        """
        if idempotency_key and (earlier := self.jobs.job_for_key(idempotency_key)) is not None:
            return Submitted(earlier, created=False)
        book_path = self._keep(source)
        # A bad book is refused before anything is queued; a library's metadata counts for the rules.
        book = apply_catalog_metadata(
            self.books.load(book_path, options=self.settings.read_options(self.paths)), catalog
        )
        chosen = self._named(preset) or self._named(fallback)
        if preset is None and model_key:
            chosen = Preset(name="", model_key=model_key, voice=voice_to_dict(voice or VoiceChoice.default()))
        elif preset is None:
            chosen = self.presets.pick(book.metadata) or chosen
        if chosen is None:
            raise PresetError(
                f"No settings for '{book.metadata.title or book_path.name}': pick a preset or a "
                "model, or add a rule in Settings that matches this book."
            )
        request = chosen.request_for(book_path, book)
        if voice is not None and preset is None:
            request = dataclasses.replace(request, voice=voice)
        job = self.enqueue(
            self.prepare(request, book=book),
            priority=priority,
            idempotency_key=idempotency_key,
            extra={CATALOG_KEY: dict(catalog)} if catalog else None,
        )
        return Submitted(job, created=True)

    def submit_book(
        self,
        book_path: Path,
        *,
        preset: Preset | str | None = None,
        fallback: Preset | str | None = None,
        voice: VoiceChoice | None = None,
        model_key: str | None = None,
        priority: int = 0,
        idempotency_key: str | None = None,
        catalog: Mapping[str, Any] | None = None,
    ) -> Job:
        """:meth:`intake` of a book file used where it is; returns the job."""
        return self.intake(
            Path(book_path),
            preset=preset,
            fallback=fallback,
            voice=voice,
            model_key=model_key,
            priority=priority,
            idempotency_key=idempotency_key,
            catalog=catalog,
        ).job

    def submit_from_catalog(
        self, entry: OpdsEntry, client: OpdsClient, *, preset: Preset | str | None = None
    ) -> Job:
        """Download a catalog entry's book and queue it with the catalog's authors, series and description."""
        if not entry.acquisition:
            raise BookError(
                f"'{entry.title}' is a section of the catalog, not a book; open it to see its books."
            )
        link = Link(entry.acquisition, username=client.username or None, password=client.password)
        return self.intake(link, preset=preset, catalog=entry.catalog_metadata()).job

    def submit_many(
        self, files: list[Path], *, preset: Preset | str | None = None, model_key: str | None = None,
        voice: VoiceChoice | None = None,
    ) -> list[tuple[str, Job | str]]:
        """Queue one job per file (a multi-upload), each from its own copy in the data root, with
        ``preset``, else ``model_key`` (and ``voice``, else the model's default voice), else the rules.

        Returns (file name, job or the reason it was refused) per file: one bad book never stops the others.
        """
        outcomes: list[tuple[str, Job | str]] = []
        for path in files:
            try:
                kept = keep_book(self.paths, Path(path))
                job = self.submit_book(kept, preset=preset, model_key=model_key, voice=voice)
                outcomes.append((Path(path).name, job))
            except OmniWebError as exc:
                outcomes.append((Path(path).name, str(exc)))
        return outcomes

    def take_from_inbox(self, path: Path) -> str:
        """Queue a settled inbox file (a copy in the data root) with the rules or the inbox's preset."""
        kept = keep_book(self.paths, path)
        return self.submit_book(kept, fallback=self.settings.inbox_preset.strip() or None).id

    def _keep(self, source: BookSource) -> Path:
        if isinstance(source, Upload):
            return keep_book_bytes(self.paths, source.data, source.name)
        if isinstance(source, Link):
            return fetch_book(self.paths, source.url, username=source.username, password=source.password)
        return Path(source)

    def _named(self, preset: Preset | str | None) -> Preset | None:
        return self.presets.get(preset) if isinstance(preset, str) and preset else (preset or None)

    # --- finding and steering ----------------------------------------------------------------

    def _conversion_jobs(self) -> list[tuple[Job, ConvertRequest]]:
        found = []
        for job in self.jobs.list(limit=100_000):
            if job.kind == CONVERT_JOB:
                try:
                    found.append((job, ConvertRequest.from_dict(job.params)))
                except (KeyError, TypeError, ValueError):
                    log.warning("Job %s has unreadable parameters; skipped", job.id)
        return found

    def find_twin(self, request: ConvertRequest) -> Job | None:
        """The newest job that asks for exactly the same audio as ``request``, if any.

        A job queued before a lexicon edit is not a twin: the same request now speaks other words.
        """
        text = text_fingerprint(self.paths)
        return next(
            (
                job
                for job, other in self._conversion_jobs()
                if other.same_work_as(request) and fingerprint_or(job, text) == text
            ),
            None,
        )

    def run_again(self, job_id: str) -> Job:
        """Queue a finished job's conversion again as a new job (its own row and queue time).

        It keeps the finished job's output name, so it writes the same files; finished chunks are
        reused. Other kinds of job are queued again in place. Raises JobNotFound, or JobError for
        a job that is not finished.
        """
        job = self.jobs.get(job_id)
        if not job.state.finished:
            raise JobError(f"'{job.title}' is {job.state.value}; it can run again once it is finished.")
        if job.kind != CONVERT_JOB:
            return self.jobs.rerun(job_id)
        return self.submit_conversion(
            ConvertRequest.from_dict(job.params), allow_twin=True, priority=job.priority
        )

    def plan_job_deletion(self, job_id: str) -> JobDeletion:
        """What deleting a finished job removes: its row and the files it wrote (not yet done).

        Chapter files another job still reports are kept; nothing outside the output folder is
        listed. Raises JobNotFound, or JobError for a job that is not finished.
        """
        job = self.jobs.get(job_id)
        if not job.state.finished:
            raise JobError(f"'{job.title}' is {job.state.value}; cancel it before deleting it.")
        request = ConvertRequest.from_dict(job.params) if job.kind == CONVERT_JOB else None
        root = (
            Path(request.output_dir)
            if request and request.output_dir
            else self.settings.output_path(self.paths)
        )
        others = [
            path
            for other in self.jobs.list(limit=100_000)
            if other.id != job_id
            for path in reported_files(other)
        ]
        removal = plan_output_removal(root, reported_files(job), kept=others)
        return JobDeletion(job=job, files=removal, store=self.jobs)


def _job_names(jobs: list[tuple[Job, ConvertRequest]]) -> set[str]:
    """The output names queued and finished conversions hold."""
    return {request.output_name for _, request in jobs if request.output_name}
