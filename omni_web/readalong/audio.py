"""The chapter audio an EPUB carries: AAC in MP4 (``.m4a``), the format EPUB 3 names as core media,
or (an option) Opus in Ogg, which EPUB 3.3 adds to the core media types: about half the size for
speech, but readers and validators of EPUB 3.2 (EPUBCheck 4) do not know it yet."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, probe_duration_us, run_ffmpeg

__all__ = ["CODECS", "AudioCodec", "encode_chapter_aac", "encode_chapter_opus"]


def encode_chapter_aac(source: Path, out_path: Path, *, bitrate_kbps: int = 64) -> float:
    """Encode a chapter file to AAC in ``out_path``; returns the encoded file's duration in seconds.

    The MP4 muxer writes an edit list that hides the encoder's priming samples, so times in the
    chapter file hold in the ``.m4a`` too.

    A chapter that is AAC in MP4 already (a mastered ``.m4a``) is copied as it is: no second
    lossy generation, and its times are those of the file shipped.

    Raises:
        FfmpegError, DiskFullError: the encode failed.
    """
    if Path(source).suffix.lower() in (".m4a", ".mp4"):
        codec = ["-c:a", "copy"]
    else:
        codec = ["-c:a", "aac", "-b:a", f"{bitrate_kbps}k"]
    run_ffmpeg(
        ["-i", path_arg(source), "-map", "0:a:0", "-map_metadata", "-1", *codec, "-movflags", "+faststart",
         "-f", "mp4", path_arg(out_path)],
        action=f"Encoding {Path(source).name} for the read-along EPUB",
        output_dir=Path(out_path).parent,
    )
    return probe_duration_us(out_path) / 1e6


def encode_chapter_opus(source: Path, out_path: Path, *, bitrate_kbps: int = 32) -> float:
    """Encode a chapter file to Opus in Ogg (speech-tuned, ``bitrate_kbps``); returns its duration in seconds.

    The Ogg muxer stores the encoder's pre-skip, so players drop the priming samples and times in
    the chapter file hold in the ``.opus`` too.

    Raises:
        FfmpegError, DiskFullError: the encode failed.
    """
    run_ffmpeg(
        ["-i", path_arg(source), "-map", "0:a:0", "-map_metadata", "-1", "-c:a", "libopus", "-b:a",
         f"{bitrate_kbps}k", "-application", "voip", "-f", "ogg", path_arg(out_path)],
        action=f"Encoding {Path(source).name} as Opus for the read-along EPUB",
        output_dir=Path(out_path).parent,
    )
    return probe_duration_us(out_path) / 1e6


@dataclass(frozen=True, slots=True)
class AudioCodec:
    """How chapter audio is stored in the EPUB: file extension, manifest media type, encoder."""

    name: str
    extension: str
    media_type: str
    encode: Callable[..., float]
    bitrate_kbps: int


CODECS = {
    "aac": AudioCodec("aac", ".m4a", "audio/mp4", encode_chapter_aac, 64),
    # EPUB 3.3's core media type for Opus in Ogg.
    "opus": AudioCodec("opus", ".opus", "audio/ogg; codecs=opus", encode_chapter_opus, 32),
}
