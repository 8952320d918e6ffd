"""Who writes a letter or tells a story that runs over several paragraphs of one open quote.

A speech left open at a paragraph's end goes on in the next, so the paragraphs are one speaker's.
Where no tag names them, the speech itself may: a letter's signature ("Yours, as ever and always,"
/ "QUINCEY P. MORRIS."), or a teller who gives their name ("I know'd my name to be Magwitch", "I,
Alexandre Manette, unfortunate physician"). :func:`signed_speeches` finds the writer of each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from omni_web.cast.given_names import given_name_gender
from omni_web.cast.names import Gender, title_of
from omni_web.cast.spans import ParagraphSpans

__all__ = ["signed_speeches"]

_NAME_WORD = r"(?:[A-Z][a-z’'\-]+|[A-Z][A-Z’'\-]+|[A-Z]\.)"
_NAME = rf"{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,3}}"
# A paragraph that is a name alone, as a letter is signed: "MINA HARKER.", "“Elizabeth Lavenza."
_SIGNATURE = re.compile(rf"^[\s\"“‘'_\-—]*({_NAME})[.,]?[\s\"”’'_]*$")
_SIGNED_LINE = re.compile(rf"^(.{{1,80}}?)[,\s]\s*[\"“‘']?\s*({_NAME})[.,]?[\s\"”’'_]*$")
# A teller naming themselves: "my name is Bond", "I know'd my name to be Magwitch", "I, Alexandre
# Manette, unfortunate physician".
_SELF_NAMED = re.compile(
    rf"\bmy\s+name\s+(?:is|was|to\s+be|being)\s+({_NAME})|^[\s\"“‘'_]*I,\s+({_NAME}),"
)
# "Yours, as ever and always,", "Your affectionate and afflicted father,", "Believe me,".
_CLOSING = re.compile(
    r"^[\s\"“‘'_]*(?:yours|your|ever|believe\s+me|affectionately|sincerely|faithfully|adieu|lovingly)\b",
    re.IGNORECASE,
)
_CLOSING_LENGTH = 80  # characters: a closing is a line, not a paragraph that ends in "yours"
# Not in a signature: "BATTLE IN AFFGHANISTAN" (a playbill), "My Dearest Margaret," (a greeting).
_NOT_IN_NAMES = frozenset("in of the for by and at on to with from my dear dearest".split())
_SIGNED_WITHIN = 3  # a signature stands among a letter's last paragraphs (a place or date may follow)
_MIN_LETTER = 3  # paragraphs: a shorter run with a name alone may be a call ("“Jane.")


def signed_speeches(
    paragraphs: Sequence[ParagraphSpans],
    resolve: Callable[[str], str | None],
    known: Collection[str] = (),
) -> dict[int, str]:
    """The writer of each paragraph that belongs to a signed letter or a self-named story.

    Args:
        paragraphs: a chapter's paragraphs, in order.
        resolve: a name as written -> the character it stands for (or None: no one).
        known: the book's characters: a signature is matched to one of them by its full name, its
            first and last words, then its first word ("QUINCEY P. MORRIS": Quincey Morris).

    Returns: paragraph index -> the character (or the signature's own name, where it is no known
    character's), for every paragraph of each run of one open quote whose writer is found.
    """
    writers: dict[int, str] = {}
    for run in _runs(paragraphs):
        texts = ["".join(span.text for span in paragraphs[k].spans) for k in run]
        signed = _signature(texts) if len(run) >= _MIN_LETTER else None
        if signed is not None:
            # After a closing, a signature is a name though the book names it nowhere else; alone,
            # a name must be a character's ("“Elizabeth Lavenza.").
            name, closed = signed
            writer = _character(name, resolve, known, unknown_ok=closed)
        else:
            told = _self_named(texts)
            writer = _character(told, resolve, known, unknown_ok=_personal(told)) if told else None
        if writer is not None:
            writers.update(dict.fromkeys(run, writer))
    return writers


def _runs(paragraphs: Sequence[ParagraphSpans]) -> list[list[int]]:
    """Paragraph indices of each speech that goes on over two or more paragraphs."""
    runs: list[list[int]] = []
    current: list[int] = []
    for k, paragraph in enumerate(paragraphs):
        first = next((span for span in paragraph.spans if span.is_dialogue), None)
        if first is not None and first.continued and current and current[-1] == k - 1:
            current.append(k)
            continue
        if len(current) > 1:
            runs.append(current)
        current = [k] if first is not None else []
    if len(current) > 1:
        runs.append(current)
    return runs


def _signature(texts: Sequence[str]) -> tuple[str, bool] | None:
    """The name a letter is signed with, and whether a closing ("Yours ever,") stands before it."""
    for k in reversed(range(max(0, len(texts) - _SIGNED_WITHIN), len(texts))):
        alone = _SIGNATURE.match(texts[k])
        # The closing and the name in one paragraph: "Your affectionate father, “Alphonse Frankenstein."
        after = _SIGNED_LINE.match(texts[k]) if alone is None else None
        name = alone.group(1) if alone is not None else after.group(2) if after is not None else ""
        if not name or set(name.casefold().split()) & _NOT_IN_NAMES:
            continue
        if after is not None and _closing(after.group(1)):
            return name, True
        # One word alone is a call ("“Jane."), unless written as a signature is ("“MINA.").
        if alone is not None and (len(name.split()) > 1 or name.isupper()):
            return name, k > 0 and _closing(texts[k - 1])
    return None


def _closing(text: str) -> bool:
    return len(text.strip()) <= _CLOSING_LENGTH and _CLOSING.search(text) is not None


def _self_named(texts: Sequence[str]) -> str | None:
    for text in texts:
        match = _SELF_NAMED.search(text)
        if match is not None:
            return match.group(1) or match.group(2)
    return None


def _character(
    name: str, resolve: Callable[[str], str | None], known: Collection[str], *, unknown_ok: bool
) -> str | None:
    """The known character a signature or a told name is ("QUINCEY P. MORRIS": Quincey Morris),
    else, where ``unknown_ok``, the name as written ("Alphonse Frankenstein")."""
    words = [word.title() if word.isupper() and len(word) > 2 else word for word in name.split()]
    tries = [words, [words[0], words[-1]], words[:1]] if len(words) > 1 else [words]
    for candidate in tries:
        found = resolve(" ".join(candidate))
        if found is not None and found in known:
            return found
    titled = _titled_holder(words, known)
    if titled is not None:
        return titled
    return resolve(" ".join(words)) if unknown_ok else None


def _titled_holder(words: Sequence[str], known: Collection[str]) -> str | None:
    """The one character the book calls by a title and the name's surname alone: "I, Alexandre
    Manette," is Doctor Manette (Lucie Manette has a given name of her own)."""
    if len(words) < 2:
        return None
    holders = [
        name for name in known
        if len(parts := name.split()) == 2 and parts[1] == words[-1] and title_of(parts[0]) is not None
    ]
    return holders[0] if len(holders) == 1 else None


def _personal(name: str) -> bool:
    """A person's name, not a phrase ("my name is Magwitch", not "my name is Legion")."""
    return given_name_gender(name.split()[0]) is not Gender.UNKNOWN or name.isupper()
