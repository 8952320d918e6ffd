"""Who reads a take and how: voice identity, pace, pitch and loudness against that voice's other takes.

Each voice of a job (the narrator, every character of a cast) has its own :class:`VoiceTrack`:
the centre of its accepted takes' speaker embeddings (or its clone reference clip's embedding),
and the running figures of its reading. A take whose embedding is far from its voice's centre
"sounds like another voice"; one read much faster or slower, higher or lower, louder or quieter
than that voice's recent takes is an outlier. Limits calibrate per voice from the accepted takes'
spread (median and MAD, as omni_web/qa/calibration.py does), within fixed bounds, and nothing is
judged before a voice has a few accepted takes (or a reference) to judge against.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from omni_web.qa.calibration import robust_spread
from omni_web.qa.findings import Finding, FindingKind
from omni_web.qa.speaker import cosine
from omni_web.qa.thresholds import Thresholds

__all__ = ["Reading", "VoiceJudge", "VoiceTrack"]


@dataclass(frozen=True, slots=True)
class Reading:
    """How one take was read: its embedding and figures (None where they could not be measured)."""

    embedding: np.ndarray | None = field(default=None, repr=False)
    words: int = 0
    pace_wps: float | None = None  # words per second of speech (what a reader is told)
    # Spoken characters and pauses per second of speech (qa.rate.paced_units): what pace is judged
    # on, since words per second swings with the words' length ("I did" against "conversation"): a
    # clean espeak take of short words read 4.8 words/s where the voice's others read 3.3.
    pace_cps: float | None = None
    pitch_hz: float | None = None  # median fundamental of its voiced frames
    loudness_db: float | None = None  # mean level of its speech, dBFS


def _pace_findings(
    pace_cps: float, pace_wps: float, accepted: list[tuple[float, float]], t: Thresholds
) -> list[Finding]:
    """A take read faster or slower than the voice's accepted takes.

    Judged on characters and pauses per second, which follow what a voice says. A voice whose
    accepted takes are steadier in words per second than in characters (each word takes the same
    time: a test double, not speech) must also lean the same way in words, by half the least
    difference; a voice that reads by characters, as speech does, need not: a fast take of long
    words ("Hearthrug, near the Fender") keeps the usual words per second.
    """
    median, sigma = robust_spread([sample[0] for sample in accepted])
    off = math.log(pace_cps) - median
    if abs(off) <= max(t.pace_log_floor, t.reading_sigmas * sigma):
        return []
    word_median, word_sigma = robust_spread([sample[1] for sample in accepted])
    word_off = math.log(pace_wps) - word_median
    if word_sigma < sigma and word_off * math.copysign(1.0, off) <= t.pace_log_floor / 2:
        return []
    usual = math.exp(median)
    how = "faster" if off > 0 else "slower"
    return [
        Finding(
            FindingKind.PACE,
            f"read {math.exp(abs(off)):.2f} times {how} than this voice's other takes "
            f"({pace_cps:.1f} characters/s, usually {usual:.1f})",
            {"pace_cps": pace_cps, "usual_cps": usual, "pace_wps": pace_wps},
        )
    ]


def _spread(values: list[float]) -> tuple[float, float]:
    """The 5th and 95th percentiles (the range a reader is told)."""
    return float(np.percentile(values, 5)), float(np.percentile(values, 95))


class VoiceTrack:
    """One voice's accepted takes: embeddings and reading figures (a window of the most recent)."""

    def __init__(self, window: int, reference: np.ndarray | None = None) -> None:
        self.reference = reference
        self.embeddings: deque[np.ndarray] = deque(maxlen=window)
        # (log characters and pauses per second, log words per second) of each accepted take
        self.log_pace: deque[tuple[float, float]] = deque(maxlen=window)
        self.semitones: deque[float] = deque(maxlen=window)
        self.loudness: deque[float] = deque(maxlen=window)

    def centre(self, min_samples: int) -> np.ndarray | None:
        """The voice's centre: its reference, else the mean direction of its accepted takes."""
        if self.reference is not None:
            return self.reference
        if len(self.embeddings) < min_samples:
            return None
        mean = np.mean(np.stack(list(self.embeddings)), axis=0)
        return mean / (np.linalg.norm(mean) or 1.0)

    def similarities(self, centre: np.ndarray) -> list[float]:
        """Each accepted take's similarity to ``centre``."""
        return [cosine(e, centre) for e in self.embeddings]


