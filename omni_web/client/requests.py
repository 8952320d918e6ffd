"""Speech requests as data, and the pure translation into a ``POST /v1/audio/speech`` body.

Each voice mode is built exactly as sglang-omni 0.1.9 expects (field names from
``sglang_omni/serve/protocol.py`` ``CreateSpeechRequest``, read in sglang_omni/serve/speech_service.py):

- built-in speaker / Voxtral preset / uploaded voice: ``voice: <name>``;
- clone: ``ref_audio`` (a local path, or a ``data:audio/<t>;base64,...`` URL for a remote
  server) plus ``ref_text`` only when a transcript exists;
- voice design: ``task_type: "VoiceDesign"`` plus ``instructions``;
- default: no voice field (the server picks the model's default).

Everything model-specific comes from the catalog entry's data (``voice_mode``,
``accepts_sampling_fields``, ``accepts_seed``, ``requires_ref_text``,
``request_max_new_tokens``, ``supports_uploaded_voices``); there is no model-name check here.
"""

from __future__ import annotations

import base64
import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.delivery_cues import delivery_cue
from omni_web.errors import VoiceError

__all__ = [
    "MAX_REFERENCE_AUDIO_BYTES",
    "SpeechRequest",
    "VoiceChoice",
    "VoiceKind",
    "audio_mime_type",
    "build_speech_payload",
    "check_voice_choice",
    "reference_value",
]

# The server refuses a reference clip over 10 MiB, as a path or as a data URL
# (MAX_REFERENCE_AUDIO_BYTES in sglang_omni/serve/speech_limits.py).
MAX_REFERENCE_AUDIO_BYTES = 10 * 1024 * 1024

# Which voice kinds each mode accepts. Named voices (SPEAKER/PRESET) are interchangeable: both
# become `voice: <name>`; names are checked by SpeechClient.resolve_voice_name.
_KINDS_BY_MODE: dict[VoiceMode, frozenset[str]] = {
    VoiceMode.BUILTIN_SPEAKERS: frozenset({"default", "speaker", "preset"}),
    VoiceMode.PRESET_VOICES: frozenset({"default", "speaker", "preset"}),
    VoiceMode.CLONE_REQUIRED: frozenset({"clone", "uploaded"}),
    VoiceMode.DEFAULT_OR_CLONE: frozenset({"default", "clone", "uploaded"}),
    VoiceMode.INSTRUCTIONS: frozenset({"design"}),
}

_MODE_ADVICE: dict[VoiceMode, str] = {
    VoiceMode.BUILTIN_SPEAKERS: "it speaks with its built-in speakers; pick one of them",
    VoiceMode.PRESET_VOICES: "it speaks with its preset voices; pick one of them",
    VoiceMode.CLONE_REQUIRED: "it needs a reference clip (or a voice uploaded to the server)",
    VoiceMode.DEFAULT_OR_CLONE: "use its default voice, a reference clip, or a voice uploaded to the server",
    VoiceMode.INSTRUCTIONS: "it designs a voice from a text description; write one",
}

# Extension fallback when the header does not say (the server accepts any audio/* type).
_MIME_BY_SUFFIX = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".opus": "audio/ogg",
    ".m4a": "audio/mp4",
    ".mp4": "audio/mp4",
    ".aac": "audio/aac",
    ".webm": "audio/webm",
}


class VoiceKind(enum.StrEnum):
    """How a request picks its voice."""

    DEFAULT = "default"  # the model's own default voice
    SPEAKER = "speaker"  # a built-in checkpoint speaker (Qwen3-TTS CustomVoice)
    PRESET = "preset"  # a named preset the server does not list (Voxtral)
    CLONE = "clone"  # a reference clip sent with each request
    DESIGN = "design"  # a voice described in words (Qwen3-TTS VoiceDesign)
    UPLOADED = "uploaded"  # a voice stored on the server via POST /v1/audio/voices


