"""The book layer: EPUB -> Book (metadata, cover, chapters of text blocks) -> speech chunks.

Only this package opens EPUB files. Everything it returns is a frozen record; bad books raise
:class:`~omni_web.errors.BookError` subclasses with a message that names the problem.
"""

from omni_web.book.chunking import chunk_chapter, effective_chunk_limits
from omni_web.book.epub import load_book
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
    "effective_chunk_limits",
    "load_book",
    "normalize_text",
    "split_sentences",
]
