"""What answers at an endpoint: ``GET /health`` and ``GET /v1/models``, and whether it hosts a model.

Used for every server the app did not launch itself (a remote URL, a server started by hand on the
configured port) and to confirm its own. sglang-omni reports the ``--model-name``, which defaults
to the ``--model-path`` (the repo id), as the one id in ``/v1/models`` (``sglang_omni/serve/openai_api.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omni_web.catalog import CatalogEntry, entry_for_repo, get_entry
from omni_web.client import SpeechClient
from omni_web.errors import ForeignServer, OmniWebError, ServerNotRunning, ServerUnavailable, UnknownModel
from omni_web.server.status import Endpoint, ServerState

__all__ = ["EndpointProbe", "catalog_key_for", "foreign_endpoint", "hosted_model_id", "probe_endpoint"]


@dataclass(frozen=True, slots=True)
class EndpointProbe:
    """One look at an endpoint: whether anything answered, its health word, the ids it serves."""

    base_url: str
    reachable: bool
    status: str = ""  # "healthy" | "starting" | "unhealthy" | "unknown" | "" when unreachable
    http_status: int | None = None
    stages: tuple[str, ...] = ()
    model_ids: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        """True for 200 ``healthy``."""
        return self.http_status == 200 and self.status == "healthy"

    @property
    def state(self) -> ServerState:
        """The probe as a :class:`ServerState`."""
        if not self.reachable:
            return ServerState.STOPPED
        if self.healthy:
            return ServerState.HEALTHY
        if self.status == "unhealthy" or not self.speaks_sgl_omni:
            return ServerState.FAILED
        return ServerState.STARTING

    @property
    def speaks_sgl_omni(self) -> bool:
        """False when something answered ``/health`` without a status word: another kind of server
        (sglang-omni's ``/health`` always names one, ``starting`` while it warms up)."""
        return not self.reachable or self.status != "unknown"


def probe_endpoint(
    base_url: str,
    *,
    client_factory: Callable[..., SpeechClient] = SpeechClient,
    timeout_s: float = 5.0,
) -> EndpointProbe:
    """Ask ``base_url`` for ``/health`` and, when anything answered, ``/v1/models``.

    Never raises for an unreachable or odd server; the probe says what was seen.
    """
    client = client_factory(base_url, timeout_s=timeout_s, connect_retries=0)
    try:
        try:
            health = client.health(timeout_s=timeout_s)
        except ServerUnavailable:
            return EndpointProbe(base_url=client.base_url, reachable=False)
        try:
            ids = tuple(client.model_ids())
        except OmniWebError:
            # Still warming up, or not an sgl-omni server: no ids to compare against.
            ids = ()
        return EndpointProbe(
            base_url=client.base_url,
            reachable=True,
            status=health.status,
            http_status=health.http_status,
            stages=health.stages,
            model_ids=ids,
        )
    finally:
        client.close()


def hosted_model_id(entry: CatalogEntry, model_ids: Sequence[str]) -> str | None:
    """The id in ``model_ids`` that names ``entry`` (its repo id, ``@revision`` ignored, or its key)."""
    for model_id in model_ids:
        if model_id.strip().lower() == entry.key.lower():
            return model_id
        found = entry_for_repo(model_id)
        if found is not None and found.key == entry.key:
            return model_id
    return None


def catalog_key_for(model_ids: Sequence[str]) -> str | None:
    """The catalog key of the first id that names a catalog model, if any."""
    for model_id in model_ids:
        found = entry_for_repo(model_id)
        if found is not None:
            return found.key
        try:
            return get_entry(model_id.strip()).key
        except UnknownModel:
            continue
    return None


def foreign_endpoint(entry: CatalogEntry, probe: EndpointProbe, *, remote: bool) -> Endpoint:
    """The endpoint of a server the app did not start (``remote``: the remote-URL setting), once it
    is known to answer, host ``entry`` and be healthy.

    Raises:
        ServerNotRunning: nothing answers, or it is not healthy yet.
        ForeignServer: it hosts another model.
    """
    where = "remote server" if remote else "server (not started by omni-web)"
    if not probe.reachable:
        raise ServerNotRunning(
            f"Nothing answers at the {where} {probe.base_url}. Start it, or fix the URL in Settings "
            "(CLI: --api-url)."
        )
    model_id = hosted_model_id(entry, probe.model_ids)
    if model_id is None:
        hosted = ", ".join(probe.model_ids) or "no model it would name"
        raise ForeignServer(probe.base_url, hosted_model=hosted, wanted_model=entry.key)
    if not probe.healthy:
        raise ServerNotRunning(
            f"The {where} at {probe.base_url} hosts {entry.label} but is not ready "
            f"(/health: {probe.status or 'no answer'}, HTTP {probe.http_status}). Wait until it "
            "is healthy, then try again."
        )
    return Endpoint(base_url=probe.base_url, model_key=entry.key, model_id=model_id, owned=False)
