"""Expected duration of a text, from the rate this job has measured for its model and voice.

Speech length grows with the spoken characters (letters and digits; per CJK character where the
text is CJK). The tracker keeps the recent seconds-per-character of accepted takes per model, voice
and script and answers with their median (robust to the odd faulty take that slipped in), and with
a prior until enough takes are in.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import deque
from dataclasses import dataclass

import numpy as np

from omni_web.qa.thresholds import Thresholds

__all__ = ["DurationRateTracker", "Expectation", "TextUnits", "text_units"]


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # kana
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF
    )


@dataclass(frozen=True, slots=True)
class TextUnits:
    """How much there is to say: spoken characters, and the script that counts them."""

    count: int
    script: str  # "cjk" or "alphabetic"
    words: int = 0  # words with a letter or digit (CJK texts: 0, they are not split by spaces)


# Initials and abbreviations the text keeps as letters ("George W.B. Towns", "the BBC") are read
# letter by letter, and a letter's name is longer than the letter: "W" is said "double-you".
# Counted by the length of its English name: "George W.B. Towns" was expected at 15 characters'
# worth of speech and measured at 2.46 times that (three takes, then flagged as a loop); spelled
# as "George double-you bee Towns" it is 22, a ratio of ~1.6.
_LETTER_NAMES = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ay bee see dee ee ef gee aitch eye jay kay el em en oh pee cue ar ess tee you vee doubleyou ex why "
        "zed".split(),
        strict=True,
    )
)
# Single capitals with a full stop ("W.", "W.B.") and all-capital words of 2-4 letters ("BBC").
_SPELLED = re.compile(r"\b(?:[A-Z]\.)+(?=\s|$|[^\w])|\b[A-Z]{2,4}\b")


def _spelled_extra(text: str) -> int:
    """Spoken characters the letter names add over the letters themselves."""
    extra = 0
    for match in _SPELLED.finditer(text):
        letters = [c for c in match.group(0) if c.isalpha()]
        extra += sum(len(_LETTER_NAMES[c]) - 1 for c in letters)
    return extra


def text_units(text: str) -> TextUnits:
    """Count spoken characters; a text that is mostly CJK is counted in CJK characters.

    Initials and short all-capital abbreviations count the letters of their spoken names.
    """
    cjk = sum(1 for c in text if _is_cjk(c))
    alnum = sum(1 for c in text if unicodedata.category(c)[0] in ("L", "N") and not _is_cjk(c))
    if cjk > alnum:
        return TextUnits(cjk, "cjk")
    words = sum(1 for word in text.split() if any(c.isalnum() for c in word))
    return TextUnits(alnum + cjk + _spelled_extra(text), "alphabetic", words)


# A pause at a comma or a sentence's end takes about as long as this many spoken characters (flite
# slt on Alice: "Down, down, down. Would the fall never come to an end?" read 12.7 characters per
# second where the voice's lines with few marks read 16.1).
PAUSE_CHARACTERS = 4
_PAUSE_MARKS = re.compile(r"[,;:.!?\u2014\u2026]+")


def paced_units(text: str) -> int:
    """What a reading's pace is counted in: spoken characters, and the pauses the marks ask for."""
    return text_units(text).count + PAUSE_CHARACTERS * len(_PAUSE_MARKS.findall(text))


@dataclass(frozen=True, slots=True)
class Expectation:
    """The duration a text should take, and whether it comes from this job's own measurements."""

    seconds: float
    units: TextUnits
    measured: bool  # False while the prior is used


class DurationRateTracker:
    """Seconds per character per (model, voice, script); thread-safe, one per job."""

    def __init__(self, thresholds: Thresholds) -> None:
        self._thresholds = thresholds
        self._lock = threading.Lock()
        self._samples: dict[tuple[str, str, str], deque[float]] = {}

    def _prior(self, script: str) -> float:
        t = self._thresholds
        return t.prior_s_per_cjk_char if script == "cjk" else t.prior_s_per_char

    def rate(self, model: str, voice: str, script: str) -> tuple[float, bool]:
        """(seconds per character, measured?) for this model and voice."""
        with self._lock:
            samples = self._samples.get((model, voice, script))
            if samples is None or len(samples) < self._thresholds.rate_min_samples:
                return self._prior(script), False
            return float(np.median(np.fromiter(samples, dtype=np.float64))), True

    def expect(self, text: str, *, model: str, voice: str) -> Expectation:
        """How long ``text`` should take with this model and voice."""
        units = text_units(text)
        rate, measured = self.rate(model, voice, units.script)
        return Expectation(units.count * rate, units, measured)

    def learn(self, text: str, duration_s: float, *, model: str, voice: str) -> None:
        """Record an accepted take (texts too short to say anything about the rate are skipped)."""
        units = text_units(text)
        if units.count < self._thresholds.min_units_for_ratio or duration_s <= 0:
            return
        with self._lock:
            samples = self._samples.setdefault(
                (model, voice, units.script), deque(maxlen=self._thresholds.rate_window)
            )
            samples.append(duration_s / units.count)
