"""Audio for the page's players: a preview WAV handed over as samples, never as a file to fetch."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from omni_web.errors import PreviewError

__all__ = ["read_wav"]


def read_wav(path: Path) -> tuple[int, np.ndarray]:
    """(rate, samples) of a PCM WAV, so a preview needs no file the page could fetch later."""
    with wave.open(str(path), "rb") as handle:
        dtype = {1: np.uint8, 2: np.int16, 4: np.int32}.get(handle.getsampwidth())
        if dtype is None:
            raise PreviewError(
                f"The preview came back as {8 * handle.getsampwidth()}-bit audio; cannot play it."
            )
        frames = handle.readframes(handle.getnframes())
        return handle.getframerate(), np.frombuffer(frames, dtype=dtype).reshape(-1, handle.getnchannels())
