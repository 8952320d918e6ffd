"""The server record: round trip, and the pid-reuse guard (pid alive AND same start time)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from omni_web.server.record import (
    ServerRecord,
    clear_record,
    load_record,
    process_info,
    record_matches_process,
    save_record,
)


def _record(pid: int, start_ticks: int, **changes) -> ServerRecord:
    base = ServerRecord(
        pid=pid,
        pgid=pid,
        start_ticks=start_ticks,
        model_key="zonos2",
        repo_id="Zyphra/ZONOS2",
        host="127.0.0.1",
        port=8100,
        log_path=Path("/tmp/server-zonos2.log"),
        argv=("sgl-omni", "serve", "--model-path", "Zyphra/ZONOS2"),
        tag="bf16 fallback",
        started_at=1234.5,
    )
    return replace(base, **changes)


def test_round_trip(data_paths) -> None:
    record = _record(4242, 987654)
    save_record(data_paths, record)
    assert data_paths.server_record.is_file()
    loaded = load_record(data_paths)
    assert loaded == record
    assert loaded.model_label == "ZONOS2 (bf16 fallback)"
    assert loaded.base_url == "http://127.0.0.1:8100"
    clear_record(data_paths)
    assert load_record(data_paths) is None
    clear_record(data_paths)  # clearing twice is fine


def test_missing_or_broken_record_is_none(data_paths) -> None:
    assert load_record(data_paths) is None
    data_paths.server_record.write_text("{not json")
    assert load_record(data_paths) is None
    data_paths.server_record.write_text('{"pid": 1}')
    assert load_record(data_paths) is None


def test_process_info_reads_this_process() -> None:
    info = process_info(os.getpid())
    assert info is not None and info.alive
    assert info.pgid == os.getpgid(0)
    assert info.start_ticks > 0
    assert process_info(os.getpid()).start_ticks == info.start_ticks  # stable for the process' life


@pytest.fixture
def child():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_record_matches_a_live_process_with_the_same_start_time(child) -> None:
    info = process_info(child.pid)
    assert record_matches_process(_record(child.pid, info.start_ticks))


def test_a_reused_pid_is_not_ours(child) -> None:
    info = process_info(child.pid)
    # Same pid, another start time: what a recycled pid looks like.
    assert not record_matches_process(_record(child.pid, info.start_ticks - 1))
    assert not record_matches_process(_record(child.pid, info.start_ticks + 100))


def test_a_dead_or_zombie_process_is_not_ours(child) -> None:
    info = process_info(child.pid)
    record = _record(child.pid, info.start_ticks)
    child.kill()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited but not reaped: a zombie
    assert process_info(child.pid).state == "Z"
    assert not record_matches_process(record)
    child.wait()
    assert process_info(child.pid) is None
    assert not record_matches_process(record)
