"""The app's long-lived services, wired once: settings, job queue and worker, server manager.

The web UI holds one :class:`AppServices`; its handlers only enqueue or read through it. The CLI
uses the same pieces directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omni_web.backend.companions import ensure_companion_packages
from omni_web.book import load_book
from omni_web.book.cache import BookCache
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import VoiceChoice
from omni_web.deliver.abs_config import load_abs_config
from omni_web.deliver.abs_delivery import deliver_after_job
from omni_web.errors import BookError, BookNotFound, JobError, JobExists, OmniWebError, PresetError
from omni_web.jobs import Job, JobContext, JobStore, JobWorker, QueueControl
from omni_web.jobs.fetch import fetch_book
from omni_web.jobs.files import reported_files
from omni_web.jobs.inbox import InboxWatcher
from omni_web.jobs.intake import keep_book
from omni_web.jobs.notify import Notifier, Targets, split_urls
from omni_web.jobs.opds import OpdsClient, OpdsEntry, apply_catalog_metadata
from omni_web.jobs.presets import Preset, PresetBook
from omni_web.lan import ui_urls
from omni_web.paths import DataPaths
from omni_web.pipeline.claims import OutputClaims
from omni_web.pipeline.fix import FIX_KEY, FixPlan, is_fix
from omni_web.pipeline.outputs import OutputRemoval, claim_output_name, plan_output_removal
from omni_web.pipeline.plan import select_chapters
from omni_web.pipeline.progress import ConvertProgress
from omni_web.pipeline.request import ConvertRequest, voice_to_dict
from omni_web.pipeline.review import REGENERATE_PRIORITY
from omni_web.pipeline.serving import convert_served, serving_for
from omni_web.records import JsonRecord
from omni_web.server import ServerManager
from omni_web.settings import Settings, load_settings, save_settings
from omni_web.text.store import lexicon_dir
from omni_web.voices.on_server import ServerVoices

__all__ = ["CONVERT_JOB", "AppServices", "JobDeletion", "build_server_manager", "make_convert_runner",
           "same_server_work", "sample_request"]

log = logging.getLogger(__name__)

CONVERT_JOB = "convert"
# How long before a book's render ends the next book may start preparing (see _hand_off_when_draining).
HAND_OFF_LEAD_S = 10.0
_WORDS_PER_MINUTE = 150  # a narrator's pace, to turn a sample's minutes into chapters
# Stored beside a conversion's request in the job's params (see AppServices.find_twin).
TEXT_FINGERPRINT_KEY = "text_fingerprint"
# A library's metadata for the book (authors, series, description), kept beside the request.
CATALOG_KEY = "catalog_metadata"


@dataclasses.dataclass(frozen=True, slots=True)
class ConvertExtras(JsonRecord):
    """What a conversion job's params hold beside its request (the keys above; None: not stored)."""

    text_fingerprint: str | None = None
    catalog_metadata: Mapping[str, Any] | None = None


def build_server_manager(paths: DataPaths, settings: Settings) -> ServerManager:
    """The server manager, with a start that first installs the model's missing companions."""

    def install_companions(entry: CatalogEntry) -> None:
        ensure_companion_packages(paths, entry)

    return ServerManager(paths, settings, before_start=install_companions)


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


def _fingerprint_or(job: Job, default: str) -> str:
    """The lexicon fingerprint the job was queued with; ``default`` for a job stored without one."""
    stored = ConvertExtras.from_dict(job.params).text_fingerprint
    return default if stored is None else stored


def same_server_work(running: Job, following: Job) -> bool:
    """Whether ``following`` may start while ``running`` finishes: both convert on the same server
    with the same model, so starting it changes nothing for the running job's last requests."""
    if running.kind != CONVERT_JOB or following.kind != CONVERT_JOB:
        return False
    mine, theirs = ConvertRequest.read(running.params), ConvertRequest.read(following.params)
    return (mine.model_key, mine.api_url) == (theirs.model_key, theirs.api_url)


def _hand_off_when_draining(ctx: JobContext, in_flight: int, lead_s: float = HAND_OFF_LEAD_S):
    """A progress sink that hands the server on once no chunk is left to send (the last ones are
    in flight) or the render is due to end within ``lead_s``: the next book's preparation (book,
    plan, voice check, a second or two) then overlaps this book's tail, and its first chunks fill
    the slots as this book's last ones leave."""

    def sink(snapshot: ConvertProgress) -> None:
        ctx.report(snapshot.to_dict())
        left = snapshot.chunks_total - snapshot.chunks_done - snapshot.chunks_failed  # a given-up chunk is not left
        near = left <= in_flight or (snapshot.eta_s is not None and snapshot.eta_s <= lead_s)
        if snapshot.phase not in ("preparing", "starting server") and snapshot.chunks_total and near:
            ctx.hand_off()

    return sink


