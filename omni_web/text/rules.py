"""The shape every language's rules share, and helpers the rule modules build on.

A rule is a pure function ``str -> str``. A language is an ordered tuple of named rules: the
order matters (abbreviations before numbers, so "No. 5" is still recognisable; currencies and
times before plain numbers, which would otherwise eat their digits).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from omni_web.text.case import capitalise_like
from omni_web.text.roman import roman_to_int

__all__ = [
    "Abbreviation",
    "AbbreviationTable",
    "LanguageRules",
    "Rule",
    "When",
    "ends_sentence",
    "number_regex",
]

Rule = Callable[[str], str]

# A word starting with an upper-case letter, a digit or an opening quote: what follows a full stop.
_SENTENCE_START_RE = re.compile(r"\s+[\"'(\[«¿¡]*(?=[^\W_])")


@dataclass(frozen=True, slots=True)
class LanguageRules:
    """The normalisation rules of one language, applied in order."""

    code: str  # ISO 639-1, e.g. "en"
    name: str  # "English"
    rules: tuple[tuple[str, Rule], ...]

    def apply(self, text: str) -> str:
        """Run every rule over ``text``."""
        for _name, rule in self.rules:
            text = rule(text)
        return text

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The rules' names, in the order they run."""
        return tuple(name for name, _ in self.rules)


def ends_sentence(text: str, end: int) -> bool:
    """Whether a period just before ``end`` also closes the sentence (end of text, or a capital next)."""
    if end >= len(text):
        return True
    match = _SENTENCE_START_RE.match(text, end)
    if match is None:
        return False
    nxt = text[match.end()]
    return nxt.isupper() or nxt.isdigit()


def number_regex(*, group: str, decimal: str) -> str:
    """A pattern for a written number with groups ``int`` and ``frac``.

    ``group`` is the thousands separator ("," in English, "." in German, " " in French), matched
    only between groups of exactly three digits; ``decimal`` is the decimal mark.
    """
    g, d = re.escape(group), re.escape(decimal)
    return rf"(?<![\w.,])(?P<int>\d{{1,3}}(?:{g}\d{{3}})+|\d+)(?:{d}(?P<frac>\d+))?(?![\d])(?!{d}\d)"


class When(enum.StrEnum):
    """Where an abbreviation is expanded."""

    ALWAYS = "always"
    BEFORE_NAME = "before_name"  # "Dr. Watson", "St. Paul": a capitalised word follows
    AFTER_NAME = "after_name"  # "Baker St.", "Baker St., London": a capitalised word precedes, none follows
    BEFORE_NUMBER = "before_number"  # "No. 5", "p. 12", "pp. 12-14"


@dataclass(frozen=True, slots=True)
class Abbreviation:
    """One written abbreviation and what is said for it.

    ``ends`` marks abbreviations that often close a sentence ("etc."): the period is kept before a
    capital. Any abbreviation keeps its period at the very end of the text ("... Smith Jr.").
    """

    written: str
    spoken: str
    when: When = When.ALWAYS
    ends: bool = False


class AbbreviationTable:
    """A language's abbreviations, matched as whole tokens and case-sensitively."""

    def __init__(self, entries: Iterable[Abbreviation]) -> None:
        self.entries = tuple(entries)
        self._by_written: dict[str, list[Abbreviation]] = {}
        for entry in self.entries:
            self._by_written.setdefault(entry.written, []).append(entry)
        alternatives = sorted(self._by_written, key=len, reverse=True)
        body = "|".join(re.escape(w) for w in alternatives)
        # A token boundary before; after, no further letter (a final "." is part of the token).
        self._re = re.compile(rf"(?<![\w.])(?:{body})(?![^\W\d_])(?!\.\w)")

    def expand(self, text: str) -> str:
        """Replace every abbreviation whose condition holds."""
        return self._re.sub(lambda m: self._replace(text, m), text)

    def _replace(self, text: str, match: re.Match[str]) -> str:
        written = match.group(0)
        for entry in self._by_written[written]:
            if _applies(entry, text, match.start(), match.end()):
                spoken = capitalise_like(written, entry.spoken)
                if written.endswith("."):
                    at_end = not text[match.end():].strip(" \"')]»")
                    if at_end or (entry.ends or entry.when is When.AFTER_NAME) and ends_sentence(text,
                                                                                                 match.end()):
                        spoken += "."
                return spoken
        return written


def _applies(entry: Abbreviation, text: str, start: int, end: int) -> bool:
    """Whether ``entry``'s condition holds for the token at text[start:end]."""
    after = text[end:].lstrip()
    spaced = end < len(text) and text[end].isspace()
    if entry.when is When.BEFORE_NAME:
        return spaced and after[:1].isupper()
    if entry.when is When.AFTER_NAME:
        before = text[:start].rstrip().rsplit(" ", 1)[-1]
        return before[:1].isupper() and not after[:1].isupper()
    if entry.when is When.BEFORE_NUMBER:
        if not spaced:
            return False
        token = _TOKEN_RE.match(after)
        word = token.group(0) if token else ""
        # "No. 5", "pp. xii", "Vol. II"; but "No. I won't" is an answer and a pronoun.
        return after[:1].isdigit() or (bool(word) and _is_roman(word) and word != "I")
    return True


_TOKEN_RE = re.compile(r"[^\W\d_]+")


def _is_roman(word: str) -> bool:
    return (word.isupper() or word.islower()) and roman_to_int(word) is not None
