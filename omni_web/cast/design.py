"""Designed voices for a clone model: Qwen3-TTS VoiceDesign speaks a reference line per character.

A cast on a clone model (Qwen3-TTS Base, MOSS, …) whose characters have no clip yet carries, for
each, the library place of its clip and the description to design it from (``VoiceSpec(clone=…,
design=…)``). Before the book renders, the app serves VoiceDesign, renders every missing clip in
one go, saves each to the voice library with its transcript, and then serves the book's model:
one switch of the managed server each way per book, whatever the number of characters.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.cast.record import Cast
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import SpeechClient, VoiceChoice, VoiceKind
from omni_web.voices import VoiceLibrary, preview_voice

__all__ = ["VOICE_DESIGN_MODEL", "Design", "design_voices", "pending_designs"]

VOICE_DESIGN_MODEL = "qwen3_tts_1_7b_voicedesign"


@dataclass(frozen=True, slots=True)
class Design:
    """One clip to design: whose it is, where the library keeps it, what it sounds like and says."""

    character: str
    clip: Path
    description: str
    transcript: str


def pending_designs(cast: Cast | None) -> list[Design]:
    """The cast's designed clips that are not in the library yet."""
    if cast is None:
        return []
    found = []
    for name, voice in cast.characters:
        if voice.kind is VoiceKind.CLONE and voice.reference is not None and voice.instructions \
                and not voice.reference.is_file():
            found.append(Design(name, voice.reference, voice.instructions, voice.transcript or ""))
    return found


def design_voices(
    designs: list[Design], library: VoiceLibrary, *, open_client: Callable[[CatalogEntry], SpeechClient],
    progress: Callable[[int, int, str], None] | None = None,
) -> list[Path]:
    """Render and save every design; returns the clips written.

    ``open_client(entry)`` serves the VoiceDesign model (starting it if needed) and returns a client
    for it; it is called once, however many designs there are.

    Raises:
        SpeechError, VoiceError: the server refused a design; the clips made so far stay saved.
    """
    if not designs:
        return []
    entry = get_entry(VOICE_DESIGN_MODEL)
    written = []
    with open_client(entry) as client, tempfile.TemporaryDirectory(prefix="omni-design-") as tmp:
        for done, design in enumerate(designs, 1):
            out = Path(tmp) / f"{design.clip.stem}.wav"
            preview_voice(
                client, entry, VoiceChoice.design(design.description), text=design.transcript, out_path=out
            )
            voice = library.add(out, name=design.clip.stem, transcript=design.transcript, overwrite=True)
            written.append(voice.wav_path)
            if progress is not None:
                progress(done, len(designs), design.character)
    return written
