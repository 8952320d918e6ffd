"""Rows of the Server tab for a group: the router, then each worker, then each remote worker."""

from __future__ import annotations

from omni_web.server.group_record import GroupRecord
from omni_web.server.record import record_matches_process
from omni_web.server.router import RouterHealth
from omni_web.server.status import GroupMember, MemberState

__all__ = ["member_rows"]


def member_rows(
    record: GroupRecord, health: RouterHealth | None, reviving: set[str]
) -> tuple[GroupMember, ...]:
    """The router and each worker as status rows: GPU, URL, state, requests routed, failures, log.

    ``reviving`` are the worker URLs being started again now.
    """
    router = record.router
    router_alive = router is not None and record_matches_process(router)
    if router is None:
        router_state = MemberState.STARTING
    elif not router_alive:
        router_state = MemberState.DOWN
    elif health is None:
        router_state = MemberState.STARTING
    else:
        router_state = MemberState.of(health.status or "unknown")
    rows = [
        GroupMember(
            role="router",
            url=router.base_url if router is not None else "",
            state=router_state,
            pid=router.pid if router_alive and router is not None else None,
            log_path=router.log_path if router is not None else None,
            note=f"{health.routable_workers} of {health.total_workers} routable"
            if health is not None
            else "",
        )
    ]
    for worker in record.workers:
        alive = record_matches_process(worker.record)
        seen = health.worker(worker.url) if health is not None else None
        if worker.url in reviving:
            state = MemberState.RESTARTING
        elif not alive:
            state = MemberState.DOWN
        else:
            state = MemberState.of(seen.health_state) if seen is not None else MemberState.STARTING
        rows.append(
            GroupMember(
                role="worker",
                url=worker.url,
                state=state,
                gpu=worker.gpu,
                pid=worker.record.pid if alive else None,
                routed=seen.routed_requests if seen is not None else None,
                failed=seen.failed_requests if seen is not None else None,
                active=seen.active_requests if seen is not None else None,
                log_path=worker.record.log_path,
                note=(seen.last_error or "") if seen is not None and not seen.routable else "",
            )
        )
    known = {w.url for w in record.workers}
    remote_urls = list(record.remote_urls)
    if health is not None:  # also show remotes added to the router by hand
        remote_urls += [w.url for w in health.workers if w.url not in known and w.url not in remote_urls]
    for url in remote_urls:
        seen = health.worker(url) if health is not None else None
        rows.append(
            GroupMember(
                role="remote",
                url=url,
                state=_remote_state(seen.routable, seen.health_state)
                if seen is not None
                else MemberState.NOT_IN_ROUTER,
                routed=seen.routed_requests if seen is not None else None,
                failed=seen.failed_requests if seen is not None else None,
                active=seen.active_requests if seen is not None else None,
                note=(seen.last_error or "") if seen is not None and not seen.routable else "",
            )
        )
    return tuple(rows)


def _remote_state(routable: bool, health_state: str) -> MemberState:
    """A remote worker the router lists: down when it cannot route to it (once it has probed it)."""
    state = MemberState.of(health_state)
    return MemberState.DOWN if not routable and state is not MemberState.UNKNOWN else state
