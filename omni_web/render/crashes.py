"""What the renderer does when the server it talks to crashes mid-book.

A crash kills every request in flight at once, so failures are grouped into crash *epochs*: a
request remembers the epoch it started in; the first failure of an epoch asks the ``recover``
hook (which restarts our own server) and opens the next epoch, later failures of the same epoch
only send their chunk again. Then:

- **Crashes are counted against progress**: a restart followed by a finished chunk resets the
  count (as jupyter_client's restarter forgives a kernel that stayed up); only
  ``max_crashes_in_a_row`` crashes with no chunk finished in between stop the run.
- **Concurrency halves after a crash** (a crash under load is often memory) and grows back by one
  after each ``limit`` chunks that succeed in a row, up to the requested concurrency.
- **Poison chunks**: a chunk in flight at two crashes in a row is set aside and rendered alone;
  if it kills the server twice alone, each time as the first chunk sent after a restart (so a
  server, or one worker of a group, that merely dies every N requests cannot frame it), it fails
  by itself (:class:`PoisonChunk`, its text named) while the rest of the book goes on. Crashes
  while a chunk is tried alone do not count as crashes in a row: the run is finding the cause.

The same rules hold for every shape of server (one managed server, a group behind the router, a
foreign one): the ``recover`` hook is :meth:`omni_web.server.serving.Serving.recover`.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable

from omni_web.errors import ChunkFailed, PoisonChunk
from omni_web.render.item import RenderItem
from omni_web.server.serving import Recovery

__all__ = [
    "MAX_CRASHES_IN_A_ROW",
    "SOLO_CRASHES_TO_FAIL",
    "CrashVerdict",
    "CrashWatch",
    "Recover",
    "Recovery",
]

log = logging.getLogger(__name__)

# Restarts with no finished chunk in between before the run gives up on the server.
MAX_CRASHES_IN_A_ROW = 3
# Crashes a set-aside chunk must cause alone, each as the first chunk after a restart, to fail.
SOLO_CRASHES_TO_FAIL = 2

# Called with the error when the server could not be reached; only RESTARTED counts as a crash.
Recover = Callable[[Exception], Recovery]


class CrashVerdict(enum.Enum):
    """What to do with a chunk whose request could not reach the server."""

    RETRY = "retry"  # no crash: retry it as the retry policy says
    REQUEUE = "requeue"  # a crash killed it: send it again at the current concurrency
    SET_ASIDE = "set aside"  # in flight at two crashes in a row: render it alone


class CrashWatch:
    """Crash bookkeeping for one render run; every method is safe to call from worker threads."""

    def __init__(
        self,
        concurrency: int | Callable[[], int],
        recover: Recover | None,
        *,
        max_crashes_in_a_row: int = MAX_CRASHES_IN_A_ROW,
    ) -> None:
        self._lock = threading.Lock()
        self._recover = recover
        # The requested concurrency, asked each time (a server group's routable workers change).
        self._requested = concurrency if callable(concurrency) else (lambda: concurrency)
        self._cap: int | None = None  # set by a crash, lifted once grown back to the request
        self._max_crashes = max_crashes_in_a_row
        self._epoch = 0
        self._crashes_in_a_row = 0
        self._successes_at_limit = 0
        self._crash_epochs: dict[str, set[int]] = {}
        self._solo_crashes: dict[str, int] = {}
        self._sent_in_epoch: set[str] = set()
        self.crashes = 0  # every crash of this run (for the log and tests)

    def sending(self, key: str = "") -> tuple[int, int]:
        """Call just before a request for chunk ``key`` goes out: (crash epoch, how many other
        chunks were sent before it in that epoch; its own retries do not count)."""
        with self._lock:
            ticket = (self._epoch, len(self._sent_in_epoch - {key}))
            self._sent_in_epoch.add(key)
            return ticket

    @property
    def limit(self) -> int:
        """Requests to keep in flight now (halved after a crash, grown back by successes)."""
        requested = max(1, self._requested())
        with self._lock:
            return requested if self._cap is None else min(self._cap, requested)

    def succeeded(self) -> None:
        """A chunk finished: forgive the crashes so far and grow the concurrency back."""
        requested = max(1, self._requested())
        with self._lock:
            self._crashes_in_a_row = 0
            if self._cap is None:
                return
            self._successes_at_limit += 1
            if self._successes_at_limit >= self._cap:
                self._cap += 1
                self._successes_at_limit = 0
            if self._cap >= requested:
                self._cap = None

    def unreachable(
        self, item: RenderItem, exc: Exception, ticket: tuple[int, int], *, solo: bool
    ) -> CrashVerdict:
        """Decide about a request of ``item`` (``ticket`` from :meth:`sending`) that reached no server.

        Restarts the server through ``recover`` once per crash (other threads wait for it).

        Raises:
            PoisonChunk: ``item``, rendered alone (``solo``), killed the server again.
            ChunkFailed: the server crashed ``max_crashes_in_a_row`` times with no chunk finished.
            Whatever ``recover`` raises (the server was stopped on purpose, a restart failed).
        """
        if self._recover is None:
            return CrashVerdict.RETRY
        started_epoch, sent_before = ticket
        with self._lock:
            if started_epoch == self._epoch:
                recovery = self._recover(exc)  # restarts under the lock: one at a time
                if recovery is not Recovery.RESTARTED:
                    return CrashVerdict.RETRY
                self._crashed(item, exc, solo=solo)
            epochs = self._crash_epochs.setdefault(item.key, set())
            epochs.add(started_epoch)
            if solo:
                if sent_before == 0:
                    self._solo_crashes[item.key] = self._solo_crashes.get(item.key, 0) + 1
                    if self._solo_crashes[item.key] >= SOLO_CRASHES_TO_FAIL:
                        raise _poison(item, exc)
                return CrashVerdict.SET_ASIDE  # alone again, the first chunk after the restart
            if started_epoch - 1 in epochs:
                log.warning(
                    "Chunk %d of chapter %d was in flight at two crashes in a row; rendering it alone",
                    item.chunk_number,
                    item.chapter_number,
                )
                return CrashVerdict.SET_ASIDE
            return CrashVerdict.REQUEUE

    def _crashed(self, item: RenderItem, exc: Exception, *, solo: bool) -> None:
        self._epoch += 1
        self._sent_in_epoch = set()
        self.crashes += 1
        if solo:  # finding the cause, not a server that cannot finish anything
            log.warning(
                "The server crashed with chunk %d of chapter %d alone in flight (%s)",
                item.chunk_number,
                item.chapter_number,
                exc,
            )
            return
        self._crashes_in_a_row += 1
        requested = max(1, self._requested())
        self._cap = max(1, min(self._cap or requested, requested) // 2)
        self._successes_at_limit = 0
        log.warning(
            "The server crashed (%s); restarted it, %d requests in flight from now on (crash %d in a row)",
            exc,
            self._cap,
            self._crashes_in_a_row,
        )
        if self._crashes_in_a_row > self._max_crashes:
            raise ChunkFailed(
                chapter_title=item.chapter_title,
                chapter_number=item.chapter_number,
                chunk_number=item.chunk_number,
                text=item.text,
                cause=f"the server crashed {self._crashes_in_a_row} times in a row without finishing a chunk "
                f"(last: {exc}); see the server log",
            ) from exc


def _poison(item: RenderItem, exc: Exception) -> PoisonChunk:
    return PoisonChunk(
        chapter_title=item.chapter_title,
        chapter_number=item.chapter_number,
        chunk_number=item.chunk_number,
        text=item.text,
        cause="it was in flight at two server crashes in a row, and rendered alone it crashed the server "
        f"twice more ({exc}). The rest of the book was rendered without it; edit or shorten this text "
        "(review the book), then regenerate it",
    )