@dataclass(frozen=True, slots=True)
class VoiceChoice:
    """The voice of a speech request. Build it with the class methods."""

    kind: VoiceKind
    name: str = ""
    reference: Path | None = None
    ref_text: str | None = None
    instructions: str | None = None
    # How the line is said ("whispered", …; omni_web.delivery_cues), None for plainly.
    delivery: str | None = None

    def __post_init__(self) -> None:
        if self.kind in (VoiceKind.SPEAKER, VoiceKind.PRESET, VoiceKind.UPLOADED) and not self.name.strip():
            raise VoiceError(f"A {self.kind.value} voice needs a name; pick one from the voice list.")
        if self.kind is VoiceKind.CLONE and self.reference is None:
            raise VoiceError("A cloned voice needs a reference clip; choose an audio file.")
        if self.kind is VoiceKind.DESIGN and not (self.instructions or "").strip():
            raise VoiceError(
                "Voice design needs a description of the voice, e.g. 'A warm, low female voice, speaking "
                "slowly.'"
            )

    @classmethod
    def default(cls) -> VoiceChoice:
        """The model's default voice."""
        return cls(VoiceKind.DEFAULT)

    @classmethod
    def speaker(cls, name: str) -> VoiceChoice:
        """A built-in checkpoint speaker, e.g. ``Vivian``."""
        return cls(VoiceKind.SPEAKER, name=name)

    @classmethod
    def preset(cls, name: str) -> VoiceChoice:
        """A Voxtral-style preset, e.g. ``casual_male``."""
        return cls(VoiceKind.PRESET, name=name)

    @classmethod
    def clone(cls, reference: Path | str, ref_text: str | None = None) -> VoiceChoice:
        """Clone the voice of ``reference``; ``ref_text`` is its transcript, if known."""
        return cls(VoiceKind.CLONE, reference=Path(reference), ref_text=ref_text)

    @classmethod
    def design(cls, instructions: str) -> VoiceChoice:
        """A voice described in words."""
        return cls(VoiceKind.DESIGN, instructions=instructions)

    @classmethod
    def uploaded(cls, name: str) -> VoiceChoice:
        """A voice uploaded to the server under ``name``."""
        return cls(VoiceKind.UPLOADED, name=name)

    @property
    def transcript(self) -> str | None:
        """``ref_text`` stripped, or None when there is no usable transcript."""
        text = (self.ref_text or "").strip()
        return text or None

    @property
    def label(self) -> str:
        """A short description for logs and the UI."""
        if self.kind is VoiceKind.CLONE and self.reference is not None:
            return f"clone of {self.reference.name}"
        if self.kind is VoiceKind.DESIGN:
            return "designed voice"
        if self.kind is VoiceKind.DEFAULT:
            return "default voice"
        return f"{self.kind.value} voice {self.name}"

    def with_name(self, name: str) -> VoiceChoice:
        """A copy with ``name`` replaced (the server's spelling after resolution)."""
        return VoiceChoice(self.kind, name, self.reference, self.ref_text, self.instructions, self.delivery)

    def with_delivery(self, delivery: str | None) -> VoiceChoice:
        """A copy that says its lines with ``delivery`` (None: plainly)."""
        return VoiceChoice(self.kind, self.name, self.reference, self.ref_text, self.instructions, delivery)


@dataclass(frozen=True, slots=True)
class SpeechRequest:
    """One speech request, independent of any model.

    ``max_new_tokens`` None means the catalog's ``request_max_new_tokens`` (or the server's
    default when the catalog has none).
    """

    text: str
    voice: VoiceChoice
    language: str | None = None
    max_new_tokens: int | None = None
    seed: int | None = None
    response_format: str = "wav"


def check_voice_choice(entry: CatalogEntry, voice: VoiceChoice) -> None:
    """Raise :class:`VoiceError` when ``entry``'s model cannot use this kind of voice."""
    allowed = _KINDS_BY_MODE[entry.voice_mode]
    if voice.kind.value not in allowed:
        raise VoiceError(
            f"{entry.label} cannot use a {voice.kind.value} voice: {_MODE_ADVICE[entry.voice_mode]}."
        )
    if voice.kind is VoiceKind.UPLOADED and not entry.supports_uploaded_voices:
        raise VoiceError(
            f"{entry.label} does not use voices uploaded to the server; send a reference clip instead."
        )
    if voice.kind is VoiceKind.CLONE and entry.requires_ref_text and voice.transcript is None:
        raise VoiceError(
            f"{entry.label} needs a transcript of the reference clip "
            f"'{voice.reference.name if voice.reference else ''}': type what the clip says, or let the "
            "app transcribe it, then try again."
        )


