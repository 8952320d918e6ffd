"""Render chunks to audio files with N requests in flight, resumably.

Chunks are the unit of work and of resume: each chunk's audio goes to ``<cache>/<key>.wav``, where
the key hashes everything that shapes the audio (see :mod:`omni_web.render.keys`). A chunk whose
file exists is never requested again, so a restarted or resumed job renders only what is missing.

SGLang-Omni batches concurrent requests, so keeping ``concurrency`` requests in flight (instead of
one at a time) is the main speed lever; the pool is refilled as soon as any request finishes.
"""

from __future__ import annotations

import errno
import io
import threading
import time
import wave
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from omni_web.client import VoiceChoice
from omni_web.errors import (
    ChunkFailed,
    DiskFullError,
    JobCancelled,
    OmniWebError,
    ServerUnavailable,
    SpeechError,
)
from omni_web.files import write_atomic

# Most requests a callable ``concurrency`` may keep in flight (threads are started on demand).
MAX_CONCURRENCY = 256

__all__ = [
    "MAX_CONCURRENCY",
    "RenderItem",
    "RenderProgress",
    "RenderSummary",
    "ChunkCheck",
    "RetryPolicy",
    "Synthesize",
    "render_chunks",
    "wav_duration_s",
]

# Turns one chunk into WAV bytes; the pipeline binds the client and model into it and speaks the
# chunk's text with the chunk's voice (a cast gives chunks different voices).
Synthesize = Callable[["RenderItem"], bytes]


class ChunkCheck(Protocol):
    """The QA hook (``omni_web.qa.ChunkQa``): checks and retakes before a file is accepted."""

    def take(self, item: RenderItem) -> bytes:
        """Request ``item`` (again while it fails its checks) and return the audio to accept."""
        ...  # pragma: no cover

    def accept_cached(self, item: RenderItem, path: Path) -> bool:
        """True when the cached file already has a verdict; False renders it (the file is kept)."""
        ...  # pragma: no cover


@dataclass(frozen=True, slots=True)
class RenderItem:
    """One chunk to render, with what an error message needs to name it."""

    key: str
    text: str
    chapter_index: int
    chapter_number: int  # 1-based, as the user sees it
    chapter_title: str
    chunk_number: int  # 1-based within the chapter
    # The voice this chunk is spoken with (None: the job's one voice) and who speaks it: "" for a
    # single-voice job, else "narrator", "dialogue" or a character's name (see omni_web.cast).
    voice: VoiceChoice | None = None
    speaker: str = ""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Per-chunk retries for transient failures (server unreachable or 5xx)."""

    attempts: int = 4
    backoff_s: float = 2.0
    max_backoff_s: float = 30.0

    def delay_s(self, attempt: int) -> float:
        """Exponential backoff before retry number ``attempt`` (1-based)."""
        return min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class RenderProgress:
    """A snapshot for progress bars; durations in seconds."""

    chunks_done: int
    chunks_total: int
    chunks_cached: int  # found on disk when the run started
    audio_s: float  # audio of every finished chunk
    rendered_audio_s: float  # audio rendered by this run
    elapsed_s: float

    @property
    def fraction(self) -> float:
        """Done share, 0..1."""
        return self.chunks_done / self.chunks_total if self.chunks_total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Remaining time from the rate measured in this run (cached chunks do not count)."""
        rendered = self.chunks_done - self.chunks_cached
        if rendered <= 0 or self.elapsed_s <= 0:
            return None
        return (self.chunks_total - self.chunks_done) * self.elapsed_s / rendered

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


def wav_duration_s(data: bytes | Path) -> float:
    """Duration of a WAV from its header; raises ValueError if it is not a readable WAV."""
    try:
        source = io.BytesIO(data) if isinstance(data, bytes) else str(data)
        with wave.open(source, "rb") as wav:
            rate = wav.getframerate()
            return wav.getnframes() / rate if rate else 0.0
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a WAV file: {exc}") from exc


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, ServerUnavailable):
        return True
    return isinstance(exc, SpeechError) and exc.status_code is not None and exc.status_code >= 500


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        write_atomic(path, data)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
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
        )


