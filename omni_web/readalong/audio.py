"""The chapter audio an EPUB carries: AAC in MP4 (``.m4a``), the format EPUB 3 names as core media."""

from __future__ import annotations

from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, probe_duration_us, run_ffmpeg

__all__ = ["encode_chapter_aac"]


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
