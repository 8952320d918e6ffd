"""A character's gender from their given name, where the book's pronouns do not show it (the
lists are in :mod:`omni_web.cast.given_name_lists`), and the full name a short one stands for."""

from __future__ import annotations

from omni_web.cast.given_name_lists import FEMALE_NAMES, MALE_NAMES
from omni_web.cast.names import Gender, name_words

__all__ = ["given_name_gender", "patronymic_gender"]


def given_name_gender(name: str) -> Gender:
    """The gender a character's given name ("Michael", "Frances Clyne") says, else unknown."""
    words = name_words(name)
    if not words:
        return Gender.UNKNOWN
    first = words[0]
    if first in MALE_NAMES:
        return Gender.MALE
    if first in FEMALE_NAMES:
        return Gender.FEMALE
    return Gender.UNKNOWN


# Russian patronymics, as English translations spell them: "Alyona Ivanovna", "Pulcheria
# Alexandrovna"; "Porfiry Petrovitch", "Alexis Ivanovich".
_FEMALE_PATRONYMIC = ("ovna", "evna", "ichna")
_MALE_PATRONYMIC = ("ovitch", "evitch", "ovich", "evich", "ovitsch")


def patronymic_gender(name: str) -> Gender:
    """The gender a Russian patronymic after the given name says ("Alyona Ivanovna": female), else
    unknown."""
    for word in name_words(name)[1:]:
        if word.endswith(_FEMALE_PATRONYMIC):
            return Gender.FEMALE
        if word.endswith(_MALE_PATRONYMIC):
            return Gender.MALE
    return Gender.UNKNOWN


# Short forms of given names, each for the one full name it is nearly always short for. Not "Tom":
# a son called Tom is the rule where the father is Thomas (Hard Times, Mansfield Park).
_SHORT_FORMS = {
    "Mike": "Michael",
    "Mick": "Michael",
    "Jack": "John",
    "Johnny": "John",
    "Jim": "James",
    "Jimmy": "James",
    "Jem": "James",
    "Bill": "William",
    "Billy": "William",
    "Willie": "William",
    "Bob": "Robert",
    "Bobby": "Robert",
    "Dick": "Richard",
    "Charley": "Charles",
    "Charlie": "Charles",
    "Ned": "Edward",
    "Teddy": "Edward",
    "Fred": "Frederick",
    "Freddy": "Frederick",
    "Sam": "Samuel",
    "Ben": "Benjamin",
    "Joe": "Joseph",
    "Nick": "Nicholas",
    "Tony": "Anthony",
    "Frank": "Francis",
    "Harry": "Henry",
    "Art": "Arthur",
    "Artie": "Arthur",
    "Alf": "Alfred",
    "Gus": "Augustus",
    "Lizzy": "Elizabeth",
    "Lizzie": "Elizabeth",
    "Betsy": "Elizabeth",
    "Polly": "Mary",
    "Molly": "Mary",
    "Peggy": "Margaret",
    "Meg": "Margaret",
    "Maggie": "Margaret",
    "Sally": "Sarah",
    "Sophy": "Sophia",
    "Josie": "Josephine",
    "Fanny": "Frances",
    "Kitty": "Catherine",
    "Nelly": "Ellen",
    "Nell": "Ellen",
    "Jenny": "Jane",
    "Sissy": "Cecilia",
    "Rachael": "Rachel",
}


def full_given_name(word: str) -> str | None:
    """The full given name a short form stands for ("Bill" -> "William"), else None."""
    return _SHORT_FORMS.get(word)
