"""Character names: titles kept whole, sentence openers cut off, genders and ages from titles.

A name as a tag gives it ("Mrs. Bennet", "the March Hare", "When Margaret") is cleaned by
:func:`clean_name`: a leading article goes, a title stays with its full stop ("Mrs.", "Mlle."),
and words that only open a sentence ("When", "Presently", "Whereupon", "Rather") are cut off or
make it no name at all. A book's :class:`Vocabulary` tells such openers from names by how the book
itself writes them: a word the book writes in lower case mid-sentence more often than capitalised
is no name ("rather", "presently"), whatever list it is missing from.

Joining the forms of one character is :mod:`.name_groups`' work.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from omni_web.cast.given_name_lists import FEMALE_NAMES, MALE_NAMES

__all__ = [
    "Age",
    "GIVEN_NAME_TITLES",
    "Gender",
    "KIN_TITLES",
    "NOT_A_SENTENCE_END",
    "age_guess",
    "Vocabulary",
    "clean_name",
    "name_pairs",
    "name_words",
    "sentence_break",
    "title_gender",
    "title_of",
    "title_key",
]


class Gender(enum.StrEnum):
    """A character's gender as the book's pronouns and titles show it."""

    MALE = "male"
    FEMALE = "female"
    UNKNOWN = "unknown"


class Age(enum.StrEnum):
    """A character's age as their titles and the words around their name show it."""

    CHILD = "child"
    YOUNG = "young"  # "young Stamford", "Young Jefferson Hope": grown, but not long
    ADULT = "adult"
    OLD = "old"
    UNKNOWN = "unknown"


