"""Background tasks that outlive a web request: backend install, model changes, a server start.

A :class:`TaskRunner` runs at most one task per *kind* (``"backend"``, ``"models"``,
``"server"``) in its own thread. The task function receives a :class:`TaskHandle` to append log
lines, report progress and notice a cancel; everything it reports is kept in the runner, so a page
refresh or a second browser re-attaches to the live log by asking for a :class:`TaskSnapshot`.
Rendering jobs do not go through here: they are persistent and run in ``omni_web.jobs``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omni_web.errors import (
    DownloadCancelled,
    InstallCancelled,
    JobCancelled,
    OmniWebError,
    TaskBusy,
    internal_error_message,
)
from omni_web.runstate import RunState

__all__ = ["TaskHandle", "TaskRunner", "TaskSnapshot"]

_log = logging.getLogger(__name__)

# Enough for a pip install's output; older lines stay in the task's own log file.
DEFAULT_LOG_LINES = 2000
_CANCELLED = (InstallCancelled, DownloadCancelled, JobCancelled)


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """A task as it is right now: state, log, progress and the outcome once it ended."""

    kind: str
    title: str
    state: RunState | None  # None: nothing of this kind ran since the app started
    log_lines: tuple[str, ...] = ()
    progress: float | None = None  # 0.0-1.0, None when the task does not know
    progress_text: str = ""
    message: str = ""  # the error or the closing line
    started_at: float | None = None
    finished_at: float | None = None
    result: Any = None
    cancel_requested: bool = False

    @property
    def running(self) -> bool:
        """True while the task's thread works."""
        return self.state is RunState.RUNNING

    @property
    def finished(self) -> bool:
        """True once the task ended (in any way); False while it runs or when none ran."""
        return self.state is not None and self.state.finished

    @property
    def log_text(self) -> str:
        """The log as one string (newest line last)."""
        return "\n".join(self.log_lines)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the start (until the end, once finished)."""
        if self.started_at is None:
            return 0.0
        return (self.finished_at or time.time()) - self.started_at

    @property
    def summary(self) -> str:
        """One line: ``Installing the backend: running (1:02)``."""
        if self.state is None:
            return "Nothing has run yet."
        minutes, seconds = divmod(int(self.elapsed_s), 60)
        extra = f" - {self.message}" if self.message and self.finished else ""
        return f"{self.title}: {self.state.value} ({minutes}:{seconds:02d}){extra}"


class TaskHandle:
    """What a running task may do: log, report progress, check for a cancel."""

    def __init__(self, runner: TaskRunner, kind: str, cancel: threading.Event) -> None:
        self._runner = runner
        self._kind = kind
        self.cancel_event = cancel

    def log(self, line: str) -> None:
        """Append one line to the task's log."""
        self._runner._append(self._kind, line)

    def progress(self, fraction: float | None, text: str = "") -> None:
        """Report how far the task is (0.0-1.0, None if unknown) with a short description."""
        self._runner._set_progress(self._kind, fraction, text)

    def cancelled(self) -> bool:
        """True once someone asked the task to stop."""
        return self.cancel_event.is_set()


class _Task:
    """The mutable record behind one kind's latest task (guarded by the runner's lock)."""

    def __init__(self, kind: str, title: str, max_lines: int) -> None:
        self.kind = kind
        self.title = title
        self.state = RunState.RUNNING
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.progress: float | None = None
        self.progress_text = ""
        self.message = ""
        self.started_at = time.time()
        self.finished_at: float | None = None
        self.result: Any = None
        self.cancel = threading.Event()
        self.thread: threading.Thread | None = None

    def snapshot(self) -> TaskSnapshot:
        return TaskSnapshot(
            kind=self.kind,
            title=self.title,
            state=self.state,
            log_lines=tuple(self.lines),
            progress=self.progress,
            progress_text=self.progress_text,
            message=self.message,
            started_at=self.started_at,
            finished_at=self.finished_at,
            result=self.result,
            cancel_requested=self.cancel.is_set(),
        )


