"""A book's dialogue: each chapter's paragraphs split into spans, each quote given a speaker.

This is what both the character list and the conversion plan read: one pass of
:mod:`~omni_web.cast.spans` and :mod:`~omni_web.cast.attribution` per chapter. Speakers here are
labels, not voices: ``""`` is the narrator, :data:`DIALOGUE` an unattributed (or too uncertain)
quote, anything else a character's name. The labels depend on the text and the confidence
threshold only, never on the voices chosen, so mapping a character to another voice changes the
voice of that character's chunks and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from omni_web.book import Book, Chapter
from omni_web.cast.attribution import Attribution, attribute_speakers
from omni_web.cast.spans import (
    NO_DIALOGUE,
    ParagraphSpans,
    QuoteStyle,
    detect_quote_style,
    split_paragraph,
    split_paragraphs,
)

__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "DIALOGUE",
    "NARRATOR",
    "ChapterDialogue",
    "Quote",
    "book_quote_style",
    "chapter_dialogue",
]

NARRATOR = ""
DIALOGUE = "dialogue"
# Quotes attributed with less confidence than this are read by the dialogue voice.
DEFAULT_MIN_CONFIDENCE = 0.6


@dataclass(frozen=True, slots=True)
class Quote:
    """One quote of a chapter, with its attribution."""

    block_index: int
    text: str
    attribution: Attribution


@dataclass(frozen=True, slots=True)
class ChapterDialogue:
    """A chapter's paragraphs as spans, and who speaks each quote."""

    chapter: Chapter
    paragraphs: tuple[ParagraphSpans, ...]  # aligned with chapter.blocks (headings: narration)
    attributions: tuple[tuple[Attribution | None, ...], ...]

    def quotes(self) -> list[Quote]:
        """Every quote in reading order."""
        found: list[Quote] = []
        for index, (paragraph, row) in enumerate(zip(self.paragraphs, self.attributions, strict=True)):
            for span, attribution in zip(paragraph.spans, row, strict=True):
                if span.is_dialogue and attribution is not None:
                    found.append(Quote(index, span.text, attribution))
        return found

    def segments(self, *, min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> dict[int, list[tuple[str, str]]]:
        """Per paragraph with speech: its (speaker label, text) runs, which join back to the paragraph.

        Neighbouring runs with the same label are merged (two quotes with only a space between).
        """
        result: dict[int, list[tuple[str, str]]] = {}
        for index, (paragraph, row) in enumerate(zip(self.paragraphs, self.attributions, strict=True)):
            if not paragraph.has_dialogue:
                continue
            runs: list[tuple[str, str]] = []
            for span, attribution in zip(paragraph.spans, row, strict=True):
                label = _label(attribution, min_confidence) if span.is_dialogue else NARRATOR
                if not span.is_dialogue and not span.text.strip() and runs:
                    label = runs[-1][0]  # a bare space between two quotes stays with them
                if runs and runs[-1][0] == label:
                    runs[-1] = (label, runs[-1][1] + span.text)
                else:
                    runs.append((label, span.text))
            result[index] = runs
        return result


def _label(attribution: Attribution | None, min_confidence: float) -> str:
    if attribution is None or attribution.speaker is None or attribution.confidence < min_confidence:
        return DIALOGUE
    return attribution.speaker


def book_quote_style(book: Book, chapters: Iterable[Chapter] | None = None) -> QuoteStyle:
    """The quote style of the book's body text (the selected chapters, or the given ones)."""
    chosen = list(chapters) if chapters is not None else [c for c in book.chapters if c.selected_by_default]
    if not chosen:
        chosen = list(book.chapters)
    return detect_quote_style(block.text for chapter in chosen for block in chapter.blocks if not block.is_heading)


def chapter_dialogue(chapter: Chapter, style: QuoteStyle) -> ChapterDialogue:
    """Split and attribute one chapter; headings are narration and end any open quote."""
    paragraphs: list[ParagraphSpans] = []
    attributions: list[tuple[Attribution | None, ...]] = []
    run: list[int] = []  # block indexes of the current run of paragraphs (between headings)

    def flush() -> None:
        texts = [chapter.blocks[i].text for i in run]
        split = split_paragraphs(texts, style)
        for paragraph, row in zip(split, attribute_speakers(split), strict=True):
            paragraphs.append(paragraph)
            attributions.append(tuple(row))
        run.clear()

    for index, block in enumerate(chapter.blocks):
        if block.is_heading:
            flush()
            heading = split_paragraph(block.text, NO_DIALOGUE)
            paragraphs.append(heading)
            attributions.append(tuple(None for _ in heading.spans))
        else:
            run.append(index)
    flush()
    return ChapterDialogue(chapter, tuple(paragraphs), tuple(attributions))

