"""How many chunks a lexicon edit touches: the chunks whose spoken text changes, counted before a render.

Chunks are named by a hash of their spoken text, so a chunk re-renders exactly when its text is
new. The count compares the book's chunks under the old and the new lexicon, cut as a job cuts
them (the model's caps, the chunk size), so the number matches what the next render will do.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from omni_web.book import Book, chunk_chapter, effective_chunk_limits
from omni_web.catalog import CatalogEntry
from omni_web.settings import Settings
from omni_web.text.lexicon import Pronouncer
from omni_web.text.speech import SpokenForm, spoken_form

__all__ = ["ChunkText", "EditImpact", "edit_impact", "spoken_chunks"]


@dataclass(frozen=True, slots=True)
class ChunkText:
    """One chunk as sent: its chapter, 1-based number and spoken text."""

    chapter_number: int
    chunk_number: int
    text: str


@dataclass(frozen=True, slots=True)
class EditImpact:
    """What an edit changes: new chunk texts (each one request), out of how many, in which chapters."""

    changed: int
    total: int
    chapters: tuple[int, ...]  # 1-based chapter numbers holding a changed chunk
    examples: tuple[ChunkText, ...]  # the first few changed chunks, as they will be sent

    @property
    def summary(self) -> str:
        """One line for the UI and the CLI."""
        if not self.changed:
            return f"This changes none of the {self.total} chunks: nothing will be rendered again."
        where = ", ".join(map(str, self.chapters[:12])) + (" ..." if len(self.chapters) > 12 else "")
        plural = "chunk" if self.changed == 1 else "chunks"
        return (
            f"This changes {self.changed} {plural} of {self.total} "
            f"(chapter{'s' if len(self.chapters) > 1 else ''} "
            f"{where}); only those are rendered again."
        )


def spoken_chunks(
    book: Book,
    speech: SpokenForm,
    *,
    entry: CatalogEntry,
    chunk_words: int,
    chapters: Collection[int] | None = None,
) -> list[ChunkText]:
    """Every chunk of the chosen chapters (indexes; default: the preselected ones) as it is sent."""
    words, max_words, max_chars = effective_chunk_limits(entry, chunk_words)
    chosen = set(book.selected_by_default() if chapters is None else chapters)
    out = []
    for chapter in book.chapters:
        if chapter.index not in chosen or not chapter.has_text:
            continue
        for chunk in chunk_chapter(
            speech.chapter(chapter), chunk_words=words, max_words=max_words, max_chars=max_chars
        ):
            out.append(ChunkText(chapter.number, chunk.index + 1, chunk.text))
    return out


def edit_impact(
    book: Book,
    *,
    before: Pronouncer,
    after: Pronouncer,
    entry: CatalogEntry,
    settings: Settings,
    language: str | None = None,
    chunk_words: int | None = None,
    chapters: Collection[int] | None = None,
    examples: int = 3,
) -> EditImpact:
    """Compare the chunks under ``before`` and ``after`` (the lexicon without and with an edit)."""
    size = chunk_words or settings.chunk_size_words
    old = spoken_chunks(
        book,
        spoken_form(
            book, entry=entry, settings=settings, language=language, pronouncer=before, announce=False
        ),
        entry=entry,
        chunk_words=size,
        chapters=chapters,
    )
    new = spoken_chunks(
        book,
        spoken_form(
            book, entry=entry, settings=settings, language=language, pronouncer=after, announce=False
        ),
        entry=entry,
        chunk_words=size,
        chapters=chapters,
    )
    known = {chunk.text for chunk in old}
    fresh: dict[str, ChunkText] = {}
    for chunk in new:
        if chunk.text not in known:
            fresh.setdefault(chunk.text, chunk)
    changed = list(fresh.values())
    return EditImpact(
        changed=len(changed),
        total=len({chunk.text for chunk in new}),
        chapters=tuple(sorted({chunk.chapter_number for chunk in changed})),
        examples=tuple(changed[:examples]),
    )
