"""Process mechanics for the managed server: launch in its own session, signal its group, reap.

Only this module calls ``Popen``. The child runs in a new session (so it is the leader of its own
process group and outlives the CLI that started it), writes stdout and stderr to one log file,
and gets the parent's environment plus the additions the caller passes. Signals go to the whole
group, because `sgl-omni serve` spawns stage processes; a group that is already gone (ESRCH)
counts as stopped.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from omni_web.errors import BackendError
from omni_web.server.record import process_info

__all__ = [
    "group_alive",
    "launch",
    "log_tail",
    "pid_alive",
    "signal_group",
    "terminate_group",
]


def launch(
    argv: Sequence[str],
    *,
    log_path: Path,
    env_extra: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session, appending its stdout and stderr to ``log_path``.

    Raises:
        BackendError: the executable cannot be run (missing, not executable, bad interpreter).
    """
    env = dict(os.environ)
    env.update(env_extra or {})
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            # An argv list, never a shell string: nothing in it is interpreted by a shell.
            return subprocess.Popen(  # noqa: S603
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            # argv and cwd help; env is left out because it may hold tokens (HF_TOKEN).
            raise BackendError(
                f"Could not run {argv[0]}: {exc.strerror or exc}. Reinstall the backend in the Setup "
                f"tab (CLI: python -m omni_web setup)."
            ) from exc


def pid_alive(pid: int) -> bool:
    """True when ``pid`` exists and has not exited (a zombie counts as gone)."""
    info = process_info(pid)
    return info is not None and info.alive


def group_alive(pgid: int) -> bool:
    """True when any live (non-zombie) process is in process group ``pgid``.

    Linux never hands out a pid equal to an existing process group id, so a group that still
    exists is still the one we started.
    """
    try:
        names = os.listdir("/proc")
    except OSError:
        return False
    for name in names:
        if not name.isdigit():
            continue
        info = process_info(int(name))
        if info is not None and info.pgid == pgid and info.alive:
            return True
    return False


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when the group is already gone (ESRCH)."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except OSError as exc:
        if exc.errno == errno.ESRCH:
            return False
        raise
    return True


def _wait_until(
    done: Callable[[], bool], timeout_s: float, *, clock: Callable[[], float], sleep: Callable[[float], None]
) -> bool:
    deadline = clock() + timeout_s
    while True:
        if done():
            return True
        if clock() >= deadline:
            return False
        sleep(0.05)


def terminate_group(
    pgid: int,
    *,
    leader: subprocess.Popen[bytes] | None = None,
    grace_s: float = 10.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """SIGTERM the group, wait up to ``grace_s`` for it to empty, then SIGKILL what is left.

    Pass ``leader`` when this process is the parent, so the exited leader is reaped (otherwise it
    would linger as a zombie). The caller must have proven the group is its own.

    Returns:
        True when SIGKILL was needed.
    """

    def gone() -> bool:
        if group_alive(pgid):  # zombies do not count, so an unreaped leader cannot hold this up
            return False
        if leader is not None:
            try:
                leader.wait(timeout=5.0)  # it has exited: reap it so no zombie is left behind
            except subprocess.TimeoutExpired:
                return False
        return True

    if not signal_group(pgid, signal.SIGTERM):
        gone()
        return False
    if _wait_until(gone, grace_s, clock=clock, sleep=sleep):
        return False
    signal_group(pgid, signal.SIGKILL)
    _wait_until(gone, 5.0, clock=clock, sleep=sleep)
    return True


def log_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file ("" when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "".join(deque(handle, maxlen=lines)).rstrip("\n")
    except OSError:
        return ""
