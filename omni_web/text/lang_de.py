"""German: "Dr. Müller" -> "Doktor Müller", "z. B." -> "zum Beispiel", "am 3. Mai 1851" -> "am dritten
Mai achtzehnhunderteinundfünfzig", "Heinrich VIII." -> "Heinrich der Achte", "3,50 €" -> "drei Euro
fünfzig", "10:30 Uhr" -> "zehn Uhr dreißig". Each rule is one function; ``RULES`` runs them in order.
"""

from __future__ import annotations

import re

from omni_web.text import numbers
from omni_web.text.roman import RomanContext, read_roman_numerals, roman_to_int
from omni_web.text.rules import Abbreviation, AbbreviationTable, LanguageRules, When, number_regex

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
    "read_years",
    "say_number",
]

LANG = "de"
_NUMBER = number_regex(group=".", decimal=",")
MONTHS = "Januar Februar März April Mai Juni Juli August September Oktober November Dezember".split()

ABBREVIATIONS = AbbreviationTable(
    [
        Abbreviation("Dr.", "Doktor", When.BEFORE_NAME),
        Abbreviation("Prof.", "Professor", When.BEFORE_NAME),
        Abbreviation("Hr.", "Herr", When.BEFORE_NAME),
        Abbreviation("Hrn.", "Herrn", When.BEFORE_NAME),
        Abbreviation("Fr.", "Frau", When.BEFORE_NAME),
        Abbreviation("St.", "Sankt", When.BEFORE_NAME),
        Abbreviation("Str.", "Straße", When.AFTER_NAME),
        Abbreviation("z. B.", "zum Beispiel"),
        Abbreviation("z.B.", "zum Beispiel"),
        Abbreviation("Z. B.", "Zum Beispiel"),
        Abbreviation("d. h.", "das heißt"),
        Abbreviation("d.h.", "das heißt"),
        Abbreviation("u. a.", "unter anderem"),
        Abbreviation("u.a.", "unter anderem"),
        Abbreviation("z. T.", "zum Teil"),
        Abbreviation("z.T.", "zum Teil"),
        Abbreviation("usw.", "und so weiter", ends=True),
        Abbreviation("etc.", "et cetera", ends=True),
        Abbreviation("bzw.", "beziehungsweise"),
        Abbreviation("ca.", "circa"),
        Abbreviation("vgl.", "vergleiche"),
        Abbreviation("Vgl.", "Vergleiche"),
        Abbreviation("evtl.", "eventuell"),
        Abbreviation("ggf.", "gegebenenfalls"),
        Abbreviation("inkl.", "inklusive"),
        Abbreviation("Jh.", "Jahrhundert", ends=True),
        Abbreviation("v. Chr.", "vor Christus", ends=True),
        Abbreviation("n. Chr.", "nach Christus", ends=True),
        Abbreviation("Mio.", "Millionen"),
        Abbreviation("Mrd.", "Milliarden"),
        Abbreviation("Nr.", "Nummer", When.BEFORE_NUMBER),
        Abbreviation("S.", "Seite", When.BEFORE_NUMBER),
        Abbreviation("Bd.", "Band", When.BEFORE_NUMBER),
        Abbreviation("Kap.", "Kapitel", When.BEFORE_NUMBER),
    ]
)
_REGNAL_NAMES = frozenset(
    """
    Heinrich Friedrich Wilhelm Karl Ludwig Otto Maximilian Leopold Joseph Josef Rudolf Sigismund
    Albrecht Konrad Ferdinand Franz Philipp Georg Johann Johannes Elisabeth Maria Katharina Peter
    Paul Pius Leo Gregor Benedikt Klemens Innozenz Urban Bonifatius Alexander Nikolaus Eduard
    Richard Ludwig Napoleon Ptolemaios Ramses Viktoria
    """.split()
)
ROMAN = RomanContext(
    keywords=frozenset("kapitel teil buch band akt szene abschnitt gesang brief artikel lektion".split()),
    regnal_names=_REGNAL_NAMES,
    regnal=lambda name, n: (
        ("die " if name in {"Elisabeth", "Maria", "Katharina", "Viktoria"} else "der ")
        + numbers.ordinal(n, LANG).capitalize()
    ),
    cardinal=lambda n: numbers.cardinal(n, LANG),
    not_before=frozenset("Er Sie Es Wir Ihr Ich Du Der Die Das Ein Eine Und Oder Aber".split()),
)
# Nouns after which "3." is an ordinal ("19. Jahrhundert", "3. Mai", "2. Weltkrieg").
_ORDINAL_NOUNS = frozenset(
    [
        *MONTHS,
        "Jahrhundert",
        "Jahrhunderts",
        "Jahrtausend",
        "Kapitel",
        "Auflage",
        "Mal",
        "Platz",
        "Stock",
        "Klasse",
        "Band",
        "Teil",
        "Akt",
        "Buch",
        "Weltkrieg",
        "Geburtstag",
        "Jahrestag",
        "Liga",
        "Reihe",
    ]
)
# After these a German ordinal takes -n ("am dritten Mai"); after der/die/das it stays ("der dritte").
_WEAK_N = frozenset("am im vom zum beim dem den des Am Im Vom Zum Beim Dem Den Des".split())
_WEAK = frozenset("der die das Der Die Das".split())


