"""Per-job limits for the word error rate, word recall and duration ratio, from the takes accepted so far.

A fixed limit fits one voice and recogniser: tiny.en hears espeak-ng badly (clean takes score a
word error rate around 0.27) and flite slt well (around 0.04). So once a job has accepted enough
takes, its limits come from their robust spread (median and MAD, the median absolute deviation,
scaled to a standard deviation): a voice heard well gets tight limits, so a take that misses a
clause fails on its error rate too. Before that the fixed :class:`~omni_web.qa.thresholds.Thresholds`
apply, and a calibrated error-rate or recall limit is never looser than them (bounds there); the
duration ratio may widen or narrow within its bounds.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from omni_web.qa.thresholds import Thresholds

__all__ = ["Calibration", "CalibrationFigures", "robust_spread"]

_MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution times this is its standard deviation


def robust_spread(values: Iterable[float]) -> tuple[float, float]:
    """(median, MAD scaled to a standard deviation) of ``values``."""
    data = np.fromiter(values, dtype=np.float64)
    median = float(np.median(data))
    return median, _MAD_TO_SIGMA * float(np.median(np.abs(data - median)))


@dataclass(frozen=True, slots=True)
class CalibrationFigures:
    """The job's limits now and what they come from (for the QA report and the bench)."""

    samples: int  # accepted takes with a transcript
    calibrated: bool  # False while the fixed limits apply
    wer_median: float | None = None
    wer_sigma: float | None = None
    max_wer: float | None = None  # the limit before the per-length noise term
    recall_median: float | None = None
    min_word_recall: float | None = None
    ratio_samples: int = 0
    ratio_bounds: tuple[float, float] | None = None  # for medium and long texts

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, figures rounded."""
        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 3)

        return {
            "samples": self.samples,
            "calibrated": self.calibrated,
            "wer_median": r(self.wer_median),
            "wer_sigma": r(self.wer_sigma),
            "max_wer": r(self.max_wer),
            "recall_median": r(self.recall_median),
            "min_word_recall": r(self.min_word_recall),
            "ratio_samples": self.ratio_samples,
            "ratio_bounds": [r(b) for b in self.ratio_bounds] if self.ratio_bounds else None,
        }


class Calibration:
    """The accepted takes' figures of one job and the limits they give; thread-safe."""

    def __init__(self, thresholds: Thresholds) -> None:
        self._base = thresholds
        self._lock = threading.Lock()
        window = thresholds.calibration_window
        self._wer: deque[float] = deque(maxlen=window)
        self._recall: deque[float] = deque(maxlen=window)
        self._log_ratio: deque[float] = deque(maxlen=window)

    def learn(
        self, *, wer: float | None, recall: float | None, duration_ratio: float | None, words: int, units: int
    ) -> None:
        """Record an accepted take (texts too short to say anything are skipped)."""
        t = self._base
        with self._lock:
            if wer is not None and recall is not None and words >= t.min_words_for_alignment:
                self._wer.append(wer)
                self._recall.append(recall)
            if duration_ratio and duration_ratio > 0 and units >= t.medium_units:
                self._log_ratio.append(math.log(duration_ratio))

    def figures(self) -> CalibrationFigures:
        """The limits now."""
        t = self._base
        with self._lock:
            samples, ratio_samples = len(self._wer), len(self._log_ratio)
            wer = robust_spread(self._wer) if samples >= t.calibration_min_samples else None
            recall = robust_spread(self._recall) if samples >= t.calibration_min_samples else None
            ratio = robust_spread(self._log_ratio) if ratio_samples >= t.calibration_min_samples else None
        k = t.calibration_sigmas
        max_wer = min_recall = bounds = None
        if wer is not None and recall is not None:
            low, high = t.calibrated_max_wer
            max_wer = min(high, max(low, wer[0] + k * wer[1]))
            low, high = t.calibrated_min_recall
            min_recall = min(high, max(low, recall[0] - k * recall[1]))
        if ratio is not None:
            (low_min, low_max), (high_min, high_max) = t.calibrated_ratio_low, t.calibrated_ratio_high
            bounds = (
                min(low_max, max(low_min, math.exp(ratio[0] - k * ratio[1]))),
                min(high_max, max(high_min, math.exp(ratio[0] + k * ratio[1]))),
            )
        return CalibrationFigures(
            samples=samples,
            calibrated=max_wer is not None or bounds is not None,
            wer_median=wer[0] if wer else None,
            wer_sigma=wer[1] if wer else None,
            max_wer=max_wer,
            recall_median=recall[0] if recall else None,
            min_word_recall=min_recall,
            ratio_samples=ratio_samples,
            ratio_bounds=bounds,
        )

    def thresholds(self) -> Thresholds:
        """The fixed thresholds with this job's calibrated limits in place (where known yet)."""
        figures = self.figures()
        t = self._base
        if figures.max_wer is not None and figures.min_word_recall is not None:
            t = replace(t, max_wer=figures.max_wer, min_word_recall=figures.min_word_recall)
        if figures.ratio_bounds is not None:
            t = replace(t, ratio_long=figures.ratio_bounds, ratio_medium=figures.ratio_bounds)
        return t
