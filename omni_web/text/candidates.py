"""Words a model may misread, found before a long render so the user can audition and fix them.

Four kinds: names (capitalised words that are not sentence-initial and that the book never writes
in lower case, so they are not ordinary words), words with letters unusual for the book's language
("Zoë", "Þórr"), all-caps tokens ("BBC"), and words with digits the rules cannot spell ("R2-D2").
Each comes with its count and the first sentence it appears in.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from omni_web.book import Book, split_sentences
from omni_web.book.text import normalize_text
from omni_web.languages import language_code
from omni_web.text.lexicon import Pronouncer
from omni_web.text.normalize import normalize_for_speech
from omni_web.text.roman import roman_to_int

__all__ = ["Candidate", "CandidateKind", "find_candidates"]

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_LETTERS = {
    "en": "abcdefghijklmnopqrstuvwxyz",
    "fr": "abcdefghijklmnopqrstuvwxyzàâæçéèêëîïôœùûüÿ",
    "de": "abcdefghijklmnopqrstuvwxyzäöüß",
    "es": "abcdefghijklmnopqrstuvwxyzáéíóúüñ",
    "it": "abcdefghijklmnopqrstuvwxyzàèéìíîòóùú",
    "pt": "abcdefghijklmnopqrstuvwxyzáâãàçéêíóôõú",
}
# Capitalised words that are ordinary even where the book never writes them in lower case.
_ORDINARY_CAPITALISED = frozenset(
    """
    I I'm I'll I've I'd Mr Mrs Ms Dr St Sir Madam Miss Lady Lord Mister Monday Tuesday Wednesday
    Thursday Friday Saturday Sunday January February March April May June July August September
    October November December God English French German Spanish Christmas Easter OK
    """.split()
)
_OPENING = "\"'([«¿¡“‘"


class CandidateKind:
    """Why a word is listed (plain strings, shown to users)."""

    NAME = "name"
    UNUSUAL_LETTERS = "unusual letters"
    ALL_CAPS = "all caps"
    DIGITS = "digits"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One word to audition: how often it occurs, why it is listed and where it first appears."""

    word: str
    count: int
    kinds: tuple[str, ...]
    sentence: str  # the first sentence it appears in (shortened to about 200 characters)
    chapter_number: int
    in_lexicon: bool

    @property
    def kinds_str(self) -> str:
        """The reasons joined for display ("name, unusual letters")."""
        return ", ".join(self.kinds)


@dataclass
class _Seen:
    count: int
    sentence: str
    chapter: int
    kinds: set[str]


def _sentences(book: Book, chapters: Collection[int]) -> Iterable[tuple[int, str]]:
    for chapter in book.chapters:
        if not chapter.has_text or chapter.index not in chapters:
            continue
        for block in chapter.blocks:
            if block.is_heading:
                continue
            for sentence in split_sentences(normalize_text(block.text)):
                yield chapter.number, sentence


def _short(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def find_candidates(
    book: Book,
    *,
    language: str | None = None,
    pronouncer: Pronouncer | None = None,
    chapters: Collection[int] | None = None,
    limit: int | None = None,
) -> list[Candidate]:
    """Candidate words of a book's chapters (indexes; default: the preselected ones), most frequent first.

    ``language`` overrides the book's ``dc:language`` (it decides which letters are unusual and
    which digit words the rules already spell); words a ``pronouncer`` already changes are marked.
    """
    code = language_code(language, book.metadata.language)
    alphabet = _LETTERS.get(code)
    lower_vocabulary: set[str] = set()
    seen: dict[str, _Seen] = {}
    chosen = frozenset(book.selected_by_default() if chapters is None else chapters)
    for chapter_number, sentence in _sentences(book, chosen):
        tokens = list(_WORD_RE.finditer(sentence))
        for position, match in enumerate(tokens):
            word = match.group(0)
            if word.endswith(("'s", "’s")):
                word = word[:-2]
            if word.islower():
                lower_vocabulary.add(word)
                if alphabet is None or all(ch in alphabet for ch in word if ch.isalpha()):
                    continue
            initial = position == 0 or sentence[: match.start()].rstrip().endswith(tuple(_OPENING)) and \
                not sentence[: match.start()].strip(_OPENING + " ")
            kinds = _kinds(word, initial=initial, alphabet=alphabet, language=code)
            if not kinds:
                continue
            entry = seen.get(word)
            if entry is None:
                seen[word] = _Seen(1, _short(sentence), chapter_number, set(kinds))
            else:
                entry.count += 1
                entry.kinds.update(kinds)
    candidates = []
    for word, entry in seen.items():
        kinds = set(entry.kinds)
        if word.casefold() in lower_vocabulary:
            kinds -= {CandidateKind.NAME, CandidateKind.ALL_CAPS}
        if not kinds:
            continue
        changed = pronouncer is not None and bool(pronouncer) and pronouncer.apply(word) != word
        order = [k for k in (CandidateKind.NAME, CandidateKind.UNUSUAL_LETTERS, CandidateKind.ALL_CAPS,
                             CandidateKind.DIGITS) if k in kinds]
        candidates.append(Candidate(word, entry.count, tuple(order), entry.sentence, entry.chapter, changed))
    candidates.sort(key=lambda c: (-c.count, c.word.casefold()))
    return candidates[:limit] if limit is not None else candidates


def _kinds(word: str, *, initial: bool, alphabet: str | None, language: str) -> list[str]:
    kinds = []
    letters = [ch for ch in word if ch.isalpha()]
    if any(ch.isdigit() for ch in word) and letters:
        if any(ch.isdigit() for ch in normalize_for_speech(word, language)):
            kinds.append(CandidateKind.DIGITS)
        return kinds
    if not letters:
        return kinds
    if alphabet is not None and any(ch.lower() not in alphabet for ch in letters):
        kinds.append(CandidateKind.UNUSUAL_LETTERS)
    if len(letters) >= 2 and word.isupper():
        if roman_to_int(word) is None:
            kinds.append(CandidateKind.ALL_CAPS)
    elif len(letters) >= 2 and word[0].isupper() and not initial and word not in _ORDINARY_CAPITALISED:
        kinds.append(CandidateKind.NAME)
    return kinds