class TaskRunner:
    """One background task per kind, each in its own daemon thread; safe to use from any thread."""

    def __init__(self, *, max_log_lines: int = DEFAULT_LOG_LINES) -> None:
        self._max_lines = max_log_lines
        self._lock = threading.Lock()
        self._tasks: dict[str, _Task] = {}

    def start(self, kind: str, title: str, work: Callable[[TaskHandle], Any]) -> TaskSnapshot:
        """Run ``work(handle)`` in a new thread as the task of ``kind``.

        ``work`` returns the task's result; raising an :class:`OmniWebError` fails the task with
        that message, a cancel error (install, download, job) marks it cancelled.

        Raises:
            TaskBusy: a task of the same kind is still running.
        """
        with self._lock:
            current = self._tasks.get(kind)
            if current is not None and current.state is RunState.RUNNING:
                raise TaskBusy(kind, current.title)
            task = _Task(kind, title, self._max_lines)
            self._tasks[kind] = task
            handle = TaskHandle(self, kind, task.cancel)
            task.thread = threading.Thread(
                target=self._run, args=(task, work, handle), name=f"omni-web-task-{kind}", daemon=True
            )
            task.thread.start()
            return task.snapshot()

    def snapshot(self, kind: str) -> TaskSnapshot:
        """The latest task of ``kind`` (with no state when none ran yet)."""
        with self._lock:
            task = self._tasks.get(kind)
            return task.snapshot() if task is not None else TaskSnapshot(kind=kind, title="", state=None)

    def is_running(self, kind: str) -> bool:
        """True while a task of ``kind`` runs."""
        return self.snapshot(kind).running

    def cancel(self, kind: str) -> bool:
        """Ask the running task of ``kind`` to stop; False when none runs."""
        with self._lock:
            task = self._tasks.get(kind)
            if task is None or task.state is not RunState.RUNNING:
                return False
            task.cancel.set()
            task.lines.append("Cancel requested; stopping...")
            return True

    def wait(self, kind: str, timeout_s: float | None = None) -> TaskSnapshot:
        """Block until the task of ``kind`` ends (or ``timeout_s`` passes); return its snapshot."""
        with self._lock:
            task = self._tasks.get(kind)
            thread = task.thread if task is not None else None
        if thread is not None:
            thread.join(timeout_s)
        return self.snapshot(kind)

    # --- called from the task's thread ------------------------------------------------------------

    def _append(self, kind: str, line: str) -> None:
        with self._lock:
            task = self._tasks.get(kind)
            if task is not None:
                task.lines.append(line.rstrip("\n"))

    def _set_progress(self, kind: str, fraction: float | None, text: str) -> None:
        with self._lock:
            task = self._tasks.get(kind)
            if task is not None:
                task.progress = None if fraction is None else max(0.0, min(1.0, fraction))
                task.progress_text = text

    def _finish(self, task: _Task, state: RunState, message: str, result: Any = None) -> None:
        with self._lock:
            task.state, task.message, task.result = state, message, result
            task.finished_at = time.time()
            if message:
                task.lines.append(message)

    def _run(self, task: _Task, work: Callable[[TaskHandle], Any], handle: TaskHandle) -> None:
        try:
            result = work(handle)
        except _CANCELLED as exc:
            self._finish(task, RunState.CANCELLED, str(exc) or "Cancelled.")
        except OmniWebError as exc:
            state = RunState.CANCELLED if task.cancel.is_set() else RunState.FAILED
            self._finish(task, state, str(exc))
        except Exception as exc:  # a bug: record it for the page, keep the traceback in the app log
            _log.exception("Background task %s (%s) failed with an internal error", task.kind, task.title)
            self._finish(task, RunState.FAILED, internal_error_message(exc))
        else:
            if task.cancel.is_set():
                self._finish(task, RunState.CANCELLED, "Cancelled.", result)
            else:
                self._finish(task, RunState.DONE, "", result)
