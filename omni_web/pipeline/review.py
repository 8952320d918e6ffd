"""Review a finished (or running) book's QA: list flagged chunks, accept one, or regenerate one.

Regenerating never re-renders the rest: the chunk's audio file is removed (its QA record stays, so
the new takes continue its history) or its text is edited (a new chunk key), its chapter file is
removed, and the same conversion runs again. Every other chunk is found in the cache and every
other chapter file on disk, so one request is sent and only that chapter and the book files are
rebuilt, through the same chapter-assembly path as a normal run.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.deliver.layout import OutputLayout, name_of_files
from omni_web.errors import ReviewError
from omni_web.pipeline.convert import ConvertResult
from omni_web.pipeline.quality import load_text_edits, save_text_edit
from omni_web.pipeline.request import ConvertRequest
from omni_web.qa import (
    QA_REPORT_SUFFIX,
    ChunkRecord,
    FindingKind,
    Mark,
    QaProgress,
    QaReport,
    QaStore,
    ReportChunk,
    TakeRecord,
    Verdict,
    find_report,
    language_code,
    mark_text,
)

__all__ = [
    "REGENERATE_PRIORITY",
    "ReviewRow",
    "finished_qa_line",
    "qa_counts_line",
    "ReviewTarget",
    "accept_chunk",
    "accept_chunks",
    "job_review_target",
    "open_review",
    "prepare_regenerate",
    "review_rows",
    "rows_for_keys",
    "qa_so_far",
]

# A regenerate's job priority: above any book's (the queue takes higher priorities first), so a
# one-chunk fix runs next instead of behind a long book.
REGENERATE_PRIORITY = 100


@dataclass(frozen=True, slots=True)
class ReviewTarget:
    """A book's QA report and the chunk cache its records live in."""

    report_path: Path
    report: QaReport
    store: QaStore

    @property
    def request(self) -> ConvertRequest:
        """The conversion that made the book (run again to rebuild it), with the name it claimed.

        The name is read back from where the report is, through the layout: reports written before
        the claimed name was kept in them hold the file stem instead, which in the library layout
        names another folder (omni_web/deliver/layout.py).
        """
        request = ConvertRequest.from_dict(self.report.request)
        layout = OutputLayout(request.output_layout)
        found = name_of_files(
            self.report_path.parent, self.report_path.name.removesuffix(QA_REPORT_SUFFIX), layout
        )
        if found and (layout is OutputLayout.LIBRARY or request.output_name is None):
            return replace(request, output_name=found)
        return request

    @property
    def parts_dir(self) -> Path:
        """The book's work folder (chapter files, text edits).

        Raises:
            ReviewError: the report does not name it (it was not written by a conversion).
        """
        if self.report.parts_dir is None:
            raise ReviewError(
                f"{self.report_path} does not name the book's work folder: convert the book again "
                "to rebuild it."
            )
        return self.report.parts_dir

    @property
    def title(self) -> str:
        """The book's title."""
        return self.report.title


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One chunk of the review list, with its current record."""

    chapter: int
    chapter_title: str
    chunk: int
    text: str
    audio_path: Path
    record: ChunkRecord | None
    language: str = "en"  # a Whisper code: how text and transcript are normalised for the marks

    @property
    def verdict(self) -> Verdict:
        """The chunk's verdict now (records are fresher than the report)."""
        return self.record.verdict if self.record is not None else Verdict.UNCHECKED

    @property
    def _take(self) -> TakeRecord | None:
        return self.record.chosen_take if self.record is not None else None

    @property
    def figures(self) -> str:
        """``duration 0.33x expected, silent 4 %, WER 41 %``."""
        take = self._take
        if take is None:
            return ""
        parts = [f"duration {take.duration_ratio:.2f}x expected"] if take.duration_ratio is not None else []
        parts.append(f"silent {take.silence_share:.0%}")
        if take.wer is not None:
            parts.append(f"WER {take.wer:.0%}")
        return ", ".join(parts)

    @property
    def reasons(self) -> str:
        """Why the kept take failed."""
        return self._take.reasons if self._take is not None else ""

    @property
    def first_reason(self) -> str:
        """The first of :attr:`reasons` (for one-line lists)."""
        take = self._take
        return take.failures[0].message if take is not None and take.failures else ""

    @property
    def kinds(self) -> tuple[FindingKind, ...]:
        """The kinds of the kept take's failures, each once, in the order found."""
        take = self._take
        return tuple(dict.fromkeys(f.kind for f in take.failures)) if take is not None else ()

    @property
    def transcript(self) -> str:
        """What speech recognition heard in the kept take ("" without ASR)."""
        return (self._take.transcript or "") if self._take is not None else ""

    @property
    def notices(self) -> str:
        """What the reviewer should check in the kept take although it passed (a misheard name)."""
        return "; ".join(n.message for n in self._take.notices) if self._take is not None else ""

    @property
    def marks(self) -> tuple[Mark, ...]:
        """The text marked where the kept take differs: words not heard, said twice, added."""
        return mark_text(self.text, self.transcript or None, lang=self.language)

    @property
    def takes(self) -> int:
        """How many takes the chunk has had."""
        return len(self.record.takes) if self.record is not None else 0


