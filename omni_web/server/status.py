"""Records the server manager returns: its state, a status snapshot, and a usable endpoint."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from omni_web.catalog import model_label

__all__ = ["Endpoint", "GroupMember", "MemberState", "ServerState", "ServerStatus"]


class ServerState(enum.StrEnum):
    """Where a server is in its life, as the app sees it."""

    STOPPED = "stopped"  # nothing answers, or nothing of ours runs
    STARTING = "starting"  # alive but /health is not 200 yet (loading, or 503 "starting")
    HEALTHY = "healthy"  # /health answered 200 "healthy"
    STOPPING = "stopping"  # a stop is in progress
    FAILED = "failed"  # the last start failed, or the server reports "unhealthy"


class MemberState(enum.StrEnum):
    """Where one member of a server group is, as the Server tab shows it."""

    HEALTHY = "healthy"  # the router (or its probe of this worker) says healthy
    UNHEALTHY = "unhealthy"
    DEAD = "dead"  # the router's word for a worker that failed its probes
    UNKNOWN = "unknown"  # not probed yet
    STARTING = "starting"  # our process runs, the router has not judged it yet
    RESTARTING = "restarting"  # ours died and is being started again
    DOWN = "down"  # ours has no process, or a remote the router cannot reach
    NOT_IN_ROUTER = "not in router"  # a remote in our record that the router does not list

    @classmethod
    def of(cls, text: str) -> MemberState:
        """The state the router's word names (an unknown word is UNKNOWN)."""
        try:
            return cls(text)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True, slots=True)
class GroupMember:
    """One process or remote server of a server group (the router, or a worker)."""

    role: str  # "router" | "worker" | "remote"
    url: str
    state: MemberState
    gpu: str = ""  # CUDA id of a managed worker
    pid: int | None = None
    routed: int | None = None  # requests the router sent it
    failed: int | None = None
    active: int | None = None
    log_path: Path | None = None
    note: str = ""  # the router's last error, or why it is down

    def line(self) -> str:
        """One aligned row for the CLI."""
        where = f"GPU {self.gpu}" if self.gpu else ("-" if self.role == "router" else "remote")
        counts = "-" if self.routed is None else f"{self.routed} routed, {self.failed or 0} failed"
        pid = f"pid {self.pid}" if self.pid is not None else "-"
        text = f"  {self.role:<7} {where:<7} {self.url:<26} {self.state:<10} {counts:<22} {pid:<10}"
        if self.log_path is not None:
            text += f" {self.log_path}"
        return text + (f"  ({self.note})" if self.note else "")


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A snapshot of the server the app would talk to.

    ``owned`` is True only for a process this app started (proven by the record); a foreign or
    remote server has ``owned=False`` and no pid. ``model_key`` is the catalog key when the hosted
    model is in the catalog; ``model_ids`` is what ``/v1/models`` listed (foreign servers).
    """

    state: ServerState
    endpoint: str = ""
    model_key: str | None = None
    tag: str = ""
    model_ids: tuple[str, ...] = ()
    pid: int | None = None
    owned: bool = False
    remote: bool = False
    log_path: Path | None = None
    message: str = ""
    members: tuple[GroupMember, ...] = ()  # a server group: the router, then each worker

    @property
    def healthy(self) -> bool:
        """True when the server takes speech requests."""
        return self.state is ServerState.HEALTHY

    def hosts(self, model_key: str) -> bool:
        """True when this server is healthy and hosts ``model_key``: it takes that model's requests now."""
        return self.healthy and self.model_key == model_key

    @property
    def model_label(self) -> str:
        """The model as users read it, with its tag, e.g. ``"ZONOS2 (bf16 fallback)"``; a raw id if
        not in the catalog."""
        name = self.model_key or (self.model_ids[0] if self.model_ids else "")
        return model_label(name, self.tag) if name else ""

    @property
    def owner_str(self) -> str:
        """Who runs the server, in words."""
        if self.owned:
            return "started by omni-web"
        if self.remote:
            return "remote (Settings remote URL)"
        return "not started by omni-web (left running)" if self.state is not ServerState.STOPPED else "-"

    def lines(self) -> list[str]:
        """``label: value`` lines for the CLI (which also names the catalog key its flags take)."""
        model = self.model_label or "-"
        if self.model_key and self.model_key != model:
            model = f"{model}, key {self.model_key}"
        rows = [
            ("State", self.state.value),
            ("Model", model),
            ("Endpoint", self.endpoint or "-"),
            ("PID", str(self.pid) if self.pid is not None else "-"),
            ("Owner", self.owner_str),
            ("Log", str(self.log_path) if self.log_path else "-"),
        ]
        out = [f"{label + ':':<10} {value}" for label, value in rows]
        if self.members:
            out.append(f"Group:     router + {len(self.members) - 1} workers")
            out.extend(member.line() for member in self.members)
        if self.message:
            out.append(self.message)
        return out


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A server that hosts the requested model and answers ``/health`` 200.

    ``model_id`` is the id the server lists in ``/v1/models`` (send it as ``model``); ``owned``
    says whether this app started it (and may stop or restart it).
    """

    base_url: str
    model_key: str
    model_id: str
    owned: bool
    tag: str = ""
    group: bool = False  # our router in front of several workers (see omni_web.server.group)

    @property
    def model_label(self) -> str:
        """The model's name with its tag, e.g. ``"ZONOS2 (bf16 fallback)"``."""
        return model_label(self.model_key, self.tag) if self.model_key else ""
