"""The daughters of a name: which one "Miss Bennet" alone is.

A family's daughters share "Miss" and the surname; the book tells them apart by their given names
("Miss Elizabeth"), and keeps "Miss Bennet" for the eldest. :func:`join_eldest_daughter` reads that
from the pairs of capitalised words the book writes (:func:`omni_web.cast.names.name_pairs`).
"""

from __future__ import annotations

from collections import Counter

from omni_web.cast.given_names import given_name_gender
from omni_web.cast.name_union import NameGroups
from omni_web.cast.names import Gender, name_words, title_key

__all__ = ["join_eldest_daughter"]


def join_eldest_daughter(groups: NameGroups) -> None:
    """ "Miss Bennet" alone is the eldest daughter: of the women whose given name the book writes
    with the surname ("Jane Bennet", "Elizabeth Bennet"), the one it never calls "Miss" and her
    given name, as it does her younger sisters ("Miss Elizabeth"), and, of two such, the one it
    writes with the surname three times as often. An aunt of the name, unmarried, goes before
    her nieces ("Aunt Josephine" is Miss Barry, not Diana Barry). The only daughter of a name is
    "Miss" and the surname whatever else she is called, where the book never writes the name's
    daughters in the plural ("the Miss Dashwoods")."""
    for form in groups.counts:
        if title_key(form) != ("miss",) or len(words := name_words(form)) != 1:
            continue
        if any(len(name_words(n)) > 1 for n in groups.counts if groups.find(n) == groups.find(form)):
            continue  # joined to a full name already
        women = _women_of(groups, words[0], groups.find(form))
        aunts = {root for given, root in women.items() if ("Aunt", given) in groups.pairs}
        eldest = aunts or {root for given, root in women.items() if ("Miss", given) not in groups.pairs}
        # The only daughter of a name the book never writes in the plural ("the Miss Dashwoods")
        # is "Miss Maylie", though the servants call her "Miss Rose".
        plural = ("Miss", words[0] + "s") in groups.pairs or ("Misses", words[0]) in groups.pairs
        if not eldest and len(set(women.values())) == 1 and not plural:
            eldest = set(women.values())
        written = Counter({root: groups.pairs.get((given, words[0]), 0) for given, root in women.items()})
        ranked = sorted(eldest, key=lambda root: (-written[root], root))
        # Two daughters the book never calls "Miss" and their given name: the one it writes with
        # the surname three times as often ("Miss Lucas": Charlotte Lucas 8 times, Maria twice).
        rest = sum(written[root] for root in ranked[1:])
        if ranked and (len(ranked) == 1 or written[ranked[0]] >= 3 * rest):
            groups.union(form, ranked[0])


def _women_of(groups: NameGroups, surname: str, own: str) -> dict[str, str]:
    """The women's given names the book writes before ``surname``, with their groups: a given
    name alone ("Jane") or a full name ("Miss Josephine Barry") of an unmarried woman."""
    women: dict[str, str] = {}
    for name in groups.counts:
        words = name_words(name)
        root = groups.find(name)
        if (
            len(words) in (1, 2)
            and words[1:] in ((), (surname,))
            and (words[0], surname) in groups.pairs
            and given_name_gender(words[0]) is Gender.FEMALE
            and not set(title_key(name)) - {"miss"}
            and root != own
            and groups.sure_gender(root) <= {Gender.FEMALE}
        ):
            women[words[0]] = root
    return women
