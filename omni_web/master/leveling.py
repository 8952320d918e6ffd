"""Chunk-to-chunk leveling: one constant gain per chunk, so TTS takes match each other.

A take's level is its active speech level: the mean power of the 50 ms frames within 30 dB of
its loudest frame (pauses and breaths do not count, so a take with long pauses is not boosted).
One gain per chunk cannot pump inside a sentence; the chapter's loudness is then set exactly by
loudnorm, so this only has to make the takes agree with each other.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_GAIN_DB", "leveling_gain_db", "speech_level_db"]

# A take more than this far off is broken, not quiet; leveling it further would lift its noise.
MAX_GAIN_DB = 24.0
_FRAME_S = 0.05
_ACTIVE_RANGE_DB = 30.0
_FLOOR_POWER = 1e-7  # -70 dBFS: nothing below this counts as speech


def speech_level_db(samples: np.ndarray, rate: int) -> float | None:
    """Active speech level in dBFS of float samples shaped (frames,) or (frames, channels).

    None when the take is silent (nothing above -70 dBFS).
    """
    data = samples.reshape(len(samples), -1)
    if len(data) == 0:
        return None
    frame = min(max(1, int(rate * _FRAME_S)), len(data))
    count = len(data) // frame
    blocks = data[: count * frame].reshape(count, frame, data.shape[1]).astype(np.float64)
    power = np.mean(np.square(blocks), axis=(1, 2))
    loudest = float(power.max())
    if loudest <= _FLOOR_POWER:
        return None
    gate = max(loudest * 10 ** (-_ACTIVE_RANGE_DB / 10), _FLOOR_POWER)
    active = power[power >= gate]
    return 10 * math.log10(float(active.mean()))


def leveling_gain_db(level_db: float | None, reference_db: float) -> float:
    """Gain that brings a take at ``level_db`` to ``reference_db`` (0 for a silent take), clamped."""
    if level_db is None:
        return 0.0
    return max(-MAX_GAIN_DB, min(MAX_GAIN_DB, reference_db - level_db))
