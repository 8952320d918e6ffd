"""Render chunks to audio files with N requests in flight, resumably.

Chunks are the unit of work and of resume: each chunk's audio goes to ``<cache>/<key>.wav``, where
the key hashes everything that shapes the audio (see :mod:`omni_web.render.keys`). A chunk whose
file exists is never requested again, so a restarted or resumed job renders only what is missing.

SGLang-Omni batches concurrent requests, so keeping ``concurrency`` requests in flight (instead of
one at a time) is the main speed lever; the pool is refilled as soon as any request finishes.

Failures: :mod:`omni_web.retry` decides whether and after how long a chunk is tried again (always
after a back-off); :mod:`omni_web.render.crashes` handles a server that died (restart, fewer
requests in flight, poison chunks). When the run stops early (cancel, a failed chunk) the requests
in flight are drained, bounded by ``drain_timeout_s``, so their files land before the caller
closes the client; whatever they raise is logged.
"""

from __future__ import annotations

import io
import logging
import threading
import time
import wave
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from omni_web.client.inflight import MAX_IN_FLIGHT
from omni_web.errors import (
    ChunkFailed,
    DiskFullError,
    JobCancelled,
    OmniWebError,
    PoisonChunk,
    ServerUnavailable,
    SpeechError,
)
from omni_web.files import is_disk_full, write_atomic
from omni_web.render.crashes import CrashVerdict, CrashWatch, Recover, Recovery
from omni_web.render.item import RenderItem
from omni_web.retry import FailureKind, RetryPolicy, failure_kind

# Most requests a callable ``concurrency`` may keep in flight (threads are started on demand).
MAX_CONCURRENCY = MAX_IN_FLIGHT

__all__ = [
    "ChunkCheck",
    "MAX_CONCURRENCY",
    "Recover",
    "Recovery",
    "RenderItem",
    "RenderProgress",
    "RenderSummary",
    "RetryPolicy",
    "Synthesize",
    "chunk_audio_path",
    "render_chunks",
    "wav_duration_s",
]

# Turns one chunk into WAV bytes; the pipeline binds the client and model into it and speaks the
# chunk's text with the chunk's voice (a cast gives chunks different voices).
Synthesize = Callable[["RenderItem"], bytes]

log = logging.getLogger(__name__)

_DEFAULT_RETRY = RetryPolicy()
# How long a run that stops early waits for the requests in flight (their files then land).
DRAIN_TIMEOUT_S = 120.0


class ChunkCheck(Protocol):
    """The QA hook (``omni_web.qa.ChunkQa``): checks and retakes before a file is accepted."""

    def take(self, item: RenderItem) -> bytes:
        """Request ``item`` (again while it fails its checks) and return the audio to accept."""
        ...  # pragma: no cover

    def accept_cached(self, item: RenderItem, path: Path) -> bool:
        """True when the cached file already has a verdict; False renders it (the file is kept)."""
        ...  # pragma: no cover