def open_review(target: Path) -> ReviewTarget:
    """The report of a book folder, an m4b in it, or a ``.qa.json`` file.

    Raises:
        ReviewError: nothing there has a QA report (QA was off, or the book is not finished).
    """
    candidate = target.expanduser()
    report_path = find_report(candidate)
    several = sorted(candidate.glob(f"*{QA_REPORT_SUFFIX}")) if candidate.is_dir() else []
    if report_path is None and len(several) > 1:
        names = ", ".join(path.name for path in several)
        raise ReviewError(
            f"{candidate} holds the reports of {len(several)} books ({names}): pass the m4b or "
            "the .qa.json of the one to review."
        )
    if report_path is None:
        raise ReviewError(
            f"No QA report (<Title>.qa.json) at {candidate}. Pass the book's output folder; a book made "
            "with QA off has none: convert it again with --qa basic (finished chunks are reused)."
        )
    try:
        report = QaReport.read(report_path)
    except ValueError as exc:
        raise ReviewError(str(exc)) from exc
    return ReviewTarget(report_path, report, QaStore(report.cache_dir))


def job_review_target(job_result: Mapping[str, Any] | None, job_id: str) -> Path:
    """What :func:`open_review` opens for a finished job (its stored result): its own report, else
    its m4b, else its folder (a folder may hold other jobs' books too). ReviewError while the job has no book."""
    result = ConvertResult.from_dict(job_result)
    for path in (result.qa_report, result.m4b, result.output_dir if result.output_dir.parts else None):
        if path:
            return path
    raise ReviewError(f"Job '{job_id}' has no book yet: its QA report is written when the book is finished.")


def review_rows(target: ReviewTarget, *, only_flagged: bool = True) -> list[ReviewRow]:
    """The chunks of the book in reading order (only those waiting for review by default)."""
    rows: list[ReviewRow] = []
    language = language_code(ConvertRequest.read(target.report.request).language) or "en"
    for chunk in target.report.chunks:
        record = target.store.load(chunk.key)
        row = ReviewRow(
            chunk.chapter,
            chunk.chapter_title,
            chunk.chunk,
            chunk.text,
            target.store.audio_path(chunk.key),
            record,
            language,
        )
        if not only_flagged or row.verdict.needs_review:
            rows.append(row)
    return rows


def _find(target: ReviewTarget, chapter: int, chunk: int) -> ReportChunk:
    found = target.report.chunk_at(chapter, chunk)
    if found is not None:
        return found
    chapters = target.report.chapters
    raise ReviewError(
        f"The book has no chunk {chunk} in chapter {chapter} (chapters: {', '.join(map(str, chapters))}). "
        "List them with: python -m omni_web review OUTPUT --all"
    )


def accept_chunk(target: ReviewTarget, chapter: int, chunk: int) -> ChunkRecord:
    """Accept a flagged chunk as it is (the book does not change; the review list does)."""
    row = _find(target, chapter, chunk)
    record = target.store.load(row.key)
    if record is None:
        raise ReviewError(f"Chunk {chunk} of chapter {chapter} has no QA record; nothing to accept.")
    accepted = record.accepted()
    target.store.save(accepted)
    target.report.with_records({row.key: accepted}).write(target.report_path)
    return accepted


