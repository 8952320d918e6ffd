"""The managed server's record in the data root: which process this app started, and for what.

The record (``state/server.json``) holds pid, process group, the kernel's start time of the pid,
model, host, port, log file and argv. It lets a restarted app find its server again, and its
start time is the guard against pid reuse: a pid whose ``/proc/<pid>/stat`` start time differs
from the record's is some other program, and :func:`record_matches_process` says so, so nothing
ever signals it.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omni_web.catalog import model_label
from omni_web.files import write_atomic
from omni_web.paths import DataPaths
from omni_web.server.spec import client_host

if TYPE_CHECKING:
    from omni_web.server.spec import ServeSpec

__all__ = [
    "ProcessInfo",
    "ServerRecord",
    "clear_record",
    "load_record",
    "process_info",
    "record_for_launch",
    "record_matches_process",
    "save_record",
]


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """What ``/proc/<pid>/stat`` says about one process."""

    pid: int
    state: str  # one letter: R, S, D, Z (zombie), ...
    pgid: int
    start_ticks: int  # field 22, clock ticks since boot: fixed for the life of the process

    @property
    def alive(self) -> bool:
        """False for a zombie: it has exited and only waits to be reaped."""
        return self.state not in ("Z", "X", "x")


def process_info(pid: int) -> ProcessInfo | None:
    """Read ``/proc/<pid>/stat``; None when no such process exists (or it cannot be read)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
        return None
    # Field 2 (comm) is parenthesised and may hold spaces or ')', so split after the last ')'.
    rest = raw[raw.rfind(")") + 2 :].split()
    try:
        # rest[0] is field 3 (state), rest[2] field 5 (pgrp), rest[19] field 22 (starttime).
        return ProcessInfo(pid=pid, state=rest[0], pgid=int(rest[2]), start_ticks=int(rest[19]))
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class ServerRecord:
    """One managed `sgl-omni serve` process, as saved in the data root."""

    pid: int
    pgid: int
    start_ticks: int
    model_key: str
    repo_id: str
    host: str
    port: int
    log_path: Path
    argv: tuple[str, ...] = ()
    tag: str = ""
    started_at: float = 0.0  # wall clock (time.time()) of the launch

    @property
    def base_url(self) -> str:
        """The URL a local client uses to reach this server."""
        return f"http://{client_host(self.host)}:{self.port}"

    @property
    def model_label(self) -> str:
        """The model's name with its tag, e.g. ``"ZONOS2 (bf16 fallback)"``."""
        return model_label(self.model_key, self.tag)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        data = asdict(self)
        data["log_path"] = str(self.log_path)
        data["argv"] = list(self.argv)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ServerRecord:
        """Rebuild a record; raises KeyError/TypeError/ValueError on a malformed mapping."""
        return cls(
            pid=int(data["pid"]),
            pgid=int(data["pgid"]),
            start_ticks=int(data["start_ticks"]),
            model_key=str(data["model_key"]),
            repo_id=str(data["repo_id"]),
            host=str(data["host"]),
            port=int(data["port"]),
            log_path=Path(data["log_path"]),
            argv=tuple(str(arg) for arg in data.get("argv", ())),
            tag=str(data.get("tag", "")),
            started_at=float(data.get("started_at", 0.0)),
        )


def load_record(paths: DataPaths) -> ServerRecord | None:
    """The saved record, or None when there is none or it is unreadable (a stale, broken file)."""
    try:
        data = json.loads(paths.server_record.read_text(encoding="utf-8"))
        return ServerRecord.from_dict(data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # A half-written or hand-edited file proves nothing about any process: ignore it.
        return None


def save_record(paths: DataPaths, record: ServerRecord) -> None:
    """Write the record atomically (temp file + rename)."""
    target = paths.server_record
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, json.dumps(record.to_dict(), indent=2))


def clear_record(paths: DataPaths) -> None:
    """Remove the record (a missing file is fine)."""
    paths.server_record.unlink(missing_ok=True)


def record_matches_process(record: ServerRecord) -> bool:
    """True only when the recorded pid is alive AND is the very process the record describes.

    The kernel's start time of a pid never changes while the process lives, and a new process
    that reuses the pid gets a later one, so equal start times prove identity.
    """
    info = process_info(record.pid)
    return info is not None and info.alive and info.start_ticks == record.start_ticks


def record_for_launch(
    popen: subprocess.Popen[bytes], spec: ServeSpec, argv: Sequence[str], log_path: Path
) -> ServerRecord:
    """The record of a process just launched for ``spec`` (a single server, a worker or a router)."""
    info = process_info(popen.pid)
    return ServerRecord(
        pid=popen.pid,
        pgid=info.pgid if info is not None else popen.pid,
        start_ticks=info.start_ticks if info is not None else 0,
        model_key=spec.model_key,
        repo_id=spec.model_path,
        host=spec.host,
        port=spec.port,
        log_path=log_path,
        argv=tuple(argv),
        tag=spec.tag,
        started_at=time.time(),
    )
