"""The in-flight controller against a simulated batching server, on a fake clock.

The simulated server is the shape the real one has: ``width`` requests generated at once, each
taking ``latency_s`` from when it gets a slot, the rest waiting in a FIFO queue; with
``queue_limit`` set, a request that would wait beyond it is refused at once (503 queue full).
The client side does what the renderer does: after every answer it sends until the controller's
number is in flight. No thread, no sleep: events are taken in time order.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from dataclasses import dataclass, field

import pytest

from omni_web.client.inflight import InFlightController, Phase, margin_for


@dataclass
class SimServer:
    width: int
    latency_s: float
    queue_limit: int | None = None
    audio_s: float = 2.0
    spread: float = 0.0  # chunks of 1-spread .. 1+spread times audio_s, each taking as much longer
    fixed_share: float = 0.0  # of latency_s every request takes whatever its length (prefill, vocoder)
    now: float = 0.0
    running: int = 0
    waiting: list = field(default_factory=list)
    events: list = field(default_factory=list)
    seq: itertools.count = field(default_factory=itertools.count)
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    lengths: dict = field(default_factory=dict)  # ticket -> its chunk's share of the mean length

    def clock(self) -> float:
        return self.now

    def submit(self, ticket: object) -> bool:
        """False: refused (queue full)."""
        self.lengths[id(ticket)] = 1 + self.rng.uniform(-self.spread, self.spread)
        if self.running < self.width:
            self.running += 1
            heapq.heappush(self.events, (self.now + self._took(ticket), next(self.seq), ticket))
            return True
        if self.queue_limit is not None and len(self.waiting) >= self.queue_limit:
            return False
        self.waiting.append(ticket)
        return True

    def next_answer(self) -> object:
        at, _, ticket = heapq.heappop(self.events)
        self.now = at
        self.running -= 1
        if self.waiting:
            self.running += 1
            queued = self.waiting.pop(0)
            heapq.heappush(self.events, (self.now + self._took(queued), next(self.seq), queued))
        return ticket

    def _took(self, ticket: object) -> float:
        share = self.fixed_share
        return self.latency_s * (share + (1 - share) * self.lengths[id(ticket)])

    def audio_of(self, ticket: object) -> float:
        return self.audio_s * self.lengths.pop(id(ticket))


@dataclass
class Run:
    wall_s: float
    reached_at: int | None  # chunks answered when the number in flight first reached the width
    refusals: int
    controller: InFlightController


def render(server: SimServer, chunks: int, controller: InFlightController, *, burst: bool = False) -> Run:
    """Send ``chunks`` requests the way the renderer does; a refused one is sent again later.

    With ``burst``, every request the number allows goes out before any refusal is heard, as the
    renderer's threads released together by a raise do: a refusal stops only the next answer's sends.
    """
    left, done, refusals, reached = chunks, 0, 0, None
    in_flight = 0
    while done < chunks:
        allowed = controller()
        while left and in_flight < (allowed if burst else controller()):
            ticket = controller.sent()
            if server.submit(ticket):
                in_flight += 1
                left -= 1
            else:
                controller.refused(ticket)
                refusals += 1
                if not burst:
                    break
                allowed -= 1  # this thread takes the chunk again after the next answer
        if reached is None and in_flight >= server.width:
            reached = done
        ticket = server.next_answer()
        controller.answered(ticket, server.audio_of(ticket))
        in_flight -= 1
        done += 1
    return Run(server.now, reached, refusals, controller)


@pytest.mark.parametrize("width", [8, 32, 64])
@pytest.mark.parametrize("start", [8, 16])
def test_fills_the_width_from_the_catalog_start(width: int, start: int) -> None:
    chunks = 40 * width
    # The queue as deep as the batch, as the real Qwen3-TTS builds it (max_queued = max_running = 64).
    server = SimServer(width=width, latency_s=2.0, queue_limit=width)
    run = render(server, chunks, InFlightController(start, clock=server.clock))
    ideal = math.ceil(chunks / width) * 2.0
    assert ideal / run.wall_s >= 0.9, run.controller.history
    assert run.refusals <= 5
    assert run.reached_at is not None and run.reached_at <= chunks * 0.1
    state = run.controller.state()
    assert state.phase is Phase.HOLDING
    assert state.full_at is not None and abs(state.full_at - width) <= max(2, width // 8), (
        run.controller.history
    )
    assert width <= state.limit <= width + 3 * margin_for(width)


@pytest.mark.parametrize("width", [8, 64])
def test_chunks_of_uneven_length_still_fill_the_width(width: int) -> None:
    # Like real speech: a chunk twice as long takes twice as long.
    server = SimServer(width=width, latency_s=2.0, spread=0.5)
    chunks = 40 * width
    run = render(server, chunks, InFlightController(16, clock=server.clock))
    assert math.ceil(chunks / width) * 2.0 / run.wall_s >= 0.85
    state = run.controller.state()
    assert state.full_at is not None and abs(state.full_at - width) <= max(2, width // 4), (
        run.controller.history
    )


@pytest.mark.parametrize("fixed_share", [0.5, 1.0])
@pytest.mark.parametrize("start", [8, 16])
def test_short_chunks_slower_per_audio_second_do_not_talk_the_width_down(
    fixed_share: float, start: int
) -> None:
    # A request costs a fixed part whatever its length (the fake server: all of it), so a chapter
    # heading returns less audio per second than a paragraph; that spread is not queueing, and the
    # number held must not sink with it (a 138-chapter book of headings and short paragraphs fell to
    # one request in flight on an 8-wide server).
    server = SimServer(width=8, latency_s=1.0, spread=0.9, fixed_share=fixed_share)
    chunks = 400
    run = render(server, chunks, InFlightController(start, clock=server.clock))
    mean_took = server.latency_s  # the lengths average 1
    assert math.ceil(chunks / 8) * mean_took / run.wall_s >= 0.85, run.controller.history
    state = run.controller.state()
    assert state.full_at is not None and abs(state.full_at - 8) <= 2, run.controller.history
    assert min(run.controller.history[1:], default=start) >= 6, run.controller.history


def test_a_start_above_the_width_comes_down_to_it() -> None:
    server = SimServer(width=8, latency_s=2.0)
    run = render(server, 400, InFlightController(32, clock=server.clock))
    state = run.controller.state()
    assert run.controller.history[1] < 32  # down after the first window, no raise first
    assert state.full_at is not None and abs(state.full_at - 8) <= 1
    assert state.limit <= 8 + 3 * margin_for(8)


def test_a_full_queue_caps_the_number_after_a_handful_of_refusals() -> None:
    server = SimServer(width=32, latency_s=2.0, queue_limit=4)
    run = render(server, 1600, InFlightController(16, clock=server.clock))
    assert 1 <= run.refusals <= 5
    state = run.controller.state()
    assert state.refusals == run.refusals
    assert state.limit <= 32 + 4
    assert math.ceil(1600 / 32) * 2.0 / run.wall_s >= 0.9
    assert "refused (queue full)" in state.line


def test_the_line_says_what_is_known() -> None:
    clock = [0.0]
    controller = InFlightController(16, clock=lambda: clock[0])
    tickets = [controller.sent() for _ in range(3)]
    assert controller.state().line == "3 in flight, raising to find the server's width"
    clock[0] = 1.0
    controller.answered(tickets[0], 2.0)
    controller.ended(tickets[1])
    assert controller.state().in_flight == 1
    assert controller.state().peak_in_flight == 3
    fixed = InFlightController.fixed(64)
    assert fixed() == 64 + margin_for(64)
    fixed.sent()
    assert fixed.state().line == "1 in flight, server runs 64 at once"


def test_answers_to_requests_sent_before_a_change_do_not_count() -> None:
    clock = [0.0]
    controller = InFlightController(8, clock=lambda: clock[0])
    old = [controller.sent() for _ in range(8)]
    clock[0] = 1.0
    for ticket in old:
        controller.answered(ticket, 1.0)
    assert controller() == 16  # one window, nothing waited: doubled
    clock[0] = 5.0
    late = controller.sent()
    stale = old[0]
    controller.answered(stale, 0.1)  # a straggler from the first window: ignored
    controller.answered(late, 4.0)
    assert controller() == 16


def _first_window_grows(controller: InFlightController, clock: list[float], start: int) -> None:
    """Answer the start's first window as a server that ran them all at once."""
    first = [controller.sent() for _ in range(start)]
    clock[0] += 1.0
    for ticket in first:
        controller.answered(ticket, 1.0)


