"""English: the rules that turn written English into what a narrator says.

"Dr. Watson" -> "Doctor Watson", "£3 10s." -> "three pounds ten shillings", "1851" -> "eighteen
fifty-one", "pp. 12-14" -> "pages twelve to fourteen", "Henry VIII" -> "Henry the Eighth",
"World War II" -> "World War two". Each rule is one function; ``RULES`` runs them in order.
"""

from __future__ import annotations

import re

from omni_web.text import numbers
from omni_web.text.roman import RomanContext, read_roman_numerals
from omni_web.text.rules import (
    Abbreviation,
    AbbreviationTable,
    LanguageRules,
    When,
    ends_sentence,
    number_regex,
)

__all__ = [
    "RULES",
    "expand_abbreviations",
    "read_currency",
    "read_dates",
    "read_decades",
    "read_fractions",
    "read_numbers",
    "read_ordinals",
    "read_percentages",
    "read_ranges",
    "read_roman",
    "read_symbols",
    "read_times",
    "read_years",
    "say_number",
]

LANG = "en"
_NUMBER = number_regex(group=",", decimal=".")
MONTHS = (
    "January February March April May June July August September October November December".split()
)
_MONTH = "|".join(MONTHS)

ABBREVIATIONS = AbbreviationTable(
    [
        Abbreviation("Mr.", "Mister"),
        Abbreviation("Mr", "Mister", When.BEFORE_NAME),
        Abbreviation("Mrs.", "Missus"),
        Abbreviation("Mrs", "Missus", When.BEFORE_NAME),
        Abbreviation("Ms.", "Miz"),
        Abbreviation("Messrs.", "Messieurs"),
        Abbreviation("Dr.", "Drive", When.AFTER_NAME),
        Abbreviation("Dr.", "Doctor"),
        Abbreviation("Dr", "Doctor", When.BEFORE_NAME),
        Abbreviation("St.", "Street", When.AFTER_NAME),
        Abbreviation("St.", "Saint", When.BEFORE_NAME),
        Abbreviation("St", "Saint", When.BEFORE_NAME),
        Abbreviation("Mt.", "Mount", When.BEFORE_NAME),
        Abbreviation("Ft.", "Fort", When.BEFORE_NAME),
        Abbreviation("Prof.", "Professor"),
        Abbreviation("Capt.", "Captain"),
        Abbreviation("Col.", "Colonel"),
        Abbreviation("Gen.", "General", When.BEFORE_NAME),
        Abbreviation("Lt.", "Lieutenant"),
        Abbreviation("Sgt.", "Sergeant"),
        Abbreviation("Rev.", "Reverend", When.BEFORE_NAME),
        Abbreviation("Hon.", "Honourable", When.BEFORE_NAME),
        Abbreviation("Gov.", "Governor", When.BEFORE_NAME),
        Abbreviation("Jr.", "Junior"),
        Abbreviation("Sr.", "Senior"),
        Abbreviation("Esq.", "Esquire"),
        Abbreviation("e.g.", "for example"),
        Abbreviation("i.e.", "that is"),
        Abbreviation("etc.", "et cetera", ends=True),
        Abbreviation("&c.", "et cetera", ends=True),
        Abbreviation("vs.", "versus"),
        Abbreviation("viz.", "namely"),
        Abbreviation("cf.", "compare"),
        Abbreviation("approx.", "approximately"),
        Abbreviation("a.m.", "AM", ends=True),
        Abbreviation("p.m.", "PM", ends=True),
        Abbreviation("A.M.", "AM", ends=True),
        Abbreviation("P.M.", "PM", ends=True),
        Abbreviation("c.", "circa", When.BEFORE_NUMBER),
        Abbreviation("ca.", "circa", When.BEFORE_NUMBER),
        Abbreviation("No.", "Number", When.BEFORE_NUMBER),
        Abbreviation("no.", "number", When.BEFORE_NUMBER),
        Abbreviation("Nos.", "Numbers", When.BEFORE_NUMBER),
        Abbreviation("nos.", "numbers", When.BEFORE_NUMBER),
        Abbreviation("p.", "page", When.BEFORE_NUMBER),
        Abbreviation("pp.", "pages", When.BEFORE_NUMBER),
        Abbreviation("vol.", "volume", When.BEFORE_NUMBER),
        Abbreviation("Vol.", "Volume", When.BEFORE_NUMBER),
        Abbreviation("ch.", "chapter", When.BEFORE_NUMBER),
        Abbreviation("chap.", "chapter", When.BEFORE_NUMBER),
        Abbreviation("fig.", "figure", When.BEFORE_NUMBER),
        Abbreviation("Fig.", "Figure", When.BEFORE_NUMBER),
        Abbreviation("U.S.", "US"),
        Abbreviation("U.K.", "UK"),
        Abbreviation("A.D.", "AD"),
        Abbreviation("B.C.", "BC"),
    ]
)

