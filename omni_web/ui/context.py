"""What every tab is built with: the app's services, the background tasks and a few seams.

:class:`UiContext` is created once per app (``omni_web.ui.app.build_app``) and passed to each
tab's ``build(ctx)``. It holds no per-user state and no job state: jobs live in the job store,
background tasks in the :class:`~omni_web.tasks.TaskRunner`, settings in the settings file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from omni_web.gpu import GpuProbe, probe_gpus
from omni_web.paths import DataPaths
from omni_web.settings import Settings
from omni_web.tasks import TaskRunner
from omni_web.voices import VoiceLibrary

if TYPE_CHECKING:
    from omni_web.library import Library
    from omni_web.server import ServerManager
    from omni_web.voices.on_server import ServerVoices

__all__ = ["OnLoad", "Services", "UiContext"]

# Background task kinds (one task of each at a time).
TASK_BACKEND = "backend"
TASK_MODELS = "models"
TASK_SERVER = "server"
TASK_TRANSCRIBER = "transcriber"


@dataclass(frozen=True, slots=True)
class OnLoad:
    """What a tab renders when a page opens (``app.py`` registers it with ``demo.load``)."""

    fn: Callable[..., Any]
    inputs: Sequence[Any]
    outputs: Sequence[Any]


class Services(Protocol):
    """The core objects and calls the UI drives (``omni_web.services.AppServices`` provides them);
    tests/test_services_protocol.py checks that the UI uses nothing else and AppServices has all of it.
    Books are queued, steered and found through ``library``; jobs are read through ``library.jobs``."""

    paths: DataPaths
    library: Library
    server: ServerManager

    @property
    def settings(self) -> Settings:
        """The settings as saved now."""

    @property
    def server_voices(self) -> ServerVoices:
        """Voice listing, upload and deletion on a server."""

    def save_settings(self, settings: Settings) -> Settings:
        """Validate, persist and apply new settings."""


@dataclass(frozen=True, slots=True)
class UiContext:
    """The app-wide objects handed to every tab.

    ``hf_cache_dir`` and ``hf_endpoint`` are None for the standard Hugging Face cache and hub;
    ``backend_index_args`` are extra pip arguments for the backend install (e.g. a local wheel
    folder: ``--no-index --find-links DIR``). ``nvml`` is a pynvml-like object for the GPU probe
    (None: ``import pynvml``); ``web_port`` is the port the app was launched on; ``whisper_loader``
    loads faster-whisper for transcripts, called like ``omni_web.voices.load_whisper_model`` (None:
    that function). Tests point them all elsewhere.
    """

    services: Services
    tasks: TaskRunner = field(default_factory=TaskRunner)
    hf_cache_dir: Path | None = None
    hf_endpoint: str | None = None
    backend_index_args: tuple[str, ...] = ()
    nvml: Any = None
    whisper_loader: Callable[..., Any] | None = None
    web_port: int | None = None  # the port this app really listens on (webapp.py --port or the setting)

    @property
    def paths(self) -> DataPaths:
        """The data root."""
        return self.services.paths

    @property
    def settings(self) -> Settings:
        """The current settings (read from the file each time, so every browser sees the same)."""
        return self.services.settings

    @property
    def library(self) -> VoiceLibrary:
        """The reference-clip library."""
        return VoiceLibrary(self.paths)

    def probe_gpus(self) -> GpuProbe:
        """The GPUs as NVML reports them now (never raises; no GPU gives a warning instead)."""
        return probe_gpus(self.nvml)

    def save_settings(self, settings: Settings) -> Settings:
        """Validate and save ``settings``; the server manager uses them from its next operation."""
        return self.services.save_settings(settings)
