"""The app's long-lived services, wired once: settings, the library and its worker, the server manager.

The web UI holds one :class:`AppServices`; its handlers only queue or read through its
:class:`~omni_web.library.Library`. The CLI uses the same pieces directly. Nothing here decides
anything: each piece's own module does.
"""

from __future__ import annotations

import dataclasses
import logging

from omni_web.backend.companions import ensure_companion_packages
from omni_web.book.cache import BookCache
from omni_web.catalog import CatalogEntry
from omni_web.farm import FarmRegistry, farm_in_use
from omni_web.jobs import JobStore, JobWorker
from omni_web.lan import ui_urls
from omni_web.library import (
    CONVERT_JOB,
    InboxWatcher,
    Library,
    Notifier,
    Targets,
    is_fix,
    make_convert_runner,
    same_server_work,
    split_urls,
)
from omni_web.paths import DataPaths
from omni_web.server import RemoteFleet, ServerManager
from omni_web.settings import Settings, load_settings, save_settings
from omni_web.voices.on_server import ServerVoices

__all__ = ["AppServices", "build_server_manager", "notify_targets"]

log = logging.getLogger(__name__)


def build_server_manager(paths: DataPaths, settings: Settings) -> ServerManager:
    """The server manager, with a start that first installs the model's missing companions."""

    def install_companions(entry: CatalogEntry) -> None:
        ensure_companion_packages(paths, entry)

    # With a farm token made, one GPU is served behind the router too: boxes join it mid-book.
    # Their crashes count for the renderer as its own workers' do; with GPUs "none" they are all of it.
    farm = FarmRegistry(paths, lambda: None)
    fleet = RemoteFleet(in_use=lambda: farm_in_use(paths), deaths=farm.worker_crashes,
                        serve=lambda entry: farm.serve_unrouted(entry.key))
    return ServerManager(paths, settings, before_start=install_companions, fleet=fleet)


def notify_targets(settings: Settings) -> Targets:
    """The notification targets the settings name; file links use the UI's first LAN address."""
    return Targets(webhooks=split_urls(settings.webhook_urls), apprise=split_urls(settings.apprise_urls),
                   base_url=ui_urls(settings.web_host, settings.web_port)[0])


@dataclasses.dataclass
class AppServices:
    """Everything the UI needs that outlives a request: create once, ``start()``, ``stop()``."""

    paths: DataPaths
    library: Library
    server: ServerManager
    worker: JobWorker
    inbox: InboxWatcher | None = None

    @property
    def jobs(self) -> JobStore:
        """The job store the library queues into (read-only use: the library writes)."""
        return self.library.jobs

    @property
    def books(self) -> BookCache:
        """The books the UI has open, parsed once per file version (shared with the library's submits)."""
        return self.library.books

    @property
    def notifier(self) -> Notifier | None:
        """Where finished jobs are told (webhooks, Apprise)."""
        return self.library.notifier

    @property
    def server_voices(self) -> ServerVoices:
        """Voice listing, upload and deletion on a server (the UI opens no client of its own)."""
        return ServerVoices(self.paths)

    @classmethod
    def create(cls, paths: DataPaths) -> AppServices:
        """Wire the services for a data root (folders created, settings read)."""
        paths.ensure()
        server = build_server_manager(paths, load_settings(paths))
        jobs = JobStore(paths.jobs_db)
        notifier = Notifier(lambda: notify_targets(load_settings(paths)),
                            lambda: load_settings(paths).output_path(paths))
        worker = JobWorker(jobs, {CONVERT_JOB: make_convert_runner(paths, server)}, overlap=same_server_work,
                           on_finished=notifier.job_finished, urgent=is_fix)
        library = Library(paths, jobs, notifier=notifier)
        inbox = InboxWatcher(lambda: load_settings(paths).inbox_path(paths), library.take_from_inbox)
        return cls(paths=paths, library=library, server=server, worker=worker, inbox=inbox)

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
