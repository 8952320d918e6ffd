"""Letter-spaced words ("T h i s  s e c t i o n"): letters set apart for emphasis, joined again.

A heading or a line set with spaces between its letters reaches the TTS as single letters, spelled
out one by one. A run of at least five single letters is joined; where the gaps between words were
lost (one space everywhere: "T h i s s e c t i o n"), the joined letters are cut into the words the
book itself uses elsewhere ("This" + "section"), the fewest words first. A run the book's words do
not cover is left as it is: a row of variables ("a b c d e f") is not a word.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from functools import cache

from omni_web.book.model import Book

__all__ = ["book_words", "join_letter_spacing", "without_letter_spacing"]

# Five or more single letters, each followed by one space (two or more spaces: a kept word gap).
_RUN_RE = re.compile(r"(?<!\S)(?:[^\W\d_] {1,2}){4,}[^\W\d_](?!\S)")
_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_MAX_WORDS_IN_RUN = 6
_MIN_SPACED_WORD = 4  # letters of the longest word between kept gaps ("a b  c d" stays)
_MIN_WORD = 3  # a piece of two letters ("ab", "cd") is more likely a pair of variables than a word


def book_words(texts: Iterable[str]) -> frozenset[str]:
    """The words a book uses (two letters or more, case folded)."""
    return frozenset(word.casefold() for text in texts for word in _WORD_RE.findall(text))


def join_letter_spacing(text: str, words: frozenset[str]) -> str:
    """``text`` with its letter-spaced runs joined into the book's words (unchanged where they do not fit)."""
    if " " not in text:
        return text
    return _RUN_RE.sub(lambda match: _joined(match.group(0), words), text)


def _joined(run: str, words: frozenset[str]) -> str:
    gaps = re.split(r" {2,}", run)  # a double space kept the word gap
    lengths = [len(word.replace(" ", "")) for word in gaps]
    if len(gaps) > 1 and min(lengths) > 1 and max(lengths) >= _MIN_SPACED_WORD:
        # The gaps say where the words are ("C H A P T E R  O N E"): joined as they stand.
        return " ".join(word.replace(" ", "") for word in gaps)
    parts = []
    for word in gaps:
        letters = word.replace(" ", "")
        split = _split(letters.casefold(), words)
        if split is None or not all(_word_shaped(p) for p in _cut(letters, split)):
            return run
        parts.append(" ".join(_cut(letters, split)))
    return " ".join(parts)


def _cut(letters: str, split: tuple[str, ...]) -> list[str]:
    """``letters`` cut where ``split`` (its folded words) cuts it, in the letters' own case."""
    cut, at = [], 0
    for piece in split:
        cut.append(letters[at : at + len(piece)])
        at += len(piece)
    return cut


def _word_shaped(word: str) -> bool:
    """Lower case, capitals, or a capital then lower case: not a row of variables ("cB", "ABc")."""
    return word.islower() or word.isupper() or (word[:1].isupper() and word[1:].islower())


def _split(letters: str, words: frozenset[str]) -> tuple[str, ...] | None:
    """``letters`` as the fewest of ``words`` in a row, or None."""

    @cache
    def best(start: int) -> tuple[str, ...] | None:
        if start == len(letters):
            return ()
        found: tuple[str, ...] | None = None
        for end in range(len(letters), start + 1, -1):
            piece = letters[start:end]
            if (len(piece) >= _MIN_WORD and piece in words) or piece in ("a", "i"):
                rest = best(end)
                if rest is not None and (found is None or len(rest) + 1 < len(found)):
                    found = (piece, *rest)
        return found

    result = best(0)
    return result if result is not None and len(result) <= _MAX_WORDS_IN_RUN else None


def without_letter_spacing(book: Book) -> Book:
    """The book with letter-spaced runs joined in every chapter's title and blocks."""
    texts = [block.text for chapter in book.chapters for block in chapter.blocks]
    if not any(_RUN_RE.search(text) for text in texts):
        return book
    words = book_words(texts)
    chapters = tuple(
        dataclasses.replace(
            chapter,
            title=join_letter_spacing(chapter.title, words),
            blocks=tuple(
                dataclasses.replace(block, text=join_letter_spacing(block.text, words))
                for block in chapter.blocks
            ),
        )
        for chapter in book.chapters
    )
    return dataclasses.replace(book, chapters=chapters)