def make_convert_runner(paths: DataPaths, server: ServerManager):
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
        ctx.report(dataclasses.replace(before, phase="starting server",
                                       message=f"Getting a server for {entry.label}").to_dict())
        serving = serving_for(server, entry, api_url=request.api_url)
        ctx.raise_if_cancelled()
        catalog = ConvertExtras.from_dict(job.params).catalog_metadata
        book = apply_catalog_metadata(load_book(request.book_path, options=settings.read_options(paths, footnotes=request.footnotes)), catalog) if catalog else None
        result = convert_served(
            request, serving, paths=paths, settings=settings, book=book,
            progress=_hand_off_when_draining(ctx, request.concurrency or settings.concurrency
                                             or entry.default_concurrency),
            cancelled=ctx.cancelled,
        )
        # A step after the book: a failed delivery is recorded for the job's Retry, never raised.
        deliver_after_job(paths, load_abs_config(paths), job.id, result.output_dir,
                          output_root=Path(request.output_dir) if request.output_dir else settings.output_path(paths))
        return result.to_dict()

    return run


def notify_targets(settings: Settings) -> Targets:
    """The notification targets the settings name; file links use the UI's first LAN address."""
    return Targets(webhooks=split_urls(settings.webhook_urls), apprise=split_urls(settings.apprise_urls),
                   base_url=ui_urls(settings.web_host, settings.web_port)[0])


