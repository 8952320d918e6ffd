"""Speech recognition for QA: a faster-whisper model on its own worker thread, off the request path.

The renderer's request threads hand a take to :class:`AsrPool` and wait for its transcript while
another thread sends the next request, so the server's batch stays full while the CPU (or a free
CUDA device) transcribes. The model loads once, lazily, on the pool's thread.

When the job also makes a read-along book, a take is heard with word timestamps and the kept
take's words are stored with its QA record, so the read-along pass does not transcribe it again.
"""

from __future__ import annotations

import io
import logging
import os
import threading
import wave
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from omni_web import languages
from omni_web.errors import OmniWebError

__all__ = [
    "RECOGNITION_ERRORS",
    "LEAD_IN_SAMPLES",
    "AsrPool",
    "Heard",
    "HeardWord",
    "Recogniser",
    "WhisperRecogniser",
    "WordTimesRecogniser",
    "asr_workers",
    "language_code",
    "load_recogniser",
    "model_folder",
]

_log = logging.getLogger(__name__)

# What loading or running a recogniser raises when the model or the audio is at fault: our own
# errors (weights not installed), missing or unreadable files, CTranslate2's RuntimeError, PyAV's
# and the wave module's decode errors (ValueError, EOFError, wave.Error), a faster-whisper that is
# not installed. Anything else is a bug in our code: logged with its traceback, never reported
# to the user as "speech recognition failed".
RECOGNITION_ERRORS: tuple[type[BaseException], ...] = (
    OmniWebError, OSError, RuntimeError, ValueError, EOFError, wave.Error, ImportError,
)
LEAD_IN_SAMPLES = 8000  # 0.5 s at the recogniser's 16 kHz
_T = TypeVar("_T")



def language_code(language: str | None) -> str | None:
    """A Whisper language code for ``English``/``en``/``en-GB``; None when unknown or ``Auto``."""
    return languages.language_code(language) or None


class Recogniser(Protocol):
    """What QA needs of a speech recogniser."""

    name: str

    def covers(self, language: str | None) -> bool:
        """True when the model can transcribe ``language`` (a Whisper code; None = undetermined)."""
        ...  # pragma: no cover

    def transcribe(self, wav: bytes, language: str | None) -> str:
        """The text spoken in ``wav``."""
        ...  # pragma: no cover


# One heard word: (text, start s, end s), times from the start of the take's audio.
HeardWord = tuple[str, float, float]


@dataclass(frozen=True, slots=True)
class Heard:
    """What the recogniser heard in one take; ``words`` only when word times were asked for."""

    text: str
    words: tuple[HeardWord, ...] | None = None


@runtime_checkable
class WordTimesRecogniser(Recogniser, Protocol):
    """A recogniser that can also say when each word was heard."""

    def transcribe_words(self, wav: bytes, language: str | None) -> Heard:
        """The text spoken in ``wav`` and each word's times."""
        ...  # pragma: no cover


@dataclass
class WhisperRecogniser:
    """A loaded faster-whisper model."""

    name: str
    model: Any  # faster_whisper.WhisperModel

    def covers(self, language: str | None) -> bool:
        if getattr(self.model, "model", None) is not None and not self.model.model.is_multilingual:
            return language in (None, "en")
        from faster_whisper.tokenizer import _LANGUAGE_CODES

        return language is None or language in _LANGUAGE_CODES

    def transcribe(self, wav: bytes, language: str | None) -> str:
        return self._hear(wav, language, word_times=False).text

    def transcribe_words(self, wav: bytes, language: str | None) -> Heard:
        return self._hear(wav, language, word_times=True)

    def _hear(self, wav: bytes, language: str | None, *, word_times: bool) -> Heard:
        import numpy as np
        from faster_whisper.audio import decode_audio

        # Half a second of silence before the take: speech that starts at its first sample makes
        # tiny.en lose the first words (a clean espeak-ng take of "Either the well was very deep,
        # or she fell very slowly..." was heard from "She felt very slowly", a false 7-word gap;
        # with the lead-in every word was heard). Word times are moved back onto the take's clock.
        audio = np.concatenate([np.zeros(LEAD_IN_SAMPLES, dtype=np.float32),
                                decode_audio(io.BytesIO(wav), sampling_rate=16000)])
        multilingual = getattr(self.model, "model", None) is None or self.model.model.is_multilingual
        segments, _info = self.model.transcribe(
            audio,
            language=language if multilingual else "en",
            beam_size=1,  # greedy: 3x faster than beam 5 and the scores separate faults as well
            vad_filter=False,  # a silence is a finding for QA (and times stay on the take's own clock)
            condition_on_previous_text=False,  # one chunk, no context: no carried-over hallucination
            # Timestamp tokens on, always: without them the decoder often ends after the first
            # sentence of a long chunk (3 of 30 120-word Alice chunks lost most of their words, each
            # a false "words skipped") and re-decodes the window's tail after the last word (a
            # hallucinated "Thank you."), for a saving of only ~15 % (RTF 0.042 against 0.049).
            without_timestamps=False,
            word_timestamps=word_times,
        )
        segments = list(segments)
        text = " ".join(segment.text.strip() for segment in segments).strip()
        if not word_times:
            return Heard(text)
        lead = LEAD_IN_SAMPLES / 16000
        words = tuple(
            (
                w.word.strip(),
                round(max(0.0, float(w.start) - lead), 3),
                round(max(0.0, float(w.end) - lead), 3),
            )
            for segment in segments
            for w in (segment.words or ())
            if w.word.strip()
        )
        return Heard(text, words)


