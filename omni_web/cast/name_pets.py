"""Pet forms of a name: which "Kitty" is "Kit".

A book calls one person by a name and its pet form ("Kit", "Kitty"; "Skaggs", "Skaggsy"), each a
word alone; :func:`join_pet_names` joins the two where nothing the book writes says two people.
"""

from __future__ import annotations

from collections import Counter

from omni_web.cast.name_union import NameGroups, titles_gender
from omni_web.cast.names import name_words

__all__ = ["join_pet_names"]


def join_pet_names(groups: NameGroups) -> None:
    """A name and its pet form, each one word, are one person where neither has another, unless
    their titles' sexes or their full names say two families."""
    words = {name_words(n)[0]: n for n in groups.counts if len(name_words(n)) == 1}
    pets: dict[str, list[str]] = {}
    for word in words:
        for pet in _pet_forms(word):
            if pet in words:
                pets.setdefault(word, []).append(pet)
    petted = Counter(pet for found in pets.values() for pet in found)
    for word, found in pets.items():
        if len(found) != 1 or petted[found[0]] != 1:
            continue
        short, pet = groups.find(words[word]), groups.find(words[found[0]])
        # Their titles' sexes, not their given names': "Kit" is a man's name in the list, and
        # Kitty's too.
        sexes = [titles_gender(groups.titles(short)), titles_gender(groups.titles(pet))]
        surnames = [_surnames(groups, short), _surnames(groups, pet)]
        if short == pet or (all(sexes) and sexes[0] != sexes[1]):
            continue
        if not all(surnames) or surnames[0] & surnames[1]:
            groups.union(short, pet)


def _surnames(groups: NameGroups, root: str) -> set[str]:
    return {name_words(n)[-1] for n in groups.counts if groups.find(n) == root and len(name_words(n)) > 1}


def _pet_forms(word: str) -> list[str]:
    """The pet forms of a name: "Kit" -> "Kitty", "Kity", "Kitie", "Kitey"."""
    stems = [word, word + word[-1]] if word[-1] not in "aeiouy" else [word]
    return [stem + end for stem in stems for end in ("y", "ie", "ey")]