# After a four-digit number, these words still let it be a year ("in 1851 the", "1851 was").
_YEAR_FOLLOWERS = frozenset(
    """
    a an and or but nor the in on at to of for with by from was were had has is saw brought when
    while as that which who he she it they we i you his her their its there this these those until
    till before after during through onwards onward ad bc ce bce
    """.split()
)
_REGNAL_NAMES = frozenset(
    """
    Henry Elizabeth Charles James George William Edward Richard Louis Philip Peter Catherine
    Napoleon Alexander Nicholas Frederick Francis John Mary Victoria Anne Stephen Pius Leo Gregory
    Innocent Boniface Benedict Clement Urban Paul Ferdinand Isabella Ivan Sixtus Otto Wilhelm
    Constantine Rudolf Leopold Joseph Gustav Gustavus Christian Olaf Harald Haakon Eric Robert
    David Alfonso Felipe Juan Carlos Pedro Manuel Amadeus Umberto Victor Emmanuel Ptolemy
    Ramesses Rameses Thutmose Amenhotep Darius Xerxes Artaxerxes Antiochus Cyrus Selim Suleiman
    Mehmed Murad Mahmud Ahmed Hadrian Julius Marcellus Pope
    """.split()
)
_NOT_BEFORE_NUMERAL = frozenset(
    "I A An And As At But By For From He Her His If In It Me My No Not Of On Or She So The Then "
    "They This To We What When Who Why With You".split()
)

ROMAN = RomanContext(
    keywords=frozenset(
        """
        chapter book part volume vol act scene canto section letter psalm appendix stave article
        lesson lecture phase round tome epistle
        """.split()
    ),
    regnal_names=_REGNAL_NAMES,
    regnal=lambda _name, n: "the " + numbers.ordinal(n, LANG).capitalize(),
    cardinal=lambda n: numbers.cardinal(n, LANG),
    not_before=_NOT_BEFORE_NUMERAL,
)


def say_number(integer: str, fraction: str | None = None) -> str:
    """A written number ("1,851", "3.14", "007") in words."""
    if fraction is None and len(integer) > 1 and integer.startswith("0"):
        return numbers.digit_by_digit(integer, LANG)
    words = numbers.cardinal(numbers.parse_int(integer), LANG)
    if fraction:
        words += " point " + numbers.digit_by_digit(fraction, LANG)
    return words


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def expand_abbreviations(text: str) -> str:
    """ "Dr. Watson" -> "Doctor Watson", "e.g." -> "for example", "pp. 12" -> "pages 12"."""
    return ABBREVIATIONS.expand(text)


_CURRENCIES = {
    "£": ("pound", "pounds", "penny", "pence"),
    "$": ("dollar", "dollars", "cent", "cents"),
    "€": ("euro", "euros", "cent", "cents"),
    "¥": ("yen", "yen", "sen", "sen"),
}
_SCALES = {
    "thousand": "thousand",
    "million": "million",
    "billion": "billion",
    "trillion": "trillion",
    "m": "million",
    "bn": "billion",
}
_MONEY_RE = re.compile(
    rf"(?P<sym>[£$€¥])\s?{_NUMBER}(?:\s?(?P<scale>thousand|million|billion|trillion|m|bn)\b)?"
    r"(?:,?\s+(?P<s>1?\d)s\.?(?![\w]))?(?:,?\s+(?P<d>1?\d)(?P<half>½)?d\.?(?![\w]))?"
)
_OLD_MONEY_RE = re.compile(
    r"(?<![\w.£])(?P<s>1?\d)s\.?\s+(?P<d>1?\d)(?P<half>½)?d\.?(?!\w)"
    r"|(?<![\w.£])(?P<s2>1?\d)s\.(?=\s|$)|(?<![\w.£])(?P<d2>1?\d)(?P<half2>½)?d\.(?=\s|$)"
)
_SMALL_COIN_RE = re.compile(r"(?<![\w.])(?P<n>\d+)(?P<unit>p|¢)(?!\w)")


def _units(count: int, singular: str, plural: str) -> str:
    return f"{numbers.cardinal(count, LANG)} {singular if count == 1 else plural}"


