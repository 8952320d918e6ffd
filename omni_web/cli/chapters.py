"""``python -m omni_web chapters BOOK.epub [--all] [--text N]``: the book's chapters and what is preselected.

Prints the title, author and language, then one row per chapter: number, selection mark, title,
words, and why a chapter is not selected by default (front/back matter). ``--all`` shows the
table as it would be with every chapter selected. ``--text N`` prints chapter N's chunks exactly
as they are sent to the server (lexicon and normalisation applied). A bad book prints the reason
and exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from omni_web.book import Book, chapter_rows, load_book
from omni_web.book.summary import ChapterRow, TextSize
from omni_web.catalog import get_entry, keys
from omni_web.errors import SettingsError
from omni_web.paths import data_root_from_env
from omni_web.settings import load_settings
from omni_web.text import LexiconStore, book_identity, spoken_chunks, spoken_form

__all__ = ["format_table", "register"]

_TITLE_WIDTH = 56


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``chapters`` command."""
    parser = subparsers.add_parser(
        "chapters",
        help="list a book's chapters, word counts and the default selection",
        description="List a book's chapters with word counts; front and back matter is not "
        "preselected, and the reason is shown.",
    )
    parser.add_argument(
        "book",
        type=Path,
        metavar="BOOK",
        help="the book file (EPUB, PDF, DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown or TXT)",
    )
    parser.add_argument("--all", action="store_true", help="show every chapter as selected")
    parser.add_argument(
        "--text",
        type=int,
        metavar="N",
        help="print chapter N's chunks as they are sent (spoken form: lexicon and normalisation)",
    )
    parser.add_argument(
        "--footnotes",
        choices=("skip", "end-of-paragraph"),
        help="footnotes inside chapters: not read, or read after their paragraph (default: setting, skip)",
    )
    parser.add_argument(
        "--model",
        choices=keys(),
        default="qwen3_tts_0_6b_customvoice",
        metavar="MODEL",
        help="with --text: chunk and normalise as this model's jobs do",
    )
    parser.add_argument("--language", metavar="LANG", help="with --text: the language the job will use")
    parser.set_defaults(handler=_chapters)


def _chapters(args: argparse.Namespace) -> int:
    paths = data_root_from_env()
    settings = load_settings(paths)
    if args.footnotes:
        settings = dataclasses.replace(settings, footnotes=args.footnotes)
    book = load_book(args.book, options=settings.read_options(paths))
    if args.text is not None:
        return _print_spoken(book, args)
    selected = range(len(book.chapters)) if args.all else None
    rows = chapter_rows(book, selected)
    meta = book.metadata
    chosen = [row for row in rows if row.selected]
    size = TextSize(sum(row.size.words for row in chosen), sum(row.size.characters for row in chosen))
    print(f"Title:    {meta.title}")
    print(f"Author:   {meta.authors_str or '(unknown)'}")
    print(f"Language: {meta.language or '(unknown)'}")
    print(
        f"Chapters: {len(rows)}, {len(chosen)} selected "
        f"({size.size_str}, about {_hours(size.estimated_seconds)} of audio)"
    )
    print()
    print(format_table(rows))
    for warning in book.warnings:
        print(f"\nWarning: {warning}")
    return 0


def _print_spoken(book: Book, args: argparse.Namespace) -> int:
    if not 1 <= args.text <= len(book.chapters):
        raise SettingsError(f"The book has {len(book.chapters)} chapters; there is no chapter {args.text}.")
    paths = data_root_from_env()
    settings = load_settings(paths)
    entry = get_entry(args.model)
    pronouncer = LexiconStore(paths).pronouncer(book_identity(book))
    speech = spoken_form(book, entry=entry, settings=settings, language=args.language, pronouncer=pronouncer)
    chapter = book.chapters[args.text - 1]
    chunks = spoken_chunks(
        book, speech, entry=entry, chunk_words=settings.chunk_size_words, chapters=(chapter.index,)
    )
    rules = f"{speech.rules.name} rules" if speech.rules is not None else "no number rules"
    print(
        f"Chapter {chapter.number}: {chapter.title}  ({len(chunks)} chunks for {entry.label}; "
        f"{rules}; {len(pronouncer.entries)} lexicon entries)"
    )
    for chunk in chunks:
        print(f"[{chunk.chunk_number}] {chunk.text}")
    return 0


def format_table(rows: list[ChapterRow]) -> str:
    """The chapter table as plain text lines."""
    lines = [f"{'#':>4}  {'sel':3}  {'title':{_TITLE_WIDTH}}  {'words':>10}  note"]
    for row in rows:
        title = row.title if len(row.title) <= _TITLE_WIDTH else row.title[: _TITLE_WIDTH - 1] + "…"
        mark = " x " if row.selected else "   "
        note = row.reason if not row.selected or row.reason else ""
        # CJK text is measured in characters ("45,120 ch"), each of which would count as a word.
        length = f"{row.characters:,} ch" if row.characters > row.size.words else row.words_str
        lines.append(f"{row.number:>4}  {mark}  {title:{_TITLE_WIDTH}}  {length:>10}  {note}".rstrip())
    return "\n".join(lines)


def _hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
