"""Audio for the fake ``sgl-omni``: speech-like synthesis, WAV/PCM packing, reference probing.

Synthesis is deterministic from the text and the voice: every word becomes a voiced burst (a
harmonic tone under a two-syllable envelope) followed by a short pause, so the result is neither
silence nor a pure tone, and a transcript-free check (duration, loudness, channel count) has
something real to measure. Word bursts are precomputed once per (rate, channels, pitch, word
length) and joined as bytes, so a 40 s clip costs milliseconds, not seconds of Python maths.
"""

from __future__ import annotations

import io
import math
import shutil
import struct
import subprocess
import tempfile
import wave
import zlib
from array import array
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = [
    "AudioInfo",
    "encode_with_ffmpeg",
    "pcm_mono",
    "probe_audio",
    "synthesize_pcm",
    "take_level",
    "wav_bytes",
]

_PITCHES_HZ = (105.0, 122.0, 140.0, 165.0, 190.0, 215.0)
_VARIANTS = 5
_VOICED_FRACTION = 0.72  # of each word slot; the rest is a pause


@dataclass(frozen=True, slots=True)
class AudioInfo:
    """What the fake learned from decoding a reference or an uploaded clip."""

    duration_s: float
    silent: bool
    container: str


@lru_cache(maxsize=256)
def _word_burst(rate: int, channels: int, pitch_hz: float, variant: int, slot_samples: int) -> bytes:
    """One word: voiced samples then a pause, s16le with ``channels`` interleaved copies."""
    voiced = int(slot_samples * _VOICED_FRACTION)
    out = array("h")
    # Harmonics with a fixed "formant" tilt per variant, so words differ in timbre.
    weights = [(1.0, 1), (0.55 + 0.08 * variant, 2), (0.35, 3), (0.18 + 0.05 * (variant % 3), 5)]
    norm = sum(w for w, _ in weights)
    glide = 1.0 + 0.04 * (variant - 2)
    for index in range(voiced):
        t = index / rate
        progress = index / max(voiced - 1, 1)
        # Two syllables per word: a sin^2 envelope with two humps.
        envelope = math.sin(math.pi * progress) * (0.55 + 0.45 * abs(math.sin(2 * math.pi * progress)))
        f0 = pitch_hz * (1.0 + (glide - 1.0) * progress)
        value = sum(w * math.sin(2 * math.pi * f0 * h * t) for w, h in weights) / norm
        sample = int(max(-1.0, min(1.0, 0.6 * envelope * value)) * 32767)
        for _ in range(channels):
            out.append(sample)
    out.extend([0] * ((slot_samples - voiced) * channels))
    return out.tobytes()


def synthesize_pcm(
    text: str,
    *,
    voice_key: str,
    rate: int,
    channels: int,
    seconds_per_word: float,
    duration_s: float | None = None,
) -> bytes:
    """Speech-like s16le audio for ``text``: one word slot of ``seconds_per_word`` per word.

    Args:
        text: the words to "speak"; their count sets the length unless ``duration_s`` is given.
        voice_key: anything naming the voice (name, reference hash); it picks the pitch.
        rate: sample rate in Hz.
        channels: interleaved channel count (identical channels).
        seconds_per_word: the length of one word slot.
        duration_s: an explicit length (MOSS token_count); the words are spread over it.
    """
    words = text.split() or ["."]
    crc = zlib.crc32(voice_key.encode("utf-8"))
    pitch = _PITCHES_HZ[crc % len(_PITCHES_HZ)]
    if "|design:" in voice_key:  # a voice designed from words: any pitch in the range, as descriptions vary
        pitch = _PITCHES_HZ[0] + (crc >> 8) % int(_PITCHES_HZ[-1] - _PITCHES_HZ[0])
    total_samples = int(
        round((duration_s if duration_s is not None else len(words) * seconds_per_word) * rate)
    )
    slot = max(int(round(total_samples / len(words))), 1)
    parts = [
        _word_burst(rate, channels, pitch, zlib.crc32(word.encode("utf-8")) % _VARIANTS, slot)
        for word in words
    ]
    body = b"".join(parts)
    wanted = total_samples * channels * 2
    if len(body) < wanted:
        body += b"\x00" * (wanted - len(body))
    return body[:wanted]


