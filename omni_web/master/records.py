"""What mastering a chapter is asked to do and what it made: the chapter spec, the book's mastering
options, and the JSON record saved beside each chapter's files (so a resumed job reuses them)."""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from omni_web.assemble.join import AAC_FRAME_SAMPLES
from omni_web.assemble.records import AudioFormat, ChapterAudio
from omni_web.master.presets import ACX_SAMPLE_RATE_HZ, LoudnessPreset

__all__ = [
    "ChapterState",
    "ChapterSpec",
    "MasterOptions",
    "MasteredChapter",
    "MasteringAborted",
    "chapter_paths",
    "chunks_stamp",
    "has_record",
    "load_mastered",
]

_RECORD_VERSION = 1


class ChapterState(enum.StrEnum):
    """Where a chapter is on its way to its final files."""

    PENDING = "pending"  # waiting for its chunks
    MASTERING = "mastering"  # its chunks are being leveled as they land
    ENCODING = "encoding"  # all chunks in: second loudness pass and final encode
    READY = "ready"  # its final files exist


class MasteringAborted(Exception):
    """The job stopped (cancel or a failed chunk) while a chapter waited for its chunks."""


@dataclass(frozen=True, slots=True)
class ChapterSpec:
    """One file to master: its chunks (by cache key, in reading order) and the pause after each."""

    number: int
    title: str
    keys: tuple[str, ...]
    pauses_ms: tuple[int, ...]
    stem: str  # e.g. "003-1a2b3c4d5e6f7a8b": names every file this chapter makes
    in_book: bool = True  # credits are mastered like chapters but stay out of the m4b


@dataclass(frozen=True, slots=True)
class MasterOptions:
    """How every chapter of one book is mastered and encoded (the same for all, so they join)."""

    preset: LoudnessPreset
    fmt: AudioFormat
    aac_kbps: int = 64
    mp3_kbps: int | None = None  # also an MP3 per chapter (at the chapter's rate; ACX: 192 at 44.1 kHz)
    tail_ms: int = 1500
    lossless: bool = False  # keep a mastered FLAC (ACX splits long chapters and cuts the sample from it)

    @property
    def head_ms(self) -> int:
        """Room tone before the first word."""
        return self.preset.head_ms

    @property
    def mp3_rate_hz(self) -> int:
        """ACX wants 44.1 kHz; otherwise the chapter's own rate."""
        return ACX_SAMPLE_RATE_HZ if self.preset.acx else self.fmt.sample_rate_hz

    @property
    def key(self) -> str:
        """A short hash of everything that shapes the mastered files (part of their names)."""
        shaping = {
            "v": _RECORD_VERSION,
            "preset": asdict(self.preset),
            "rate": self.fmt.sample_rate_hz,
            "channels": self.fmt.channels,
            "aac": self.aac_kbps,
            "mp3": self.mp3_kbps,
            "tail": self.tail_ms,
            "lossless": self.lossless,
        }
        return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:10]


@dataclass(frozen=True, slots=True)
class MasteredChapter:
    """A chapter's final files and what mastering did to it (saved beside them as JSON)."""

    number: int
    title: str
    in_book: bool
    m4a: Path
    adts: Path
    mp3: Path | None
    flac: Path | None
    sample_rate_hz: int
    channels: int
    samples: int  # in the chapter file (head + chunks + pauses + tail, padded to whole AAC frames)
    aac_frames: int  # in the ADTS twin, priming included
    chunk_starts_ms: tuple[float, ...]  # each chunk's first sample in the chapter file
    chunk_gains_db: tuple[float, ...]
    measured: dict[str, float] = field(default_factory=dict)  # pass 1 (after the limiter)
    gain_db: float = 0.0  # loudnorm's linear gain
    limited_again: bool = False  # linear mode would have broken the peak limit: limited, re-measured
    preset: str = "audiobook"
    second_pass: bool = True  # False: pass 1 measured it on target, its first-pass AAC was kept
    reference_db: float | None = None  # the level its chunks were leveled to
    chunks_stamp: str = ""  # size and mtime of every chunk file it was made from (a replaced take shows)

    @property
    def duration_ms(self) -> float:
        """Length of the chapter file."""
        return self.samples * 1000 / self.sample_rate_hz

    def audio(self, *, mp3: bool = False) -> ChapterAudio:
        """The chapter as the assembly reads it: its AAC file, or with ``mp3`` its MP3 (ValueError
        without one)."""
        path = self.mp3 if mp3 else self.m4a
        if path is None:
            raise ValueError(f"Chapter {self.number} has no MP3 file; it was mastered without one.")
        return ChapterAudio(
            index=self.number, title=self.title, path=path, duration_ms=round(self.duration_ms)
        )

    @property
    def book_span_samples(self) -> int:
        """What the chapter takes in the joined book: its frames, priming included."""
        return self.aac_frames * AAC_FRAME_SAMPLES

    def to_json(self) -> dict[str, object]:
        """Plain JSON for the sidecar file and the job result."""
        data = asdict(self)
        for key in ("m4a", "adts", "mp3", "flac"):
            data[key] = str(data[key]) if data[key] is not None else None
        data["chunk_starts_ms"] = [round(v, 2) for v in self.chunk_starts_ms]
        data["chunk_gains_db"] = [round(v, 2) for v in self.chunk_gains_db]
        return data

    @classmethod
    def from_json(cls, data: dict[str, object]) -> MasteredChapter:
        """Inverse of :meth:`to_json`."""
        values = dict(data)
        for key in ("m4a", "adts", "mp3", "flac"):
            values[key] = Path(str(values[key])) if values.get(key) else None
        values["chunk_starts_ms"] = tuple(float(v) for v in values["chunk_starts_ms"])  # type: ignore[union-attr]
        values["chunk_gains_db"] = tuple(float(v) for v in values["chunk_gains_db"])  # type: ignore[union-attr]
        return cls(**values)  # type: ignore[arg-type]


def chapter_paths(folder: Path, spec: ChapterSpec, options: MasterOptions) -> dict[str, Path]:
    """Where a chapter's mastered files live (named by its chunks and by the mastering options)."""
    base = f"{spec.stem}.{options.key}"
    return {
        "record": folder / f"{base}.json",
        "m4a": folder / f"{base}.m4a",
        "adts": folder / f"{base}.aac",
        "mp3": folder / f"{base}.mp3",
        "flac": folder / f"{base}.flac",
    }


def chunks_stamp(paths: list[Path]) -> str:
    """A short hash of the chunk files' sizes and modification times, in order."""
    stamps = []
    for path in paths:
        stat = Path(path).stat()
        stamps.append([stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(stamps).encode()).hexdigest()[:16]


def has_record(folder: Path, spec: ChapterSpec, options: MasterOptions) -> bool:
    """True when an earlier run left this chapter's record (it may still be stale)."""
    return chapter_paths(folder, spec, options)["record"].is_file()


def load_mastered(
    folder: Path, spec: ChapterSpec, options: MasterOptions, *, stamp: str | None = None
) -> MasteredChapter | None:
    """A chapter mastered by an earlier run (resume), or None when any of its files is missing or,
    with ``stamp``, when a chunk file changed since (a take regenerated in place by QA review)."""
    paths = chapter_paths(folder, spec, options)
    try:
        record = MasteredChapter.from_json(json.loads(paths["record"].read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    files = [record.m4a, record.adts, record.mp3, record.flac]
    if not all(p.is_file() for p in files if p is not None):
        return None
    if stamp is not None and record.chunks_stamp != stamp:
        return None
    return record
