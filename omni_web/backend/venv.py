"""The sglang-omni backend venv (``envs/sglomni``): probe it, create it, install or repair it.

An install is three idempotent steps, so running it again after a cancel, a crash or a failed
pip run repairs whatever was left: (1) create the venv unless it exists and its Python and pip
run (a broken one is recreated with ``--clear``); (2) ``pip install --pre sglang-omni==<pin>``;
(3) read the installed version back. A marker file in the venv records "installing" before
step 2 and "complete" after step 3, so a half-finished install is reported as such even when
pip left the package importable.
"""

from __future__ import annotations

import datetime
import enum
import json
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.disk import BACKEND_VENV_BYTES, DiskCheck, check_disk_space
from omni_web.backend.interpreter import InterpreterChoice, resolve_interpreter
from omni_web.backend.pip_progress import PipProgressLog, pip_progress_args
from omni_web.backend.run import LogCallback, new_log_path, run_step
from omni_web.catalog import SGLANG_OMNI_VERSION
from omni_web.errors import BackendError, InstallError
from omni_web.paths import DataPaths

__all__ = [
    "BACKEND_PACKAGE",
    "BackendState",
    "BackendStatus",
    "backend_python",
    "check_backend_disk",
    "install_backend",
    "probe_backend",
]

BACKEND_PACKAGE = "sglang-omni"
_MARKER_NAME = "omni-web-install.json"
_PROBE_TIMEOUT_S = 60.0
# Ask the venv itself: its Python, whether pip imports, and the installed backend version.
_PROBE_SCRIPT = """
import importlib.metadata as md, importlib.util, json, sys
try:
    version = md.version(sys.argv[1])
except md.PackageNotFoundError:
    version = None
print(json.dumps({"python": list(sys.version_info[:3]), "pip": importlib.util.find_spec("pip") is not None,
                  "version": version}))
"""


class BackendState(enum.StrEnum):
    """What a probe found in ``envs/sglomni``."""

    MISSING = "missing"  # no venv yet
    BROKEN = "broken"  # a venv folder whose Python does not run (or has no pip)
    INCOMPLETE = "incomplete"  # Python runs; sglang-omni absent or an install was interrupted
    OUTDATED = "outdated"  # sglang-omni installed, but not the pinned version
    READY = "ready"


@dataclass(frozen=True, slots=True)
class BackendStatus:
    """The backend venv as it is on disk."""

    venv_path: Path
    state: BackendState
    python_path: Path
    python_version: tuple[int, int, int] | None
    installed_version: str | None
    pinned_version: str
    detail: str

    @property
    def ready(self) -> bool:
        """True when ``sgl-omni`` at the pinned version can be run from the venv."""
        return self.state is BackendState.READY

    @property
    def python_version_str(self) -> str:
        """``3.11.7`` or ``-``."""
        return ".".join(map(str, self.python_version)) if self.python_version else "-"

    @property
    def sgl_omni(self) -> Path:
        """The ``sgl-omni`` entry point the server is launched with."""
        return self.venv_path / "bin" / "sgl-omni"

    @property
    def summary(self) -> str:
        """One line for reports."""
        return f"{self.venv_path}: {self.state.value} ({self.detail})"


def backend_python(paths: DataPaths) -> Path:
    """The backend venv's interpreter (it may not exist yet)."""
    return paths.backend_venv / "bin" / "python"


