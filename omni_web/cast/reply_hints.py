"""Characters that answer to another's name: "Fagin!" called, "said the Jew" replying.

When a line calls someone by name ("Fagin, my dear!"), the next line is most often that person's
answer. Where the one who answers, tagged by name, is another character of the cast, most of the
times the name is called, and the two never talk to each other, they are likely one person under
two names (Oliver Twist: "Fagin" and "the Jew"; Sense and Sensibility: "Miss Dashwood" and
"Elinor"). :func:`answered_as` lists such pairs for the cast screen to offer as a merge; on the
annotated corpus all four it finds are one person, but it offers, it never joins.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE, Quote
from omni_web.cast.given_names import given_name_gender
from omni_web.cast.names import Gender, name_words, title_key
from omni_web.cast.roster import Roster

__all__ = ["answered_as"]

_TAGGED = frozenset({"tag"})  # a line its speaker is named after ("said the Jew")
_MIN_ANSWERS = 3  # times the name is called and answered by the same other character
_MAX_TALK = 2  # tagged lines of the two answering each other, at most (a slip of the tagging)
_BEFORE_CALL = r"(?:^|[,“\"‘'(—\-_]\s*|\b(?:dear|my|oh|O)\s+)"
_AFTER_CALL = r"(?=\s*[,!?.;—\-_])"


def answered_as(chapters: Iterable[Sequence[Quote]], roster: Roster) -> dict[str, tuple[str, ...]]:
    """Each character called by name whose calls another character answers (tagged by name) at
    least half the time and three times, where the two never talk to each other (answer each
    other, or call the other by name): that one.

    Args:
        chapters: each chapter's quotes in reading order, attributed.
        roster: the book's names; the narrator, two given names of two people ("Jane",
            "Elizabeth"), a man and a woman, and two names the roster gives one family ("Tom
            Gradgrind", "Mr. Gradgrind") are never paired.
    """
    forms = sorted((f for f in roster.canonical if f.casefold() not in roster.hidden), key=len)[::-1]
    if not forms:
        return {}
    calls = re.compile(_BEFORE_CALL + "(" + "|".join(map(re.escape, forms)) + ")" + _AFTER_CALL)
    answered: Counter[tuple[str, str]] = Counter()
    talk: Counter[frozenset[str]] = Counter()
    for quotes in chapters:
        for line in quotes:
            # One who calls the other by name is not the other ("Starbuck!" in Stubb's lines).
            speaker = line.attribution.speaker
            if speaker is not None and line.attribution.confidence >= DEFAULT_MIN_CONFIDENCE:
                for called in {roster.canonical[m.group(1)] for m in calls.finditer(line.text)}:
                    talk[frozenset((called, speaker))] += called != speaker
        for line, reply in itertools.pairwise(quotes):
            first, second = line.attribution, reply.attribution
            if second.rule not in _TAGGED or second.speaker is None:
                continue
            if first.rule in _TAGGED and first.speaker not in (None, second.speaker):
                talk[frozenset((first.speaker, second.speaker))] += 1
            for called in {roster.canonical[m.group(1)] for m in calls.finditer(line.text)}:
                if called not in (second.speaker, first.speaker):
                    answered[(called, second.speaker)] += 1
    per_called: Counter[str] = Counter()
    for (called, _), count in answered.items():
        per_called[called] += count
    found: dict[str, tuple[str, ...]] = {}
    for (called, speaker), count in answered.most_common():
        if (
            count >= _MIN_ANSWERS
            and 2 * count >= per_called[called]
            and talk[frozenset((called, speaker))] <= _MAX_TALK
            and _may_be_one(called, speaker, roster)
        ):
            found[called] = (*found.get(called, ()), speaker)
    return found


def _may_be_one(called: str, speaker: str, roster: Roster) -> bool:
    if roster.first_person and roster.narrator in (called, speaker):
        return False
    if {roster.gender(called), roster.gender(speaker)} >= {Gender.MALE, Gender.FEMALE}:
        return False
    given = [
        name
        for name in (called, speaker)
        if not title_key(name) and given_name_gender(name) is not Gender.UNKNOWN
    ]
    if len(given) == 2:
        return False  # "Jane" and "Elizabeth": two people the book names by given name
    # "Tom Gradgrind" and "Mr. Gradgrind": one family, two people the rules kept apart.
    called_words, speaker_words = (
        {word for form in (name, *roster.aliases(name)) for word in name_words(form)}
        for name in (called, speaker)
    )
    return not called_words & speaker_words
