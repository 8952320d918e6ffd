"""Records of the read-along layer: words, sentences and a chapter's timings, as JSON-ready values.

Times are seconds in the chapter's *final* audio file (the file shipped and put in the EPUB), so
every consumer (SMIL clips, subtitle cues, the browser player) reads them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TIMINGS_VERSION", "ChapterTimings", "ChunkSpan", "SentenceTiming", "WordTiming"]

# Bumped when the JSON layout or the way times are computed changes: older files are rebuilt.
TIMINGS_VERSION = 1


@dataclass(frozen=True, slots=True)
class WordTiming:
    """One word of the known text with its time (from ASR, or interpolated where ASR missed it)."""

    text: str
    start_s: float
    end_s: float
    matched: bool  # True when an ASR word was aligned to it; False when its time is interpolated

    def to_list(self) -> list[Any]:
        """Compact JSON: ``[text, start, end, matched]``."""
        return [self.text, round(self.start_s, 3), round(self.end_s, 3), int(self.matched)]

    @classmethod
    def from_list(cls, row: list[Any]) -> WordTiming:
        """Inverse of :meth:`to_list`."""
        return cls(str(row[0]), float(row[1]), float(row[2]), bool(row[3]))


@dataclass(frozen=True, slots=True)
class SentenceTiming:
    """One spoken sentence: its text, its chunk, its time span in the chapter file."""

    index: int  # 0-based within the chapter
    chunk_index: int  # 0-based chunk of the chapter it was spoken in
    text: str
    start_s: float
    end_s: float
    estimated: bool  # True when the time comes from the characters' share, not from ASR words
    words: tuple[WordTiming, ...] = ()
    written: str = ""  # the sentence as the book prints it, once found in the book's pages

    @property
    def display_text(self) -> str:
        """What a reader should see: the printed sentence when known, else what was spoken."""
        return self.written or self.text

    @property
    def duration_s(self) -> float:
        """Length of the sentence's audio."""
        return self.end_s - self.start_s

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "index": self.index,
            "chunk": self.chunk_index,
            "text": self.text,
            "start_s": round(self.start_s, 3),
            "end_s": round(self.end_s, 3),
            "estimated": self.estimated,
            "words": [w.to_list() for w in self.words],
            "written": self.written,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SentenceTiming:
        """Inverse of :meth:`to_dict`."""
        return cls(
            index=int(data["index"]),
            chunk_index=int(data["chunk"]),
            text=str(data["text"]),
            start_s=float(data["start_s"]),
            end_s=float(data["end_s"]),
            estimated=bool(data["estimated"]),
            words=tuple(WordTiming.from_list(row) for row in data.get("words") or ()),
            written=str(data.get("written") or ""),
        )


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """Where one chunk's audio sits in the chapter file (known exactly from assembly)."""

    index: int  # 0-based within the chapter
    text: str
    audio_path: Path  # the chunk's own audio file (what ASR listens to)
    start_s: float
    end_s: float  # end of the chunk's audio, before the pause after it


@dataclass(frozen=True, slots=True)
class ChapterTimings:
    """Every spoken sentence of one chapter, in order, with the audio file the times refer to.

    ``source`` says how the times inside chunks were found: "asr" (faster-whisper words aligned
    to the text), "estimate" (characters' share of each chunk) or "mixed".
    """

    number: int  # 1-based chapter number in the book
    title: str
    audio_path: Path
    duration_s: float
    source: str
    sentences: tuple[SentenceTiming, ...]
    fingerprint: str = ""  # what the timings were built from; a different one means rebuild
    asr_model: str = ""
    chunk_starts_s: tuple[float, ...] = field(default=())

    @property
    def estimated(self) -> bool:
        """True when any sentence's time is an estimate."""
        return any(s.estimated for s in self.sentences)

    def sentence_at(self, time_s: float) -> SentenceTiming | None:
        """The sentence being read at ``time_s`` (the last one started; None before the first)."""
        current = None
        for sentence in self.sentences:
            if sentence.start_s > time_s:
                break
            current = sentence
        return current

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (the file stored beside the chapter audio)."""
        return {
            "version": TIMINGS_VERSION,
            "number": self.number,
            "title": self.title,
            "audio_path": str(self.audio_path),
            "duration_s": round(self.duration_s, 3),
            "source": self.source,
            "fingerprint": self.fingerprint,
            "asr_model": self.asr_model,
            "chunk_starts_s": [round(s, 3) for s in self.chunk_starts_s],
            "sentences": [s.to_dict() for s in self.sentences],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChapterTimings:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: the document is from another layout version (rebuild it).
        """
        if data.get("version") != TIMINGS_VERSION:
            raise ValueError(f"timings version {data.get('version')!r}, expected {TIMINGS_VERSION}")
        return cls(
            number=int(data["number"]),
            title=str(data["title"]),
            audio_path=Path(data["audio_path"]),
            duration_s=float(data["duration_s"]),
            source=str(data["source"]),
            sentences=tuple(SentenceTiming.from_dict(s) for s in data["sentences"]),
            fingerprint=str(data.get("fingerprint", "")),
            asr_model=str(data.get("asr_model", "")),
            chunk_starts_s=tuple(float(s) for s in data.get("chunk_starts_s") or ()),
        )
