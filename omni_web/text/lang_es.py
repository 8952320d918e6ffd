"""Spanish: "Sr. García" -> "Señor García", "Felipe II" -> "Felipe segundo", "Alfonso XIII" -> "Alfonso
trece", "siglo XIX" -> "siglo diecinueve", "1.º" -> "primero", "3,50 €" -> "tres euros con cincuenta
céntimos", "21 años" -> "veintiún años". Each rule is one function; ``RULES`` runs them in order.
"""

from __future__ import annotations

import re

from omni_web.text import numbers
from omni_web.text.roman import RomanContext, read_roman_numerals
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
    "say_number",
]

LANG = "es"
_NUMBER = number_regex(group=".", decimal=",")
MONTHS = "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre".split()

ABBREVIATIONS = AbbreviationTable(
    [
        Abbreviation("Sr.", "señor", When.BEFORE_NAME),
        Abbreviation("Sra.", "señora", When.BEFORE_NAME),
        Abbreviation("Srta.", "señorita", When.BEFORE_NAME),
        Abbreviation("Dr.", "doctor", When.BEFORE_NAME),
        Abbreviation("Dra.", "doctora", When.BEFORE_NAME),
        Abbreviation("Dña.", "doña", When.BEFORE_NAME),
        Abbreviation("Sto.", "santo", When.BEFORE_NAME),
        Abbreviation("Sta.", "santa", When.BEFORE_NAME),
        Abbreviation("Ud.", "usted"),
        Abbreviation("Uds.", "ustedes"),
        Abbreviation("Vd.", "usted"),
        Abbreviation("etc.", "etcétera", ends=True),
        Abbreviation("p. ej.", "por ejemplo"),
        Abbreviation("aprox.", "aproximadamente"),
        Abbreviation("EE. UU.", "Estados Unidos"),
        Abbreviation("a. C.", "antes de Cristo", ends=True),
        Abbreviation("d. C.", "después de Cristo", ends=True),
        Abbreviation("pág.", "página", When.BEFORE_NUMBER),
        Abbreviation("págs.", "páginas", When.BEFORE_NUMBER),
        Abbreviation("p.", "página", When.BEFORE_NUMBER),
        Abbreviation("pp.", "páginas", When.BEFORE_NUMBER),
        Abbreviation("núm.", "número", When.BEFORE_NUMBER),
        Abbreviation("n.º", "número", When.BEFORE_NUMBER),
        Abbreviation("nº", "número", When.BEFORE_NUMBER),
        Abbreviation("cap.", "capítulo", When.BEFORE_NUMBER),
        Abbreviation("vol.", "volumen", When.BEFORE_NUMBER),
    ]
)
_FEMININE_NAMES = frozenset("Isabel Juana María Catalina Cristina Victoria Leonor Urraca Berenguela".split())
ROMAN = RomanContext(
    keywords=frozenset(
        "capítulo libro parte tomo acto escena canto volumen sección siglo artículo carta lección".split()
    ),
    regnal_names=frozenset(
        """
        Felipe Carlos Fernando Alfonso Isabel Juan Enrique Pedro Sancho Jaime Juana Luis Pío León
        Benedicto Gregorio Francisco Jorge Eduardo Guillermo Napoleón María Catalina Ramiro García
        Ordoño Bermudo Martín Clemente Inocencio Urbano Pablo Pablo Alejandro Nicolás Federico
        Enrique Leopoldo José Victoria Ricardo Ptolomeo Ramsés
        """.split()
    ),
    regnal=lambda name, n: _regnal(name, n),
    cardinal=lambda n: numbers.cardinal(n, LANG),
    not_before=frozenset("El La Los Las Un Una Y O Pero Yo Tú Él Ella De Del".split()),
)
# Before these words "uno" keeps its full form ("el 1 de mayo" -> "el uno de mayo").
_NO_APOCOPE = frozenset("de del a al y o u e en con por para que como".split())


def _feminine(word: str) -> str:
    return word[:-1] + "a" if word.endswith("o") else word


def _regnal(name: str, value: int) -> str:
    """Ordinals up to ten ("Felipe segundo", "Isabel segunda"), cardinals above ("Alfonso trece")."""
    if value > 10:
        return numbers.cardinal(value, LANG)
    said = numbers.ordinal(value, LANG)
    return _feminine(said) if name in _FEMININE_NAMES else said


def say_number(integer: str, fraction: str | None = None) -> str:
    """ "1.851" -> "mil ochocientos cincuenta y uno", "3,14" -> "tres coma catorce"."""
    if fraction is None and len(integer) > 1 and integer.startswith("0"):
        return numbers.digit_by_digit(integer, LANG)
    words = numbers.cardinal(numbers.parse_int(integer), LANG)
    if fraction:
        tail = (
            numbers.digit_by_digit(fraction, LANG)
            if fraction.startswith("0") or len(fraction) > 3
            else numbers.cardinal(int(fraction), LANG)
        )
        words += " coma " + tail
    return words


def _apocope(words: str) -> str:
    """ "uno" -> "un", "veintiuno" -> "veintiún" before a noun."""
    if words.endswith("veintiuno"):
        return words[: -len("veintiuno")] + "veintiún"
    if words.endswith("uno"):
        return words[:-3] + "un"
    return words


