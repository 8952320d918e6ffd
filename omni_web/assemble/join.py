"""The m4b joined from chapters already encoded to AAC: stream copy, no re-encode.

Each chapter's AAC sits in an ADTS file (no container, no edit list), so the ``concat:`` protocol
reads the chapters as one continuous stream whose timestamps are simply frame counts; the MP4
muxer wraps it with the FFMETADATA tags and chapter marks and the cover. Each chapter's frames
include the encoder's 1024 priming samples; a mark starts at its chapter's first frame, so its
chapter's own audio begins one priming (21-43 ms) after the mark, for every chapter alike. Nothing is
decoded: a 20-hour book joins in seconds and in flat memory.

With more than one input (audio, metadata, cover), ffmpeg 5.x reads each input in its own thread
and hands every packet over through a locked queue: for the 1.7 million AAC frames of a 20-hour
book that hand-over cost three times the copy itself (6.6 s of CPU, mostly futex calls, against
2.3 s). ``-thread_queue_size 0`` turns the input threads off there (:func:`input_thread_args`).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble.cover import prepare_cover_or_none
from omni_web.assemble.ffmpeg import path_arg, run_ffmpeg
from omni_web.assemble.metadata import ChapterMark, build_ffmetadata, clean_chapter_title, iso639_2
from omni_web.assemble.mp4tags import set_identifier_tags
from omni_web.assemble.records import AudiobookTags
from omni_web.assemble.workspace import check_free_space, publish, work_dir, write_text
from omni_web.errors import FfmpegError
from omni_web.systools import find_tool

__all__ = ["AAC_FRAME_SAMPLES", "EncodedChapter", "input_thread_args", "join_args", "join_m4b", "join_marks"]

AAC_FRAME_SAMPLES = 1024
# Room for the index (moov), the cover and the tags on top of the chapters' own frames.
M4B_OVERHEAD_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class EncodedChapter:
    """A chapter's final AAC as an ADTS file, with its frame count (priming included)."""

    index: int
    title: str
    adts: Path
    aac_frames: int
    sample_rate_hz: int


def join_marks(chapters: Sequence[EncodedChapter]) -> tuple[ChapterMark, ...]:
    """Each chapter's span on the joined book's timeline, from the frame counts (exact).

    A mark starts at its chapter's first frame: the encoder's priming (1024 samples of near
    silence, 21-43 ms) and then the chapter's own first sample, so every mark is as long as its
    chapter file plus the priming, and no error accumulates over a long book.
    """
    rate = chapters[0].sample_rate_hz
    marks: list[ChapterMark] = []
    cursor = 0
    for chapter in chapters:
        start = cursor
        cursor += chapter.aac_frames * AAC_FRAME_SAMPLES
        marks.append(
            ChapterMark(
                title=clean_chapter_title(chapter.title, index=chapter.index),
                start_ms=round(start * 1000 / rate),
                end_ms=round(cursor * 1000 / rate),
            )
        )
    return tuple(marks)


def join_m4b(
    chapters: Sequence[EncodedChapter],
    out_path: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None,
) -> Path:
    """Write the m4b from encoded chapters by stream copy; replaced atomically when complete.

    Raises:
        ValueError: no chapters, or chapters at different sample rates (programming errors).
        FfmpegError: a chapter file is missing (named), or ffmpeg failed.
        DiskFullError: not enough space in the output folder (checked first, and on write).
        OutputNotWritable: the output folder cannot be created or written.
    """
    if not chapters:
        raise ValueError("join_m4b needs at least one chapter.")
    if len({c.sample_rate_hz for c in chapters}) != 1:
        raise ValueError("Chapters joined by stream copy must share one sample rate.")
    missing = [c for c in chapters if not Path(c.adts).is_file()]
    if missing:
        first = missing[0]
        raise FfmpegError(
            f"Chapter {first.index} '{first.title}' has no encoded audio at {first.adts}. "
            "Render the book again to rebuild it."
        )
    out_path = Path(out_path)
    marks = join_marks(chapters)
    check_free_space(out_path.parent, sum(Path(c.adts).stat().st_size for c in chapters) + M4B_OVERHEAD_BYTES)
    with work_dir(out_path) as scratch:
        # Short relative names: the concat protocol splits on '|', which a user's folder may contain.
        names = []
        for number, chapter in enumerate(chapters):
            name = f"c{number:05d}.aac"
            os.symlink(os.path.abspath(chapter.adts), scratch / name)
            names.append(name)
        joined = scratch / "book.m4b"
        args = join_args(["-i", "concat:" + "|".join(names)], scratch, tags=tags, cover=cover, marks=marks)
        args += ["-movflags", "+faststart", "-f", "ipod", path_arg(joined)]
        run_ffmpeg(args, action=f"Joining {out_path.name}", output_dir=out_path.parent, cwd=scratch)
        set_identifier_tags(joined, tags)
        publish(joined, out_path)
    return out_path


def join_args(
    audio_input: Sequence[str],
    scratch: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None,
    marks: Sequence[ChapterMark],
) -> list[str]:
    """ffmpeg's inputs and mapping for an m4b by stream copy, up to the output's options: the
    audio (``audio_input``, its ``-i`` included), ``scratch``/metadata.txt with ``marks`` and the
    tags, the cover (made ready in ``scratch``; a broken one only costs the cover). Run in
    ``scratch``."""
    write_text(scratch / "metadata.txt", build_ffmetadata(tags, marks))
    cover_jpg = prepare_cover_or_none(cover, scratch / "cover.jpg", purpose="Building the audiobook")
    no_threads = input_thread_args()
    args = [*no_threads, *audio_input, *no_threads, "-f", "ffmetadata", "-i", "metadata.txt"]
    if cover_jpg is not None:
        args += [*no_threads, "-i", "cover.jpg"]
    args += ["-map", "0:a:0", "-c:a", "copy", "-map_metadata", "1", "-map_chapters", "1"]
    language = iso639_2(tags.language) if tags.language else None
    if language:
        args += ["-metadata:s:a:0", f"language={language}"]
    if cover_jpg is not None:
        args += ["-map", "2:v:0", "-c:v", "copy", "-disposition:v:0", "attached_pic"]
    return args


def input_thread_args() -> list[str]:
    """``-thread_queue_size 0`` (put before each ``-i``) where it turns ffmpeg's input threads off:
    ffmpeg 5.0 to 6.0. Older releases reject a zero queue and newer ones always read in threads."""
    try:
        done = subprocess.run(  # noqa: S603 - argv list
            [find_tool("ffmpeg"), "-hide_banner", "-version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    match = re.match(r"ffmpeg version n?(\d+)\.(\d+)", done.stdout)
    if match is None:
        return []
    version = (int(match.group(1)), int(match.group(2)))
    return ["-thread_queue_size", "0"] if (5, 0) <= version <= (6, 0) else []
