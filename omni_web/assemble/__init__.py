"""Assembly: chunk audio files → chapter files → an m4b with chapters, tags and cover, or MP3s.

The only package that runs ffmpeg (in :mod:`omni_web.assemble.ffmpeg`). Inputs are files (the
WAVs the TTS server returned), so it does not depend on the book or render layers. Typical use::

    fmt = AudioFormat(entry.sample_rate_hz, entry.channels)      # once per book
    done = [render_chapter_audio(plan, chapter_dir / f"{plan.index:03d}.flac", fmt=fmt)
            for plan in plans]                                   # each playable when returned
    build_m4b(done, out / "Book.m4b", tags=tags, cover=cover_path, pause_between_chapters_ms=1500)
    export_mp3_chapters(done, library_root, tags=tags, cover=cover_path)
"""

from omni_web.assemble.book import AAC_CODERS, build_m4b
from omni_web.assemble.chapters import (
    CHAPTER_SUFFIXES,
    chapter_audio_from_file,
    choose_format,
    render_chapter_audio,
)
from omni_web.assemble.cover import COVER_MAX_PX, prepare_cover
from omni_web.assemble.ffmpeg import (
    ProbedStream,
    probe_chapters,
    probe_duration_ms,
    probe_streams,
    probe_tags,
)
from omni_web.assemble.filenames import safe_filename
from omni_web.assemble.metadata import (
    CHAPTER_TITLE_MAX_BYTES,
    ChapterMark,
    build_ffmetadata,
    escape_ffmetadata,
)
from omni_web.assemble.mp3 import book_folder, export_mp3_chapters, mp3_file_names
from omni_web.assemble.records import (
    AudiobookTags,
    AudioFormat,
    ChapterAudio,
    ChapterPlan,
    ProbedChapter,
    Segment,
)

__all__ = [
    "AAC_CODERS",
    "CHAPTER_SUFFIXES",
    "CHAPTER_TITLE_MAX_BYTES",
    "COVER_MAX_PX",
    "AudioFormat",
    "AudiobookTags",
    "ChapterAudio",
    "ChapterMark",
    "ChapterPlan",
    "ProbedChapter",
    "ProbedStream",
    "Segment",
    "book_folder",
    "build_ffmetadata",
    "build_m4b",
    "chapter_audio_from_file",
    "choose_format",
    "escape_ffmetadata",
    "export_mp3_chapters",
    "mp3_file_names",
    "prepare_cover",
    "probe_chapters",
    "probe_duration_ms",
    "probe_streams",
    "probe_tags",
    "render_chapter_audio",
    "safe_filename",
]
