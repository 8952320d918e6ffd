"""What a bare box needs before it can serve: the backend venv and the model's weights.

The agent runs the Setup tab's own code (``install_backend``) when the venv is not ready, and the
Models tab's (``download_model``) before it serves a model the HF cache lacks, so a box with only
this repository and a Python joins with one command. pip and huggingface_hub read their usual
environment (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_CACHE``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from omni_web.backend import BackendStatus, install_backend, probe_backend
from omni_web.catalog import get_entry
from omni_web.models import DownloadProgress, download_model, installed_keys
from omni_web.paths import DataPaths

__all__ = ["ensure_backend", "ensure_model"]

_log = logging.getLogger("omni_web.farm")
_PROGRESS_STEP = 0.1  # log a download every 10 % (a 10 GB model is hours of lines otherwise)


def ensure_backend(paths: DataPaths, *, say: Callable[[str], None]) -> BackendStatus:
    """The box's backend venv, installed (or repaired) first when it is not ready.

    Raises:
        InstallError: pip failed; the message names the log to read.
    """
    status = probe_backend(paths)
    if status.ready:
        return status
    say(f"The SGLang-Omni backend is not ready here ({status.detail}); installing it into "
        f"{paths.backend_venv}. This takes a while the first time (about 10 GB).")
    status = install_backend(paths, log=_log.info)
    say(f"The backend is ready: {status.summary}")
    return status


def ensure_model(model_key: str, *, cancel: threading.Event | None = None) -> bool:
    """Download ``model_key``'s weights when the HF cache lacks them; True when it downloaded.

    Raises:
        KeyError: not a catalog model.
        GatedModel, DownloadError, DiskFullError: as :func:`download_model` says.
    """
    entry = get_entry(model_key)
    if entry.key in installed_keys():
        return False
    _log.warning("Downloading %s (%s) before serving it", entry.label, entry.repo_id)
    logged = [-1.0]

    def progress(event: DownloadProgress) -> None:
        if event.finished or event.fraction - logged[0] >= _PROGRESS_STEP:
            logged[0] = event.fraction
            _log.warning("download %s", event.summary)

    download_model(entry, progress=progress, cancel=cancel)
    return True