def _wav_seconds(wav: bytes) -> float:
    """A WAV's length from its header (0 when it is not a plain PCM WAV)."""

    try:
        with wave.open(io.BytesIO(wav), "rb") as handle:
            return handle.getnframes() / float(handle.getframerate() or 1)
    except (wave.Error, EOFError):
        return 0.0


def model_folder(size_or_dir: str) -> Path:
    """The folder of a faster-whisper size (in the HF cache) or a CTranslate2 model directory.

    Raises:
        TranscriberNotInstalled: a size whose weights are not downloaded.
    """
    from omni_web.voices.transcribe import whisper_local_dir, whisper_repo_id

    folder = Path(size_or_dir).expanduser()
    if folder.is_dir() and (folder / "model.bin").is_file():
        return folder
    local = whisper_local_dir(size_or_dir)
    if local is None:
        from omni_web.errors import TranscriberNotInstalled

        raise TranscriberNotInstalled(size_or_dir.strip(), whisper_repo_id(size_or_dir))
    return local


def asr_workers(cpu_count: int | None = None) -> int:
    """Transcriptions to run at once on the CPU: half the cores, 1-4.

    The other half stays with the app, ffmpeg and mastering; a GPU server makes audio several
    times faster than one core transcribes it with tiny.en (real-time factor ~0.05), so one
    worker would fall behind a big batch.
    """
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return max(1, min(4, cores // 2))


def load_recogniser(
    size_or_dir: str, *, device: str | None = "cpu", cpu_threads: int = 1, workers: int = 1
) -> WhisperRecogniser:
    """Load a faster-whisper size (``tiny.en``, ``small``; from the HF cache) or a model directory.

    Raises:
        TranscriberNotInstalled: a size whose weights are not downloaded.
        VoiceError: the weights do not load.
    """
    from faster_whisper import WhisperModel

    from omni_web.errors import VoiceError
    from omni_web.voices.transcribe import choose_device

    folder = model_folder(size_or_dir)
    device_name, compute_type = choose_device(device)
    try:
        # num_workers lets that many threads transcribe at once (one CTranslate2 replica each).
        model = WhisperModel(
            str(folder),
            device=device_name,
            compute_type=compute_type,
            cpu_threads=cpu_threads,
            num_workers=max(1, workers),
        )
    except (RuntimeError, ValueError, OSError) as exc:
        raise VoiceError(
            f"The QA speech-recognition model '{size_or_dir}' at {folder} did not load on {device_name} "
            f"({exc}). Pick another model in Settings, or set the QA level to basic."
        ) from exc
    return WhisperRecogniser(name=size_or_dir, model=model)


class AsrPool:
    """One worker thread that owns the recogniser and transcribes takes in order of arrival."""

    def __init__(self, load: Callable[[], Recogniser], *, workers: int = 1) -> None:
        self._load = load
        self._recogniser: Recogniser | None = None
        self._load_error: Exception | None = None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="omni-qa-asr")
        self.busy_s = 0.0  # time spent transcribing, for the bench and the progress line
        self.heard_audio_s = 0.0  # seconds of audio transcribed, for the bench's throughput
        self._pending = 0

    @property
    def pending(self) -> int:
        """Takes submitted and not yet transcribed (QA's backlog behind the server)."""
        with self._lock:
            return self._pending

    def recogniser(self) -> Recogniser:
        """The loaded model (loads it on first use; re-raises a load failure every time)."""
        with self._lock:
            if self._recogniser is None and self._load_error is None:
                try:
                    self._recogniser = self._load()
                except RECOGNITION_ERRORS as exc:  # reported on every take, never kills a render
                    _log.warning("QA speech recognition is unavailable: %s", exc)
                    self._load_error = exc
                except Exception as exc:
                    _log.exception("Loading the QA speech recogniser failed on a bug")
                    self._load_error = exc
            if self._load_error is not None:
                raise self._load_error
            assert self._recogniser is not None
            return self._recogniser

    def submit(self, wav: bytes, language: str | None) -> Future[str]:
        """Transcribe on the pool's thread."""
        return self._queued(wav, lambda recogniser: recogniser.transcribe(wav, language))

    def _queued(self, wav: bytes, work: Callable[[Recogniser], _T]) -> Future[_T]:
        with self._lock:
            self._pending += 1
        try:
            future = self._pool.submit(self._timed, work, _wav_seconds(wav))
        except RuntimeError:
            with self._lock:
                self._pending -= 1
            raise
        return future

    def submit_words(self, wav: bytes, language: str | None) -> Future[Heard]:
        """Transcribe with each word's times (``words`` is None when the model cannot time them)."""

        def hear(recogniser: Recogniser) -> Heard:
            if isinstance(recogniser, WordTimesRecogniser):
                return recogniser.transcribe_words(wav, language)
            return Heard(recogniser.transcribe(wav, language))

        return self._queued(wav, hear)

    def _timed(self, work: Callable[[Recogniser], _T], audio_s: float) -> _T:
        import time

        started = time.perf_counter()
        try:
            recogniser = self.recogniser()
            started = time.perf_counter()
            return work(recogniser)
        finally:
            with self._lock:
                self._pending -= 1
                self.busy_s += time.perf_counter() - started
                self.heard_audio_s += audio_s

    def close(self) -> None:
        """Stop the worker (queued takes are dropped; the job is over)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
