"""One handle on whatever serves a job: our single server, our group behind the router, or a foreign one.

:meth:`ServerManager.ensure_serving <omni_web.server.manager.ServerManager.ensure_serving>`
returns a :class:`Serving`; the job asks it four things and nothing else about the server:

- :meth:`~Serving.concurrency`: requests to keep in flight now (None: the job's own number);
- :meth:`~Serving.recover`: a request reached no server; bring it back if it is ours, wait for it
  if it is not, and say whether it had died (:class:`Recovery`; the renderer counts crashes
  against progress, see ``omni_web/render/crashes.py``);
- :meth:`~Serving.watch`: a context kept open while the job runs (our group's dead workers are
  started again from it; waits end when it closes or the job is cancelled);
- :meth:`~Serving.status_line`: what the progress line should say ("" when all is well).

Every restart goes through the manager, which re-reads a pending Stop under its own lock, so a
Stop that lands while a restart is being decided is never undone.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from omni_web.client import SpeechClient
from omni_web.client.inflight import InFlightController
from omni_web.errors import ServerNotRunning, ServerUnreachable
from omni_web.retry import NO_RETRY
from omni_web.server.capacity import GroupCapacity
from omni_web.server.discovery import probe_endpoint
from omni_web.server.lifecycle import STOPPED_MID_JOB
from omni_web.server.router import RouterHealth, read_router_health
from omni_web.server.status import Endpoint

__all__ = [
    "STOPPED_MID_JOB",
    "Owner",
    "ForeignServing",
    "GroupServing",
    "Recovery",
    "Serving",
    "SingleServing",
]

log = logging.getLogger(__name__)

StatusSink = Callable[[str], None]


class Recovery(enum.Enum):
    """What :meth:`Serving.recover` found after a request could not reach the server."""

    NONE = "none"  # nothing to do: retry as the retry policy says
    ALIVE = "alive"  # the server is up (again, after a wait that killed nothing of ours): retry
    RESTARTED = "restarted"  # it (or one of its workers) had died and serves again: a crash


class Owner(Protocol):
    """What a handle asks of the manager that started our server (omni_web/server/manager.py)."""

    def is_alive(self) -> bool:
        """True while our server's (or router's) process lives."""
        ...  # pragma: no cover

    def restart(self, *, unless_stopped: bool = False) -> object:
        """Start our server (or group) again; refuses after a Stop when ``unless_stopped``."""
        ...  # pragma: no cover

    def refuse_if_stopped(self) -> None:
        """Raise ServerNotRunning when the user stopped the server (read under the manager's lock)."""
        ...  # pragma: no cover

    def dead_group_workers(self) -> list[int | str]:
        """Pids of our group's workers whose process is gone, and ids of remote workers' deaths."""
        ...  # pragma: no cover

    def revive_group_workers(self, *, on_log: Callable[[str], None] | None = None) -> list[str]:
        """Start our group's dead workers again (never after a Stop); their URLs."""
        ...  # pragma: no cover


class Serving(Protocol):
    """What a job may ask of the server it renders on."""

    endpoint: Endpoint
    inline_references: bool  # True for a router: clips go inline (an uploaded voice pins to one worker)

    def concurrency(self) -> int | None:
        """Requests to keep in flight now; None leaves it to the job (its setting or the catalog)."""
        ...  # pragma: no cover

    def in_flight(self, start: int) -> InFlightController:
        """The job's in-flight controller when the user gave no number: the width the server was
        started with, a router's workers, or (a server that does not say) found from ``start`` up."""
        ...  # pragma: no cover

    def recover(self, error: Exception) -> Recovery:
        """Called once per failure wave; may block while the server comes back.

        Raises:
            ServerNotRunning: the user stopped it, or a foreign server stayed away past its patience.
        """
        ...  # pragma: no cover

    def watch(
        self, *, on_status: StatusSink, cancelled: Callable[[], bool]
    ) -> contextlib.AbstractContextManager[None]:
        """Keep open while the job runs; ``on_status`` gets each new status line."""
        ...  # pragma: no cover

    def status_line(self) -> str:
        """What the progress line should say about the server now ("" when nothing)."""
        ...  # pragma: no cover

    def open_client(self) -> SpeechClient:
        """The job's speech client: one attempt per call (the renderer owns retries)."""
        ...  # pragma: no cover


class _Base:
    """Status line and watch plumbing shared by every shape."""

    inline_references = False  # a router pins uploaded voices to one worker: send clips inline

    def __init__(self, endpoint: Endpoint, *, sleep_s: float = 1.0) -> None:
        self.endpoint = endpoint
        self._status = ""
        self._sink: StatusSink | None = None
        self._cancelled: Callable[[], bool] = lambda: False
        self._closed = threading.Event()
        self._lock = threading.Lock()  # one recovery at a time
        self._sleep_s = sleep_s

    def concurrency(self) -> int | None:
        return None

    def in_flight(self, start: int) -> InFlightController:
        return InFlightController(start)

    def status_line(self) -> str:
        return self._status

    def open_client(self) -> SpeechClient:
        return SpeechClient(
            self.endpoint.base_url, local_server=not self.inline_references, speech_retry=NO_RETRY
        )

    def _say(self, line: str) -> None:
        if line == self._status:
            return
        self._status = line
        if line:
            log.warning("%s", line)
        if self._sink is not None:
            self._sink(line)

    def _pause(self) -> bool:
        """Wait a moment; False when the job ended or was cancelled meanwhile."""
        return not self._closed.wait(self._sleep_s) and not self._cancelled()

    def _started(self) -> None:
        """Hook: the watch opened."""

    def _ending(self) -> None:
        """Hook: the watch is closing."""

    @contextlib.contextmanager
    def watch(
        self, *, on_status: StatusSink, cancelled: Callable[[], bool] = lambda: False
    ) -> Iterator[None]:
        self._sink, self._cancelled = on_status, cancelled
        self._closed.clear()
        self._started()
        try:
            yield
        finally:
            self._closed.set()
            self._ending()
            self._sink = None


class SingleServing(_Base):
    """Our one `sgl-omni serve`: a dead process is started again (unless the user stopped it)."""

    def __init__(self, manager: Owner, endpoint: Endpoint, *, width: int | None = None) -> None:
        super().__init__(endpoint)
        self._manager = manager
        self._width = width  # max_running_requests of the config it was started with (None: not known)

    def in_flight(self, start: int) -> InFlightController:
        return InFlightController.fixed(self._width) if self._width else InFlightController(start)

    def recover(self, error: Exception) -> Recovery:
        with self._lock:
            if self._manager.is_alive():
                return Recovery.ALIVE
            self._say("The server died; restarting it.")
            log.warning("The managed server died (%s); restarting it", error)
            try:
                self._manager.restart(unless_stopped=True)  # refuses under the manager's lock after a Stop
            finally:
                self._say("")
            return Recovery.RESTARTED


# A raise behind a router is sent this many more requests per answer: a doubling is out within a
# quarter turn of the batch, and a full worker queue refuses at most about this many.
ROUTER_RAMP = 4


class ForeignServing(_Base):
    """A server we did not start (Settings remote URL, ``--api-url``, or found on our port).

    When it goes away mid-job (a remote GPU box restarting) the job waits for it, saying so, for at
    most ``patience_s``; a server that comes back counts as a crash (requests in flight died with it).
    A URL that is itself a router sizes the job from its ``/health`` and gets clips inline.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        patience_s: float,
        batch: int,
        is_healthy: Callable[[str], bool] | None = None,
        read: Callable[[str], RouterHealth | None] = read_router_health,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep_s: float = 1.0,
    ) -> None:
        super().__init__(endpoint, sleep_s=sleep_s)
        self._patience_s = patience_s
        self._is_healthy = is_healthy or (lambda url: probe_endpoint(url, timeout_s=5.0).healthy)
        self._clock, self._wall_clock = clock, wall_clock
        self._batch = batch
        self._read = read
        self._capacity: GroupCapacity | None = None
        self._looked = False

    def _router_capacity(self) -> GroupCapacity | None:
        """The router's capacity when the URL is a router (asked once, on first use)."""
        if not self._looked:
            self._looked = True
            if self._read(self.endpoint.base_url) is not None:
                self._capacity = GroupCapacity(
                    self.endpoint.base_url, self._batch, read=self._read, clock=self._clock
                )
        return self._capacity

    @property
    def inline_references(self) -> bool:  # type: ignore[override]
        return self._router_capacity() is not None

    def concurrency(self) -> int | None:
        capacity = self._router_capacity()
        return capacity() if capacity is not None else None

    def in_flight(self, start: int) -> InFlightController:
        capacity = self._router_capacity()
        # A router's workers' widths are not known: its routable workers times the start, then found,
        # each raise ramped (a few more per answer), and scaled as workers leave or come back.
        if capacity is None:
            return InFlightController(start, clock=self._clock)
        return InFlightController(
            capacity(), clock=self._clock, ramp=ROUTER_RAMP, workers=capacity.routable_workers
        )

    def recover(self, error: Exception) -> Recovery:
        if not isinstance(error, ServerUnreachable):
            return Recovery.NONE
        with self._lock:
            if self._is_healthy(self.endpoint.base_url):
                return Recovery.NONE  # a blip (or one worker behind a router): the retry policy decides
            since = time.strftime("%H:%M", time.localtime(self._wall_clock()))
            deadline = self._clock() + self._patience_s
            self._say(
                f"Waiting for {self.endpoint.base_url}, down since {since}; the job goes on when it is back."
            )
            try:
                while not self._is_healthy(self.endpoint.base_url):
                    if self._clock() >= deadline:
                        raise ServerNotRunning(
                            f"The server at {self.endpoint.base_url} has been down since {since} "
                            f"({self._patience_s / 60:.0f} min, the patience set in Settings). Finished "
                            "chunks are "
                            "kept: resume the job when the server is back."
                        ) from error
                    if not self._pause():
                        raise ServerNotRunning(f"Stopped waiting for {self.endpoint.base_url}.") from error
            finally:
                self._say("")
            log.warning("The server at %s is back (down since %s)", self.endpoint.base_url, since)
            return Recovery.RESTARTED


class GroupServing(_Base):
    """Our router with one worker per GPU (plus any remote workers).

    Concurrency follows the routable workers; clips go inline. A managed worker that dies is started
    again by the watch (on its GPU and port, the others serve on meanwhile), and that death counts as
    a crash for the renderer, whether the watch or :meth:`recover` saw it first, so a worker that
    dies on one chunk finds that chunk as a single server does. A dead router restarts the group.
    With nothing routable the job waits for the group, saying so, up to ``patience_s``.
    """

    inline_references = True

    def __init__(
        self,
        manager: Owner,
        endpoint: Endpoint,
        *,
        batch: int,
        patience_s: float,
        interval_s: float = 2.0,
        read: Callable[[str], RouterHealth | None] = read_router_health,
        clock: Callable[[], float] = time.monotonic,
        sleep_s: float = 1.0,
    ) -> None:
        super().__init__(endpoint, sleep_s=sleep_s)
        self._manager = manager
        self._capacity = GroupCapacity(endpoint.base_url, batch, read=read)
        self._patience_s = patience_s
        self._interval_s = interval_s
        self._read = read
        self._clock = clock
        self._deaths_lock = threading.Lock()
        self._dead: set[int | str] = set()  # deaths seen (a pid, or a remote death's id): each counts once
        self._counted = 0
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.revived: list[str] = []  # worker URLs started again during the job

    def concurrency(self) -> int | None:
        return self._capacity()

    def in_flight(self, start: int) -> InFlightController:
        return InFlightController.following(self._capacity)

    def _note_deaths(self) -> None:
        pids = self._manager.dead_group_workers()
        with self._deaths_lock:
            self._dead.update(pids)

    def _new_deaths(self) -> int:
        self._note_deaths()
        with self._deaths_lock:
            new, self._counted = len(self._dead) - self._counted, len(self._dead)
            return new

    def recover(self, error: Exception) -> Recovery:
        with self._lock:
            self._manager.refuse_if_stopped()
            if not self._manager.is_alive():  # the router itself died: the whole group starts again
                self._say("The server group's router died; restarting the group.")
                try:
                    self._manager.restart(unless_stopped=True)
                finally:
                    self._say("")
                self._new_deaths()
                return Recovery.RESTARTED
            if self._new_deaths():
                log.warning("A worker of the server group died (%s); starting it again", error)
                self._wake.set()  # the watch revives it now; the other workers serve meanwhile
                return Recovery.RESTARTED
            return self._wait_routable(error)

    def _wait_routable(self, error: Exception) -> Recovery:
        deadline = self._clock() + self._patience_s
        waited = False
        try:
            while True:
                health = self._read(self.endpoint.base_url)
                if health is not None and health.routable_workers > 0:
                    return Recovery.ALIVE
                waited = True
                self._say(
                    f"Waiting for the router at {self.endpoint.base_url}: it does not answer."
                    if health is None
                    else "Waiting for the server group: no worker is routable (0 of "
                    f"{health.total_workers}); "
                    "chunks resume as soon as one is back."
                )
                if self._clock() >= deadline or not self._pause():
                    return Recovery.NONE  # the retry policy decides what is left
                self._manager.refuse_if_stopped()
        finally:
            if waited:
                self._say("")
                log.info("The server group is routable again (%s)", error)

    def _run(self) -> None:
        while not self._closed.is_set():
            self._wake.wait(self._interval_s)
            self._wake.clear()
            if self._closed.is_set():
                return
            try:
                self._note_deaths()
                self.revived += self._manager.revive_group_workers(on_log=lambda line: log.info("%s", line))
            except Exception:  # noqa: BLE001 - the watch must never end the job; the next tick tries again
                log.exception("Reviving the group's workers failed")

    def _started(self) -> None:
        self._note_deaths()  # deaths before this job (a farm box's earlier crashes) are not its own
        with self._deaths_lock:
            self._counted = len(self._dead)
        self._thread = threading.Thread(target=self._run, name="omni-group-watch", daemon=True)
        self._thread.start()

    def _ending(self) -> None:
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