@dataclass(frozen=True, slots=True)
class RenderProgress:
    """A snapshot for progress bars; durations in seconds."""

    chunks_done: int
    chunks_total: int
    chunks_cached: int  # found on disk when the run started
    audio_s: float  # audio of every finished chunk
    rendered_audio_s: float  # audio rendered by this run
    elapsed_s: float
    chunks_failed: int = 0  # given up (poison chunks): never done, no longer to do

    @property
    def chunks_settled(self) -> int:
        """Chunks nothing more is done for: rendered, cached or given up."""
        return self.chunks_done + self.chunks_failed

    @property
    def fraction(self) -> float:
        """Settled share, 0..1 (a chunk given up is not left to do)."""
        return self.chunks_settled / self.chunks_total if self.chunks_total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Remaining time from the rate measured in this run (cached chunks do not count)."""
        rendered = self.chunks_done - self.chunks_cached
        if rendered <= 0 or self.elapsed_s <= 0:
            return None
        return (self.chunks_total - self.chunks_settled) * self.elapsed_s / rendered

    @property
    def realtime_factor(self) -> float | None:
        """Seconds of audio rendered per second of wall time in this run."""
        if self.elapsed_s <= 0 or self.rendered_audio_s <= 0:
            return None
        return self.rendered_audio_s / self.elapsed_s

    def to_dict(self) -> dict[str, float | int | None]:
        """Plain values for the job store."""
        return {
            "chunks_done": self.chunks_done,
            "chunks_total": self.chunks_total,
            "chunks_cached": self.chunks_cached,
            "chunks_failed": self.chunks_failed,
            "audio_s": round(self.audio_s, 3),
            "elapsed_s": round(self.elapsed_s, 3),
            "eta_s": None if self.eta_s is None else round(self.eta_s, 1),
            "realtime_factor": None if self.realtime_factor is None else round(self.realtime_factor, 3),
        }


@dataclass(frozen=True, slots=True)
class RenderSummary:
    """What a finished run did."""

    paths: dict[str, Path]  # key -> audio file
    progress: RenderProgress
    failed: tuple[PoisonChunk, ...] = ()  # chunks that killed the server alone: not rendered


def wav_duration_s(data: bytes | Path) -> float:
    """Duration of a WAV from its header; raises ValueError if it is not a readable WAV."""
    try:
        source = io.BytesIO(data) if isinstance(data, bytes) else str(data)
        with wave.open(source, "rb") as wav:
            rate = wav.getframerate()
            return wav.getnframes() / rate if rate else 0.0
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a WAV file: {exc}") from exc


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        write_atomic(path, data)
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFullError(
                f"The disk holding {path.parent} is full. Free some space, then resume the job: "
                "finished chunks are kept."
            ) from exc
        raise


class _Run:
    """Mutable bookkeeping of one render_chunks call, guarded by a lock."""

    def __init__(self, total: int, cached: int, cached_audio_s: float, clock: Callable[[], float]) -> None:
        self.lock = threading.Lock()
        self.clock = clock
        self.started = clock()
        self.total = total
        self.cached = cached
        self.done = cached
        self.audio_s = cached_audio_s
        self.rendered_audio_s = 0.0
        self.failed = 0

    def fail(self) -> RenderProgress:
        with self.lock:
            self.failed += 1
            return self.snapshot()

    def add(self, audio_s: float) -> RenderProgress:
        with self.lock:
            self.done += 1
            self.audio_s += audio_s
            self.rendered_audio_s += audio_s
            return self.snapshot()

    def snapshot(self) -> RenderProgress:
        return RenderProgress(
            chunks_done=self.done,
            chunks_total=self.total,
            chunks_cached=self.cached,
            audio_s=self.audio_s,
            rendered_audio_s=self.rendered_audio_s,
            elapsed_s=self.clock() - self.started,
            chunks_failed=self.failed,
        )


class _Resend(Exception):
    """A crash killed this chunk's request: the render loop sends it again (or alone)."""

    def __init__(self, verdict: CrashVerdict) -> None:
        self.verdict = verdict


def _failed(item: RenderItem, exc: Exception) -> ChunkFailed:
    return ChunkFailed(
        chapter_title=item.chapter_title,
        chapter_number=item.chapter_number,
        chunk_number=item.chunk_number,
        text=item.text,
        cause=str(exc),
    )


@dataclass(frozen=True, slots=True)
class _Worker:
    """What every chunk request of one run shares."""

    synthesize: Synthesize
    retry: RetryPolicy
    watch: CrashWatch
    stopping: Callable[[], bool]
    pause: Callable[[float], object]
    check: ChunkCheck | None = None

    def render(self, item: RenderItem, path: Path, solo: bool) -> float:
        """Render one chunk, retrying as the policy says; return its audio duration in seconds.

        Raises:
            _Resend: a crash killed the request; the loop decides when it goes again.
            PoisonChunk, ChunkFailed, DiskFullError, JobCancelled: the chunk is given up.
        """
        attempt = 0
        while True:
            attempt += 1
            ticket = self.watch.sending(item.key)
            try:
                audio = self.check.take(item) if self.check is not None else self.synthesize(item)
                duration = wav_duration_s(audio)
                if duration <= 0:
                    raise SpeechError("the server returned empty audio")
                _write_atomic(path, audio)
                self.watch.succeeded()
                return duration
            except (DiskFullError, JobCancelled):
                raise
            except (OmniWebError, ValueError) as exc:
                if self.stopping():
                    raise _failed(item, exc) from exc  # the run is ending: no more tries
                if isinstance(exc, ServerUnavailable) and failure_kind(exc) is not FailureKind.TIMED_OUT:
                    verdict = self.watch.unreachable(item, exc, ticket, solo=solo)
                    if verdict is not CrashVerdict.RETRY:
                        raise _Resend(verdict) from exc
                delay = self.retry.delay_s_for(exc, attempt)
                if delay is None:
                    raise _failed(item, exc) from exc
                self.pause(delay)


