"""The record of our server group in the data root (``state/server-group.json``): router and workers.

Each process is a :class:`~omni_web.server.record.ServerRecord` (pid + kernel start time), so a
restarted app finds the group again and never signals a reused pid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.files import write_atomic
from omni_web.paths import DataPaths
from omni_web.server.record import ServerRecord, record_matches_process

__all__ = [
    "GROUP_RECORD_NAME",
    "GroupRecord",
    "WorkerRecord",
    "clear_group_record",
    "group_pids",
    "load_group_record",
    "save_group_record",
]

GROUP_RECORD_NAME = "server-group.json"


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """One managed worker: the GPU it runs on and its process record."""

    gpu: str
    record: ServerRecord

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return self.record.base_url


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """Everything a running group is made of, as saved in the data root."""

    model_key: str
    tag: str
    router: ServerRecord | None
    workers: tuple[WorkerRecord, ...]
    remote_urls: tuple[str, ...] = ()

    @property
    def gpus(self) -> tuple[str, ...]:
        """The CUDA ids of the managed workers, in order."""
        return tuple(w.gpu for w in self.workers)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "model_key": self.model_key,
            "tag": self.tag,
            "router": self.router.to_dict() if self.router is not None else None,
            "workers": [{"gpu": w.gpu, "record": w.record.to_dict()} for w in self.workers],
            "remote_urls": list(self.remote_urls),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupRecord:
        """Inverse of :meth:`to_dict`; raises KeyError/TypeError/ValueError on a bad mapping."""
        router = data.get("router")
        return cls(
            model_key=str(data["model_key"]),
            tag=str(data.get("tag", "")),
            router=ServerRecord.from_dict(router) if router else None,
            workers=tuple(
                WorkerRecord(gpu=str(w["gpu"]), record=ServerRecord.from_dict(w["record"]))
                for w in data["workers"]
            ),
            remote_urls=tuple(str(u) for u in data.get("remote_urls", ())),
        )


def _record_path(paths: DataPaths) -> Path:
    return paths.state_dir / GROUP_RECORD_NAME


def load_group_record(paths: DataPaths) -> GroupRecord | None:
    """The saved group record, or None (missing or unreadable: it then proves nothing)."""
    try:
        return GroupRecord.from_dict(json.loads(_record_path(paths).read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_group_record(paths: DataPaths, record: GroupRecord) -> None:
    """Write the record atomically."""
    target = _record_path(paths)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, json.dumps(record.to_dict(), indent=2))


def clear_group_record(paths: DataPaths) -> None:
    """Forget the group (a missing file is fine)."""
    _record_path(paths).unlink(missing_ok=True)


def group_pids(record: GroupRecord) -> list[int]:
    """Every pid the record names that is still alive (the router and the managed workers)."""
    records = ([record.router] if record.router is not None else []) + [w.record for w in record.workers]
    return [r.pid for r in records if record_matches_process(r)]