_MALE_TITLES = frozenset(
    """mr mister sir lord master monsieur m uncle father king prince duke count baron colonel captain
    capt major general admiral sergeant lieutenant herr señor signor don brother abbé abbe reverend
    rev parson squire earl emperor marquis marquess viscount""".split()
)
_FEMALE_TITLES = frozenset(
    """mrs mistress miss ms mme madame mlle mademoiselle madam lady aunt mother queen princess duchess
    countess baroness dame sister frau fräulein fraulein señora señorita signora donna nurse granny
    grandmother empress marchioness viscountess""".split()
)
_NEUTRAL_TITLES = frozenset(
    """dr doctor professor prof judge old young little cousin grandfather inspector constable
    superintendent""".split()
)
# Titles written before a given name as well as a surname ("Sir Walter", "Miss Elizabeth").
GIVEN_NAME_TITLES = frozenset(
    "sir lady miss master don donna dame old young little aunt uncle cousin".split()
)
# Titles that name a relation: "Aunt March" is the girls' aunt, not one of the Marches they are.
KIN_TITLES = frozenset("aunt uncle cousin granny grandmother grandfather".split())
# Titles that never stand for a person alone.
_ADDRESS_ONLY = frozenset(
    "mr mrs ms m mme mlle mister miss master herr frau señor señora signor signora".split()
)
TITLES = _MALE_TITLES | _FEMALE_TITLES | _NEUTRAL_TITLES
# Titles that name no one alone ("the Doctor", "the Professor" do; "Mr.", "Old" do not).
_NOT_ALONE = _ADDRESS_ONLY | frozenset("dr prof old young little cousin".split())
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
    monday tuesday wednesday thursday friday saturday sunday january february july september october
    november december christmas
    part volume il elle ils elles on le la les un une et mais puis él ella el los las er sie es der die
    das""".split()
)
# Adjectives of a people or a language: "the English" are many, "in French" is how, never who.
_NATIONALITIES = frozenset(
    """english french german italian spanish russian american irish scotch scottish welsh british dutch
    greek latin chinese japanese indian polish austrian swiss belgian portuguese turkish swedish danish
    norwegian hungarian egyptian arabic european african asiatic oriental eurasian hindu moslem basque
    basques""".split()
)
# Words that name no one who speaks in a novel's quotes: the interjections "Good God!", "Heavens!"
# and "Thank Heaven," read as a name called (not "Jesus" or "Christ", who speak in Ben-Hur).
_INTERJECTIONS = frozenset("god heaven heavens goodness gracious jove providence".split())
# A contraction of a pronoun or a verb is no name: "I’ll", "Don’t", "It’s"; "Ahab’s" is a name's.
_CONTRACTED = re.compile(r"[’'](?:ll|m|ve|d|re|t)$|n[’']t$", re.IGNORECASE)
# A place, not a person: "Cape Horn", "Mount Vernon"; "the Indian Ocean", "Fleet Street".
_PLACE_FIRST = frozenset("cape mount mt lake fort isle".split())
_PLACE_LAST = frozenset(
    """ocean sea river street square road avenue island islands bay gardens abbey cathedral mountains
    channel strait straits harbour harbor valley station farm manor grange cottage hotel inn park
    bridge heights""".split()
)
# A body or a place, not a person: "the Company" is followed by "he" in Heart of Darkness, "the
# City", "the Court" and "the Battery" in Great Expectations, but none of them speaks.
_INSTITUTIONS = frozenset(
    """company society government council committee ministry parliament corporation administration
    association department embassy university college bank navy army city court sessions battery
    parish county town village church chapel crown""".split()
)
# A word alone that names no one: "the English", "the Company".
_NOT_ONE_PERSON = _NATIONALITIES | _INSTITUTIONS
_GIVEN_NAMES = MALE_NAMES | FEMALE_NAMES
_WORD_RE = re.compile(r"[^\W\d_][\w’'\-.]*")
# A capitalised word after or before a number ("_3 August._", "August 5th"), the number not taken.
_DATED = re.compile(
    r"(?<![A-Za-z0-9])\d{1,4}(?:st|nd|rd|th)?\s+([A-Z][a-z]+)\b"
    r"|\b([A-Z][a-z]+)\.?\s+(?=\d{1,4}(?:st|nd|rd|th)?(?![A-Za-z0-9]))"
)
_PLACE_PREPOSITIONS = frozenset("in into through across near toward towards from below above beyond".split())
# "To" after a going: "down to Orleans", "went to Paris" (not "said to Jim").
_GOING = frozenset("go goes going gone went come comes coming came back down up over off way".split())
# Small words inside a name, and "St." ("Mr. van der Luyden", "Lord St. Simon"), for patterns
# that find names in the text.
NAME_PARTICLES = r"(?:(?:de|van|von|der|den|du|le|la|St\.)\s+){1,2}"
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


_CHILD_WORDS = frozenset("master little baby boy girl kid".split())
_OLD_WORDS = frozenset("old granny grandmother grandfather grandpa grandma gaffer elder".split())
_ADULT_TITLES = TITLES - _CHILD_WORDS - _OLD_WORDS - {"little", "young", "cousin"}


def age_guess(forms: Iterable[str]) -> Age:
    """A character's age from the forms of their name ("Old Pipes": old, "Master Tom": child,
    "Young Stamford": young; "Young Mr. Brooke": adult)."""
    words = {w.casefold().rstrip(".") for form in forms for w in form.replace("-", " ").split()}
    if words & _OLD_WORDS:
        return Age.OLD
    if words & _CHILD_WORDS:
        return Age.CHILD
    if words & _ADULT_TITLES:
        return Age.ADULT
    return Age.YOUNG if "young" in words else Age.UNKNOWN


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


# Two capitalised words side by side, overlapping ("Miss Jane Bennet": Miss Jane, Jane Bennet).
_PAIR_RE = re.compile(r"(?<![\w’'-])([A-Z][a-z’'-]+)(?=\s+([A-Z][a-z’'-]+)(?![\w’'-]))")


def name_pairs(texts: Iterable[str]) -> Counter[tuple[str, str]]:
    """The capitalised words ``texts`` write side by side ("Jane Bennet", "Miss Elizabeth"), counted."""
    return Counter((match.group(1), match.group(2)) for text in texts for match in _PAIR_RE.finditer(text))


def _placed(before: Sequence[str], word: str) -> tuple[bool, bool]:
    """Whether the words before a capitalised word place it ("in London", "went to Orleans"; not
    "said to Jim", nor "a letter from Jonathan"), and whether with "the" between ("at the Grange",
    "in the Forest"; not "looked at Jane")."""
    words = list(before)
    the = bool(words) and words[-1] == "the"
    if the:
        words.pop()
    last = words[-1].casefold() if words else ""
    placed = (last in _PLACE_PREPOSITIONS and not (last == "from" and word in _GIVEN_NAMES)) or (
        the and last == "at"
    )
    placed = placed or (last == "to" and len(words) > 1 and words[-2].casefold() in _GOING)
    return placed and not the, placed and the


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """How a book writes its words: capitalised mid-sentence (a name) or in lower case (a word)."""

    capitalised: Mapping[str, int]  # folded word -> times written capitalised after a sentence's start
    lower: Mapping[str, int]  # folded word -> times written in lower case
    placed: Mapping[str, int] = dataclasses.field(default_factory=dict)  # of those, after "in", "from", …
    # ... after "in the", "at the", …: a place by its common name ("the Grange"), not a person's first
    # word ("at the George" is an inn, "Sir George Lynn" a man).
    placed_the: Mapping[str, int] = dataclasses.field(default_factory=dict)
    # folded word -> times written beside a number: a month or a weekday ("4 August", "August 4th")
    dated: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        """Count the words of the book's paragraphs."""
        capitalised: Counter[str] = Counter()
        lower: Counter[str] = Counter()
        placed: Counter[str] = Counter()
        placed_the: Counter[str] = Counter()
        dated: Counter[str] = Counter()
        for text in texts:
            dated.update((m.group(1) or m.group(2)).casefold() for m in _DATED.finditer(text))
            for sentence in _VOCABULARY_BREAK.split(text):
                words = _WORD_RE.findall(sentence)
                run = (False, False)  # how the capitalised run this word goes on was placed
                for i, word in enumerate(words[1:], start=1):
                    word = word.rstrip(".")
                    if word[:1].isupper():
                        capitalised[word.casefold()] += 1
                        going_on = words[i - 1][:1].isupper() and i > 1
                        # "at Wuthering Heights" places "Heights" too; "to Mr. Bennet" or "from
                        # Jane Bennet" not "Bennet": a run a title or a given name begins is a person.
                        if not going_on:
                            placed_here = _placed(words[max(0, i - 3) : i], word)
                            person = title_of(word) is not None or word in _GIVEN_NAMES
                            run = (False, False) if person else placed_here
                        bare, after_the = run if going_on else placed_here
                        placed[word.casefold()] += bare
                        placed_the[word.casefold()] += after_the
                    elif word[:1].islower():
                        lower[word] += 1
        return cls(dict(capitalised), dict(lower), dict(placed), dict(placed_the), dict(dated))

    def is_place(self, name: str) -> bool:
        """True when the book writes the name's first word after "in", "into", "from", … at least a
        quarter of the times it capitalises it ("in London", "from Spain", "in English"): a place or
        a language. On the tuning novels characters come after these words 1-3 % of the time (one,
        20 %), places 25-100 %. A name with no title or given name counts "in the", "at the" too ("the
        Grange", "the Jolly Cricketers")."""
        words = name_words(name)
        if not words:
            return False
        folded = words[0].casefold()
        placed = self.placed.get(folded, 0)
        if not title_key(name) and (len(words) == 1 or words[0] not in _GIVEN_NAMES):
            placed += self.placed_the.get(folded, 0)
        return placed >= 2 and 4 * placed >= self.capitalised.get(folded, 0)

    def is_word(self, word: str) -> bool:
        """True when the book writes ``word`` in lower case more often than as a name, or never
        capitalises it inside a sentence while writing it in lower case, or it is such an adverb or
        participle ("Luckily", "Lastly" and "Steeping" only ever open sentences)."""
        folded = word.casefold().rstrip(".")
        lower, capitalised = self.lower.get(folded, 0), self.capitalised.get(folded, 0)
        # "Steeping the towels in the water, ... said," opens a sentence as "Luckily" does.
        opener = (folded.endswith("ly") and len(folded) > 4) or (folded.endswith("ing") and len(folded) > 5)
        if capitalised == 0 and (lower > 0 or opener):
            return True
        dated = self.dated.get(folded, 0)  # "4 August", in a diary's dates: a month, not a man
        return lower > max(1, capitalised) or (dated >= 2 and 2 * dated >= capitalised)


