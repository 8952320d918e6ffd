"""Plain text (.txt) to a Book: encoding detected, Gutenberg boilerplate cut, chapters from heading lines.

Paragraphs are separated by blank lines; a paragraph whose first line reads as a chapter heading
("CHAPTER I.", "Chapter 12", "Part One", :mod:`omni_web.book.headings`) starts a chapter, and a
short line right under it is the chapter's subtitle ("CHAPTER I." + "Down the Rabbit-Hole"). A
paragraph of several heading lines is a table of contents, kept apart and not preselected.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from pathlib import Path

from omni_web.book.gutenberg import strip_gutenberg
from omni_web.book.headings import (
    is_bare_chapter_label,
    is_bare_keyword,
    is_chapter_heading,
    is_named_section,
    is_part_heading,
    looks_like_title_line,
)
from omni_web.book.model import Book, BookMetadata
from omni_web.book.numbered import is_bare_number, numbered_headings, titled_under_numbers
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import Part, book_from_parts, heading, paragraph
from omni_web.book.plaincontents import gather_contents, is_contents_list
from omni_web.book.plainmarks import is_unspoken_paragraph, strip_bracket_notes, strip_plain_marks
from omni_web.book.plainnotes import notes_in_place
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, read_limited
from omni_web.book.spacing import CHAPTER_WORDS, Paragraph, paragraphs_of, spaced_headings
from omni_web.book.text import text_key
from omni_web.languages import LANGUAGE_NAMES

__all__ = ["decode_text", "language_code", "load_txt", "parts_from_text"]

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_LATIN_PAGES = ("cp125", "iso8859", "latin", "mac", "cp850", "cp437", "windows125")
_SEPARATOR_RE = re.compile(r"^[\s*#~=_\-·•⁂]+$")  # "*   *   *": a scene break, nothing to say


def decode_text(data: bytes) -> str:
    """Text from bytes: a BOM first, then strict UTF-8, then charset-normalizer's best guess."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # heavy-ish import, only for non-UTF-8 files

    best = from_bytes(data).best()
    # Short Western texts look alike in every Latin code page (cp1250 reads "naïve" as "naďve");
    # cp1252 is by far the most common of them for books, so it wins when it decodes cleanly.
    if best is None or best.encoding.replace("_", "").startswith(_LATIN_PAGES):
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    if best is not None and _paired_curly_quotes(data):
        # Crime and Punishment's Gutenberg text: cp1252's quotes (0x93, 0x94) in pairs, read by
        # charset-normalizer as cp852's "ô" and "ö", and every line of talk lost its quote marks.
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    return str(best) if best is not None else data.decode("latin-1")


def _paired_curly_quotes(data: bytes) -> bool:
    """Whether ``data`` has Windows-1252's opening and closing double quotes in pairs, as a text
    written in it has; another code page's letters at those bytes do not pair up so."""
    opening, closing = data.count(b"\x93"), data.count(b"\x94")
    return min(opening, closing) >= 10 and abs(opening - closing) <= 0.1 * max(opening, closing)


def language_code(name: str) -> str:
    """"English" → "en"; codes pass through; "" stays ""."""
    value = name.strip()
    return LANGUAGE_NAMES.get(value.lower(), value if len(value) <= 8 else "")


def load_txt(path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS,
             options: ReadOptions = DEFAULT_OPTIONS) -> Book:
    """Read a plain-text book.

    Raises:
        UnsafeBook: the file is over the size limit.
        EmptyBook: it has no text.
    """
    data = read_limited(path, name=path.name, limit=limits.max_text_file_bytes)
    text = decode_text(data).replace("\r\n", "\n").replace("\r", "\n")
    stripped = strip_gutenberg(text)
    body = stripped.body
    parts = parts_from_text(body, footnotes=options.footnotes)
    title = stripped.title or _first_line_title(parts) or path.stem
    metadata = BookMetadata(
        title=title,
        authors=tuple(a.strip() for a in re.split(r"\s+and\s+|;", stripped.author) if a.strip()),
        language=language_code(stripped.language),
        date=stripped.date,
        identifier=stripped.identifier,
    )
    book = book_from_parts(parts, path=path, metadata=metadata, cover=None, source_format="txt")
    return _front_titled(book, parts, stripped.title)


