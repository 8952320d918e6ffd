"""The managed server's state changes through one guarded transition; the Stop flag under the same lock."""

from __future__ import annotations

import threading

import pytest

from omni_web.errors import ServerNotRunning
from omni_web.server.lifecycle import ALLOWED, ServerLifecycle
from omni_web.server.status import MemberState, ServerState


def test_a_move_the_table_does_not_allow_is_refused_and_changes_nothing() -> None:
    life = ServerLifecycle()
    assert ServerState.HEALTHY not in ALLOWED[ServerState.STOPPED]  # never healthy without a start
    assert not life.transition(ServerState.HEALTHY)
    assert life.state is ServerState.STOPPED
    assert life.transition(ServerState.STARTING) and life.transition(ServerState.HEALTHY)
    # Noticing a dead server applies only to a healthy one.
    assert not life.transition(ServerState.FAILED, message="x", only_from=frozenset({ServerState.STARTING}))
    assert life.transition(ServerState.FAILED, message="exited", only_from=frozenset({ServerState.HEALTHY}))
    assert (life.state, life.message) == (ServerState.FAILED, "exited")
    assert all(to in ALLOWED for targets in ALLOWED.values() for to in targets)


def test_a_stop_refuses_crash_restarts_until_the_next_start() -> None:
    life = ServerLifecycle()
    life.request_stop()
    assert life.cancel.is_set() and life.stop_requested
    with pytest.raises(ServerNotRunning, match="stopped while the job"):
        life.arm(unless_stopped=True)
    with life.unless_stopped() as allowed:
        assert not allowed
    life.arm(unless_stopped=False)  # the user's own start clears it
    assert not life.stop_requested and not life.cancel.is_set()


def test_a_stop_waits_for_a_launch_decided_under_the_lock() -> None:
    """A launch guarded by unless_stopped() and a Stop are ordered: one sees the other."""
    life = ServerLifecycle()
    inside, release, stopped = threading.Event(), threading.Event(), threading.Event()

    def launch() -> None:
        with life.unless_stopped() as allowed:
            assert allowed
            inside.set()
            release.wait(10)

    def stop() -> None:
        life.request_stop()
        stopped.set()

    launcher = threading.Thread(target=launch)
    launcher.start()
    assert inside.wait(10)
    stopper = threading.Thread(target=stop)
    stopper.start()
    assert not stopped.wait(0.3)  # the Stop waits for the launch to be recorded
    release.set()
    launcher.join(10)
    stopper.join(10)
    assert stopped.is_set() and life.stop_requested


def test_member_states_read_the_routers_words() -> None:
    assert MemberState.of("healthy") is MemberState.HEALTHY and MemberState.of("dead") is MemberState.DEAD
    assert MemberState.of("something new") is MemberState.UNKNOWN
    assert MemberState.HEALTHY == "healthy" and f"{MemberState.NOT_IN_ROUTER}" == "not in router"