def _render_one(
    item: RenderItem,
    path: Path,
    synthesize: Synthesize,
    retry: RetryPolicy,
    recover: Callable[[Exception], bool] | None,
    cancelled: Callable[[], bool],
    sleep: Callable[[float], None],
    check: ChunkCheck | None = None,
) -> float:
    """Render one chunk with retries; return its audio duration in seconds."""
    attempt = 0
    while True:
        attempt += 1
        try:
            audio = check.take(item) if check is not None else synthesize(item)
            duration = wav_duration_s(audio)
            if duration <= 0:
                raise SpeechError("the server returned empty audio")
            _write_atomic(path, audio)
            return duration
        except (DiskFullError, JobCancelled):
            raise
        except (OmniWebError, ValueError) as exc:
            # A dead managed server is restarted by `recover` and the chunk is tried again.
            recovered = recover(exc) if recover is not None and isinstance(exc, ServerUnavailable) else False
            if cancelled() or attempt >= retry.attempts or not (recovered or _is_transient(exc)):
                raise ChunkFailed(
                    chapter_title=item.chapter_title,
                    chapter_number=item.chapter_number,
                    chunk_number=item.chunk_number,
                    text=item.text,
                    cause=str(exc),
                ) from exc
            if not recovered:
                sleep(retry.delay_s(attempt))


def render_chunks(
    items: Sequence[RenderItem],
    synthesize: Synthesize,
    *,
    cache_dir: Path,
    concurrency: int | Callable[[], int],
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[RenderProgress], None] | None = None,
    on_done: Callable[[RenderItem, Path], None] | None = None,
    recover: Callable[[Exception], bool] | None = None,
    retry: RetryPolicy = RetryPolicy(),
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    check: ChunkCheck | None = None,
) -> RenderSummary:
    """Render every item whose audio file is missing, ``concurrency`` requests at a time.

    ``concurrency`` may be a callable, asked before every refill (at most ``MAX_CONCURRENCY``).

    Items are submitted in order, so chapters finish roughly in reading order; ``on_done`` is
    called (from the calling thread) for every item whose file exists, cached ones first.
    With ``check`` (QA), each chunk is taken through ``check.take`` instead of ``synthesize``.

    Raises:
        ChunkFailed: a chunk failed after its retries; in-flight chunks still land on disk.
        JobCancelled: ``cancelled()`` turned true; nothing more is submitted.
        DiskFullError: a chunk could not be written.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    paths = {item.key: cache_dir / f"{item.key}.wav" for item in items}
    unique: dict[str, RenderItem] = {}
    for item in items:
        unique.setdefault(item.key, item)
    todo: list[RenderItem] = []
    cached_audio_s = 0.0
    cached_items: list[RenderItem] = []
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
        cached_items.append(item)
    run = _Run(len(unique), len(cached_items), cached_audio_s, clock)
    for item in cached_items:
        if on_done is not None:
            on_done(item, paths[item.key])
    if progress is not None:
        progress(run.snapshot())

    pending = iter(todo)
    in_flight: dict[Future[float], RenderItem] = {}
    # A callable is asked again on every refill (a server group's routable workers change).
    current = concurrency if callable(concurrency) else (lambda: concurrency)
    max_threads = MAX_CONCURRENCY if callable(concurrency) else max(1, concurrency)
    pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="omni-render")
    try:
        while True:
            if cancelled():
                raise JobCancelled("Cancelled. Finished chunks are kept; resume the job to go on.")
            limit = min(max_threads, max(1, current()))
            while len(in_flight) < limit:
                item = next(pending, None)
                if item is None:
                    break
                future = pool.submit(
                    _render_one, item, paths[item.key], synthesize, retry, recover, cancelled, sleep, check
                )
                in_flight[future] = item
            if not in_flight:
                break
            finished, _ = wait(in_flight, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in finished:
                item = in_flight.pop(future)
                snapshot = run.add(future.result())  # re-raises ChunkFailed / DiskFullError
                if on_done is not None:
                    on_done(item, paths[item.key])
                if progress is not None:
                    progress(snapshot)
    finally:
        # Do not wait for in-flight requests: they finish in the background and their files
        # land atomically, so a resume reuses them.
        pool.shutdown(wait=False, cancel_futures=True)
    return RenderSummary(paths=paths, progress=run.snapshot())
