"""What stands between a fresh install and a model that can narrate: the first-run checklist.

Three steps, each done in its own tab: install the backend (Setup), download a model (Models),
start the server (Server). A remote server URL, or any healthy server, makes the first two moot.
The checklist is read from the disk and the server each time; nothing is remembered.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from omni_web.backend import BackendState
from omni_web.server import ServerStatus
from omni_web.settings import Settings

__all__ = ["Readiness", "ReadinessStep", "first_run_readiness"]


@dataclass(frozen=True, slots=True)
class ReadinessStep:
    """One line of the checklist; ``tab`` is the id of the tab where it is done."""

    title: str
    done: bool
    detail: str
    tab: str


@dataclass(frozen=True, slots=True)
class Readiness:
    """The checklist; ``can_run`` once a model can take a job."""

    steps: tuple[ReadinessStep, ...]
    can_run: bool

    @property
    def next_step(self) -> ReadinessStep | None:
        """The first step not done yet."""
        return next((step for step in self.steps if not step.done), None)


def first_run_readiness(
    *,
    backend_state: BackendState,
    downloaded: Collection[str],
    status: ServerStatus,
    settings: Settings,
    model_labels: dict[str, str] | None = None,
) -> Readiness:
    """The checklist for this install.

    Args:
        backend_state: the backend venv's state (``probe_backend(paths).state``).
        downloaded: catalog keys of the models in the Hugging Face cache.
        status: the server as it is now.
        settings: for the remote URL.
        model_labels: key -> name as users read it, for the details.
    """
    labels = model_labels or {}
    serving = status.healthy and bool(status.model_key or status.model_ids)
    if settings.remote_url or (serving and not status.owned):
        where = "the remote server" if settings.remote_url else "a server omni-web did not start"
        step = ReadinessStep(
            "Server", serving, f"Jobs use {where} at {status.endpoint or settings.remote_url}.", "server"
        )
        return Readiness((step,), can_run=serving or bool(settings.remote_url))
    backend_ok = backend_state is BackendState.READY
    backend = ReadinessStep(
        "Install the SGLang-Omni backend",
        backend_ok,
        "Installed."
        if backend_ok
        else f"Backend {backend_state.value}: press Install / Repair in Setup (about 10 GB). "
        "Already running sgl-omni on this or another machine? Skip these steps: put its URL in Server → "
        "Remote server URL.",
        "setup",
    )
    names = ", ".join(labels.get(key, key) for key in downloaded)
    model = ReadinessStep(
        "Download a model",
        bool(downloaded),
        f"Downloaded: {names}."
        if downloaded
        else "Check a model in Models and press Apply "
        "(Qwen3-TTS 0.6B CustomVoice is the smallest that narrates with built-in voices).",
        "models",
    )
    hosted = labels.get(status.model_key or "", status.model_key or "")
    server = ReadinessStep(
        "Start the server",
        serving,
        f"Serving {hosted}."
        if serving
        else "Press Start in Server (a job also starts it when its turn comes).",
        "server",
    )
    return Readiness((backend, model, server), can_run=serving or (backend_ok and bool(downloaded)))
