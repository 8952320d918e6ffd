"""Sections to chapters: titles, word counts, and which chapters are preselected."""

from __future__ import annotations

import re
from collections.abc import Sequence

from omni_web.book.headings import (
    is_bare_chapter_label,
    is_chapter_heading,
    is_named_section,
    looks_like_title_line,
)
from omni_web.book.matter import MatterSignals, classify_matter
from omni_web.book.model import Chapter, TextBlock
from omni_web.book.text import text_key
from omni_web.book.toc import Landmark, Section

__all__ = ["build_chapters"]

# TOC labels that say where to start, not what the chapter is called; the heading says that.
_GENERIC_TITLE_KEYS = frozenset(
    text_key(label)
    for label in (
        "Start",
        "Start reading",
        "Begin",
        "Begin reading",
        "Beginning",
        "Text",
        "Content",
        "Main text",
        "Commencer la lecture",
        "Début",
        "Début de la lecture",
        "Lecture",
        "Empezar a leer",
        "Comenzar a leer",
        "Inizia a leggere",
        "Lesen beginnen",
        "Anfang",
    )
)
# "Chapter" in the book's language, for chapters nothing names (the title is spoken in that language).
_CHAPTER_WORDS = {
    "fr": "Chapitre",
    "de": "Kapitel",
    "nl": "Hoofdstuk",
    "es": "Capítulo",
    "pt": "Capítulo",
    "it": "Capitolo",
    "ca": "Capítol",
    "sv": "Kapitel",
    "da": "Kapitel",
    "no": "Kapittel",
    "nb": "Kapittel",
    "pl": "Rozdział",
    "cs": "Kapitola",
    "ru": "Глава",
    "uk": "Розділ",
    "el": "Κεφάλαιο",
    "tr": "Bölüm",
    "fi": "Luku",
    "hu": "Fejezet",
    "ja": "第",
    "zh": "第",
    "ar": "الفصل",
    "he": "פרק",
}
_BODY_START_KINDS = frozenset({"bodymatter", "text", "start"})
_MAX_TITLE_CHARS = 150
_FRONT_MATTER_MAX_WORDS = 20  # heading-only pages before the body ("Edition 3.0", a half title)


def build_chapters(
    sections: Sequence[Section],
    *,
    book_title: str,
    landmarks: Sequence[Landmark] = (),
    language: str = "",
    authors: Sequence[str] = (),
) -> tuple[Chapter, ...]:
    """Turn sections into numbered chapters with real titles and default selection.

    A chapter is deselected when the matter classifier names a reason, and short heading-only
    pages before the body starts (per the bodymatter landmark, else the first real chapter with
    paragraphs) are deselected as "front matter".
    """
    kinds_at: dict[tuple[str, str], set[str]] = {}
    titles_at: dict[tuple[str, str], str] = {}
    for landmark in landmarks:
        kinds_at.setdefault((landmark.path, landmark.fragment), set()).update(landmark.kinds)
        titles_at.setdefault((landmark.path, landmark.fragment), landmark.title)
    drafts: list[tuple[Section, tuple[TextBlock, ...], int, str, str, frozenset[str]]] = []
    credits = _author_keys(book_title, authors)
    for index, section in enumerate(sections):
        blocks = tuple(block for segment in section.segments for block in segment.blocks)
        words = sum(segment.word_count for segment in section.segments)
        place = (section.path, section.fragment)
        landmark_kinds = frozenset(kinds_at.get(place, ()))
        title = _title(section, blocks, titles_at.get(place, ""), book_title, credits)
        signals = MatterSignals(
            title=title,
            blocks=blocks,
            word_count=words,
            image_count=sum(segment.image_count for segment in section.segments),
            link_words=sum(segment.link_words for segment in section.segments),
            types=_dominant_types(section) | (landmark_kinds - _BODY_START_KINDS),
            is_nav=section.is_nav,
            book_title=book_title,
        )
        reason = classify_matter(signals)
        if index == 0 and reason == "image-only page":
            reason = "cover"  # a picture before everything else is the cover
        if not title:  # nothing names it: say what it is, or number it
            title = reason[:1].upper() + reason[1:] if reason else f"{_chapter_word(language)} {index + 1}"
        drafts.append((section, blocks, words, title, reason, landmark_kinds))
    body_start = _body_start(drafts)
    end = _the_end(drafts)
    chapters = []
    for index, (section, blocks, words, title, reason, _) in enumerate(drafts):
        if not reason and index < body_start and _is_front_page(blocks, words):
            reason = "front matter"
        if not reason and end is not None and index > end and not is_named_section(title):
            reason = "after the end of the book"  # a publisher's catalogue, advertisements
        chapters.append(
            Chapter(
                index=index,
                title=title,
                blocks=blocks,
                word_count=words,
                selected_by_default=not reason and words > 0,
                matter_reason=reason,
                source_href=section.href,
            )
        )
    return tuple(chapters)


_IMPRINT_LINE_WORDS = 10
_END_KEYS = frozenset({"theend", "finis", "end"})
_END_MAX_WORDS = 10
_AFTER_END_SHARE = 0.2


