"""Process mechanics: own session, log file, env, group signals, SIGTERM then SIGKILL."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from omni_web.errors import BackendError
from omni_web.server.process import group_alive, launch, log_tail, pid_alive, signal_group, terminate_group
from omni_web.server.record import process_info

# A "server" that ignores SIGTERM and has a child in its group: only SIGKILL ends both.
STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, lambda *a: print("ignoring SIGTERM", flush=True))
child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
print("child", child.pid, flush=True)
print("env", os.environ.get("OMNI_TEST_FLAG"), flush=True)
time.sleep(120)
"""

POLITE = """
import time
print("up", flush=True)
time.sleep(120)
"""


def _wait_for(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@pytest.fixture
def launched():
    procs = []
    yield procs
    for proc in procs:  # cleanup by our own pgid, even when a test failed
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()


def test_launch_runs_in_its_own_session_with_a_log_and_env(tmp_path: Path, launched) -> None:
    log = tmp_path / "logs" / "server.log"
    proc = launch([sys.executable, "-c", STUBBORN], log_path=log, env_extra={"OMNI_TEST_FLAG": "yes"})
    launched.append(proc)
    _wait_for(lambda: "env yes" in log.read_text())
    info = process_info(proc.pid)
    assert info.pgid == proc.pid != os.getpgid(0)  # leader of its own group
    assert os.getsid(proc.pid) == proc.pid
    assert group_alive(proc.pid)


def test_terminate_group_escalates_to_sigkill_after_the_grace(tmp_path: Path, launched) -> None:
    log = tmp_path / "server.log"
    proc = launch([sys.executable, "-c", STUBBORN], log_path=log)
    launched.append(proc)
    _wait_for(lambda: "child" in log.read_text())
    child_pid = int(log.read_text().split("child ")[1].split()[0])
    started = time.monotonic()
    killed = terminate_group(proc.pid, leader=proc, grace_s=1.0)
    elapsed = time.monotonic() - started
    assert killed is True
    assert elapsed >= 1.0
    assert proc.returncode == -signal.SIGKILL
    assert "ignoring SIGTERM" in log.read_text()
    assert not pid_alive(child_pid)  # the whole group went, not just the leader
    assert not group_alive(proc.pid)


def test_terminate_group_is_polite_first(tmp_path: Path, launched) -> None:
    proc = launch([sys.executable, "-c", POLITE], log_path=tmp_path / "server.log")
    launched.append(proc)
    _wait_for(lambda: "up" in (tmp_path / "server.log").read_text())
    assert terminate_group(proc.pid, leader=proc, grace_s=10.0) is False
    assert proc.returncode == -signal.SIGTERM


def test_signalling_a_gone_group_counts_as_stopped(tmp_path: Path) -> None:
    proc = launch([sys.executable, "-c", "pass"], log_path=tmp_path / "server.log")
    proc.wait()
    assert signal_group(proc.pid, signal.SIGTERM) is False
    assert terminate_group(proc.pid, leader=proc, grace_s=0.5) is False


def test_launch_of_a_missing_executable_is_a_backend_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="Could not run"):
        launch([str(tmp_path / "nope" / "sgl-omni"), "serve"], log_path=tmp_path / "server.log")


def test_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert log_tail(log, 3) == "line 97\nline 98\nline 99"
    assert log_tail(tmp_path / "absent.log") == ""