@dataclasses.dataclass
class AppServices:
    """Everything the UI needs that outlives a request: create once, ``start()``, ``stop()``."""

    paths: DataPaths
    jobs: JobStore
    server: ServerManager
    worker: JobWorker
    inbox: InboxWatcher | None = None
    notifier: Notifier | None = None
    # The books the UI has open, parsed once per file version (not on every event that needs one).
    books: BookCache = dataclasses.field(default_factory=BookCache)

    @property
    def server_voices(self) -> ServerVoices:
        """Voice listing, upload and deletion on a server (the UI opens no client of its own)."""
        return ServerVoices(self.paths)

    @property
    def queue(self) -> QueueControl:
        """Steering for the job queue (priority, order, pauses, samples first)."""
        return QueueControl(self.jobs)

    @classmethod
    def create(cls, paths: DataPaths) -> AppServices:
        """Wire the services for a data root (folders created, settings read)."""
        paths.ensure()
        server = build_server_manager(paths, load_settings(paths))
        jobs = JobStore(paths.jobs_db)
        notifier = Notifier(lambda: notify_targets(load_settings(paths)), lambda: load_settings(paths).output_path(paths))
        worker = JobWorker(jobs, {CONVERT_JOB: make_convert_runner(paths, server)}, overlap=same_server_work,
                           on_finished=notifier.job_finished, urgent=is_fix)
        services = cls(paths=paths, jobs=jobs, server=server, worker=worker, notifier=notifier)
        services.inbox = InboxWatcher(lambda: load_settings(paths).inbox_path(paths), services.take_from_inbox)
        return services

    @property
    def settings(self) -> Settings:
        """The settings as saved now (re-read, so every browser sees the same values)."""
        return load_settings(self.paths)

    def save_settings(self, settings: Settings) -> Settings:
        """Validate, persist and apply new settings."""
        save_settings(self.paths, settings)
        self.server.use_settings(settings)
        return settings

    def start(self) -> list[str]:
        """Start the job worker and the inbox; returns the ids of interrupted jobs the worker resumes."""
        if self.inbox is not None:
            self.inbox.start()
        return self.worker.start()

    def stop(self) -> None:
        """Stop the inbox and the worker; a running job stays resumable. The server is left as it is."""
        if self.inbox is not None:
            self.inbox.stop()
        self.worker.stop()

    def take_from_inbox(self, path: Path) -> str:
        """Queue a settled inbox file (a copy in the data root) with the rules or the inbox's preset."""
        kept = keep_book(self.paths, path)
        return self.submit_book(kept, fallback=self.settings.inbox_preset.strip() or None).id

    def submit_conversion(self, request: ConvertRequest, *, allow_twin: bool = False, priority: int = 0,
                          idempotency_key: str | None = None, extra: Mapping[str, Any] | None = None) -> Job:
        """Check the request, give it its own output name, queue it, and wake the worker.

        A second call with the same ``idempotency_key`` returns the first call's job.

        Raises:
            JobExists: a job for the same request is already there (unless ``allow_twin``).
            UnknownModel, BookError (BookNotFound), ChapterSelectionError: the request cannot run at all.
        """
        if idempotency_key and (earlier := self.jobs.job_for_key(idempotency_key)) is not None:
            return earlier
        entry = get_entry(request.model_key)
        if not request.book_path.is_file():
            raise BookNotFound(request.book_path, remedy="Upload it again.")
        twin = None if allow_twin else self.find_twin(request)
        if twin is not None:
            raise JobExists(twin.id, twin.title, twin.state.value)
        book = load_book(request.book_path, options=self.settings.read_options(self.paths, footnotes=request.footnotes))
        title = book.metadata.title or request.book_path.stem
        if request.output_name is None:
            output_root = Path(request.output_dir) if request.output_dir else self.settings.output_path(self.paths)
            request = dataclasses.replace(request, output_layout=self.settings.output_layout)
            name = claim_output_name(output_root, book, entry, request.voice, layout=request.output_layout,
                                     metadata=request.metadata, claimed=self._claimed_names())  # fmt: skip
            request = dataclasses.replace(request, output_name=name)
        params = {**request.to_dict(), TEXT_FINGERPRINT_KEY: self._text_fingerprint(), **(extra or {})}
        job = self.jobs.enqueue(CONVERT_JOB, params, title=title, priority=priority, idempotency_key=idempotency_key)
        self.worker.wake()
        return job

    def submit_fix(self, request: ConvertRequest, fix: FixPlan, *, title: str) -> Job:
        """Queue a regenerate (see :mod:`omni_web.pipeline.fix`) of the book ``title`` first in line;
        the worker starts it beside a running book of the same server and model (its few requests
        share the batch). The request is the finished book's own, name claimed, so the book is not
        read again here (a click stays quick while a long job loads the machine)."""
        if not request.book_path.is_file():
            raise BookNotFound(request.book_path, remedy="Upload it again.")
        params = {**request.to_dict(), TEXT_FINGERPRINT_KEY: self._text_fingerprint(), FIX_KEY: fix.to_dict()}
        job = self.jobs.enqueue(CONVERT_JOB, params, title=title, priority=REGENERATE_PRIORITY)
        self.worker.wake()
        return job

    @property
    def presets(self) -> PresetBook:
        """Saved presets and the rules that pick them."""
        return PresetBook(self.paths.presets_file)

    def submit_book(self, book_path: Path, *, preset: Preset | str | None = None, fallback: Preset | str | None = None,
                    voice: VoiceChoice | None = None, model_key: str | None = None, priority: int = 0,
                    idempotency_key: str | None = None, catalog: Mapping[str, Any] | None = None) -> Job:
        """Queue one book with the settings of a preset, as the CLI, the API, the inbox and multi-upload do.

        The settings come from, first that applies: ``preset`` (a name or explicit settings),
        ``model_key`` (with ``voice``), the first rule matching the book's metadata, ``fallback``
        (e.g. the inbox's preset).

        Raises:
            PresetError: none of them gives settings, or a named preset does not exist.
            JobExists, UnknownModel, BookError: as :meth:`submit_conversion`.
        """
        if idempotency_key and (earlier := self.jobs.job_for_key(idempotency_key)) is not None:
            return earlier
        # A bad book is refused before anything is queued; a library's metadata counts for the rules.
        book = apply_catalog_metadata(load_book(Path(book_path), options=self.settings.read_options(self.paths)), catalog)
        chosen = self._named(preset) or self._named(fallback)
        if preset is None and model_key:
            chosen = Preset(name="", model_key=model_key, voice=voice_to_dict(voice or VoiceChoice.default()))
        elif preset is None:
            chosen = self.presets.pick(book.metadata) or chosen
        if chosen is None:
            raise PresetError(f"No settings for '{book.metadata.title or Path(book_path).name}': pick a preset or a "
                              "model, or add a rule in Settings that matches this book.")
        request = chosen.request_for(Path(book_path), book)
        if voice is not None and preset is None:
            request = dataclasses.replace(request, voice=voice)
        return self.submit_conversion(request, priority=priority, idempotency_key=idempotency_key,
                                      extra={CATALOG_KEY: dict(catalog)} if catalog else None)

    def submit_from_catalog(self, entry: OpdsEntry, client: OpdsClient, *, preset: Preset | str | None = None) -> Job:
        """Download a catalog entry's book and queue it with the catalog's authors, series and description."""
        if not entry.acquisition:
            raise BookError(f"'{entry.title}' is a section of the catalog, not a book; open it to see its books.")
        path = fetch_book(self.paths, entry.acquisition, username=client.username or None, password=client.password)
        return self.submit_book(path, preset=preset, catalog=entry.catalog_metadata())

    def submit_many(self, files: list[Path], *, preset: Preset | str | None = None) -> list[tuple[str, Job | str]]:
        """Queue one job per file (a multi-upload), each from its own copy in the data root.

        Returns (file name, job or the reason it was refused) per file: one bad book never stops the others.
        """
        outcomes: list[tuple[str, Job | str]] = []
        for path in files:
            try:
                outcomes.append((Path(path).name, self.submit_book(keep_book(self.paths, Path(path)), preset=preset)))
            except OmniWebError as exc:
                outcomes.append((Path(path).name, str(exc)))
        return outcomes

    def _named(self, preset: Preset | str | None) -> Preset | None:
        return self.presets.get(preset) if isinstance(preset, str) and preset else (preset or None)

    def _text_fingerprint(self) -> str:
        """Changes whenever a pronunciation lexicon changes (what is spoken, not what is asked)."""
        root = lexicon_dir(self.paths)
        files = sorted(root.rglob("*")) if root.is_dir() else []
        facts = [(str(p.relative_to(root)), p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.is_file()]
        return hashlib.sha256(repr(facts).encode()).hexdigest()[:16]

    def _conversion_jobs(self) -> list[tuple[Job, ConvertRequest]]:
        found = []
        for job in self.jobs.list(limit=100_000):
            if job.kind == CONVERT_JOB:
                try:
                    found.append((job, ConvertRequest.from_dict(job.params)))
                except (KeyError, TypeError, ValueError):
                    log.warning("Job %s has unreadable parameters; skipped", job.id)
        return found

    def _claimed_names(self) -> set[str]:
        names = {request.output_name for _, request in self._conversion_jobs() if request.output_name}
        return names | OutputClaims(self.paths.output_claims_file).names()  # the command line's

    def find_twin(self, request: ConvertRequest) -> Job | None:
        """The newest job that asks for exactly the same audio as ``request``, if any.

        A job queued before a lexicon edit is not a twin: the same request now speaks other words.
        """
        text = self._text_fingerprint()
        return next((job for job, other in self._conversion_jobs()
                     if other.same_work_as(request) and _fingerprint_or(job, text) == text), None)

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
            self.jobs.rerun(job_id)
            self.worker.wake()
            return self.jobs.get(job_id)
        return self.submit_conversion(ConvertRequest.from_dict(job.params), allow_twin=True, priority=job.priority)

    def plan_job_deletion(self, job_id: str) -> JobDeletion:
        """What deleting a finished job removes: its row and the files it wrote (not yet done).

        Chapter files another job still reports are kept; nothing outside the output folder is
        listed. Raises JobNotFound, or JobError for a job that is not finished.
        """
        job = self.jobs.get(job_id)
        if not job.state.finished:
            raise JobError(f"'{job.title}' is {job.state.value}; cancel it before deleting it.")
        request = ConvertRequest.from_dict(job.params) if job.kind == CONVERT_JOB else None
        root = Path(request.output_dir) if request and request.output_dir else self.settings.output_path(self.paths)
        others = [path for other in self.jobs.list(limit=100_000) if other.id != job_id
                  for path in reported_files(other)]
        removal = plan_output_removal(root, reported_files(job), kept=others)
        return JobDeletion(job=job, files=removal, store=self.jobs)


@dataclasses.dataclass(frozen=True)
class JobDeletion:
    """A planned deletion of one job and its files (see :meth:`AppServices.plan_job_deletion`)."""

    job: Job
    files: OutputRemoval
    store: JobStore

    @property
    def summary(self) -> str:
        """One line for the confirm: how many files, how big, where."""
        count = len(self.files.files)
        if not count:
            return f"Delete the job '{self.job.title}'. It has no files left to remove."
        noun = "file" if count == 1 else "files"
        return (f"Delete the job '{self.job.title}' and its {count} {noun} ({self.files.size_str}) "
                f"under {self.files.output_root}. The rendered chunks stay cached, so a new job of "
                "the same book is fast.")

    def execute(self) -> int:
        """Forget the job, then remove its files; returns the number of files removed."""
        self.store.delete(self.job.id)
        return self.files.execute()
