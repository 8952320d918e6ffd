"""Comparable word tokens and a fuzzy alignment of two token sequences.

Both the known text and what it is compared with (ASR words, the XHTML's text) are cut into
*tokens*: runs of letters and digits (each CJK character alone), casefolded and NFKC-normalised,
so punctuation, quotes, dashes and ligatures never decide a match. The alignment is rapidfuzz's
Levenshtein edit script over token sequences: equal tokens pair up, a substituted run ("Dinah" →
"Dina", "1865" → "eighteen sixty five") pairs up by position, and what is missing on either side
is left unpaired, so ASR errors and small edits cost only locally.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Token", "align_tokens", "align_tokens_exact", "tokenize"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Soft hyphens and zero-width marks may sit inside a printed word; they join, never split.
_JOINERS = "\u00ad\u200b\u200c\u200d\u2060"
_TOKEN_RE = re.compile(
    f"[{_CJK}]|(?:(?![{_CJK}])[^\\W_])(?:(?![{_CJK}])[^\\W_]|[{_JOINERS}\u0300-\u036f\u064b-\u065f\u0670])*"
)
_DROP = str.maketrans("", "", _JOINERS)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its comparison key and where it sits in the text it was cut from."""

    key: str
    start: int
    end: int


def tokenize(text: str, *, offset: int = 0) -> list[Token]:
    """The tokens of ``text``; positions are ``offset`` plus the index into ``text``."""
    tokens = []
    for match in _TOKEN_RE.finditer(text):
        key = unicodedata.normalize("NFKC", match.group().translate(_DROP)).casefold()
        key = "".join(ch for ch in key if not unicodedata.combining(ch))
        if key:
            tokens.append(Token(key, offset + match.start(), offset + match.end()))
    return tokens


def align_tokens(reference: Sequence[str], other: Sequence[str]) -> list[int | None]:
    """For each reference key, the index of the ``other`` key it aligns with (None if unpaired).

    Pairs keep order (increasing indexes); see :func:`align_tokens_exact` for which are equal.
    """
    return align_tokens_exact(reference, other)[0]


def align_tokens_exact(reference: Sequence[str], other: Sequence[str]) -> tuple[list[int | None], list[bool]]:
    """:func:`align_tokens`, plus for each reference key whether it pairs with an equal key.

    Pairs keep order (increasing indexes). In a substituted run of unequal lengths the pairs are
    spread by position, so "eighteen sixty five" against "1865" pairs the first word.
    """
    from rapidfuzz.distance import Levenshtein

    mapping: list[int | None] = [None] * len(reference)
    equal = [False] * len(reference)
    if not reference or not other:
        return mapping, equal
    # Equal runs anchor the pairing; each stretch between two anchors (substitutions, insertions
    # and deletions together) pairs by position, so a number read out as three words pairs its
    # first word, not its last.
    pairs = [
        (op.src_start + k, op.dest_start + k)
        for op in Levenshtein.opcodes(list(reference), list(other))
        if op.tag == "equal"
        for k in range(op.src_end - op.src_start)
    ]
    pairs = _joined_runs(pairs, reference, other)
    anchors = [(0, 0)]
    for n, (i, j) in enumerate(pairs):
        mapping[i] = j
        equal[i] = True
        if n == 0 or pairs[n - 1] != (i - 1, j - 1):
            anchors.append((i, j))  # a run of equal pairs starts
        if n + 1 == len(pairs) or pairs[n + 1] != (i + 1, j + 1):
            anchors.append((i + 1, j + 1))  # and ends
    anchors.append((len(reference), len(other)))
    for (i0, j0), (i1, j1) in zip(anchors[::2], anchors[1::2], strict=True):
        src_len, dest_len = i1 - i0, j1 - j0
        if src_len <= 0 or dest_len <= 0:
            continue
        last = -1
        for k in range(src_len):
            j = j0 + (k * dest_len) // src_len
            if j > last:
                mapping[i0 + k] = j
                last = j
    return mapping, equal


def _joined_runs(
    pairs: list[tuple[int, int]], reference: Sequence[str], other: Sequence[str]
) -> list[tuple[int, int]]:
    """Equal pairs with each tie broken towards the run that follows.

    An edit script may pair a word with an equal one just before a gap when the same word right
    after the gap would do as well ("The" of an unprinted title with the first sentence's "The",
    a sentence's first "The" with a heading's "THE"). Moving such a pair next to the run after
    the gap costs nothing and keeps each sentence's words together.
    """
    out = list(pairs)
    for n in range(len(out) - 2, -1, -1):
        (i, j), (i2, j2) = out[n], out[n + 1]
        if i2 == i + 1 and j2 > j + 1 and other[j2 - 1] == reference[i]:
            out[n] = (i, j2 - 1)  # a gap in ``other`` after the pair: take the word after it
        elif j2 == j + 1 and i2 > i + 1 and reference[i2 - 1] == other[j]:
            out[n] = (i2 - 1, j)  # a gap in ``reference``: the later reference word takes it
    return out
