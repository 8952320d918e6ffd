"""The voice a user asked for by name, clip or description, checked against what the model can do.

The ``convert`` command's ``--voice``/``--clone``/``--instructions`` flags and a cast's
``--dialogue-*`` flags both come here, so one set of rules decides which voice a request carries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.client import VoiceChoice
from omni_web.errors import ModelNotInstalled, VoiceError
from omni_web.files import file_sha256
from omni_web.paths import DataPaths
from omni_web.voices.clip import prepare_clip
from omni_web.voices.library import VoiceLibrary
from omni_web.voices.reference import reference_cache_dir
from omni_web.voices.transcribe import transcribe_clip, transcript_cache_dir

__all__ = ["VoiceAsk", "voice_for"]


@dataclass(frozen=True, slots=True)
class VoiceAsk:
    """What the user asked for; at most one of ``voice``, ``clone`` and ``instructions`` is set."""

    voice: str | None = None  # built-in speaker, preset, library voice or uploaded voice
    clone: str | None = None  # a clip file, or a library voice name
    instructions: str | None = None  # a voice design description
    transcription: str | None = None  # what the clone clip says (else transcribed)


def voice_for(
    ask: VoiceAsk,
    entry: CatalogEntry,
    paths: DataPaths,
    *,
    transcription_model: str,
    warn: Callable[[str], None],
) -> VoiceChoice:
    """The :class:`VoiceChoice` for ``ask`` on ``entry``'s model.

    Raises:
        VoiceError: the model needs a clip or a description that ``ask`` lacks, or the clip is
            neither a file nor a library voice.
    """
    library = VoiceLibrary(paths)
    if ask.instructions:
        return VoiceChoice.design(ask.instructions)
    if ask.clone:
        return _clone_choice(ask.clone, ask.transcription, library, paths, transcription_model, warn)
    if ask.voice:
        if entry.voice_mode in (VoiceMode.BUILTIN_SPEAKERS, VoiceMode.PRESET_VOICES):
            # The catalog's spelling names the files ("... (Vivian).m4b" for --voice vivian); the
            # server's own spelling is matched again before any request.
            known = {name.casefold(): name for name in entry.preset_voices}
            return VoiceChoice.speaker(known.get(ask.voice.casefold(), ask.voice))
        if entry.can_clone and library.find(ask.voice) is not None:
            return _clone_choice(ask.voice, ask.transcription, library, paths, transcription_model, warn)
        return VoiceChoice.uploaded(ask.voice)
    if entry.voice_mode is VoiceMode.CLONE_REQUIRED:
        raise VoiceError(
            f"{entry.label} needs a reference clip: add --clone CLIP (or --voice <library voice>)."
        )
    if entry.voice_mode is VoiceMode.INSTRUCTIONS:
        raise VoiceError(f"{entry.label} designs a voice from a description: add --instructions TEXT.")
    return VoiceChoice.default()


def _clone_choice(
    clip: str,
    transcription: str | None,
    library: VoiceLibrary,
    paths: DataPaths,
    transcription_model: str,
    warn: Callable[[str], None],
) -> VoiceChoice:
    voice = library.find(clip)
    if voice is not None:
        return VoiceChoice.clone(voice.wav_path, transcription or voice.transcript)
    source = Path(clip).expanduser()
    if not source.is_file():
        raise VoiceError(
            f"No clip at {source} and no library voice named '{clip}'. See: python -m omni_web voices list"
        )
    # Cleaned like a library clip (decoded, mono, silence trimmed, at most 30 s); a file that is
    # not speech-length audio is refused here, before any server starts.
    path = reference_cache_dir(paths) / f"clone-{file_sha256(source)[:24]}.wav"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        prepare_clip(source, path)
    if transcription is None:
        try:
            transcription = transcribe_clip(
                path, model_size=transcription_model, cache_dir=transcript_cache_dir(paths)
            )
        except (ModelNotInstalled, VoiceError) as exc:
            warn(f"{exc} Cloning without a transcript; quality may drop.")
    return VoiceChoice.clone(path.resolve(), transcription)
