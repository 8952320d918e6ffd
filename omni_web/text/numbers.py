"""Number words through num2words, with the few fixes speech needs (no commas, digits for huge numbers)."""

from __future__ import annotations

from num2words import num2words

__all__ = ["cardinal", "digit_by_digit", "ordinal", "parse_int", "year"]

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
