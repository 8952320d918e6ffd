"""One install step as a child process: live log lines, exit codes, cancel of the whole group."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from omni_web.backend.run import new_log_path, run_step
from omni_web.errors import InstallCancelled, InstallError

pytestmark = pytest.mark.slow  # subprocesses


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def test_output_streams_to_callback_and_log_file(tmp_path: Path) -> None:
    log_path = new_log_path(tmp_path / "logs", "demo")
    lines: list[str] = []
    code = "import sys; print('first'); print('to stderr', file=sys.stderr); sys.exit(3)"
    result = run_step([sys.executable, "-c", code], log_path=log_path, log=lines.append)
    assert result.returncode == 3 and not result.ok
    assert lines[0].startswith("$ ") and "first" in lines and "to stderr" in lines
    text = log_path.read_text()
    assert "first\n" in text and "to stderr\n" in text and "--- exit code 3 ---" in text
    assert result.tail.splitlines() == ["first", "to stderr"]


def test_cancel_stops_the_child_and_its_grandchildren(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    cancel = threading.Event()

    def on_line(line: str) -> None:
        if line == "ready":
            cancel.set()

    started = time.monotonic()
    with pytest.raises(InstallCancelled) as raised:
        run_step([sys.executable, "-c", code], log_path=tmp_path / "x.log", log=on_line, cancel=cancel,
                 what="demo step")
    assert time.monotonic() - started < 10
    assert "demo step was cancelled" in str(raised.value) and raised.value.log_path == tmp_path / "x.log"
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
    assert "--- cancelled: child stopped ---" in (tmp_path / "x.log").read_text()


def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    cancel = threading.Event()
    started = time.monotonic()
    with pytest.raises(InstallCancelled):
        run_step([sys.executable, "-c", code], log_path=tmp_path / "y.log",
                 log=lambda line: cancel.set() if line == "ready" else None, cancel=cancel, grace_s=0.5)
    assert time.monotonic() - started < 10


def test_a_missing_program_is_an_install_error(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="Could not run") as raised:
        run_step([str(tmp_path / "no-such-program")], log_path=tmp_path / "z.log")
    assert raised.value.log_path == tmp_path / "z.log"


def test_log_paths_never_collide(tmp_path: Path) -> None:
    first = new_log_path(tmp_path, "task")
    first.write_text("")
    second = new_log_path(tmp_path, "task")
    assert first != second and second.parent == tmp_path
