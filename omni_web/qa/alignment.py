"""Where a transcript differs from its text: the alignment behind the gap, repeat and babble checks.

A recogniser's own mistakes are scattered one or two words at a time; the faults of an LLM-based
TTS model are not: a clause left out is a run of consecutive text words with nothing heard for
them, a phrase said twice is a stretch of transcript with no text left to match, babble is words
heard before the text starts or after it ends. So the normalised transcript is aligned to the
normalised text word by word (rapidfuzz's Levenshtein opcodes over word lists) and the differing
regions between matched words are measured: a region's *net* missing words (text words minus heard
words) is what a left-out clause leaves, its net extra words what a repeat or babble adds.

The text side keeps, for every normalised word, the index of the whitespace token it came from, so
the review can mark the very words of the chunk's text that were not heard.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from omni_web.qa.wer import normalise_words
from omni_web.text.normalize import normalize_for_speech

__all__ = ["Alignment", "Region", "TextWords", "align_transcript", "text_words"]


@dataclass(frozen=True, slots=True)
class TextWords:
    """The chunk's text as spoken tokens and as normalised words, each word knowing its token."""

    tokens: tuple[str, ...]  # whitespace tokens of the text in its spoken form
    words: tuple[str, ...]  # normalised words (numbers spelled, case and punctuation gone)
    token_of: tuple[int, ...]  # token index of each word


def text_words(text: str, *, lang: str = "en") -> TextWords:
    """Split ``text`` into spoken tokens and normalised words (each token normalised alone)."""
    tokens = tuple(normalize_for_speech(text, lang).split())
    words: list[str] = []
    token_of: list[int] = []
    for index, token in enumerate(tokens):
        for word in normalise_words(token, lang=lang):
            words.append(word)
            token_of.append(index)
    return TextWords(tokens, tuple(words), tuple(token_of))


@dataclass(frozen=True, slots=True)
class Region:
    """A stretch where text and transcript differ, between two matched words (or an end)."""

    text_start: int  # normalised text words [text_start, text_end)
    text_end: int
    heard_start: int  # transcript words [heard_start, heard_end)
    heard_end: int
    at_start: bool  # nothing of the text was matched before it
    at_end: bool  # nothing of the text is matched after it

    @property
    def missing(self) -> int:
        """Text words with no heard word against them (net)."""
        return max(0, (self.text_end - self.text_start) - (self.heard_end - self.heard_start))

    @property
    def extra(self) -> int:
        """Heard words with no text word against them (net)."""
        return max(0, (self.heard_end - self.heard_start) - (self.text_end - self.text_start))


@dataclass(frozen=True, slots=True)
class Alignment:
    """The text, the transcript and the regions where they differ."""

    text: TextWords
    heard: tuple[str, ...]
    regions: tuple[Region, ...]
    matched: int  # text words heard exactly where they belong

    def text_of(self, region: Region) -> str:
        """The region's text words, as normalised."""
        return " ".join(self.text.words[region.text_start:region.text_end])

    def heard_of(self, region: Region) -> str:
        """The region's transcript words."""
        return " ".join(self.heard[region.heard_start:region.heard_end])

    def repeats_text(self, region: Region) -> bool:
        """True when the region's extra words say again the text just before or after it.

        A phrase said twice aligns as its first reading matched and the second inserted next to
        it (or the other way round), so the inserted words match the text on one side.
        """
        # Compared without spaces: a recogniser joins and splits words at will ("to night",
        # "tonight"). partial_ratio finds the best match of the extra words inside the text on
        # either side: 15 repeats of 8 words by flite slt heard by tiny.en scored 75-100 on one
        # side, text that was not said again 35-60.
        extra = "".join(self.heard[region.heard_start:region.heard_end])
        width = (region.heard_end - region.heard_start) + 2
        before = "".join(self.text.words[max(0, region.text_start - width):region.text_end])
        after = "".join(self.text.words[region.text_start:region.text_end + width])
        return max(fuzz.partial_ratio(extra, before), fuzz.partial_ratio(extra, after)) >= 70

    def substitutions(self, names: Collection[str]) -> list[tuple[str, str]]:
        """(text word, heard words) where a word of ``names`` was heard as something else."""
        found: list[tuple[str, str]] = []
        for region in self.regions:
            if region.heard_end == region.heard_start:
                continue  # nothing heard there: a gap, not a substitution
            for index in range(region.text_start, region.text_end):
                if self.text.words[index] in names:
                    found.append((self.text.words[index], self.heard_of(region)))
        return found


def _regions(text: tuple[str, ...], heard: tuple[str, ...]) -> tuple[list[Region], int]:
    opcodes = Levenshtein.opcodes(list(text), list(heard))
    # One matched word inside a long difference is chance (a "the" of the left-out clause meeting a
    # "the" heard elsewhere): such lone matches join the regions either side, so a gap stays one gap.
    spans: list[list[int]] = []  # [text_start, text_end, heard_start, heard_end]
    matched = 0
    pending: list[int] | None = None
    for op in opcodes:
        if op.tag == "equal" and op.src_end - op.src_start >= 2:
            matched += op.src_end - op.src_start
            if pending is not None:
                spans.append(pending)
                pending = None
            continue
        if op.tag == "equal":
            matched += 1
            if pending is None:
                continue  # a lone match after agreement: still agreement
        if pending is None:
            pending = [op.src_start, op.src_end, op.dest_start, op.dest_end]
        else:
            pending[1], pending[3] = op.src_end, op.dest_end
    if pending is not None:
        spans.append(pending)
    # A lone match at the very end of a region was swallowed into it; trim such lone equals back
    # out where they close a region, so the region's words are only the differing ones.
    regions = []
    for start, end, h_start, h_end in spans:
        while end > start and h_end > h_start and text[end - 1] == heard[h_end - 1]:
            end, h_end = end - 1, h_end - 1
        while end > start and h_end > h_start and text[start] == heard[h_start]:
            start, h_start = start + 1, h_start + 1
        if end == start and h_end == h_start:
            continue
        regions.append(Region(start, end, h_start, h_end, at_start=start == 0 and h_start == 0,
                              at_end=end == len(text) and h_end == len(heard)))
    return regions, matched


def align_transcript(text: str | TextWords, transcript: str, *, lang: str = "en") -> Alignment:
    """Align ``transcript`` to ``text`` after normalising both alike."""
    words = text if isinstance(text, TextWords) else text_words(text, lang=lang)
    heard = tuple(normalise_words(normalize_for_speech(transcript, lang), lang=lang))
    regions, matched = _regions(words.words, heard)
    return Alignment(words, heard, tuple(regions), matched)
