"""Characters offered to the user as maybe one person: the pairs the rules were not sure enough to join."""

from __future__ import annotations

from collections import Counter

from omni_web.cast import Gender
from omni_web.cast.name_hints import likely_same
from omni_web.cast.roster import Roster

FEMALE, MALE = Gender.FEMALE, Gender.MALE


def test_a_surname_alone_is_offered_the_people_the_book_writes_it_with() -> None:
    # Pride and Prejudice: "Miss Lucas" is Charlotte or Maria; their mother is offered neither.
    canonical = {f: f for f in ("Miss Lucas", "Charlotte", "Maria", "Lady Lucas", "Sir William Lucas")}
    canonical["Charlotte Lucas"] = "Charlotte"
    genders = {"Miss Lucas": FEMALE, "Charlotte": FEMALE, "Maria": FEMALE, "Lady Lucas": FEMALE}
    counts = {"Miss Lucas": 24, "Charlotte": 68, "Charlotte Lucas": 5, "Maria": 16, "Lady Lucas": 11}
    pairs = Counter({("Charlotte", "Lucas"): 7, ("Maria", "Lucas"): 2, ("William", "Lucas"): 10})
    likely = likely_same(canonical, genders | {"Sir William Lucas": MALE}, counts, pairs)
    assert likely == {"Miss Lucas": ("Charlotte", "Maria")}
    # Either side of the hint names the other, and a merge the user made ends it.
    roster = Roster(canonical=canonical, genders=genders, likely=likely)
    assert roster.likely_same("Maria") == ("Miss Lucas",)
    assert roster.likely_same("Miss Lucas") == ("Charlotte", "Maria")
    merged = Roster(canonical=canonical | {"Miss Lucas": "Charlotte"}, genders=genders, likely=likely)
    assert merged.likely_same("Charlotte") == ("Maria",)


def test_a_wife_is_offered_the_full_names_with_her_title_only() -> None:
    # The Age of Innocence: "Mrs. Mingott" is Mrs. Manson or Mrs. Lovell Mingott, never a daughter
    # whose given name the book writes with the surname.
    names = ("Mrs. Mingott", "Mrs. Manson Mingott", "Mrs. Lovell Mingott", "Catherine", "Mingott")
    canonical = {f: f for f in names}
    genders = {n: FEMALE for n in names[:4]} | {"Mingott": MALE}
    counts = dict.fromkeys(names, 10) | {"Mrs. Manson Mingott": 13}
    pairs = Counter({("Catherine", "Mingott"): 2, ("Manson", "Mingott"): 21, ("Lovell", "Mingott"): 14})
    likely = likely_same(canonical, genders, counts, pairs)
    assert likely["Mrs. Mingott"] == ("Mrs. Manson Mingott", "Mrs. Lovell Mingott")
    # A bare surname of unknown sex ("Young Hamilton") is anyone of the family: nothing offered.
    assert "Mingott" not in likely
    genders.pop("Mingott")
    assert "Mingott" not in likely_same(canonical, genders, counts, pairs)


def test_a_titled_given_name_and_a_given_name_alone_are_no_surname_hint() -> None:
    # Sense and Sensibility: "Sir John" is a baronet, not the John of "John Willoughby"; and
    # "Cousin Frieda" is a given name however the book titles it ("Margaret Frieda" is no hint).
    canonical = {"Willoughby": "Willoughby", "Sir John": "Sir John", "Cousin Frieda": "Frieda"}
    canonical |= {"Frieda": "Frieda", "Margaret Frieda": "Margaret"}
    genders = {"Willoughby": MALE, "Sir John": MALE, "Frieda": FEMALE, "Margaret": FEMALE}
    pairs = Counter({("John", "Willoughby"): 3})
    assert likely_same(canonical, genders, dict.fromkeys(canonical, 5), pairs) == {}


def test_the_man_the_book_writes_with_the_surname_most_is_offered_first() -> None:
    # The Sport of the Gods: "Hamilton" is Berry (14 times "Berry Hamilton") before Joe (4), though
    # "Joe" alone is named more often.
    canonical = {"Hamilton": "Hamilton", "Berry Hamilton": "Berry Hamilton", "Joe": "Joe"}
    canonical["Joe Hamilton"] = "Joe"
    genders = dict.fromkeys(("Hamilton", "Berry Hamilton", "Joe"), MALE)
    counts = {"Hamilton": 8, "Berry Hamilton": 8, "Joe": 60, "Joe Hamilton": 3}
    pairs = Counter({("Berry", "Hamilton"): 14, ("Joe", "Hamilton"): 4})
    assert likely_same(canonical, genders, counts, pairs) == {"Hamilton": ("Berry Hamilton", "Joe")}
