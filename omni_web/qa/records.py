"""QA records: the figures of every take and the verdict of a chunk, stored beside its audio.

A chunk's record is ``<cache>/<key>.qa.json`` next to ``<cache>/<key>.wav``, written atomically
after the take is chosen, so a resumed job knows which chunks passed and never retakes them.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from omni_web.files import write_atomic
from omni_web.qa.findings import Finding, FindingKind
from omni_web.records import JsonRecord

__all__ = ["ChunkRecord", "QaStore", "TakeRecord", "Verdict"]


class Verdict(enum.StrEnum):
    """What QA (or the user) decided about a chunk."""

    PASSED = "passed"  # the first take passed every check
    RETAKEN = "retaken"  # a later take passed
    FLAGGED = "flagged"  # no take passed; the best one is in the book, waiting for review
    ACCEPTED = "accepted"  # flagged, then accepted as is by the user
    UNCHECKED = "unchecked"  # rendered with QA off

    @property
    def needs_review(self) -> bool:
        """True for chunks the review list shows."""
        return self is Verdict.FLAGGED


@dataclass(frozen=True, slots=True)
class TakeRecord(JsonRecord):
    """One request's audio and what the checks measured in it."""

    number: int  # 1-based, across the chunk's whole history (regenerations continue the count)
    seed: int | None
    finish_reason: str | None
    duration_s: float
    expected_s: float | None
    duration_ratio: float | None
    silence_share: float
    longest_internal_silence_s: float
    clipped_share: float
    failures: tuple[Finding, ...] = ()  # why the take failed
    wer: float | None = None
    word_recall: float | None = None
    transcript: str | None = None
    asr_note: str = ""  # why speech recognition (or one of its checks) was skipped, when it was
    # Findings for the reviewer that do not fail the take (a name heard as another word).
    notices: tuple[Finding, ...] = ()
    # With read-along on: each heard word as (text, start s, end s) in this take's audio, kept
    # for the chosen take only, and the SHA-256 of that audio (the words hold for that file only).
    words: tuple[tuple[str, float, float], ...] | None = None
    audio_sha256: str = ""
    # The voice and the reading (omni_web/qa/voice.py): similarity to the voice's centre, words per
    # second of speech, pitch centre, speech level; and the request's token budget and use.
    similarity: float | None = None
    pace_wps: float | None = None
    pitch_hz: float | None = None
    loudness_db: float | None = None
    max_new_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return not self.failures

    @property
    def reasons(self) -> str:
        """Why the take failed, the sentences joined (empty when it passed)."""
        return "; ".join(f.message for f in self.failures)

    @property
    def kinds(self) -> frozenset[FindingKind]:
        """The kinds of its failures."""
        return frozenset(f.kind for f in self.failures)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, figures rounded."""
        data = asdict(self)
        for name in (
            "duration_s",
            "expected_s",
            "duration_ratio",
            "silence_share",
            "longest_internal_silence_s",
            "wer",
            "word_recall",
            "similarity",
            "pace_wps",
            "pitch_hz",
            "loudness_db",
        ):
            if data[name] is not None:
                data[name] = round(data[name], 3)
        data["clipped_share"] = round(self.clipped_share, 5)
        data["failures"] = [f.to_dict() for f in self.failures]
        data["notices"] = [f.to_dict() for f in self.notices]
        if self.words is None:  # records without word times stay as they were
            del data["words"], data["audio_sha256"]
        else:
            data["words"] = [list(w) for w in self.words]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TakeRecord:
        """Inverse of :meth:`to_dict` (unknown keys ignored)."""
        names = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in names}
        values["failures"] = tuple(Finding.read(f) for f in values.get("failures") or ())
        values["notices"] = tuple(Finding.read(f) for f in values.get("notices") or ())
        if values.get("words") is not None:
            values["words"] = tuple((str(w[0]), float(w[1]), float(w[2])) for w in values["words"])
        return cls(**values)

    def without_words(self) -> TakeRecord:
        """The take without word times (a take that is not the one in the book)."""
        return replace(self, words=None, audio_sha256="") if self.words is not None else self


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """The QA history of one chunk: its takes, the one kept, and the verdict."""

    key: str
    text: str
    level: str
    verdict: Verdict
    chosen: int  # number of the take whose audio is the chunk's file
    takes: tuple[TakeRecord, ...] = field(default_factory=tuple)
    note: str = ""  # e.g. "accepted by the user"
    chapter: int = 0  # where the chunk was when it was taken (1-based; 0 = unknown)
    chunk: int = 0

    @property
    def chosen_take(self) -> TakeRecord | None:
        """The take in the book."""
        return next((t for t in self.takes if t.number == self.chosen), None)

    @property
    def next_take_number(self) -> int:
        """The number a new take gets."""
        return max((t.number for t in self.takes), default=0) + 1

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "key": self.key,
            "text": self.text,
            "level": self.level,
            "verdict": self.verdict.value,
            "chosen": self.chosen,
            "note": self.note,
            "chapter": self.chapter,
            "chunk": self.chunk,
            "takes": [t.to_dict() for t in self.takes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChunkRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(
            key=str(data["key"]),
            text=str(data.get("text", "")),
            level=str(data.get("level", "basic")),
            verdict=Verdict(data.get("verdict", "flagged")),
            chosen=int(data.get("chosen", 1)),
            takes=tuple(TakeRecord.from_dict(t) for t in data.get("takes") or ()),
            note=str(data.get("note", "")),
            chapter=int(data.get("chapter", 0) or 0),
            chunk=int(data.get("chunk", 0) or 0),
        )

    def accepted(self, note: str = "accepted as is by the user") -> ChunkRecord:
        """The same record after the user accepted a flagged chunk."""
        return replace(self, verdict=Verdict.ACCEPTED, note=note)


class QaStore:
    """Reads and writes chunk records in the chunk cache folder."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir

    def path(self, key: str) -> Path:
        """Where the record of ``key`` lives."""
        return self.cache_dir / f"{key}.qa.json"

    def audio_path(self, key: str) -> Path:
        """The chunk's audio file (the renderer's naming)."""
        return self.cache_dir / f"{key}.wav"

    def load(self, key: str) -> ChunkRecord | None:
        """The record of ``key``, or None when there is none (or it is unreadable)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
            return ChunkRecord.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, record: ChunkRecord) -> None:
        """Write atomically, so a crash leaves the old record or the new one."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path(record.key), json.dumps(record.to_dict(), ensure_ascii=False, indent=1))
