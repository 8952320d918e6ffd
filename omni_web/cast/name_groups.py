"""Joining the forms of one character's name ("Mr. Darcy", "Darcy", "Fitzwilliam Darcy").

:func:`group_names` joins the forms of one character ("Dorian", "Dorian Gray"; "Pooh",
"Winnie-the-Pooh"; "Miss Crawford", "Mary Crawford") and keeps apart forms that a title says are
two people ("Mr. Bennet", "Mrs. Bennet"), a father and son or two sisters who share a surname, and a
wife and the woman whose given name her husband's shares ("Mrs. John Dashwood", "Mrs. Dashwood").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping

from omni_web.cast.given_names import full_given_name, given_name_gender
from omni_web.cast.name_daughters import join_eldest_daughter
from omni_web.cast.name_pets import join_pet_names
from omni_web.cast.name_union import NameGroups
from omni_web.cast.name_written import join_written_aliases
from omni_web.cast.names import (
    GIVEN_NAME_TITLES,
    KIN_TITLES,
    Gender,
    name_words,
    title_gender,
    title_key,
    title_of,
)

__all__ = ["group_names"]


def group_names(
    counts: Mapping[str, int],
    genders: Mapping[str, Gender] | None = None,
    pairs: Collection[tuple[str, str]] = (),
    aliases: Collection[tuple[str, str]] = (),
) -> dict[str, str]:
    """Each name's canonical form: the most used form of the group it belongs to.

    Args:
        counts: every form found, with how often it was found (speaker tags and mentions).
        genders: a form's gender as the book's pronouns show it, where known.
        pairs: two capitalised words the book writes side by side anywhere, its talk too ("Jane
            Bennet", "Miss Elizabeth"), with how often where counted: which sisters carry a
            surname, which go by "Miss" and their given name, which man a bare surname means.
        aliases: two names the book writes as one person's ("Claypole, otherwise Bolter"; see
            :func:`written_aliases`).

    A form joins the forms with the same words and at most one title ("Darcy", "Mr. Darcy"), and
    a shorter form joins the longer forms that end or begin with it ("Darcy" -> "Fitzwilliam
    Darcy"; "Pooh" -> "Winnie-the-Pooh", "Pooh Bear") when they are one person: forms with titles
    of two genders, or two people sharing the word in one place ("Elizabeth Bennet", "Jane
    Bennet"), keep it apart unless its gender or its use picks one of them.
    """
    groups = NameGroups(counts, genders or {}, Counter(pairs))
    by_words: dict[tuple[str, ...], list[str]] = {}
    written = {name_words(name) for name in counts}
    for name in counts:
        words = _full_words(_in_small_capitals(name_words(name), written), counts)
        if words:
            by_words.setdefault(words, []).append(name)
    for forms in by_words.values():
        groups.join_same_words(forms)
    _join_spellings(groups)
    _join_middle_names(groups, by_words)
    _join_wives(groups, by_words)
    # Twice: a full name learns its gender from the given name joined to it ("Emma" ->
    # "Emma Woodhouse"), which then picks the titled surname ("Miss Woodhouse").
    for _ in range(2):
        _join_parts(groups, by_words)
    groups.join_bare_titles()
    join_eldest_daughter(groups)
    groups.join_given_and_surname()
    join_pet_names(groups)
    _join_clipped(groups)
    join_written_aliases(groups, aliases)
    return groups.canonical()


def _join_clipped(groups: NameGroups) -> None:
    """A word cut from the given name of one longer name is that one's ("Tink", "Tinker Bell"),
    where the word is no given name of its own ("Will" is not Willoughby) and no other name
    begins so. Titles' sexes must agree; pronouns, often another's, are not asked."""
    begun: dict[str, set[str]] = {}
    for name in groups.counts:
        words = name_words(name)
        if len(words) > 1:
            for end in range(4, len(words[0])):
                begun.setdefault(words[0][:end], set()).add(groups.find(name))
    for name in groups.counts:
        words = name_words(name)
        if len(words) != 1 or given_name_gender(words[0]) is not Gender.UNKNOWN:
            continue
        roots = begun.get(words[0], set())
        if len(roots) != 1 or (root := next(iter(roots))) == groups.find(name):
            continue
        both = (root, groups.find(name))
        sexes = {title_gender(form) for form in groups.counts if groups.find(form) in both}
        if len(sexes - {Gender.UNKNOWN}) < 2:
            groups.union(name, root)


def _join_middle_names(groups: NameGroups, by_words: Mapping[tuple[str, ...], list[str]]) -> None:
    """A given name and surname are the one longer name the book writes them around ("Amy March",
    "Amy Curtis March"), whose titles' sexes agree; else "Amy" would find two names to begin."""
    for words, forms in by_words.items():
        if len(words) != 2 or given_name_gender(words[0]) is Gender.UNKNOWN:
            continue
        around = [
            longer for longer in by_words
            if len(longer) > 2 and (longer[0], longer[-1]) == words
        ]
        if len(around) == 1:
            both = [*forms, *by_words[around[0]]]
            if len({title_gender(f) for f in both} - {Gender.UNKNOWN}) < 2:
                groups.union(forms[0], by_words[around[0]][0])


def _join_spellings(groups: NameGroups) -> None:
    """One name spelt with and without a hyphen or a space ("Guernsey-man", "Guernseyman";
    "Dough-Boy", "Doughboy") is one person, its titles the same."""
    spelt: dict[tuple[tuple[str, ...], str], str] = {}
    for name in groups.counts:
        rest = "".join(w for w in name.split() if title_of(w) is None)
        if rest.isupper():
            continue  # a name in capitals is read by _in_small_capitals
        key = (title_key(name), re.sub(r"[\W_]", "", rest).casefold())
        if key[1]:
            groups.union(name, spelt.setdefault(key, name))


def _in_small_capitals(words: tuple[str, ...], written: Collection[tuple[str, ...]]) -> tuple[str, ...]:
    """A name in capitals as the book writes it elsewhere: "MR. JAMES HARTHOUSE passed a whole
    night", a chapter's opening words in small capitals, is "James Harthouse". Only where it is
    written so ("CHAPTER XIV" stays as it is)."""
    if not words or not all(w.isupper() for w in words):
        return words
    titled = tuple(w.title() for w in words)
    return titled if titled in written else words


def _full_words(words: tuple[str, ...], counts: Mapping[str, int]) -> tuple[str, ...]:
    """A name's words with a short given name made full where the book writes that full name:
    with the same surname ("Bill Sikes" -> William Sikes, as in "Mr. William Sikes"), alone ("Mike"
    -> Michael), or for a short name alone, in the one full name it begins ("Jim" -> James Vane)."""
    if not words or (full := full_given_name(words[0])) is None:
        return words
    written = {name_words(form) for form in counts}
    # The book's own full name with the surname: "Jim Vane" is "James Vane" beside a "King James",
    # and "Jim", beginning "Jim Vane" only, is he too.
    own = [w for w in written if len(w) > 1 and w[0] == words[0]] if len(words) == 1 else [words]
    if len(own) == 1 and len(own[0]) > 1 and (full, *own[0][1:]) in written:
        return (full, *own[0][1:])
    if len(words) == 1 and own:
        return words  # "Josie" is Josie Pye, not the "Josephine Barry" her full name would begin
    if any(title_key(form) and name_words(form) == (full,) for form in counts):
        return words  # "Sir Thomas", "Lady Catherine": the full name is someone else's (Tom, Kitty)
    if len(words) == 1 and any(set(title_key(f)) & KIN_TITLES and name_words(f) == words for f in counts):
        return words  # "Polly" is Aunt Polly, not her niece Mary (Tom Sawyer)
    longer = (full, *words[1:])
    if longer in written:
        return longer
    if len(words) == 1:
        begun = {w for w in written if len(w) > 1 and w[0] == full}
        return begun.pop() if len(begun) == 1 else words
    return words



def _join_parts(groups: NameGroups, by_words: Mapping[tuple[str, ...], list[str]]) -> None:
    """Join each shorter form to the longer names it ends or begins, where one person."""
    for words, forms in sorted(by_words.items(), key=lambda kv: len(kv[0])):
        # A surname's title on the form ("Mr. Fielding") keeps it at a longer name's end; one that
        # is not the bare form's person ("Mrs. Charles", his wife) does not.
        bare = [f for f in forms if not title_key(f)]
        mine = [f for f in forms if not bare or groups.find(f) == groups.find(bare[0])]
        titles = {title_key(f) for f in mine} - {()}
        at_end = any(not set(t) & GIVEN_NAME_TITLES for t in titles)
        places: dict[str, set[str]] = {}
        uses: Counter[str] = Counter()  # target -> how often the longer names with the words are used
        for longer, longer_forms in by_words.items():
            if len(longer) <= len(words):
                continue
            # "Mrs. Rachel" begins "Mrs. Rachel Lynde": the same title before the same given name
            # (not "Mrs. Warrington" of "Mrs. Warrington Wilcox", Warrington's wife).
            same_title = given_name_gender(words[0]) is not Gender.UNKNOWN and any(
                title_key(f) in titles for f in longer_forms
            )
            place = _place(longer, words, at_end_only=at_end and not same_title)
            if place == "start":
                # "Mrs. Joe Gargery" is Joe's wife: "Joe" begins her husband's name, not hers.
                longer_forms = [f for f in longer_forms if not _husbands_name(f)] or longer_forms
            if place:
                target = groups.find(longer_forms[0])
                places.setdefault(place, set()).add(target)
                uses[target] += sum(groups.counts[f] for f in longer_forms)
        if len(words) == 1 and given_name_gender(words[0]) is not Gender.UNKNOWN and len(places) > 1:
            # A given name alone is the one it begins ("Joe": Joe Harper), not one ending in it
            # after an epithet ("Injun Joe"), or a saint's name ("St. John").
            ended = places.pop("end") - places["start"]
            uses = Counter({t: n for t, n in uses.items() if t not in ended})
        if any(len(found) > 1 for found in places.values()):
            # "Bennet" ends both "Elizabeth Bennet" and "Jane Bennet"
            groups.join_titled(forms, list(uses), given=set(places) == {"start"})
            groups.join_most_written(forms, uses, ends_only=set(places) == {"end"})
            continue
        targets = {group for found in places.values() for group in found}
        for target in sorted(targets, key=lambda t: (-uses[t], t)):
            groups.join_shorter(forms, target)


def _join_wives(groups: NameGroups, by_words: Mapping[tuple[str, ...], list[str]]) -> None:
    """"Mrs. Joe" is "Mrs. Joe Gargery" where the book writes one wife by her husband's full name."""
    wives: dict[str, list[str]] = {}
    for forms in by_words.values():
        for form in forms:
            if _husbands_name(form):
                wives.setdefault(name_words(form)[0], []).append(form)
    for forms in by_words.values():
        for form in forms:
            longer = wives.get(name_words(form)[0], [])
            if len(name_words(form)) == 1 and title_gender(form) is Gender.FEMALE and len(longer) == 1:
                groups.union(form, longer[0])


def _husbands_name(form: str) -> bool:
    """``form`` is a wife's, by her husband's given name ("Mrs. Joe Gargery", "Mrs. John Dashwood")."""
    words = name_words(form)
    return (
        len(words) > 1
        and title_gender(form) is Gender.FEMALE
        and given_name_gender(words[0]) is Gender.MALE
    )


def _place(longer: tuple[str, ...], shorter: tuple[str, ...], *, at_end_only: bool) -> str:
    """Where ``shorter`` sits in ``longer``: "end" ("Darcy" in "Fitzwilliam Darcy"), "start"
    ("Dorian" in "Dorian Gray") or "" (not there). A word that goes with a surname's title
    ("Colonel Fitzwilliam") only ends a longer name."""
    n = len(shorter)
    if longer[-n:] == shorter:
        return "end"
    return "start" if not at_end_only and longer[:n] == shorter else ""
