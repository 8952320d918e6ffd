"""Compare a transcript with the text it should say: normalisation, word error rate, word recall.

Both sides are normalised the same way before scoring (case, punctuation, numbers spelled out with
num2words, apostrophes and hyphens), so "Chapter 3." and "chapter three" score as equal. The error
rate is jiwer's; recall (order ignored) tells a take that skipped words from one that misheard them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

import jiwer
from num2words import num2words

from omni_web.text.normalize import normalize_for_speech

__all__ = ["TranscriptScore", "normalise_words", "score_transcript"]

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ORDINAL = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
# English contractions a recogniser writes out or not at will ("they're" / "they are"); both sides
# are expanded alike. "'s" and "'d" stay: each has two readings.
_EN_IRREGULAR = {"won't": "will not", "can't": "can not", "cannot": "can not", "shan't": "shall not"}
_EN_IRREGULAR_RE = re.compile(r"\b(" + "|".join(map(re.escape, _EN_IRREGULAR)) + r")\b")
_EN_CONTRACTION_RE = re.compile(r"(?<=[a-z])(n't|'re|'ll|'ve|'m)\b")
_EN_CONTRACTIONS = {"n't": " not", "'re": " are", "'ll": " will", "'ve": " have", "'m": " am"}


def _expand_english(text: str) -> str:
    text = _EN_IRREGULAR_RE.sub(lambda m: _EN_IRREGULAR[m.group(1)], text)
    return _EN_CONTRACTION_RE.sub(lambda m: _EN_CONTRACTIONS[m.group(1)], text)


def _spell_numbers(text: str, lang: str) -> str:
    def ordinal(match: re.Match[str]) -> str:
        try:
            return f" {num2words(int(match.group(1)), to='ordinal', lang=lang)} "
        except (NotImplementedError, OverflowError, ValueError):
            return match.group(0)

    def cardinal(match: re.Match[str]) -> str:
        raw = match.group(0)
        digits = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw.replace(",", ".")
        try:
            value: int | float = float(digits) if "." in digits else int(digits)
            return f" {num2words(value, lang=lang)} "
        except (NotImplementedError, OverflowError, ValueError):
            return f" {raw} "

    return _NUMBER.sub(cardinal, _ORDINAL.sub(ordinal, text))


def normalise_words(text: str, *, lang: str = "en") -> list[str]:
    """Lower-case words with numbers spelled out and punctuation dropped."""
    text = unicodedata.normalize("NFKC", text)
    text = _spell_numbers(text, lang)
    text = text.lower().replace("\u2019", "'")
    if lang == "en":
        text = _expand_english(text)
    text = text.replace("'", "")
    # Hyphens and dashes separate words ("twenty-one", "queer-looking"); other marks vanish.
    cleaned = "".join(c if unicodedata.category(c)[0] in ("L", "N") else " " for c in text)
    return cleaned.split()


@dataclass(frozen=True, slots=True)
class TranscriptScore:
    """How well a transcript matches the text."""

    wer: float  # word error rate (can exceed 1 when the transcript babbles)
    recall: float  # share of the text's words found in the transcript, order ignored
    reference_words: int
    transcript_words: int


def score_transcript(reference: str, transcript: str, *, lang: str = "en") -> TranscriptScore:
    """Score ``transcript`` against ``reference`` after normalising both.

    Both first go through the language's speech rules (omni_web.text), so what the model says
    for "CHAPTER II." or "Mr." and what the recogniser writes for it ("Chapter 2", "Mister") meet
    in one spelling, whether or not the job sent the text normalised.
    """
    ref = normalise_words(normalize_for_speech(reference, lang), lang=lang)
    hyp = normalise_words(normalize_for_speech(transcript, lang), lang=lang)
    if not ref:
        return TranscriptScore(0.0 if not hyp else 1.0, 1.0, 0, len(hyp))
    wer = float(jiwer.wer(" ".join(ref), " ".join(hyp))) if hyp else 1.0
    found = Counter(hyp)
    recall = sum(min(n, found[w]) for w, n in Counter(ref).items()) / len(ref)
    return TranscriptScore(wer, recall, len(ref), len(hyp))
