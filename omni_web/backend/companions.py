"""A model's companion packages, pip-installed ``--no-deps`` into the backend venv.

Some families import packages sglang-omni does not require (Qwen3-TTS: ``sox``, ``einops``,
``qwen-tts==0.1.1``; S2-Pro and ZONOS2: the Descript DAC codec). Upstream installs them with
``--no-deps`` because their own pins (qwen-tts wants Transformers 4) would replace the backend's
stack. Presence is read from inside the backend venv (``importlib.metadata`` run by its Python),
so a package that arrived any other way counts, and only the missing or wrongly pinned ones are
installed. The server calls :func:`ensure_companion_packages` before every start, so a boot never
dies on their import.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.run import LogCallback, new_log_path, run_step
from omni_web.backend.venv import backend_python
from omni_web.catalog import CatalogEntry
from omni_web.errors import BackendError, InstallError
from omni_web.paths import DataPaths

__all__ = [
    "CompanionStatus",
    "companion_status",
    "ensure_companion_packages",
    "missing_companion_packages",
]

# Catalog companions are written "name" or "name==version"; nothing else is needed or accepted.
_SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([A-Za-z0-9.+!_-]+))?\s*$")
_QUERY = """
import importlib.metadata as md, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = md.version(name)
    except md.PackageNotFoundError:
        found[name] = None
print(json.dumps(found))
"""
_QUERY_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class CompanionStatus:
    """One companion requirement and what the backend venv has of it."""

    spec: str
    name: str
    pinned_version: str | None
    installed_version: str | None

    @property
    def satisfied(self) -> bool:
        """Installed, at the pinned version when there is a pin."""
        if self.installed_version is None:
            return False
        return self.pinned_version is None or _same_version(self.installed_version, self.pinned_version)


def _same_version(installed: str, pinned: str) -> bool:
    # "1.0" and "1.0.0" are the same release for pip; compare without trailing zero parts.
    def norm(text: str) -> tuple[str, ...]:
        parts = text.strip().lower().split(".")
        while len(parts) > 1 and parts[-1] == "0":
            parts.pop()
        return tuple(parts)

    return norm(installed) == norm(pinned)


def _parse(spec: str) -> tuple[str, str | None]:
    match = _SPEC.match(spec)
    if match is None:
        raise BackendError(
            f"Companion requirement {spec!r} is not 'name' or 'name==version'; fix the catalog entry."
        )
    return match.group(1), match.group(2)


def _venv_python(paths: DataPaths) -> Path:
    python = backend_python(paths)
    if not python.exists():
        raise BackendError(
            f"The backend venv {paths.backend_venv} does not exist, so companion packages cannot be "
            "installed. Run: python -m omni_web setup"
        )
    return python


def companion_status(paths: DataPaths, entry: CatalogEntry) -> list[CompanionStatus]:
    """Each of ``entry.companion_packages`` with the version the backend venv has (or None).

    Raises:
        BackendError: the backend venv is missing or its Python does not run.
    """
    if not entry.companion_packages:
        return []
    parsed = [(spec, *_parse(spec)) for spec in entry.companion_packages]
    python = _venv_python(paths)
    try:
        done = subprocess.run(  # noqa: S603 - argv list, no shell
            [str(python), "-c", _QUERY, *[name for _, name, _ in parsed]],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_QUERY_TIMEOUT_S,
        )
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        raise BackendError(
            f"The backend venv's Python ({python}) did not answer: {exc}. Run setup to repair it."
        ) from exc
    if not isinstance(found, dict):
        raise BackendError(
            f"The backend venv's Python ({python}) failed ({done.stderr.strip()[-200:]}). Run setup to "
            "repair it."
        )
    return [CompanionStatus(spec, name, pin, found.get(name)) for spec, name, pin in parsed]


def missing_companion_packages(paths: DataPaths, entry: CatalogEntry) -> list[str]:
    """The requirement strings of ``entry`` the backend venv does not satisfy, in catalog order."""
    return [status.spec for status in companion_status(paths, entry) if not status.satisfied]


def ensure_companion_packages(
    paths: DataPaths,
    entry: CatalogEntry,
    *,
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
    index_args: Sequence[str] = (),
) -> list[str]:
    """Install the companions of ``entry`` that are missing, with ``pip install --no-deps``.

    Returns:
        The requirement strings that were installed (empty when all were present).

    Raises:
        BackendError: the backend venv is missing (run setup first).
        InstallError: pip failed; ``log_path`` holds its output.
        InstallCancelled: ``cancel`` was set.
    """
    missing = missing_companion_packages(paths, entry)
    if not missing:
        return []
    log_path = new_log_path(paths.logs_dir, f"companions-{entry.key}")
    argv = [
        str(_venv_python(paths)),
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--progress-bar",
        "off",
        "--disable-pip-version-check",
        *index_args,
        *missing,
    ]
    step = run_step(
        argv, log_path=log_path, log=log, cancel=cancel, what=f"companion packages for {entry.key}"
    )
    if not step.ok:
        raise InstallError(
            f"pip could not install the companion packages of {entry.label} ({', '.join(missing)}), "
            f"exit code {step.returncode}. See {log_path}; fix the cause and try again.",
            log_path=log_path,
        )
    still = missing_companion_packages(paths, entry)
    if still:
        raise InstallError(
            f"pip finished but {', '.join(still)} are still missing from {paths.backend_venv}. See "
            f"{log_path}.",
            log_path=log_path,
        )
    return missing
