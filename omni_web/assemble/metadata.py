"""Pure builders for the FFMETADATA file: escaping, chapter titles, chapter marks, tags.

Nothing here touches a file or a process, so every rule is unit-tested directly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.assemble.mp4tags import placeholder_tag
from omni_web.assemble.records import AudiobookTags

__all__ = [
    "CHAPTER_TITLE_MAX_BYTES",
    "ChapterMark",
    "build_ffmetadata",
    "clean_chapter_title",
    "escape_ffmetadata",
    "iso639_2",
    "mp4_tags",
    "plan_chapter_marks",
    "truncate_utf8",
]

# MP4's Nero chapter list stores a title in at most 255 bytes and ffmpeg cuts it there blindly,
# which can split a UTF-8 character (Arabic letters are 2 bytes). 160 leaves room and still
# holds ~80 Arabic or ~160 Latin characters; ebook2audiobook uses 140 bytes for the same reason.
CHAPTER_TITLE_MAX_BYTES = 160
_ELLIPSIS = "…"
_SPECIAL = frozenset("=;#\\\n")
_WHITESPACE = re.compile(r"\s+")

# ISO 639-1 → 639-2/B for the languages books are most often in; the MP4 audio track wants 3
# letters. Anything else that is already 3 letters passes through; unknown codes are dropped.
_ISO639_1_TO_2 = {
    "ar": "ara", "bg": "bul", "bn": "ben", "ca": "cat", "cs": "cze", "da": "dan", "de": "ger",
    "el": "gre", "en": "eng", "es": "spa", "et": "est", "fa": "per", "fi": "fin", "fr": "fre",
    "he": "heb", "hi": "hin", "hr": "hrv", "hu": "hun", "id": "ind", "it": "ita", "ja": "jpn",
    "ko": "kor", "lt": "lit", "lv": "lav", "ms": "may", "nl": "dut", "no": "nor", "nb": "nob",
    "pl": "pol", "pt": "por", "ro": "rum", "ru": "rus", "sk": "slo", "sl": "slv", "sr": "srp",
    "sv": "swe", "sw": "swa", "th": "tha", "tr": "tur", "uk": "ukr", "ur": "urd", "vi": "vie",
    "zh": "chi",
}


@dataclass(frozen=True, slots=True)
class ChapterMark:
    """One chapter as written into the m4b: a clean title and its span on the book's timeline."""

    title: str
    start_ms: int
    end_ms: int


def escape_ffmetadata(value: str) -> str:
    """Escape ``=``, ``;``, ``#``, ``\\`` and newlines with a backslash, as FFMETADATA requires.

    Carriage returns and NUL characters are dropped (the reader would keep or choke on them).
    """
    out = []
    for char in value.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""):
        if char in _SPECIAL:
            out.append("\\")
        out.append(char)
    return "".join(out)


def truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, at a character (and if possible word) edge.

    A cut text ends with "…" (counted in the budget). The word edge is used when it keeps at least
    two thirds of the budget, so one long word does not shrink a title to nothing.
    """
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    budget = max_bytes - len(_ELLIPSIS.encode("utf-8"))
    if budget <= 0:
        return text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
    cut = text.encode("utf-8")[:budget].decode("utf-8", "ignore")
    space = cut.rfind(" ")
    if space >= 0 and len(cut[:space].encode("utf-8")) >= budget * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + _ELLIPSIS


def clean_chapter_title(title: str, *, index: int, max_bytes: int = CHAPTER_TITLE_MAX_BYTES) -> str:
    """A title fit for a chapter mark: NFC, one line, collapsed spaces, length-limited.

    An empty title becomes ``"Chapter <index>"`` so a player never shows a blank entry.
    """
    text = unicodedata.normalize("NFC", title).replace("\x00", "")
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    text = _WHITESPACE.sub(" ", text).strip()
    if not text:
        text = f"Chapter {index}"
    return truncate_utf8(text, max_bytes)


def plan_chapter_marks(
    chapters: Sequence[tuple[int, str, int]],
    *,
    pause_between_ms: int,
) -> tuple[ChapterMark, ...]:
    """Lay chapters end to end on the book's timeline.

    Args:
        chapters: ``(index, title, duration_us)`` per chapter, in book order; durations in
            microseconds so rounding never accumulates over many chapters.
        pause_between_ms: silence inserted after every chapter but the last. It belongs to the
            chapter before it, so a mark starts exactly where its chapter's speech starts.

    Returns:
        Contiguous marks: each ``end_ms`` is the next ``start_ms``; the last ends with the audio.
    """
    if pause_between_ms < 0:
        raise ValueError(f"pause_between_ms must be >= 0, got {pause_between_ms}")
    marks = []
    cursor_us = 0
    for position, (index, title, duration_us) in enumerate(chapters):
        start_us = cursor_us
        cursor_us += duration_us
        if position < len(chapters) - 1:
            cursor_us += pause_between_ms * 1000
        marks.append(
            ChapterMark(
                title=clean_chapter_title(title, index=index),
                start_ms=round(start_us / 1000),
                end_ms=round(cursor_us / 1000),
            )
        )
    return tuple(marks)


def iso639_2(language: str) -> str | None:
    """The 3-letter code for a language tag such as ``"ar"``, ``"en-US"`` or ``"eng"``, else None."""
    primary = language.strip().lower().replace("_", "-").split("-")[0]
    if len(primary) == 3 and primary.isalpha():
        return primary
    return _ISO639_1_TO_2.get(primary)


def mp4_tags(tags: AudiobookTags) -> list[tuple[str, str]]:
    """The container tags, as ffmpeg names them, that the MP4 muxer writes as iTunes atoms.

    title/album (©nam/©alb), artist/album_artist (©ART/aART), composer (©wrt, the narrator:
    Audiobookshelf reads it so), genre, date (©day), comment, description (desc) and synopsis
    (ldes, Apple Books' long description); the series as show (tvsh), its number as episode_id
    (tven) and both as grouping (©grp, "Series #2"). Empty values are left out.

    ffmpeg's MP4 muxer writes only iTunes atoms it knows (a ``series`` key would need
    ``-movflags use_metadata_tags``, which drops the iTunes atoms players read); Audiobookshelf
    reads the series from ``show`` and its number from ``episode_id`` as well
    (audiobookshelf ``server/utils/prober.js``).
    """
    title = tags.title.strip()
    description = tags.description.strip()
    pairs = [
        ("title", title),
        ("album", title),
        ("artist", tags.author.strip()),
        ("album_artist", tags.author.strip()),
        ("composer", tags.narrator.strip()),
        ("genre", tags.genre.strip()),
        ("date", str(tags.year) if tags.year else ""),
        ("comment", tags.comment.strip()),
        ("description", description),
        ("synopsis", description),
        ("show", tags.series.strip()),
        ("episode_id", tags.series_part.strip() if tags.series.strip() else ""),
        ("grouping", _grouping(tags)),
    ]
    return [(key, value) for key, value in pairs if value]


def _grouping(tags: AudiobookTags) -> str:
    """``"Series #2"`` (or just ``"Series"``), the form Audiobookshelf parses from grouping."""
    series = tags.series.strip()
    if not series:
        return ""
    return f"{series} #{tags.series_part.strip()}" if tags.series_part.strip() else series


def build_ffmetadata(tags: AudiobookTags, marks: Sequence[ChapterMark]) -> str:
    """The FFMETADATA1 text: global tags, then one ``[CHAPTER]`` (TIMEBASE=1/1000) per mark.

    A book with an ISBN or ASIN also gets the placeholder that
    :func:`omni_web.assemble.mp4tags.set_identifier_tags` swaps for them after the join.
    """
    lines = [";FFMETADATA1"]
    reserved = placeholder_tag(tags)
    pairs = mp4_tags(tags) + ([reserved] if reserved else [])
    lines += [f"{key}={escape_ffmetadata(value)}" for key, value in pairs]
    for mark in marks:
        lines += [
            "",
            "[CHAPTER]",
            "TIMEBASE=1/1000",
            f"START={mark.start_ms}",
            f"END={mark.end_ms}",
            f"title={escape_ffmetadata(mark.title)}",
        ]
    return "\n".join(lines) + "\n"
