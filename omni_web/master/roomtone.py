"""Room tone: a very low, steady noise floor laid under the whole chapter instead of digital silence.

ACX rejects dead silence ("sounds unnatural") and asks a floor no higher than -60 dB RMS; -68 dB is
inaudible under speech and reads as a quiet room in every pause. The noise is gently low-passed
(a two-tap average) so it sounds like air rather than hiss, and it is seeded per chapter, so a
rebuilt chapter is sample-identical.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["RoomTone"]


class RoomTone:
    """A deterministic noise stream at ``level_db`` dB RMS (full scale = 1.0)."""

    def __init__(self, level_db: float, *, channels: int, seed: str) -> None:
        self._channels = channels
        self._rng = np.random.default_rng(zlib.crc32(seed.encode("utf-8")))
        # The two-tap average of unit white noise has RMS sqrt(1/2); scale for the wanted level.
        self._scale = 10 ** (level_db / 20) * np.sqrt(2.0)
        self._last = np.zeros(channels, dtype=np.float64)

    def samples(self, frames: int) -> np.ndarray:
        """The next ``frames`` frames as float32, shaped (frames, channels)."""
        if frames <= 0:
            return np.zeros((0, self._channels), dtype=np.float32)
        white = self._rng.standard_normal((frames, self._channels))
        shifted = np.vstack([self._last[None, :], white[:-1]])
        self._last = white[-1].copy()
        return ((white + shifted) * 0.5 * self._scale).astype(np.float32)
