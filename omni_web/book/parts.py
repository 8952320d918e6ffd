"""What every non-EPUB reader hands over: titled parts of text blocks, turned into the same Book.

A reader (PDF, TXT, Markdown, HTML, FB2, DOCX, ODT) finds where chapters start and what they are
called, and yields :class:`Part` records; :func:`book_from_parts` makes them sections and runs the
EPUB reader's own chapter rules on them (:func:`omni_web.book.chapters.build_chapters`: titles,
front/back matter, Project Gutenberg licence, default selection), so nothing after the reader
knows the format. Each chapter's ``source_href`` names the page it gets in the EPUB that
:mod:`omni_web.book.epubout` writes from the Book (the read-along book).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.book.chapters import build_chapters
from omni_web.book.extract import Segment, extract_document
from omni_web.book.gutenberg import END_RE, START_RE, is_producer_line
from omni_web.book.headings import heading_keyword
from omni_web.book.language import detect_language
from omni_web.book.model import BlockKind, Book, BookMetadata, CoverImage, TextBlock
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.text import count_words, text_key
from omni_web.book.toc import Section
from omni_web.errors import EmptyBook

__all__ = ["Part", "book_from_parts", "page_name", "parts_from_markup"]


@dataclass(frozen=True, slots=True)
class Part:
    """One future chapter: its title ("" when the reader found none) and its blocks.

    ``types`` are the epub:type-like tokens the matter rules understand ("toc", "titlepage",
    "footnotes"), for parts a reader recognised as such.
    """

    title: str
    blocks: tuple[TextBlock, ...]
    types: frozenset[str] = frozenset()


def page_name(number: int) -> str:
    """The read-along EPUB page of chapter ``number`` (1-based), relative to its package document."""
    return f"chapter-{number:03d}.xhtml"


def heading(text: str) -> TextBlock:
    """A heading block."""
    return TextBlock(kind=BlockKind.HEADING, text=" ".join(text.split()))


def paragraph(text: str) -> TextBlock:
    """A paragraph block."""
    return TextBlock(kind=BlockKind.PARAGRAPH, text=" ".join(text.split()))


def book_from_parts(
    parts: Iterable[Part],
    *,
    path: Path,
    metadata: BookMetadata,
    cover: CoverImage | None,
    source_format: str,
    empty_hint: str = "",
) -> Book:
    """The Book of a non-EPUB file: parts with text become chapters, numbered in order.

    Raises:
        EmptyBook: no part has anything to read aloud.
    """
    kept = _mark_front([part for part in _without_gutenberg(list(parts)) if part.blocks or part.title])
    kept = _inner_sections_joined(_continued_titles(kept))
    if not metadata.language:
        sample = " ".join(block.text for part in kept for block in part.blocks[:50])
        metadata = dataclasses.replace(metadata, language=detect_language(sample))
    if len(kept) == 1 and not kept[0].title and not any(b.is_heading for b in kept[0].blocks):
        # A book with no headings at all: one chapter, named after the book.
        kept = [Part(title=metadata.title, blocks=kept[0].blocks, types=kept[0].types)]
    sections = []
    for number, part in enumerate(kept, start=1):
        words = sum(count_words(block.text) for block in part.blocks)
        segment = Segment(
            anchor=None, blocks=part.blocks, image_count=0, link_words=0, types=part.types, word_count=words
        )
        sections.append(
            Section(toc_title=part.title, path=page_name(number), fragment="", segments=(segment,))
        )
    chapters = build_chapters(
        sections, book_title=metadata.title, language=metadata.language, authors=metadata.authors
    )
    if len(chapters) == 1 and chapters[0].word_count and not chapters[0].selected_by_default:
        # The whole book is one chapter named after the book: that is the text, not a title page.
        chapters = (dataclasses.replace(chapters[0], selected_by_default=True, matter_reason=""),)
    if not any(chapter.word_count for chapter in chapters):
        raise EmptyBook(
            f"'{path.name}' has no text to read aloud{': ' + empty_hint if empty_hint else ''}. Check that "
            "it "
            "is the right file."
        )
    return Book(
        metadata=metadata, cover=cover, chapters=chapters, source_path=path, source_format=source_format
    )


def _without_gutenberg(parts: list[Part]) -> list[Part]:
    """The parts without a Project Gutenberg header and licence kept as ordinary paragraphs (an e-text
    pasted into a word processor): the blocks up to the START line, producer credits right after it,
    and the blocks from the END line on are dropped."""
    spots = [(i, j) for i, part in enumerate(parts) for j in range(len(part.blocks))]
    texts = {spot: parts[spot[0]].blocks[spot[1]].text for spot in spots}
    start = next((spot for spot in spots if START_RE.search(texts[spot])), None)
    end = next(
        (spot for spot in spots if END_RE.search(texts[spot]) and (start is None or spot > start)), None
    )
    if start is None and end is None:
        return parts
    first, last = (-1, -1) if start is None else start, (len(parts), 0) if end is None else end
    inside = [spot for spot in spots if first < spot < last]
    credits = {spot for spot in inside[:5] if is_producer_line(texts[spot])}
    kept = []
    for i, part in enumerate(parts):
        blocks = tuple(b for j, b in enumerate(part.blocks) if (i, j) in set(inside) - credits)
        if blocks:
            kept.append(dataclasses.replace(part, blocks=blocks))
    return kept


# A title cut after a comma, with a word or two under it ("DE GETERGDE ZACHTMOEDIGHEID," / "OF,"),
# goes on in the next heading ("»'T SOP WAS DE KOOL NIET WAARD."): one chapter, as the contents has it.
_CONTINUED_TITLE_WORDS = 3


def _continued_titles(parts: list[Part]) -> list[Part]:
    joined: list[Part] = []
    for part in parts:
        before = joined[-1] if joined else None
        if before is not None and before.title.rstrip().endswith(",") and part.title:
            between = [b.text for b in before.blocks if not b.is_heading]
            if sum(count_words(text) for text in between) <= _CONTINUED_TITLE_WORDS:
                title = " ".join([before.title, *between, part.title])
                joined[-1] = Part(title=title, blocks=(*before.blocks, *part.blocks), types=part.types)
                continue
        joined.append(part)
    return joined


_END_KEYS = frozenset({"theend", "finis"})
_PLAY_KEYWORDS = frozenset({"act", "scene"})  # a play inside a novel (higher levels, "BOOK II", stay)
_MIN_CHAPTERS_FOR_LEVEL = 3


def _inner_sections_joined(parts: list[Part]) -> list[Part]:
    """Headings below the book's chapter level read inside their chapter: in a book of "CHAPTER"s, a
    play's "ACT II." or "SCENE I." between two chapters is part of the chapter it is in; so is a
    closing "THE END." page."""
    keywords = [heading_keyword(part.title) for part in parts]
    counted = Counter(k for k in keywords if k)
    level = counted.most_common(1)[0][0] if counted else ""
    if counted.get(level, 0) < _MIN_CHAPTERS_FOR_LEVEL:
        return parts
    joined: list[Part] = []
    inside = False  # a chapter of the book's level has started
    for part, keyword in zip(parts, keywords, strict=True):
        inner = (keyword in _PLAY_KEYWORDS and keyword != level) or text_key(part.title) in _END_KEYS
        if inside and inner and joined:
            before = joined[-1]
            joined[-1] = Part(title=before.title, blocks=(*before.blocks, *part.blocks), types=before.types)
            continue
        inside = inside or keyword == level
        joined.append(part)
    return joined


_FRONT_MAX_WORDS = 300
_FRONT_LINE_WORDS = 8
_PROSE_WORDS = 30
_SENTENCE_ENDS = (".", "!", "?", '"', "”")


def _mark_front(parts: list[Part]) -> list[Part]:
    """A short untitled part before titled chapters is the title page (not preselected)."""
    if len(parts) > 1 and not parts[0].title and not parts[0].types and any(p.title for p in parts[1:]):
        words = sum(count_words(b.text) for b in parts[0].blocks)
        has_heading = any(b.is_heading for b in parts[0].blocks)
        # Title pages, lists of the author's books and contents are short lines, not prose.
        short_lines = words < _FRONT_LINE_WORDS * len(parts[0].blocks)
        # A paragraph of prose is the text, not a title page (an article's lead before its sections).
        prose = any(
            not b.is_heading
            and count_words(b.text) >= _PROSE_WORDS
            and b.text.rstrip().endswith(_SENTENCE_ENDS)
            for b in parts[0].blocks
        )
        short = words < _FRONT_MAX_WORDS and not (has_heading and words > _FRONT_MAX_WORDS // 3)
        if short_lines or (short and not prose):
            return [
                Part(title="Title page", blocks=parts[0].blocks, types=frozenset({"titlepage"})),
                *parts[1:],
            ]
    return parts


def parts_from_markup(
    xml: bytes, split_ids: Sequence[str], options: ReadOptions = DEFAULT_OPTIONS
) -> list[Part]:
    """Parts of an (X)HTML document cut at the elements with ``split_ids`` (chapter headings).

    The EPUB reader's extractor does the reading, so notes, note references, page numbers, hidden
    and non-text elements are dropped exactly as in an EPUB. The text before the first split id
    is a part of its own (a title page, usually). Titles come from each part's first heading.
    """
    document = extract_document(xml, split_ids=split_ids, options=options)
    parts = []
    for segment in document.segments:
        if not segment.blocks:
            continue
        first = segment.blocks[0]
        title = first.text if segment.anchor is not None and first.is_heading else ""
        parts.append(Part(title=title, blocks=segment.blocks, types=segment.types))
    return parts
