"""The records the assembly layer takes and returns; plain data, no I/O.

Inputs are files, not book objects (a chapter is its audio file with its index and title), so
this layer stays decoupled from ``book`` and ``render``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "AAC_SAMPLE_RATES_HZ",
    "AudioFormat",
    "AudiobookTags",
    "ChapterAudio",
    "ProbedChapter",
    "format_duration_ms",
]

# Sample rates AAC-LC (and so the m4b) can carry; the output format is always one of these.
AAC_SAMPLE_RATES_HZ: tuple[int, ...] = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)


@dataclass(frozen=True, slots=True)
class AudioFormat:
    """The one PCM format every chunk of a book is converted to before it is joined.

    All chapters of a book share it, so they join without a glitch and the m4b encoder sees one
    stream. Pick it once per book, before the first chapter renders: the model's native rate and
    channel count (``AudioFormat(entry.sample_rate_hz, entry.channels)``). The default, 24 kHz mono, is the
    native output of most catalog models (Qwen3-TTS, Higgs, MOSS, Voxtral).
    """

    sample_rate_hz: int = 24000
    channels: int = 1

    def __post_init__(self) -> None:
        if self.sample_rate_hz not in AAC_SAMPLE_RATES_HZ:
            raise ValueError(
                f"sample_rate_hz {self.sample_rate_hz} is not an AAC rate; use one of {AAC_SAMPLE_RATES_HZ}"
            )
        if self.channels not in (1, 2):
            raise ValueError(f"channels must be 1 or 2, got {self.channels}")

    @property
    def bytes_per_second(self) -> int:
        """Size of one second of 16-bit PCM in this format."""
        return self.sample_rate_hz * self.channels * 2

    @property
    def label(self) -> str:
        """E.g. ``"24 kHz mono"``."""
        khz = f"{self.sample_rate_hz / 1000:g}"
        return f"{khz} kHz {'mono' if self.channels == 1 else 'stereo'}"


@dataclass(frozen=True, slots=True)
class AudiobookTags:
    """Book-level tags written into the m4b and the MP3 files.

    How they map (Audiobookshelf and Apple Books read these): ``title`` → title and album;
    ``author`` → artist and album_artist; ``narrator`` → composer; ``year`` → date;
    ``description`` → description and synopsis (m4b), comment (MP3, when ``comment`` is empty);
    ``publisher`` → MP3 only (the MP4 muxer drops non-iTunes keys); ``language`` → the audio
    stream's language (ISO 639, 2 or 3 letters, e.g. ``"ar"``, ``"en-US"``, ``"eng"``).
    """

    title: str
    author: str = ""
    narrator: str = ""
    year: int | None = None
    genre: str = "Audiobook"
    description: str = ""
    language: str = ""
    publisher: str = ""
    comment: str = ""
    # Library fields (Audiobookshelf reads them from the m4b): series name and position ("2",
    # "2.5"), subtitle, ISBN and ASIN. Written by omni_web.assemble.metadata.mp4_tags, ISBN and ASIN
    # by omni_web.assemble.mp4tags.set_identifier_tags after the join.
    series: str = ""
    series_part: str = ""
    subtitle: str = ""
    isbn: str = ""
    asin: str = ""


@dataclass(frozen=True, slots=True)
class ChapterAudio:
    """A rendered chapter file; ``duration_ms`` is measured with ffprobe, not estimated."""

    index: int
    title: str
    path: Path
    duration_ms: int

    @property
    def duration_str(self) -> str:
        """E.g. ``"1:02:03"`` or ``"4:05"``."""
        return format_duration_ms(self.duration_ms)


@dataclass(frozen=True, slots=True)
class ProbedChapter:
    """A chapter mark read back from a file with ffprobe."""

    title: str
    start_ms: int
    end_ms: int

    @property
    def duration_ms(self) -> int:
        """Length of the chapter in milliseconds."""
        return self.end_ms - self.start_ms


def format_duration_ms(duration_ms: int) -> str:
    """Render milliseconds as ``H:MM:SS`` (or ``M:SS`` under an hour)."""
    total_s = max(0, round(duration_ms / 1000))
    hours, rest = divmod(total_s, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