def test_a_burst_refused_out_of_order_caps_at_what_the_server_held() -> None:
    # 16 sent at once to a server that holds 12: under load the third one sent arrives last and is
    # refused with 15 still out, then three more. The cap is the 12 held, not the 2 sent before it.
    clock = [0.0]
    controller = InFlightController(16, clock=lambda: clock[0])
    tickets = [controller.sent() for _ in range(16)]
    for index in (2, 15, 14, 13):
        controller.refused(tickets[index])
    assert controller() == controller.state().limit == 12, controller.history


def test_a_ramped_raise_is_sent_a_few_more_per_answer_and_a_refusal_stops_it() -> None:
    # Behind a router the renderer's threads send a raise at once: a doubling that overflows the
    # workers' queues is refused as many times as it overshot (16 on the real router). Ramped, the
    # raise is allowed four more per answer, so at most about four are out past a full queue.
    clock = [0.0]
    controller = InFlightController(8, clock=lambda: clock[0], ramp=4)
    _first_window_grows(controller, clock, 8)
    assert controller.state().limit == 16  # raised...
    assert controller() == 8  # ...but sent only as answers come back
    tickets = [controller.sent() for _ in range(8)]
    controller.answered(tickets.pop(), 1.0)
    assert controller() == 12
    tickets.extend(controller.sent() for _ in range(5))
    refused = tickets.pop()
    controller.refused(refused)  # the queue was full at 12 in flight
    assert controller() == controller.state().limit == 8  # back to the number before the raise
    unramped = InFlightController(8, clock=lambda: clock[0])
    _first_window_grows(unramped, clock, 8)
    assert unramped() == 16  # without a ramp the whole raise goes out at once


