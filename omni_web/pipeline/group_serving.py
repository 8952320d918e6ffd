"""What a conversion does differently when its endpoint is the SGLang-Omni router (a server group).

- **Concurrency** follows the group: the sum over routable workers of (batch + 1), where batch is
  the per-server setting or the catalog default; :class:`GroupCapacity` re-reads the router's
  ``/health`` while the job runs, so a worker that joins or leaves changes it (router doc 12:
  B × N + N keeps every GPU busy; more only queues inside the workers).
- **Reference clips** go inline (base64), never as uploaded voices (which pin to one worker), and
  are re-encoded so the JSON body stays under the router's 1 MiB metadata limit (a bigger body
  is pinned to the voice owner too, router doc 7).
- **Faults**: a dead worker's in-flight chunks come back 502 and the renderer retries them (the
  router sends them elsewhere). 503 ``no eligible upstream`` (nothing routable) makes the
  recover hook wait for the group with a clear status instead of failing chunks one by one.
  :class:`GroupWatch` restarts our own workers that die, while the job runs.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from omni_web.book import Book
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import SpeechClient, VoiceChoice, VoiceKind
from omni_web.errors import ServerNotRunning
from omni_web.paths import DataPaths
from omni_web.pipeline.convert import ConvertResult, ProgressCallback, run_conversion
from omni_web.pipeline.progress import ConvertProgress
from omni_web.pipeline.request import ConvertRequest
from omni_web.retry import NO_RETRY
from omni_web.server import Endpoint, ServerManager
from omni_web.server.router import RouterHealth, read_router_health
from omni_web.settings import Settings
from omni_web.voices import fit_reference
from omni_web.voices.reference import reference_cache_dir

__all__ = [
    "GROUP_REFERENCE_LIMIT_BYTES",
    "ROUTER_METADATA_LIMIT_BYTES",
    "GroupCapacity",
    "GroupWatch",
    "convert_on_router",
    "fit_reference_for_router",
    "group_concurrency",
    "make_group_recover",
    "worker_batch",
]

log = logging.getLogger(__name__)

# The router parses speech bodies up to 1 MiB for routing; bigger ones go to the voice owner.
ROUTER_METADATA_LIMIT_BYTES = 1 << 20
# A clip of this many bytes is at most 4/3 as much base64; 16 KiB is left for the text and fields.
GROUP_REFERENCE_LIMIT_BYTES = (ROUTER_METADATA_LIMIT_BYTES - 16 * 1024) * 3 // 4
_MAX_GROUP_RESTARTS = 3


def worker_batch(entry: CatalogEntry, settings: Settings) -> int:
    """Requests one server batches at once: the setting, else the catalog default."""
    return settings.concurrency or entry.default_concurrency


def group_concurrency(health: RouterHealth, batch: int) -> int:
    """Sum over the routable workers of (batch + 1)."""
    return sum(batch + 1 for worker in health.workers if worker.routable)


class GroupCapacity:
    """Requests to keep in flight against a router, re-read from its ``/health`` at most every ``refresh_s``.

    With nothing routable it answers 1, so the renderer keeps one chunk probing while the recover
    hook waits for the group.
    """

    def __init__(
        self,
        router_url: str,
        batch: int,
        *,
        refresh_s: float = 2.0,
        read: Callable[[str], RouterHealth | None] = read_router_health,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = router_url
        self._batch = batch
        self._refresh_s = refresh_s
        self._read = read
        self._clock = clock
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._value = batch + 1
        self.history: list[int] = []  # every distinct value, in order (for logs and tests)

    def __call__(self) -> int:
        with self._lock:
            now = self._clock()
            if self._read_at is not None and now - self._read_at < self._refresh_s:
                return self._value
            self._read_at = now
        health = self._read(self._url)
        with self._lock:
            if health is not None:
                value = max(1, group_concurrency(health, self._batch))
                if value != self._value or not self.history:
                    log.info("Group capacity: %d routable workers -> %d requests in flight", health.routable_workers, value)
                    self.history.append(value)
                self._value = value
            return self._value


def fit_reference_for_router(voice: VoiceChoice, *, cache_dir: Path) -> VoiceChoice:
    """The voice with its clip re-encoded (if needed) so an inline request stays under 1 MiB."""
    if voice.kind is not VoiceKind.CLONE or voice.reference is None:
        return voice
    fitted = fit_reference(voice.reference, cache_dir=cache_dir, limit_bytes=GROUP_REFERENCE_LIMIT_BYTES)
    return replace(voice, reference=fitted)


def make_group_recover(
    manager: ServerManager | None,
    endpoint: Endpoint,
    *,
    wait_s: float,
    on_wait: Callable[[str], None] = lambda _message: None,
    read: Callable[[str], RouterHealth | None] = read_router_health,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Callable[[Exception], bool]:
    """A renderer hook for a router endpoint: wait (up to ``wait_s``) until a worker is routable.

    True means "retry the chunk now". Our own router, if it died, is restarted with its workers
    (at most 3 times). A router the user stopped raises :class:`ServerNotRunning`.
    """
    lock = threading.Lock()
    restarts = 0

    def recover(exc: Exception) -> bool:
        nonlocal restarts
        owned = endpoint.owned and manager is not None
        if owned and manager.stop_requested:
            raise ServerNotRunning(
                "The server group was stopped while the job was rendering. Finished chunks are kept: start "
                "it (or just resume the job) to go on."
            )
        with lock:
            deadline = clock() + wait_s
            said = ""
            while True:
                health = read(endpoint.base_url)
                if health is not None and health.routable_workers > 0:
                    if said:
                        on_wait("")
                    return True
                if health is None and owned and not manager.is_alive():
                    if restarts >= _MAX_GROUP_RESTARTS:
                        return False
                    restarts += 1
                    log.warning("The group's router died (%s); restarting the group (%d/%d)", exc, restarts,
                                _MAX_GROUP_RESTARTS)
                    on_wait("The server group's router died; restarting the group.")
                    manager.restart()
                    continue
                if health is None:
                    message = f"Waiting for the router at {endpoint.base_url}: it does not answer."
                else:
                    message = (
                        f"Waiting for the server group: no worker is routable (0 of {health.total_workers}); "
                        "chunks resume as soon as one is back."
                    )
                if message != said:
                    log.warning("%s (%s)", message, exc)
                    on_wait(message)
                    said = message
                if clock() >= deadline:
                    return False
                sleep(1.0)

    return recover


class GroupWatch:
    """While a job runs on our group, start again every managed worker that dies (every ``interval_s``)."""

    def __init__(self, manager: ServerManager, *, interval_s: float = 2.0) -> None:
        self._manager = manager
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="omni-group-watch", daemon=True)
        self.revived: list[str] = []

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.revived += self._manager.revive_group_workers(on_log=lambda line: log.info("%s", line))
            except Exception:  # noqa: BLE001 - the watch must never end the job; the next tick tries again
                log.exception("Reviving the group's workers failed")

    def __enter__(self) -> GroupWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)


def convert_on_router(
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
    """Run one conversion through a router: group-sized concurrency, inline clips, group-aware recovery."""
    entry = get_entry(request.model_key)
    cache_dir = reference_cache_dir(paths)

    def fit(voice: VoiceChoice) -> VoiceChoice:
        return fit_reference_for_router(voice, cache_dir=cache_dir)

    # The narrator and every cast voice: each request body must stay under the router's 1 MiB.
    request = replace(request, voice=fit(request.voice), cast=request.cast.map_voices(fit) if request.cast else None)
    capacity = GroupCapacity(endpoint.base_url, worker_batch(entry, settings))
    last: list[ConvertProgress] = []

    def sink(doc: ConvertProgress) -> None:
        last[:] = [doc]
        if progress is not None:
            progress(doc)

    def on_wait(message: str) -> None:
        if progress is not None and last:
            progress(replace(last[0], message=message or last[0].message))

    recover = make_group_recover(
        manager if endpoint.owned else None, endpoint, wait_s=settings.start_timeout_s, on_wait=on_wait
    )
    watch = GroupWatch(manager) if endpoint.owned and endpoint.group else contextlib.nullcontext()
    # Inline references always (local_server=False): uploaded voices would pin to one worker.
    # One attempt per call: the renderer's retry policy is the only one in force (omni_web.retry).
    with watch, SpeechClient(endpoint.base_url, local_server=False, speech_retry=NO_RETRY) as client:
        return run_conversion(
            request,
            paths=paths,
            settings=settings,
            client=client,
            recover=recover,
            progress=sink,
            cancelled=cancelled,
            book=book,
            concurrency_source=capacity,
        )
