"""Two names the book itself says are one person: "Claypole, otherwise Bolter", "Mr. Morris Bolter,
late Claypole", "John Dawkins (otherwise the Artful Dodger)", "Mrs. Weston (poor Miss Taylor that
was)". An alias, a new name or a married name, written beside the old one.

:func:`written_aliases` finds them in the book's paragraphs; :func:`join_written_aliases` joins
the groups of the forms they name.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from omni_web.cast.name_union import NameGroups
from omni_web.cast.names import Gender, name_words, title_gender

__all__ = ["join_written_aliases", "written_aliases"]

_TITLE = r"(?:(?:Mr|Mrs|Ms|Dr|Miss|Master|Mlle|Mme)\.?\s+)"
_WORD = r"[A-Z][\w’'\-]*[a-z][\w’'\-]*"
_NAME = rf"{_TITLE}?{_WORD}(?:\s+{_WORD}){{0,2}}"
# "A, otherwise B", "A (alias B)", "A, late B", "A, née B": the second is the first's other name.
_CALLED_ALSO = re.compile(
    rf"(?<![\w’'])({_NAME})\s*[,(]\s*(?:otherwise|alias|late|formerly|née|nee)\s+(?:the\s+)?({_NAME})"
)
# "Mrs. Weston (poor Miss Taylor that was)": her name before she married.
_THAT_WAS = re.compile(rf"(?<![\w’'])({_NAME})\s*[,(]\s*(?:[a-z]+\s+)?({_NAME})\s+that\s+was\b")


def written_aliases(texts: Iterable[str]) -> set[tuple[str, str]]:
    """The pairs of names ``texts`` write as one person's, in the order written."""
    found: set[tuple[str, str]] = set()
    for text in texts:
        for pattern in (_CALLED_ALSO, _THAT_WAS):
            found.update((m.group(1), m.group(2)) for m in pattern.finditer(text))
    return found


def join_written_aliases(groups: NameGroups, aliases: Collection[tuple[str, str]]) -> None:
    """Join the groups of each pair's forms, where each names one group and their titles' sexes
    agree (a written "late" may be a dead man's: "Mrs. Bolter, late Mr. Bolter" is no one)."""
    for first, second in aliases:
        ones = [_group_of(groups, name) for name in (first, second)]
        if None in ones or ones[0] == ones[1]:
            continue
        sexes = {
            title_gender(form) for form in groups.counts if groups.find(form) in ones
        } - {Gender.UNKNOWN}
        if len(sexes) < 2:
            groups.union(ones[0], ones[1])


def _group_of(groups: NameGroups, name: str) -> str | None:
    """The one group the name is a form of: itself, else the forms written in its words."""
    if name in groups.counts:
        return groups.find(name)
    words = name_words(name)
    roots = {groups.find(form) for form in groups.counts if words and name_words(form) == words}
    return roots.pop() if len(roots) == 1 else None
