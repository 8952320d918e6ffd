"""The unit the renderer works on: one chunk of text, and what an error message needs to name it."""

from __future__ import annotations

from dataclasses import dataclass

from omni_web.client import VoiceChoice

__all__ = ["RenderItem"]


@dataclass(frozen=True, slots=True)
class RenderItem:
    """One chunk to render, with what an error message needs to name it."""

    key: str
    text: str
    chapter_index: int
    chapter_number: int  # 1-based, as the user sees it
    chapter_title: str
    chunk_number: int  # 1-based within the chapter
    # The voice this chunk is spoken with (None: the job's one voice) and who speaks it: "" for a
    # single-voice job, else "narrator", "dialogue" or a character's name (see omni_web.cast).
    voice: VoiceChoice | None = None
    speaker: str = ""
