"""How many speech requests to keep in flight, found from the server's own answers.

A server batches what it is sent, up to a width it does not announce (``max_running_requests``
in its config; a router's workers add up). Below that width every request in flight adds
throughput; above it requests wait in the server's queue: throughput stays, latency grows, and a
full queue refuses (503 ``The request queue is full.``).

:class:`InFlightController` is told of every request (:meth:`~InFlightController.sent`, then
:meth:`~InFlightController.answered`, :meth:`~InFlightController.refused` or
:meth:`~InFlightController.ended`) and answers the number to keep in flight when called. It
starts at a given number (the catalog's) and doubles it after each window of answers (half the
number while raising, the number while holding) while throughput, audio seconds returned per wall second, still grows with it
(by :data:`GROWTH` per doubling). When a doubling buys nothing it holds at the width it measured
plus a small margin, so the batch never waits for the client's next request:

- throughput comes from Little's law over the window: the mean number in flight while each
  request was out, times audio per second of request time;
- the width is the last number whose doubling still helped; when the start was already at or
  above it, the number served at once (see :func:`served_at_once`);
- holding, steady windows refine the width: each answer's time is compared with the quickest seen
  for audio of its length (see :class:`_QuickestTimes`), so uneven chunks are not read as waiting;
- behind a router a raise is sent a few requests more per answer (``ramp``), so a worker queue
  that overflows on the way refuses a few requests rather than the whole raise;
- a refusal caps the number below the in-flight count it was sent at (refused while raising: at
  the number before the raise), for the rest of the run;
- behind a router (``workers``: its routable workers, read from ``/health``) what was learnt is per
  worker times their count: a worker leaving or coming back moves the number, its width and a
  refusal's cap in step.

The controller is pure: a clock is injected, nothing sleeps, every method is quick and
thread-safe. :meth:`InFlightController.fixed` keeps the number a server's own config gives (a
managed server) and :meth:`InFlightController.following` what a router's workers add up to; both
still count what is in flight for the progress line.
"""

from __future__ import annotations

import enum
import math
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from omni_web.errors import ServerBusy

__all__ = [
    "MAX_IN_FLIGHT",
    "InFlightController",
    "InFlightState",
    "Phase",
    "SpeechMeter",
    "Ticket",
    "margin_for",
    "metered_call",
]

# Most requests a job keeps in flight: the renderer's thread cap and the client's connection pool.
MAX_IN_FLIGHT = 256

# A window closes after this many answers at least (and at least the number in flight).
MIN_WINDOW = 8
# Doubling the number in flight must buy at least this much more throughput to go on raising: a
# real batch's step slows as it widens (so latency is never quite flat), but below the width a
# doubling still buys well over this; above it, nothing.
GROWTH = 1.25
# A first window after a raise this much better than the last is clear growth; between GROWTH and
# this, the next window decides (see InFlightController._close_window).
CLEAR_GROWTH = 1.8
# A doubling that bought less than this is taken as nearly full: the next raise is by half.
NEAR_DOUBLING = 1.9
# Holding, a window whose throughput is this much short of what its requests in flight would give
# unqueued had requests waiting: only such a window lowers the width.
QUEUED = 0.15


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


_Answer = TypeVar("_Answer")


