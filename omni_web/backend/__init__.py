"""The sglang-omni backend: its interpreter, its venv, companion packages and disk checks.

Modules: ``interpreter`` (which Python the venv is built from), ``venv`` (probe, install,
repair), ``companions`` (per-model ``--no-deps`` packages), ``disk`` (free space and warnings),
``run`` (one cancelable child process with a live log). The public names are re-exported here.
"""

from omni_web.backend.companions import (
    CompanionStatus,
    companion_status,
    ensure_companion_packages,
    missing_companion_packages,
)
from omni_web.backend.disk import (
    BACKEND_VENV_BYTES,
    DiskCheck,
    DiskSpace,
    check_disk_space,
    disk_space,
    format_bytes,
)
from omni_web.backend.interpreter import (
    InterpreterChoice,
    InterpreterSearch,
    InterpreterSource,
    find_interpreter,
    provision_with_uv,
    python_range_str,
    query_python_version,
    resolve_interpreter,
    version_in_range,
)
from omni_web.backend.run import StepResult, new_log_path, run_step
from omni_web.backend.venv import (
    BackendState,
    BackendStatus,
    backend_python,
    check_backend_disk,
    install_backend,
    probe_backend,
)

__all__ = [
    "BACKEND_VENV_BYTES",
    "BackendState",
    "BackendStatus",
    "CompanionStatus",
    "DiskCheck",
    "DiskSpace",
    "InterpreterChoice",
    "InterpreterSearch",
    "InterpreterSource",
    "StepResult",
    "backend_python",
    "check_backend_disk",
    "check_disk_space",
    "companion_status",
    "disk_space",
    "ensure_companion_packages",
    "find_interpreter",
    "format_bytes",
    "install_backend",
    "missing_companion_packages",
    "new_log_path",
    "probe_backend",
    "provision_with_uv",
    "python_range_str",
    "query_python_version",
    "resolve_interpreter",
    "run_step",
    "version_in_range",
]