def _drain(
    in_flight: dict[Future[float], tuple[RenderItem, bool]],
    run: _Run,
    progress: Callable[[RenderProgress], None] | None,
    timeout_s: float,
) -> None:
    """Wait (at most ``timeout_s``) for requests still in flight; log what they raise."""
    if not in_flight:
        return
    done, left = wait(in_flight, timeout=timeout_s)
    landed = 0
    for future in done:
        item, _ = in_flight[future]
        error = future.exception()
        if error is None:
            landed += 1
            snapshot = run.add(future.result())
            if progress is not None:
                progress(snapshot)
        elif not isinstance(error, _Resend):
            log.warning("Chunk %d of chapter %d, in flight when the run stopped, failed: %s",
                        item.chunk_number, item.chapter_number, error)
    if landed:
        log.info("%d chunks in flight when the run stopped finished and were kept", landed)
    for future in left:
        item, _ = in_flight[future]
        log.warning("Chunk %d of chapter %d was still in flight after %.0f s; it is rendered again on resume",
                    item.chunk_number, item.chapter_number, timeout_s)


def chunk_audio_path(cache_dir: Path, key: str) -> Path:
    """Where the audio of the chunk with ``key`` is kept in the chunk cache."""
    return cache_dir / f"{key}.wav"


@dataclass(frozen=True, slots=True)
class _CacheScan:
    """What the chunk cache holds for one run's items, before any request goes out."""

    total: int  # distinct chunks
    todo: list[RenderItem]
    cached: list[RenderItem]
    cached_audio_s: float


def _scan_cache(items: Sequence[RenderItem], paths: dict[str, Path], check: ChunkCheck | None) -> _CacheScan:
    """Split the distinct items into those still to render and those whose file is kept."""
    unique: dict[str, RenderItem] = {}
    for item in items:
        unique.setdefault(item.key, item)
    todo: list[RenderItem] = []
    cached: list[RenderItem] = []
    cached_audio_s = 0.0
    for item in unique.values():
        path = paths[item.key]
        try:
            duration = wav_duration_s(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)  # a damaged file is rendered again
            todo.append(item)
            continue
        if check is not None and not check.accept_cached(item, path):
            todo.append(item)  # no QA verdict yet: checked (and kept if it passes) by check.take
            continue
        cached_audio_s += duration
        cached.append(item)
    return _CacheScan(len(unique), todo, cached, cached_audio_s)


