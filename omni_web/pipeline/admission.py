"""What to tell a user before a conversion is queued: whether it can run, and what it will change.

A job for a model that is not downloaded is refused here with the same rule the Server tab's
Start follows (only downloaded models are started); a job for another model than the one our
server hosts is queued only after the user heard that its turn stops the loaded model.
"""

from __future__ import annotations

from collections.abc import Collection

from omni_web.catalog import CatalogEntry, get_entry
from omni_web.errors import ModelNotInstalled, UnknownModel
from omni_web.server import ServerState, ServerStatus

__all__ = ["model_switch_note", "require_runnable"]


def _label(key: str | None) -> str:
    try:
        return get_entry(key).label if key else ""
    except UnknownModel:  # an id not in the catalog (a foreign server): show it as it is
        return key or ""


def require_runnable(entry: CatalogEntry, *, downloaded: Collection[str], status: ServerStatus,
                     remote_url: str) -> None:
    """Raise ModelNotInstalled when no server can host ``entry``: not downloaded, none serves it.

    A remote server (Settings) or a server already hosting the model does not need the weights here.
    """
    if remote_url or entry.key in downloaded or status.hosts(entry.key):
        return
    raise ModelNotInstalled(entry.key, entry.repo_id, label=entry.label, cli_hint=False)  # Generate's words


def model_switch_note(entry: CatalogEntry, *, status: ServerStatus, remote_url: str) -> str | None:
    """The sentence to confirm when the job will stop our server's model to load ``entry``; else None."""
    if remote_url or not status.owned:
        return None
    if status.state not in (ServerState.HEALTHY, ServerState.STARTING) or status.model_key == entry.key:
        return None
    loaded = _label(status.model_key) or "another model"
    return (f"The server runs **{loaded}** now. When this job's turn comes, omni-web stops it and starts "
            f"**{entry.label}** (a restart takes a minute or more); jobs queued for {loaded} after this one "
            "restart it again.")
