"""The one retry policy: which failures are worth another try, and how long to wait first.

Every retry loop in the app (the HTTP client's for single calls, the renderer's for a book's
chunks) asks :meth:`RetryPolicy.delay_s_for`; nothing else decides. A conversion's client makes
one attempt per call (:data:`NO_RETRY`) so the renderer's policy is the only one in force
there, and every retry waits first: exponential back-off from ``backoff_s``, and a request that
timed out waits at least ``timeout_backoff_s`` (the server may still be busy with it).

Kinds of failure (:func:`failure_kind`):

- unreachable: nothing answered; the request was never processed (for our own server, maybe a
  crash: the renderer's restart logic sees these first);
- busy: 503 queue full, or another 5xx (the engine failed the batch, often for memory);
- timed out: the server took the request and did not answer in time;
- not transient: everything else (bad request, unknown voice, missing encoder, bad audio).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from omni_web.errors import (
    RequestTimedOut,
    ServerBusy,
    ServerMisconfigured,
    ServerUnavailable,
    SpeechError,
)

__all__ = ["NO_RETRY", "FailureKind", "RetryPolicy", "failure_kind"]


class FailureKind(enum.Enum):
    """What a failed request means for a retry."""

    UNREACHABLE = "unreachable"
    BUSY = "busy"
    TIMED_OUT = "timed out"
    PERMANENT = "not transient"


def failure_kind(exc: BaseException) -> FailureKind:
    """Classify one failure (see the module docstring)."""
    if isinstance(exc, RequestTimedOut):
        return FailureKind.TIMED_OUT
    if isinstance(exc, ServerBusy):
        return FailureKind.BUSY
    if isinstance(exc, ServerUnavailable):
        return FailureKind.UNREACHABLE
    if isinstance(exc, ServerMisconfigured):
        return FailureKind.PERMANENT
    if isinstance(exc, SpeechError) and exc.status_code is not None and exc.status_code >= 500:
        return FailureKind.BUSY
    return FailureKind.PERMANENT


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts a request gets and the back-off before each retry.

    ``attempts`` counts the first try; ``unreachable_attempts`` (None: ``attempts``) is the budget
    when nothing answers, larger by default because a server that restarts (ours is restarted by
    the renderer's crash logic, a remote one by its owner) takes minutes to load a model.
    ``retry_timeouts`` False never resends a timed-out request; ``retry_server_errors`` False
    retries only unreachable and 503 (what the client does).
    """

    attempts: int = 5
    unreachable_attempts: int | None = 10
    backoff_s: float = 2.0
    max_backoff_s: float = 30.0
    timeout_backoff_s: float = 30.0
    retry_timeouts: bool = True
    retry_server_errors: bool = True

    def delay_s(self, attempt: int) -> float:
        """Exponential back-off before retry number ``attempt`` (1-based)."""
        return min(self.max_backoff_s, self.backoff_s * 2 ** (max(1, attempt) - 1))

    def delay_s_for(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before trying again after ``attempt`` failed with ``exc``; None: give up."""
        kind = failure_kind(exc)
        budget = self.unreachable_attempts if kind is FailureKind.UNREACHABLE else None
        if attempt >= (budget or self.attempts):
            return None
        if kind is FailureKind.PERMANENT:
            return None
        if kind is FailureKind.TIMED_OUT:
            return max(self.timeout_backoff_s, self.delay_s(attempt)) if self.retry_timeouts else None
        if kind is FailureKind.BUSY and not isinstance(exc, ServerBusy) and not self.retry_server_errors:
            return None
        return self.delay_s(attempt)


# One attempt, no retry: for a client whose caller owns the retries (the renderer).
NO_RETRY = RetryPolicy(attempts=1, unreachable_attempts=None)
