"""The m4b: chapter files joined with pauses, encoded once to AAC, with chapter marks, tags, cover.

One ffmpeg run reads the chapters through the concat demuxer (a list file, so memory does not
grow with the book) plus an FFMETADATA file (tags and ``[CHAPTER]`` marks computed from the
chapters' measured, sample-exact durations) and the prepared cover. The result is written in a
scratch folder beside ``out_path`` and renamed when complete: a failure leaves neither a half file
under the final name nor any change to the chapter files.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble.cover import prepare_cover_or_none
from omni_web.assemble.ffmpeg import path_arg, probe, probe_duration_us, run_ffmpeg
from omni_web.assemble.metadata import build_ffmetadata, iso639_2, plan_chapter_marks
from omni_web.assemble.mp4tags import set_identifier_tags
from omni_web.assemble.records import AAC_SAMPLE_RATES_HZ, AudiobookTags, AudioFormat, ChapterAudio
from omni_web.assemble.workspace import (
    concat_list_text,
    conform_audio,
    publish,
    work_dir,
    write_silence_wav,
    write_text,
)
from omni_web.errors import DiskFullError, FfmpegError

__all__ = ["AAC_CODERS", "build_m4b"]

log = logging.getLogger(__name__)

# ffmpeg's native AAC coders. "fast" runs ~6x faster than the default "twoloop" on speech (about
# 230x against 40x realtime on one core here), so a 10-hour book encodes in minutes, not a
# quarter of an hour; at audiobook bitrates the difference is hard to hear on speech.
AAC_CODERS = ("fast", "twoloop")
_JOINABLE_CODECS = ("flac", "pcm_s16le")
_MIN_KBPS, _MAX_KBPS = 16, 320


def build_m4b(
    chapters: Sequence[ChapterAudio],
    out_path: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None,
    pause_between_chapters_ms: int,
    bitrate_kbps: int = 64,
    progress: Callable[[float], None] | None = None,
    aac_coder: str = "fast",
) -> Path:
    """Build the audiobook (AAC in MP4, ``.m4b``) from rendered chapter files.

    Args:
        chapters: in book order; each chapter's ``title`` becomes its mark (cleaned and cut to
            160 UTF-8 bytes). Their files are only read.
        out_path: the m4b; replaced atomically when the new one is complete.
        tags: book tags (see :class:`AudiobookTags` for how they map).
        cover: an image file (JPEG, PNG, WebP…), embedded as the attached picture after scaling
            to at most 1000 px. An unreadable cover is logged and left out, not fatal.
        pause_between_chapters_ms: silence after every chapter but the last (part of the
            chapter before it, so marks start with the chapter's first word).
        bitrate_kbps: AAC bitrate (16-320); 64 suits mono speech.
        progress: called with the done fraction 0..1; raising from it stops ffmpeg.
        aac_coder: ``"fast"`` (default) or ``"twoloop"`` (slower, marginally better).

    Returns:
        ``out_path``.

    Raises:
        ValueError: no chapters, or an option out of range (programming errors).
        FfmpegError: a chapter file is missing or unreadable (named), or ffmpeg failed.
        DiskFullError: not enough space in the output folder (checked first, and on write).
        OutputNotWritable: the output folder cannot be created or written.
    """
    out_path = Path(out_path)
    _check_options(chapters, pause_between_chapters_ms, bitrate_kbps, aac_coder)
    probed = [_probe_chapter(chapter) for chapter in chapters]
    # The richest format among the chapters, so no chapter loses bandwidth or channels.
    fmt = AudioFormat(
        sample_rate_hz=max(p.fmt.sample_rate_hz for p in probed),
        channels=max(p.fmt.channels for p in probed),
    )
    codec = probed[0].codec if probed[0].codec in _JOINABLE_CODECS else "flac"
    marks = plan_chapter_marks(
        [(c.index, c.title, p.duration_us) for c, p in zip(chapters, probed, strict=True)],
        pause_between_ms=pause_between_chapters_ms,
    )
    total_ms = marks[-1].end_ms
    _check_space(out_path.parent, total_ms, bitrate_kbps)
    with work_dir(out_path) as scratch:
        inputs = _joinable_inputs(chapters, probed, fmt, codec, scratch)
        entries = _with_pauses(inputs, pause_between_chapters_ms, fmt, codec, scratch)
        list_file = write_text(scratch / "concat.txt", concat_list_text(entries))
        meta_file = write_text(scratch / "metadata.txt", build_ffmetadata(tags, marks))
        cover_jpg = prepare_cover_or_none(cover, scratch / "cover.jpg", purpose="Building the audiobook")
        encoded = scratch / "book.m4b"
        args = _encode_args(list_file, meta_file, cover_jpg, encoded, tags, bitrate_kbps, aac_coder)
        report = (lambda f: progress(0.99 * f)) if progress is not None else None
        run_ffmpeg(
            args,
            action=f"Encoding {out_path.name}",
            output_dir=out_path.parent,
            total_ms=total_ms,
            progress=report,
        )
        set_identifier_tags(encoded, tags)
        publish(encoded, out_path)
    if progress is not None:
        progress(1.0)
    return out_path


def _check_options(chapters: Sequence[ChapterAudio], pause_ms: int, kbps: int, coder: str) -> None:
    if not chapters:
        raise ValueError("build_m4b needs at least one chapter.")
    if pause_ms < 0:
        raise ValueError(f"pause_between_chapters_ms must be >= 0, got {pause_ms}")
    if not _MIN_KBPS <= kbps <= _MAX_KBPS:
        raise ValueError(f"bitrate_kbps must be in {_MIN_KBPS}..{_MAX_KBPS}, got {kbps}")
    if coder not in AAC_CODERS:
        raise ValueError(f"aac_coder must be one of {AAC_CODERS}, got {coder!r}")


@dataclass(frozen=True, slots=True)
class _ChapterFile:
    """What the builder needs to know about one chapter file, measured from the file itself."""

    codec: str
    sample_rate_hz: int
    channels: int
    duration_us: int

    @property
    def fmt(self) -> AudioFormat:
        """The AAC-compatible format this file maps onto (rate rounded up, at most stereo)."""
        rate = next((r for r in AAC_SAMPLE_RATES_HZ if r >= self.sample_rate_hz), AAC_SAMPLE_RATES_HZ[-1])
        return AudioFormat(sample_rate_hz=rate, channels=min(max(self.channels, 1), 2))


def _probe_chapter(chapter: ChapterAudio) -> _ChapterFile:
    """Codec, format and exact duration of a chapter file, measured now (the file is the truth)."""
    if not Path(chapter.path).is_file():
        raise FfmpegError(
            f"Chapter {chapter.index} '{chapter.title}' has no audio file at {chapter.path}. "
            "Render the chapter again, then build the audiobook."
        )
    info = probe(chapter.path)
    audio = next((s for s in info.get("streams", []) if s.get("codec_type") == "audio"), None)
    if audio is None:
        raise FfmpegError(f"Chapter file {chapter.path} has no audio stream. Render the chapter again.")
    return _ChapterFile(
        codec=str(audio.get("codec_name", "")),
        sample_rate_hz=int(audio.get("sample_rate") or 0),
        channels=int(audio.get("channels") or 0),
        duration_us=probe_duration_us(chapter.path, info),
    )


def _joinable_inputs(
    chapters: Sequence[ChapterAudio], probed: list[_ChapterFile], fmt: AudioFormat, codec: str, scratch: Path
) -> list[Path]:
    """Chapter paths, with any chapter in another codec or format converted to the common one.

    The concat demuxer needs identical streams; a book rendered in one go never converts anything.
    """
    paths = [Path(c.path) for c in chapters]
    odd = [
        i for i, p in enumerate(probed)
        if (p.codec, p.sample_rate_hz, p.channels) != (codec, fmt.sample_rate_hz, fmt.channels)
    ]  # fmt: skip
    if odd:
        converted = conform_audio(
            [paths[i] for i in odd], scratch, fmt, codec=codec,
            action="Converting chapter files to one format", output_dir=scratch.parent,
        )  # fmt: skip
        for i, path in zip(odd, converted, strict=True):
            paths[i] = path
    return paths


def _with_pauses(
    inputs: list[Path], pause_ms: int, fmt: AudioFormat, codec: str, scratch: Path
) -> list[Path]:
    if pause_ms <= 0 or len(inputs) < 2:
        return inputs
    silence = write_silence_wav(scratch / "pause.wav", pause_ms, fmt)
    if codec != "pcm_s16le":
        (silence,) = conform_audio(
            [silence],
            scratch,
            fmt,
            codec=codec,
            action="Preparing the chapter pause",
            output_dir=scratch.parent,
        )
    entries = []
    for position, path in enumerate(inputs):
        entries.append(path)
        if position < len(inputs) - 1:
            entries.append(silence)
    return entries


def _encode_args(
    list_file: Path,
    meta_file: Path,
    cover_jpg: Path | None,
    encoded: Path,
    tags: AudiobookTags,
    kbps: int,
    coder: str,
) -> list[str]:
    args = [
        "-f",
        "concat",
        "-safe",
        "0",
        "-i",
        path_arg(list_file),
        "-f",
        "ffmetadata",
        "-i",
        path_arg(meta_file),
    ]
    if cover_jpg is not None:
        args += ["-i", path_arg(cover_jpg)]
    args += ["-map", "0:a:0", "-map_metadata", "1", "-map_chapters", "1"]
    args += ["-c:a", "aac", "-aac_coder", coder, "-b:a", f"{kbps}k"]
    language = iso639_2(tags.language) if tags.language else None
    if language:
        args += ["-metadata:s:a:0", f"language={language}"]
    if cover_jpg is not None:
        args += ["-map", "2:v:0", "-c:v", "copy", "-disposition:v:0", "attached_pic"]
    # The ipod muxer is ffmpeg's own choice for .m4b: MP4 with the "M4A " brand Apple players expect.
    args += ["-movflags", "+faststart", "-f", "ipod", path_arg(encoded)]
    return args


def _check_space(folder: Path, total_ms: int, kbps: int) -> None:
    """Refuse early when the m4b clearly cannot fit (estimate + 5 % + 1 MB for moov and cover)."""
    needed = int(kbps * 1000 / 8 * total_ms / 1000 * 1.05) + 1_000_000
    probe_dir = folder
    while not probe_dir.exists() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    try:
        free = shutil.disk_usage(probe_dir).free
    except OSError:
        return
    if free < needed:
        raise DiskFullError(
            f"Not enough space in {folder} for the audiobook: it needs about {needed // 1_000_000 + 1} MB "
            f"and {free // 1_000_000} MB are free. Free some space or choose another output folder; "
            "chapter files already rendered are kept."
        )
