"""Faulty audio on demand for the fake ``sgl-omni``: what real TTS models do on a bad sample.

The real models answer 200 with audio that is cut short, silent, looped, missing words or with
words out of order; so does the fake, on a chosen share of requests (``FAKE_SGL_FAULTS``,
``FAKE_SGL_FAULT_SHARE``). Which request is faulty is decided by a hash of the text and how many
times that text was asked for, so a retake of a faulty chunk is a new draw (as sampling is on the
real server, with or without a seed) and a run is reproducible.

``FAKE_SGL_VOICE=espeak`` makes the fake speak with espeak-ng (real words a speech recogniser can
transcribe) instead of its tone bursts.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import threading
import wave
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["FAULT_MODES", "FaultPlan", "Faults", "espeak_pcm"]

# Text faults change what is spoken; audio faults change the audio of a clean reading.
TEXT_FAULTS = ("drop", "shuffle")
AUDIO_FAULTS = ("cut", "silent", "loop")
FAULT_MODES = (*AUDIO_FAULTS, *TEXT_FAULTS)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """What to do to one request: the text to speak and the fault to apply to its audio."""

    text: str
    fault: str | None


@dataclass
class Faults:
    """The fault switches and the per-text request counter (thread-safe)."""

    modes: tuple[str, ...] = ()
    share: float = 0.0
    log: Path | None = None
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> Faults:
        """``FAKE_SGL_FAULTS=cut,silent,loop``, ``FAKE_SGL_FAULT_SHARE=0.15``, ``FAKE_SGL_FAULT_LOG=path``."""
        modes = tuple(m.strip() for m in environ.get("FAKE_SGL_FAULTS", "").split(",") if m.strip())
        unknown = [m for m in modes if m not in FAULT_MODES]
        if unknown:
            raise ValueError(f"FAKE_SGL_FAULTS: unknown mode(s) {unknown}; use {', '.join(FAULT_MODES)}")
        share = float(environ.get("FAKE_SGL_FAULT_SHARE", "0") or 0)
        log = environ.get("FAKE_SGL_FAULT_LOG", "").strip()
        return cls(modes=modes, share=share if modes else 0.0, log=Path(log) if log else None)

    def plan(self, text: str, seed: object) -> FaultPlan:
        """Decide the fault of this request (and log it)."""
        if not self.modes or self.share <= 0:
            return FaultPlan(text, None)
        with self._lock:
            self._seen[text] += 1
            attempt = self._seen[text]
        draw = zlib.crc32(f"{attempt}|{text}".encode()) / 2**32
        fault = None
        if draw < self.share:
            fault = self.modes[zlib.crc32(f"mode|{attempt}|{text}".encode()) % len(self.modes)]
        if self.log is not None:
            line = json.dumps({"input": text, "attempt": attempt, "seed": seed, "fault": fault}, ensure_ascii=False)
            with self._lock, self.log.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        words = text.split()
        if fault == "drop" and len(words) >= 3:
            return FaultPlan(" ".join(w for i, w in enumerate(words) if i % 3 != 2), fault)
        if fault == "shuffle" and len(words) >= 3:
            shuffled = words[:]
            random.Random(zlib.crc32(text.encode())).shuffle(shuffled)
            return FaultPlan(" ".join(shuffled), fault)
        return FaultPlan(text, fault)

    @staticmethod
    def apply(pcm: bytes, fault: str | None, *, channels: int) -> bytes:
        """Apply an audio fault to s16le ``pcm``."""
        frame = 2 * channels
        if fault == "cut":
            return pcm[: (len(pcm) // 3) // frame * frame]
        if fault == "silent":
            return b"\x00" * len(pcm)
        if fault == "loop":
            return pcm * 3
        return pcm


def espeak_pcm(text: str, *, rate: int, channels: int, voice: str = "en-us") -> bytes:
    """s16le audio of espeak-ng reading ``text``, resampled to ``rate``."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise RuntimeError("FAKE_SGL_VOICE=espeak needs espeak-ng (apt-get install espeak-ng)")
    result = subprocess.run([espeak, "--stdout", "-v", voice, "-s", "160", text],  # noqa: S603
                            capture_output=True, check=True, timeout=120)
    with wave.open(io.BytesIO(result.stdout), "rb") as handle:
        source_rate = handle.getframerate()
        samples = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2").astype(np.float64)
    if source_rate != rate and len(samples):
        count = int(round(len(samples) * rate / source_rate))
        samples = np.interp(np.arange(count) * source_rate / rate, np.arange(len(samples)), samples)
    mono = np.clip(samples, -32768, 32767).astype("<i2")
    return np.repeat(mono, channels).tobytes() if channels > 1 else mono.tobytes()
