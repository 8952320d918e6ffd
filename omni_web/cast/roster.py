"""A book's roster: every form its characters' names take, each form's character, and their genders.

Attribution reads it to give a quote the character's one name whatever form the tag used ("said
Darcy" and "said Mr. Darcy" are one speaker, so one voice) and to resolve a pronoun tag ("she
said") to the last character of that gender. It is built from the book itself in one pass
(:func:`build_roster`): the names speech tags give, the capitalised names of the narration that
share a word with them, the book's own spelling of words (:class:`~.names.Vocabulary`), the pronouns
that follow each name, and whether the narration says "I" (a first-person narrator). The user's
edits (:class:`~.edits.CastEdits`) are laid over it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from omni_web.cast.given_names import given_name_gender, patronymic_gender
from omni_web.cast.name_groups import group_names
from omni_web.cast.names import Gender, Vocabulary, clean_name, name_words, title_gender, title_key
from omni_web.cast.sections import teller_forms

__all__ = ["FIRST_PERSON_NARRATOR", "Roster", "first_person_share", "group_forms", "pronoun_genders"]

# The label of the first-person narrator's quotes ("I said") when the book never names them.
FIRST_PERSON_NARRATOR = "Narrator"
# "him" and "her" are left out: after a name they are mostly someone else ("Darcy looked at her").
_MALE = frozenset("he his himself".split())
_FEMALE = frozenset("she hers herself".split())
_PRONOUN_RE = re.compile(r"\b(he|his|himself|she|hers|herself)\b", re.IGNORECASE)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|me|my|myself|mine)\b")
_WORDS_RE = re.compile(r"\b\w+\b")
# Words before a name that make it an object ("looked at May, and he"): the pronoun is the subject's.
_OBJECT_RE = re.compile(
    r"\b(?:at|to|with|for|of|on|upon|from|by|about|towards?|than|saw|asked|told|met|left|like)\s+$"
)


@dataclass(frozen=True, slots=True)
class Roster:
    """Forms of names and the character each stands for.

    ``canonical`` maps a cleaned form ("Darcy") to its character's name ("Mr. Darcy"); ``genders``
    maps a character's name to its gender; ``first_person`` is True when the narration says "I";
    ``narrator`` is the first-person narrator's label (a name the user gave, or ``"Narrator"``);
    ``likely`` maps a character to those it may be under another name (see :mod:`.name_hints`);
    ``told_in_parts`` is True for a book whose parts are told by several of its characters (Dracula's
    journals; see :mod:`.sections`): "I" is the teller of each part.
    """

    canonical: Mapping[str, str] = field(default_factory=dict)
    genders: Mapping[str, Gender] = field(default_factory=dict)
    vocabulary: Vocabulary | None = None
    first_person: bool = False
    narrator: str = FIRST_PERSON_NARRATOR
    hidden: frozenset[str] = frozenset()
    likely: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    told_in_parts: bool = False

    def told_by(self, teller: str | None) -> Roster:
        """This roster for a part of the book told by ``teller`` (a name as a header writes it)."""
        if teller is None or not self.told_in_parts or not self.first_person:
            return self
        names = set(self.canonical.values())
        forms = teller_forms(teller)
        found = (self.resolve(form) for form in forms)
        # One the book names nowhere else is the person as the header names them.
        name = next((n for n in found if n is not None and n in names), None) or self.resolve(forms[1])
        return replace(self, narrator=name) if name is not None else self

    @classmethod
    def empty(cls) -> Roster:
        """No book known: names are taken as tags give them."""
        return cls()

    def resolve(self, raw: str) -> str | None:
        """The character a name as written stands for (its canonical name), or None if not a name."""
        name = clean_name(raw, self.vocabulary)
        if name is None:
            return None
        found = self.canonical.get(name)
        if found is None and self.canonical:
            found = self.canonical.get(_casefold_key(self.canonical).get(name.casefold(), ""), None)
        if found is None and self.canonical:
            found = self._initialled(name)
        if found is None and self.vocabulary is not None and self.vocabulary.is_place(name):
            return None  # "from London", "in English": a place or a language no tag made a speaker
        if found is None and not name_words(name) and self.canonical:
            # A title no character of the book carries is no one ("Lord bless you").
            found = self._title_holder(name)
            if found is None:
                return None
        found = found or name
        return None if found.casefold() in self.hidden else found

    def _initialled(self, name: str) -> str | None:
        """The one character whose full name an initial and a surname stand for ("P. Luzhin", as a
        letter in Crime and Punishment is signed: Pyotr Petrovitch Luzhin)."""
        words = name_words(name)
        if len(words) != 2 or len(words[0]) != 1:
            return None
        holders = set()
        for form, character in self.canonical.items():
            full = name_words(form)
            if len(full) > 1 and full[-1] == words[1] and len(full[0]) > 1 and full[0][0] == words[0]:
                holders.add(character)
        return holders.pop() if len(holders) == 1 else None

    def _title_holder(self, title: str) -> str | None:
        """The one character the book names with ``title`` ("the Colonel": "Colonel Fussell")."""
        key = title_key(title)
        if len(key) != 1:
            return None
        holders = {name for form, name in self.canonical.items() if key[0] in title_key(form)}
        return holders.pop() if len(holders) == 1 else None

    def gender(self, name: str) -> Gender:
        """A character's gender (unknown when the book does not show it): the book's, else its
        title's, else its given name's (a teller the book names only in a header, "Mina Murray")."""
        if name in self.genders:
            return self.genders[name]
        gender = title_gender(name)
        return gender if gender is not Gender.UNKNOWN else given_name_gender(name)

    def aliases(self, name: str) -> tuple[str, ...]:
        """The other forms of ``name`` the book uses, most words first."""
        forms = [form for form, target in self.canonical.items() if target == name and form != name]
        return tuple(sorted(forms, key=lambda f: (-len(f.split()), f)))

    def with_likely(self, more: Mapping[str, Sequence[str]]) -> Roster:
        """The roster with ``more`` characters it may be under another name (after the rules')."""
        likely = {name: tuple(others) for name, others in self.likely.items()}
        for name, others in more.items():
            likely[name] = tuple(dict.fromkeys((*likely.get(name, ()), *others)))
        return replace(self, likely=likely)

    def likely_same(self, name: str) -> tuple[str, ...]:
        """The characters ``name`` may be under another name, as the roster names them now (the
        user's merges and renames laid over); either side of a hint names the other."""
        found: list[str] = []
        for character, others in self.likely.items():
            mine = self.canonical.get(character, character)
            theirs = [self.canonical.get(o, o) for o in others]
            found += theirs if mine == name else [mine] if name in theirs else []
        hidden = self.hidden | {name.casefold()}
        return tuple(dict.fromkeys(c for c in found if c.casefold() not in hidden))

    @property
    def names(self) -> frozenset[str]:
        """Every character's name."""
        return frozenset(self.canonical.values())


def _casefold_key(canonical: Mapping[str, str]) -> dict[str, str]:
    return {form.casefold(): form for form in canonical}


def first_person_share(narration: Iterable[str]) -> float:
    """The share of narration words that are "I", "me", "my", "myself" or "mine"."""
    first = words = 0
    for text in narration:
        first += len(_FIRST_PERSON_RE.findall(text))
        words += len(_WORDS_RE.findall(text))
    return first / words if words else 0.0


def pronoun_genders(narration: Sequence[str], forms: Iterable[str]) -> dict[str, Gender]:
    """Each form's gender from the pronoun that follows its mentions in the narration (majority)."""
    wanted = sorted({f for f in forms if name_words(f)}, key=len, reverse=True)
    if not wanted:
        return {}
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(f) for f in wanted) + r")(?![\w’'-])")
    votes: dict[str, Counter[Gender]] = {}
    for text in narration:
        for match in pattern.finditer(text):
            tail = text[match.end() : match.end() + 120]
            following = _PRONOUN_RE.search(tail)
            if following is None or len(re.findall(r"[.!?]\s", tail[: following.start()])) > 1:
                continue  # none in this sentence or the next: it may point at someone else
            if _OBJECT_RE.search(text, max(0, match.start() - 12), match.start()):
                continue  # "looked at May, and he": the name is an object, the pronoun the subject
            word = following.group(1).casefold()
            gender = Gender.MALE if word in _MALE else Gender.FEMALE
            votes.setdefault(match.group(1), Counter())[gender] += 1
    result: dict[str, Gender] = {}
    for form, counted in votes.items():
        (best, top), *rest = counted.most_common() + [(Gender.UNKNOWN, 0)]
        if top >= 2 and 2 * top >= 3 * rest[0][1]:
            result[form] = best
    return result


