"""Uploaded voices for the fake ``sgl-omni`` (API doc 2.8), plus the multipart parser they need.

Voices live in memory. When ``SPEAKER_SAMPLES_DIR`` is set they are also written there, one
``<name>.json`` (metadata) and one ``<name>.audio`` (the uploaded bytes) per voice, and restored
at start, so a restarted fake keeps them the way the real server keeps its safetensors files. The
real server's default directory (``~/.cache/sglang-omni/speakers``) is never touched.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import asdict, dataclass
from email.message import Message
from pathlib import Path

from tests.fakes.fake_sgl_omni_audio import probe_audio
from tests.fakes.fake_sgl_omni_errors import bad_request

__all__ = [
    "MAX_VOICE_UPLOAD_BODY_BYTES",
    "MAX_VOICE_UPLOAD_BYTES",
    "FormField",
    "UploadedVoice",
    "VoiceStore",
    "normalize_voice_name",
    "parse_multipart",
]

MAX_VOICE_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_VOICE_UPLOAD_BODY_BYTES = MAX_VOICE_UPLOAD_BYTES + 64 * 1024
_NAME_PATTERN = re.compile(r"^(?=.*[A-Za-z0-9])[A-Za-z0-9_.-]+$")
_ACCEPTED_MIME = frozenset(
    {
        "audio/aac",
        "audio/flac",
        "audio/mp4",
        "audio/mpeg",
        "audio/ogg",
        "audio/wav",
        "audio/webm",
        "audio/x-wav",
        "video/mp4",
        "video/webm",
    }
)
_EXTENSION_MIME = {
    ".aac": "audio/aac",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".mp3": "audio/mpeg",
    ".mp4": "audio/mp4",
    ".ogg": "audio/ogg",
    ".wav": "audio/wav",
    ".webm": "audio/webm",
}
_CACHE_MAX_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FormField:
    """One multipart part: its bytes, and the filename/content type when it is a file."""

    value: bytes
    filename: str | None = None
    content_type: str | None = None

    @property
    def text(self) -> str:
        """The part decoded as UTF-8 (form text fields)."""
        return self.value.decode("utf-8", errors="replace")


def parse_multipart(content_type: str, body: bytes) -> dict[str, FormField] | None:
    """Split a ``multipart/form-data`` body into named fields; None when it is not multipart."""
    header = Message()
    header["content-type"] = content_type
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) or not boundary:
        return None
    fields: dict[str, FormField] = {}
    for section in body.split(b"--" + boundary.encode("latin-1"))[1:]:
        if section.startswith(b"--"):
            break
        section = section.removeprefix(b"\r\n")
        raw_headers, _, data = section.partition(b"\r\n\r\n")
        part = Message()
        for line in raw_headers.decode("utf-8", errors="replace").split("\r\n"):
            key, sep, value = line.partition(":")
            if sep:
                part[key.strip()] = value.strip()
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        filename = part.get_param("filename", header="content-disposition")
        fields.setdefault(
            name,
            FormField(
                value=data.removesuffix(b"\r\n"),
                filename=filename if isinstance(filename, str) else None,
                content_type=part.get("content-type"),
            ),
        )
    return fields


def normalize_voice_name(name: str) -> str:
    """The lower-cased key of a voice name; 400 when the name is empty or has odd characters."""
    value = name.strip()
    if not value:
        raise bad_request("name must be non-empty", param="name")
    if not _NAME_PATTERN.fullmatch(value):
        raise bad_request("name must contain only letters, numbers, '.', '_', and '-'", param="name")
    return value.lower()


def _upload_mime_type(filename: str | None, content_type: str | None) -> str:
    declared = (content_type or "").split(";", 1)[0].strip().lower()
    inferred = _EXTENSION_MIME.get(Path(filename or "").suffix.lower())
    mime = inferred if declared in {"", "application/octet-stream"} else declared
    if mime not in _ACCEPTED_MIME:
        accepted = ", ".join(sorted(_ACCEPTED_MIME))
        raise bad_request(f"audio_sample MIME type must be one of: {accepted}", param="audio_sample")
    return mime


@dataclass(frozen=True, slots=True)
class UploadedVoice:
    """One stored voice (metadata plus the uploaded bytes)."""

    name: str
    normalized_name: str
    consent: str
    created_at: int
    file_size: int
    mime_type: str
    original_filename: str
    duration_s: float
    ref_text: str | None = None
    speaker_description: str | None = None

    def response(self) -> dict[str, object]:
        """The voice as GET/POST /v1/audio/voices render it (optional keys only when set)."""
        body: dict[str, object] = {
            "name": self.name,
            "consent": self.consent,
            "created_at": self.created_at,
            "file_size": self.file_size,
            "mime_type": self.mime_type,
        }
        if self.ref_text is not None:
            body["ref_text"] = self.ref_text
        if self.speaker_description is not None:
            body["speaker_description"] = self.speaker_description
        return body


class VoiceStore:
    """Uploaded voices by lower-cased name, optionally mirrored to a directory."""

    def __init__(self, root: Path | None, *, max_uploaded: int = 1000) -> None:
        self.root = root
        self.max_uploaded = max_uploaded
        self.lock = threading.Lock()
        self.voices: dict[str, UploadedVoice] = {}
        self.audio: dict[str, bytes] = {}
        self.last_timestamp = 0
        self.hits = 0
        self.misses = 0
        self.invalidations = 0
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
            self._restore(root)

    def _restore(self, root: Path) -> None:
        for meta_path in sorted(root.glob("*.json")):
            try:
                voice = UploadedVoice(**json.loads(meta_path.read_text(encoding="utf-8")))
                audio = meta_path.with_suffix(".audio").read_bytes()
            except (OSError, ValueError, TypeError):
                continue
            self.voices[voice.normalized_name] = voice
            self.audio[voice.normalized_name] = audio
            self.last_timestamp = max(self.last_timestamp, voice.created_at)

    def list_response(self, custom_speakers: tuple[str, ...] | None) -> dict[str, object]:
        """GET /v1/audio/voices: ``voices``, ``uploaded_voices`` and ``cache_stats``."""
        with self.lock:
            uploaded = sorted(self.voices.values(), key=lambda voice: voice.name.lower())
            if custom_speakers is not None:
                names = {speaker.casefold(): speaker for speaker in custom_speakers}
                names["default"] = "default"
                voices = sorted(names.values(), key=str.casefold)
            else:
                voices = sorted({"default"} | {voice.name for voice in uploaded}, key=str.lower)
            cached = sum(len(self.audio[voice.normalized_name]) for voice in uploaded)
            return {
                "voices": voices,
                "uploaded_voices": [voice.response() for voice in uploaded],
                "cache_stats": {
                    "entries": len(uploaded),
                    "memory_bytes": cached,
                    "max_bytes": _CACHE_MAX_BYTES,
                    "hit_count": self.hits,
                    "miss_count": self.misses,
                    "eviction_count": 0,
                    "delete_invalidation_counter": self.invalidations,
                },
            }

    def names(self) -> list[str]:
        """Uploaded voice names, sorted case-insensitively."""
        with self.lock:
            return sorted((voice.name for voice in self.voices.values()), key=str.lower)

    def resolve(self, name: str) -> tuple[UploadedVoice, bytes] | None:
        """The stored voice and its audio, or None (counts cache hits and misses)."""
        key = normalize_voice_name(name)
        with self.lock:
            voice = self.voices.get(key)
            if voice is None:
                self.misses += 1
                return None
            self.hits += 1
            return voice, self.audio[key]

    def upload(
        self,
        *,
        name: str,
        consent: str,
        audio: bytes,
        filename: str | None,
        content_type: str | None,
        ref_text: str | None,
        speaker_description: str | None,
    ) -> dict[str, object]:
        """Validate and store one voice in the real server's order; returns the POST response body."""
        key = normalize_voice_name(name)
        if key == "default":
            raise bad_request("name is reserved for a preset voice", param="name")
        consent = consent.strip()
        if not consent:
            raise bad_request("consent must be non-empty", param="consent")
        ref_text = (ref_text or "").strip() or None
        speaker_description = (speaker_description or "").strip() or None
        if not audio:
            raise bad_request("audio_sample must not be empty", param="audio_sample")
        mime = _upload_mime_type(filename, content_type)
        info = probe_audio(audio)
        if info is None:
            raise bad_request(
                "audio_sample could not be decoded as a supported audio format", param="audio_sample"
            )
        if info.duration_s < 1.0:
            raise bad_request("audio_sample must be at least 1.0s", param="audio_sample")
        if info.duration_s > 30.0:
            raise bad_request("audio_sample must be at most 30.0s", param="audio_sample")
        if info.silent:
            raise bad_request(
                "audio_sample must contain non-silent speech reference audio", param="audio_sample"
            )
        with self.lock:
            replaced = key in self.voices
            if not replaced and len(self.voices) >= self.max_uploaded:
                raise bad_request(f"Uploaded voice limit reached ({self.max_uploaded})", param="name")
            self.last_timestamp = max(int(time.time()), self.last_timestamp + 1)
            voice = UploadedVoice(
                name=name.strip(),
                normalized_name=key,
                consent=consent,
                created_at=self.last_timestamp,
                file_size=len(audio),
                mime_type=mime,
                original_filename=filename or "",
                duration_s=info.duration_s,
                ref_text=ref_text,
                speaker_description=speaker_description,
            )
            self._save(voice, audio)
            self.voices[key] = voice
            self.audio[key] = audio
        body = voice.response()
        if replaced:
            body["warning"] = f"Voice '{voice.name}' overwritten"
        return body

    def _save(self, voice: UploadedVoice, audio: bytes) -> None:
        if self.root is None:
            return
        (self.root / f"{voice.normalized_name}.audio").write_bytes(audio)
        (self.root / f"{voice.normalized_name}.json").write_text(json.dumps(asdict(voice)), encoding="utf-8")

    def delete(self, name: str) -> bool:
        """Forget a voice (and its files); False when there was none."""
        key = normalize_voice_name(name)
        with self.lock:
            if self.voices.pop(key, None) is None:
                return False
            self.audio.pop(key, None)
            self.invalidations += 1
            if self.root is not None:
                for suffix in (".json", ".audio"):
                    (self.root / f"{key}{suffix}").unlink(missing_ok=True)
        return True
