"""Master a book's chapters in the background while later chapters render.

Every chapter is queued at the start, in reading order, on a small pool (two workers by default:
the machine's ffmpeg budget, so a resumed book with every chunk cached does not start fifty
encoders at once). A worker feeds its chapter's chunks to the mastering ffmpeg as they land, so
by the time the last chunk of the book is in, every earlier chapter is finished and the last one
only needs its second pass. Chapters mastered by an earlier run are reused from their records.

The leveling reference is refined after each chapter: the first pass says how far the leveled
chunks landed from the target, and later chapters aim that much closer, so loudnorm's final gain
stays a fraction of a dB and the limiter rarely has to work harder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from omni_web.master.chapter import master_chapter
from omni_web.master.records import (
    ChapterSpec,
    ChapterState,
    MasteredChapter,
    MasteringAborted,
    MasterOptions,
    chunks_stamp,
    has_record,
    load_mastered,
)

__all__ = ["BookMaster", "ChapterReadySink", "ChapterStateSink"]

# (number, state) on the way: MASTERING (its chunks are being fed) or ENCODING (pass 2).
ChapterStateSink = Callable[[int, ChapterState], None]
# The chapter's files exist: its record, told once per chapter (READY has no other form).
ChapterReadySink = Callable[[MasteredChapter], None]
_WAIT_SLICE_S = 1.0


class BookMaster:
    """Masters ``specs`` as their chunks arrive through :meth:`chunk_done`."""

    def __init__(
        self,
        specs: Sequence[ChapterSpec],
        folder: Path,
        options: MasterOptions,
        *,
        on_state: ChapterStateSink | None = None,
        on_ready: ChapterReadySink | None = None,
        remaster: Iterable[int] = (),
        workers: int = 2,
    ) -> None:
        self._folder = folder
        self._options = options
        self._on_state = on_state
        self._on_ready = on_ready
        self._remaster = frozenset(remaster)
        self._chunks: dict[str, Path] = {}
        self._ready = threading.Condition()
        self._aborted = False
        self._offset_db = 0.0  # refined leveling reference minus the target
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="omni-master")
        self._futures: dict[int, Future[MasteredChapter]] = {
            spec.number: self._pool.submit(self._run, spec) for spec in specs
        }
        self._order = [spec.number for spec in specs]

    def chunk_done(self, key: str, path: Path) -> None:
        """A chunk's file exists (called from the render loop; never blocks on ffmpeg)."""
        with self._ready:
            self._chunks[key] = path
            self._ready.notify_all()

    def _wait_chunk(self, key: str) -> Path:
        with self._ready:
            while key not in self._chunks:
                if self._aborted:
                    raise MasteringAborted("The job stopped before this chapter's chunks were rendered.")
                self._ready.wait(_WAIT_SLICE_S)
            return self._chunks[key]

    def _stamp(self, spec: ChapterSpec) -> str:
        return chunks_stamp([self._wait_chunk(key) for key in spec.keys])

    def _state(self, number: int, state: ChapterState) -> None:
        if self._on_state is not None:
            self._on_state(number, state)

    def _done(self, record: MasteredChapter) -> MasteredChapter:
        self._calibrate(record)
        if self._on_ready is not None:
            self._on_ready(record)
        return record

    def _calibrate(self, record: MasteredChapter) -> None:
        """Aim later chapters where this one should have landed: leveled speech measures a
        steady offset from its leveling reference for one voice, so ``reference - measured``
        moves the next reference onto the target."""
        measured = record.measured.get("input_i")
        if (
            not self._options.preset.master
            or measured is None
            or measured <= -60
            or record.reference_db is None
        ):
            return
        offset = (
            record.reference_db
            - self._options.preset.target_lufs
            + (self._options.preset.target_lufs - measured)
        )
        with self._ready:
            self._offset_db = max(-12.0, min(12.0, offset))

    def _run(self, spec: ChapterSpec) -> MasteredChapter:
        if spec.number not in self._remaster and has_record(self._folder, spec, self._options):
            # Reuse it only if its chunk files are the ones it was made from (all cached on a resume).
            record = load_mastered(self._folder, spec, self._options, stamp=self._stamp(spec))
            if record is not None:
                return self._done(record)
        first_key = spec.keys[0]
        self._wait_chunk(first_key)
        self._state(spec.number, ChapterState.MASTERING)
        with self._ready:
            reference = self._options.preset.target_lufs + self._offset_db
        record = master_chapter(
            spec,
            self._folder,
            self._options,
            wait_chunk=self._wait_chunk,
            reference_db=reference,
            on_fed=lambda: self._state(spec.number, ChapterState.ENCODING),
            stamp=lambda: self._stamp(spec),
        )
        return self._done(record)

    def results(self) -> list[MasteredChapter]:
        """Every chapter's record in reading order (waits); re-raises a mastering error."""
        return [self._futures[number].result() for number in self._order]

    def result(self, number: int) -> MasteredChapter:
        """One chapter's record (waits)."""
        return self._futures[number].result()

    def close(self) -> None:
        """Stop: chapters waiting for chunks give up, queued ones are dropped, ffmpeg is killed."""
        with self._ready:
            self._aborted = True
            self._ready.notify_all()
        self._pool.shutdown(wait=False, cancel_futures=True)