def group_forms(
    counts: Mapping[str, int],
    narration: Sequence[str],
    pairs: Collection[tuple[str, str]] = (),
    aliases: Collection[tuple[str, str]] = (),
) -> tuple[dict[str, str], dict[str, Gender]]:
    """Canonical names for ``counts``' forms and each character's gender (titles, then pronouns);
    ``pairs`` are the capitalised words the book writes side by side, ``aliases`` the names it
    writes as one person's (see :func:`group_names`)."""
    by_pronoun = pronoun_genders(narration, counts)
    # A given name tells the gender of a form the pronouns do not show ("Newland Archer", not
    # "Janey Archer", is the man "Archer" means).
    by_name = {form: given_name_gender(form) for form in counts if title_gender(form) is Gender.UNKNOWN}
    genders = {form: g for form, g in by_name.items() if g is not Gender.UNKNOWN} | by_pronoun
    canonical = group_names(counts, genders, pairs, aliases)
    votes: dict[str, Counter[Gender]] = {}
    for form, target in canonical.items():
        count = max(1, counts.get(form, 1))
        # A title, or a patronymic ("Alyona Ivanovna"), outweighs the pronouns after the name.
        gender = title_gender(form)
        gender = gender if gender is not Gender.UNKNOWN else patronymic_gender(form)
        if gender is not Gender.UNKNOWN:
            votes.setdefault(target, Counter())[gender] += 3 * count
            continue
        for gender, weight in ((by_pronoun.get(form, Gender.UNKNOWN), 1), (given_name_gender(form), 2)):
            if gender is not Gender.UNKNOWN:
                votes.setdefault(target, Counter())[gender] += weight * count
    genders = {target: counted.most_common(1)[0][0] for target, counted in votes.items()}
    return canonical, genders
