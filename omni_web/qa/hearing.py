"""Hearing a take's voice and reading: its speaker embedding, pace, pitch and loudness, then the checks.

:class:`VoiceChecks` is what :class:`~omni_web.qa.takes.ChunkQa` calls for every take whose signal
is sound: it measures a :class:`~omni_web.qa.voice.Reading` (the embedding only when an encoder is
given: the ``asr`` level, voice checks on), judges it against the take's voice, and learns the
voices from the accepted takes. A clone voice is judged against its reference clip from the first
take; a built-in or designed voice against the centre of its own accepted takes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from omni_web.errors import VoiceError
from omni_web.qa.audio import AudioFigures, decode_wav
from omni_web.qa.findings import Finding
from omni_web.qa.pitch import pitch_centre
from omni_web.qa.rate import paced_units
from omni_web.qa.records import TakeRecord
from omni_web.qa.speaker import SpeakerEncoder
from omni_web.qa.thresholds import Thresholds
from omni_web.qa.voice import Reading, VoiceJudge

__all__ = ["VoiceChecks", "with_reading"]

_log = logging.getLogger(__name__)


def with_reading(
    take: TakeRecord, reading: Reading, similarity: float | None, findings: list[Finding]
) -> TakeRecord:
    """The take with its reading's figures and the failures the voice checks found."""
    return replace(
        take,
        similarity=similarity,
        pace_wps=reading.pace_wps,
        pitch_hz=reading.pitch_hz,
        loudness_db=reading.loudness_db,
        failures=(*take.failures, *findings),
    )


class VoiceChecks:
    """Voice identity and reading checks of one job; thread-safe."""

    def __init__(
        self,
        thresholds: Thresholds,
        *,
        encoder: Callable[[], SpeakerEncoder] | None = None,
        reference_of: Callable[[Any], Path | None] | None = None,
    ) -> None:
        self.judge = VoiceJudge(thresholds)
        self._load = encoder
        self._encoder: SpeakerEncoder | None = None
        self._reference_of = reference_of
        self._referenced: set[str] = set()
        self._lock = threading.Lock()
        self.note = ""  # why voice identity is not checked, when it is not

    def encoder(self) -> SpeakerEncoder | None:
        """The speaker encoder, loaded on first use (None without one, or when it failed to load)."""
        with self._lock:
            if self._encoder is None and self._load is not None:
                load, self._load = self._load, None
                try:
                    self._encoder = load()
                except VoiceError as exc:
                    self.note = f"voice identity not checked: {exc}"
                    _log.warning("%s", self.note)
            return self._encoder

    def read(self, item: Any, voice: str, audio: bytes, figures: AudioFigures, words: int) -> Reading:
        """Measure how ``audio`` (a take of ``item`` in ``voice``) was read."""
        encoder = self.encoder()
        embedding = None
        if encoder is not None:
            self._reference(item, voice, encoder)
            try:
                embedding = encoder.embed(audio)
            except ValueError:
                embedding = None
        samples, rate = decode_wav(audio)
        speech = figures.speech_s
        spoken = paced_units(str(getattr(item, "text", "")))
        return Reading(
            embedding=embedding,
            words=words,
            pace_wps=words / speech if speech > 0.5 else None,
            pace_cps=spoken / speech if speech > 0.5 and spoken else None,
            pitch_hz=pitch_centre(samples, rate),
            loudness_db=figures.speech_dbfs,
        )

    def _reference(self, item: Any, voice: str, encoder: SpeakerEncoder) -> None:
        with self._lock:
            if voice in self._referenced or self._reference_of is None:
                return
            self._referenced.add(voice)
        path = self._reference_of(item)
        if path is not None:
            self.judge.set_reference(voice, encoder.embed_file(path))

    def check(self, voice: str, reading: Reading) -> tuple[float | None, list[Finding]]:
        """(similarity to the voice, failures) of a take."""
        return self.judge.judge(voice, reading)

    def learn(self, voice: str, reading: Reading) -> None:
        """An accepted take of ``voice``."""
        self.judge.learn(voice, reading)
