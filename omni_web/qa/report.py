"""The QA report of a book, ``<Title>.qa.json`` in the book folder, as a record with its write path.

The report lists every chunk of the book in reading order with its verdict, the figures of the
take in the book, and every take; it also carries the conversion request, so ``review`` and
``regenerate`` can find the job again from the output folder alone. It is read, edited (a chunk
accepted, the request renamed) and written through :class:`QaReport` only; reports written by
earlier versions load (a missing field takes its default, a failure stored as a plain sentence
becomes a finding of kind ``other``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from omni_web.files import write_atomic
from omni_web.qa.drift import ChapterDrift, chapter_drift
from omni_web.qa.records import ChunkRecord, QaStore, TakeRecord, Verdict
from omni_web.records import JsonRecord

__all__ = [
    "QA_REPORT_SUFFIX",
    "ChunkPlace",
    "QaReport",
    "QaSettings",
    "ReportChunk",
    "find_report",
    "read_report",
]

QA_REPORT_SUFFIX = ".qa.json"
REPORT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ChunkPlace:
    """Where a chunk sits in the book."""

    key: str
    text: str
    chapter_number: int
    chapter_title: str
    chunk_number: int


@dataclass(frozen=True, slots=True)
class ReportChunk(JsonRecord):
    """One chunk of the book in the report: where it is, its verdict, the take in the book and every take."""

    chapter: int = 0
    chapter_title: str = ""
    chunk: int = 0
    key: str = ""
    text: str = ""
    verdict: Verdict = Verdict.UNCHECKED
    chosen: int | None = None
    note: str = ""
    audio: str = ""
    figures: TakeRecord | None = None  # the chosen take
    takes: tuple[TakeRecord, ...] = ()

    @classmethod
    def of(cls, place: ChunkPlace, record: ChunkRecord | None, audio: Path) -> ReportChunk:
        """The report's line for the chunk at ``place`` with its record (None: never checked)."""
        return cls(
            chapter=place.chapter_number,
            chapter_title=place.chapter_title,
            chunk=place.chunk_number,
            key=place.key,
            text=place.text,
            verdict=record.verdict if record is not None else Verdict.UNCHECKED,
            chosen=record.chosen if record is not None else None,
            note=record.note if record is not None else "",
            audio=str(audio),
            figures=record.chosen_take if record is not None else None,
            takes=record.takes if record is not None else (),
        )


@dataclass(frozen=True, slots=True)
class QaSettings(JsonRecord):
    """How the book was checked: the level, takes, recogniser, and the limits the job calibrated."""

    level: str = ""
    takes: int = 0
    asr_model: str = ""
    calibration: Mapping[str, Any] | None = None
    asr_device: str | None = None  # where the recogniser ran and why


def _counts(chunks: Iterable[ReportChunk]) -> dict[str, int]:
    counts = {v.value: 0 for v in Verdict}
    for chunk in chunks:
        counts[chunk.verdict.value] += 1
    return counts


