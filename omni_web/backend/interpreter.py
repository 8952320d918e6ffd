"""Choose the Python interpreter the sglang-omni backend venv is built from.

sglang-omni pins a Python range (``catalog.SGLANG_OMNI_PYTHON_MIN`` up to, not including,
``SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE``) while the app itself runs on any 3.11+. The order, cheapest
first:

1. the app's own interpreter, when its version is in range (nothing to download);
2. ``python3.12`` / ``python3.11`` (newest first) found on ``PATH`` and answering a version query;
3. a CPython that uv provisioned into ``envs/pythons`` on an earlier run;
4. otherwise ``pip install uv`` into the app's venv, and ``uv python install 3.12`` into
   ``envs/pythons`` (a standalone build; no root needed).

Every choice carries the reason it was made, and :class:`InterpreterSearch` keeps the candidates
that were rejected (a pyenv shim that does not run, a version out of range), so the setup report
can say why.
"""

from __future__ import annotations

import enum
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.run import LogCallback, new_log_path, run_step
from omni_web.catalog import SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE, SGLANG_OMNI_PYTHON_MIN, SGLANG_OMNI_VERSION
from omni_web.errors import BackendError, InstallError
from omni_web.paths import DataPaths

__all__ = [
    "InterpreterChoice",
    "InterpreterSearch",
    "InterpreterSource",
    "PROVISIONED_VERSION",
    "find_interpreter",
    "provision_with_uv",
    "python_range_str",
    "query_python_version",
    "resolve_interpreter",
    "version_in_range",
]

# The CPython minor uv provisions when nothing usable exists: the newest the pin allows.
PROVISIONED_VERSION = (SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE[0], SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE[1] - 1)

_VERSION_QUERY = "import json, sys; print(json.dumps(list(sys.version_info[:3])))"
_QUERY_TIMEOUT_S = 20.0

Version = tuple[int, int, int]


class InterpreterSource(enum.StrEnum):
    """Where the chosen interpreter came from."""

    APP = "app"  # the interpreter running omni-web
    PATH = "path"  # pythonX.Y found on PATH
    UV_MANAGED = "uv_managed"  # provisioned by uv into envs/pythons


@dataclass(frozen=True, slots=True)
class InterpreterChoice:
    """The interpreter the backend venv is (or will be) created from, and why."""

    path: Path
    version: Version
    source: InterpreterSource
    reason: str

    @property
    def version_str(self) -> str:
        """``3.11.7``."""
        return ".".join(str(part) for part in self.version)


@dataclass(frozen=True, slots=True)
class InterpreterSearch:
    """The outcome of a search that downloads nothing: a choice (or None) and what was rejected."""

    choice: InterpreterChoice | None
    rejected: tuple[str, ...]

    @property
    def summary(self) -> str:
        """One sentence: the choice and its reason, or what a setup would do instead."""
        if self.choice is not None:
            return f"{self.choice.path} (Python {self.choice.version_str}): {self.choice.reason}"
        wanted = ".".join(map(str, PROVISIONED_VERSION))
        return (
            f"No Python in {python_range_str()} found; setup will pip-install uv into the app's venv "
            f"and provision CPython {wanted} under envs/pythons (no root needed)."
        )


def python_range_str() -> str:
    """The pinned range as pip writes it, e.g. ``>=3.11,<3.13``."""
    low = ".".join(map(str, SGLANG_OMNI_PYTHON_MIN))
    high = ".".join(map(str, SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE))
    return f">={low},<{high}"


def version_in_range(version: Sequence[int]) -> bool:
    """True when ``version`` (major, minor[, micro]) is inside the pinned range."""
    major_minor = (int(version[0]), int(version[1]))
    return SGLANG_OMNI_PYTHON_MIN <= major_minor < SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE


