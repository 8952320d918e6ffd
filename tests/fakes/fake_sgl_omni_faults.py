"""Faulty audio on demand for the fake ``sgl-omni``: what real TTS models do on a bad sample.

The real models answer 200 with audio that is cut short, silent, looped, missing words or with
words out of order; so does the fake, on a chosen share of requests (``FAKE_SGL_FAULTS``,
``FAKE_SGL_FAULT_SHARE``). Which request is faulty is decided by a hash of the text and how many
times that text was asked for, so a retake of a faulty chunk is a new draw (as sampling is on the
real server, with or without a seed) and a run is reproducible.

The faults LLM-based TTS models make most are small: ``gap`` leaves out ``FAKE_SGL_FAULT_WORDS``
(default 8) consecutive words from inside the text, ``repeat`` says such a stretch twice, and
``babble`` appends that many words the text does not have. Their place in the text is drawn from
the same hash, so it differs from chunk to chunk and from take to take.

``FAKE_SGL_VOICE=espeak`` (espeak-ng) or ``FAKE_SGL_VOICE=flite`` (Debian's flite, voice ``slt``, a
far more natural voice) make the fake speak real words a speech recogniser can transcribe instead
of its tone bursts. ``FAKE_SGL_VOICE_MAP=Vivian:slt,Ryan:rms,Aiden:awb`` gives requested voices
flite voices of their own (a cast); other voices read with ``slt``.

The reading faults a model makes: ``voice`` answers in another voice (flite
``FAKE_SGL_FAULT_VOICE``, default ``rms``: the chunk "sounds like a different speaker"), ``fast``
and ``slow`` read ``FAKE_SGL_FAULT_TEMPO`` (default 1.4) times faster or slower (sox ``tempo``, the
pitch kept), and ``runaway`` misses its end token: the take loops until the request's
``max_new_tokens`` and comes back with finish reason ``length``, holding its slot as long as that
takes (``FAKE_SGL_TOKEN_S`` seconds per generated token, see ``fake_sgl_omni``).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import tempfile
import threading
import wave
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "FAULT_MODES",
    "FaultPlan",
    "Faults",
    "espeak_pcm",
    "flite_pcm",
    "looped_pcm",
    "spoken_pcm",
    "tempo_pcm",
    "voice_map",
]

# Text faults change what is spoken; audio faults change the audio of a clean reading.
TEXT_FAULTS = ("drop", "shuffle", "gap", "repeat", "babble")
# What a model says after the text when it does not stop (a hallucinated outro, words of no chunk).
_BABBLE = (
    "and then the little voice went on about the weather in the hills and the price of "
    "bread in town before it stopped"
).split()
AUDIO_FAULTS = ("cut", "silent", "loop")
READING_FAULTS = ("voice", "fast", "slow", "runaway")
FAULT_MODES = (*AUDIO_FAULTS, *TEXT_FAULTS, *READING_FAULTS)


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
    words: int = 8  # the length of a gap, a repeat or a babble
    other_voice: str = "rms"  # the flite voice a ``voice`` fault answers in
    tempo: float = 1.4  # how much faster (or slower) a ``fast`` (``slow``) take reads
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> Faults:
        """``FAKE_SGL_FAULTS=cut,silent,loop``, ``FAKE_SGL_FAULT_SHARE=0.15``, ``FAKE_SGL_FAULT_LOG=path``,
        ``FAKE_SGL_FAULT_WORDS=8``."""
        modes = tuple(m.strip() for m in environ.get("FAKE_SGL_FAULTS", "").split(",") if m.strip())
        unknown = [m for m in modes if m not in FAULT_MODES]
        if unknown:
            raise ValueError(f"FAKE_SGL_FAULTS: unknown mode(s) {unknown}; use {', '.join(FAULT_MODES)}")
        share = float(environ.get("FAKE_SGL_FAULT_SHARE", "0") or 0)
        log = environ.get("FAKE_SGL_FAULT_LOG", "").strip()
        words = int(environ.get("FAKE_SGL_FAULT_WORDS", "8") or 8)
        return cls(
            modes=modes,
            share=share if modes else 0.0,
            log=Path(log) if log else None,
            words=words,
            other_voice=environ.get("FAKE_SGL_FAULT_VOICE", "").strip() or "rms",
            tempo=float(environ.get("FAKE_SGL_FAULT_TEMPO", "") or 1.4),
        )

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
        planned = self.spoken(text, fault, attempt)
        if self.log is not None:
            line = json.dumps(
                {"input": text, "attempt": attempt, "seed": seed, "fault": fault, "spoken": planned.text},
                ensure_ascii=False,
            )
            with self._lock, self.log.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        return planned

    def spoken(self, text: str, fault: str | None, attempt: int = 1) -> FaultPlan:
        """What a request with ``fault`` says for ``text`` (``attempt`` moves a gap or a repeat)."""
        words = text.split()
        n = self.words
        # Inside the text, never at its edges: a real model drops or repeats a clause mid-chunk.
        start = 1 + zlib.crc32(f"at|{attempt}|{text}".encode()) % max(1, len(words) - n - 1)
        if fault == "gap" and len(words) >= n + 2:
            return FaultPlan(" ".join(words[:start] + words[start + n :]), fault)
        if fault == "repeat" and len(words) >= n + 2:
            return FaultPlan(" ".join(words[: start + n] + words[start:]), fault)
        if fault == "babble":
            return FaultPlan(" ".join([*words, *_BABBLE[:n]]), fault)
        if fault == "drop" and len(words) >= 3:
            return FaultPlan(" ".join(w for i, w in enumerate(words) if i % 3 != 2), fault)
        if fault == "shuffle" and len(words) >= 3:
            shuffled = words[:]
            random.Random(zlib.crc32(text.encode())).shuffle(shuffled)
            return FaultPlan(" ".join(shuffled), fault)
        return FaultPlan(text, fault)

    def apply(self, pcm: bytes, fault: str | None, *, channels: int, rate: int) -> bytes:
        """Apply an audio fault to s16le ``pcm``."""
        frame = 2 * channels
        if fault == "cut":
            return pcm[: (len(pcm) // 3) // frame * frame]
        if fault == "silent":
            return b"\x00" * len(pcm)
        if fault == "loop":
            return pcm * 3
        if fault in ("fast", "slow"):
            return tempo_pcm(
                pcm, self.tempo if fault == "fast" else 1 / self.tempo, rate=rate, channels=channels
            )
        return pcm


def tempo_pcm(pcm: bytes, factor: float, *, rate: int, channels: int) -> bytes:
    """s16le ``pcm`` read ``factor`` times as fast, its pitch kept (sox ``tempo -s``: speech)."""
    sox = shutil.which("sox")
    if sox is None:
        raise RuntimeError("the fast/slow faults need sox (apt-get install sox)")
    raw = ["-t", "raw", "-r", str(rate), "-e", "signed", "-b", "16", "-c", str(channels)]
    result = subprocess.run(
        [sox, *raw, "-", *raw, "-", "tempo", "-s", f"{factor:.4f}"],  # noqa: S603
        input=pcm,
        capture_output=True,
        check=True,
        timeout=120,
    )
    return result.stdout


def looped_pcm(pcm: bytes, seconds: float, *, rate: int, channels: int) -> bytes:
    """``pcm`` said over and over until it lasts ``seconds`` (a take that never found its end)."""
    frame = 2 * channels
    size = int(seconds * rate) * frame
    if not pcm:
        return b"\x00" * size
    return (pcm * (size // len(pcm) + 1))[:size]


def _resampled(wav: bytes, *, rate: int, channels: int) -> bytes:
    """s16le of a 16-bit mono WAV, resampled to ``rate`` with ``channels`` identical channels."""
    with wave.open(io.BytesIO(wav), "rb") as handle:
        source_rate = handle.getframerate()
        samples = np.frombuffer(handle.readframes(handle.getnframes()), dtype="<i2").astype(np.float64)
    if source_rate != rate and len(samples):
        count = int(round(len(samples) * rate / source_rate))
        samples = np.interp(np.arange(count) * source_rate / rate, np.arange(len(samples)), samples)
    mono = np.clip(samples, -32768, 32767).astype("<i2")
    return np.repeat(mono, channels).tobytes() if channels > 1 else mono.tobytes()


def espeak_pcm(text: str, *, rate: int, channels: int, voice: str = "en-us") -> bytes:
    """s16le audio of espeak-ng reading ``text``, resampled to ``rate``."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise RuntimeError("FAKE_SGL_VOICE=espeak needs espeak-ng (apt-get install espeak-ng)")
    result = subprocess.run(
        [espeak, "--stdout", "-v", voice, "-s", "160", text],  # noqa: S603
        capture_output=True,
        check=True,
        timeout=120,
    )
    return _resampled(result.stdout, rate=rate, channels=channels)


