"""Status snapshots of what serves: our group, our single server, or a foreign server (pure views).

The manager decides which one to look at; these functions turn what was probed into the
:class:`~omni_web.server.status.ServerStatus` the Server tab and ``server status`` show.
"""

from __future__ import annotations

from omni_web.server.discovery import EndpointProbe, catalog_key_for
from omni_web.server.group import ServerGroup
from omni_web.server.group_record import GroupRecord
from omni_web.server.record import ServerRecord
from omni_web.server.status import MemberState, ServerState, ServerStatus

__all__ = ["foreign_status", "group_status", "own_status"]


def group_status(group: ServerGroup, record: GroupRecord, state: ServerState) -> ServerStatus:
    """Our router and its workers: healthy while any worker is routable, with a row per member."""
    health = group.router_health()
    members = group.members(record, health)
    router = record.router
    if state is ServerState.STOPPING:
        shown = ServerState.STOPPING
    elif health is None:
        shown = ServerState.STARTING
    elif health.routable_workers > 0 and health.http_status == 200:
        shown = ServerState.HEALTHY if state is not ServerState.STARTING else ServerState.STARTING
    else:
        shown = ServerState.FAILED if state is not ServerState.STARTING else ServerState.STARTING
    message = ""
    if health is not None and not health.all_routable:
        down = [m for m in members[1:] if m.state is not MemberState.HEALTHY]
        message = f"{health.routable_workers} of {health.total_workers} workers routable" + (
            ": " + ", ".join(f"{m.role} {m.gpu or m.url} {m.state}" for m in down) if down else ""
        ) + "."
    return ServerStatus(
        state=shown,
        endpoint=router.base_url if router is not None else "",
        model_key=record.model_key,
        tag=record.tag,
        pid=router.pid if router is not None else None,
        owned=True,
        log_path=router.log_path if router is not None else None,
        message=message,
        members=members,
    )


def own_status(record: ServerRecord, state: ServerState, probe: EndpointProbe) -> ServerStatus:
    """Our single server, as its ``/health`` answers."""
    if state is ServerState.STOPPING:
        shown = ServerState.STOPPING
    else:
        shown = probe.state if probe.reachable else ServerState.STARTING
    return ServerStatus(
        state=shown,
        endpoint=record.base_url,
        model_key=record.model_key,
        tag=record.tag,
        model_ids=probe.model_ids,
        pid=record.pid,
        owned=True,
        log_path=record.log_path,
        message="The server reports 'unhealthy'; see its log." if shown is ServerState.FAILED else "",
    )


def foreign_status(probe: EndpointProbe, *, remote: bool) -> ServerStatus:
    """A server we did not start: the remote URL, or one found on our port."""
    message = ""
    if remote and not probe.reachable:
        message = f"Nothing answers at the remote URL {probe.base_url}; check Settings (CLI: --api-url)."
    elif not probe.speaks_sgl_omni:
        message = (f"{probe.base_url} answers, but not as an sgl-omni server (GET /health gave HTTP "
                   f"{probe.http_status} without a status). Check the URL and its port.")
    return ServerStatus(
        state=probe.state,
        endpoint=probe.base_url,
        model_key=catalog_key_for(probe.model_ids),
        model_ids=probe.model_ids,
        owned=False,
        remote=remote,
        message=message,
    )