def _shillings_pence(shillings: str | None, pence: str | None, half: str | None) -> list[str]:
    parts = []
    if shillings:
        parts.append(_units(int(shillings), "shilling", "shillings"))
    if pence:
        words = _units(int(pence), "penny", "pence")
        parts.append(
            words.replace(" pence", " and a half pence").replace(" penny", " and a half pence")
            if half
            else words
        )
    return parts


def _join_money(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else " ".join(parts[:-1]) + " and " + parts[-1]


def read_currency(text: str) -> str:
    """ "£3 10s." -> "three pounds ten shillings", "$3.50" -> "three dollars and fifty cents"."""

    def money(match: re.Match[str]) -> str:
        one, many, sub_one, sub_many = _CURRENCIES[match["sym"]]
        integer, fraction, scale = match["int"], match["frac"], match["scale"]
        if scale:
            spoken = f"{say_number(integer, fraction)} {_SCALES[scale]} {many}"
        else:
            amount = numbers.parse_int(integer)
            parts = [f"{numbers.cardinal(amount, LANG)} {one if amount == 1 else many}"]
            if fraction and int(fraction.ljust(2, "0")[:2]):
                parts.append(_units(int(fraction.ljust(2, "0")[:2]), sub_one, sub_many))
            old = _shillings_pence(match["s"], match["d"], match["half"])
            if old:  # "three pounds ten shillings and sixpence": "and" only before the last coin
                parts = [" ".join(parts + old[:-1]), old[-1]] if match["d"] else [" ".join(parts + old)]
            spoken = _join_money(parts)
        return spoken + _stop(text, match)

    def old_money(match: re.Match[str]) -> str:
        parts = _shillings_pence(
            match["s"] or match["s2"], match["d"] or match["d2"], match["half"] or match["half2"]
        )
        return _join_money(parts) + _stop(text, match)

    def coin(match: re.Match[str]) -> str:
        count = int(match["n"])
        return _units(count, "penny", "pence") if match["unit"] == "p" else _units(count, "cent", "cents")

    text = _MONEY_RE.sub(money, text)
    text = _OLD_MONEY_RE.sub(old_money, text)
    return _SMALL_COIN_RE.sub(coin, text)


def _stop(text: str, match: re.Match[str]) -> str:
    """Keep a sentence's full stop that the abbreviation's period stood for ("cost 10s.")."""
    return "." if match.group(0).endswith(".") and ends_sentence(text, match.end()) else ""


_PERCENT_RE = re.compile(rf"{_NUMBER}\s?%")


def read_percentages(text: str) -> str:
    """ "50%" -> "fifty percent", "3.5 %" -> "three point five percent"."""
    return _PERCENT_RE.sub(lambda m: say_number(m["int"], m["frac"]) + " percent", text)


_CLOCK_RE = re.compile(
    r"(?<![\w:.,])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?![\d:])"
    r"(?:\s?(?P<ampm>[ap]\.m\.|[AP]\.M\.|[ap]m\b|[AP]M\b))?"
)
_HOUR_AMPM_RE = re.compile(
    r"(?<![\w:.,])(?P<h>1[0-2]|0?[1-9])\s?(?P<ampm>[ap]\.m\.|[AP]\.M\.|[ap]m\b|[AP]M\b)"
)


def read_times(text: str) -> str:
    """ "10:30" -> "ten thirty", "10:05 p.m." -> "ten oh five PM", "7 a.m." -> "seven AM"."""

    def suffix(match: re.Match[str]) -> str:
        ampm = match["ampm"]
        if not ampm:
            return ""
        spoken = " AM" if ampm[0] in "aA" else " PM"
        return spoken + _stop(text, match)

    def clock(match: re.Match[str]) -> str:
        hour, minute = int(match["h"]), int(match["m"])
        if hour == 0 and minute == 0 and not match["ampm"]:
            return "midnight"
        said = numbers.cardinal(hour, LANG)
        if minute == 0:
            said += "" if match["ampm"] else " o'clock"
        elif minute < 10:
            said += " oh " + numbers.cardinal(minute, LANG)
        else:
            said += " " + numbers.cardinal(minute, LANG)
        return said + suffix(match)

    text = _CLOCK_RE.sub(clock, text)
    return _HOUR_AMPM_RE.sub(lambda m: numbers.cardinal(int(m["h"]), LANG) + suffix(m), text)


_DAY_MONTH_RE = re.compile(
    rf"(?<![\w.,])(?P<d>[12]?\d|3[01])(?:st|nd|rd|th)?\s+(?P<mon>{_MONTH})\b(?:,?\s+(?P<y>\d{{4}})\b)?"
)
_MONTH_DAY_RE = re.compile(
    rf"\b(?P<mon>{_MONTH})\s+(?P<d>[12]?\d|3[01])(?:st|nd|rd|th)?(?![\w:.,]\d|\w)(?:,?\s+(?P<y>\d{{4}})\b)?"
)
_ISO_DATE_RE = re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")


def read_dates(text: str) -> str:
    """ "12 March 1851" -> "the twelfth of March eighteen fifty-one", "March 12, 1851" -> "March twelfth,
    eighteen fifty-one", "1851-03-12" likewise."""

    def day_month(match: re.Match[str]) -> str:
        said = f"the {numbers.ordinal(int(match['d']), LANG)} of {match['mon']}"
        return said + (f" {numbers.year(int(match['y']), LANG)}" if match["y"] else "")

    def month_day(match: re.Match[str]) -> str:
        said = f"{match['mon']} {numbers.ordinal(int(match['d']), LANG)}"
        return said + (f", {numbers.year(int(match['y']), LANG)}" if match["y"] else "")

    def iso(match: re.Match[str]) -> str:
        return (
            f"{MONTHS[int(match['m']) - 1]} {numbers.ordinal(int(match['d']), LANG)}, "
            f"{numbers.year(int(match['y']), LANG)}"
        )

    text = _ISO_DATE_RE.sub(iso, text)
    text = _DAY_MONTH_RE.sub(day_month, text)
    return _MONTH_DAY_RE.sub(month_day, text)


_RANGE_RE = re.compile(
    r"(?<![\w.,-])(?P<a>\d{1,3}(?:,\d{3})+|\d+)-(?P<b>\d{1,3}(?:,\d{3})+|\d+)(?![\w-]|[.,]\d)"
)


def _is_year(value: int) -> bool:
    return 1000 <= value <= 2099


def read_ranges(text: str) -> str:
    """ "12-14" -> "twelve to fourteen", "1914-1918" -> "nineteen fourteen to nineteen eighteen",
    "1914-18" -> "nineteen fourteen to eighteen"; a descending pair ("3-2", a score) is left alone."""

    def span(match: re.Match[str]) -> str:
        if len(match["a"]) == 3 and len(match["b"]) == 4:  # "555-1234" is a telephone number
            return f"{numbers.digit_by_digit(match['a'], LANG)}, {numbers.digit_by_digit(match['b'], LANG)}"
        first, second = numbers.parse_int(match["a"]), numbers.parse_int(match["b"])
        if _is_year(first) and "," not in match["a"]:
            if len(match["b"]) == 2 and second > first % 100:
                return f"{numbers.year(first, LANG)} to {numbers.cardinal(second, LANG)}"
            if _is_year(second) and second > first:
                return f"{numbers.year(first, LANG)} to {numbers.year(second, LANG)}"
        if second <= first:
            return match.group(0)
        return f"{say_number(match['a'])} to {say_number(match['b'])}"

    return _RANGE_RE.sub(span, text)


_FRACTION_RE = re.compile(r"(?<![\w/.,])(?:(?P<whole>\d+)\s)?(?P<n>\d{1,2})/(?P<d>\d{1,2})(?![\w/]|[.,]\d)")
_VULGAR = {
    "½": (1, 2),
    "⅓": (1, 3),
    "⅔": (2, 3),
    "¼": (1, 4),
    "¾": (3, 4),
    "⅛": (1, 8),
    "⅜": (3, 8),
    "⅝": (5, 8),
    "⅞": (7, 8),
}
_VULGAR_RE = re.compile(r"(?:(?P<whole>\d+)\s?)?(?P<v>[½⅓⅔¼¾⅛⅜⅝⅞])")


def _fraction(numerator: int, denominator: int) -> str:
    """ "one half", "three quarters", "two thirds", "five eighths"."""
    name = {2: "half", 4: "quarter"}.get(denominator) or numbers.ordinal(denominator, LANG)
    if numerator != 1:
        name = "halves" if name == "half" else name + "s"
    return f"{numbers.cardinal(numerator, LANG)} {name}"


def read_fractions(text: str) -> str:
    """ "1/2" -> "one half", "3/4" -> "three quarters", "2 ½" -> "two and one half"; "24/7" and dates stay."""

    def written(match: re.Match[str]) -> str:
        numerator, denominator = int(match["n"]), int(match["d"])
        if not 0 < numerator < denominator <= 16:
            return match.group(0)
        whole = f"{numbers.cardinal(int(match['whole']), LANG)} and " if match["whole"] else ""
        return whole + _fraction(numerator, denominator)

    def vulgar(match: re.Match[str]) -> str:
        whole = f"{numbers.cardinal(int(match['whole']), LANG)} and " if match["whole"] else ""
        return whole + _fraction(*_VULGAR[match["v"]])

    return _VULGAR_RE.sub(vulgar, _FRACTION_RE.sub(written, text))


_DECADE_RE = re.compile(r"(?<![\w'’])(?P<y>1[0-9]\d0|20\d0)['’]?s\b|(?<![\w])['’]?(?P<short>[2-9]0)['’]?s\b")


def read_decades(text: str) -> str:
    """ "the 1850s" -> "the eighteen fifties", "the '60s" -> "the sixties"."""

    def decade(match: re.Match[str]) -> str:
        if match["y"]:
            words = numbers.year(int(match["y"]), LANG)
        else:
            words = numbers.cardinal(int(match["short"]), LANG)
        head, _, last = words.rpartition(" ")
        return (head + " " if head else "") + _plural(last)

    return _DECADE_RE.sub(decade, text)


_ORDINAL_RE = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d+)(?:st|nd|rd|th)\b")


