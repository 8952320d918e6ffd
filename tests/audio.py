"""Small in-memory WAVs for tests that need audio bytes but not real speech."""

from __future__ import annotations

import io
import wave

__all__ = ["wav_bytes"]


def wav_bytes(
    seconds: float = 0.5, rate: int = 24000, channels: int = 1, *, sample: bytes = b"\x01\x00"
) -> bytes:
    """A 16-bit PCM WAV of ``seconds`` filled with one repeated sample."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(sample * int(seconds * rate) * channels)
    return buffer.getvalue()
