"""The managed server's state as the app sees it, changed in one place: :meth:`ServerLifecycle.transition`.

Every change of :class:`~omni_web.server.status.ServerState` goes through one guarded method
under one lock (as a job's state does in ``omni_web/jobs/store.py``); a move the table below does
not allow is refused and logged, never applied. The same lock guards the Stop flag, so a restart
after a crash reads a pending Stop exactly when :meth:`ServerManager.stop
<omni_web.server.manager.ServerManager.stop>` sets it, never before.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import threading
from collections.abc import Iterator

from omni_web.errors import OmniWebError, ServerNotRunning, internal_error_message
from omni_web.server.spec import ServeSpec
from omni_web.server.status import ServerState

__all__ = ["ALLOWED", "STOPPED_MID_JOB", "ServerLifecycle", "failure_message"]

log = logging.getLogger(__name__)

STOPPED_MID_JOB = (
    "The server was stopped while the job was rendering. Finished chunks are kept: start the server "
    "(or just resume the job) to go on."
)

_S = ServerState
# Where each state may go. STARTING -> STOPPING -> STARTING is a start that first stops another
# server of ours (another model or port); HEALTHY -> STARTING is a restart or a reused server.
ALLOWED: dict[ServerState, frozenset[ServerState]] = {
    _S.STOPPED: frozenset({_S.STOPPED, _S.STARTING, _S.STOPPING}),
    _S.STARTING: frozenset({_S.STARTING, _S.HEALTHY, _S.FAILED, _S.STOPPED, _S.STOPPING}),
    _S.HEALTHY: frozenset({_S.HEALTHY, _S.STARTING, _S.STOPPING, _S.FAILED, _S.STOPPED}),
    _S.STOPPING: frozenset({_S.STOPPED, _S.STARTING, _S.FAILED}),
    _S.FAILED: frozenset({_S.FAILED, _S.STARTING, _S.STOPPING, _S.STOPPED}),
}


def failure_message(exc: BaseException) -> str:
    """What the status line says after a failed start: our errors say it themselves; others are bugs."""
    if isinstance(exc, OmniWebError):
        return str(exc)
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
        return "The server start was interrupted."
    return internal_error_message(exc)  # the caller (task runner, CLI) logs or prints the traceback


class ServerLifecycle:
    """State, message and the start in progress of our server (single or group), lock-guarded.

    Attributes other than the state (``popen``, ``last_spec``, ``group_spec``, ``pending_spec``)
    are read and written under :attr:`lock`; the state and its message change only through
    :meth:`transition`.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()  # held only briefly
        self.cancel = threading.Event()  # set by a Stop to abort a boot in progress
        self._state = ServerState.STOPPED
        self._message = ""
        self._stop_requested = False  # set by a Stop, cleared by the next start
        self.popen: subprocess.Popen[bytes] | None = None  # our single server's child, for reaping
        self.pending_spec: ServeSpec | None = None  # the start in progress, before it has a record
        self.last_spec: ServeSpec | None = None
        self.group_spec: ServeSpec | None = None  # the last group start's spec (revive, restart)

    @property
    def state(self) -> ServerState:
        """The state now."""
        with self.lock:
            return self._state

    @property
    def message(self) -> str:
        """Why the state is what it is (a failed start's error), or ""."""
        with self.lock:
            return self._message

    @property
    def stop_requested(self) -> bool:
        """True after a Stop until the next start."""
        with self.lock:
            return self._stop_requested

    def transition(
        self, to: ServerState, *, message: str = "", only_from: frozenset[ServerState] | None = None
    ) -> bool:
        """Move to ``to`` (with ``message``) if the table allows it from the state now; True when moved.

        ``only_from`` narrows it further (e.g. only a HEALTHY server can be noticed dead).
        """
        with self.lock:
            now = self._state
            if only_from is not None and now not in only_from:
                return False
            if to not in ALLOWED[now]:
                log.error(
                    "Refused server state change %s -> %s (%s)", now.value, to.value, message or "no message"
                )
                return False
            self._state, self._message = to, message
            return True

    def snapshot(self) -> tuple[object, ...]:
        """What this object knows, to tell whether anything changed since a status was taken."""
        with self.lock:
            return (self._state, self._message, self.pending_spec, self._stop_requested, self.popen)

    # --- the Stop flag -----------------------------------------------------------------------

    def request_stop(self) -> None:
        """The user's Stop: abort a boot in progress, and refuse crash restarts until a start."""
        with self.lock:
            self.cancel.set()
            self._stop_requested = True

    def arm(self, *, unless_stopped: bool) -> None:
        """Before a start: clear the Stop flag and the cancel together, under the lock a Stop takes.

        Raises:
            ServerNotRunning: ``unless_stopped`` (a restart after a crash) and the user stopped it.
        """
        with self.lock:
            if unless_stopped:
                self.refuse_if_stopped()
            self._stop_requested = False
            self.cancel.clear()

    def refuse_if_stopped(self) -> None:
        """Raise :class:`ServerNotRunning` when the user has stopped the server (read under the lock)."""
        with self.lock:
            if self._stop_requested:
                raise ServerNotRunning(STOPPED_MID_JOB)

    @contextlib.contextmanager
    def starting(self, spec: ServeSpec) -> Iterator[None]:
        """A start of ``spec`` (single or group): STARTING now, HEALTHY when the block ends.

        When the block raises, the state is FAILED with the error's message, or STOPPED when a
        Stop's cancel aborted the boot (the user asked for it; it is no failure).
        """
        with self.lock:
            self.pending_spec = spec
        self.transition(ServerState.STARTING)
        try:
            yield
        except BaseException as exc:
            cancelled = self.cancel.is_set()
            self.transition(
                ServerState.STOPPED if cancelled else ServerState.FAILED,
                message="" if cancelled else failure_message(exc),
            )
            raise
        finally:
            with self.lock:
                self.pending_spec = None
        with self.lock:
            self.last_spec = spec
        self.transition(ServerState.HEALTHY)

    @contextlib.contextmanager
    def unless_stopped(self) -> Iterator[bool]:
        """Hold the lock; yields False when the user has stopped the server (a launch then waits)."""
        with self.lock:
            yield not self._stop_requested
