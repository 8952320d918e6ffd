"""Assembly: chapter files → an m4b with chapters, tags and cover, or MP3s.

The only package that runs ffmpeg (in :mod:`omni_web.assemble.ffmpeg`). Inputs are files, so it
does not depend on the book or render layers. The app masters each chapter to AAC while the book
renders (:mod:`omni_web.master`) and joins those by stream copy: live, as they are mastered
(:class:`omni_web.assemble.live_join.LiveJoin`), or after the fact
(:func:`omni_web.assemble.join.join_m4b`); see :mod:`omni_web.pipeline.mastering`. Typical use::

    m4b = join_m4b(encoded_chapters, out / "Book.m4b", tags=tags, cover=cover_path)
    export_mp3_chapters(chapter_audios, library_root, tags=tags, cover=cover_path)
"""

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
    ProbedChapter,
)

__all__ = [
    "CHAPTER_TITLE_MAX_BYTES",
    "COVER_MAX_PX",
    "AudioFormat",
    "AudiobookTags",
    "ChapterAudio",
    "ChapterMark",
    "ProbedChapter",
    "ProbedStream",
    "book_folder",
    "build_ffmetadata",
    "escape_ffmetadata",
    "export_mp3_chapters",
    "mp3_file_names",
    "prepare_cover",
    "probe_chapters",
    "probe_duration_ms",
    "probe_streams",
    "probe_tags",
    "safe_filename",
]
