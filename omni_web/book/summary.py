"""What the UI and the CLI show about a book: one row per chapter."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from omni_web.book.model import Book

__all__ = ["WORDS_PER_MINUTE", "ChapterRow", "chapter_rows"]

# Typical audiobook narration pace, for a listening-time estimate only.
WORDS_PER_MINUTE = 150


@dataclass(frozen=True, slots=True)
class ChapterRow:
    """One chapter as a table row: number, selection, title, words and why it is not selected."""

    index: int
    title: str
    word_count: int
    selected: bool
    selected_by_default: bool
    reason: str  # "" for real chapters, else e.g. "table of contents"

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
        """Rough listening time at WORDS_PER_MINUTE."""
        return self.word_count * 60 / WORDS_PER_MINUTE

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
        )
        for chapter in book.chapters
    ]
