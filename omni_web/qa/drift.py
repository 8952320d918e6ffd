"""Per-chapter drift: how a voice and its reading wandered over a chapter (similarity, pace, pitch).

Built from the chosen takes' records when the report is written, so it costs nothing while
rendering; the QA report keeps one :class:`ChapterDrift` per chapter and the Jobs tab shows them,
so a user sees where a voice wanders (a chapter whose lowest similarity or widest pace stands out).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from omni_web.qa.findings import FindingKind
from omni_web.qa.records import TakeRecord
from omni_web.records import JsonRecord

__all__ = ["ChapterDrift", "chapter_drift"]

_READING_KINDS = frozenset({FindingKind.VOICE, FindingKind.PACE, FindingKind.PITCH, FindingKind.LOUDNESS})


@dataclass(frozen=True, slots=True)
class ChapterDrift(JsonRecord):
    """One chapter's spread of voice similarity, pace and pitch over the takes in the book."""

    chapter: int = 0
    title: str = ""
    takes: int = 0  # chosen takes with figures
    similarity_min: float | None = None
    similarity_median: float | None = None
    pace_low: float | None = None  # words per second, 10th percentile
    pace_median: float | None = None
    pace_high: float | None = None  # 90th percentile
    pitch_low: float | None = None  # Hz, 10th percentile
    pitch_median: float | None = None
    pitch_high: float | None = None
    retaken: int = 0  # takes failed for voice, pace, pitch or loudness (then retaken or flagged)

    @property
    def similarity_text(self) -> str:
        """``0.97 (lowest 0.91)`` or ``-`` without embeddings."""
        if self.similarity_median is None or self.similarity_min is None:
            return "-"
        return f"{self.similarity_median:.2f} (lowest {self.similarity_min:.2f})"

    @property
    def pace_text(self) -> str:
        """``4.1 words/s (3.9-4.3)``."""
        if self.pace_median is None:
            return "-"
        return f"{self.pace_median:.1f} words/s ({self.pace_low:.1f}-{self.pace_high:.1f})"

    @property
    def pitch_text(self) -> str:
        """``168 Hz (165-171)``."""
        if self.pitch_median is None:
            return "-"
        return f"{self.pitch_median:.0f} Hz ({self.pitch_low:.0f}-{self.pitch_high:.0f})"


def _percentiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    low, median, high = np.percentile(values, [10, 50, 90])
    return round(float(low), 3), round(float(median), 3), round(float(high), 3)


def chapter_drift(
    chapter: int, title: str, chosen: Iterable[TakeRecord | None], every: Iterable[TakeRecord] = ()
) -> ChapterDrift:
    """The drift of one chapter from its chunks' chosen takes (and every take, for the retake count)."""
    takes = [t for t in chosen if t is not None]
    similarity = [t.similarity for t in takes if t.similarity is not None]
    pace_low, pace, pace_high = _percentiles([t.pace_wps for t in takes if t.pace_wps])
    pitch_low, pitch, pitch_high = _percentiles([t.pitch_hz for t in takes if t.pitch_hz])
    retaken = sum(1 for t in every if t.kinds & _READING_KINDS)
    return ChapterDrift(
        chapter=chapter,
        title=title,
        takes=len(takes),
        similarity_min=round(min(similarity), 3) if similarity else None,
        similarity_median=round(float(np.median(similarity)), 3) if similarity else None,
        pace_low=pace_low,
        pace_median=pace,
        pace_high=pace_high,
        pitch_low=pitch_low,
        pitch_median=pitch,
        pitch_high=pitch_high,
        retaken=retaken,
    )