def test_a_router_url_gets_a_ramped_controller() -> None:
    from omni_web.server.router import RouterHealth, RouterWorker  # noqa: PLC0415
    from omni_web.server.serving import ROUTER_RAMP, ForeignServing  # noqa: PLC0415
    from omni_web.server.status import Endpoint  # noqa: PLC0415

    workers = tuple(RouterWorker(f"http://127.0.0.1:{p}", "healthy", True) for p in (2, 3))
    health = [RouterHealth(200, "healthy", routable_workers=2, total_workers=2, workers=workers)]
    endpoint = Endpoint(base_url="http://127.0.0.1:1", model_key="m", model_id="m", owned=False)
    for read, ramped in ((lambda url: health[0], True), (lambda url: None, False)):
        clock = [0.0]
        serving = ForeignServing(endpoint, patience_s=1, batch=8, read=read, clock=lambda c=clock: c[0])
        controller = serving.in_flight(8)
        start = controller()
        _first_window_grows(controller, clock, start)
        assert controller.state().limit == 2 * start
        assert controller() == (start if ramped else 2 * start)
        if ramped:
            controller.answered(controller.sent(), 1.0)
            assert controller() == start + ROUTER_RAMP
            # One worker leaves: at the next read of /health the number is one worker's share.
            health[0] = RouterHealth(200, "healthy", routable_workers=1, total_workers=2, workers=workers[:1])
            clock[0] += 60.0
            assert controller() == start  # half of the raise (2 x start), sent at once
            assert controller.state().limit == start


