"""Find or start the server a conversion talks to, and bring a dead managed server back.

The one-model policy itself lives in :class:`~omni_web.server.ServerManager`; this module only
adds what a conversion needs around it: the ``--api-url`` override and a recovery hook for the
renderer.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient
from omni_web.errors import ServerNotRunning
from omni_web.gpu import probe_gpus
from omni_web.paths import DataPaths
from omni_web.pipeline.convert import ConvertResult, ProgressCallback, run_conversion
from omni_web.pipeline.group_serving import convert_on_router
from omni_web.pipeline.request import ConvertRequest
from omni_web.render import Recover, Recovery
from omni_web.retry import NO_RETRY
from omni_web.server import Endpoint, ServerManager
from omni_web.server.router import read_router_health
from omni_web.settings import Settings

__all__ = ["convert_on_endpoint", "endpoint_for", "first_gpu_compute_capability", "make_recover"]

log = logging.getLogger(__name__)

_STOPPED_MID_JOB = (
    "The server was stopped while the job was rendering. Finished chunks are kept: start the server "
    "(or just resume the job) to go on."
)


def first_gpu_compute_capability() -> tuple[int, int] | None:
    """Compute capability of GPU 0, or None without NVML (then the default config is used)."""
    return probe_gpus().compute_capability


def endpoint_for(
    manager: ServerManager,
    entry: CatalogEntry,
    *,
    paths: DataPaths,
    api_url: str | None = None,
    on_log: Callable[[str], None] | None = None,
) -> Endpoint:
    """A healthy endpoint hosting ``entry``: the given URL, or the managed server (started if needed).

    Raises:
        ForeignServer, ServerNotRunning: the URL or a foreign server does not host the model.
        PortTaken, ServerStartError, BootTimeout, BackendError: the managed start failed.
    """
    if api_url:
        remote = ServerManager(paths, dataclasses.replace(manager.settings, remote_url=api_url))
        return remote.ensure_serving(entry)
    return manager.ensure_serving(entry, compute_capability=first_gpu_compute_capability(), on_log=on_log)


def make_recover(manager: ServerManager, endpoint: Endpoint) -> Recover:
    """A renderer hook that restarts our server when it died (see :mod:`omni_web.render.crashes`).

    Only a server this app started is restarted (never a foreign or remote one, nor one the user
    stopped), one restart at a time even when many requests fail together. How many restarts a
    run may take is the renderer's call: it counts crashes against finished chunks.

    Raises:
        ServerNotRunning: the user stopped the server (checked under the manager's lock).
        ServerStartError, BootTimeout: the restart failed.
    """
    lock = threading.Lock()

    def recover(exc: Exception) -> Recovery:
        if not endpoint.owned:
            return Recovery.NONE
        with lock:
            if manager.stop_requested:
                raise ServerNotRunning(_STOPPED_MID_JOB)
            if manager.is_alive():
                return Recovery.ALIVE
            log.warning("The managed server died (%s); restarting it", exc)
            manager.restart(unless_stopped=True)  # re-checks the stop under the manager's own lock
            return Recovery.RESTARTED

    return recover


def convert_on_endpoint(
    request: ConvertRequest,
    endpoint: Endpoint,
    *,
    manager: ServerManager,
    paths: DataPaths,
    settings: Settings,
    progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    book: Book | None = None,
) -> ConvertResult:
    """Run one conversion against ``endpoint``, restarting our server if it dies mid-job.

    A router endpoint (our group, or ``--api-url`` naming a router) goes through
    :func:`~omni_web.pipeline.group_serving.convert_on_router` (concurrency from its ``/health``).
    """
    if endpoint.group or (not endpoint.owned and read_router_health(endpoint.base_url) is not None):
        return convert_on_router(
            request, endpoint, manager=manager, paths=paths, settings=settings,
            progress=progress, cancelled=cancelled, book=book,
        )
    # The renderer owns the speech retries (one policy, always with back-off, crashes handled by
    # the recover hook), so the client makes one attempt per speech request.
    with SpeechClient(endpoint.base_url, speech_retry=NO_RETRY) as client:
        return run_conversion(
            request,
            paths=paths,
            settings=settings,
            client=client,
            recover=make_recover(manager, endpoint),
            progress=progress,
            cancelled=cancelled,
            book=book,
        )