def clean_name(raw: str, vocabulary: Vocabulary | None = None) -> str | None:
    """A name as the cast lists it ("the March Hare" -> "March Hare", "When Margaret" -> "Margaret").

    Titles stay whole ("Mrs. Bennet", "Mlle. Reisz"); a name that is only openers or titles is None.
    """
    words = re.split(r"--|\u2014|\u2013", raw)[0].strip().strip(",;:’'\"_").split()
    if len(words) > 1 and _is_place(words):
        return None  # before "Baker", a word the book writes in lower case, is cut off "Baker Street"
    while words and _is_opener(words[0], vocabulary) and not _given_before_surname(words):
        words.pop(0)
    # A title after a name starts another name ("Anne Mrs. Rachel" as a capitalised run): cut there.
    for k in range(1, len(words)):
        if title_of(words[k]) is not None and title_of(words[k - 1]) is None:
            del words[k:]
            break
    if not words or (len(words) == 1 and words[0].casefold().strip(",.;:") in _NOT_ONE_PERSON):
        return None
    if _is_place(words):
        return None
    if any(w.endswith(("’s", "'s", "’", "'")) for w in words):
        # A possessive ("the Rabbit’s voice", "Jonathan Harker's Journal") names whose something.
        return None
    while len(words) > 1 and words[-1] == "I":
        words.pop()  # "Jonathan I" of "Jonathan, I ..." in a capitalised run
    last = words[-1]
    words[-1] = last.rstrip(".") if title_of(last) is None else last
    if all(title_of(w) is not None for w in words):
        # "the Queen", "the Captain" name someone; "Mr." or "Old" alone do not.
        bare = len(words) == 1 and title_of(words[0]) not in _NOT_ALONE
        return " ".join(words) if bare else None
    if any(
        w[:1].islower()
        and title_of(w) is None
        and w not in ("de", "van", "von", "der", "den", "la", "le", "du", "di", "the")
        for w in words
    ):
        return None
    return " ".join(words)


