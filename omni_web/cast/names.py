"""Character names: titles kept whole, sentence openers cut off, and the forms of one name joined.

A name as a tag gives it ("Mrs. Bennet", "the March Hare", "When Margaret") is cleaned by
:func:`clean_name`: a leading article goes, a title stays with its full stop ("Mrs.", "Mlle."),
and words that only open a sentence ("When", "Presently", "Whereupon", "Rather") are cut off or
make it no name at all. A book's :class:`Vocabulary` tells such openers from names by how the book
itself writes them: a word the book writes in lower case mid-sentence more often than capitalised
is no name ("rather", "presently"), whatever list it is missing from.

:func:`group_names` joins the forms of one character ("Mr. Darcy", "Darcy", "Fitzwilliam Darcy";
"Dorian", "Dorian Gray"; "Pooh", "Winnie-the-Pooh") and keeps apart forms that a title says are
two people ("Mr. Bennet", "Mrs. Bennet"; a bare "Bennet" then joins neither).
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "Age",
    "Gender",
    "NOT_A_SENTENCE_END",
    "age_guess",
    "Vocabulary",
    "clean_name",
    "group_names",
    "name_words",
    "sentence_break",
    "title_gender",
    "title_of",
]


class Gender(enum.StrEnum):
    """A character's gender as the book's pronouns and titles show it."""

    MALE = "male"
    FEMALE = "female"
    UNKNOWN = "unknown"


class Age(enum.StrEnum):
    """A character's age as their titles and the words around their name show it."""

    CHILD = "child"
    ADULT = "adult"
    OLD = "old"
    UNKNOWN = "unknown"


_MALE_TITLES = frozenset(
    """mr mister sir lord master monsieur m uncle father king prince duke count baron colonel captain
    capt major general admiral sergeant lieutenant herr señor signor don brother abbé abbe reverend
    rev parson squire earl emperor""".split()
)
_FEMALE_TITLES = frozenset(
    """mrs mistress miss ms mme madame mlle mademoiselle madam lady aunt mother queen princess duchess
    countess baroness dame sister frau fräulein señora señorita signora donna nurse granny grandmother
    empress""".split()
)
_NEUTRAL_TITLES = frozenset("dr doctor professor prof judge old young little cousin grandfather".split())
# Titles written before a given name as well as a surname ("Sir Walter", "Miss Elizabeth").
_GIVEN_NAME_TITLES = frozenset("sir lady miss master don donna dame".split())
# Titles that never stand for a person alone.
_ADDRESS_ONLY = frozenset(
    "mr mrs ms m mme mlle mister miss master herr frau señor señora signor signora".split()
)
TITLES = _MALE_TITLES | _FEMALE_TITLES | _NEUTRAL_TITLES
# Words that open a sentence or a tag and are never a name by themselves, whatever the book.
_OPENERS = frozenset(
    """i he she it they we you me him her us them the a an but and then there this that these those what
    why how when where who whom whose which yes no oh ah well now so not here if or nor yet still just
    only all some any one two perhaps indeed alas please thank thanks come go let do don’t don't is are
    was were my your his her our their its another other others someone somebody everyone everybody
    nobody none each both neither either many several everything nothing something in into on onto at by
    for from with without after before while as of to up down over under out once soon later again
    presently suddenly meanwhile afterwards behind beside through across along rather whereupon
    thereupon instantly immediately finally hence thus therefore however nevertheless accordingly
    besides moreover anyhow whatever whoever whenever wherever though although unless until till since
    because even also very quite much more most less least such same own good dear poor chapter book
    monday tuesday wednesday thursday friday saturday sunday january february september october
    november december christmas
    part volume il elle ils elles on le la les un une et mais puis él ella el los las er sie es der die
    das""".split()
)
_WORD_RE = re.compile(r"[^\W\d_][\w’'\-.]*")
# Abbreviations whose full stop ends no sentence ("Mrs. Bennet said", "Mr. J. Smith"); "I." does.
_ABBREVIATIONS = "Mr Mrs Ms Dr St Mme Mlle Messrs Capt Col Gen Rev Prof Hon Lt Sgt Jr Sr".split()
NOT_A_SENTENCE_END = "".join(rf"(?<!\b{a}\.)" for a in _ABBREVIATIONS) + r"(?<!\b[A-HJ-Z]\.)"


def sentence_break(ends: str = ".!?") -> re.Pattern[str]:
    """The space after a sentence that ends in one of ``ends``, an abbreviation's full stop not
    counted: split at it and "Mrs. Bennet said only," stays one sentence, its speaker whole."""
    return re.compile(rf"(?<=[{re.escape(ends)}]){NOT_A_SENTENCE_END}\s+")


