"""Rendering: chunk keys and the concurrent, resumable chunk renderer."""

from omni_web.render.crashes import CrashWatch, Recover, Recovery
from omni_web.render.item import RenderItem
from omni_web.render.keys import chunk_key, shaping_fingerprint
from omni_web.render.renderer import (
    RenderProgress,
    RenderSummary,
    RetryPolicy,
    Synthesize,
    chunk_audio_path,
    render_chunks,
    wav_duration_s,
)

__all__ = [
    "CrashWatch",
    "Recover",
    "Recovery",
    "RenderItem",
    "RenderProgress",
    "RenderSummary",
    "RetryPolicy",
    "Synthesize",
    "chunk_audio_path",
    "chunk_key",
    "render_chunks",
    "shaping_fingerprint",
    "wav_duration_s",
]
