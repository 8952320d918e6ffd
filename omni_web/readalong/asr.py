"""Word timestamps of a chunk's audio from faster-whisper, cached by the audio's hash.

The model loads once per job, lazily, and transcribes one chunk at a time (the read-along pass runs
in its own background thread, beside rendering). Results are cached per audio file content, so a
chapter rebuilt after a restart, or the same chunk in another chapter, is not transcribed again;
a regenerated chunk has new audio and so a new entry. When the QA pass already heard a chunk with
word times (:class:`QaWords`), those are used and the chunk is not transcribed again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from omni_web.files import file_sha256, write_atomic
from omni_web.qa.asr import WordTimesRecogniser, load_recogniser, model_folder
from omni_web.qa.records import QaStore
from omni_web.readalong.timing import AsrWord

__all__ = ["QaWords", "WhisperWords", "WordCache", "WordRecogniser", "load_word_recogniser"]

_log = logging.getLogger(__name__)


class WordRecogniser(Protocol):
    """What the read-along pass needs of a recogniser: words with times for one audio file."""

    name: str

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord]:
        """The words heard in ``audio_path`` with start/end seconds from the file's start."""
        ...  # pragma: no cover


class WhisperWords:
    """faster-whisper with word timestamps; the model is loaded on first use.

    It hears a chunk exactly as the QA pass does when the job makes a read-along book
    (:meth:`omni_web.qa.WhisperRecogniser.transcribe_words`), so words reused from QA records
    and words heard here are the same kind.
    """

    def __init__(self, name: str, load: Callable[[], WordTimesRecogniser]) -> None:
        self.name = name
        self._load = load
        self._recogniser: WordTimesRecogniser | None = None
        self._lock = threading.Lock()

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord]:
        with self._lock:
            if self._recogniser is None:
                self._recogniser = self._load()
            heard = self._recogniser.transcribe_words(Path(audio_path).read_bytes(), language)
        return [AsrWord(text, start, end) for text, start, end in heard.words or ()]


def load_word_recogniser(
    size_or_dir: str, *, device: str | None = "cpu", cpu_threads: int = 1
) -> WhisperWords:
    """A recogniser for a faster-whisper size (from the HF cache) or a model folder, loaded lazily.

    Raises:
        TranscriberNotInstalled: a size whose weights are not downloaded (raised at once, so the
            caller can fall back to estimated times and say why).
    """
    folder = model_folder(size_or_dir)
    return WhisperWords(
        size_or_dir, lambda: load_recogniser(str(folder), device=device, cpu_threads=cpu_threads)
    )


class WordCache:
    """ASR words per chunk audio content and model, as small JSON files in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _file(self, audio_path: Path, model: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in ".-" else "_" for ch in Path(model).name or model)
        return self.folder / f"{file_sha256(audio_path)}.{safe}.words.json"

    def get(self, audio_path: Path, model: str) -> list[AsrWord] | None:
        """Cached words, or None."""
        path = self._file(audio_path, model)
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            return [AsrWord(str(r[0]), float(r[1]), float(r[2])) for r in rows]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, IndexError) as exc:
            _log.warning("Ignoring the unreadable word cache %s (%s)", path, exc)
            return None

    def put(self, audio_path: Path, model: str, words: list[AsrWord]) -> None:
        """Store words (a failed write only costs a transcription next time)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        rows = [[w.text, round(w.start_s, 3), round(w.end_s, 3)] for w in words]
        try:
            write_atomic(self._file(audio_path, model), json.dumps(rows, ensure_ascii=False))
        except OSError as exc:
            _log.warning("Could not cache ASR words for %s (%s)", audio_path, exc)


class QaWords:
    """Word times the QA pass kept for a chunk's chosen take, so the audio is not heard twice.

    QA writes ``<key>.qa.json`` beside ``<key>.wav`` in the chunk cache; with read-along on, the
    chosen take carries its words and the SHA-256 of its audio. Words are used only while the
    chunk file is still that audio (a chunk replaced by a run with QA off, or regenerated, must
    not get another take's words); otherwise None, and the read-along pass transcribes itself.
    """

    name = "qa"

    def __init__(self) -> None:
        self.reused = 0  # chunks whose words came from QA (for the pass's note)

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord] | None:
        audio_path = Path(audio_path)
        record = QaStore(audio_path.parent).load(audio_path.stem)
        take = record.chosen_take if record is not None else None
        if take is None or take.words is None or not take.audio_sha256:
            return None
        try:
            if file_sha256(audio_path) != take.audio_sha256:
                return None
        except OSError:
            return None
        self.reused += 1
        return [AsrWord(text, start, end) for text, start, end in take.words]