_VOCABULARY_BREAK = sentence_break(".!?;:\"“”‘’")


def title_of(word: str) -> str | None:
    """The title a word is ("Mrs." -> "mrs"), or None."""
    folded = word.casefold().rstrip(".")
    return folded if folded in TITLES else None


def title_gender(name: str) -> Gender:
    """The gender a name's titles give ("Mrs. Bennet": female), else unknown."""
    for word in name.split():
        title = title_of(word)
        if title in _MALE_TITLES:
            return Gender.MALE
        if title in _FEMALE_TITLES:
            return Gender.FEMALE
    return Gender.UNKNOWN


_CHILD_WORDS = frozenset("master little young baby boy girl kid".split())
_OLD_WORDS = frozenset("old granny grandmother grandfather grandpa grandma gaffer elder".split())
_ADULT_TITLES = TITLES - _CHILD_WORDS - _OLD_WORDS - {"little", "young", "cousin"}


def age_guess(forms: Iterable[str]) -> Age:
    """A character's age from the forms of their name ("Old Pipes": old, "Master Tom": child)."""
    words = {w.casefold().rstrip(".") for form in forms for w in form.replace("-", " ").split()}
    if words & _OLD_WORDS:
        return Age.OLD
    if words & _CHILD_WORDS:
        return Age.CHILD
    return Age.ADULT if words & _ADULT_TITLES else Age.UNKNOWN


def name_words(name: str) -> tuple[str, ...]:
    """The words of a name without its titles, hyphenated parts split ("Winnie-the-Pooh" -> Winnie, Pooh)."""
    words: list[str] = []
    for word in name.split():
        if title_of(word) is not None:
            continue
        for part in word.split("-"):
            part = part.strip(".’'")
            if part and part[0].isupper():
                words.append(part)
    return tuple(words)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """How a book writes its words: capitalised mid-sentence (a name) or in lower case (a word)."""

    capitalised: Mapping[str, int]  # folded word -> times written capitalised after a sentence's start
    lower: Mapping[str, int]  # folded word -> times written in lower case

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        """Count the words of the book's paragraphs."""
        capitalised: Counter[str] = Counter()
        lower: Counter[str] = Counter()
        for text in texts:
            for sentence in _VOCABULARY_BREAK.split(text):
                words = _WORD_RE.findall(sentence)
                for word in words[1:]:
                    word = word.rstrip(".")
                    if word[:1].isupper():
                        capitalised[word.casefold()] += 1
                    elif word[:1].islower():
                        lower[word] += 1
        return cls(dict(capitalised), dict(lower))

    def is_word(self, word: str) -> bool:
        """True when the book writes ``word`` in lower case more often than as a name."""
        folded = word.casefold().rstrip(".")
        return self.lower.get(folded, 0) > max(1, self.capitalised.get(folded, 0))


def clean_name(raw: str, vocabulary: Vocabulary | None = None) -> str | None:
    """A name as the cast lists it ("the March Hare" -> "March Hare", "When Margaret" -> "Margaret").

    Titles stay whole ("Mrs. Bennet", "Mlle. Reisz"); a name that is only openers or titles is None.
    """
    words = re.split(r"--|\u2014|\u2013", raw)[0].strip().strip(",;:’'\"_").split()
    while words and _is_opener(words[0], vocabulary):
        words.pop(0)
    # A title after a name starts another name ("Anne Mrs. Rachel" as a capitalised run): cut there.
    for k in range(1, len(words)):
        if title_of(words[k]) is not None and title_of(words[k - 1]) is None:
            del words[k:]
            break
    if not words:
        return None
    last = words[-1]
    if last.endswith(("’s", "'s", "’", "'")):
        return None  # a possessive ("the Rabbit’s voice") names whose something, not a speaker
    words[-1] = last.rstrip(".") if title_of(last) is None else last
    if all(title_of(w) is not None for w in words):
        # "the Queen", "the Captain" name someone; "Mr." or "Old" alone do not.
        bare = len(words) == 1 and title_of(words[0]) not in _NEUTRAL_TITLES | _ADDRESS_ONLY
        return " ".join(words) if bare else None
    if any(
        w[:1].islower()
        and title_of(w) is None
        and w not in ("de", "van", "von", "la", "le", "du", "di", "the")
        for w in words
    ):
        return None
    return " ".join(words)


def _is_opener(word: str, vocabulary: Vocabulary | None) -> bool:
    folded = word.casefold().strip(",.;:")
    if folded in ("the", "a", "an") or folded in _OPENERS:
        return True
    if title_of(word) is not None:
        return False
    return vocabulary is not None and vocabulary.is_word(word)


