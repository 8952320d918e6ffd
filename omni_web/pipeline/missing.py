"""A chunk no server can say (a poison chunk): the book is finished without it, and it is flagged.

When the renderer gives a chunk up because it killed the server alone (see
``omni_web/render/crashes.py``), the conversion does not stop: a second of silence stands in for
the chunk in its chapter (so the chapter and the m4b are made, with every chapter mark), and the
chunk is flagged for review in the chunk cache's QA records with its text and why. Editing its text
and regenerating it (``omni_web/pipeline/review.py``) renders it under a new key and rebuilds that
chapter and the book; so does a resume that finds the server able to say it after all, since the
chapter's master is stamped with its chunk files.
"""

from __future__ import annotations

import logging
import threading
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble import AudioFormat
from omni_web.errors import PoisonChunk
from omni_web.files import atomic_path
from omni_web.qa import ChunkRecord, QaStore, Verdict
from omni_web.records import JsonRecord
from omni_web.render import RenderItem

__all__ = ["MISSING_DIR", "MISSING_SILENCE_MS", "MissingChunk", "MissingChunks"]

log = logging.getLogger(__name__)

MISSING_DIR = "missing"  # under the book's parts folder: the stand-in silences
MISSING_SILENCE_MS = 1000


@dataclass(frozen=True, slots=True)
class MissingChunk(JsonRecord):
    """One chunk the book was finished without (stored in the job's result)."""

    chapter: int = 0
    chapter_title: str = ""
    chunk: int = 0
    key: str = ""
    text: str = ""
    cause: str = ""

    @property
    def line(self) -> str:
        """``chunk 3 of chapter 7 ('Government'): "text..."`` for logs and messages."""
        excerpt = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"chunk {self.chunk} of chapter {self.chapter} ('{self.chapter_title}'): \"{excerpt}\""


def _write_silence(path: Path, fmt: AudioFormat, duration_ms: int) -> None:
    frames = round(fmt.sample_rate_hz * duration_ms / 1000)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as staged, wave.open(str(staged), "wb") as out:
        out.setnchannels(fmt.channels)
        out.setsampwidth(2)
        out.setframerate(fmt.sample_rate_hz)
        out.writeframes(b"\0\0" * fmt.channels * frames)


class MissingChunks:
    """Stands in for the chunks the renderer gave up, and flags them (thread-safe).

    Args:
        parts_dir: the book's work folder (the silences go to ``missing/`` in it).
        fmt: the chunks' audio format.
        store: the chunk cache's QA records (the flag goes there, QA on or off).
        qa_level: the job's QA level, written into the record.
        chunk_done: where the stand-in goes (the chapter finisher's ``chunk_done``).
    """

    def __init__(self, parts_dir: Path, fmt: AudioFormat, store: QaStore, *, qa_level: str,
                 chunk_done: Callable[[RenderItem, Path], None]) -> None:
        self._dir = parts_dir / MISSING_DIR
        self._fmt = fmt
        self._store = store
        self._level = qa_level
        self._chunk_done = chunk_done
        self._lock = threading.Lock()
        self._found: list[MissingChunk] = []

    def failed(self, item: RenderItem, error: PoisonChunk) -> None:
        """The renderer gave ``item`` up: silence in its place, a flag with its text and why."""
        path = self._dir / f"{item.key}.wav"
        if not path.is_file():  # an earlier run's stand-in keeps its stamp: its chapter is reused
            _write_silence(path, self._fmt, MISSING_SILENCE_MS)
        missing = MissingChunk(chapter=item.chapter_number, chapter_title=item.chapter_title,
                               chunk=item.chunk_number, key=item.key, text=item.text, cause=error.cause)
        earlier = self._store.load(item.key)
        self._store.save(
            ChunkRecord(
                key=item.key,
                text=item.text,
                level=self._level,
                verdict=Verdict.FLAGGED,
                chosen=0,
                takes=earlier.takes if earlier is not None else (),
                note=f"Not in the book: the server crashed on this text every time ({error.cause}). "
                f"{MISSING_SILENCE_MS / 1000:g} s of silence stands in its place; edit the text and "
                "regenerate it.",
                chapter=item.chapter_number,
                chunk=item.chunk_number,
            )
        )
        log.error("The book goes on without %s; it is flagged for review", missing.line)
        with self._lock:
            self._found.append(missing)
        self._chunk_done(item, path)

    @property
    def chunks(self) -> tuple[MissingChunk, ...]:
        """Every chunk given up so far, in the order they failed."""
        with self._lock:
            return tuple(self._found)

    def summary(self) -> str:
        """One sentence for the job's last message ("" when nothing is missing)."""
        found = self.chunks
        if not found:
            return ""
        head = (
            f"{len(found)} chunk{'s' if len(found) > 1 else ''} could not be rendered (silence in the book, "
            "flagged for review): "
        )
        return head + "; ".join(chunk.line for chunk in found[:3]) + ("; ..." if len(found) > 3 else "")