def build_speech_payload(
    entry: CatalogEntry, request: SpeechRequest, *, inline_reference: bool
) -> dict[str, Any]:
    """The JSON body of ``POST /v1/audio/speech`` for ``request`` on ``entry``'s model.

    Args:
        entry: the catalog entry of the model the server hosts.
        request: text, voice and options. Voice names are sent as given (resolve them first).
        inline_reference: True sends a clone's clip as a base64 data URL (remote server);
            False sends its absolute local path (a server on this machine).

    Raises:
        VoiceError: the model cannot use this voice, the clip is missing or over 10 MiB, or a
            transcript is required and missing.
    """
    check_voice_choice(entry, request.voice)
    payload: dict[str, Any] = {"input": request.text}
    voice = request.voice
    if voice.kind in (VoiceKind.SPEAKER, VoiceKind.PRESET, VoiceKind.UPLOADED):
        # An uploaded voice becomes task_type=Base + the stored clip on the server side.
        payload["voice"] = voice.name.strip()
    elif voice.kind is VoiceKind.CLONE:
        assert voice.reference is not None  # guaranteed by VoiceChoice
        payload["ref_audio"] = reference_value(voice.reference, inline=inline_reference)
        if voice.transcript is not None:
            payload["ref_text"] = voice.transcript
    elif voice.kind is VoiceKind.DESIGN:
        payload["task_type"] = "VoiceDesign"
        payload["instructions"] = (voice.instructions or "").strip()
    _add_delivery(entry, voice, payload)
    payload["response_format"] = request.response_format
    max_new_tokens = (
        request.max_new_tokens if request.max_new_tokens is not None else entry.request_max_new_tokens
    )
    if max_new_tokens is not None:
        payload["max_new_tokens"] = max_new_tokens
    # Voxtral answers HTTP 500 to language, seed, sampling fields, task_type, instructions and
    # references (validate_voxtral_speech_params, models/voxtral_tts/pipeline/stages.py);
    # response_format and model are not on its list.
    if entry.accepts_sampling_fields:
        if request.language:
            payload["language"] = request.language
        if request.seed is not None and entry.accepts_seed:
            payload["seed"] = request.seed
    return payload


def _add_delivery(entry: CatalogEntry, voice: VoiceChoice, payload: dict[str, Any]) -> None:
    """The line's delivery in the model's own control: instructions, or a cue before the text."""
    cue = delivery_cue(entry, voice.delivery)
    if cue.instructions:
        described = str(payload.get("instructions") or "").rstrip()
        if described and described[-1] not in ".!?":
            described += "."
        payload["instructions"] = f"{described} {cue.instructions}".strip()
    if cue.prefix:
        payload["input"] = cue.prefix + payload["input"]


def reference_value(path: Path, *, inline: bool) -> str:
    """``ref_audio`` for a clip: its absolute path, or a ``data:audio/<t>;base64,`` URL.

    Raises :class:`VoiceError` when the file is missing, empty, or over the server's 10 MiB limit.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise VoiceError(f"Reference clip not found: {path}. Choose another clip.") from None
    except OSError as exc:
        raise VoiceError(f"Cannot read reference clip {path}: {exc.strerror or exc}.") from exc
    if not path.is_file() or size == 0:
        raise VoiceError(f"Reference clip {path} is not an audio file (or is empty). Choose another clip.")
    if size > MAX_REFERENCE_AUDIO_BYTES:
        raise VoiceError(
            f"Reference clip {path.name} is {size / 2**20:.1f} MiB ({size} bytes); the server accepts at "
            f"most {MAX_REFERENCE_AUDIO_BYTES // 2**20} MiB ({MAX_REFERENCE_AUDIO_BYTES} bytes). Use a "
            "shorter clip (10-20 s is best) or re-encode it."
        )
    if not inline:
        return str(path.resolve())
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VoiceError(f"Cannot read reference clip {path}: {exc.strerror or exc}.") from exc
    return f"data:{audio_mime_type(path, data[:16])};base64,{base64.b64encode(data).decode('ascii')}"


def audio_mime_type(path: Path, head: bytes) -> str:
    """The audio MIME type of a clip, from its first bytes, else from its extension.

    Raises :class:`VoiceError` when neither says it is audio.
    """
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[:4] == b"fLaC":
        return "audio/flac"
    if head[:4] == b"OggS":
        return "audio/ogg"
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        # ADTS AAC also starts with 0xFFF; tell it from MP3 by its layer bits (00).
        if len(head) > 1 and head[1] & 0xF6 == 0xF0:
            return "audio/aac"
        return "audio/mpeg"
    if head[4:8] == b"ftyp":
        return "audio/mp4"
    if head[:4] == b"\x1aE\xdf\xa3":
        return "audio/webm"
    mime = _MIME_BY_SUFFIX.get(path.suffix.lower())
    if mime is None:
        raise VoiceError(
            f"Reference clip {path.name} is not a recognised audio file (WAV, MP3, FLAC, OGG, M4A, AAC, "
            "WebM). Convert it to WAV and try again."
        )
    return mime