def wav_bytes(pcm: bytes, *, rate: int, channels: int) -> bytes:
    """A 16-bit PCM WAV file around s16le ``pcm``."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(pcm)
    return buffer.getvalue()


def pcm_mono(pcm: bytes, *, channels: int) -> bytes:
    """Downmix interleaved s16le to mono (the server's pcm output is always mono)."""
    if channels == 1:
        return pcm
    samples = array("h")
    samples.frombytes(pcm)
    # The fake writes identical channels, so one channel is the exact downmix (and C-speed).
    return samples[::channels].tobytes()


def encode_with_ffmpeg(pcm: bytes, *, rate: int, channels: int, fmt: str) -> bytes | None:
    """Encode s16le audio to mp3/flac/opus/aac with ffmpeg, or None when ffmpeg is missing."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        return None
    codec_args = {
        "mp3": ["-f", "mp3"],
        "flac": ["-f", "flac"],
        "opus": ["-c:a", "libopus", "-ar", "48000", "-f", "ogg"],
        "aac": ["-c:a", "aac", "-f", "adts"],
    }[fmt]
    argv = [
        ffmpeg,
        "-v",
        "error",
        "-f",
        "s16le",
        "-ar",
        str(rate),
        "-ac",
        str(channels),
        "-i",
        "pipe:0",
        *codec_args,
        "pipe:1",
    ]
    result = subprocess.run(argv, input=pcm, capture_output=True, check=False, timeout=120)  # noqa: S603
    return result.stdout if result.returncode == 0 and result.stdout else None


def _probe_wav(data: bytes) -> AudioInfo | None:
    try:
        with wave.open(io.BytesIO(data), "rb") as handle:
            rate = handle.getframerate()
            frames = handle.getnframes()
            width = handle.getsampwidth()
            raw = handle.readframes(min(frames, rate * 120))
    except (wave.Error, EOFError, struct.error):
        return None
    if rate <= 0:
        return None
    return AudioInfo(duration_s=frames / rate, silent=width <= 0 or not any(raw), container="wav")


_MAGICS = (
    (b"fLaC", "flac"),
    (b"OggS", "ogg"),
    (b"ID3", "mp3"),
    (b"\xff\xfb", "mp3"),
    (b"\xff\xf3", "mp3"),
    (b"\xff\xf1", "aac"),
    (b"\x1aE\xdf\xa3", "webm"),
)


def _container(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[4:8] == b"ftyp":
        return "mp4"
    for magic, name in _MAGICS:
        if data.startswith(magic):
            return name
    return None


def _ffprobe_duration(data: bytes) -> float | None:
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        return None
    # A file, not a pipe: MP4 keeps its index at the end and needs seeking.
    with tempfile.TemporaryDirectory(prefix="fake-sgl-probe-") as tmp:
        path = Path(tmp) / "clip"
        path.write_bytes(data)
        argv = [ffprobe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)]
        result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)  # noqa: S603
    try:
        return float(result.stdout.strip())
    except ValueError:
        return None


def probe_audio(data: bytes) -> AudioInfo | None:
    """Decode enough of ``data`` to know its length; None when it is not audio the fake recognises.

    WAV is read with :mod:`wave`. Other containers (FLAC, Ogg, MP3, AAC, MP4, WebM) are recognised
    by their magic bytes and measured with ffprobe when it is installed, else estimated at 16 kB/s.
    """
    container = _container(data)
    if container is None:
        return None
    if container == "wav":
        info = _probe_wav(data)
        if info is not None:
            return info
    duration = _ffprobe_duration(data)
    if duration is None:
        if container == "wav":
            return None
        duration = len(data) / 16000.0
    return AudioInfo(duration_s=duration, silent=False, container=container)


def take_level(pcm: bytes, text: str, spread_db: float) -> bytes:
    """``pcm`` scaled by a gain in -spread..0 dB chosen from the text (deterministic per request).

    Real TTS takes vary in level from request to request; this lets tests master such a book.
    The gains are spread evenly (the text's hash picks one of 9 steps), so any book of a dozen
    chunks sees both ends of the range.
    """
    if spread_db <= 0:
        return pcm
    step = zlib.crc32(text.encode("utf-8")) % 9
    gain = 10 ** (-spread_db * step / 8 / 20)
    samples = array("h")
    samples.frombytes(pcm)
    scaled = array("h", (int(v * gain) for v in samples))
    return scaled.tobytes()
