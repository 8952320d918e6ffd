"""How many speech requests to keep in flight, found from the server's own answers.

A server batches what it is sent, up to a width it does not announce (``max_running_requests``
in its config; a router's workers add up). Below that width every request in flight adds
throughput; above it requests wait in the server's queue: throughput stays, latency grows, and a
full queue refuses (503 ``The request queue is full.``).

:class:`InFlightController` is told of every request (:meth:`~InFlightController.sent`, then
:meth:`~InFlightController.answered`, :meth:`~InFlightController.refused` or
:meth:`~InFlightController.ended`) and answers the number to keep in flight when called. It
starts at a given number (the catalog's) and doubles while a window of requests sent at the
current number comes back as fast per request as the fastest window did (latency flat, so
throughput grew with the number). Once requests come back slower it holds at the width it
measured plus a small margin, so the batch never waits for the client's next request:

- the width is Little's law over a window of requests sent with the whole number in flight:
  requests in flight ÷ their mean time, measured in units of the unqueued time (how long a
  request takes per audio second when it does not wait);
- speed is audio seconds returned per second the request took, so long and short chunks compare;
- a refusal caps the number below the in-flight count it was sent at, for the rest of the run.

The controller is pure: a clock is injected, nothing sleeps, every method is quick and
thread-safe. :meth:`InFlightController.fixed` keeps a number the server's own config gave (a
managed server) while still counting what is in flight for the progress line.
"""

from __future__ import annotations

import enum
import math
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["InFlightController", "InFlightState", "SpeechMeter", "Ticket", "margin_for"]

# A window closes after this many answers at least (and at least the number in flight).
MIN_WINDOW = 8
# A request this much slower than the fastest window's speed waited in the server's queue.
TOLERANCE = 0.15


class SpeechMeter(Protocol):
    """What the speech client tells about each request it puts on the wire."""

    def sent(self) -> Ticket:
        """A request is about to go out; the ticket comes back with its outcome."""
        ...  # pragma: no cover

    def answered(self, ticket: Ticket, audio_s: float) -> None:
        """The request came back with ``audio_s`` seconds of audio."""
        ...  # pragma: no cover

    def refused(self, ticket: Ticket) -> None:
        """The server refused it for capacity (503 queue full, or a router's admission)."""
        ...  # pragma: no cover

    def ended(self, ticket: Ticket) -> None:
        """The request failed for another reason (it is no longer in flight)."""
        ...  # pragma: no cover


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request on the wire: when it left, how many were in flight with it, which window."""

    sent_at: float
    area: float  # the running integral of requests in flight over time, when it was sent
    in_flight: int  # including this one
    window: int
    limit: int  # the number in force when it was sent


class Phase(enum.Enum):
    """Where the controller is."""

    RAISING = "raising"  # doubling while throughput grows
    HOLDING = "holding"  # at the width found (plus a margin), following it
    FIXED = "fixed"  # the number the server's config gives


@dataclass(frozen=True, slots=True)
class InFlightState:
    """A snapshot for the progress line and the job's report."""

    limit: int  # requests the renderer may keep in flight now
    in_flight: int  # on the wire now
    peak_in_flight: int
    full_at: int | None  # the server's width as measured (or as configured); None while raising
    phase: Phase
    refusals: int = 0

    @property
    def line(self) -> str:
        """``48 in flight, server full at ~48`` (what the progress line says)."""
        if self.phase is Phase.FIXED:
            text = f"{self.in_flight} in flight, server runs {self.full_at} at once"
        elif self.full_at is None:
            text = f"{self.in_flight} in flight, raising to find the server's width"
        else:
            text = f"{self.in_flight} in flight, server full at ~{self.full_at}"
        if self.refusals:
            text += f", {self.refusals} refused (queue full)"
        return text


def margin_for(width: int) -> int:
    """Requests kept beyond the width, so a slot freed is filled before the client's next send."""
    return max(1, math.ceil(width / 8))


@dataclass(frozen=True, slots=True)
class _Sample:
    in_flight: float  # mean number in flight while it was
    speed: float  # audio seconds per second of this request
    full_pipe: bool  # sent with the whole number in flight (not while a raise was being filled)