def _read_marker(venv: Path) -> dict:
    try:
        data = json.loads((venv / _MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_marker(venv: Path, state: str, version: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    (venv / _MARKER_NAME).write_text(
        json.dumps({"state": state, "version": version, "updated": stamp}) + "\n", encoding="utf-8"
    )


def _query_venv(python: Path, package: str) -> tuple[dict | None, str]:
    """Run the probe script in the venv; (facts, "") or (None, why it did not run)."""
    try:
        done = subprocess.run(  # noqa: S603 - argv list, no shell
            [str(python), "-c", _PROBE_SCRIPT, package],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"its Python does not run: {exc}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, f"its Python does not run: {lines[-1] if lines else done.returncode}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, "its Python gave an unreadable answer"


def probe_backend(
    paths: DataPaths, *, version: str = SGLANG_OMNI_VERSION, package: str = BACKEND_PACKAGE
) -> BackendStatus:
    """Look at ``envs/sglomni`` without changing it."""
    venv, python = paths.backend_venv, backend_python(paths)

    def status(state: BackendState, detail: str, py=None, installed=None) -> BackendStatus:
        return BackendStatus(venv, state, python, py, installed, version, detail)

    if not venv.exists():
        return status(BackendState.MISSING, "not created yet; run: python -m omni_web setup")
    if not python.exists():
        return status(BackendState.BROKEN, "no bin/python; setup will recreate it")
    facts, why_not = _query_venv(python, package)
    if facts is None:
        return status(BackendState.BROKEN, f"{why_not}; setup will recreate it")
    py = tuple(int(part) for part in facts["python"])
    installed = facts.get("version")
    if not facts.get("pip"):
        return status(BackendState.BROKEN, "pip is missing; setup will recreate the venv", py, installed)
    marker = _read_marker(venv)
    if installed is None:
        return status(BackendState.INCOMPLETE, f"{package} is not installed; run setup", py)
    if marker.get("state") == "installing":
        return status(BackendState.INCOMPLETE, "an install was interrupted; run setup to repair it", py,
                      installed)
    if installed != version:
        return status(
            BackendState.OUTDATED,
            f"{package} {installed} installed, {version} pinned; run setup",
            py,
            installed,
        )
    return status(
        BackendState.READY, f"{package} {installed}, Python {'.'.join(map(str, py))}", py, installed
    )


def check_backend_disk(paths: DataPaths) -> DiskCheck:
    """The disk check setup runs first: ~10 GB for the venv, against the space at ``envs/``."""
    return check_disk_space(paths.envs_dir, BACKEND_VENV_BYTES, purpose="The backend venv")


def _create_venv(
    interpreter: InterpreterChoice,
    venv: Path,
    *,
    clear: bool,
    log_path: Path,
    log: LogCallback | None,
    cancel: threading.Event | None,
) -> None:
    argv = [str(interpreter.path), "-m", "venv", *(["--clear"] if clear else []), str(venv)]
    step = run_step(argv, log_path=log_path, log=log, cancel=cancel, what="creating the backend venv")
    if not step.ok:
        raise InstallError(
            f"Creating {venv} with {interpreter.path} failed (exit code {step.returncode}): "
            f"{step.tail.splitlines()[-1] if step.tail else 'no output'}. See {log_path}.",
            log_path=log_path,
        )


def install_backend(
    paths: DataPaths,
    *,
    interpreter: InterpreterChoice | None = None,
    version: str = SGLANG_OMNI_VERSION,
    package: str = BACKEND_PACKAGE,
    index_args: Sequence[str] = (),
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
) -> BackendStatus:
    """Create (or repair) ``envs/sglomni`` and install the pinned sglang-omni into it.

    Args:
        paths: the data root.
        interpreter: the base Python; resolved with :func:`resolve_interpreter` when None.
        version: the pin (``catalog.SGLANG_OMNI_VERSION``).
        package: the distribution name (tests install a tiny stand-in).
        index_args: extra pip arguments that pick the index, e.g. ``--no-index --find-links DIR``.
        log: receives every output line and the step headers, live.
        cancel: set it to stop the running step (its process group gets SIGTERM, then SIGKILL).

    Returns:
        The probe after the install (READY on success).

    Raises:
        InstallError: a step failed; ``log_path`` holds the full output.
        InstallCancelled: ``cancel`` was set; run again to repair.
    """
    paths.ensure()
    log_path = new_log_path(paths.logs_dir, "backend-install")

    def say(line: str) -> None:
        with log_path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        if log is not None:
            log(line)

    disk = check_backend_disk(paths)
    say(("" if disk.ok else "WARNING: ") + disk.message)
    if interpreter is None:
        interpreter = resolve_interpreter(paths, log=say, cancel=cancel)
    before = probe_backend(paths, version=version, package=package)
    say(f"Backend venv before install: {before.summary}")
    if before.state in (BackendState.MISSING, BackendState.BROKEN):
        _create_venv(
            interpreter, paths.backend_venv, clear=before.state is BackendState.BROKEN,
            log_path=log_path, log=log, cancel=cancel,
        )
    _write_marker(paths.backend_venv, "installing", version)
    # Download progress as log lines (a big wheel otherwise looks like a hang), when pip can.
    progress_args = pip_progress_args(backend_python(paths))
    argv = [
        str(backend_python(paths)), "-m", "pip", "install", "--pre", *progress_args,
        "--disable-pip-version-check", *index_args, f"{package}=={version}",
    ]
    step_log = PipProgressLog(log) if log is not None else None
    step = run_step(argv, log_path=log_path, log=step_log, cancel=cancel,
                    what=f"pip install {package}=={version}")
    if not step.ok:
        raise InstallError(
            f"pip could not install {package}=={version} into {paths.backend_venv} (exit code "
            f"{step.returncode}). The last lines of {log_path} say why; fix that and run setup again "
            "(it repairs the half-finished install).",
            log_path=log_path,
        )
    after = probe_backend(paths, version=version, package=package)
    if after.installed_version != version:
        raise InstallError(
            f"pip finished but {package} {version} is not in {paths.backend_venv} ({after.detail}). See "
            f"{log_path}.",
            log_path=log_path,
        )
    _write_marker(paths.backend_venv, "complete", version)
    result = probe_backend(paths, version=version, package=package)
    say(f"Backend venv: {result.summary}")
    if not result.ready:
        raise BackendError(f"The backend venv is not ready after the install: {result.detail}.")
    return result
