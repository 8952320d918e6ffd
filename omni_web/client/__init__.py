"""The httpx client for one sgl-omni endpoint: health, models, voices, speech.

Public surface (re-exported here): :class:`SpeechClient`, its records (:class:`HealthStatus`,
:class:`VoiceCatalog`, :class:`UploadedVoice`, :class:`SpeechResult`), and the URL rule
:func:`is_loopback_url`.
"""

from __future__ import annotations

from omni_web.client.http import SpeechClient, is_loopback_url, normalize_base_url
from omni_web.client.records import HealthStatus, SpeechResult, UploadedVoice, VoiceCatalog

__all__ = [
    "HealthStatus",
    "SpeechClient",
    "SpeechResult",
    "UploadedVoice",
    "VoiceCatalog",
    "is_loopback_url",
    "normalize_base_url",
]