class VoiceJudge:
    """Voice and reading checks of one job, a track per voice label; thread-safe."""

    def __init__(self, thresholds: Thresholds) -> None:
        self._t = thresholds
        self._tracks: dict[str, VoiceTrack] = {}
        self._lock = threading.Lock()

    def _track(self, voice: str) -> VoiceTrack:
        track = self._tracks.get(voice)
        if track is None:
            track = self._tracks[voice] = VoiceTrack(self._t.voice_window)
        return track

    def set_reference(self, voice: str, embedding: np.ndarray | None) -> None:
        """Judge ``voice``'s takes against a reference clip's embedding (a clone) from the start."""
        if embedding is not None:
            with self._lock:
                self._track(voice).reference = embedding

    def similarity(self, voice: str, reading: Reading) -> float | None:
        """The take's similarity to its voice's centre (None before there is one)."""
        if reading.embedding is None:
            return None
        with self._lock:
            centre = self._track(voice).centre(self._t.voice_min_samples)
        return cosine(reading.embedding, centre) if centre is not None else None

    def judge(self, voice: str, reading: Reading) -> tuple[float | None, list[Finding]]:
        """(similarity to the voice, the findings that fail the take)."""
        t = self._t
        findings: list[Finding] = []
        with self._lock:
            track = self._track(voice)
            centre = track.centre(t.voice_min_samples)
            accepted = track.similarities(centre) if centre is not None and track.embeddings else []
            pace = list(track.log_pace)
            pitch = list(track.semitones)
            loud = list(track.loudness)
        similarity = (
            cosine(reading.embedding, centre)
            if reading.embedding is not None and centre is not None
            else None
        )
        if similarity is not None:
            limit = self._voice_limit(accepted)
            if similarity < limit:
                low, high = _spread(accepted) if len(accepted) >= 2 else (limit, limit)
                usual = (
                    f"this voice's takes {low:.2f}-{high:.2f}" if len(accepted) >= 2 else "its reference clip"
                )
                findings.append(
                    Finding(
                        FindingKind.VOICE,
                        f"sounds like another voice: similarity {similarity:.2f}, {usual}",
                        {"similarity": similarity, "limit": limit},
                    )
                )
        if reading.words >= t.reading_min_words:
            findings.extend(self._reading(reading, pace, pitch, loud))
        return similarity, findings

    def _voice_limit(self, accepted: list[float]) -> float:
        t = self._t
        if len(accepted) < t.calibration_min_samples:
            return t.min_voice_similarity
        median, sigma = robust_spread(accepted)
        low, high = t.calibrated_voice_similarity
        return min(high, max(low, median - t.calibration_sigmas * sigma))

    def _reading(
        self, reading: Reading, pace: list[tuple[float, float]], pitch: list[float], loud: list[float]
    ) -> list[Finding]:
        t = self._t
        found: list[Finding] = []
        if reading.pace_cps and reading.pace_wps and len(pace) >= t.reading_min_samples:
            found.extend(_pace_findings(reading.pace_cps, reading.pace_wps, pace, t))
        if reading.pitch_hz and len(pitch) >= t.reading_min_samples:
            median, sigma = robust_spread(pitch)
            off = 12 * math.log2(reading.pitch_hz) - median
            if abs(off) > max(t.pitch_semitones_floor, t.reading_sigmas * sigma):
                usual = 2 ** (median / 12)
                found.append(
                    Finding(
                        FindingKind.PITCH,
                        f"pitched {abs(off):.1f} semitones {'higher' if off > 0 else 'lower'}"
                        f" than this voice's other takes ({reading.pitch_hz:.0f} Hz, usually {usual:.0f})",
                        {"pitch_hz": reading.pitch_hz, "usual_hz": usual},
                    )
                )
        if reading.loudness_db is not None and len(loud) >= t.reading_min_samples:
            median, sigma = robust_spread(loud)
            off = reading.loudness_db - median
            if abs(off) > max(t.loudness_db_floor, t.reading_sigmas * sigma):
                found.append(
                    Finding(
                        FindingKind.LOUDNESS,
                        f"{abs(off):.1f} dB {'louder' if off > 0 else 'quieter'} than "
                        f"this voice's other takes",
                        {"loudness_db": reading.loudness_db, "usual_db": median},
                    )
                )
        return found

    def learn(self, voice: str, reading: Reading) -> None:
        """Record an accepted take of ``voice``."""
        with self._lock:
            track = self._track(voice)
            if reading.embedding is not None:
                track.embeddings.append(reading.embedding)
            if reading.words >= self._t.reading_min_words:
                if reading.pace_cps and reading.pace_wps:
                    track.log_pace.append((math.log(reading.pace_cps), math.log(reading.pace_wps)))
                if reading.pitch_hz:
                    track.semitones.append(12 * math.log2(reading.pitch_hz))
                if reading.loudness_db is not None:
                    track.loudness.append(reading.loudness_db)