def flite_pcm(text: str, *, rate: int, channels: int, voice: str = "slt") -> bytes:
    """s16le audio of flite reading ``text`` (voice ``slt``: a natural female US voice), resampled."""
    flite = shutil.which("flite")
    if flite is None:
        raise RuntimeError("FAKE_SGL_VOICE=flite needs flite (apt-get install flite)")
    with tempfile.TemporaryDirectory(prefix="fake-sgl-flite-") as tmp:
        out = Path(tmp) / "take.wav"
        # The text goes through a file: flite reads "-t" text as a single utterance but a file as
        # prose, pausing at sentence ends as a narrator does.
        source = Path(tmp) / "text.txt"
        source.write_text(text, encoding="utf-8")
        subprocess.run(
            [flite, "-voice", voice, "-f", str(source), "-o", str(out)],  # noqa: S603
            capture_output=True,
            check=True,
            timeout=120,
        )
        return _resampled(out.read_bytes(), rate=rate, channels=channels)


def spoken_pcm(text: str, *, voice: str, rate: int, channels: int, flite_voice: str = "slt") -> bytes:
    """Real speech of ``text`` with the fake's voice ``espeak`` or ``flite`` (``flite_voice`` of flite's)."""
    if voice == "flite":
        return flite_pcm(text, rate=rate, channels=channels, voice=flite_voice)
    return espeak_pcm(text, rate=rate, channels=channels)


def voice_map(value: str) -> dict[str, str]:
    """``Vivian:slt,Ryan:rms`` as {requested voice (lower case): flite voice}."""
    pairs = (part.split(":", 1) for part in value.split(",") if ":" in part)
    return {name.strip().lower(): flite.strip() for name, flite in pairs if name.strip() and flite.strip()}
