"""Frozen records the speech client returns: health, voices, speech results."""

from __future__ import annotations

import datetime
import io
import wave
from dataclasses import dataclass, field
from typing import Any

from omni_web.backend.disk import format_bytes
from omni_web.errors import SpeechError

__all__ = [
    "HealthStatus",
    "SpeechResult",
    "UploadedVoice",
    "VoiceCatalog",
    "WavInfo",
    "read_wav_info",
]


@dataclass(frozen=True, slots=True)
class HealthStatus:
    """What ``GET /health`` said.

    ``status`` is the server's word: ``"healthy"`` (HTTP 200), ``"starting"`` (503 while the
    warmup runs), ``"unhealthy"`` (503), or ``"unknown"`` when the body carried none (a server
    that is not sglang-omni, for example).
    """

    status: str
    http_status: int
    stages: tuple[str, ...] = ()
    body: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def healthy(self) -> bool:
        """True only for 200 + ``"healthy"``: the server takes speech requests."""
        return self.http_status == 200 and self.status == "healthy"

    @property
    def starting(self) -> bool:
        """True while the server runs its warmup (503 ``"starting"``): keep polling."""
        return self.status == "starting"


@dataclass(frozen=True, slots=True)
class UploadedVoice:
    """A voice stored on the server (``POST /v1/audio/voices``), as the server describes it."""

    name: str
    consent: str = ""
    created_at: int = 0  # unix seconds
    file_size: int = 0  # bytes of the uploaded clip
    mime_type: str = ""
    ref_text: str | None = None
    speaker_description: str | None = None
    warning: str | None = None  # "Voice '<n>' overwritten" on a re-upload

    @property
    def created_str(self) -> str:
        """``2026-11-30 14:05`` in local time; ``-`` when the server gave no time."""
        if not self.created_at:
            return "-"
        return datetime.datetime.fromtimestamp(self.created_at).strftime("%Y-%m-%d %H:%M")

    @property
    def size_str(self) -> str:
        """The uploaded clip's size, e.g. ``"1.2 MB"``."""
        return format_bytes(self.file_size)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UploadedVoice:
        """Build from one ``uploaded_voices`` item or an upload response."""
        return cls(
            name=str(data.get("name", "")),
            consent=str(data.get("consent", "")),
            created_at=int(data.get("created_at") or 0),
            file_size=int(data.get("file_size") or 0),
            mime_type=str(data.get("mime_type", "")),
            ref_text=data.get("ref_text"),
            speaker_description=data.get("speaker_description"),
            warning=data.get("warning"),
        )


@dataclass(frozen=True, slots=True)
class VoiceCatalog:
    """``GET /v1/audio/voices``: every usable name, and the uploaded voices' details.

    ``voices`` holds ``default`` plus uploaded names, or a CustomVoice checkpoint's speakers.
    Voxtral's presets are never listed (``list_voices`` in sglang_omni/serve/openai_api.py
    lists ``DEFAULT_VOICE_PRESETS`` and uploads only).
    """

    voices: tuple[str, ...]
    uploaded: tuple[UploadedVoice, ...] = ()

    def match(self, name: str) -> str | None:
        """The server's spelling of ``name`` (case-insensitive, trimmed), or None."""
        wanted = name.strip().casefold()
        for candidate in (*self.voices, *(voice.name for voice in self.uploaded)):
            if candidate.casefold() == wanted:
                return candidate
        return None

    @property
    def uploaded_names(self) -> tuple[str, ...]:
        """Names of the uploaded voices."""
        return tuple(voice.name for voice in self.uploaded)


@dataclass(frozen=True, slots=True)
class WavInfo:
    """Format facts read from a WAV header."""

    sample_rate_hz: int
    channels: int
    sample_width_bytes: int
    frames: int

    @property
    def duration_s(self) -> float:
        """Length of the audio in seconds."""
        return self.frames / self.sample_rate_hz if self.sample_rate_hz else 0.0


def read_wav_info(audio: bytes) -> WavInfo:
    """Read the header of a WAV file held in memory; raise :class:`SpeechError` if unreadable."""
    try:
        with wave.open(io.BytesIO(audio), "rb") as wav:
            return WavInfo(
                sample_rate_hz=wav.getframerate(),
                channels=wav.getnchannels(),
                sample_width_bytes=wav.getsampwidth(),
                frames=wav.getnframes(),
            )
    except (wave.Error, EOFError) as exc:
        raise SpeechError(
            f"The server answered with audio that is not a readable WAV file ({exc}); "
            f"{len(audio)} bytes received. Check the server log for an encoder error."
        ) from exc


@dataclass(frozen=True, slots=True)
class SpeechResult:
    """One synthesized clip and the facts about it.

    ``sample_rate_hz``, ``channels`` and ``duration_s`` come from the WAV header (never from the
    catalog); they are None for other response formats.
    """

    audio: bytes = field(repr=False)
    content_type: str
    sample_rate_hz: int | None
    channels: int | None
    duration_s: float | None
    finish_reason: str | None
    request_id: str | None
    max_new_tokens_sent: int | None
    refitted: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def size_bytes(self) -> int:
        """Size of the audio body."""
        return len(self.audio)

    @property
    def truncated(self) -> bool:
        """True when the model stopped at its token budget (``X-Finish-Reason: length``)."""
        return self.finish_reason == "length"