@dataclass
class SimRouter:
    """``workers`` simulated servers behind a least-request router: each request goes to the worker
    with the fewest open (running or queued); a worker whose queue is full refuses it (503)."""

    workers: int
    worker_width: int
    latency_s: float
    queue_limit: int
    audio_s: float = 2.0
    now: float = 0.0
    events: list = field(default_factory=list)
    seq: itertools.count = field(default_factory=itertools.count)
    running: list = field(default_factory=list)
    waiting: list = field(default_factory=list)
    placed: dict = field(default_factory=dict)  # ticket -> its worker
    routable: int = 0  # workers taking requests (the first ones); 0: all

    def __post_init__(self) -> None:
        self.routable = self.routable or self.workers
        self.running = [0] * self.workers
        self.waiting = [[] for _ in range(self.workers)]

    @property
    def width(self) -> int:
        """What the renderer should keep busy: the routable workers' batches."""
        return self.routable * self.worker_width

    def clock(self) -> float:
        return self.now

    def submit(self, ticket: object) -> bool:
        worker = min(range(self.routable), key=lambda w: self.running[w] + len(self.waiting[w]))
        if self.running[worker] < self.worker_width:
            self._start(worker, ticket)
            return True
        if len(self.waiting[worker]) >= self.queue_limit:
            return False
        self.waiting[worker].append(ticket)
        return True

    def _start(self, worker: int, ticket: object) -> None:
        self.running[worker] += 1
        self.placed[id(ticket)] = worker
        heapq.heappush(self.events, (self.now + self.latency_s, next(self.seq), ticket))

    def next_answer(self) -> object:
        at, _, ticket = heapq.heappop(self.events)
        self.now = at
        worker = self.placed.pop(id(ticket))
        self.running[worker] -= 1
        if self.waiting[worker]:
            self._start(worker, self.waiting[worker].pop(0))
        return ticket

    def audio_of(self, ticket: object) -> float:
        return self.audio_s


@pytest.mark.parametrize("workers", [2, 3])
def test_behind_a_router_the_workers_are_filled_with_a_handful_of_refusals(workers: int) -> None:
    # Two (three) workers of 32 behind the router, each queue as deep as its batch: the router says
    # nothing of their width, and a probe that doubled past both queues was refused 16 times.
    from omni_web.server.serving import ROUTER_RAMP  # noqa: PLC0415

    router = SimRouter(workers=workers, worker_width=32, latency_s=4.0, queue_limit=32)
    total = workers * 32
    chunks = 20 * total
    start = workers * (16 + 1)  # the catalog's start per routable worker, as ForeignServing sizes it
    controller = InFlightController(start, clock=router.clock, ramp=ROUTER_RAMP)
    run = render(router, chunks, controller, burst=True)  # type: ignore[arg-type]
    history = run.controller.history
    assert math.ceil(chunks / total) * 4.0 / run.wall_s >= 0.9, history
    assert run.refusals <= 2, history  # a handful is the bound; the probe stays under the queues
    assert run.reached_at is not None and run.reached_at <= chunks * 0.1, history
    state = run.controller.state()
    assert state.full_at is not None and abs(state.full_at - total) <= margin_for(total), history
    assert state.limit <= total + 3 * margin_for(total), history  # not held with the queues full


def test_behind_a_router_a_worker_that_leaves_and_comes_back_moves_the_number_in_step() -> None:
    # The controller scales what it learnt per worker by the router's routable workers: one leaving
    # must not fill the other's queue until refused (a refusal's cap would then hold for the rest of
    # the run, and the held width sank to one worker's), and its return must fill both again.
    from omni_web.server.serving import ROUTER_RAMP  # noqa: PLC0415

    router = SimRouter(workers=2, worker_width=32, latency_s=4.0, queue_limit=32)
    controller = InFlightController(34, clock=router.clock, ramp=ROUTER_RAMP, workers=lambda: router.routable)
    phases = []
    for routable in (2, 1, 2):
        router.routable = routable
        started, chunks = router.now, 20 * router.width
        run = render(router, chunks, controller, burst=True)  # type: ignore[arg-type]
        phases.append((math.ceil(chunks / router.width) * 4.0 / (router.now - started), run.refusals))
    history = controller.history
    assert all(efficiency >= 0.9 for efficiency, _ in phases), (phases, history)
    assert sum(refusals for _, refusals in phases) <= 5, (phases, history)
    state = controller.state()
    assert state.full_at is not None and abs(state.full_at - 64) <= margin_for(64), history
