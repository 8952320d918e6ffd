"""Chapters headed by a number alone on its line ("1", "XII."), as the newer Project Gutenberg plain
texts of Treasure Island set them under their "PART ONE--The Old Buccaneer" headings.

A lone number is a chapter heading only as one of a run that counts up by one through the book (or
starts again at 1 after a "PART" or "BOOK" heading), with a chapter's length of text between one and
the next: page numbers, a numbered list or a poem's stanza numbers are none of these. A book whose
headings say "Chapter" keeps those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from statistics import median
from types import MappingProxyType

from omni_web.book.headings import heading_keyword, is_part_heading, looks_like_title_line
from omni_web.book.spacing import Paragraph

__all__ = ["is_bare_number", "numbered_headings", "titled_under_numbers"]

_NUMBER_RE = re.compile(r"^(?:(\d{1,3})|([IVXLC]{1,7}))\.?$")
_MIN_RUN = 3
_MIN_SHARE = 0.8  # of the book's lone numbers in the run: not a sequence that starts over
_MIN_MEDIAN_WORDS = 200  # between one heading and the next


def _roman(number: int) -> str:
    letters = ""
    for value, numeral in ((100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                           (4, "IV"), (1, "I")):
        count, number = divmod(number, value)
        letters += numeral * count
    return letters


_ROMAN_VALUES = MappingProxyType({_roman(number): number for number in range(1, 400)})


def is_bare_number(line: str) -> bool:
    """A line that is only a chapter number: "12", "12.", "XII"."""
    return _value(line) is not None


def numbered_headings(paragraphs: Sequence[Paragraph]) -> frozenset[int]:
    """Indexes of the paragraphs that are lone chapter numbers (empty when the book has no such run)."""
    keywords = [heading_keyword(p.lines[0]) if len(p.lines) <= 3 else "" for p in paragraphs]
    if {"chapter", "chap"} & set(keywords):
        return frozenset()
    parts = [index for index, p in enumerate(paragraphs) if len(p.lines) <= 3 and is_part_heading(p.lines[0])]
    numbers = [
        (index, value)
        for index, paragraph in enumerate(paragraphs)
        if len(paragraph.lines) == 1 and (value := _value(paragraph.lines[0])) is not None
    ]
    run = _longest_count_up(numbers, parts)
    if len(run) < _MIN_RUN or len(run) < _MIN_SHARE * len(numbers):
        return frozenset()
    words = [
        sum(len(" ".join(p.lines).split()) for p in paragraphs[start + 1 : end])
        for start, end in zip(run, run[1:], strict=False)
    ]
    return frozenset(run) if median(words) >= _MIN_MEDIAN_WORDS else frozenset()


def titled_under_numbers(paragraphs: Sequence[Paragraph], numbered: frozenset[int]) -> bool:
    """Whether most of the numbered chapters have a title line under the number (Treasure Island's
    do; in The Age of Innocence a short first line, '"A party for the Blenkers--the Blenkers?"',
    is the chapter's first line)."""
    titled = sum(
        index + 1 < len(paragraphs)
        and len(paragraphs[index + 1].lines) == 1
        and looks_like_title_line(paragraphs[index + 1].lines[0])
        for index in numbered
    )
    return 2 * titled > len(numbered)


def _value(line: str) -> int | None:
    match = _NUMBER_RE.match(line.strip())
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else _ROMAN_VALUES.get(match.group(2))


def _longest_count_up(numbers: list[tuple[int, int]], parts: list[int]) -> list[int]:
    """The paragraph indexes of the longest run n, n+1, n+2, ... in the book's order, where a 1 just
    after a part heading goes on from the run before it (other numbers may lie between, as a stray
    page number does)."""
    ending: dict[int, list[int]] = {}  # a value -> the longest run found so far that ends at it
    longest: list[int] = []
    for index, value in numbers:
        run = [*ending.get(value - 1, []), index]
        if value == 1 and longest and any(longest[-1] < part < index for part in parts):
            run = [*longest, index]
        if len(run) > len(ending.get(value, [])):
            ending[value] = run
        longest = max(longest, run, key=len)
    return longest
