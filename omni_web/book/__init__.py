"""The book layer: EPUB, PDF, TXT, Markdown, HTML, FB2, DOCX, ODT, MOBI -> Book (metadata, cover,
chapters of text blocks) -> speech chunks.

Only this package opens book files; :func:`load_book` picks the reader by the file's content. Everything it returns is a frozen record; bad books raise
:class:`~omni_web.errors.BookError` subclasses with a message that names the problem.
"""

from omni_web.book.chunking import chunk_chapter, effective_chunk_limits
from omni_web.book.epubout import readalong_source
from omni_web.book.formats import BOOK_SUFFIXES, detect_format, load_book
from omni_web.book.model import (
    BlockKind,
    Book,
    BookMetadata,
    Chapter,
    Chunk,
    CoverImage,
    Identifier,
    PauseKind,
    TextBlock,
)
from omni_web.book.summary import ChapterRow, chapter_rows
from omni_web.book.text import count_words, normalize_text, split_sentences

__all__ = [
    "BOOK_SUFFIXES",
    "BlockKind",
    "Book",
    "BookMetadata",
    "Chapter",
    "ChapterRow",
    "Chunk",
    "CoverImage",
    "Identifier",
    "PauseKind",
    "TextBlock",
    "chapter_rows",
    "chunk_chapter",
    "count_words",
    "detect_format",
    "effective_chunk_limits",
    "load_book",
    "normalize_text",
    "readalong_source",
    "split_sentences",
]
