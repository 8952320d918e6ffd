"""Chapter audio and m4b books made the quick way for tests that check something else with them.

A chapter file is its chunks and pauses joined sample-exactly by plain ffmpeg (no mastering); a
book is those chapters encoded to AAC and joined the way the app joins them
(:func:`omni_web.assemble.join.join_m4b`), so its marks, tags and cover are the app's own.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from omni_web.assemble import AudiobookTags, ChapterAudio, probe_duration_ms
from omni_web.assemble.join import EncodedChapter, join_m4b
from omni_web.master.chapter import count_adts_frames

__all__ = ["chapter_audio", "chapter_file", "m4b_book", "make_tone"]


def _ffmpeg(args: Sequence[str], stdin: bytes | None = None) -> bytes:
    done = subprocess.run(  # noqa: S603 - argv list
        ["ffmpeg", "-v", "error", "-y", *args], input=stdin, capture_output=True, check=True
    )
    return done.stdout


def make_tone(path: Path, *, rate: int, channels: int, seconds: float, freq: int = 440) -> Path:
    """A sine tone as 16-bit PCM WAV."""
    _ffmpeg(
        [
            "-f",
            "lavfi",
            "-i",
            f"sine=f={freq}:r={rate}:d={seconds}",
            "-ac",
            str(channels),
            "-c:a",
            "pcm_s16le",
            str(path),
        ]
    )
    return path


def chapter_file(
    segments: Sequence[tuple[Path, int]], out: Path, *, rate: int = 24000, lead_in_ms: int = 0
) -> tuple[Path, float]:
    """Join ``(chunk file, pause after in ms)`` into ``out`` (FLAC, or WAV by its suffix), mono at
    ``rate``, with ``lead_in_ms`` of silence first; returns the file and its measured seconds."""
    silence = bytes(2 * round(rate * lead_in_ms / 1000))
    pcm = [silence]
    for path, pause_ms in segments:
        pcm.append(_ffmpeg(["-i", str(path), "-ac", "1", "-ar", str(rate), "-f", "s16le", "-"]))
        pcm.append(bytes(2 * round(rate * pause_ms / 1000)))
    out.parent.mkdir(parents=True, exist_ok=True)
    _ffmpeg(["-f", "s16le", "-ar", str(rate), "-ac", "1", "-i", "-", str(out)], stdin=b"".join(pcm))
    return out, probe_duration_ms(out) / 1000


def m4b_book(
    chapters: Sequence[tuple[str, Path]],
    out: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None = None,
    rate: int = 24000,
) -> Path:
    """The m4b of ``(title, audio file)`` chapters: each encoded to AAC, joined by stream copy."""
    encoded = []
    for number, (title, audio) in enumerate(chapters, start=1):
        adts = out.parent / f".{out.stem}.{number:03d}.aac"
        _ffmpeg(
            [
                "-i",
                str(audio),
                "-ac",
                "1",
                "-ar",
                str(rate),
                "-c:a",
                "aac",
                "-b:a",
                "64k",
                "-f",
                "adts",
                str(adts),
            ]
        )
        encoded.append(EncodedChapter(number, title, adts, count_adts_frames(adts), rate))
    try:
        return join_m4b(encoded, out, tags=tags, cover=cover)
    finally:
        for chapter in encoded:
            chapter.adts.unlink(missing_ok=True)


def chapter_audio(index: int, title: str, path: Path) -> ChapterAudio:
    """A chapter file as the MP3 export takes it, measured with ffprobe."""
    return ChapterAudio(index=index, title=title, path=path, duration_ms=probe_duration_ms(path))