def accept_chunks(target: ReviewTarget, places: Iterable[tuple[int, int]]) -> int:
    """Accept many flagged chunks as they are, ``(chapter, chunk)`` each; the report is written once.

    Returns how many were accepted (a chunk without a QA record, or no longer flagged, is skipped).
    """
    accepted: dict[str, ChunkRecord] = {}
    for row in target.report.chunks_at(set(places)):
        record = target.store.load(row.key)
        if record is not None and record.verdict.needs_review:
            accepted[row.key] = record.accepted()
            target.store.save(accepted[row.key])
    target.report.with_records(accepted).write(target.report_path)
    return len(accepted)


def prepare_regenerate(
    target: ReviewTarget, chapter: int, chunk: int, *, text: str | None = None
) -> ConvertRequest:
    """Make the next run of the book redo one chunk (with ``text`` instead, when given) and its chapter.

    Returns the conversion to run; it sends one request for the chunk (more if its takes fail) and
    rebuilds only that chapter's file and the book files.
    """
    row = _find(target, chapter, chunk)
    spoken = row.text
    if text is not None and text.strip() and text.strip() != spoken:
        edits = load_text_edits(target.parts_dir)
        original = next((planned for planned, edited in edits.items() if edited == spoken), spoken)
        save_text_edit(target.parts_dir, original, text)
    else:
        target.store.audio_path(row.key).unlink(missing_ok=True)
    chapter_file = target.report.chapter_file(chapter)
    if chapter_file:
        (target.parts_dir / chapter_file).unlink(missing_ok=True)
    return target.request


def rows_for_keys(store: QaStore, keys: tuple[str, ...] | list[str]) -> list[ReviewRow]:
    """Review rows of a running job (no report yet): from the flagged keys its progress lists."""
    rows: list[ReviewRow] = []
    for key in dict.fromkeys(keys):
        record = store.load(key)
        if record is not None and record.verdict.needs_review:
            rows.append(
                ReviewRow(record.chapter, "", record.chunk, record.text, store.audio_path(key), record)
            )
    return sorted(rows, key=lambda r: (r.chapter, r.chunk))


def qa_so_far(store: QaStore, qa: QaProgress) -> QaProgress:
    """A running job's QA counts with the flagged chunks accepted since it flagged them moved to
    accepted (the job counts only what it saw; an accept is written to the chunk's record)."""
    accepted = 0
    for key in dict.fromkeys(qa.flagged_keys):
        record = store.load(key)
        accepted += record is not None and record.verdict is Verdict.ACCEPTED
    return replace(qa, flagged=max(qa.flagged - accepted, 0), accepted=qa.accepted + accepted)


def qa_counts_line(target: ReviewTarget) -> str:
    """``QA (basic): 270 passed, 6 retaken, 3 flagged, 2 accepted.``, counted from the chunks'
    records (fresher than the report's counts), so the job line and the review list say the same."""
    counts = Counter(row.verdict.value for row in review_rows(target, only_flagged=False))
    level = target.report.qa.level
    return (
        f"QA ({level}): {counts[Verdict.PASSED.value]} passed, {counts[Verdict.RETAKEN.value]} retaken, "
        f"{counts[Verdict.FLAGGED.value]} flagged, {counts[Verdict.ACCEPTED.value]} accepted."
    )


def finished_qa_line(job_result: dict[str, Any] | Any, job_id: str) -> str | None:
    """:func:`qa_counts_line` of a finished job's report; None when it has none. Counted again only
    when the report changed (an accept rewrites it), so a page polling the job reads no records."""
    try:
        path = find_report(job_review_target(job_result, job_id))
        stamp = path.stat().st_mtime_ns if path is not None else None
    except (ReviewError, OSError):
        return None
    return _counted_line(str(path), stamp) if path is not None else None


@functools.lru_cache(maxsize=32)
def _counted_line(path: str, _stamp: int | None) -> str | None:
    try:
        return qa_counts_line(open_review(Path(path)))
    except ReviewError:
        return None
