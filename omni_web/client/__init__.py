"""The httpx client for one sgl-omni endpoint: health, models, voices, speech.

Modules: ``requests`` (voice choices and the pure speech-payload builder), ``errors`` (the one
table of server texts the client recognises, and error-body parsing), ``records`` (frozen
results), ``http`` (:class:`SpeechClient`). Everything public is re-exported here.
"""

from __future__ import annotations

from omni_web.client.errors import KVCapacityReport, parse_kv_capacity
from omni_web.client.http import SpeechClient
from omni_web.client.records import HealthStatus, SpeechResult, UploadedVoice, VoiceCatalog
from omni_web.client.requests import (
    MAX_REFERENCE_AUDIO_BYTES,
    SpeechRequest,
    VoiceChoice,
    VoiceKind,
    build_speech_payload,
    check_voice_choice,
)
from omni_web.client.urls import is_loopback_url, normalize_base_url

__all__ = [
    "MAX_REFERENCE_AUDIO_BYTES",
    "HealthStatus",
    "KVCapacityReport",
    "SpeechClient",
    "SpeechRequest",
    "SpeechResult",
    "UploadedVoice",
    "VoiceCatalog",
    "VoiceChoice",
    "VoiceKind",
    "build_speech_payload",
    "check_voice_choice",
    "is_loopback_url",
    "normalize_base_url",
    "parse_kv_capacity",
]