class InFlightController:
    """The number of requests to keep in flight (see the module docstring); call it for the number.

    Args:
        start: the first number (the catalog's ``default_concurrency``).
        ceiling: never more than this (the renderer's thread cap).
        clock: seconds, monotonic (tests pass a fake).
    """

    def __init__(self, start: int, *, ceiling: int = 256, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._ceiling = max(1, ceiling)
        self._limit = max(1, min(start, self._ceiling))
        self._phase = Phase.RAISING
        self._full_at: int | None = None
        self._base: float | None = None  # unqueued speed (audio s per request second)
        self._window = 0
        self._samples: list[_Sample] = []
        self._in_flight = 0
        self._area = 0.0
        self._stamp = clock()
        self._peak = 0
        self._refusals = 0
        self.history: list[int] = [self._limit]  # every number set, in order (logs, tests, bench)

    @classmethod
    def fixed(cls, width: int, *, margin: bool = True, clock: Callable[[], float] = time.monotonic) -> InFlightController:
        """A controller that keeps the server's configured ``width`` (plus the margin) and only counts."""
        controller = cls(width + (margin_for(width) if margin else 0), ceiling=1 << 16, clock=clock)
        controller._phase = Phase.FIXED
        controller._full_at = width
        return controller

    def __call__(self) -> int:
        with self._lock:
            return self._limit

    def state(self) -> InFlightState:
        """What the controller knows now."""
        with self._lock:
            return InFlightState(self._limit, self._in_flight, self._peak, self._full_at, self._phase, self._refusals)

    # --- the client's side (SpeechMeter) ---------------------------------------------------------

    def sent(self) -> Ticket:
        with self._lock:
            now = self._tick()
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
            return Ticket(now, self._area, self._in_flight, self._window, self._limit)

    def answered(self, ticket: Ticket, audio_s: float) -> None:
        with self._lock:
            now = self._tick()
            self._in_flight = max(0, self._in_flight - 1)
            took_s = now - ticket.sent_at
            if self._phase is Phase.FIXED or ticket.window != self._window or took_s <= 0 or audio_s <= 0:
                return  # a request sent at an earlier number says nothing of this one
            beside = (self._area - ticket.area) / took_s  # mean in flight over its life
            self._samples.append(_Sample(beside, audio_s / took_s, ticket.in_flight >= ticket.limit))
            counted = len(self._samples) if self._phase is Phase.RAISING else sum(s.full_pipe for s in self._samples)
            if counted >= max(MIN_WINDOW, self._limit):
                self._close_window()

    def refused(self, ticket: Ticket) -> None:
        with self._lock:
            self._tick()
            self._in_flight = max(0, self._in_flight - 1)
            self._refusals += 1
            if self._phase is Phase.FIXED:
                return
            # The queue was full with this many in flight: never send as many again.
            self._ceiling = max(1, min(self._ceiling, ticket.in_flight - 1))
            if self._limit > self._ceiling:
                self._set(self._ceiling)
            self._phase = Phase.HOLDING
            if self._full_at is None or self._full_at > self._ceiling:
                self._full_at = self._ceiling

    def ended(self, ticket: Ticket) -> None:
        with self._lock:
            self._tick()
            self._in_flight = max(0, self._in_flight - 1)

    def _tick(self) -> float:
        """Advance the in-flight integral to now (callers hold the lock)."""
        now = self._clock()
        self._area += self._in_flight * max(0.0, now - self._stamp)
        self._stamp = now
        return now

    # --- decisions --------------------------------------------------------------------------------

    def _close_window(self) -> None:
        """Decide from the window's answers: raise while nothing waited, else hold at the width."""
        samples, self._samples = self._samples, []
        speeds = sorted(sample.speed for sample in samples)
        if self._phase is Phase.RAISING:
            # The upper quartile: a window that started above the width still has its first
            # wave served at once, so its fastest requests show the unqueued speed.
            self._base = max(self._base or 0.0, speeds[(3 * len(speeds)) // 4])
        else:
            self._base = max(self._base or 0.0, statistics.median(speeds))  # the server got faster
        base = self._base
        # Judged on requests sent into a full pipe: the burst that fills a raise mixes requests
        # sent beside others that were just finishing, which would look served at once.
        steady = [s for s in samples if s.full_pipe] or samples
        loaded = statistics.fmean(s.in_flight for s in steady)
        # Little's law: in flight ÷ mean time per request (relative to unqueued) = requests served
        # at once. The mean of times, not of speeds: in a batch a few requests wait a whole turn.
        served = loaded / statistics.fmean(base / s.speed for s in steady)
        waited = served < (1 - TOLERANCE) * loaded
        if self._phase is Phase.RAISING and not waited and self._limit < self._ceiling:
            self._set(min(self._ceiling, 2 * self._limit))
            return
        self._phase = Phase.HOLDING
        width = max(1, round(served))
        if waited or self._full_at is None or width > self._full_at:
            self._full_at = min(width, self._ceiling)
        self._set(min(self._ceiling, width + margin_for(width)))

    def _set(self, limit: int) -> None:
        self._window += 1  # answers to requests sent before this belong to the old number
        self._limit = max(1, limit)
        if self.history[-1] != self._limit:
            self.history.append(self._limit)
