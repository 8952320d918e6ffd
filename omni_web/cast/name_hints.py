"""Characters that may be one person under two names, where the rules were not sure enough to join.

"Miss Lucas" is one of the two women the book writes "Lucas" after (Charlotte, Maria); "Hamilton" is
one of its two Hamilton men. :func:`likely_same` lists them so the cast screen can offer the merge
in two clicks rather than leave the user to notice the two rows.
"""

from __future__ import annotations

from collections.abc import Mapping

from omni_web.cast.given_names import given_name_gender
from omni_web.cast.names import KIN_TITLES, Gender, name_words, title_key

__all__ = ["likely_same"]

_MOST = 4  # candidates offered per character
_WIVES = frozenset({("mrs",), ("lady",), ("mme",)})
_SURNAME_TITLES = _WIVES | {("mr",), ("miss",), ("ms",), ("m",), ("mlle",)}


def likely_same(
    canonical: Mapping[str, str],
    genders: Mapping[str, Gender],
    counts: Mapping[str, int],
    pairs: Mapping[tuple[str, str], int],
) -> dict[str, tuple[str, ...]]:
    """For each character named by a surname alone ("Miss Lucas", "Hamilton", "Mrs. Mingott"), the
    characters of a compatible sex it may be: those with a longer name ending in it ("Mrs. Manson
    Mingott") and those whose given name the book writes before it ("Charlotte Lucas"). Keyed and
    valued by the characters' names; the most named first.

    Args:
        canonical: each form's character.
        genders: each character's gender, where known.
        counts: how often each form was found.
        pairs: the capitalised words the book writes side by side, counted.
    """
    forms: dict[str, list[str]] = {}
    for form, character in canonical.items():
        forms.setdefault(character, []).append(form)
    weight = {c: sum(counts.get(f, 0) for f in fs) for c, fs in forms.items()}
    likely: dict[str, tuple[str, ...]] = {}
    for character, own in forms.items():
        surname = _surname_alone(own)
        if surname is None or genders.get(character, Gender.UNKNOWN) is Gender.UNKNOWN:
            continue  # "Young Hamilton": anyone of the family
        # A wife is offered the full names with her title only ("Mrs. Manson Mingott"), never the
        # daughters whose given names the book writes with hers ("Mrs. Bennet" is not Jane Bennet).
        own_titles = {title_key(f) for f in own}
        # An aunt or uncle likewise: "Aunt March" is not Amy March, her niece.
        title_only = own_titles & _WIVES or {t for t in own_titles if set(t) & KIN_TITLES}
        found = [
            other
            for other, theirs in forms.items()
            if other != character
            and _compatible(genders.get(character), genders.get(other))
            and any(
                _carries(f, surname, pairs) and (not title_only or title_key(f) in title_only) for f in theirs
            )
            and not (("miss",) in own_titles and {title_key(f) for f in theirs} & _WIVES)
        ]
        # The one the book writes with the surname most first ("Hamilton": Berry Hamilton 14 times,
        # Joe Hamilton 4), then the most named: the cast screen offers the first for the merge.
        written = {c: sum(pairs.get((given, surname), 0) for given in _given_words(forms[c])) for c in found}
        if found:
            likely[character] = tuple(sorted(found, key=lambda c: (-written[c], -weight[c], c))[:_MOST])
    return likely


def _surname_alone(forms: list[str]) -> str | None:
    """The one word every form is, where it is no given name ("Lucas" of "Miss Lucas")."""
    words = {name_words(form) for form in forms}
    if len(words) != 1 or len(word := next(iter(words))) != 1:
        return None
    titles = {title_key(form) for form in forms}
    if given_name_gender(word[0]) is not Gender.UNKNOWN and not titles & _SURNAME_TITLES:
        return None  # "Frank", "Cousin Cassandra": a given name, not a surname
    return word[0]


def _given_words(forms: list[str]) -> set[str]:
    """The first words of a character's forms ("Berry" of "Berry Hamilton")."""
    return {name_words(form)[0] for form in forms if name_words(form)}


def _carries(form: str, surname: str, pairs: Mapping[tuple[str, str], int]) -> bool:
    """``form`` is a longer name ending in ``surname``, or a given name the book writes before it."""
    words = name_words(form)
    if len(words) > 1:
        return words[-1] == surname
    # A given name alone, untitled: "Sir John" is a baronet, not the John of "John Willoughby".
    return (
        len(words) == 1
        and not title_key(form)
        and given_name_gender(words[0]) is not Gender.UNKNOWN
        and (words[0], surname) in pairs
    )


def _compatible(mine: Gender | None, theirs: Gender | None) -> bool:
    known = {mine, theirs} - {None, Gender.UNKNOWN}
    return len(known) <= 1