def _front_titled(book: Book, parts: list[Part], book_title: str) -> Book:
    """The short untitled part read before the first chapter (a title page with a dedication or an
    epigraph) under the book's title, not "Chapter 1" before Treasure Island's "1. The Old
    Sea-dog…". A part the matter rules set aside keeps their name ("Title page")."""
    first = book.chapters[0] if book.chapters else None
    if (
        first is None
        or not book_title
        or first.matter_reason
        or parts[0].title
        or first.blocks != parts[0].blocks
        or first.word_count >= CHAPTER_WORDS
    ):
        return book
    chapters = (dataclasses.replace(first, title=book_title), *book.chapters[1:])
    return dataclasses.replace(book, chapters=chapters)


def _first_line_title(parts: list[Part]) -> str:
    first = parts[0] if parts and not parts[0].title else None
    if first is None or not first.blocks:
        return ""
    line = first.blocks[0].text
    return line if len(line.split()) <= 10 and not line.endswith((".", ",", ";", "!", "?", ":")) else ""


def parts_from_text(body: str, *, footnotes: str = DEFAULT_OPTIONS.footnotes) -> list[Part]:
    """Chapters of a text: heading paragraphs start them; a contents list is a part of its own.

    Headings are lines that name a chapter ("CHAPTER I.", "Part One"); a book with fewer than two
    of them is cut where its own spacing sets a short line apart (:mod:`omni_web.book.spacing`).
    """
    paragraphs = [
        _number_joined(p)
        for p in notes_in_place(paragraphs_of(strip_bracket_notes(body)), footnotes)
        if not is_unspoken_paragraph(" ".join(p.lines))
    ]
    named = [p.lines[0] for p in paragraphs if len(p.lines) <= 3 and is_chapter_heading(p.lines[0])]
    # "Book the Second--the Golden Thread" over chapters headed "I. Five Years Later" alone: the
    # chapters are found by the book's spacing, the parts by their word.
    parts_only = bool(named) and all(is_part_heading(line) for line in named)
    numbered = numbered_headings(paragraphs)
    subtitled = titled_under_numbers(paragraphs, numbered)
    spaced = spaced_headings(paragraphs) if (len(named) < 2 or parts_only) and not numbered else frozenset()
    parts: list[Part] = []
    title, blocks, pending_subtitle = "", [], False
    for index, paragraph_ in enumerate(paragraphs):
        lines = [strip_plain_marks(line) for line in paragraph_.lines]
        lines = [line for line in lines if line]
        if not lines:
            continue
        if not spaced and len(lines) >= 2 and sum(is_chapter_heading(line) for line in lines) >= 2:
            if title or blocks:
                parts.append(Part(title=title, blocks=tuple(blocks)))
            parts.append(
                Part(
                    title="Contents", blocks=tuple(heading(line) for line in lines), types=frozenset({"toc"})
                )
            )
            title, blocks, pending_subtitle = "", [], False
            continue
        if not spaced and is_contents_list(paragraph_.lines):
            gather_contents(parts, title, blocks, lines)
            title, blocks, pending_subtitle = "", [], False
            continue
        if title.endswith(",") and len(blocks) == 1 and len(lines) == 1 and lines[0].isupper():
            # A title in capitals cut after a comma goes on ("…ZACHTMOEDIGHEID," / "OF," / "»'T SOP…").
            title = f"{title} {lines[0]}"
            blocks = [heading(title)]
            continue
        if pending_subtitle and len(lines) == 1 and is_named_section(lines[0]):
            # "CHAPITRE XXX." over "Conclusion.": the chapter's title, not a section of its own.
            title = _join_title([title, lines[0]])
            blocks = [heading(title)]
            pending_subtitle = False
            continue
        if index in spaced or index in numbered or ((not spaced or parts_only) and _is_heading(lines)):
            if title or blocks:
                parts.append(Part(title=title, blocks=tuple(blocks)))
            title = _join_title(lines)
            blocks = [heading(title)]
            pending_subtitle = len(lines) == 1 and not spaced and (index not in numbered or subtitled)
            continue
        if (
            pending_subtitle
            and len(lines) == 1
            and looks_like_title_line(lines[0])
            and not _ends_sentence(lines[0])
        ):
            title = _join_title([title, lines[0]])
            blocks = [heading(title)]
            pending_subtitle = False
            continue
        pending_subtitle = False
        text = " ".join(lines)
        if _SEPARATOR_RE.match(text):
            continue
        blocks.append(paragraph(text))
    if title or blocks:
        parts.append(Part(title=title, blocks=tuple(blocks)))
    parts = _half_titles_joined(parts)
    return _front_joined(parts) if spaced else parts