@dataclass(frozen=True, slots=True)
class QaReport(JsonRecord):
    """A book's QA report (the fields are the stored document's keys, in its order)."""

    version: int = REPORT_VERSION
    title: str = ""
    written_at: str = ""
    qa: QaSettings = field(default_factory=QaSettings)
    counts: Mapping[str, int] = field(default_factory=dict)  # chunks per verdict, kept equal to ``chunks``
    cache_dir: Path = Path()
    request: Mapping[str, Any] = field(default_factory=dict)  # the conversion request as stored
    chunks: tuple[ReportChunk, ...] = ()
    parts_dir: Path | None = None  # the book's work folder (chapter files, text edits)
    chapter_files: Mapping[str, str] = field(default_factory=dict)  # chapter number -> its file in parts_dir
    drift: tuple[ChapterDrift, ...] = ()  # per chapter: how the voice and the reading wandered

    @classmethod
    def build(
        cls,
        places: Iterable[ChunkPlace],
        store: QaStore,
        *,
        title: str,
        request: Mapping[str, Any],
        qa: QaSettings,
        parts_dir: Path | None = None,
        chapter_files: Mapping[str, str] | None = None,
    ) -> QaReport:
        """The report for the chunks at ``places``, their records read from ``store``."""
        chunks = tuple(ReportChunk.of(p, store.load(p.key), store.audio_path(p.key)) for p in places)
        return cls(
            title=title,
            written_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            qa=qa,
            counts=_counts(chunks),
            cache_dir=store.cache_dir,
            request=dict(request),
            chunks=chunks,
            parts_dir=parts_dir,
            chapter_files=dict(chapter_files or {}),
            drift=_drift(chunks),
        )

    @classmethod
    def read(cls, path: Path) -> QaReport:
        """The report at ``path``.

        Raises:
            ValueError: the file is unreadable or not a QA report.
        """
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is not a readable QA report ({exc})") from exc
        if not isinstance(document, dict) or not isinstance(document.get("chunks"), list):
            raise ValueError(f"{path} is not a QA report (no 'chunks')")
        try:
            return cls.from_dict(document)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise ValueError(f"{path} is not a QA report this version reads ({exc})") from exc

    def write(self, path: Path) -> Path:
        """Write atomically; returns ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))

    def with_records(self, records: Mapping[str, ChunkRecord]) -> QaReport:
        """The report with the chunks of ``records`` (by key) taking their verdict and note, recounted."""
        chunks = tuple(
            replace(c, verdict=records[c.key].verdict, note=records[c.key].note) if c.key in records else c
            for c in self.chunks
        )
        return replace(self, chunks=chunks, counts=_counts(chunks))

    def with_request(self, **changes: Any) -> QaReport:
        """The report with its stored request's fields changed (a book moved to another name)."""
        return replace(self, request={**self.request, **changes})

    def count(self, verdict: Verdict) -> int:
        """How many chunks the report holds with ``verdict``."""
        return int(self.counts.get(verdict.value, 0))

    def chunk_at(self, chapter: int, chunk: int) -> ReportChunk | None:
        """Chunk ``chunk`` of chapter ``chapter`` (both 1-based), or None."""
        return next((c for c in self.chunks if c.chapter == chapter and c.chunk == chunk), None)

    def chunks_at(self, places: Collection[tuple[int, int]]) -> list[ReportChunk]:
        """The chunks at ``(chapter, chunk)`` places, in reading order."""
        return [c for c in self.chunks if (c.chapter, c.chunk) in places]

    @property
    def chapters(self) -> list[int]:
        """The chapter numbers the report holds, in order."""
        return sorted({c.chapter for c in self.chunks})

    @property
    def keys(self) -> set[str]:
        """Every chunk key of the book."""
        return {c.key for c in self.chunks if c.key}

    @property
    def flagged_keys(self) -> set[str]:
        """The keys of chunks still waiting for review, as the report last saw them."""
        return {c.key for c in self.chunks if c.key and c.verdict.needs_review}

    def chapter_file(self, chapter: int) -> str | None:
        """The chapter's file name in the work folder, when the report knows it."""
        return self.chapter_files.get(str(chapter))


def _drift(chunks: tuple[ReportChunk, ...]) -> tuple[ChapterDrift, ...]:
    by_chapter: dict[int, list[ReportChunk]] = {}
    for chunk in chunks:
        by_chapter.setdefault(chunk.chapter, []).append(chunk)
    return tuple(
        chapter_drift(
            number, rows[0].chapter_title, (r.figures for r in rows), (t for r in rows for t in r.takes)
        )
        for number, rows in sorted(by_chapter.items())
    )


def find_report(target: Path) -> Path | None:
    """The report for a book folder, an m4b in it, or the report itself; None when there is none."""
    target = target.expanduser()
    if target.is_file() and target.name.endswith(QA_REPORT_SUFFIX):
        return target
    folder = target.parent if target.is_file() else target
    if not folder.is_dir():
        return None
    if target.is_file():
        candidate = folder / (target.stem + QA_REPORT_SUFFIX)
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob(f"*{QA_REPORT_SUFFIX}"))
    return found[0] if len(found) == 1 else None


def read_report(path: Path) -> QaReport:
    """:meth:`QaReport.read` (ValueError when the file is not a readable report)."""
    return QaReport.read(path)
