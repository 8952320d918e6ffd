"""A first-person narrator's own name, from what the others call them.

"I said" never names the narrator, and the narration hardly does, so the roster knows no name for
them. The people they talk to do: "You must come, Jake." In a first-person book the name called
most in the lines around the narrator's own ("I said") lines, and never given by a tag as a
speaker's, is the narrator's (The Sun Also Rises: Jake, 89 times; Styles: Hastings; The Sign of
the Four: Watson; The Gambler: Alexis Ivanovitch). Known by name, the narrator is the one a line
speaks to ("Jake, …" is answered by "I"), and a line that calls them by name is not theirs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from omni_web.cast.names import Vocabulary, clean_name, name_words

__all__ = ["narrator_forms"]

# A name called out: at the quote's start or after a comma or "dear"/"my"/"oh", then a pause.
_CALLED_RE = re.compile(
    r"(?:^[\s“\"‘']*|,\s+|\b(?:dear|my|oh|O)\s+)"
    r"((?:(?:Mr|Mrs|Dr|Mlle|Mme)\.\s+|(?:Monsieur|Madame|Mademoiselle|Miss|Doctor)\s+)?"
    r"[A-Z][\w’'\-]+(?:\s+[A-Z][\w’'\-]+)?)"
    r"(?=\s*[,!?.;—\-])"
)
# Lines this many speaking paragraphs from one of the narrator's are the narrator's exchanges.
_NEAR = 2
_MIN_CALLS = 3  # a name called fewer times near the narrator's lines says nothing
_DOMINANCE = 2  # ... or called not twice as often as any other candidate


def called_names(quote: str, vocabulary: Vocabulary | None) -> list[str]:
    """The names ``quote`` calls out ("Jake, …", "…, Mr. Hastings?"), cleaned."""
    found = []
    for match in _CALLED_RE.finditer(quote):
        name = clean_name(match.group(1), vocabulary)
        if name is not None and name_words(name):
            found.append(name)
    return found


def narrator_forms(
    lines: Sequence[tuple[bool, Sequence[str]]],
    speakers: Iterable[str],
    vocabulary: Vocabulary | None = None,
) -> tuple[str, ...]:
    """The forms of the narrator's name: empty when no name stands out.

    Args:
        lines: a book's speaking paragraphs in order: whether the narrator's own tag ("I said")
            marks it, and its quotes.
        speakers: every form a tag gives a speaker: a name a tag gives is not the narrator's.
    """
    taken = {word for form in speakers for word in name_words(form)}
    mine = [k for k, (narrator, _) in enumerate(lines) if narrator]
    near = {j for k in mine for j in range(k - _NEAR, k + _NEAR + 1)} - set(mine)
    calls: Counter[str] = Counter()
    for k in sorted(near):
        if 0 <= k < len(lines):
            for quote in lines[k][1]:
                calls.update(n for n in called_names(quote, vocabulary) if not set(name_words(n)) & taken)
    by_word: Counter[str] = Counter()
    for form, count in calls.items():
        for word in set(name_words(form)):
            by_word[word] += count
    if not by_word:
        return ()
    word, top = by_word.most_common(1)[0]
    forms = [form for form in calls if word in name_words(form)]
    # The other words of the name ("Ivanovitch" of "Alexis Ivanovitch") are not rivals.
    own = {w for form in forms for w in name_words(form)}
    rival = max((n for w, n in by_word.items() if w not in own), default=0)
    if top < _MIN_CALLS or top < _DOMINANCE * rival:
        return ()
    return tuple(sorted(forms))
