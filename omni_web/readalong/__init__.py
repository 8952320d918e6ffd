"""Read-along: the book and its audio in sync.

Sentence (and word) times in each chapter's final audio file, from the chunk boundaries assembly
knows exactly plus faster-whisper word timestamps aligned to the known text (or the characters'
share, marked as estimated); and what they make: WebVTT/SRT subtitles per chapter and
``<Title>.readalong.epub``, the original book with EPUB 3 Media Overlays. Typical use::

    session = ReadalongPass(recogniser=rec, cache_dir=cache)
    session.chapter_ready(ChapterSource(...))       # for each chapter file, as it lands
    outputs = session.finish(book_path=..., ...)    # subtitles and the EPUB
"""

from omni_web.readalong.asr import WhisperWords, WordCache, WordRecogniser, load_word_recogniser
from omni_web.readalong.chapter import (
    ChapterSource,
    ChunkSource,
    build_chapter_timings,
    load_timings,
    timings_path,
)
from omni_web.readalong.epub import ACTIVE_CLASS, OverlayChapter, ReadalongEpub, write_readalong_epub
from omni_web.readalong.records import ChapterTimings, ChunkSpan, SentenceTiming, WordTiming
from omni_web.readalong.session import ReadalongOutputs, ReadalongPass, choose_recogniser, write_subtitles
from omni_web.readalong.subtitles import format_srt, format_vtt, subtitle_cues
from omni_web.readalong.timing import AsrWord, chapter_timings, chunk_sentences

__all__ = [
    "ACTIVE_CLASS",
    "AsrWord",
    "ChapterSource",
    "ChapterTimings",
    "ChunkSource",
    "ChunkSpan",
    "OverlayChapter",
    "ReadalongEpub",
    "ReadalongOutputs",
    "ReadalongPass",
    "SentenceTiming",
    "WhisperWords",
    "WordCache",
    "WordRecogniser",
    "WordTiming",
    "build_chapter_timings",
    "chapter_timings",
    "choose_recogniser",
    "chunk_sentences",
    "format_srt",
    "format_vtt",
    "load_timings",
    "load_word_recogniser",
    "subtitle_cues",
    "timings_path",
    "write_readalong_epub",
    "write_subtitles",
]
