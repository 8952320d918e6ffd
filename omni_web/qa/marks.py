"""The chunk's text marked where a take differs: words not heard, words said twice, words added.

The review shows the fault without the user listening to the whole chunk: the text's own tokens,
each marked ``missing`` or ``repeated`` where the alignment checks found a gap or a repeat, and
the transcript's extra words (babble before or after the text, words the text does not have)
placed where they were heard, marked ``extra``. Only what a check would report is marked; a
recogniser's scattered one-word mishearings are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from omni_web.qa.alignment import Alignment, Region, align_transcript
from omni_web.qa.thresholds import DEFAULT_THRESHOLDS, Thresholds

__all__ = ["Mark", "mark_text", "marks_plain"]


@dataclass(frozen=True, slots=True)
class Mark:
    """A run of words of the marked text; ``kind`` is "", "missing", "repeated" or "extra"."""

    text: str
    kind: str = ""


def _repeated_span(alignment: Alignment, region: Region) -> range:
    """The text words a repeat said again: those just before the region or just after it."""
    count = region.extra
    extra = "".join(alignment.heard[region.heard_start:region.heard_end])
    before = range(max(0, region.text_start - count), region.text_start)
    after = range(region.text_end, min(len(alignment.text.words), region.text_end + count))
    score = {
        span: fuzz.ratio(extra, "".join(alignment.text.words[i] for i in span)) for span in (before, after)
    }
    return max(score, key=lambda span: score[span])


def _kinds(alignment: Alignment, t: Thresholds) -> tuple[list[str], dict[int, list[str]]]:
    """(kind of each text token, extra words to show before token index; len(tokens) = after all)."""
    tokens = alignment.text.tokens
    kinds = [""] * len(tokens)
    extras: dict[int, list[str]] = {}
    inside = len(alignment.text.words) >= t.min_words_for_alignment
    token_of = alignment.text.token_of

    def place(region: Region) -> int:
        if region.at_end or region.text_start >= len(token_of):
            return len(tokens)
        return token_of[region.text_start]

    for region in alignment.regions:
        if inside and region.missing >= t.gap_words:
            for index in range(region.text_start, region.text_end):
                kinds[token_of[index]] = "missing"
        elif region.extra >= t.extra_words and (region.at_start or region.at_end):
            extras.setdefault(0 if region.at_start else len(tokens), []).append(alignment.heard_of(region))
        elif inside and region.extra >= t.repeat_words and alignment.repeats_text(region):
            for index in _repeated_span(alignment, region):
                kinds[token_of[index]] = "repeated"
        elif inside and region.extra >= t.inserted_words:
            extras.setdefault(place(region), []).append(alignment.heard_of(region))
    return kinds, extras


def mark_text(
    text: str, transcript: str | None, *, lang: str = "en", thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[Mark, ...]:
    """``text`` (in its spoken form) as runs of marked and unmarked words; one plain run without a
    transcript."""
    if not transcript:
        return (Mark(text),)
    alignment = align_transcript(text, transcript, lang=lang)
    tokens = alignment.text.tokens
    kinds, extras = _kinds(alignment, thresholds)
    marks: list[Mark] = []

    def add(words: str, kind: str) -> None:
        if marks and marks[-1].kind == kind:
            marks[-1] = Mark(f"{marks[-1].text} {words}", kind)
        else:
            marks.append(Mark(words, kind))

    for index, token in enumerate(tokens):
        for words in extras.get(index, ()):
            add(words, "extra")
        add(token, kinds[index])
    for words in extras.get(len(tokens), ()):
        add(words, "extra")
    return tuple(marks)


_PLAIN = {"missing": ("[-", "-]"), "repeated": ("[=", "=]"), "extra": ("[+", "+]")}


def marks_plain(marks: tuple[Mark, ...]) -> str:
    """Marks as text for a terminal: ``[-not heard-]``, ``[=said twice=]``, ``[+added+]``."""
    parts = []
    for mark in marks:
        opening, closing = _PLAIN.get(mark.kind, ("", ""))
        parts.append(f"{opening}{mark.text}{closing}")
    return " ".join(parts)
