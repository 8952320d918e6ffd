"""Server log files: the newest one is found by the name a start gives it, and its end is read."""

from __future__ import annotations

import os
from pathlib import Path

from omni_web.server.boot import latest_log_path, new_log_path, read_log_end


def test_latest_log_path_finds_the_newest_start_log(tmp_path: Path) -> None:
    assert latest_log_path(tmp_path) is None
    older = new_log_path(tmp_path, "qwen3_tts_0_6b_customvoice")
    older.write_text("old boot\n")
    newer = new_log_path(tmp_path, "zonos2")
    newer.write_text("new boot\n")
    os.utime(older, (1_000_000, 1_000_000))
    (tmp_path / "pip-install-20260101.log").write_text("not a server log\n")
    assert latest_log_path(tmp_path) == newer


def test_read_log_end_starts_at_a_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {n}\n" for n in range(1000)))
    end = read_log_end(log, 100)
    assert end.endswith("line 999\n") and end.splitlines()[0].startswith("line ")
    assert len(end.encode()) <= 100
    assert read_log_end(log, 1_000_000) == log.read_text()
    assert read_log_end(tmp_path / "absent.log", 100) == ""
    assert read_log_end(None, 100) == ""
