"""Characters the book names by their rank alone: Huckleberry Finn's king and duke ("says the king",
"the duke says"), who have no other name, a fairy tale's queen, a ship's captain.

Where the book gives someone the rank as a title ("Count Mippipopolous", "Doctor Losberne"), a tag
with the rank noun is theirs (:mod:`.attribution`); where no one carries it, :func:`role_forms`
makes the rank a character of its own, once the book's tags use it often enough to be one person.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from omni_web.cast.names import name_words, title_key
from omni_web.cast.tags import is_speech_verb

__all__ = ["RANK_NOUNS", "role_forms"]

# Nouns that are a rank or a calling: "the lady", "the master", "the father" are anyone's.
RANK_NOUNS = frozenset(
    """doctor captain colonel major general count countess duke duchess king queen prince princess
    professor inspector judge sergeant lieutenant admiral baron baroness marquis vicar rector""".split()
)
_MIN_TAGS = 8  # fewer tags may be several people of the rank, met once each
_RANK = "|".join(sorted(RANK_NOUNS))
_VERB_THE_RANK = re.compile(rf"\b([a-z]+)\s+the\s+({_RANK})\b")
_THE_RANK_VERB = re.compile(rf"\bthe\s+({_RANK})\s+([a-z]+)\b")
# A title before a name: "Doctor Losberne", "Dr. Losberne", "Capt. Hawdon".
_TITLED = re.compile(r"\b([A-Z][a-z]+)\.?\s+(?=([A-Z][\w’'\-]+))")


def role_forms(texts: Sequence[str], forms: Collection[str], people: Collection[str]) -> Counter[str]:
    """The ranks the book's tags name a speaker by ("says the king") at least eight times, where
    none of its characters carries the rank as a title; each as a capitalised form ("King") with
    its tags counted.

    Args:
        texts: the book's paragraphs, its talk too ("when Doctor Losberne came in": the doctor is
            Mr. Losberne's rank, though the narration never writes it).
        forms: every capitalised name the narration writes, once or more.
        people: the roster's forms: a king of a story told ("King Sollermun") is no one's here.
    """
    tags: Counter[str] = Counter()
    for text in texts:
        tags.update(m.group(2) for m in _VERB_THE_RANK.finditer(text) if is_speech_verb(m.group(1)))
        tags.update(m.group(1) for m in _THE_RANK_VERB.finditer(text) if is_speech_verb(m.group(2)))
    ranks = {rank for rank, n in tags.items() if n >= _MIN_TAGS}
    if not ranks:
        return Counter()
    known = {word for form in people for word in name_words(form)}
    held = {title for form in forms if not name_words(form) for title in title_key(form)}
    for text in texts:
        for match in _TITLED.finditer(text):
            if match.group(2) in known:
                held.update(title_key(match.group(1)))
    return Counter({rank.title(): tags[rank] for rank in ranks if not set(title_key(rank.title())) & held})
