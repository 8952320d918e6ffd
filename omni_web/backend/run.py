"""Run one install step (pip, venv, uv) as a child process with a live, cancelable log.

The child gets an argv list and its own session, so a cancel can signal its whole process group
(pip spawns build subprocesses): SIGTERM first, SIGKILL after a grace period. Every output line
goes to the log file as it arrives and to the ``log`` callback, which is how the CLI and the web
UI show a live log. A cancelled step leaves whatever the child had done; the callers are written
so that running them again repairs it.
"""

from __future__ import annotations

import datetime
import os
import shlex
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from omni_web.errors import InstallCancelled, InstallError

__all__ = ["LogCallback", "StepResult", "new_log_path", "run_step"]

LogCallback = Callable[[str], None]

# How long a cancelled child gets to exit after SIGTERM before SIGKILL.
DEFAULT_GRACE_S = 5.0
_TAIL_LINES = 30


@dataclass(frozen=True, slots=True)
class StepResult:
    """A finished step: its argv, exit code, the log file and the last lines of output."""

    argv: tuple[str, ...]
    returncode: int
    log_path: Path
    tail: str

    @property
    def ok(self) -> bool:
        """True when the child exited with status 0."""
        return self.returncode == 0


def new_log_path(logs_dir: Path, task: str) -> Path:
    """A fresh log file name for one task, e.g. ``logs/backend-install-20260101-120000.log``."""
    logs_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate = logs_dir / f"{task}-{stamp}.log"
    counter = 1
    while candidate.exists():
        counter += 1
        candidate = logs_dir / f"{task}-{stamp}-{counter}.log"
    return candidate


def _signal_group(proc: subprocess.Popen[str], sig: int) -> None:
    """Signal the child's process group; a group that is already gone counts as success."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen[str], grace_s: float) -> None:
    """SIGTERM the group, wait ``grace_s``, then SIGKILL it and reap the child."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
    # Grandchildren that ignored SIGTERM while the leader exited still share the group.
    _signal_group(proc, signal.SIGKILL)


def _pump(proc: subprocess.Popen[str], handle: TextIO, log: LogCallback | None, tail: deque[str]) -> None:
    """Copy the child's output line by line to the log file, the tail and the callback."""
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.rstrip("\r\n")
        handle.write(line + "\n")
        handle.flush()
        tail.append(line)
        if log is not None:
            log(line)


def run_step(
    argv: Sequence[str],
    *,
    log_path: Path,
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
    env: Mapping[str, str] | None = None,
    what: str = "step",
    grace_s: float = DEFAULT_GRACE_S,
) -> StepResult:
    """Run ``argv`` to completion, streaming its output; return its result (even on failure).

    Args:
        argv: the command as a list; never a shell string.
        log_path: the file the output is appended to (a header names the command).
        log: called with each output line, without its newline.
        cancel: when set, the child's process group is stopped and InstallCancelled is raised.
        env: extra environment variables for the child (added to the current environment).
        what: a short name for messages ("pip install sglang-omni").
        grace_s: seconds between SIGTERM and SIGKILL on cancel.

    Raises:
        InstallCancelled: ``cancel`` was set (or Ctrl-C arrived) while the child ran.
        InstallError: the command could not be started at all.
    """
    argv = [str(part) for part in argv]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    child_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    with log_path.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {shlex.join(argv)}\n")
        handle.flush()
        if log is not None:
            log(f"$ {shlex.join(argv)}")
        try:
            proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=child_env,
                start_new_session=True,
            )
        except OSError as exc:
            handle.write(f"could not start: {exc}\n")
            raise InstallError(
                f"Could not run {what} ({argv[0]}): {exc.strerror or exc}. Check that it exists and is "
                "executable.",
                log_path=log_path,
            ) from exc
        reader = threading.Thread(target=_pump, args=(proc, handle, log, tail), daemon=True)
        reader.start()
        try:
            while reader.is_alive():
                if cancel is not None and cancel.is_set():
                    raise InstallCancelled(
                        f"{what} was cancelled. Run the same step again to finish or repair it.",
                        log_path=log_path,
                    )
                reader.join(timeout=0.1)
            proc.wait()
        except BaseException as exc:
            _stop(proc, grace_s)
            reader.join(timeout=grace_s)
            handle.write("--- cancelled: child stopped ---\n")
            if isinstance(exc, KeyboardInterrupt):
                raise InstallCancelled(
                    f"{what} was interrupted. Run the same step again to finish or repair it.",
                    log_path=log_path,
                ) from exc
            raise
        handle.write(f"--- exit code {proc.returncode} ---\n")
    return StepResult(argv=tuple(argv), returncode=proc.returncode, log_path=log_path, tail="\n".join(tail))
