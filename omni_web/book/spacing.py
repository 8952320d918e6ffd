"""Chapter headings of a plain-text book found from its own layout: the blank lines before a short line.

Books without the word "Chapter" still set their headings apart: "I" or "II. Papa se fâche." or
"SEARCH FOR MR. HYDE" or "BEREISDE LIEDEN." alone, after more blank lines than a paragraph gets
(Gutenberg's texts leave four before a chapter, two before a section). The widest gap that cuts
the book into at least two chapters of real length is the book's chapter gap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CHAPTER_WORDS", "Paragraph", "paragraphs_of", "spaced_headings"]

_LINE_RE = re.compile(r"[ \t\f\v\u00a0]*\n")
_NUMBERED_RE = re.compile(r"^(?:[IVXLC]{1,7}|\d{1,3})[.:)]\s")
_GAPS = (4, 3, 2)  # widest first: the chapter gap, then the section gap
_MAX_HEADING_CHARS = 70
_MAX_HEADING_WORDS = 12
CHAPTER_WORDS = 150  # a part shorter than this is not a chapter of its own (a title, a dedication)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Lines between blank lines, and how many blank lines came before them."""

    gap: int
    lines: tuple[str, ...]

    @property
    def words(self) -> int:
        """Words in the paragraph."""
        return sum(len(line.split()) for line in self.lines)


def paragraphs_of(body: str) -> list[Paragraph]:
    """The paragraphs of a text (lines stripped), each with the blank lines before it."""
    paragraphs: list[Paragraph] = []
    lines: list[str] = []
    gap = blanks = 0
    for raw in _LINE_RE.split(body + "\n"):
        line = raw.strip()
        if line:
            if not lines:
                gap = blanks
            lines.append(line)
            blanks = 0
            continue
        if lines:
            paragraphs.append(Paragraph(gap=gap, lines=tuple(lines)))
            lines = []
        blanks += 1
    if lines:
        paragraphs.append(Paragraph(gap=gap, lines=tuple(lines)))
    return paragraphs


def spaced_headings(paragraphs: list[Paragraph]) -> frozenset[int]:
    """Indexes of the paragraphs that start chapters by the book's spacing (empty when it has none)."""
    candidates = [i for i, p in enumerate(paragraphs) if _looks_like_heading(p)]
    for gap in _GAPS:
        heads = [i for i in candidates if paragraphs[i].gap >= gap]
        if _chapters(paragraphs, heads) >= 2:
            return frozenset(heads)
    return frozenset()


def _looks_like_heading(paragraph: Paragraph) -> bool:
    first = paragraph.lines[0]
    return (
        len(paragraph.lines) <= 2
        and len(first) <= _MAX_HEADING_CHARS
        and paragraph.words <= _MAX_HEADING_WORDS
        and (not first.endswith((",", ";", ":", "-")) or _continued_capitals(first))
        and not first.startswith(("[", "(", "*", '"', "'", "\u201c", "\u2018"))
        and not _is_sentence(" ".join(paragraph.lines))
    )


def _continued_capitals(line: str) -> bool:
    """A title in capitals cut after a comma ("DE GETERGDE ZACHTMOEDIGHEID,"): it goes on below."""
    return line.endswith(",") and line.isupper() and len(line.split()) >= 2


def _is_sentence(text: str) -> bool:
    """A short sentence set apart ("I really have discovered something at last."), not a title: it ends
    like a sentence and most of its longer words are in lower case."""
    if _NUMBERED_RE.match(text):
        return False  # "IV. Marie couche le petit blessé.": a numbered title, whatever its case
    words = [w for w in text.split() if len(w) >= 4 and w[0].isalpha()]
    lower = sum(w[0].islower() for w in words)
    return (
        text.rstrip("\"'\u201d\u2019").endswith((".", "!", "?"))
        and len(text.split()) > 3
        and 2 * lower > len(words)
    )


def _chapters(paragraphs: list[Paragraph], heads: list[int]) -> int:
    """How many of the parts the heads cut out are chapter-long."""
    bounds = [*heads, len(paragraphs)]
    lengths = (
        sum(p.words for p in paragraphs[start + 1 : end])
        for start, end in zip(bounds, bounds[1:], strict=False)
    )
    return sum(words >= CHAPTER_WORDS for words in lengths)
