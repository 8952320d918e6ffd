"""The agent as a systemd *user* service, so a box rejoins the farm after a reboot or a crash.

``agent join URL ... --service`` plans the unit (:func:`plan_service`: pure, the text can be
checked without writing anything), writes it with :meth:`AgentService.write` and prints it with
the commands that enable it. The farm token never sits in the unit (a unit file is readable by
anyone on the box): it goes into an ``EnvironmentFile`` only its owner can read, and the agent
reads it from ``OMNI_WEB_FARM_TOKEN``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.files import write_atomic

__all__ = ["SERVICE_NAME", "TOKEN_ENV", "AgentService", "plan_service", "systemd_quote", "user_config_dir"]

SERVICE_NAME = "omni-web-agent"
TOKEN_ENV = "OMNI_WEB_FARM_TOKEN"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@")


def systemd_quote(arg: str, *, exec_line: bool = True) -> str:
    """``arg`` as one word of a unit's ``ExecStart=`` (or, ``exec_line=False``, of ``Environment=``),
    after systemd.service(5) "Command lines": ``%`` is a specifier everywhere and ``$`` an
    environment expansion in command lines, so they are doubled; a word with other characters
    than the plain ones is double-quoted with C-style escapes."""
    escaped = arg.replace("%", "%%")
    if exec_line:
        escaped = escaped.replace("$", "$$")
    if escaped and set(escaped) <= _SAFE:
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _no_specifiers(path: Path) -> str:
    return str(path).replace("%", "%%")


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config`` (where systemd looks for user units)."""
    env = os.environ if environ is None else environ
    raw = env.get("XDG_CONFIG_HOME", "").strip()
    return Path(raw) if raw else Path(env.get("HOME") or Path.home()) / ".config"


@dataclass(frozen=True, slots=True)
class AgentService:
    """A planned user unit: where it and its token file go, and what the unit says."""

    unit_path: Path
    env_path: Path
    unit_text: str

    @property
    def commands(self) -> tuple[str, ...]:
        """What the user runs to enable it (``loginctl enable-linger``: it runs without a login, so
        it starts at boot and survives logging out)."""
        return (
            "systemctl --user daemon-reload",
            f"systemctl --user enable --now {SERVICE_NAME}",
            "loginctl enable-linger $USER",
        )

    def write(self, token: str) -> None:
        """Write the token file (owner-only, in an owner-only folder) and the unit."""
        self.env_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env_path.parent.chmod(0o700)
        write_atomic(self.env_path, f"{TOKEN_ENV}={token}\n", mode=0o600)
        self.unit_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.unit_path, self.unit_text, mode=0o644)


def plan_service(join_args: Sequence[str], *, python: Path, workdir: Path, home: Path,
                 environ: Mapping[str, str] | None = None) -> AgentService:
    """The unit that runs ``python -m omni_web agent join <join_args>`` in ``workdir`` with the
    data root ``home``; ``join_args`` must not hold the token (the unit reads it from its file).
    """
    config = user_config_dir(environ)
    unit_path = config / "systemd" / "user" / f"{SERVICE_NAME}.service"
    env_path = config / "omni-web" / f"{SERVICE_NAME}.env"
    argv = [str(python), "-m", "omni_web", "agent", "join", *join_args]
    lines = [
        "[Unit]",
        "Description=omni-web farm agent (serves TTS models for the app it joined)",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        # a path setting takes the rest of its line as the path: only specifiers need escaping
        f"WorkingDirectory={_no_specifiers(workdir)}",
        f"Environment={systemd_quote(f'OMNI_WEB_HOME={home}', exec_line=False)} PYTHONUNBUFFERED=1",
        f"EnvironmentFile={_no_specifiers(env_path)}",
        f"ExecStart={' '.join(systemd_quote(arg) for arg in argv)}",
        "Restart=on-failure",
        "RestartSec=10",
        # the agent stops its servers and tells the app it leaves on SIGTERM; a model's servers
        # take a few seconds to stop
        "TimeoutStopSec=60",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return AgentService(unit_path, env_path, "\n".join(lines) + "\n")
