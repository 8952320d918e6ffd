"""The app's long-lived services, wired once: settings, job queue and worker, server manager.

The web UI holds one :class:`AppServices`; its handlers only enqueue or read through it. The CLI
uses the same pieces directly.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from omni_web.backend.companions import ensure_companion_packages
from omni_web.book import load_book
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.errors import BookNotFound
from omni_web.jobs import Job, JobContext, JobStore, JobWorker
from omni_web.paths import DataPaths
from omni_web.pipeline.progress import ConvertProgress
from omni_web.pipeline.request import ConvertRequest
from omni_web.pipeline.serving import convert_on_endpoint, endpoint_for
from omni_web.server import ServerManager
from omni_web.settings import Settings, load_settings, save_settings

__all__ = ["CONVERT_JOB", "AppServices", "build_server_manager", "make_convert_runner"]

log = logging.getLogger(__name__)

CONVERT_JOB = "convert"


def build_server_manager(paths: DataPaths, settings: Settings) -> ServerManager:
    """The server manager, with a start that first installs the model's missing companions."""

    def install_companions(entry: CatalogEntry) -> None:
        ensure_companion_packages(paths, entry)

    return ServerManager(paths, settings, before_start=install_companions)


def make_convert_runner(paths: DataPaths, server: ServerManager):
    """The job runner for ``convert`` jobs: serve the model, render, assemble."""

    def run(job: Job, ctx: JobContext) -> Mapping[str, Any]:
        request = ConvertRequest.from_dict(job.params)
        settings = load_settings(paths)
        server.use_settings(settings)
        entry = get_entry(request.model_key)
        ctx.report(ConvertProgress(phase="starting server", message=f"Getting a server for {entry.label}").to_dict())
        endpoint = endpoint_for(server, entry, paths=paths, api_url=request.api_url)
        ctx.raise_if_cancelled()
        result = convert_on_endpoint(
            request, endpoint, manager=server, paths=paths, settings=settings,
            progress=lambda snapshot: ctx.report(snapshot.to_dict()), cancelled=ctx.cancelled,
        )
        return result.to_dict()

    return run


@dataclasses.dataclass
class AppServices:
    """Everything the UI needs that outlives a request: create once, ``start()``, ``stop()``."""

    paths: DataPaths
    jobs: JobStore
    server: ServerManager
    worker: JobWorker

    @classmethod
    def create(cls, paths: DataPaths) -> AppServices:
        """Wire the services for a data root (folders created, settings read)."""
        paths.ensure()
        server = build_server_manager(paths, load_settings(paths))
        jobs = JobStore(paths.jobs_db)
        worker = JobWorker(jobs, {CONVERT_JOB: make_convert_runner(paths, server)})
        return cls(paths=paths, jobs=jobs, server=server, worker=worker)

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
        """Start the job worker; returns the ids of interrupted jobs it resumes."""
        return self.worker.start()

    def stop(self) -> None:
        """Stop the worker; a running job stays resumable. The server is left as it is."""
        self.worker.stop()

    def submit_conversion(self, request: ConvertRequest) -> Job:
        """Check the request, queue it, and wake the worker.

        Raises:
            UnknownModel, BookError (BookNotFound), ChapterSelectionError: the request cannot run at all.
        """
        get_entry(request.model_key)
        if not request.book_path.is_file():
            raise BookNotFound(request.book_path, remedy="Upload it again.")
        book = load_book(request.book_path)
        title = book.metadata.title or request.book_path.stem
        job = self.jobs.enqueue(CONVERT_JOB, request.to_dict(), title=title)
        self.worker.wake()
        return job
