"""Model install and the add/remove diff the Models tab applies as one task.

Installing a model is its recipe: companion packages into the backend venv (``--no-deps``),
then its weights into the HF cache. Neither a missing system program (sox, ffmpeg) nor a backend
venv that is not set up yet blocks the download: both become warnings, and the server installs
missing companions again before it starts. A diff runs removals first (freeing space), then the
downloads; one failed model does not stop the others, a cancel stops everything.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.companions import ensure_companion_packages
from omni_web.backend.run import LogCallback
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.errors import BackendError, DownloadCancelled, InstallCancelled, ModelError, OmniWebError
from omni_web.models.download import ProgressCallback, download_model
from omni_web.models.removal import StopServerHosting, plan_removal
from omni_web.paths import DataPaths
from omni_web.systools import check_system_tools

__all__ = ["ModelDiffResult", "ModelInstallResult", "apply_model_diff", "install_model"]


@dataclass(frozen=True, slots=True)
class ModelInstallResult:
    """One installed model: where its snapshot is, which companions were added, what to fix."""

    key: str
    snapshot_path: Path
    companions_installed: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModelDiffResult:
    """The outcome of :func:`apply_model_diff`."""

    removed: tuple[str, ...]
    freed_bytes: int
    installed: tuple[ModelInstallResult, ...]
    failed: tuple[tuple[str, str], ...]  # (key, message)

    @property
    def ok(self) -> bool:
        """True when every requested install succeeded."""
        return not self.failed

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every install's warnings, in order."""
        return tuple(warning for result in self.installed for warning in result.warnings)


def _companions(
    paths: DataPaths, entry: CatalogEntry, *, log: LogCallback | None, cancel: threading.Event | None,
    index_args: Sequence[str],
) -> tuple[tuple[str, ...], list[str]]:
    """Run the companion recipe; problems other than a cancel become warnings."""
    if not entry.companion_packages:
        return (), []
    try:
        installed = ensure_companion_packages(paths, entry, log=log, cancel=cancel, index_args=index_args)
    except InstallCancelled:
        raise
    except BackendError as exc:
        return (), [
            f"{entry.label}: companion packages ({', '.join(entry.companion_packages)}) not installed: {exc} "
            "They are installed again before the server starts."
        ]
    return tuple(installed), []


def _tool_warnings(entry: CatalogEntry, which: Callable[[str], str | None]) -> list[str]:
    warnings = []
    for tool in check_system_tools([entry], which=which):
        if not tool.found and entry.key in tool.required_by:
            lines = "; ".join(f"{manager}: {command}" for manager, command in tool.install)
            warnings.append(
                f"{entry.label}: the '{tool.name}' program is missing; the server cannot use this model "
                f"until it is installed ({lines})."
            )
    return warnings


def install_model(
    entry: CatalogEntry,
    paths: DataPaths,
    *,
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | str | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
    index_args: Sequence[str] = (),
    which: Callable[[str], str | None] = shutil.which,
) -> ModelInstallResult:
    """Companion packages, then weights; missing system programs only warn.

    Raises:
        GatedModel, DownloadError, DiskFullError: from the download.
        DownloadCancelled, InstallCancelled: ``cancel`` was set.
    """
    companions, warnings = _companions(paths, entry, log=log, cancel=cancel, index_args=index_args)
    warnings += _tool_warnings(entry, which)
    for warning in warnings:
        if log is not None:
            log(f"WARNING: {warning}")
    if log is not None:
        log(f"Downloading {entry.key} ({entry.repo_id}) into the Hugging Face cache")
    snapshot = download_model(
        entry, progress=progress, cancel=cancel, cache_dir=cache_dir, endpoint=endpoint, token=token
    )
    if log is not None:
        log(f"{entry.key}: downloaded to {snapshot}")
    return ModelInstallResult(entry.key, snapshot, companions, tuple(warnings))


def apply_model_diff(
    add: Iterable[str],
    remove: Iterable[str],
    *,
    paths: DataPaths,
    stop_server_hosting: StopServerHosting | None = None,
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | str | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
    index_args: Sequence[str] = (),
    which: Callable[[str], str | None] = shutil.which,
) -> ModelDiffResult:
    """Remove ``remove`` (stopping a managed server hosting one), then install ``add``.

    Args:
        add: catalog keys to install.
        remove: catalog keys to remove (the caller has confirmed).
        paths: the data root (backend venv for companions, logs).
        stop_server_hosting: called with each key before its files are deleted; the server
            layer passes a function that stops its managed server when it hosts that model.
        progress, log, cancel: as for :func:`install_model`.

    Raises:
        UnknownModel: a key is not in the catalog (checked before anything changes).
        ModelError: a key is both added and removed, or a removal failed.
        DownloadCancelled, InstallCancelled: ``cancel`` was set; finished steps stay done.
    """
    to_add = [get_entry(key) for key in dict.fromkeys(add)]
    to_remove = [get_entry(key).key for key in dict.fromkeys(remove)]
    both = sorted({entry.key for entry in to_add} & set(to_remove))
    if both:
        raise ModelError(f"{', '.join(both)} cannot be both installed and removed in one task; pick one.")
    removed, freed = (), 0
    if to_remove:
        plan = plan_removal(to_remove, cache_dir=cache_dir)
        if log is not None:
            log(plan.summary)
        freed = plan.execute(stop_server_hosting=stop_server_hosting)
        removed = plan.keys
    installed, failed = [], []
    for entry in to_add:
        if cancel is not None and cancel.is_set():
            raise DownloadCancelled(entry.key, entry.repo_id)
        try:
            installed.append(
                install_model(
                    entry, paths, progress=progress, log=log, cancel=cancel, cache_dir=cache_dir,
                    endpoint=endpoint, token=token, index_args=index_args, which=which,
                )
            )
        except (DownloadCancelled, InstallCancelled):
            raise
        except OmniWebError as exc:
            if log is not None:
                log(f"ERROR: {entry.key}: {exc}")
            failed.append((entry.key, str(exc)))
    return ModelDiffResult(removed, freed, tuple(installed), tuple(failed))
