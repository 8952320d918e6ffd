"""The sglang-omni backend venv, model weights and downloads, the GPU probe."""

from __future__ import annotations

from pathlib import Path

from omni_web.errors.base import OmniWebError

__all__ = [
    "BackendError",
    "DownloadCancelled",
    "DownloadError",
    "GatedModel",
    "InstallCancelled",
    "InstallError",
    "ModelError",
    "ModelNotInstalled",
    "TranscriberNotInstalled",
]


class BackendError(OmniWebError):
    """The sglang-omni backend venv is missing, broken, or has no usable interpreter."""


class InstallError(BackendError):
    """A pip/uv step failed; ``log_path`` holds the full output."""

    def __init__(self, message: str, *, log_path: Path | None = None) -> None:
        self.log_path = log_path
        super().__init__(message)


class InstallCancelled(BackendError):
    """The user cancelled a pip/uv step; the child was stopped and a re-run repairs the venv."""

    def __init__(self, message: str, *, log_path: Path | None = None) -> None:
        self.log_path = log_path
        super().__init__(message)


class ModelError(OmniWebError):
    """A model cannot be installed, found or removed."""


class ModelNotInstalled(ModelError, FileNotFoundError):
    """The model's weights are not in the Hugging Face cache."""

    def __init__(self, key: str, repo_id: str, *, label: str = "", cli_hint: bool = True) -> None:
        self.key = key
        self.repo_id = repo_id
        name = label or f"Model '{key}'"
        # The command names the catalog key the CLI takes; a page (cli_hint=False) says it in words.
        hint = f" (CLI: python -m omni_web models install {key})" if cli_hint else ""
        super().__init__(
            f"{name} ({repo_id}) is not downloaded. Download it in the Models tab, then try again{hint}."
        )

    def __str__(self) -> str:  # FileNotFoundError would format errno/filename
        return str(self.args[0])


class TranscriberNotInstalled(ModelNotInstalled):
    """The faster-whisper weights that transcribe reference clips are not in the HF cache.

    ``key`` is ``whisper-<size>``; ``size`` is the Settings value (``transcription_model``).
    """

    def __init__(self, size: str, repo_id: str) -> None:
        self.key = f"whisper-{size}"
        self.size = size
        self.repo_id = repo_id
        # Skip ModelNotInstalled's text: the remedy is the voices command, not `models install`.
        super(ModelNotInstalled, self).__init__(
            f"The transcription model faster-whisper '{size}' ({repo_id}) is not downloaded. "
            f"Download it with: python -m omni_web voices transcriber install --size {size} "
            "(or type the transcript yourself)."
        )


class GatedModel(ModelError):
    """The hub refused a download because the repository is gated."""


class DownloadError(ModelError):
    """A download failed (network, disk, hub error)."""


class DownloadCancelled(ModelError):
    """The user cancelled a model download; finished files stay cached, the rest is fetched again."""

    def __init__(self, key: str, repo_id: str) -> None:
        self.key = key
        self.repo_id = repo_id
        super().__init__(
            f"Download of '{key}' ({repo_id}) was cancelled. Files that finished stay in the cache; "
            f"install the model again to fetch the rest."
        )
