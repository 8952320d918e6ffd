"""The voices of one sgl-omni endpoint, as the UI asks for them: each call opens its own client.

Timeouts are chosen per call: a listing for a menu must not hold the page (5 s, no retry), an
upload may take the server's time to store the clip, a delete is quick but worth waiting for.
"""

from __future__ import annotations

from dataclasses import dataclass

from omni_web.client import SpeechClient, UploadedVoice, VoiceCatalog
from omni_web.paths import DataPaths
from omni_web.voices.library import Voice
from omni_web.voices.server_voices import delete_server_voice, list_server_voices, upload_library_voice

__all__ = ["ServerVoices"]

_LIST_TIMEOUT_S = 5.0
_DELETE_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class ServerVoices:
    """Voice listing, upload and deletion on a server, for a data root's reference clips."""

    paths: DataPaths

    def catalog(self, endpoint: str) -> VoiceCatalog:
        """Every usable voice name on ``endpoint`` and its uploaded voices (quick: menus wait on it)."""
        with SpeechClient(endpoint, timeout_s=_LIST_TIMEOUT_S, connect_retries=0) as client:
            return list_server_voices(client)

    def upload(self, endpoint: str, voice: Voice, *, consent: str, name: str | None = None) -> UploadedVoice:
        """Store library ``voice`` on ``endpoint`` (see :func:`upload_library_voice`)."""
        with SpeechClient(endpoint) as client:
            return upload_library_voice(client, voice, consent=consent, paths=self.paths, name=name)

    def delete(self, endpoint: str, name: str) -> None:
        """Remove the uploaded voice ``name`` from ``endpoint``."""
        with SpeechClient(endpoint, timeout_s=_DELETE_TIMEOUT_S, connect_retries=0) as client:
            delete_server_voice(client, name)
