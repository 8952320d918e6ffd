"""What the UI and the CLI show about a book: one row per chapter, with its length and listening time.

Text in scripts without spaces (Chinese, Japanese) is measured in characters, not words: each
character would otherwise count as a "word" and a Japanese novel would show hundreds of thousands
of them, and an estimate at a words-per-minute pace would be several times too long.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from omni_web.book.model import Book, Chapter
from omni_web.book.text import count_cjk_chars

__all__ = [
    "CJK_CHARS_PER_MINUTE",
    "WORDS_PER_MINUTE",
    "ChapterRow",
    "TextSize",
    "book_size",
    "chapter_rows",
    "chapter_size",
]

# Typical audiobook narration pace, for a listening-time estimate only.
WORDS_PER_MINUTE = 150
# Chinese narration runs near 250 characters a minute, Japanese near 350: one figure between them.
CJK_CHARS_PER_MINUTE = 300


@dataclass(frozen=True, slots=True)
class TextSize:
    """How much there is to read: words of spaced scripts, and CJK characters."""

    words: int
    characters: int = 0

    @property
    def estimated_seconds(self) -> float:
        """Rough listening time: words at WORDS_PER_MINUTE, characters at CJK_CHARS_PER_MINUTE."""
        return self.words * 60 / WORDS_PER_MINUTE + self.characters * 60 / CJK_CHARS_PER_MINUTE

    @property
    def size_str(self) -> str:
        """ "2,153 words", "45,120 characters", or both for mixed text."""
        parts = []
        if self.words or not self.characters:
            parts.append(f"{self.words:,} word{'s' if self.words != 1 else ''}")
        if self.characters:
            parts.append(f"{self.characters:,} character{'s' if self.characters != 1 else ''}")
        return ", ".join(parts)


def chapter_size(chapter: Chapter) -> TextSize:
    """A chapter's length; CJK characters are counted apart from words."""
    characters = sum(count_cjk_chars(block.text) for block in chapter.blocks)
    return TextSize(words=max(0, chapter.word_count - characters), characters=characters)


def book_size(book: Book, chapters: Collection[int] | None = None) -> TextSize:
    """The length of the given chapters (indexes; default all)."""
    sizes = [chapter_size(c) for c in book.chapters if chapters is None or c.index in chapters]
    return TextSize(sum(s.words for s in sizes), sum(s.characters for s in sizes))


@dataclass(frozen=True, slots=True)
class ChapterRow:
    """One chapter as a table row: number, selection, title, words and why it is not selected."""

    index: int
    title: str
    word_count: int
    selected: bool
    selected_by_default: bool
    reason: str  # "" for real chapters, else e.g. "table of contents"
    characters: int = 0  # CJK characters, counted in word_count one by one

    @property
    def size(self) -> TextSize:
        """The chapter's length, words and CJK characters apart."""
        return TextSize(words=max(0, self.word_count - self.characters), characters=self.characters)

    @property
    def size_str(self) -> str:
        """ "2,153 words" or "45,120 characters"."""
        return self.size.size_str

    @property
    def number(self) -> int:
        """1-based chapter number."""
        return self.index + 1

    @property
    def words_str(self) -> str:
        """Word count with thousands separators ("12,345")."""
        return f"{self.word_count:,}"

    @property
    def estimated_seconds(self) -> float:
        """Rough listening time (words and CJK characters each at their own pace)."""
        return self.size.estimated_seconds

    @property
    def duration_str(self) -> str:
        """Listening-time estimate as "1:02:03" or "4:05"."""
        total = round(self.estimated_seconds)
        hours, rest = divmod(total, 3600)
        minutes, seconds = divmod(rest, 60)
        return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def chapter_rows(book: Book, selected: Collection[int] | None = None) -> list[ChapterRow]:
    """Rows for every chapter; ``selected`` holds chapter indexes (default: the book's preselection)."""
    chosen = set(book.selected_by_default() if selected is None else selected)
    return [
        ChapterRow(
            index=chapter.index,
            title=chapter.title,
            word_count=chapter.word_count,
            selected=chapter.index in chosen,
            selected_by_default=chapter.selected_by_default,
            reason=chapter.matter_reason,
            characters=chapter_size(chapter).characters,
        )
        for chapter in book.chapters
    ]