def _title_key(name: str) -> tuple[str, ...]:
    """The titles of a name, Mr/Mister and Mrs/Mistress read alike."""
    same = {"mister": "mr", "mistress": "mrs", "madame": "mme", "mademoiselle": "mlle", "capt": "captain"}
    return tuple(same.get(t, t) for t in (title_of(w) for w in name.split()) if t is not None)


def group_names(counts: Mapping[str, int], genders: Mapping[str, Gender] | None = None) -> dict[str, str]:
    """Each name's canonical form: the most used form of the group it belongs to.

    Args:
        counts: every form found, with how often it was found (speaker tags and mentions).
        genders: a form's gender as the book's pronouns show it, where known.

    A form joins the forms with the same words and at most one title ("Darcy", "Mr. Darcy"), and
    a shorter form joins the longer forms that end or begin with it ("Darcy" -> "Fitzwilliam
    Darcy"; "Pooh" -> "Winnie-the-Pooh", "Pooh Bear") when they are one person: forms with titles
    of two genders, or two people sharing the word in one place ("Elizabeth Bennet", "Jane
    Bennet"), keep it apart unless its gender or its use picks one of them.
    """
    groups = _Groups(counts, genders or {})
    by_words: dict[tuple[str, ...], list[str]] = {}
    for name in counts:
        words = name_words(name)
        if words:
            by_words.setdefault(words, []).append(name)
    for forms in by_words.values():
        groups.join_same_words(forms)
    # Twice: a full name learns its gender from the given name joined to it ("Emma" ->
    # "Emma Woodhouse"), which then picks the titled surname ("Miss Woodhouse").
    for _ in range(2):
        _join_parts(groups, by_words)
    return groups.canonical()


def _join_parts(groups: _Groups, by_words: Mapping[tuple[str, ...], list[str]]) -> None:
    """Join each shorter form to the longer names it ends or begins, where one person."""
    for words, forms in sorted(by_words.items(), key=lambda kv: len(kv[0])):
        at_end = any(_title_key(f) and not set(_title_key(f)) & _GIVEN_NAME_TITLES for f in forms)
        places: dict[str, set[str]] = {}
        for longer in by_words:
            if len(longer) > len(words):
                place = _place(longer, words, at_end_only=at_end)
                if place:
                    places.setdefault(place, set()).add(groups.find(by_words[longer][0]))
        if any(len(found) > 1 for found in places.values()):
            groups.join_dominant(forms, [g for found in places.values() for g in found])
            continue  # "Bennet" ends both "Elizabeth Bennet" and "Jane Bennet"
        targets = {group for found in places.values() for group in found}
        for target in targets:
            groups.join_shorter(forms, target)


