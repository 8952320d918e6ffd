"""A book's dialogue: each chapter's paragraphs split into spans, each quote given a speaker.

This is what both the character list and the conversion plan read: one pass of
:mod:`~omni_web.cast.spans` and :mod:`~omni_web.cast.attribution` per chapter. Speakers here are
labels, not voices: ``""`` is the narrator, :data:`DIALOGUE` an unattributed (or too uncertain)
quote, anything else a character's name. The labels depend on the text and the confidence
threshold only; :meth:`ChapterDialogue.segments` may fold them by voice (speakers without a voice
of their own share the dialogue's or the narrator's runs), so giving a character a voice splits
its lines out of those runs and changes nothing else. Quoted titles and phrases are narration
(:mod:`~omni_web.cast.mentions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from omni_web.book import Book, Chapter
from omni_web.cast.attribution import Attribution, attribute_speakers
from omni_web.cast.delivery import labelled, split_label, with_tag_deliveries
from omni_web.cast.mentions import without_mentions
from omni_web.cast.roster import Roster
from omni_web.cast.sections import section_teller
from omni_web.cast.spans import (
    NO_DIALOGUE,
    ParagraphSpans,
    QuoteStyle,
    detect_quote_style,
    split_paragraph,
    split_paragraphs,
)
from omni_web.cast.turns import resolve_turns

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

    def segments(self, *, min_confidence: float = DEFAULT_MIN_CONFIDENCE,
                 label_of: Callable[[str], str] | None = None) -> dict[int, list[tuple[str, str]]]:
        """Per paragraph with speech: its (speaker label, text) runs, which join back to the paragraph.

        Neighbouring runs with the same label are merged (two quotes with only a space between).
        ``label_of`` maps a speaker label to the label it is read under (the cast's
        :meth:`~omni_web.cast.record.Cast.voice_label`): speakers read in one voice then share
        runs, so '"Go," said the Emperor. "Now."' is one request when the Emperor has no voice
        of his own.
        """
        relabel = label_of or (lambda label: split_label(label)[0])
        result: dict[int, list[tuple[str, str]]] = {}
        for index, (paragraph, row) in enumerate(zip(self.paragraphs, self.attributions, strict=True)):
            if not paragraph.has_dialogue:
                continue
            runs: list[tuple[str, str]] = []
            for span, attribution in zip(paragraph.spans, row, strict=True):
                label = relabel(_label(attribution, min_confidence) if span.is_dialogue else NARRATOR)
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
        return labelled(DIALOGUE, attribution.delivery if attribution is not None else None)
    return labelled(attribution.speaker, attribution.delivery)


def book_quote_style(book: Book, chapters: Iterable[Chapter] | None = None) -> QuoteStyle:
    """The quote style of the book's body text (the selected chapters, or the given ones)."""
    chosen = list(chapters) if chapters is not None else [c for c in book.chapters if c.selected_by_default]
    if not chosen:
        chosen = list(book.chapters)
    return detect_quote_style(
        block.text for chapter in chosen for block in chapter.blocks if not block.is_heading
    )


def chapter_dialogue(chapter: Chapter, style: QuoteStyle, *, roster: Roster | None = None) -> ChapterDialogue:
    """Split and attribute one chapter; headings are narration and end any open quote.

    ``roster``: the book's characters (:func:`~omni_web.cast.characters.book_roster`); with it a
    quote's speaker is the character's one name and pronoun tags resolve to its characters.
    """
    paragraphs: list[ParagraphSpans] = []
    attributions: list[tuple[Attribution | None, ...]] = []
    run: list[int] = []  # block indexes of the current run of paragraphs (between headings)

    teller: str | None = None  # who says "I" in this part of a book told in parts

    def flush() -> None:
        texts = [chapter.blocks[i].text for i in run]
        split = [without_mentions(paragraph) for paragraph in split_paragraphs(texts, style)]
        told = roster.told_by(teller) if roster is not None else None
        rows = resolve_turns(split, attribute_speakers(split, roster=told), roster=told)
        for paragraph, row in zip(split, rows, strict=True):
            paragraphs.append(paragraph)
            attributions.append(with_tag_deliveries(paragraph, row))
        run.clear()

    for index, block in enumerate(chapter.blocks):
        if block.is_heading:
            flush()
            teller = section_teller(block.text) or teller
            heading = split_paragraph(block.text, NO_DIALOGUE)
            paragraphs.append(heading)
            attributions.append(tuple(None for _ in heading.spans))
        else:
            if (header := section_teller(block.text)) is not None:
                flush()
                teller = header
            run.append(index)
    flush()
    return ChapterDialogue(chapter, tuple(paragraphs), tuple(attributions))
