"""Speaker embeddings: a fixed-length fingerprint of who is speaking in a take.

The encoder is resemblyzer's GE2E voice encoder (Apache-2.0): its weights (17 MB) ship inside the
``resemblyzer`` wheel, so nothing is downloaded at run time, and it runs on the CPU beside
faster-whisper (a three-layer LSTM over 40 mel bands: about 0.012 CPU seconds per second of audio
on this machine's CPU, see bench/bench_qa.py). Two takes of flite slt score a cosine similarity of
0.97-0.99 to the voice's centre, flite's rms, awb and kal and espeak-ng 0.48-0.59.
It loads on first use, once per job, and only with voice checks on.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from omni_web.errors import VoiceError
from omni_web.qa.audio import decode_wav

__all__ = ["ENCODER_RATE", "MIN_SPEECH_S", "ResemblyzerEncoder", "SpeakerEncoder", "cosine", "load_encoder"]

ENCODER_RATE = 16_000
# Less speech than this gives an embedding too noisy to judge by (the encoder's own window is 1.6 s).
MIN_SPEECH_S = 0.8


class SpeakerEncoder(Protocol):
    """Turns a take's audio into a unit vector; None when the take holds too little speech."""

    name: str

    def embed(self, wav: bytes) -> np.ndarray | None:
        """The take's embedding (unit length), or None."""
        ...

    def embed_file(self, path: Path) -> np.ndarray | None:
        """A reference clip's embedding (any format ffmpeg reads is not needed: WAV), or None."""
        ...


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two embeddings."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm > 0 else 0.0


class ResemblyzerEncoder:
    """resemblyzer's voice encoder on the CPU; thread-safe (one inference at a time, on one thread)."""

    name = "resemblyzer GE2E"

    def __init__(self, model: Any, preprocess: Any) -> None:
        self._model = model
        self._preprocess = preprocess
        self._lock = threading.Lock()

    def embed(self, wav: bytes) -> np.ndarray | None:
        samples, rate = decode_wav(wav)
        return self._embed(samples, rate)

    def embed_file(self, path: Path) -> np.ndarray | None:
        try:
            return self.embed(path.read_bytes())
        except (OSError, ValueError):
            return None  # a clip that is not a 16-bit WAV: its voice is learnt from the takes instead

    def _embed(self, samples: np.ndarray, rate: int) -> np.ndarray | None:
        if len(samples) < rate * MIN_SPEECH_S:
            return None
        # Resampled to 16 kHz, silences cut out by webrtcvad, level normalised (resemblyzer.audio).
        speech = self._preprocess(samples.astype(np.float32), source_sr=rate)
        if len(speech) < ENCODER_RATE * MIN_SPEECH_S:
            return None
        with self._lock:
            embedding = self._model.embed_utterance(speech)
        return np.asarray(embedding, dtype=np.float32)


def load_encoder(device: str = "cpu") -> ResemblyzerEncoder:
    """Load the encoder (a second or two: torch and the 17 MB weights).

    Raises:
        VoiceError: resemblyzer or torch is not installed.
    """
    try:
        import torch
        from resemblyzer import VoiceEncoder, preprocess_wav
    except ImportError as exc:
        raise VoiceError(
            f"Voice checks need the resemblyzer package ({exc}). Install the app's requirements "
            "(pip install -r requirements.txt) or turn voice checks off in Settings."
        ) from exc
    # One thread: QA shares the CPU with faster-whisper and the render threads.
    torch.set_num_threads(1)
    encoder = ResemblyzerEncoder(
        VoiceEncoder(device if device == "cuda" else "cpu", verbose=False), preprocess_wav
    )
    # The first call compiles librosa's numba kernels (seconds): pay it here, not in a take.
    rng = np.random.default_rng(0)
    encoder._embed(
        (0.1 * np.sin(np.arange(2 * ENCODER_RATE) * 0.06) * rng.uniform(0.5, 1, 2 * ENCODER_RATE)).astype(
            np.float32
        ),
        ENCODER_RATE,
    )
    return encoder
