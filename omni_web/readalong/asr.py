"""Word timestamps of a chunk's audio from faster-whisper, cached by the audio's hash.

The model loads once per job, lazily, and transcribes one chunk at a time (the read-along pass runs
in its own background thread, beside rendering). Results are cached per audio file content, so a
chapter rebuilt after a restart, or the same chunk in another chapter, is not transcribed again;
a regenerated chunk has new audio and so a new entry.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from omni_web.files import file_sha256, write_atomic
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
    """faster-whisper with word timestamps; the model is loaded on first use."""

    def __init__(self, name: str, load: Callable[[], Any]) -> None:
        self.name = name
        self._load = load
        self._model: Any = None
        self._lock = threading.Lock()

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord]:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            model = self._model
            multilingual = getattr(getattr(model, "model", None), "is_multilingual", True)
            segments, _info = model.transcribe(
                str(audio_path),
                language=(language if multilingual else "en") or None,
                beam_size=1,
                word_timestamps=True,
                vad_filter=False,  # times must stay on the file's own clock
                condition_on_previous_text=False,
            )
            return [
                AsrWord(word.word.strip(), float(word.start), float(word.end))
                for segment in segments
                for word in (segment.words or ())
                if word.word.strip()
            ]


def load_word_recogniser(size_or_dir: str, *, device: str | None = "cpu", cpu_threads: int = 1) -> WhisperWords:
    """A recogniser for a faster-whisper size (from the HF cache) or a model folder, loaded lazily.

    Raises:
        TranscriberNotInstalled: a size whose weights are not downloaded (raised at once, so the
            caller can fall back to estimated times and say why).
    """
    folder = Path(size_or_dir).expanduser()
    if not (folder.is_dir() and (folder / "model.bin").is_file()):
        from omni_web.errors import TranscriberNotInstalled
        from omni_web.voices.transcribe import whisper_local_dir, whisper_repo_id

        local = whisper_local_dir(size_or_dir)
        if local is None:
            raise TranscriberNotInstalled(size_or_dir.strip(), whisper_repo_id(size_or_dir))
        folder = local

    def load() -> Any:
        from faster_whisper import WhisperModel

        from omni_web.voices.transcribe import choose_device

        device_name, compute_type = choose_device(device)
        return WhisperModel(str(folder), device=device_name, compute_type=compute_type, cpu_threads=cpu_threads)

    return WhisperWords(size_or_dir, load)


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
    """Word times the QA pass kept for a chunk's accepted take, so the audio is not heard twice.

    QA writes ``<key>.qa.json`` beside ``<key>.wav`` in the chunk cache; a take that was
    transcribed with word timestamps carries them as ``words: [[text, start, end], ...]``. Takes
    without them (QA off, basic level, or text-only transcripts) give None, and the read-along pass
    transcribes itself.
    """

    name = "qa"

    def words(self, audio_path: Path, language: str | None) -> list[AsrWord] | None:
        record = Path(audio_path).with_suffix(".qa.json")
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            take = next(t for t in data.get("takes") or () if t.get("number") == data.get("chosen"))
            rows = take.get("words")
            # A chunk file newer than its record was replaced without QA: the words are not its own.
            if not rows or Path(audio_path).stat().st_mtime > record.stat().st_mtime + 1.0:
                return None
            return [AsrWord(str(r[0]), float(r[1]), float(r[2])) for r in rows]
        except (OSError, ValueError, TypeError, IndexError, KeyError, StopIteration):
            return None
