"""The one retry policy: every retry backs off, a timeout waits long, nothing permanent is retried."""

from __future__ import annotations

from omni_web.errors import (
    KVCapacityError,
    RequestTimedOut,
    ServerBusy,
    ServerMisconfigured,
    ServerUnavailable,
    ServerUnreachable,
    SpeechError,
    UnknownVoice,
)
from omni_web.retry import NO_RETRY, FailureKind, RetryPolicy, failure_kind


def test_each_failure_has_one_kind() -> None:
    assert failure_kind(ServerUnreachable("refused")) is FailureKind.UNREACHABLE
    assert failure_kind(ServerUnavailable("older code")) is FailureKind.UNREACHABLE
    assert failure_kind(ServerBusy("queue full", status_code=503)) is FailureKind.BUSY
    assert failure_kind(SpeechError("CUDA out of memory", status_code=500)) is FailureKind.BUSY
    assert failure_kind(RequestTimedOut("no answer in 600 s")) is FailureKind.TIMED_OUT
    for permanent in (ServerMisconfigured("PyAV or pydub is required", status_code=503),
                      SpeechError("bad field", status_code=400), UnknownVoice("x", ["a"]),
                      KVCapacityError("too long", kv_capacity=1, input_tokens=2, max_new_tokens=3),
                      ValueError("not a WAV file")):
        assert failure_kind(permanent) is FailureKind.PERMANENT, permanent


def test_every_retry_waits_and_the_wait_grows() -> None:
    policy = RetryPolicy(attempts=5, backoff_s=2.0, max_backoff_s=10.0)
    busy = ServerBusy("queue full", status_code=503)
    assert [policy.delay_s_for(busy, n) for n in range(1, 6)] == [2.0, 4.0, 8.0, 10.0, None]
    assert all(policy.delay_s_for(ServerUnreachable("x"), n) > 0 for n in range(1, 10))


def test_a_timeout_is_never_resent_at_once() -> None:
    policy = RetryPolicy(backoff_s=2.0, timeout_backoff_s=45.0)
    assert policy.delay_s_for(RequestTimedOut("slow"), 1) == 45.0
    assert RetryPolicy(retry_timeouts=False).delay_s_for(RequestTimedOut("slow"), 1) is None


def test_nothing_permanent_is_retried_and_no_retry_means_one_attempt() -> None:
    policy = RetryPolicy()
    assert policy.delay_s_for(SpeechError("bad", status_code=400), 1) is None
    assert policy.delay_s_for(ServerMisconfigured("no encoder", status_code=503), 1) is None
    for error in (ServerUnreachable("x"), ServerBusy("y"), RequestTimedOut("z")):
        assert NO_RETRY.delay_s_for(error, 1) is None


def test_an_unreachable_server_gets_more_patience_than_a_failing_request() -> None:
    policy = RetryPolicy(attempts=3, unreachable_attempts=6)
    assert policy.delay_s_for(SpeechError("oom", status_code=500), 3) is None
    assert policy.delay_s_for(ServerUnreachable("restarting"), 5) is not None
    assert policy.delay_s_for(ServerUnreachable("restarting"), 6) is None
    client_like = RetryPolicy(attempts=3, unreachable_attempts=None, retry_server_errors=False)
    assert (
        client_like.delay_s_for(SpeechError("oom", status_code=500), 1) is None
    )  # the client never retries a 500
    assert client_like.delay_s_for(ServerBusy("full", status_code=503), 1) is not None
