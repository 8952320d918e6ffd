"""Who says "I" in each part of a book told by several people.

Dracula is Jonathan Harker's journal, then Mina Murray's, then Dr. Seward's diary; The Woman in
White is "The Story begun by Walter Hartright". A part opens with a short line that names its
teller ("JONATHAN HARKER'S JOURNAL--_continued_", "Letter, Mina Murray to Lucy Westenra", "The
Narrative of Hester Pinhorn"). :func:`section_tellers` finds them, so that "I said" in Seward's
diary is Seward's line, not the narrator's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["section_teller", "section_tellers", "teller_forms"]

_WORD = r"(?:[A-Z][a-z’'\-]+|[A-Z][A-Z’'\-]+|(?:Dr|Mr|Mrs|Miss|DR|MR|MRS|MISS)\.?|[A-Z]\.)"
_NAME = rf"{_WORD}(?:\s+{_WORD}){{0,3}}"
_KINDS = r"(?i:journal|diary|phonograph\s+diary|narrative|statement|memorandum|log|notebook|memoir|account)"
# Only the header's own words ignore case: the name is written with capitals ("SEWARD", "Seward").
_HEADERS = (
    # "JONATHAN HARKER'S JOURNAL--_continued_", "Dr. Seward's Diary."
    re.compile(rf"^[\W_]*(?i:from\s+)?(?i:the\s+)?(?P<name>{_NAME})['’](?i:s)\s+{_KINDS}\b"),
    # "Letter, Mina Murray to Lucy Westenra.", "Letter from Quincey P. Morris to Hon. Arthur Holmwood."
    re.compile(rf"^[\W_]*(?i:letter),?\s+(?i:from\s+)?(?P<name>{_NAME})\s+(?i:to)\b"),
    # "The Story begun by Walter Hartright", "The Narrative of Hester Pinhorn", "Narrative Continued
    # by the Doctor" (Treasure Island's chapters 16 to 18)
    re.compile(
        rf"^[\W_]*(?i:the\s+)?(?i:story|narrative|statement|account)\s+(?:(?i:[a-z]+)\s+)?"
        rf"(?:(?i:by)\s+(?:the\s+)?|(?i:of)\s+)(?P<name>{_NAME})"
    ),
)
_NUMBER = re.compile(r"^(?:(?i:chapter)\s+)?(?:\d+|[IVXLC]+)\.?\s+")  # "16. ", "CHAPTER XVI. "
_MAX_WORDS = 14  # a header is a line, not a paragraph that happens to begin "the story of"
_NOT_NAMES = frozenset("the a an his her my our their this that".split())
_TITLES = frozenset("miss mrs mr ms hon".split())


def section_teller(text: str) -> str | None:
    """The teller a header line names ("DR. SEWARD'S DIARY" -> "Dr. Seward"; "CHAPTER II:
    JONATHAN HARKER'S JOURNAL--continued" -> "Jonathan Harker"), else None."""
    if len(text.split()) > _MAX_WORDS:
        return None
    for part in [_NUMBER.sub("", text), *text.split(":")[1:]]:
        for header in _HEADERS:
            match = header.match(part.strip())
            if match is not None:
                words = [_as_written(word) for word in match.group("name").split()]
                if words and words[0].casefold() not in _NOT_NAMES:
                    return " ".join(words)
    return None


def teller_forms(teller: str) -> list[str]:
    """The forms to look a teller up by: as written, without a title, first and last name
    ("Miss Mina Murray", "Mina Murray"; "Quincey P. Morris", "Quincey Morris")."""
    words = teller.split()
    plain = [w for w in words if w.rstrip(".").casefold() not in _TITLES] or words
    return [teller, " ".join(plain), f"{plain[0]} {plain[-1]}"]


def section_tellers(chapter_texts: Iterable[Iterable[str]]) -> set[str]:
    """Every teller the chapters' headers name: two or more make a book of several tellers."""
    return {teller for texts in chapter_texts for text in texts if (teller := section_teller(text))}


def _as_written(word: str) -> str:
    """ "SEWARD" -> "Seward", "DR." -> "Dr."; a word in lower and capitals stays."""
    return word.title() if word.isupper() and len(word.rstrip(".")) > 1 else word
