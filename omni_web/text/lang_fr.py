"""French: "M. Dupont" -> "Monsieur Dupont", "XIXe siècle" -> "dix-neuvième siècle", "Louis XIV" ->
"Louis quatorze", "1er mai" -> "premier mai", "3,50 €" -> "trois euros cinquante", "10h30" -> "dix
heures trente". Each rule is one function; ``RULES`` runs them in order.
"""

from __future__ import annotations

import re

from omni_web.text import numbers
from omni_web.text.case import capitalise_like
from omni_web.text.roman import RomanContext, read_roman_numerals, roman_to_int
from omni_web.text.rules import (
    Abbreviation,
    AbbreviationTable,
    LanguageRules,
    When,
    number_regex,
)

__all__ = [
    "RULES",
    "expand_abbreviations",
    "read_currency",
    "read_dates",
    "read_numbers",
    "read_ordinals",
    "read_percentages",
    "read_ranges",
    "read_roman",
    "read_times",
    "say_number",
]

LANG = "fr"
_NUMBER = number_regex(group=" ", decimal=",")
MONTHS = "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split()

ABBREVIATIONS = AbbreviationTable(
    [
        Abbreviation("M.", "Monsieur"),
        Abbreviation("MM.", "Messieurs"),
        Abbreviation("Mme", "Madame", When.BEFORE_NAME),
        Abbreviation("Mmes", "Mesdames", When.BEFORE_NAME),
        Abbreviation("Mlle", "Mademoiselle", When.BEFORE_NAME),
        Abbreviation("Mlles", "Mesdemoiselles", When.BEFORE_NAME),
        Abbreviation("Dr", "Docteur", When.BEFORE_NAME),
        Abbreviation("Dr.", "Docteur", When.BEFORE_NAME),
        Abbreviation("Pr", "Professeur", When.BEFORE_NAME),
        Abbreviation("Me", "Maître", When.BEFORE_NAME),
        Abbreviation("Mgr", "Monseigneur", When.BEFORE_NAME),
        Abbreviation("St", "Saint", When.BEFORE_NAME),
        Abbreviation("Ste", "Sainte", When.BEFORE_NAME),
        Abbreviation("etc.", "et cetera", ends=True),
        Abbreviation("c.-à-d.", "c'est-à-dire"),
        Abbreviation("p. ex.", "par exemple"),
        Abbreviation("cf.", "voir"),
        Abbreviation("env.", "environ"),
        Abbreviation("av. J.-C.", "avant Jésus-Christ", ends=True),
        Abbreviation("apr. J.-C.", "après Jésus-Christ", ends=True),
        Abbreviation("p.", "page", When.BEFORE_NUMBER),
        Abbreviation("pp.", "pages", When.BEFORE_NUMBER),
        Abbreviation("n°", "numéro", When.BEFORE_NUMBER),
        Abbreviation("N°", "Numéro", When.BEFORE_NUMBER),
        Abbreviation("no", "numéro", When.BEFORE_NUMBER),
        Abbreviation("vol.", "volume", When.BEFORE_NUMBER),
        Abbreviation("chap.", "chapitre", When.BEFORE_NUMBER),
    ]
)
_FEMININE_NAMES = frozenset("Élisabeth Elisabeth Marie Catherine Isabelle Anne Jeanne Victoria".split())
ROMAN = RomanContext(
    keywords=frozenset(
        "chapitre livre partie tome acte scène chant volume section lettre titre article leçon".split()
    ),
    regnal_names=frozenset(
        """
        Louis Henri Charles François Philippe Napoléon Jean Pierre Paul Pie Léon Grégoire Benoît
        Clément Innocent Urbain Boniface Jacques Guillaume Frédéric Nicolas Alexandre Catherine
        Élisabeth Elisabeth Marie Isabelle Victoria Édouard Richard Ferdinand Alphonse Rodolphe
        Othon Léopold Joseph Ptolémée Ramsès
        """.split()
    ),
    regnal=lambda name, n: (
        ("première" if name in _FEMININE_NAMES else "premier") if n == 1 else numbers.cardinal(n, LANG)
    ),
    cardinal=lambda n: numbers.cardinal(n, LANG),
    not_before=frozenset(
        "Il Elle On Je Tu Nous Vous Ils Elles Le La Les Un Une Et Ou Mais De Du Des".split()
    ),
)


def say_number(integer: str, fraction: str | None = None) -> str:
    """ "1 851" -> "mille huit cent cinquante et un", "3,14" -> "trois virgule quatorze"."""
    if fraction is None and len(integer) > 1 and integer.startswith("0"):
        return numbers.digit_by_digit(integer, LANG)
    words = numbers.cardinal(numbers.parse_int(integer), LANG)
    if fraction:
        tail = (
            numbers.digit_by_digit(fraction, LANG)
            if fraction.startswith("0") or len(fraction) > 3
            else numbers.cardinal(int(fraction), LANG)
        )
        words += " virgule " + tail
    return words


def expand_abbreviations(text: str) -> str:
    """ "M. Dupont" -> "Monsieur Dupont", "p. ex." -> "par exemple", "n° 5" -> "numéro 5"."""
    return ABBREVIATIONS.expand(text)


_CURRENCIES = {
    "€": ("euro", "euros", "centime", "centimes"),
    "$": ("dollar", "dollars", "cent", "cents"),
    "£": ("livre", "livres", "penny", "pence"),
}
_AFTER_RE = re.compile(rf"{_NUMBER}\s?(?P<sym>[€$£])(?!\w)")
_BEFORE_RE = re.compile(rf"(?P<sym>[€$£])\s?{_NUMBER}")


