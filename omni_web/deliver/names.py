"""A narrator's name in a form Audiobookshelf keeps whole.

ABS reads every narrator it finds in a folder name (``{…}``), an audio file's composer tag and
``reader.txt`` through its name parser (audiobookshelf ``server/utils/parsers/parseNameString.js``
and ``parseFullName.js``): it splits on ``,``, ``;``, ``&`` and `` and ``, drops text in
parentheses, brackets or quotes as a nickname, and drops titles (``Dr``, ``Captain``…) and suffixes
(``Jr``, ``2``, ``III``…) after the first word. ``Qwen3-TTS 0.6B CustomVoice (Vivian)`` therefore
lost its voice and ``Uncle Fu, Qwen3-TTS …`` became two narrators. :func:`kept_whole` rewrites a
name so none of those rules applies; :func:`narrator_name` is the one form every file uses.
"""

from __future__ import annotations

import re

__all__ = ["kept_whole", "narrator_name"]

_SPLITTERS = re.compile(r"[,;&]")
_AND = re.compile(r" and ", re.IGNORECASE)
_EDGE_MARKS = "()[]{}\"'‘’“”"
_BRACKETS = re.compile(r"[()\[\]{}]")
# The short lists parseFullName.js drops words from (compared lower case, without a final '.').
_TITLES = frozenset("dr miss mr mrs ms prof sir frau herr hr monsieur captain doctor judge officer professor "
                    "ind misc mx".split())
_SUFFIXES = frozenset("esq esquire jr jnr sr snr 2 ii iii iv md phd j.d ll.m m.d d.o d.c p.c ph.d".split())


def _dropped(word: str, position: int) -> bool:
    key = word.lower().removesuffix(".")
    return key in _TITLES or (position > 0 and key in _SUFFIXES)


def kept_whole(name: str) -> str:
    """``name`` as ABS's name parser returns it unchanged: one name, nothing dropped.

    Separators become spaces (`` and `` becomes `` + ``), brackets and quotes around words go, and
    a word the parser would drop is joined to its neighbour with ``-`` (``Captain-Nemo``, ``M-2``).
    """
    text = _AND.sub(" + ", _SPLITTERS.sub(" ", name))
    words = [w.strip(_EDGE_MARKS) for w in text.split()]
    words = [w for w in (_BRACKETS.sub("", w) for w in words) if w]
    # Glue each word the parser drops to a neighbour (not to the " - " between voice and model).
    for i in range(len(words) - 1, -1, -1):
        if not _dropped(words[i], i):
            continue
        if i + 1 < len(words) and words[i + 1] != "-":
            words[i : i + 2] = [f"{words[i]}-{words[i + 1]}"]
        elif i > 0 and words[i - 1] != "-":
            words[i - 1 : i + 1] = [f"{words[i - 1]}-{words[i]}"]
    return " ".join(words)


def narrator_name(voice: str, model: str) -> str:
    """The narrator of one version: ``Vivian - Qwen3-TTS 0.6B CustomVoice`` (``model`` alone without a
    voice)."""
    return kept_whole(f"{voice} - {model}" if voice.strip() else model)