def say_number(integer: str, fraction: str | None = None) -> str:
    """ "1.851" -> "eintausendachthunderteinundfünfzig", "3,14" -> "drei Komma eins vier"."""
    if fraction is None and len(integer) > 1 and integer.startswith("0"):
        return numbers.digit_by_digit(integer, LANG)
    words = numbers.cardinal(numbers.parse_int(integer), LANG)
    if fraction:
        words += " Komma " + numbers.digit_by_digit(fraction, LANG)
    return words


def expand_abbreviations(text: str) -> str:
    """ "Dr. Müller" -> "Doktor Müller", "z. B." -> "zum Beispiel", "S. 12" -> "Seite 12"."""
    return ABBREVIATIONS.expand(text)


_CURRENCIES = {"€": "Euro", "EUR": "Euro", "$": "Dollar", "£": "Pfund", "DM": "Mark"}
_AFTER_RE = re.compile(rf"{_NUMBER}\s?(?P<sym>€|EUR\b|\$|£|DM\b)")
_BEFORE_RE = re.compile(rf"(?P<sym>€|\$|£)\s?{_NUMBER}")


def read_currency(text: str) -> str:
    """ "3 €" -> "drei Euro", "3,50 €" -> "drei Euro fünfzig", "1 €" -> "ein Euro"."""

    def money(match: re.Match[str]) -> str:
        amount = numbers.parse_int(match["int"])
        words = "ein" if amount == 1 else numbers.cardinal(amount, LANG)
        cents = int(match["frac"].ljust(2, "0")[:2]) if match["frac"] else 0
        return f"{words} {_CURRENCIES[match['sym']]}" + (f" {numbers.cardinal(cents, LANG)}" if cents else "")

    return _BEFORE_RE.sub(money, _AFTER_RE.sub(money, text))


_PERCENT_RE = re.compile(rf"{_NUMBER}\s?%")


def read_percentages(text: str) -> str:
    """ "50 %" -> "fünfzig Prozent"."""
    return _PERCENT_RE.sub(lambda m: say_number(m["int"], m["frac"]) + " Prozent", text)


_CLOCK_RE = re.compile(
    r"(?<![\w:.,])(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d)(?![\d:])(?:\s?Uhr\b)?|\.(?P<m2>[0-5]\d)\s?Uhr\b|\s?Uhr\b)"
)


def read_times(text: str) -> str:
    """ "10:30 Uhr" -> "zehn Uhr dreißig", "10.30 Uhr" likewise, "1 Uhr" -> "ein Uhr"."""

    def clock(match: re.Match[str]) -> str:
        hour = int(match["h"])
        minute = match["m"] or match["m2"]
        said = f"{'ein' if hour == 1 else numbers.cardinal(hour, LANG)} Uhr"
        return said + (f" {numbers.cardinal(int(minute), LANG)}" if minute and int(minute) else "")

    return _CLOCK_RE.sub(clock, text)


_ISO_DATE_RE = re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")


def read_dates(text: str) -> str:
    """ "1851-03-12" -> "12. März 1851" (the ordinal and year rules then read it)."""
    return _ISO_DATE_RE.sub(lambda m: f"{int(m['d'])}. {MONTHS[int(m['m']) - 1]} {m['y']}", text)


_RANGE_RE = re.compile(r"(?<![\w.,-])(?P<a>\d+)-(?P<b>\d+)(?![\w-]|,\d)")


