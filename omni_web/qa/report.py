"""The QA report of a book, ``<Title>.qa.json`` in the book folder, and reading it back.

The report lists every chunk of the book in reading order with its verdict, the figures of the
take in the book, and every take; it also carries the conversion request, so ``review`` and
``regenerate`` can find the job again from the output folder alone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.files import write_atomic
from omni_web.qa.records import ChunkRecord, QaStore, Verdict

__all__ = [
    "QA_REPORT_SUFFIX",
    "ChunkPlace",
    "FlaggedChunk",
    "build_report",
    "find_report",
    "flagged_chunks",
    "read_report",
    "write_report",
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
class FlaggedChunk:
    """One line of the review list."""

    place: ChunkPlace
    record: ChunkRecord
    audio_path: Path

    @property
    def figures(self) -> str:
        """``ratio 0.33, silent 5 %, WER 41 %`` for lists."""
        take = self.record.chosen_take
        if take is None:
            return ""
        parts = []
        if take.duration_ratio is not None:
            parts.append(f"duration {take.duration_ratio:.2f}x expected")
        parts.append(f"silent {take.silence_share:.0%}")
        if take.wer is not None:
            parts.append(f"WER {take.wer:.0%}")
        return ", ".join(parts)

    @property
    def reasons(self) -> str:
        """Why the kept take failed."""
        take = self.record.chosen_take
        return "; ".join(take.failures) if take is not None else ""


def build_report(
    places: Iterable[ChunkPlace],
    store: QaStore,
    *,
    title: str,
    request: Mapping[str, Any],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """The report document for the chunks at ``places`` (records read from ``store``)."""
    chunks: list[dict[str, Any]] = []
    counts = {v.value: 0 for v in Verdict}
    for place in places:
        record = store.load(place.key)
        verdict = record.verdict if record is not None else Verdict.UNCHECKED
        counts[verdict.value] += 1
        take = record.chosen_take if record is not None else None
        chunks.append({
            "chapter": place.chapter_number,
            "chapter_title": place.chapter_title,
            "chunk": place.chunk_number,
            "key": place.key,
            "text": place.text,
            "verdict": verdict.value,
            "chosen": record.chosen if record is not None else None,
            "note": record.note if record is not None else "",
            "audio": str(store.audio_path(place.key)),
            "figures": take.to_dict() if take is not None else None,
            "takes": [t.to_dict() for t in record.takes] if record is not None else [],
        })
    return {
        "version": REPORT_VERSION,
        "title": title,
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "qa": dict(options),
        "counts": counts,
        "cache_dir": str(store.cache_dir),
        "request": dict(request),
        "chunks": chunks,
    }


def write_report(document: Mapping[str, Any], path: Path) -> Path:
    """Write atomically; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, json.dumps(document, ensure_ascii=False, indent=1))


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


def read_report(path: Path) -> dict[str, Any]:
    """The report document (ValueError when it is not one)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable QA report ({exc})") from exc
    if not isinstance(document, dict) or "chunks" not in document:
        raise ValueError(f"{path} is not a QA report (no 'chunks')")
    return document


def flagged_chunks(places: Iterable[ChunkPlace], store: QaStore) -> list[FlaggedChunk]:
    """The chunks waiting for review, in reading order, with their current records."""
    found: list[FlaggedChunk] = []
    for place in places:
        record = store.load(place.key)
        if record is not None and record.verdict.needs_review:
            found.append(FlaggedChunk(place, record, store.audio_path(place.key)))
    return found