def _given_before_surname(words: list[str]) -> bool:
    """A given name the book also writes as a word, before a surname: "Grace Miller", "May
    Welland", "Frank Churchill" are names, though "grace", "may" and "frank" are words."""
    return (
        len(words) > 1
        and words[0] in _GIVEN_NAMES
        and words[1][:1].isupper()
        and title_of(words[1]) is None
        and words[0].casefold() not in _OPENERS
    )


def _is_place(words: list[str]) -> bool:
    """A name with no title that a place's word begins or ends: "Cape Horn", "Fleet Street"; "Cape"
    alone ("round the Cape")."""
    if any(title_of(w) is not None for w in words):
        return False
    words = [part for word in words for part in word.split("-") if part]  # "Fleet-street"
    if not words:
        return False
    first, last = words[0].casefold(), words[-1].casefold().strip(",.;:")
    return first == "cape" or (len(words) > 1 and (first in _PLACE_FIRST or last in _PLACE_LAST))


def _is_opener(word: str, vocabulary: Vocabulary | None) -> bool:
    folded = word.casefold().strip(",.;:")
    if folded in ("the", "a", "an") or folded in _OPENERS or folded in _INTERJECTIONS:
        return True
    stem, _, ending = folded.replace("’", "'").partition("'")
    if _CONTRACTED.search(folded) or (ending == "s" and stem in _OPENERS):
        return True  # "I’ll", "Can’t"; "It’s", "That’s", "Here’s"
    if title_of(word) is not None:
        return False
    return vocabulary is not None and vocabulary.is_word(word)


def title_key(name: str) -> tuple[str, ...]:
    """The titles of a name, Mr/Mister and Mrs/Mistress read alike."""
    same = {"mister": "mr", "mistress": "mrs", "madame": "mme", "mademoiselle": "mlle", "capt": "captain",
            "doctor": "dr", "prof": "professor", "fraulein": "fräulein"}
    return tuple(same.get(t, t) for t in (title_of(w) for w in name.split()) if t is not None)
