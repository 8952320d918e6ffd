"""Chunk keys: a hash of everything that shapes a chunk's audio.

Two chunks with the same key sound the same, so the key names the chunk's audio file. Change the
text, the model, the voice (or the reference clip's bytes, or its transcript) or a request setting,
and the key changes, so only the affected chunks are rendered again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["chunk_key", "shaping_fingerprint"]

# Bump when the meaning of a rendered chunk changes (e.g. the request format), to invalidate caches.
KEY_VERSION = 1


def shaping_fingerprint(shaping: Mapping[str, Any]) -> str:
    """Stable hash of the per-job settings that shape every chunk (model, voice, request fields)."""
    canonical = json.dumps({"v": KEY_VERSION, **shaping}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def chunk_key(text: str, fingerprint: str) -> str:
    """The key of one chunk: its text under a job's shaping fingerprint (32 hex chars)."""
    digest = hashlib.sha256()
    digest.update(fingerprint.encode("ascii"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()[:32]
