"""Logs a person can follow: the server's access lines folded out of the boot log, both ends of a
long log kept, and pip's raw download progress condensed to a line per 5 %."""

from __future__ import annotations

from pathlib import Path

from omni_web.backend.pip_progress import PipProgressLog, pip_progress_args
from omni_web.server.accesslog import fold_access_lines, is_access_line, read_server_log

BOOT = "INFO:     Started server process [4242]\nINFO:     Uvicorn running on http://127.0.0.1:8100"
ACCESS = 'INFO:     127.0.0.1:5123{n} - "POST /v1/audio/speech HTTP/1.1" 200 OK'
HEALTH = 'INFO:     127.0.0.1:6000 - "GET /health?x=1 HTTP/1.1" 200 OK'


def test_access_lines_are_folded_into_one_count() -> None:
    text = "\n".join([BOOT, *(ACCESS.format(n=n) for n in range(40)), HEALTH, "WARNING boot note"])
    folded = fold_access_lines(text)
    assert "Started server process" in folded and "WARNING boot note" in folded
    assert "/v1/audio/speech HTTP" not in folded
    assert "41 request lines hidden" in folded and "POST /v1/audio/speech ×40" in folded
    assert "GET /health ×1" in folded
    assert is_access_line(HEALTH) and not is_access_line("INFO:     Waiting for application startup.")
    assert fold_access_lines(BOOT) == BOOT


def test_a_long_log_keeps_its_boot_and_its_end(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    lines = [BOOT, *(ACCESS.format(n=n) for n in range(20_000)), "ERROR the last thing that happened"]
    log.write_text("\n".join(lines), encoding="utf-8")
    shown = read_server_log(log, head_bytes=4000, tail_bytes=4000)
    assert shown.startswith("INFO:     Started server process")
    assert shown.rstrip().splitlines()[-2] == "ERROR the last thing that happened"
    assert "bytes of the log skipped" in shown and len(shown) < 2000
    assert read_server_log(tmp_path / "missing.log") == ""


def test_pip_raw_progress_becomes_a_line_per_five_percent() -> None:
    lines: list[str] = []
    log = PipProgressLog(lines.append)
    log("Collecting sglang-omni==0.1.9")
    total = 255_000_000
    for done in range(0, total, 1_000_000):
        log(f"Progress {done} of {total}")
    log(f"Progress {total} of {total}")
    log("Successfully installed sglang-omni-0.1.9")
    progress = [line for line in lines if "Downloaded" in line]
    assert lines[0] == "Collecting sglang-omni==0.1.9" and lines[-1].startswith("Successfully")
    assert 20 <= len(progress) <= 22
    assert progress[-1] == "  Downloaded 255.0 MB of 255.0 MB (100%)"


def test_raw_progress_is_asked_only_from_a_pip_that_knows_it(tmp_path: Path) -> None:
    import sys

    assert pip_progress_args(Path(sys.executable)) == ["--progress-bar", "raw"]  # this venv's pip is new
    assert pip_progress_args(tmp_path / "no-python") == ["--progress-bar", "off"]