def read_currency(text: str) -> str:
    """ "3 €" -> "trois euros", "3,50 €" -> "trois euros cinquante", "1 €" -> "un euro"."""

    def money(match: re.Match[str]) -> str:
        one, many, _sub_one, _sub_many = _CURRENCIES[match["sym"]]
        amount = numbers.parse_int(match["int"])
        words = "un" if amount == 1 else numbers.cardinal(amount, LANG)
        said = f"{words} {one if amount == 1 else many}"
        cents = int(match["frac"].ljust(2, "0")[:2]) if match["frac"] else 0
        return said + (f" {numbers.cardinal(cents, LANG)}" if cents else "")

    return _BEFORE_RE.sub(money, _AFTER_RE.sub(money, text))


_PERCENT_RE = re.compile(rf"{_NUMBER}\s?%")


def read_percentages(text: str) -> str:
    """ "50 %" -> "cinquante pour cent"."""
    return _PERCENT_RE.sub(lambda m: say_number(m["int"], m["frac"]) + " pour cent", text)


_TIME_RE = re.compile(r"(?<![\w:,])(?P<h>[01]?\d|2[0-3])\s?(?:h|:)\s?(?P<m>[0-5]\d)?(?![\w:])")


def read_times(text: str) -> str:
    """ "10h30" -> "dix heures trente", "1 h" -> "une heure", "14:05" -> "quatorze heures cinq"."""

    def clock(match: re.Match[str]) -> str:
        if ":" in match.group(0) and not match["m"]:
            return match.group(0)
        hour = int(match["h"])
        said = "une heure" if hour == 1 else f"{numbers.cardinal(hour, LANG)} heures"
        minute = int(match["m"]) if match["m"] else 0
        return said + (f" {numbers.cardinal(minute, LANG)}" if minute else "")

    return _TIME_RE.sub(clock, text)


_ISO_DATE_RE = re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")


def read_dates(text: str) -> str:
    """ "1851-03-12" -> "12 mars 1851" (the number rules then read it: "douze mars mille huit cent...")."""

    def iso(match: re.Match[str]) -> str:
        day = int(match["d"])
        return f"{'1er' if day == 1 else day} {MONTHS[int(match['m']) - 1]} {match['y']}"

    return _ISO_DATE_RE.sub(iso, text)


_RANGE_RE = re.compile(r"(?<![\w.,-])(?P<a>\d+)-(?P<b>\d+)(?![\w-]|,\d)")


def read_ranges(text: str) -> str:
    """ "12-14" -> "douze à quatorze"; a descending pair ("3-2", a score) is left alone."""

    def span(match: re.Match[str]) -> str:
        first, second = int(match["a"]), int(match["b"])
        if second <= first:
            return match.group(0)
        return f"{say_number(match['a'])} à {say_number(match['b'])}"

    return _RANGE_RE.sub(span, text)


# Roman ordinals only in I, V and X ("XIXe", "Ier"): "Le", "De", "Me" are words, not 50th, 500th, 1000th.
_ORDINAL_RE = re.compile(r"(?<![\w.,])(?P<n>\d+|[IVX]+)(?P<suf>er|re|ère|e|ème|è|nd|nde|de)\b")


def read_ordinals(text: str) -> str:
    """ "1er" -> "premier", "1re" -> "première", "2e" -> "deuxième", "XIXe" -> "dix-neuvième", "Ier" ->
    "premier"."""

    def ordinal(match: re.Match[str]) -> str:
        raw, suffix = match["n"], match["suf"]
        value = int(raw) if raw.isdigit() else roman_to_int(raw)
        if (
            value is None
            or (suffix in ("er", "re", "ère") and value != 1)
            or (suffix in ("nd", "nde", "de") and value != 2)
        ):
            return match.group(0)
        if value == 1 and suffix in ("er", "e", "ème"):
            said = "premier"
        elif value == 1:
            said = "première"
        elif suffix in ("nd", "nde", "de"):
            said = "second" if suffix == "nd" else "seconde"
        else:
            said = numbers.ordinal(value, LANG)
        return capitalise_like(raw, said) if raw.isdigit() else said

    return _ORDINAL_RE.sub(ordinal, text)


def read_roman(text: str) -> str:
    """ "Chapitre XIV" -> "Chapitre quatorze", "Louis XIV" -> "Louis quatorze", "François I" -> "François
    premier"; the pronoun-like "I" of other languages is never read."""
    return read_roman_numerals(text, ROMAN)


_SIGNED_NUMBER_RE = re.compile(rf"(?P<minus>(?<![\w-])-)?{_NUMBER}")


def read_numbers(text: str) -> str:
    """Every number left: "1 851" -> "mille huit cent cinquante et un", "-5" -> "moins cinq"."""

    def number(match: re.Match[str]) -> str:
        return ("moins " if match["minus"] else "") + say_number(match["int"], match["frac"])

    return _SIGNED_NUMBER_RE.sub(number, text)


RULES = LanguageRules(
    code=LANG,
    name="French",
    rules=(
        ("abbreviations", expand_abbreviations),
        ("currency", read_currency),
        ("percentages", read_percentages),
        ("times", read_times),
        ("dates", read_dates),
        ("ranges", read_ranges),
        ("ordinals", read_ordinals),
        ("roman numerals", read_roman),
        ("numbers", read_numbers),
    ),
)
