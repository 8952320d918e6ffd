"""Transcript-free figures of one take: duration, silence and clipping, measured with numpy.

The WAV is read once into an int16 array; every figure is a vectorised pass over it, so a 30 s
chunk costs about a millisecond and the ``basic`` level never slows a render.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass

import numpy as np

from omni_web.qa.thresholds import Thresholds

__all__ = ["AudioFigures", "decode_wav", "measure_audio"]


@dataclass(frozen=True, slots=True)
class AudioFigures:
    """What the signal of one take shows."""

    duration_s: float
    silence_share: float  # share of 20 ms windows below the speech level
    longest_internal_silence_s: float  # not counting leading and trailing silence
    clipped_share: float  # share of samples at full scale
    peak_dbfs: float
    speech_dbfs: float | None = None  # mean RMS level of the windows above the silence level

    @property
    def speech_s(self) -> float:
        """Seconds above the silence level: what was said, without the pauses and padding."""
        return self.duration_s * (1.0 - self.silence_share)


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    """(mono float32 samples in [-1, 1], sample rate) of a 16-bit PCM WAV; ValueError otherwise."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a WAV file: {exc}") from exc
    if width != 2 or rate <= 0:
        raise ValueError(f"expected 16-bit PCM WAV, got {8 * width}-bit at {rate} Hz")
    samples = np.frombuffer(frames, dtype="<i2")
    if channels > 1:
        samples = samples[: len(samples) - len(samples) % channels].reshape(-1, channels).mean(axis=1)
    return samples.astype(np.float32) / 32768.0, rate


def _silent_runs(silent: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) window indices of every run of silent windows."""
    if not silent.any():
        return []
    padded = np.concatenate(([False], silent, [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


def measure_audio(data: bytes, thresholds: Thresholds) -> AudioFigures:
    """Measure one take's WAV bytes (raises ValueError when they are not a WAV)."""
    samples, rate = decode_wav(data)
    duration = len(samples) / rate
    if len(samples) == 0:
        return AudioFigures(0.0, 1.0, 0.0, 0.0, -120.0)
    window = max(int(rate * thresholds.window_s), 1)
    count = len(samples) // window
    magnitude = np.abs(samples)
    peak = float(magnitude.max())
    clipped = float(np.count_nonzero(magnitude >= thresholds.clip_level)) / len(samples)
    if count == 0:
        return AudioFigures(duration, 1.0 if peak == 0 else 0.0, 0.0, clipped, _dbfs(peak))
    frames = samples[: count * window].reshape(count, window)
    rms = np.sqrt(np.einsum("ij,ij->i", frames, frames) / window)
    silent = rms < 10 ** (thresholds.silence_dbfs / 20)
    runs = _silent_runs(silent)
    internal = [end - start for start, end in runs if start > 0 and end < count]
    return AudioFigures(
        duration_s=duration,
        silence_share=float(np.count_nonzero(silent)) / count,
        longest_internal_silence_s=(max(internal) * window / rate) if internal else 0.0,
        clipped_share=clipped,
        peak_dbfs=_dbfs(peak),
        speech_dbfs=float(20 * np.log10(np.mean(rms[~silent]))) if not silent.all() else None,
    )


def _dbfs(peak: float) -> float:
    return float(20 * np.log10(peak)) if peak > 0 else -120.0