def read_ordinals(text: str) -> str:
    """ "3rd" -> "third", "19th-century" -> "nineteenth-century", "21st" -> "twenty-first"."""
    return _ORDINAL_RE.sub(lambda m: numbers.ordinal(numbers.parse_int(m["n"]), LANG), text)


_WORLD_WAR_ONE_RE = re.compile(r"\b(World War|WORLD WAR) I\b(?!['’]\w)")


def read_roman(text: str) -> str:
    """ "CHAPTER XIV" -> "CHAPTER fourteen", "Henry VIII" -> "Henry the Eighth", "World War II" ->
    "World War two", "World War I" -> "World War one"; the pronoun "I" stays ("the book I read")."""
    text = _WORLD_WAR_ONE_RE.sub(r"\1 one", text)
    return read_roman_numerals(text, ROMAN)


_YEAR_RE = re.compile(r"(?<![\w.,:-])(?P<y>1\d\d\d|20\d\d)(?![\w%:-]|[.,]\d)")
_NEXT_WORD_RE = re.compile(r"\s+([^\W\d_]+)")


def read_years(text: str) -> str:
    """ "in 1851" -> "in eighteen fifty-one"; "1851 sheep" stays a number (read as a cardinal)."""

    def year(match: re.Match[str]) -> str:
        nxt = _NEXT_WORD_RE.match(text, match.end())
        if nxt and nxt.group(1).islower() and nxt.group(1) not in _YEAR_FOLLOWERS:
            return match.group(0)
        return numbers.year(int(match["y"]), LANG)

    return _YEAR_RE.sub(year, text)


