"""The characters who speak in a book: name, how many quotes, and a line to hear them by."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.book import Book, Chapter, count_words, normalize_text
from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE, book_quote_style, chapter_dialogue

__all__ = ["Character", "find_characters"]

# A sample line long enough to judge a voice by, short enough to hear at once.
_SAMPLE_MIN_WORDS = 5
_SAMPLE_MAX_WORDS = 30


@dataclass(frozen=True, slots=True)
class Character:
    """One speaker of the book as the cast screen lists it."""

    name: str
    quotes: int  # quotes attributed with at least the cast's confidence
    words: int  # words in those quotes
    sample: str  # one of their lines (normalised, without the quote marks)
    first_chapter: int  # 1-based number of the chapter they first speak in


def _sample_text(quote: str) -> str:
    return normalize_text(quote).strip("\"'«»„“”‘’「」『』—― ")


def _sample_score(text: str) -> int:
    """How well a line shows a voice: a whole sentence of a few words beats a fragment."""
    words = count_words(text)
    score = 2 if _SAMPLE_MIN_WORDS <= words <= _SAMPLE_MAX_WORDS else 0
    score += 1 if text[:1].isupper() else 0
    score += 1 if text[-1:] in ".!?" else 0
    return score


def find_characters(
    book: Book,
    *,
    chapters: Sequence[Chapter] | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    min_quotes: int = 2,
) -> tuple[Character, ...]:
    """The book's speakers, most quotes first.

    Args:
        book: the parsed book.
        chapters: where to look (default: the chapters selected by default).
        min_confidence: quotes below it are not counted for anyone.
        min_quotes: speakers with fewer quotes are left out (one-off guesses are mostly noise).
    """
    chosen = list(chapters) if chapters is not None else [c for c in book.chapters if c.selected_by_default]
    style = book_quote_style(book, chosen)
    counts: dict[str, int] = {}
    words: dict[str, int] = {}
    samples: dict[str, str] = {}
    first: dict[str, int] = {}
    for chapter in chosen:
        for quote in chapter_dialogue(chapter, style).quotes():
            attribution = quote.attribution
            name = attribution.speaker
            if name is None or attribution.confidence < min_confidence:
                continue
            counts[name] = counts.get(name, 0) + 1
            text = _sample_text(quote.text)
            size = count_words(text)
            words[name] = words.get(name, 0) + size
            first.setdefault(name, chapter.number)
            current = samples.get(name)
            if current is None or _sample_score(text) > _sample_score(current):
                samples[name] = text
    people = [
        Character(name, counts[name], words[name], samples.get(name, ""), first[name])
        for name in counts
        if counts[name] >= min_quotes
    ]
    return tuple(sorted(people, key=lambda c: (-c.quotes, c.first_chapter, c.name)))