def _the_end(
    drafts: list[tuple[Section, tuple[TextBlock, ...], int, str, str, frozenset[str]]],
) -> int | None:
    """Index of the chapter that ends the book: a last page that is only "THE END.", or a chapter
    closing on it."""
    ends = [
        index
        for index, (_, blocks, words, title, _, _) in enumerate(drafts)
        if (text_key(title) in _END_KEYS and words <= _END_MAX_WORDS)
        or (blocks and text_key(blocks[-1].text) in _END_KEYS)  # the last chapter closing on it
    ]
    if not ends:
        return None
    # What follows the end is a catalogue or advertisements only when it is a small part of the book
    # (a story that ends "THE END" inside a collection is followed by more stories).
    total = sum(draft[2] for draft in drafts)
    after = sum(draft[2] for draft in drafts[ends[-1] + 1 :])
    return ends[-1] if after <= _AFTER_END_SHARE * total else None


def _chapter_word(language: str) -> str:
    return _CHAPTER_WORDS.get(language.split("-")[0].lower(), "Chapter")


def _title(
    section: Section,
    blocks: tuple[TextBlock, ...],
    landmark_title: str,
    book_title: str,
    credits: frozenset[str],
) -> str:
    """TOC title; else the first heading; else landmark or document title; else ""."""
    toc_title = " ".join(section.toc_title.split())
    heading = _leading_heading(blocks, credits)
    if toc_title and text_key(toc_title) not in _GENERIC_TITLE_KEYS and not _is_credit(toc_title, credits):
        # The TOC's "CHAPTER I." is the page's "CHAPTER I." with its title after it.
        joined = text_key(heading).startswith(text_key(toc_title)) and len(heading) > len(toc_title)
        return _shorten(heading) if joined and is_bare_chapter_label(toc_title) else toc_title
    if heading:
        return _shorten(heading)
    for candidate in (toc_title, landmark_title):
        if candidate.strip():
            return _shorten(" ".join(candidate.split()))
    doc_title = " ".join(section.doc_title.split()).strip("\"'")
    if doc_title and text_key(doc_title) != text_key(book_title):
        return _shorten(doc_title)
    return ""


# A credit set as a heading on a title page: "WITH ILLUSTRATIONS BY JOHN LEECH", "Illustrated by …".
_CREDIT_RE = re.compile(
    r"(?i)^(?:with\s+)?(?:illustrations|illustrated|drawings|pictures|engravings)\b.*\bby\b"
)
_AUTHOR_IN_TITLE_RE = re.compile(r"(?i),?\s+by\s+(.+)$")  # "A Christmas Carol, by Charles Dickens"


def _leading_heading(blocks: tuple[TextBlock, ...], credits: frozenset[str]) -> str:
    """The first heading, passing over a title page's author and credit headings when a heading
    follows them before the text ("CHARLES DICKENS", "WITH ILLUSTRATIONS BY JOHN LEECH", "PREFACE")."""
    leading: list[str] = []
    for block in blocks:
        if not block.is_heading:
            break
        leading.append(block.text)
    kept = [text for text in leading if not _is_credit(text, credits)]
    if not kept:
        return next((block.text for block in blocks if block.is_heading), "")
    # "CHAPTER I." over "HER TWELFTH BIRTHDAY": the label and its title are one title.
    if len(kept) > 1 and is_bare_chapter_label(kept[0]) and not is_chapter_heading(kept[1]):
        if looks_like_title_line(kept[1]):
            return f"{kept[0]} {kept[1]}"
    return kept[0]


def _author_keys(book_title: str, authors: Sequence[str]) -> frozenset[str]:
    """The authors' names as keys, with the one a title gives after "by"."""
    named = _AUTHOR_IN_TITLE_RE.search(book_title)
    return frozenset(text_key(a) for a in (*authors, *([named.group(1)] if named else ())) if a.strip())


def _is_credit(text: str, credits: frozenset[str]) -> bool:
    """Whether a heading is an author's name or an illustrator's credit."""
    return bool(_CREDIT_RE.match(text.strip())) or text_key(text) in credits


def _shorten(title: str) -> str:
    if len(title) <= _MAX_TITLE_CHARS:
        return title
    return title[: _MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _dominant_types(section: Section) -> frozenset[str]:
    """Types of the segments that hold at least half the section's words (all, if it has none)."""
    total = sum(segment.word_count for segment in section.segments)
    types: set[str] = set()
    for segment in section.segments:
        if total == 0 or segment.word_count * 2 >= total:
            types |= segment.types
    return frozenset(types)


def _body_start(drafts: list[tuple[Section, tuple[TextBlock, ...], int, str, str, frozenset[str]]]) -> int:
    """Index of the first body chapter: the bodymatter landmark, else the first real chapter with prose."""
    for index, draft in enumerate(drafts):
        if draft[5] & _BODY_START_KINDS:
            return index
    for index, (_, blocks, words, _, reason, _) in enumerate(drafts):
        if not reason and not _is_front_page(blocks, words):
            return index
    return 0


def _is_front_page(blocks: tuple[TextBlock, ...], words: int) -> bool:
    """A short page of headings, or of short lines in capitals (a title page's imprint: "ARNHEM, D. A.
    THIEME."); a dedication has prose."""
    return words < _FRONT_MATTER_MAX_WORDS and all(
        block.is_heading or (block.text.isupper() and len(block.text.split()) <= _IMPRINT_LINE_WORDS)
        for block in blocks
    )
