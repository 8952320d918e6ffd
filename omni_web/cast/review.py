"""A book's labels, kept beside its cast: the LLM pass run on it, the quotes still unsure, a fix.

The pass labels what the rules leave below the cast's floor (:mod:`.labeller`) and saves the
labels; the quotes still below the floor after it make the review list; assigning one saves a
person's label, which wins over the rules and the LLM. Chunk keys follow each chunk's voice, so
the next render re-renders only the chunks whose speaker changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from omni_web.book import Book
from omni_web.cast.alias_llm import join_aliases
from omni_web.cast.characters import book_roster, find_characters
from omni_web.cast.dialogue import book_quote_style, chapter_dialogue
from omni_web.cast.labeller import LabelRun, label_book
from omni_web.cast.labels import (
    USER,
    BookLabels,
    QuoteLabel,
    labels_path,
    load_labels,
    quote_hash,
    relabelled,
)
from omni_web.cast.store import edit_characters, load_cast_file, saved_cast_path
from omni_web.errors import CastError
from omni_web.llm import ChatClient
from omni_web.paths import DataPaths
from omni_web.settings import Settings

__all__ = [
    "ReviewQuote",
    "assign_quote",
    "book_labels",
    "cast_names",
    "joined_summary",
    "review_list",
    "run_llm_pass",
]

_CONTEXT_CHARS = 160


@dataclass(frozen=True, slots=True)
class ReviewQuote:
    """A quote still below the floor: where it is, its text, the text before it, and the best guess."""

    chapter: int  # chapter index
    chapter_number: int
    quote: int
    text: str
    before: str
    guess: str | None
    confidence: float

    @property
    def key(self) -> str:
        """``chapter:quote``, as the review list's menu names it."""
        return f"{self.chapter}:{self.quote}"


def book_labels(paths: DataPaths, book: Book) -> BookLabels:
    """The labels saved for the book."""
    return load_labels(labels_path(saved_cast_path(paths, book)))


def cast_names(paths: DataPaths, book: Book) -> list[str]:
    """The characters a label may name: the book's speakers, then the cast file's other names."""
    cast = load_cast_file(saved_cast_path(paths, book))
    names = [c.name for c in find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits)]
    return names + [name for name in cast.characters if name not in names]


def run_llm_pass(
    paths: DataPaths,
    book: Book,
    settings: Settings,
    *,
    client: ChatClient | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> LabelRun:
    """Join the characters listed twice and label the book's unsure quotes with the LLM set in
    Settings; save the merges with the cast and the labels beside it.

    Raises:
        SettingsError: no LLM endpoint is set.
    """
    chat = client or ChatClient.from_settings(settings)
    path = labels_path(saved_cast_path(paths, book))
    cast = load_cast_file(saved_cast_path(paths, book))
    # One-line characters too: a name used once may be a main one's ("Ruth", Mrs. Wilcox).
    people = find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits, min_quotes=1)
    aliases = join_aliases(book, chat, people, cast.edits)
    for name, into in aliases.joined:
        cast = edit_characters(cast, merge=([name], into))  # voices follow, as in the cast screen's merge
    if aliases.joined:
        replace(cast, book=cast.book or book.metadata.title or book.source_path.stem).save(
            saved_cast_path(paths, book)
        )
    run = label_book(
        book,
        chat,
        cast_names(paths, book),
        labels=load_labels(path),
        edits=cast.edits,
        min_confidence=cast.min_confidence,
        concurrency=settings.llm_concurrency,
        progress=progress,
    )
    run.labels.save(path)
    errors = (aliases.error,) if aliases.error else ()
    usage = aliases.usage.plus(run.usage)
    return replace(run, usage=usage, errors=errors + run.errors, joined=aliases.joined)


def joined_summary(run: LabelRun, undo: str) -> str:
    """The characters the pass found listed twice, in words, and ``undo``, how to split one again
    ("" when none)."""
    if not run.joined:
        return ""
    pairs = "; ".join(f"{name} is {into}" for name, into in run.joined)
    return f"The LLM found characters listed twice and merged them: {pairs} ({undo})."


def review_list(paths: DataPaths, book: Book, *, limit: int = 200) -> list[ReviewQuote]:
    """Quotes still below the cast's floor after the saved labels, in reading order (the first ``limit``)."""
    cast = load_cast_file(saved_cast_path(paths, book))
    labels = book_labels(paths, book)
    chapters = [c for c in book.chapters if c.selected_by_default] or list(book.chapters)
    style = book_quote_style(book, chapters)
    roster = book_roster(book, chapters, style=style, edits=cast.edits)  # as the render attributes them
    found: list[ReviewQuote] = []
    for chapter in chapters:
        dialogue = relabelled(
            chapter_dialogue(chapter, style, roster=roster), labels.for_chapter(chapter.index)
        )
        for number, quote in enumerate(dialogue.quotes()):
            attribution = quote.attribution
            if attribution.speaker is not None and attribution.confidence >= cast.min_confidence:
                continue
            block = chapter.blocks[quote.block_index].text
            before = block[: block.find(quote.text)].strip()[-_CONTEXT_CHARS:]
            found.append(
                ReviewQuote(
                    chapter.index,
                    chapter.number,
                    number,
                    quote.text,
                    before,
                    attribution.speaker,
                    attribution.confidence,
                )
            )
            if len(found) >= limit:
                return found
    return found


def assign_quote(paths: DataPaths, book: Book, chapter: int, quote: int, speaker: str) -> QuoteLabel:
    """Save a person's label: ``speaker`` says quote ``quote`` of chapter ``chapter`` ("" = the narrator).

    Raises:
        CastError: the book has no such quote.
    """
    target = next((c for c in book.chapters if c.index == chapter), None)
    quotes = chapter_dialogue(target, book_quote_style(book)).quotes() if target is not None else []
    if not 0 <= quote < len(quotes):
        raise CastError(f"The book has no quote {quote} in chapter {chapter}; reload the review list.")
    path = labels_path(saved_cast_path(paths, book))
    label = QuoteLabel(chapter, quote, quote_hash(quotes[quote].text), speaker.strip(), 1.0, None, USER)
    load_labels(path).merged([label]).save(path)
    return label