class _Groups:
    """Union-find over name forms, with the gender checks of :func:`group_names`."""

    def __init__(self, counts: Mapping[str, int], genders: Mapping[str, Gender]) -> None:
        self.counts = counts
        self.genders = genders
        self.parent = {name: name for name in counts}

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def gender(self, name: str) -> Gender:
        by_title = title_gender(name)
        return by_title if by_title is not Gender.UNKNOWN else self.genders.get(name, Gender.UNKNOWN)

    def group_gender(self, root: str) -> set[Gender]:
        return {self.gender(n) for n in self.counts if self.find(n) == root} - {Gender.UNKNOWN}

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)

    def join_same_words(self, forms: list[str]) -> None:
        """ "Darcy" and "Mr. Darcy" are one; "Mr. Bennet" and "Mrs. Bennet" are two, and a bare
        "Darcy" beside "Mr./Miss/Mrs. Darcy" joins the one its gender, else its dominance, picks."""
        titled: dict[tuple[str, ...], list[str]] = {}
        bare = [f for f in forms if not _title_key(f)]
        for form in forms:
            if _title_key(form):
                titled.setdefault(_title_key(form), []).append(form)
        for same in titled.values():
            for form in same[1:]:
                self.union(form, same[0])
        people = [same[0] for same in titled.values()]
        if not bare:
            return
        for form in bare[1:]:
            self.union(form, bare[0])
        if len(people) == 1 and self._compatible(bare[0], people[0]):
            self.union(bare[0], people[0])
        elif len(people) > 1:
            mine = self.gender(bare[0])
            fitting = [
                p for p in people if mine is Gender.UNKNOWN or self.gender(p) in (mine, Gender.UNKNOWN)
            ]
            fitting.sort(key=lambda p: -sum(self.counts[f] for f in titled[_title_key(p)]))
            # Its gender, else a title used five times as often, picks ("Willoughby": Mr., not Mrs.).
            ratio = 3 if mine is not Gender.UNKNOWN else 5
            if len(fitting) == 1 or (
                len(fitting) > 1
                and self._dominates(titled[_title_key(fitting[0])], titled[_title_key(fitting[1])], ratio)
            ):
                self.union(bare[0], fitting[0])

    def _dominates(self, first: list[str], second: list[str], ratio: int = 3) -> bool:
        return sum(self.counts[f] for f in first) >= ratio * sum(self.counts[f] for f in second)

    def _compatible(self, form: str, other: str) -> bool:
        mine = self.group_gender(self.find(form))
        theirs = self.group_gender(self.find(other))
        return not (mine and theirs and mine != theirs)

    def join_shorter(self, forms: list[str], target: str) -> None:
        """Join the shorter ``forms`` to the longer name's group ``target`` where one person."""
        roots = {self.find(f) for f in forms}
        target_titles = {_title_key(n) for n in self.counts if self.find(n) == target} - {()}
        if len(roots) == 1:
            # "Mr. Beebe" is not "Minnie Beebe": a titled surname joins a full name when the book
            # gives that name the same title ("Mr. Fitzwilliam Darcy") or the same gender.
            root = next(iter(roots))
            titles = {_title_key(n) for n in self.counts if self.find(n) == root} - {()}
            same = bool(self.group_gender(target)) and self.group_gender(target) == self.group_gender(root)
            given = all(set(t) <= _GIVEN_NAME_TITLES for t in titles)  # "Miss Rose" is "Rose Maylie"
            if (not titles or given or titles & target_titles or same) and self._compatible(forms[0], target):
                self.union(forms[0], target)
            return
        # Two titled people share the word ("Miss Miller", "Mrs. Miller"): the title the longer
        # name carries ("Miss Daisy Miller") picks one.
        for form in forms:
            if _title_key(form) in target_titles and self._compatible(form, target):
                self.union(form, target)
                return
        # No title on the longer name ("Fitzwilliam Darcy"): its gender, else the most used, picks.
        # A bare surname names no one in particular: a titled form of the right gender alone
        # ("Miss Woodhouse" beside "Mr." and "Woodhouse") is the full name's.
        fitting = sorted((r for r in roots if self._compatible(r, target)), key=lambda r: -self._weight(r))
        titled = [r for r in fitting if self._titles(r)]
        if self.group_gender(target) and len(titled) == 1 and self.group_gender(titled[0]):
            fitting = titled
        if len(fitting) == 1 or (
            len(fitting) > 1 and self._weight(fitting[0]) >= 3 * self._weight(fitting[1])
        ):
            self.union(fitting[0], target)

    def join_dominant(self, forms: list[str], targets: list[str]) -> None:
        """A titled surname shared by several full names joins the one used three times as often as
        the rest, when of its gender ("Mr. Sikes" -> "Bill Sikes", not the once-named "William Sikes")."""
        roots = {self.find(f) for f in forms}
        if len(roots) != 1 or not any(_title_key(f) for f in forms):
            return
        fitting = sorted(
            (t for t in set(targets) if self._compatible(forms[0], t) and self.group_gender(t)),
            key=lambda t: -self._weight(t),
        )
        rest = sum(self._weight(t) for t in set(targets)) - (self._weight(fitting[0]) if fitting else 0)
        if fitting and self._weight(fitting[0]) >= 3 * rest:
            self.union(forms[0], fitting[0])

    def _titles(self, root: str) -> set[tuple[str, ...]]:
        return {_title_key(n) for n in self.counts if self.find(n) == root} - {()}

    def _weight(self, root: str) -> int:
        return sum(count for name, count in self.counts.items() if self.find(name) == root)

    def canonical(self) -> dict[str, str]:
        members: dict[str, list[str]] = {}
        for name in self.counts:
            members.setdefault(self.find(name), []).append(name)
        result: dict[str, str] = {}
        for forms in members.values():
            # The most used form, or a fuller one used nearly as often ("Fir Tree" over "Tree").
            top = max(self.counts[f] for f in forms)
            best = max(
                (f for f in forms if 3 * self.counts[f] >= top),
                key=lambda f: (len(name_words(f)), self.counts[f], len(f), f),
            )
            for form in forms:
                result[form] = best
        return result


def _place(longer: tuple[str, ...], shorter: tuple[str, ...], *, at_end_only: bool) -> str:
    """Where ``shorter`` sits in ``longer``: "end" ("Darcy" in "Fitzwilliam Darcy"), "start"
    ("Dorian" in "Dorian Gray") or "" (not there). A word that goes with a surname's title
    ("Colonel Fitzwilliam") only ends a longer name."""
    n = len(shorter)
    if longer[-n:] == shorter:
        return "end"
    return "start" if not at_end_only and longer[:n] == shorter else ""