def query_python_version(python: Path | str) -> tuple[Version | None, str]:
    """Ask an interpreter for its version by running it; return (version, "") or (None, why not)."""
    try:
        completed = subprocess.run(  # noqa: S603 - argv list, no shell
            [str(python), "-c", _VERSION_QUERY],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_QUERY_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"did not run ({exc})"
    if completed.returncode != 0:
        first = (completed.stderr or completed.stdout).strip().splitlines()
        detail = first[0] if first else f"exit code {completed.returncode}"
        return None, f"did not run ({detail})"
    try:
        parts = json.loads(completed.stdout.strip().splitlines()[-1])
        return (int(parts[0]), int(parts[1]), int(parts[2])), ""
    except (ValueError, IndexError, TypeError):
        return None, f"gave an unreadable version answer ({completed.stdout.strip()[:80]!r})"


def _path_candidates() -> list[str]:
    """``python3.12``, ``python3.11``: every minor the pin allows, newest first."""
    major = SGLANG_OMNI_PYTHON_MIN[0]
    minors = range(SGLANG_OMNI_PYTHON_MAX_EXCLUSIVE[1] - 1, SGLANG_OMNI_PYTHON_MIN[1] - 1, -1)
    return [f"python{major}.{minor}" for minor in minors]


def _provisioned_pythons(pythons_dir: Path) -> list[Path]:
    """Interpreters uv installed under ``pythons_dir`` (``cpython-3.12.*/bin/python3.12``), newest first."""
    if not pythons_dir.is_dir():
        return []
    found = []
    for name in _path_candidates():
        found.extend(sorted(pythons_dir.glob(f"cpython-*/bin/{name}"), reverse=True))
    return found


def find_interpreter(
    paths: DataPaths,
    *,
    app_python: Path | str | None = None,
    app_version: Sequence[int] | None = None,
    search_path: str | None = None,
) -> InterpreterSearch:
    """Steps 1-3 of the order: never downloads anything.

    Args:
        paths: the data root (``paths.pythons_dir`` holds uv-provisioned interpreters).
        app_python: the app's interpreter; defaults to ``sys.executable``.
        app_version: its version; defaults to ``sys.version_info`` (tests inject one out of range).
        search_path: the PATH to search; defaults to the environment's.
    """
    app = Path(app_python or sys.executable)
    version = tuple(app_version or sys.version_info[:3])
    rejected: list[str] = []
    range_str = python_range_str()
    if version_in_range(version):
        reason = (
            f"the app's own interpreter is inside sglang-omni {SGLANG_OMNI_VERSION}'s range {range_str}; "
            "no download needed"
        )
        return InterpreterSearch(InterpreterChoice(app, _v3(version), InterpreterSource.APP, reason), ())
    rejected.append(f"app interpreter {app} is Python {'.'.join(map(str, version))}, outside {range_str}")

    for name in _path_candidates():
        located = shutil.which(name, path=search_path if search_path is not None else os.environ.get("PATH"))
        if located is None:
            rejected.append(f"{name}: not on PATH")
            continue
        found, why_not = query_python_version(located)
        if found is None:
            rejected.append(f"{name} at {located} {why_not}")
        elif not version_in_range(found):
            rejected.append(f"{name} at {located} is Python {'.'.join(map(str, found))}, outside {range_str}")
        else:
            reason = f"the app's interpreter is outside {range_str}; {name} found on PATH"
            return InterpreterSearch(
                InterpreterChoice(Path(located), found, InterpreterSource.PATH, reason), tuple(rejected)
            )

    for candidate in _provisioned_pythons(paths.pythons_dir):
        found, why_not = query_python_version(candidate)
        if found is not None and version_in_range(found):
            reason = f"no compatible Python on PATH; using the CPython uv provisioned earlier in {paths.pythons_dir}"
            return InterpreterSearch(
                InterpreterChoice(candidate, found, InterpreterSource.UV_MANAGED, reason), tuple(rejected)
            )
        rejected.append(f"{candidate} {why_not or 'is out of range'}")
    return InterpreterSearch(None, tuple(rejected))


def _v3(version: Sequence[int]) -> Version:
    padded = list(version) + [0, 0, 0]
    return (int(padded[0]), int(padded[1]), int(padded[2]))


def _uv_next_to(app: Path) -> Path | None:
    """The ``uv`` in the app venv's bin folder, if pip put one there."""
    candidate = app.parent / "uv"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def provision_with_uv(
    paths: DataPaths,
    *,
    app_python: Path | str | None = None,
    index_args: Sequence[str] = (),
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
) -> InterpreterChoice:
    """Step 4: pip-install uv into the app's venv (if it has none), then let uv provision CPython.

    The interpreter lands under ``paths.pythons_dir``; ``UV_PYTHON_BIN_DIR`` is pointed there
    too, so uv never writes shims into the user's ``~/.local/bin``.

    Raises:
        InstallError: pip or uv failed, or uv's interpreter did not appear; the log names why.
        InstallCancelled: ``cancel`` was set.
    """
    app = Path(app_python or sys.executable)
    log_path = new_log_path(paths.logs_dir, "provision-python")
    uv = _uv_next_to(app)
    if uv is None:
        step = run_step(
            [str(app), "-m", "pip", "install", "--progress-bar", "off", *index_args, "uv"],
            log_path=log_path,
            log=log,
            cancel=cancel,
            what="pip install uv",
        )
        uv = _uv_next_to(app)
        if not step.ok or uv is None:
            raise InstallError(
                f"Installing uv into the app's venv failed (exit code {step.returncode}). "
                f"See {log_path}; or install Python {'.'.join(map(str, PROVISIONED_VERSION))} yourself and "
                "run setup again.",
                log_path=log_path,
            )
    wanted = ".".join(map(str, PROVISIONED_VERSION))
    paths.pythons_dir.mkdir(parents=True, exist_ok=True)
    env = {
        "UV_PYTHON_INSTALL_DIR": str(paths.pythons_dir),
        "UV_PYTHON_BIN_DIR": str(paths.pythons_dir / "bin"),
    }
    step = run_step(
        [str(uv), "python", "install", wanted],
        log_path=log_path,
        log=log,
        cancel=cancel,
        env=env,
        what=f"uv python install {wanted}",
    )
    if not step.ok:
        raise InstallError(
            f"uv could not provision CPython {wanted} (exit code {step.returncode}). See {log_path}.",
            log_path=log_path,
        )
    for candidate in _provisioned_pythons(paths.pythons_dir):
        found, _ = query_python_version(candidate)
        if found is not None and version_in_range(found):
            reason = f"no compatible Python on this machine; uv provisioned CPython {wanted} into {paths.pythons_dir}"
            return InterpreterChoice(candidate, found, InterpreterSource.UV_MANAGED, reason)
    raise InstallError(
        f"uv reported success but no CPython {wanted} appeared under {paths.pythons_dir}. See {log_path}.",
        log_path=log_path,
    )


def resolve_interpreter(
    paths: DataPaths,
    *,
    app_python: Path | str | None = None,
    app_version: Sequence[int] | None = None,
    search_path: str | None = None,
    allow_download: bool = True,
    index_args: Sequence[str] = (),
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
) -> InterpreterChoice:
    """The full order: :func:`find_interpreter`, then :func:`provision_with_uv` if needed.

    Raises:
        BackendError: nothing usable and ``allow_download`` is False.
        InstallError, InstallCancelled: from the uv step.
    """
    search = find_interpreter(paths, app_python=app_python, app_version=app_version, search_path=search_path)
    if search.choice is not None:
        if log is not None:
            log(f"Backend interpreter: {search.summary}")
        return search.choice
    if not allow_download:
        raise BackendError(
            f"No Python in {python_range_str()} found ({'; '.join(search.rejected)}). "
            "Install python3.12 or python3.11, or run setup allowing the uv download."
        )
    if log is not None:
        log(search.summary)
    choice = provision_with_uv(paths, app_python=app_python, index_args=index_args, log=log, cancel=cancel)
    if log is not None:
        log(f"Backend interpreter: {choice.path} (Python {choice.version_str}): {choice.reason}")
    return choice
