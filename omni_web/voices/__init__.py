"""Reference voices: the clip library, transcripts, server-stored voices, menus and previews.

Modules:

- :mod:`~omni_web.voices.clip`: decode, validate, mono, trim silence, limit to 30 s.
- :mod:`~omni_web.voices.names`: the voice-name rule (the server's upload-name rule, file-safe).
- :mod:`~omni_web.voices.library`: :class:`VoiceLibrary` and :class:`Voice` (``voices/<name>.wav``
  + ``<name>.txt``).
- :mod:`~omni_web.voices.transcribe`: faster-whisper transcripts, cached by content hash.
- :mod:`~omni_web.voices.reference`: fit a clip to the server's 10 MiB limit; library voice →
  clone :class:`~omni_web.client.VoiceChoice`.
- :mod:`~omni_web.voices.server_voices`: upload/list/delete server voices; each model's menu.
- :mod:`~omni_web.voices.preview`: speak a sample sentence with a voice.
- :mod:`~omni_web.voices.choice`: the voice a user asks for by name, clip or description.
"""

from __future__ import annotations

from omni_web.voices.clip import (
    CLIP_ADVICE,
    MAX_SPEECH_S,
    MIN_SPEECH_S,
    SUPPORTED_EXTENSIONS,
    PreparedClip,
    prepare_clip,
)
from omni_web.voices.library import Voice, VoiceLibrary
from omni_web.voices.names import sanitize_name, validate_name
from omni_web.voices.preview import SAMPLE_SENTENCE, preview_voice
from omni_web.voices.reference import MAX_REFERENCE_AUDIO_BYTES, clone_choice, fit_reference
from omni_web.voices.server_voices import (
    VoiceOption,
    delete_server_voice,
    list_server_voices,
    option_for_key,
    server_voice_endpoint,
    transcript_warning,
    upload_library_voice,
    uploaded_voices_unsupported,
    voice_menu,
)
from omni_web.voices.transcribe import (
    install_whisper_model,
    load_whisper_model,
    transcribe_clip,
    transcript_cache_dir,
    whisper_local_dir,
    whisper_repo_id,
)

__all__ = [
    "CLIP_ADVICE",
    "MAX_REFERENCE_AUDIO_BYTES",
    "MAX_SPEECH_S",
    "MIN_SPEECH_S",
    "SAMPLE_SENTENCE",
    "SUPPORTED_EXTENSIONS",
    "PreparedClip",
    "Voice",
    "VoiceLibrary",
    "VoiceOption",
    "clone_choice",
    "delete_server_voice",
    "fit_reference",
    "install_whisper_model",
    "list_server_voices",
    "load_whisper_model",
    "option_for_key",
    "preview_voice",
    "prepare_clip",
    "sanitize_name",
    "server_voice_endpoint",
    "transcribe_clip",
    "transcript_cache_dir",
    "transcript_warning",
    "upload_library_voice",
    "uploaded_voices_unsupported",
    "validate_name",
    "voice_menu",
    "whisper_local_dir",
    "whisper_repo_id",
]
