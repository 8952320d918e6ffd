"""How many requests to keep in flight against a router: the sum over routable workers of (batch + 1).

B × N + N keeps every GPU of a group busy; more only queues inside the workers (see
``sglang_omni_router/python/serve.py``, which relays without queueing). :class:`GroupCapacity`
re-reads the router's ``/health`` while the job runs, so a worker that joins or leaves changes it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from omni_web.catalog import CatalogEntry
from omni_web.server.router import RouterHealth, read_router_health
from omni_web.settings import Settings

__all__ = ["GroupCapacity", "group_concurrency", "worker_batch"]

log = logging.getLogger(__name__)


def worker_batch(entry: CatalogEntry, settings: Settings) -> int:
    """Requests one server batches at once: the setting, else the catalog default."""
    return settings.concurrency or entry.default_concurrency


def group_concurrency(health: RouterHealth, batch: int) -> int:
    """Sum over the routable workers of (batch + 1)."""
    return sum(batch + 1 for worker in health.workers if worker.routable)


class GroupCapacity:
    """Requests to keep in flight against a router, re-read from its ``/health`` at most every ``refresh_s``.

    With nothing routable it answers 1, so the renderer keeps one chunk probing while the
    serving handle waits for the group.
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
        self._routable = 1  # routable workers at the last read (the in-flight controller scales by it)
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
                    log.info("Group capacity: %d routable workers -> %d requests in flight",
                             health.routable_workers, value)
                    self.history.append(value)
                self._value = value
                self._routable = health.routable_workers
            return self._value

    def routable_workers(self) -> int:
        """Workers taking requests at the last read of ``/health`` (read again when stale)."""
        self()
        with self._lock:
            return self._routable
