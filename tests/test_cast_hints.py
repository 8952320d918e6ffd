"""Characters offered to the user as maybe one person: the pairs the rules were not sure enough to join."""

from __future__ import annotations

from collections import Counter

from omni_web.book import load_book
from omni_web.cast import Gender, find_characters
from omni_web.cast.attribution import Attribution
from omni_web.cast.dialogue import Quote
from omni_web.cast.name_hints import likely_same
from omni_web.cast.reply_hints import answered_as
from omni_web.cast.roster import Roster
from tests.epub_builder import make_epub, xhtml

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


def _quote(text: str, speaker: str | None, rule: str = "tag") -> Quote:
    return Quote(0, text, Attribution(speaker, 0.95 if speaker else 0.0, rule, rule=rule))


def test_the_one_who_answers_to_a_name_is_offered_as_that_character() -> None:
    # Oliver Twist: "Fagin" is called, and "said the Jew" answers, though the two never talk.
    canonical = {f: f for f in ("Fagin", "Jew", "Oliver", "Sikes", "Nancy")}
    genders = dict.fromkeys(("Fagin", "Jew", "Oliver", "Sikes"), MALE) | {"Nancy": FEMALE}
    roster = Roster(canonical=canonical, genders=genders)
    scene = [
        _quote("Fagin, my dear, where is the boy?", "Oliver"),
        _quote("Gone to bed, my dear,", "Jew"),
        _quote("Where is he, Fagin?", "Sikes"),
        _quote("Safe,", "Jew"),
        _quote("You hear me, Fagin!", None, "turn"),
        _quote("I hear,", "Jew"),
    ]
    assert answered_as([scene], roster) == {"Fagin": ("Jew",)}
    assert roster.with_likely(answered_as([scene], roster)).likely_same("Jew") == ("Fagin",)
    # Fewer than three answers, or someone else answering half the time: nothing.
    assert answered_as([scene[:4]], roster) == {}
    # Answered 3 times by the Jew, twice by Sikes, twice by Oliver:
    others = [_quote("Fagin!", "Nancy"), _quote("What?", "Sikes")] * 2
    others += [_quote("Fagin!", "Nancy"), _quote("Eh?", "Oliver")] * 2
    assert answered_as([scene, others], roster) == {}
    # Two who answer each other are two people, however often one answers to the other's name.
    talk = [_quote("Come,", "Fagin"), _quote("No,", "Jew")] * 4
    assert answered_as([scene, talk], roster) == {}
    # One who calls the other by name is another person (Moby-Dick: Stubb answers when Starbuck
    # is called, but calls "Starbuck!" himself).
    calls = [_quote("Fagin, you old fool!", "Jew", "turn")] * 3
    assert answered_as([scene, calls], roster) == {}
    # A man never answers to a woman's name.
    nancy = [_quote(q.text.replace("Fagin", "Nancy"), q.attribution.speaker) for q in scene]
    assert answered_as([nancy], roster) == {}


def test_two_given_names_or_one_family_are_never_offered() -> None:
    # Pride and Prejudice: Elizabeth answers when Jane is called; Hard Times: the father when Tom is.
    canonical = {f: f for f in ("Jane", "Elizabeth", "Tom", "Mr. Gradgrind", "Louisa")}
    canonical |= {"Tom Gradgrind": "Tom", "Gradgrind": "Mr. Gradgrind"}
    roster = Roster(canonical=canonical, genders={"Tom": MALE, "Mr. Gradgrind": MALE})
    for called, answer in (("Jane", "Elizabeth"), ("Tom", "Mr. Gradgrind")):
        scene = [_quote(f"{called}, come here.", "Louisa"), _quote("Coming,", answer)] * 3
        assert answered_as([scene], roster) == {}


def test_the_cast_lists_the_one_who_answers_to_a_name_as_maybe_that_character(tmp_path) -> None:
    paras = [
        "“Fagin, my dear, where is the boy?” asked Oliver.", "“Gone to bed, my dear,” said the Jew.",
        "The fire burned low in the grate.",
        "“Where is he, Fagin?” asked Sikes.", "“Safe,” said the Jew.",
        "Nobody spoke for a while.",
        "“Do you hear me, Fagin?” asked Nancy.", "“I hear,” said the Jew.",
        "The clock struck ten.",
        "“Hush,” said Fagin.", "“Why?” asked Oliver.", "“The watch,” said Fagin.",
    ]
    body = "<h1>Chapter One</h1>" + "".join(f"<p>{p}</p>" for p in paras)
    book = load_book(make_epub(tmp_path / "den.epub", (("c1.xhtml", xhtml(body)),), title="The Den"))
    people = {c.name: c for c in find_characters(book)}
    assert people["Jew"].maybe == ("Fagin",) and people["Fagin"].maybe == ("Jew",)
    assert people["Oliver"].maybe == ()