_SIGNED_NUMBER_RE = re.compile(rf"(?P<minus>(?<![\w-])-)?{_NUMBER}")


def read_numbers(text: str) -> str:
    """Every number left: "1,851" -> "one thousand eight hundred and fifty-one", "-5" -> "minus five",
    "3.14" -> "three point one four", "007" -> "zero zero seven"."""

    def number(match: re.Match[str]) -> str:
        said = say_number(match["int"], match["frac"])
        return ("minus " if match["minus"] else "") + said

    return _SIGNED_NUMBER_RE.sub(number, text)


_SYMBOLS = (
    (re.compile(r"\s*&\s*"), " and "),
    (re.compile(r"°\s?C\b"), " degrees Celsius"),
    (re.compile(r"°\s?F\b"), " degrees Fahrenheit"),
    (re.compile(r"(?<=\d)\s?°"), " degrees"),
    (re.compile(r"§\s?"), "section "),
)


def read_symbols(text: str) -> str:
    """ "Smith & Co." -> "Smith and Co.", "20°C" -> "20 degrees Celsius", "§ 3" -> "section 3"."""
    for pattern, spoken in _SYMBOLS:
        text = pattern.sub(spoken, text)
    return text


RULES = LanguageRules(
    code=LANG,
    name="English",
    rules=(
        ("abbreviations", expand_abbreviations),
        ("symbols", read_symbols),
        ("currency", read_currency),
        ("percentages", read_percentages),
        ("times", read_times),
        ("dates", read_dates),
        ("fractions", read_fractions),
        ("ranges", read_ranges),
        ("decades", read_decades),
        ("ordinals", read_ordinals),
        ("roman numerals", read_roman),
        ("years", read_years),
        ("numbers run into capitals", numbers.part_number_letters),
        ("numbers", read_numbers),
    ),
)