# A part this short under the same title as the next is a half-title page, not a chapter.
HALF_TITLE_WORDS = 40
_CAPITALS_LINE_WORDS = 10
_MAX_TITLE_LINES = 6
_WRAPPED_LINE_CHARS = 50


def _half_titles_joined(parts: list[Part]) -> list[Part]:
    """A half-title page ("MOTS ET EXPRESSIONS. / DEUXIÈME ÉDITION." before the section of that name)
    joined to the section it announces: one chapter, its heading once, as the HTML edition has it."""
    joined: list[Part] = []
    for part in parts:
        before = joined[-1] if joined else None
        if (
            before is not None
            and before.title
            and (text_key(before.title) == text_key(part.title) or _bare_continued_title(before))
            and _words(before) < HALF_TITLE_WORDS
        ):
            page = tuple(block for block in before.blocks if not block.is_heading)
            blocks = (*part.blocks[:1], *page, *part.blocks[1:])
            part = Part(title=part.title, blocks=blocks, types=part.types)
            joined.pop()
        elif joined and (len(joined) > 1 or joined[0].title) and _leads_into(joined[-1], part):
            # "PART ONE--The Old Buccaneer" over chapter 1 opens it (a title page stays apart).
            part = Part(title=part.title, blocks=(*joined.pop().blocks, *part.blocks), types=part.types)
        joined.append(part)
    return joined


def _leads_into(before: Part, part: Part) -> bool:
    """A page of headings or short lines in capitals (a part's heading, a half-title) before a chapter."""
    return (
        bool(part.title)
        and not (before.types or part.types)
        and _words(before) < HALF_TITLE_WORDS
        and all(
            block.is_heading or (block.text.isupper() and len(block.text.split()) <= _CAPITALS_LINE_WORDS)
            for block in before.blocks
        )
    )


def _bare_continued_title(part: Part) -> bool:
    """A title page set as a title cut after a comma, with only lines in capitals under it ("LUCIE VOS," /
    "ENTRE NOUS, I." / "MOTS ET EXPRESSIONS." / "DEUXIÈME ÉDITION.")."""
    return "," in part.title and part.title.isupper() and all(block.text.isupper() for block in part.blocks)


def _is_heading(lines: list[str]) -> bool:
    if not is_chapter_heading(lines[0]):
        return False
    if len(lines) <= 3 and all(looks_like_title_line(x) for x in lines[1:]):
        return True
    # "CHAPTER X." over a long title in capitals wrapped over lines, as Oliver Twist's are.
    wrapped_capitals = len(lines) <= _MAX_TITLE_LINES and all(x.isupper() for x in lines[1:])
    return wrapped_capitals and is_bare_chapter_label(lines[0])


def _number_joined(paragraph: Paragraph) -> Paragraph:
    """ "CHAPTER" over "1" (The Sun Also Rises) as the one line "CHAPTER 1"."""
    lines = paragraph.lines
    if len(lines) >= 2 and is_bare_keyword(lines[0]) and is_bare_number(lines[1]):
        return Paragraph(gap=paragraph.gap, lines=(f"{lines[0]} {lines[1]}", *lines[2:]))
    return paragraph


def _front_joined(parts: list[Part]) -> list[Part]:
    """Short parts before the first chapter-long one (title, dedication, copyright) as one untitled part."""
    first = next((i for i, part in enumerate(parts) if _words(part) >= CHAPTER_WORDS), 0)
    if first == 0:
        return parts
    front = tuple(block for part in parts[:first] for block in part.blocks)
    return [Part(title="", blocks=front), *parts[first:]]


def _words(part: Part) -> int:
    return sum(len(block.text.split()) for block in part.blocks if not block.is_heading)


def _ends_sentence(line: str) -> bool:
    return line.rstrip().endswith((".", "!", "?", "\u201d", '"')) and len(line.split()) > 6


def _join_title(lines: list[str]) -> str:
    text = " ".join(lines[0].split())
    for index, line in enumerate(lines[1:], start=1):
        line = " ".join(line.split())
        separator = " " if text[-1:] in ".:;!?" else ". " if is_bare_number(text) else ": "
        if index > 1 and len(lines[index - 1]) >= _WRAPPED_LINE_CHARS:
            separator = " "  # a long title wrapped onto the next line goes on there
        text = f"{text}{separator}{line}"
    return text