def read_ranges(text: str) -> str:
    """ "12-14" -> "zwölf bis vierzehn", "1914-1918" -> "neunzehnhundertvierzehn bis
    neunzehnhundertachtzehn"; a descending pair is left alone."""

    def span(match: re.Match[str]) -> str:
        first, second = int(match["a"]), int(match["b"])
        if second <= first:
            return match.group(0)
        if 1100 <= first <= 1999 and 1100 <= second <= 2099:
            return f"{numbers.year(first, LANG)} bis {numbers.year(second, LANG)}"
        return f"{say_number(match['a'])} bis {say_number(match['b'])}"

    return _RANGE_RE.sub(span, text)


_ROMAN_ORDINAL_RE = re.compile(r"(?<![\w.])(?P<r>[IVXLCDM]+)\.(?=\s+(?P<next>[^\W\d_]+))")
_REGNAL_STOP_RE = re.compile(r"\b(?P<name>[^\W\d_]+)\s+(?P<r>[IVXLCDM]+)\.(?=\s+[a-zäöüß])")


def read_roman(text: str) -> str:
    """ "Kapitel XIV" -> "Kapitel vierzehn", "Heinrich VIII." -> "Heinrich der Achte", "XIX. Jahrhundert"
    -> "19. Jahrhundert" (for the ordinal rule)."""

    def before_noun(match: re.Match[str]) -> str:
        value = roman_to_int(match["r"])
        return f"{value}." if value is not None and match["next"] in _ORDINAL_NOUNS else match.group(0)

    def regnal_stop(match: re.Match[str]) -> str:  # "Heinrich VIII. war": the period is the ordinal's
        return match.group(0)[:-1] if match["name"] in _REGNAL_NAMES else match.group(0)

    text = _ROMAN_ORDINAL_RE.sub(before_noun, text)
    text = _REGNAL_STOP_RE.sub(regnal_stop, text)
    return read_roman_numerals(text, ROMAN)


_ORDINAL_RE = re.compile(r"(?:(?P<art>\b[^\W\d_]+)\s+)?(?<![\w.,])(?P<n>\d{1,3})\.(?=\s+(?P<next>[^\W\d_]+))")


def read_ordinals(text: str) -> str:
    """ "am 3. Mai" -> "am dritten Mai", "der 2. Weltkrieg" -> "der zweite Weltkrieg", "3. Mai" ->
    "dritter Mai"; "Er kam 1851. Dann" stays (a number ending a sentence)."""

    def ordinal(match: re.Match[str]) -> str:
        article, following = match["art"], match["next"]
        if following not in _ORDINAL_NOUNS and article not in _WEAK_N | _WEAK:
            return match.group(0)
        base = numbers.ordinal(int(match["n"]), LANG)
        if article in _WEAK_N:
            base += "n"
        elif article not in _WEAK and following in MONTHS:
            base += "r"
        return (article + " " if article else "") + base

    return _ORDINAL_RE.sub(ordinal, text)


_YEAR_RE = re.compile(r"(?<![\w.,:-])(?P<y>1[1-9]\d\d)(?![\w%:.,-]\w|[\w%])(?P<after>\s+[^\W\d_]+)?")


def read_years(text: str) -> str:
    """ "1851" -> "achtzehnhunderteinundfünfzig" unless a noun follows ("1851 Schafe" stays a number)."""

    def year(match: re.Match[str]) -> str:
        after = match["after"] or ""
        if after.strip()[:1].isupper() and after.strip() not in _ORDINAL_NOUNS:
            return match.group(0)
        return numbers.year(int(match["y"]), LANG) + after

    return _YEAR_RE.sub(year, text)


_SIGNED_NUMBER_RE = re.compile(rf"(?P<minus>(?<![\w-])-)?{_NUMBER}")


def read_numbers(text: str) -> str:
    """Every number left: "1.000" -> "eintausend", "-5" -> "minus fünf"."""

    def number(match: re.Match[str]) -> str:
        return ("minus " if match["minus"] else "") + say_number(match["int"], match["frac"])

    return _SIGNED_NUMBER_RE.sub(number, text)


RULES = LanguageRules(
    code=LANG,
    name="German",
    rules=(
        ("abbreviations", expand_abbreviations),
        ("currency", read_currency),
        ("percentages", read_percentages),
        ("times", read_times),
        ("dates", read_dates),
        ("ranges", read_ranges),
        ("roman numerals", read_roman),
        ("ordinals", read_ordinals),
        ("years", read_years),
        ("numbers", read_numbers),
    ),
)
