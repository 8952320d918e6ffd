"""The whole setup picture in one record: interpreter, backend venv, GPUs, tools, disk, models.

``python -m omni_web setup --check`` prints :func:`render_setup_report`; the web UI's Setup tab can
render the same :class:`SetupReport` fields its own way. Collecting changes nothing on disk and
downloads nothing.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.backend.disk import DiskCheck, DiskSpace, disk_space
from omni_web.backend.interpreter import InterpreterSearch, find_interpreter, python_range_str
from omni_web.backend.venv import BackendStatus, check_backend_disk, probe_backend
from omni_web.catalog import CATALOG, SGLANG_OMNI_VERSION
from omni_web.gpu import FitHint, GpuProbe, fit_hint, probe_gpus
from omni_web.models.cache import CachedModel, cached_models, hub_cache_dir
from omni_web.paths import DataPaths
from omni_web.systools import ToolStatus, check_book_tools, check_system_tools, detect_package_manager

__all__ = ["MISSING_TOOL_NOTE", "SetupReport", "collect_setup_report", "render_setup_report"]

MISSING_TOOL_NOTE = "A missing program never blocks a model download; the server needs it to use that model."


@dataclass(frozen=True, slots=True)
class SetupReport:
    """Everything ``setup --check`` shows."""

    data_root: Path
    interpreter: InterpreterSearch
    backend: BackendStatus
    gpu: GpuProbe
    fit: tuple[FitHint, ...]
    tools: tuple[ToolStatus, ...]
    package_manager: str | None
    backend_disk: DiskCheck
    cache_dir: Path
    cache_disk: DiskSpace
    models: tuple[CachedModel, ...]
    models_error: str = ""

    @property
    def installed(self) -> tuple[CachedModel, ...]:
        """The completely downloaded models."""
        return tuple(model for model in self.models if model.complete)

    @property
    def tools_missing(self) -> bool:
        """True when any system program is not found."""
        return any(not tool.found for tool in self.tools)

    def install_commands(self, tool: ToolStatus) -> list[tuple[str, str]]:
        """``(package manager, command)`` pairs that install ``tool``, this machine's manager first."""
        return sorted(tool.install, key=lambda item: item[0] != self.package_manager)


def collect_setup_report(
    paths: DataPaths,
    *,
    nvml: Any = None,
    cache_dir: Path | str | None = None,
    which: Callable[[str], str | None] = shutil.which,
    app_python: Path | str | None = None,
    app_version: Sequence[int] | None = None,
) -> SetupReport:
    """Look at everything without changing anything (the seams are for tests)."""
    cache = hub_cache_dir(cache_dir)
    gpu = probe_gpus(nvml)
    try:
        models, models_error = tuple(cached_models(cache_dir=cache)), ""
    except (OSError, ValueError) as exc:  # an unreadable cache folder must not hide the rest
        models, models_error = (), f"could not read the HF cache at {cache}: {exc}"
    return SetupReport(
        data_root=paths.root,
        interpreter=find_interpreter(paths, app_python=app_python or sys.executable, app_version=app_version),
        backend=probe_backend(paths),
        gpu=gpu,
        fit=tuple(fit_hint(entry, gpu) for entry in CATALOG),
        tools=(*check_system_tools(CATALOG, which=which), *check_book_tools(which=which)),
        package_manager=detect_package_manager(which),
        backend_disk=check_backend_disk(paths),
        cache_dir=cache,
        cache_disk=disk_space(cache),
        models=models,
        models_error=models_error,
    )


def _mark(ok: bool) -> str:
    return "ok  " if ok else "!!  "


def _gpu_lines(report: SetupReport) -> list[str]:
    gpu = report.gpu
    lines = ["GPU (NVML)"]
    if not gpu.available:
        bar = "!" * 78
        return [*lines, f"  {bar}", f"  {gpu.warning}", f"  {bar}"]
    lines.append(f"  driver {gpu.driver_version}")
    lines += [f"  {info.summary}" for info in gpu.gpus]
    if gpu.warning:
        lines.append(f"  !! {gpu.warning}")
    lines.append("Model fit on GPU 0")
    width = max(len(hint.key) for hint in report.fit)
    for hint in report.fit:
        lines.append(f"  {_mark(hint.fits)}{hint.key:<{width}}  {hint.message}")
    return lines


def _tool_lines(report: SetupReport) -> list[str]:
    lines = ["System tools"]
    width = max(len(tool.name) for tool in report.tools)
    for tool in report.tools:
        where = tool.path or "MISSING"
        needed_by = f"(needed by {tool.required_by_str})"
        lines.append(f"  {_mark(tool.found)}{tool.name:<{width}}  {where}  {needed_by}")
        if not tool.found:
            lines += [f"        {manager}: {command}" for manager, command in report.install_commands(tool)]
    if report.tools_missing:
        lines.append(f"  {MISSING_TOOL_NOTE}")
    return lines


def _model_lines(report: SetupReport) -> list[str]:
    lines = [f"Models in the Hugging Face cache ({report.cache_dir})"]
    if report.models_error:
        return [*lines, f"  !! {report.models_error}"]
    if not report.models:
        return [*lines, "  none installed (python -m omni_web models list | install KEY)"]
    width = max(len(model.key) for model in report.models)
    for model in report.models:
        extra = f"  ({model.detail})" if model.detail else ""
        lines.append(f"  {model.key:<{width}}  {model.status_str:<9}  {model.size_str:>9}{extra}")
    return lines


def render_setup_report(report: SetupReport) -> str:
    """The plain-text report ``setup --check`` prints."""
    search, backend = report.interpreter, report.backend
    lines = [
        "omni-web setup check",
        f"  data root: {report.data_root}",
        f"Backend interpreter (sglang-omni {SGLANG_OMNI_VERSION} needs Python {python_range_str()})",
        f"  {_mark(search.choice is not None)}{search.summary}",
    ]
    lines += [f"      rejected: {why}" for why in search.rejected]
    lines += [
        "Backend venv",
        f"  {_mark(backend.ready)}{backend.venv_path}: {backend.state.value}",
        f"      {backend.detail}",
        f"      sglang-omni: {backend.installed_version or 'not installed'} (pinned "
        f"{backend.pinned_version});"
        f" venv Python: {backend.python_version_str}",
    ]
    lines += _gpu_lines(report)
    lines += _tool_lines(report)
    disk = report.backend_disk
    lines += [
        "Disk",
        f"  {_mark(disk.ok or backend.ready)}{disk.message}",
        f"  HF cache {report.cache_dir}: {report.cache_disk.free_str} free of {report.cache_disk.total_str}"
        " (each model needs 1-18 GB)",
    ]
    lines += _model_lines(report)
    return "\n".join(lines)