def metered_call(meter: SpeechMeter | None, send: Callable[[], _Answer]) -> _Answer:
    """Run one speech request (``send``), telling ``meter`` how it went; the answer needs ``duration_s``."""
    if meter is None:
        return send()
    ticket = meter.sent()
    try:
        answer = send()
    except ServerBusy:
        meter.refused(ticket)  # 503 queue full, or a router's admission: the server's capacity said no
        raise
    except BaseException:
        meter.ended(ticket)
        raise
    meter.answered(ticket, getattr(answer, "duration_s", None) or 0.0)
    return answer


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request on the wire: when it left, how many were in flight with it, which window."""

    sent_at: float
    area: float  # the running integral of requests in flight over time, when it was sent
    in_flight: int  # including this one
    window: int


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


# Answers are compared with the quickest of similar length: lengths within this factor are alike.
LENGTH_STEP = 1.1


class _QuickestTimes:
    """The quickest time seen for each length of audio, over the run: a request that took longer than
    the quickest of its length waited (or the server slowed).

    Comparing speeds instead (audio per second of request) reads uneven chunks as waiting: a request
    costs a fixed part whatever its length (prefill, the vocoder's turn), so a chapter heading returns
    less audio per second than a paragraph. A width lowered on that lowered the next window's figure
    with it: a 138-chapter book of headings and short paragraphs fell to one request in flight.
    """

    def __init__(self) -> None:
        self._by_length: dict[int, float] = {}

    def unqueued_share(self, samples: list[_Sample]) -> float:
        """Of the time these requests took, the share a request of its length needs unqueued."""
        keys = [round(math.log(sample.audio_s, LENGTH_STEP)) for sample in samples]
        quickest = self._by_length
        for key, sample in zip(keys, samples, strict=True):
            quickest[key] = min(quickest.get(key, math.inf), sample.took_s)
        return sum(quickest[key] for key in keys) / sum(sample.took_s for sample in samples)


@dataclass(frozen=True, slots=True)
class _Sample:
    in_flight: float  # mean number in flight while it was
    audio_s: float
    took_s: float


class InFlightController:
    """The number of requests to keep in flight (see the module docstring); call it for the number.

    Args:
        start: the first number (the catalog's ``default_concurrency``).
        ceiling: never more than this (the renderer's thread cap).
        clock: seconds, monotonic (tests pass a fake).
        ramp: send a raise this many requests more per answer rather than at once (0: at once).
            Behind a router: its workers' queues are unknown, and a doubling sent at once that
            overflows them is refused as many times as it overshot.
        workers: behind a router, how many workers take requests now (read when called). What was
            learnt (width, refusals' cap, the number) is per worker times this count: a worker
            that leaves lowers it in step instead of filling the others' queues until refused, and
            one that comes back raises it again (a refusal's cap is otherwise for the whole run).
    """

    def __init__(
        self,
        start: int,
        *,
        ceiling: int = MAX_IN_FLIGHT,
        clock: Callable[[], float] = time.monotonic,
        ramp: int = 0,
        workers: Callable[[], int] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._ceiling = self._given_ceiling = max(1, ceiling)
        self._limit = max(1, min(start, self._ceiling))
        self._phase = Phase.RAISING
        self._full_at: int | None = None
        self._base: float | None = None  # unqueued speed (audio s per request second)
        self._rate: float | None = None  # audio s per wall s in the last window
        self._helped = 0  # the largest number whose raise still bought throughput
        self._quickest = _QuickestTimes()
        self._first_look = True  # the next window is the first since the number changed
        self._width: float | None = None  # the width as measured, smoothed while holding
        self._window = 0
        self._samples: list[_Sample] = []
        self._in_flight = 0
        self._area = 0.0
        self._stamp = clock()
        self._peak = 0
        self._refusals = 0
        self._follow: Callable[[], int] | None = None
        self._ramp_step = ramp
        self._before_raise = 0  # the number sent before the current raise, with no refusal
        self._ramp: int | None = None  # while a raise is sent: the number allowed so far (see _set)
        self._workers = workers
        self._known_workers = max(1, workers()) if workers is not None else 1
        self.history: list[int] = [self._limit]  # every number set, in order (logs, tests, bench)

    @classmethod
    def fixed(
        cls, width: int, *, margin: bool = True, clock: Callable[[], float] = time.monotonic
    ) -> InFlightController:
        """A controller that keeps the server's configured ``width`` (plus the margin) and only counts."""
        controller = cls(width + (margin_for(width) if margin else 0), ceiling=1 << 16, clock=clock)
        controller._phase = Phase.FIXED
        controller._full_at = width
        return controller

    @classmethod
    def following(
        cls, number: Callable[[], int], *, clock: Callable[[], float] = time.monotonic
    ) -> InFlightController:
        """A controller that keeps what ``number()`` says now (a router's routable workers) and only counts."""
        controller = cls.fixed(number(), margin=False, clock=clock)
        controller._follow = number
        return controller

    def __call__(self) -> int:
        follow = self._follow
        if follow is not None:
            value = max(1, follow())
            with self._lock:
                self._limit = self._full_at = value
        workers = self._workers() if self._workers is not None else 0
        with self._lock:
            if workers > 0 and workers != self._known_workers:  # none routable: the serving waits
                self._rescale(workers)
            return self._limit if self._ramp is None else min(self._limit, self._ramp)

    def state(self) -> InFlightState:
        """What the controller knows now."""
        with self._lock:
            return InFlightState(
                self._limit, self._in_flight, self._peak, self._full_at, self._phase, self._refusals
            )

    # --- the client's side (SpeechMeter) ---------------------------------------------------------

    def sent(self) -> Ticket:
        with self._lock:
            now = self._tick()
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
            return Ticket(now, self._area, self._in_flight, self._window)

    def answered(self, ticket: Ticket, audio_s: float) -> None:
        with self._lock:
            now = self._tick()
            self._in_flight = max(0, self._in_flight - 1)
            if self._ramp is not None:
                self._ramp += self._ramp_step
                if self._ramp >= self._limit:
                    # Sent in full: the raise is judged on requests sent from now (those sent on the
                    # way took the slots answers freed and never waited: they would read as growth).
                    self._ramp = None
                    self._window += 1
                    self._samples = []
                return
            took_s = now - ticket.sent_at
            if self._phase is Phase.FIXED or ticket.window != self._window or took_s <= 0 or audio_s <= 0:
                return  # a request sent at an earlier number says nothing of this one
            beside = (self._area - ticket.area) / took_s  # mean in flight over its life
            self._samples.append(_Sample(beside, audio_s, took_s))
            # After a doubling, half the number is a window: the doubling's burst is that half, and it
            # comes back within one turn of the batch. The first window is the whole start: its first
            # answers were served at once even when the rest waited behind them.
            raised = self._phase is Phase.RAISING and self._rate is not None
            wanted = self._limit // 2 if raised else self._limit
            if len(self._samples) >= max(MIN_WINDOW, wanted):
                self._close_window()

    def refused(self, ticket: Ticket) -> None:
        with self._lock:
            self._tick()
            self._in_flight = max(0, self._in_flight - 1)
            self._refusals += 1
            if self._phase is Phase.FIXED:
                return
            self._ramp = None
            # The queue was full with this many in flight: never send as many again. Refused while
            # raising, the number before the raise is the one known to fit: behind a router the
            # workers' queues fill unevenly, and stepping down one refusal at a time cost several.
            # The ones still out were at the server with it, not the ones sent before it: sent in a
            # burst, requests arrive in any order (the third sent may come after twelve others).
            cap = self._in_flight
            if self._phase is Phase.RAISING and self._before_raise:
                cap = min(cap, self._before_raise)
            self._ceiling = max(1, min(self._ceiling, cap))
            if self._limit > self._ceiling:
                # Lowered without opening a new window: the answers coming still judge the raise.
                self._limit = self._ceiling
                self.history.append(self._limit)
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
        """Decide from a window of answers: raise again while throughput grew, else hold at the width."""
        samples, self._samples = self._samples, []
        speeds = sorted(sample.audio_s / sample.took_s for sample in samples)
        # The upper quartile: a window that started above the width still has its first wave served
        # at once, so its fastest requests show the speed of a request that did not wait.
        self._base = max(self._base or 0.0, speeds[(3 * len(speeds)) // 4])
        unqueued = self._quickest.unqueued_share(samples)
        # Little's law: audio per wall second = requests in flight x audio per request-second; the
        # sums weigh a request that waited a whole turn of the batch as much as it cost.
        loaded = statistics.fmean(sample.in_flight for sample in samples)
        rate = loaded * sum(s.audio_s for s in samples) / sum(s.took_s for s in samples)
        previous = self._rate
        if self._phase is not Phase.RAISING:
            self._rate = rate
            if self._phase is Phase.HOLDING:
                self._follow_width(loaded * unqueued, loaded)
            return
        first_look, self._first_look = self._first_look, False
        if first_look and previous is not None and GROWTH * previous <= rate < CLEAR_GROWTH * previous:
            # Right after a raise the queue is still filling, so the first window looks better
            # than the number will do: unless it is clear, judge on the next window.
            return
        self._rate = rate
        if previous is None:  # the first window: full already when most of it waited
            served = served_at_once(samples, rate, self._base, loaded)
            grew = served * GROWTH >= loaded
        else:
            grew = rate >= GROWTH * previous
        if grew and previous is not None:
            self._helped = self._limit  # this number still bought throughput: the width is at least it
        if grew and self._limit < self._ceiling:
            # A doubling that bought less than a near doubling found the server nearly full: the next
            # raise is by half, enough to tell more width (x1.5 >= GROWTH) without sending twice the
            # width, which behind a router overflowed its workers' queues (136 sent to 2 x 32).
            nearly_full = previous is not None and rate < NEAR_DOUBLING * previous
            # Ramped (behind a router), only the first raise doubles: the doubling after it overflowed
            # two 32-wide workers' queues (68 -> 136, 8 refused on the real router) even at x1.9.
            cautious = self._ramp_step > 0 and self._helped > 0
            step = 3 * self._limit // 2 if nearly_full or cautious else 2 * self._limit
            self._set(min(self._ceiling, max(self._limit + 1, step)))
            return
        # Full: the last number whose doubling still helped; with none (the start was already at or
        # above the width), as many as were served at once: throughput over one request's speed.
        width = self._helped or max(1, round(served if previous is None else rate / self._base))
        self._width = float(width)
        self._phase = Phase.HOLDING
        self._full_at = min(width, self._ceiling)
        self._set(min(self._ceiling, width + margin_for(width)))

    def _follow_width(self, measured: float, loaded: float) -> None:
        """Holding: steady windows refine the width (the one that stopped the raise was a transient),
        smoothed, never below a number that helped nor above a refusal's cap. ``measured`` is how many
        were served at once: in flight, times the share of their time they did not wait."""
        if self._width is None:
            self._width = measured
        elif measured < (1 - QUEUED) * loaded:
            self._width = 0.7 * self._width + 0.3 * measured  # requests waited: the server's own width
        else:
            # Nothing waited: the server took all it was sent, which says it is at least that wide (a
            # job that sends fewer, for QA or its last chunks, must not talk the number down).
            self._width = max(self._width, measured)
        width = min(self._ceiling, max(1, self._helped, round(self._width)))
        self._full_at = width
        limit = min(self._ceiling, width + margin_for(width))
        if limit != self._limit:
            self._set(limit)

    def _rescale(self, workers: int) -> None:
        """The router's routable workers changed: scale what was learnt per worker (callers hold the lock)."""
        factor = workers / self._known_workers
        self._known_workers = workers

        def scaled(number: int) -> int:
            return max(1, round(number * factor))

        if self._ceiling < self._given_ceiling:  # a refusal's cap: one worker's queue times the workers
            self._ceiling = min(self._given_ceiling, scaled(self._ceiling))
        self._helped, self._before_raise = round(self._helped * factor), round(self._before_raise * factor)
        if self._width is not None:
            self._width *= factor
        if self._full_at is not None:
            self._full_at = min(self._ceiling, scaled(self._full_at))
        if self._rate is not None:
            self._rate *= factor  # a raise is still judged against the last window, per worker
        self._samples = []
        self._set(min(self._ceiling, scaled(self._limit)), ramped=False)  # new workers are empty

    def _set(self, limit: int, *, ramped: bool = True) -> None:
        self._window += 1  # answers to requests sent before this belong to the old number
        self._first_look = True
        # A ramped raise is sent a few requests more per answer, not at once: a queue that fills
        # on the way refuses a few, not the whole overshoot (a doubling sent at once to a router's
        # two full workers was refused 16 times).
        raising = ramped and limit > self._limit and self._phase is Phase.RAISING
        if raising:
            self._before_raise = self._limit
        self._ramp = self._limit if raising and self._ramp_step > 0 else None
        self._limit = max(1, limit)
        if self.history[-1] != self._limit:
            self.history.append(self._limit)


def served_at_once(samples: list[_Sample], rate: float, base_speed: float, loaded: float) -> float:
    """How many requests of the first window the server ran at once: the larger of two estimates.

    Its first wave was served at once, waiting for nothing. Throughput over the speed of a request
    that did not wait holds when a request's time grows with its audio; ``loaded`` times the quickest
    quarter's time over the mean time holds when every request costs the same whatever its length (a
    fixed part: prefill, the vocoder's turn). Each reads uneven chunks as waiting, so each alone is
    low on the other's kind; the larger is the closer.
    """
    by_speed = rate / base_speed
    times = sorted(sample.took_s for sample in samples)
    quick = times[len(times) - 1 - (3 * len(times)) // 4]  # the mirror of the speed's quartile
    by_latency = loaded * quick / statistics.fmean(times)
    return max(by_speed, by_latency)
