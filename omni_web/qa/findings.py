"""What QA found in a take, as a record: its kind, the sentence a user reads, its figures and words.

A finding's kind is decided where the check runs, never read back from its sentence: the review
inbox filters by kind, the rate tracker skips takes whose words were wrong, and the bench counts
catches per kind, all from :class:`FindingKind`. The sentence stays for people; the figures
(``{"ratio": 0.31}``) and the words concerned (``'and the sea beyond'``) stay for tools.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from omni_web.records import JsonRecord

__all__ = ["Finding", "FindingKind"]


class FindingKind(enum.StrEnum):
    """Why a take failed (or what a reviewer should check in it)."""

    BUDGET = "budget"  # the model stopped at its token limit (finish reason "length")
    EMPTY = "empty"  # no audio at all
    CUT = "cut"  # far shorter than the text needs
    LOOP = "loop"  # far longer than the text needs
    SILENT = "silent"  # mostly silence
    PAUSE = "pause"  # a long silence inside the chunk
    CLIPPED = "clipped"  # samples at full scale
    WER = "wer"  # the transcript differs from the text
    ORDER = "order"  # the words are heard out of order
    RECALL = "recall"  # too few of the text's words heard
    SKIPPED = "skipped"  # fewer words and short audio
    WORDY = "wordy"  # many more words heard than the text has
    GAP = "gap"  # a run of the text's words not heard
    REPEAT = "repeat"  # a stretch said twice
    BEFORE = "before"  # words heard before the text starts
    BABBLE = "babble"  # words heard after the text ends
    INSERTED = "inserted"  # words heard mid-text that the text does not have
    NAME = "name"  # a name heard as another word (a notice: a lexicon entry fixes it)
    VOICE = "voice"  # the take sounds like another voice
    PACE = "pace"  # read much faster or slower than the voice's other takes
    PITCH = "pitch"  # pitched much higher or lower than the voice's other takes
    LOUDNESS = "loudness"  # much louder or quieter than the voice's other takes
    CUE = "cue"  # a delivery cue (a style tag or instruction) heard as words
    OTHER = "other"  # a finding stored by a version that did not record kinds

    @property
    def title(self) -> str:
        """A few words for a filter menu ("Cut off or words skipped")."""
        return _TITLES[self]

    @property
    def words_wrong(self) -> bool:
        """True when the take's words (not its signal) were wrong: its length says nothing of the pace."""
        return self in _WORD_KINDS

    @property
    def skews_rate(self) -> bool:
        """True when the take's length says nothing of its voice's usual rate (wrong words, voice or pace)."""
        return self in _WORD_KINDS or self in (FindingKind.VOICE, FindingKind.PACE)


_TITLES = {
    FindingKind.BUDGET: "Stopped at the token limit",
    FindingKind.EMPTY: "Empty audio",
    FindingKind.CUT: "Cut off or words skipped",
    FindingKind.LOOP: "A loop or babble (too long)",
    FindingKind.SILENT: "Mostly silent",
    FindingKind.PAUSE: "A long silence inside",
    FindingKind.CLIPPED: "Clipped samples",
    FindingKind.WER: "Transcript differs from the text",
    FindingKind.ORDER: "Words out of order",
    FindingKind.RECALL: "Words not heard",
    FindingKind.SKIPPED: "Words skipped (short audio)",
    FindingKind.WORDY: "Too many words heard",
    FindingKind.GAP: "A clause left out",
    FindingKind.REPEAT: "A phrase said twice",
    FindingKind.BEFORE: "Words before the text",
    FindingKind.BABBLE: "Babble after the text",
    FindingKind.INSERTED: "Words the text does not have",
    FindingKind.NAME: "A name misheard",
    FindingKind.VOICE: "Sounds like another voice",
    FindingKind.PACE: "Read too fast or too slow",
    FindingKind.PITCH: "Pitched too high or too low",
    FindingKind.LOUDNESS: "Too loud or too quiet",
    FindingKind.CUE: "A delivery cue read aloud",
    FindingKind.OTHER: "Other (an older report)",
}

_WORD_KINDS = frozenset(
    {
        FindingKind.WER,
        FindingKind.ORDER,
        FindingKind.RECALL,
        FindingKind.SKIPPED,
        FindingKind.WORDY,
        FindingKind.GAP,
        FindingKind.REPEAT,
        FindingKind.BEFORE,
        FindingKind.BABBLE,
        FindingKind.INSERTED,
        FindingKind.CUE,
    }
)


@dataclass(frozen=True, slots=True)
class Finding(JsonRecord):
    """One thing QA found in a take."""

    kind: FindingKind
    message: str  # the sentence a user reads
    # The numbers it rests on (left out of the hash, so findings can be told apart in sets).
    figures: Mapping[str, float] = field(default_factory=dict, hash=False)
    words: str = ""  # the text's (or the transcript's) words it concerns, when it concerns some

    @classmethod
    def read(cls, data: Mapping[str, Any] | str) -> Finding:
        """A stored finding; a plain sentence (a record from before kinds were kept) is of kind OTHER."""
        if isinstance(data, str):
            return cls(FindingKind.OTHER, data)
        kind = data.get("kind")
        known = kind in FindingKind._value2member_map_
        return cls(
            FindingKind(kind) if known else FindingKind.OTHER,
            str(data.get("message", "")),
            {str(k): float(v) for k, v in (data.get("figures") or {}).items()},
            str(data.get("words", "")),
        )