def expand_abbreviations(text: str) -> str:
    """ "Sr. García" -> "Señor García", "p. ej." -> "por ejemplo", "pág. 12" -> "página 12"."""
    return ABBREVIATIONS.expand(text)


_CURRENCIES = {
    "€": ("euro", "euros", "céntimo", "céntimos"),
    "$": ("dólar", "dólares", "centavo", "centavos"),
    "£": ("libra", "libras", "penique", "peniques"),
}
_AFTER_RE = re.compile(rf"{_NUMBER}\s?(?P<sym>[€$£])(?!\w)")
_BEFORE_RE = re.compile(rf"(?P<sym>[€$£])\s?{_NUMBER}")


def read_currency(text: str) -> str:
    """ "3 €" -> "tres euros", "3,50 €" -> "tres euros con cincuenta céntimos", "1 €" -> "un euro"."""

    def money(match: re.Match[str]) -> str:
        one, many, sub_one, sub_many = _CURRENCIES[match["sym"]]
        amount = numbers.parse_int(match["int"])
        said = f"{_apocope(numbers.cardinal(amount, LANG))} {one if amount == 1 else many}"
        cents = int(match["frac"].ljust(2, "0")[:2]) if match["frac"] else 0
        if cents:
            said += f" con {_apocope(numbers.cardinal(cents, LANG))} {sub_one if cents == 1 else sub_many}"
        return said

    return _BEFORE_RE.sub(money, _AFTER_RE.sub(money, text))


_PERCENT_RE = re.compile(rf"{_NUMBER}\s?%")


def read_percentages(text: str) -> str:
    """ "50 %" -> "cincuenta por ciento"."""
    return _PERCENT_RE.sub(lambda m: say_number(m["int"], m["frac"]) + " por ciento", text)


_CLOCK_RE = re.compile(r"(?<![\w:.,])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?![\d:])")


def read_times(text: str) -> str:
    """ "10:30" -> "diez y media", "1:15" -> "una y cuarto", "9:00" -> "nueve en punto", "9:20" -> "nueve y
    veinte"."""

    def clock(match: re.Match[str]) -> str:
        hour, minute = int(match["h"]), int(match["m"])
        said = "una" if hour == 1 else numbers.cardinal(hour, LANG)
        if minute == 0:
            return said + " en punto"
        tail = {15: "cuarto", 30: "media"}.get(minute) or numbers.cardinal(minute, LANG)
        return f"{said} y {tail}"

    return _CLOCK_RE.sub(clock, text)


_ISO_DATE_RE = re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])(?![\w-])")


def read_dates(text: str) -> str:
    """ "1851-03-12" -> "12 de marzo de 1851" (the number rule then reads it)."""
    return _ISO_DATE_RE.sub(lambda m: f"{int(m['d'])} de {MONTHS[int(m['m']) - 1]} de {m['y']}", text)


_RANGE_RE = re.compile(r"(?<![\w.,-])(?P<a>\d+)-(?P<b>\d+)(?![\w-]|,\d)")


def read_ranges(text: str) -> str:
    """ "12-14" -> "doce a catorce"; a descending pair is left alone."""

    def span(match: re.Match[str]) -> str:
        if int(match["b"]) <= int(match["a"]):
            return match.group(0)
        return f"{say_number(match['a'])} a {say_number(match['b'])}"

    return _RANGE_RE.sub(span, text)


_ORDINAL_RE = re.compile(r"(?<![\w.,])(?P<n>\d+)(?:\.?(?P<suf>º|ª|°|er)(?!\w))")


def read_ordinals(text: str) -> str:
    """ "1.º" -> "primero", "2.ª" -> "segunda", "1.er" -> "primer", "3er" -> "tercer"."""

    def ordinal(match: re.Match[str]) -> str:
        said = numbers.ordinal(int(match["n"]), LANG)
        suffix = match["suf"]
        if suffix == "ª":
            return " ".join(_feminine(word) for word in said.split())
        if suffix == "er":
            return said[:-1] if said.endswith("o") else said
        return said

    return _ORDINAL_RE.sub(ordinal, text)


def read_roman(text: str) -> str:
    """ "Capítulo XIV" -> "Capítulo catorce", "Felipe II" -> "Felipe segundo", "siglo XIX" -> "siglo
    diecinueve"."""
    return read_roman_numerals(text, ROMAN)


_SIGNED_NUMBER_RE = re.compile(rf"(?P<minus>(?<![\w-])-)?{_NUMBER}(?P<after>\s+[^\W\d_]+)?")


def read_numbers(text: str) -> str:
    """Every number left: "1.000" -> "mil", "-5" -> "menos cinco", "21 años" -> "veintiún años"."""

    def number(match: re.Match[str]) -> str:
        said = say_number(match["int"], match["frac"])
        after = match["after"] or ""
        if after and not match["frac"] and after.strip().lower() not in _NO_APOCOPE:
            said = _apocope(said)
        return ("menos " if match["minus"] else "") + said + after

    return _SIGNED_NUMBER_RE.sub(number, text)


RULES = LanguageRules(
    code=LANG,
    name="Spanish",
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
