"""The reference-clip library in ``<data root>/voices/``.

Each voice is two files: ``<name>.wav`` (mono 16-bit, cleaned by :mod:`omni_web.voices.clip`)
and, when there is a transcript, ``<name>.txt`` beside it. Nothing else is stored, so a user can
drop a WAV into the folder by hand and it lists. Names follow :mod:`omni_web.voices.names` and
are unique case-insensitively, like the server's upload names; nothing is replaced unless the
caller passes ``overwrite=True``.
"""

from __future__ import annotations

import logging
import os
import wave
from dataclasses import dataclass, replace
from pathlib import Path

from omni_web.backend.disk import format_bytes
from omni_web.errors import OmniWebError, VoiceError
from omni_web.files import atomic_path, file_sha256, write_atomic, write_error
from omni_web.paths import DataPaths
from omni_web.voices.clip import MAX_SPEECH_S, PreparedClip, prepare_clip, probe_clip
from omni_web.voices.names import name_from_path, validate_name

__all__ = ["Voice", "VoiceLibrary", "file_sha256"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Voice:
    """One library voice: its clip, its transcript (None when there is none) and clip facts.

    ``notes`` says what cleaning did; only the record :meth:`VoiceLibrary.add` returns has them.
    """

    name: str
    wav_path: Path
    transcript: str | None
    duration_s: float
    sample_rate: int
    size_bytes: int
    content_sha256: str
    notes: tuple[str, ...] = ()

    @property
    def transcript_path(self) -> Path:
        """Where the transcript lives (``<name>.txt`` beside the clip), whether or not it exists."""
        return self.wav_path.with_suffix(".txt")

    @property
    def has_transcript(self) -> bool:
        """True when a non-empty transcript is stored."""
        return bool(self.transcript)

    @property
    def duration_str(self) -> str:
        """Length for display, e.g. ``"12.4 s"``."""
        return f"{self.duration_s:.1f} s"

    @property
    def size_str(self) -> str:
        """Size for display, e.g. ``"1.2 MB"`` (decimal units, as the Models tab shows)."""
        return format_bytes(self.size_bytes)

    @property
    def label(self) -> str:
        """Menu text, e.g. ``"narrator (12.4 s)"`` or ``"narrator (12.4 s, no transcript)"``."""
        extra = "" if self.has_transcript else ", no transcript"
        return f"{self.name} ({self.duration_str}{extra})"


class VoiceLibrary:
    """Add, list, rename and delete the clips in ``paths.voices_dir``."""

    def __init__(self, paths: DataPaths) -> None:
        self.paths = paths
        self.directory = paths.voices_dir

    def __repr__(self) -> str:
        return f"VoiceLibrary({str(self.directory)!r})"

    # --- reading --------------------------------------------------------------------------------

    def list(self) -> list[Voice]:
        """Every readable voice, sorted by name (case-insensitive).

        WAV files whose name is not a valid voice name, or that cannot be read, are skipped
        and logged: one bad file never hides the rest.
        """
        if not self.directory.is_dir():
            return []
        voices = []
        for wav_path in self.directory.glob("*.wav"):
            if wav_path.name.startswith("."):
                continue  # our own partial writes
            try:
                validate_name(wav_path.stem)
                voices.append(_read_voice(wav_path))
            except OmniWebError as exc:
                _log.warning("Skipping %s in the voice library: %s", wav_path.name, exc)
        return sorted(voices, key=lambda voice: voice.name.casefold())

    def names(self) -> list[str]:
        """The names of :meth:`list`."""
        return [voice.name for voice in self.list()]

    def find(self, name: str) -> Voice | None:
        """The voice called ``name`` (case-insensitive), or None (also for a name no voice can have)."""
        try:
            valid = validate_name(name)
        except VoiceError:
            return None  # no path is ever built from an invalid name
        path = self._existing_path(valid)
        return None if path is None else _read_voice(path)

    def get(self, name: str) -> Voice:
        """The voice called ``name``.

        Raises:
            VoiceError: the name breaks the name rule (the message says how), or no voice has it
                (the message names the voices there are).
        """
        path = self._existing_path(validate_name(name))
        voice = None if path is None else _read_voice(path)
        if voice is None:
            known = ", ".join(self.names()) or "none yet"
            raise VoiceError(
                f"There is no voice called '{name.strip()}' in the library (voices: {known}). "
                "Add it first (CLI: python -m omni_web voices add FILE --name NAME)."
            )
        return voice

    # --- changing -------------------------------------------------------------------------------

    def add(
        self,
        source: Path,
        *,
        name: str | None = None,
        transcript: str | None = None,
        overwrite: bool = False,
    ) -> Voice:
        """Clean ``source`` and store it as ``<name>.wav`` (and ``<name>.txt`` for a transcript).

        Args:
            source: a wav, mp3, flac, m4a, ogg or webm recording.
            name: the voice name; by default the source's file name, sanitised. An explicit name
                must already be valid (it is refused, with a suggestion, rather than changed).
            transcript: what the clip says; empty means none.
            overwrite: replace a voice of the same name (compared case-insensitively).

        Raises:
            VoiceError: invalid or taken name, or a clip that :func:`prepare_clip` refuses;
                also a clip cut to the 30 s limit when a transcript was typed for all of it.
        """
        source = Path(source)
        final = validate_name(name) if name is not None else name_from_path(source)
        existing = self._existing_path(final)
        if existing is not None and not overwrite:
            raise self._taken(existing.stem)
        text = _clean_text(transcript)
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / f"{final}.wav"
        with atomic_path(target, suffix=".wav") as staged:
            clip = prepare_clip(source, staged)
            if clip.was_cut and text:
                raise _cut_with_transcript(clip)
        if existing is not None and not _same_file(existing, target):
            self._remove_files(existing)  # the old spelling of the same name
        self._write_transcript(target, text)
        return replace(_read_voice(target), notes=clip.notes)

    def set_transcript(self, name: str, text: str | None) -> Voice:
        """Store (or, for empty text, remove) the transcript of voice ``name``."""
        voice = self.get(name)
        self._write_transcript(voice.wav_path, _clean_text(text))
        return _read_voice(voice.wav_path)

    def rename(self, old: str, new: str, *, overwrite: bool = False) -> Voice:
        """Rename voice ``old`` to ``new`` (clip and transcript); refuse to replace unless asked."""
        voice = self.get(old)
        target_name = validate_name(new)
        if target_name == voice.name:
            return voice
        clash = self._existing_path(target_name)
        if clash is not None and not _same_file(clash, voice.wav_path):
            if not overwrite:
                raise self._taken(clash.stem)
            self._remove_files(clash)
        target = self.directory / f"{target_name}.wav"
        txt = voice.transcript_path
        try:
            os.replace(voice.wav_path, target)
            if txt.exists():
                os.replace(txt, target.with_suffix(".txt"))
        except OSError as exc:
            why = exc.strerror or exc
            raise VoiceError(f"Could not rename '{voice.name}' to '{target_name}': {why}.") from exc
        return _read_voice(target)

    def delete(self, name: str) -> None:
        """Remove voice ``name`` (clip and transcript); raise :class:`VoiceError` if absent."""
        self._remove_files(self.get(name).wav_path)

    # --- helpers --------------------------------------------------------------------------------

    def _existing_path(self, name: str) -> Path | None:
        """The clip whose name equals ``name`` case-insensitively (exact spelling first)."""
        exact = self.directory / f"{name}.wav"
        if exact.is_file():
            return exact
        if not self.directory.is_dir():
            return None
        wanted = name.casefold()
        for path in self.directory.glob("*.wav"):
            if path.stem.casefold() == wanted and not path.name.startswith("."):
                return path
        return None

    def _taken(self, existing: str) -> VoiceError:
        return VoiceError(
            f"A voice called '{existing}' already exists. Choose another name, or replace it "
            "(CLI: --overwrite)."
        )

    def _write_transcript(self, wav_path: Path, text: str | None) -> None:
        txt = wav_path.with_suffix(".txt")
        if not text:
            txt.unlink(missing_ok=True)
            return
        try:
            write_atomic(txt, text + "\n")
        except OSError as exc:
            raise write_error(
                exc,
                full=f"The disk is full: could not write {txt}. Free some space and retry.",
                other=lambda why: VoiceError(f"Could not write the transcript {txt}: {why}."),
            ) from exc

    @staticmethod
    def _remove_files(wav_path: Path) -> None:
        wav_path.with_suffix(".txt").unlink(missing_ok=True)
        wav_path.unlink(missing_ok=True)


def _same_file(a: Path, b: Path) -> bool:
    """True when both paths name one file (also on case-insensitive file systems)."""
    try:
        return a.samefile(b)
    except OSError:
        return False


def _clean_text(text: str | None) -> str | None:
    if text is None:
        return None
    joined = " ".join(text.split())
    return joined or None


def _cut_with_transcript(clip: PreparedClip) -> VoiceError:
    total = clip.duration_s + clip.cut_s
    return VoiceError(
        f"The clip holds {total:.1f} s of speech, over the {MAX_SPEECH_S:.0f} s limit, so it would be "
        f"cut at a pause to {clip.duration_s:.1f} s and the transcript you typed would no longer "
        "match it. Add it without a transcript (it will be cut and can be transcribed), or shorten "
        "the recording and its transcript yourself."
    )


def _read_voice(wav_path: Path) -> Voice:
    """Build the record for one clip from its header (ffprobe for WAVs ``wave`` cannot read)."""
    try:
        with wave.open(str(wav_path), "rb") as wav:
            rate, frames = wav.getframerate(), wav.getnframes()
        duration = frames / rate if rate else 0.0
    except (wave.Error, EOFError):
        info = probe_clip(wav_path)  # e.g. a float WAV dropped in by hand
        rate, duration = info.sample_rate, info.duration_s or 0.0
    except OSError as exc:
        raise VoiceError(f"Cannot read {wav_path}: {exc.strerror or exc}.") from exc
    txt = wav_path.with_suffix(".txt")
    try:
        transcript = _clean_text(txt.read_text(encoding="utf-8")) if txt.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise VoiceError(f"Cannot read the transcript {txt}: {exc}.") from exc
    return Voice(
        name=wav_path.stem,
        wav_path=wav_path,
        transcript=transcript,
        duration_s=duration,
        sample_rate=rate,
        size_bytes=wav_path.stat().st_size,
        content_sha256=file_sha256(wav_path),
    )
