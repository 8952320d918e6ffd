"""Roman numerals: strict parsing, and the contexts where they are numbers rather than words.

A roman numeral is read only where it cannot be a word: after a heading keyword ("Chapter XIV",
"Book ii"), as a whole heading ("XIV."), after a ruler's name ("Henry VIII", "Elizabeth I"), or
after a capitalised word when it has at least two letters of I, V and X ("World War II",
"Apollo XIII"). The pronoun "I", and all-caps words such as "MIX" or "DID", are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from omni_web.text.case import capitalise_like

__all__ = ["RomanContext", "int_to_roman", "read_roman_numerals", "roman_to_int"]

_VALUES = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)
_LETTERS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
_NUMERAL_RE = re.compile(r"(?<![\w'’-])([IVXLCDM]+|[ivxlcdm]+)(?![\w-])")
_WORD_BEFORE_RE = re.compile(r"([^\W\d_]+)[.,]?\s+$")
_WHOLE_RE = re.compile(r"^\s*([IVXLCDM]+|[ivxlcdm]+)\s*([.:])?\s*$")
# "IV. The Pool of Tears" (but not the initials of "I. M. Pei").
_LEADING_RE = re.compile(r"^([IVXLCDM]+)([.:])\s+(?=[^\W\d_]{2,}|[^\W\d_](?![.\w]))")


def int_to_roman(number: int) -> str:
    """Canonical upper-case roman numeral for 1..3999."""
    if not 0 < number < 4000:
        raise ValueError(f"{number} has no roman numeral")
    out = []
    for value, letters in _VALUES:
        count, number = divmod(number, value)
        out.append(letters * count)
    return "".join(out)


def roman_to_int(text: str) -> int | None:
    """The value of a canonical roman numeral ("XIV" -> 14), None for anything else ("IIII", "IC")."""
    upper = text.upper()
    if not upper or any(ch not in _LETTERS for ch in upper):
        return None
    total = 0
    for ch, nxt in zip(upper, [*upper[1:], ""], strict=True):
        value = _LETTERS[ch]
        total += -value if nxt and _LETTERS[nxt] > value else value
    if not 0 < total < 4000 or int_to_roman(total) != upper:
        return None
    return total


@dataclass(frozen=True, slots=True)
class RomanContext:
    """What one language needs to read roman numerals.

    ``keywords`` are lowercased heading words after which a numeral is a number ("chapter");
    ``regnal_names`` are rulers' and popes' given names; ``regnal`` says "Henry" + 8 as
    "Henry the Eighth" (the name is passed for languages that agree in gender); ``cardinal``
    reads a plain number; ``not_before`` are capitalised words after which a numeral stays a word.
    """

    keywords: Collection[str]
    regnal_names: Collection[str]
    regnal: Callable[[str, int], str]
    cardinal: Callable[[int], str]
    not_before: Collection[str] = ()


def read_roman_numerals(text: str, context: RomanContext) -> str:
    """Replace roman numerals that are numbers by their spoken form; leave every other word alone."""
    whole = _WHOLE_RE.match(text)
    if whole and (value := roman_to_int(whole.group(1))) is not None:
        return capitalise_like(whole.group(1), context.cardinal(value)) + (whole.group(2) or "")
    leading = _LEADING_RE.match(text)
    # "IV. The Pool of Tears", "I. Down the Rabbit-Hole"; but "M. le maire", "C. Dupont" are initials.
    if leading and (len(leading.group(1)) > 1 or leading.group(1) in "IVX") and (
            value := roman_to_int(leading.group(1))) is not None:
        spoken = capitalise_like(leading.group(1), context.cardinal(value))
        text = spoken + leading.group(2) + " " + text[leading.end():]

    def replace(match: re.Match[str]) -> str:
        numeral = match.group(1)
        value = roman_to_int(numeral)
        if value is None:
            return numeral
        before = _WORD_BEFORE_RE.search(text, 0, match.start())
        if before is None:
            return numeral
        word = before.group(1)
        # "Book I", "CHAPTER XIV", "siglo XIX"; but "the book I read" keeps its pronoun.
        if word.lower() in context.keywords and (word[0].isupper() or numeral != "I"):
            return context.cardinal(value)
        if not numeral.isupper() or not (word[0].isupper() and word[1:].islower()):
            return numeral
        if word in context.regnal_names and "," not in before.group(0):
            return context.regnal(word, value)
        if len(numeral) >= 2 and set(numeral) <= set("IVX") and word not in context.not_before:
            return context.cardinal(value)
        return numeral

    return _NUMERAL_RE.sub(replace, text)