@dataclass(slots=True)
class _Queue:
    """The chunks still to send and those in flight; used from the calling thread only."""

    todo: list[RenderItem]
    paths: dict[str, Path]
    pending: deque[RenderItem] = field(init=False)
    order: dict[str, int] = field(init=False)
    alone: deque[RenderItem] = field(default_factory=deque)  # after two crashes: nothing else in flight
    poisoned: list[PoisonChunk] = field(default_factory=list)
    in_flight: dict[Future[float], tuple[RenderItem, bool]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pending = deque(self.todo)
        self.order = {item.key: number for number, item in enumerate(self.todo)}

    def refill(self, pool: ThreadPoolExecutor, worker: _Worker, limit: Callable[[], int]) -> None:
        """Send the next chunks: a set-aside one alone once nothing is in flight, else up to ``limit()``."""
        if self.alone:
            if not self.in_flight:
                self._send(pool, worker, self.alone.popleft(), solo=True)
            return
        most = limit()
        while self.pending and len(self.in_flight) < most:
            self._send(pool, worker, self.pending.popleft(), solo=False)

    def _send(self, pool: ThreadPoolExecutor, worker: _Worker, item: RenderItem, *, solo: bool) -> None:
        self.in_flight[pool.submit(worker.render, item, self.paths[item.key], solo)] = (item, solo)

    def settle(self, finished: set[Future[float]], landed: Callable[[RenderItem, float], None],
               gave_up: Callable[[RenderItem, PoisonChunk], None]) -> None:
        """Take the finished requests in reading order; crashed ones go first again, in reading order."""
        resend: dict[CrashVerdict, list[RenderItem]] = {CrashVerdict.SET_ASIDE: [], CrashVerdict.REQUEUE: []}
        for future in sorted(finished, key=lambda f: self.order[self.in_flight[f][0].key]):
            item, _solo = self.in_flight.pop(future)
            try:
                duration = future.result()
            except _Resend as again:
                resend[again.verdict].append(item)
                continue
            except PoisonChunk as exc:
                log.error("%s", exc)
                self.poisoned.append(exc)
                gave_up(item, exc)
                continue
            landed(item, duration)  # other errors propagate: ChunkFailed / DiskFullError
        self.alone.extendleft(reversed(resend[CrashVerdict.SET_ASIDE]))
        self.pending.extendleft(reversed(resend[CrashVerdict.REQUEUE]))


def render_chunks(
    items: Sequence[RenderItem],
    synthesize: Synthesize,
    *,
    cache_dir: Path,
    concurrency: int | Callable[[], int],
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[RenderProgress], None] | None = None,
    on_done: Callable[[RenderItem, Path], None] | None = None,
    recover: Recover | None = None,
    retry: RetryPolicy = _DEFAULT_RETRY,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
    drain_timeout_s: float = DRAIN_TIMEOUT_S,
    check: ChunkCheck | None = None,
    on_failed: Callable[[RenderItem, PoisonChunk], None] | None = None,
) -> RenderSummary:
    """Render every item whose audio file is missing, up to ``concurrency`` requests at a time.

    ``concurrency`` may be a callable, asked before every refill (at most ``MAX_CONCURRENCY``).

    Items are submitted in order, so chapters finish roughly in reading order; ``on_done`` is
    called (from the calling thread) for every item whose file exists, cached ones first.
    ``recover`` is asked when the server cannot be reached (see :mod:`omni_web.render.crashes`);
    ``sleep`` waits before a retry (default: a wait that a stopping run cuts short).
    With ``check`` (QA), each chunk is taken through ``check.take`` instead of ``synthesize``.
    A chunk that kills the server alone (a poison chunk) is given up by itself: ``on_failed`` is
    called for it at once (from the calling thread), the rest goes on, and the summary lists it.

    Raises:
        ChunkFailed: a chunk failed after its retries; in-flight chunks are drained and land.
        JobCancelled: ``cancelled()`` turned true; nothing more is submitted, in-flight chunks land.
        DiskFullError: a chunk could not be written.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    paths = {item.key: chunk_audio_path(cache_dir, item.key) for item in items}
    scan = _scan_cache(items, paths, check)
    run = _Run(scan.total, len(scan.cached), scan.cached_audio_s, clock)

    def landed(item: RenderItem, duration_s: float | None) -> None:
        snapshot = run.add(duration_s) if duration_s is not None else None
        if on_done is not None:
            on_done(item, paths[item.key])
        if progress is not None and snapshot is not None:
            progress(snapshot)

    def gave_up(item: RenderItem, error: PoisonChunk) -> None:
        snapshot = run.fail()
        if on_failed is not None:
            on_failed(item, error)  # first: the stand-in is named before the count that includes it
        if progress is not None:
            progress(snapshot)

    for item in scan.cached:
        landed(item, None)
    if progress is not None:
        progress(run.snapshot())
    stop = threading.Event()
    # A callable concurrency is asked again on every refill (a server group's routable workers change).
    current = concurrency if callable(concurrency) else (lambda: concurrency)
    max_threads = MAX_CONCURRENCY if callable(concurrency) else max(1, concurrency)
    watch = CrashWatch(lambda: min(max_threads, max(1, current())), recover)
    worker = _Worker(synthesize, retry, watch, lambda: stop.is_set() or cancelled(), sleep or stop.wait,
                     check)
    queue = _Queue(scan.todo, paths)
    pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="omni-render")
    try:
        while True:
            if cancelled():
                raise JobCancelled("Cancelled. Finished chunks are kept; resume the job to go on.")
            queue.refill(pool, worker, lambda: watch.limit)
            if not queue.in_flight:
                break
            finished, _ = wait(queue.in_flight, timeout=0.5, return_when=FIRST_COMPLETED)
            queue.settle(finished, landed, gave_up)
    finally:
        stop.set()  # workers stop retrying; their requests on the wire still finish
        _drain(queue.in_flight, run, progress, drain_timeout_s)
        pool.shutdown(wait=False, cancel_futures=True)
    return RenderSummary(paths=paths, progress=run.snapshot(), failed=tuple(queue.poisoned))
