"""A chapter's timings, built from its chunk files and pauses and stored beside its audio file.

The timings file is ``<chapter file>.timings.json`` (``001-ab12….timings.json`` next to
``001-ab12….flac``). It records a fingerprint of what it was built from (the chunk files, the
pauses, the chapter file and the ASR model), so a chapter whose chunks were regenerated, or whose
file was rebuilt, gets new timings while an unchanged one is read back after a restart.
"""

from __future__ import annotations

import hashlib
import json
import logging
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.files import write_atomic
from omni_web.qa.asr import RECOGNITION_ERRORS
from omni_web.readalong.asr import WordCache, WordRecogniser
from omni_web.readalong.records import ChapterTimings, ChunkSpan
from omni_web.readalong.timing import AsrWord, chapter_timings

__all__ = ["ChapterSource", "ChunkSource", "build_chapter_timings", "load_timings", "timings_path"]

_log = logging.getLogger(__name__)
# Beyond this difference between the summed chunk spans and the measured chapter file, the spans
# are scaled to the file (something between assembly and us changed the length).
_DRIFT_TOLERANCE_S = 0.05


@dataclass(frozen=True, slots=True)
class ChunkSource:
    """One chunk as assembly used it: its text, its audio file and the silence after it."""

    text: str
    audio_path: Path
    pause_after_ms: int


@dataclass(frozen=True, slots=True)
class ChapterSource:
    """What a chapter's timings are built from.

    ``chunk_starts_s``: each chunk's start in the final file when the step that made the file
    recorded them (mastering may add a lead-in or change pauses); None means the file is the
    plain join of the chunks and pauses, after ``lead_in_ms`` of silence.
    """

    number: int
    title: str
    audio_path: Path
    duration_s: float
    chunks: tuple[ChunkSource, ...]
    lead_in_ms: int = 0
    chunk_starts_s: tuple[float, ...] | None = None


def timings_path(audio_path: Path) -> Path:
    """Where a chapter file's timings are stored."""
    audio_path = Path(audio_path)
    return audio_path.with_name(audio_path.stem + ".timings.json")


def _audio_seconds(path: Path) -> float:
    try:
        with wave.open(str(path), "rb") as handle:
            return handle.getnframes() / float(handle.getframerate())
    except (wave.Error, EOFError, OSError):
        from omni_web.assemble.ffmpeg import probe_duration_us

        return probe_duration_us(path) / 1e6


def _fingerprint(source: ChapterSource, model: str) -> str:
    digest = hashlib.sha256()
    for chunk in source.chunks:
        stat = Path(chunk.audio_path).stat()
        digest.update(f"{chunk.audio_path.name}|{stat.st_size}|{stat.st_mtime_ns}|{chunk.pause_after_ms}|"
                      f"{chunk.text}\n".encode())
    stat = Path(source.audio_path).stat()
    digest.update(f"{stat.st_size}|{stat.st_mtime_ns}|{source.lead_in_ms}|{source.chunk_starts_s}|{model}".encode())
    return digest.hexdigest()[:24]


def _spans(source: ChapterSource) -> list[ChunkSpan]:
    lengths = [_audio_seconds(c.audio_path) for c in source.chunks]
    if source.chunk_starts_s is not None:
        starts = list(source.chunk_starts_s)
    else:
        starts, clock = [], source.lead_in_ms / 1000
        for chunk, length in zip(source.chunks, lengths, strict=True):
            starts.append(clock)
            clock += length + chunk.pause_after_ms / 1000
        total = clock
        if source.duration_s > 0 and abs(total - source.duration_s) > _DRIFT_TOLERANCE_S:
            _log.warning("Chapter %d: chunks and pauses add up to %.2f s but the file lasts %.2f s; "
                         "scaling the times to the file", source.number, total, source.duration_s)
            scale = source.duration_s / total
            starts = [s * scale for s in starts]
            lengths = [n * scale for n in lengths]
    return [
        ChunkSpan(i, c.text, c.audio_path, start, min(start + length, source.duration_s or start + length))
        for i, (c, start, length) in enumerate(zip(source.chunks, starts, lengths, strict=True))
    ]


def load_timings(audio_path: Path) -> ChapterTimings | None:
    """The stored timings of a chapter file, or None (missing, unreadable or of another version)."""
    path = timings_path(audio_path)
    try:
        return ChapterTimings.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        _log.warning("Rebuilding the unreadable timings %s (%s)", path, exc)
        return None


def build_chapter_timings(
    source: ChapterSource,
    *,
    recogniser: WordRecogniser | None,
    cache: WordCache | None,
    language: str | None = None,
    reuse: WordRecogniser | None = None,
) -> ChapterTimings:
    """The chapter's timings: read back when still valid, else built and stored.

    Args:
        recogniser: ASR with word times, or None for times from the characters' share.
        cache: where ASR words are kept per chunk audio (None: no cache).
        language: the book's language as a Whisper code (None: let the model detect it).
        reuse: a ``WordRecogniser``-like object asked first (the QA pass's transcripts), or None.
    """
    model = recogniser.name if recogniser is not None else ""
    fingerprint = _fingerprint(source, model)
    stored = load_timings(source.audio_path)
    if stored is not None and stored.fingerprint == fingerprint:
        return stored
    spans = _spans(source)
    words_of: list[Sequence[AsrWord] | None] = []
    for span in spans:
        words_of.append(_words(span.audio_path, recogniser, cache, language, reuse))
    timings = chapter_timings(
        spans, words_of, number=source.number, title=source.title, audio_path=Path(source.audio_path),
        duration_s=source.duration_s, fingerprint=fingerprint, asr_model=model,
    )
    document = timings.to_dict()
    try:
        write_atomic(timings_path(source.audio_path), json.dumps(document, ensure_ascii=False))
    except OSError as exc:
        _log.warning("Could not store the timings of chapter %d (%s)", source.number, exc)
    return ChapterTimings.from_dict(document)  # as stored (times in ms), so a reload compares equal


def _words(
    audio: Path,
    recogniser: WordRecogniser | None,
    cache: WordCache | None,
    language: str | None,
    reuse: WordRecogniser | None,
) -> list[AsrWord] | None:
    if reuse is not None:
        found = reuse.words(audio, language)
        if found is not None:  # an empty list is a finding too: nothing was heard
            return found
    if recogniser is None:
        return None
    if cache is not None:
        cached = cache.get(audio, recogniser.name)
        if cached is not None:
            return cached
    try:
        words = recogniser.words(audio, language)
    except RECOGNITION_ERRORS as exc:  # a failed transcription leaves estimated times, never a failed book
        _log.warning("Speech recognition failed on %s (%s); its times are estimated", audio, exc)
        return None
    except Exception:  # noqa: BLE001 - a bug: its traceback goes to the log, the book goes on
        _log.exception("Read-along word timing of %s failed on a bug; its times are estimated", audio)
        return None
    if cache is not None:
        cache.put(audio, recogniser.name, words)
    return words
