"""Number words through num2words, with the few fixes speech needs (no commas, digits for huge numbers)."""

from __future__ import annotations

import re

from num2words import num2words

__all__ = [
    "cardinal",
    "digit_by_digit",
    "ordinal",
    "parse_int",
    "part_number_letters",
    "year",
]

# Beyond this num2words spells words nobody says ("one quadrillion..."): read digit by digit instead.
_MAX_SPELLED = 10**15


def cardinal(number: int, lang: str) -> str:
    """``number`` in words ("one thousand eight hundred and fifty-one"), without num2words' commas."""
    if abs(number) >= _MAX_SPELLED:
        sign = num2words(-1, lang=lang).rsplit(" ", 1)[0] + " " if number < 0 else ""
        return sign + digit_by_digit(str(abs(number)), lang)
    return num2words(number, lang=lang).replace(",", "")


def ordinal(number: int, lang: str) -> str:
    """``number`` as an ordinal word ("twenty-first", "vingt et unième", "einundzwanzigste")."""
    return num2words(number, lang=lang, to="ordinal").replace(",", "")


def year(number: int, lang: str) -> str:
    """``number`` read as a year ("eighteen fifty-one", "achtzehnhunderteinundfünfzig")."""
    return num2words(number, lang=lang, to="year").replace(",", "")


def digit_by_digit(digits: str, lang: str) -> str:
    """Each digit as its own word ("zero zero seven")."""
    return " ".join(num2words(int(d), lang=lang) for d in digits if d.isdigit())


def parse_int(text: str) -> int:
    """An integer from digits with any grouping separators (",", ".", spaces) removed."""
    return int("".join(ch for ch in text if ch.isdigit()))


# A number run into one or two capitals is a name said apart: "3D" is "three D", "4K" "four K";
# spelled as one word the voice read "threeD" as a single made-up word.
_NUMBER_THEN_CAPITALS_RE = re.compile(r"(?<![\w.,])(\d+)(?=[A-Z]{1,2}\b)")


def part_number_letters(text: str) -> str:
    """ "3D" -> "3 D", "5G" -> "5 G" (then read as numbers); "MP3", "H2O" and "10th" are left."""
    return _NUMBER_THEN_CAPITALS_RE.sub(r"\1 ", text)
