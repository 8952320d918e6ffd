"""Hear a voice before a whole book is rendered with it: one short sample sentence."""

from __future__ import annotations

from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient, SpeechRequest, SpeechResult, VoiceChoice
from omni_web.errors import VoiceError
from omni_web.files import write_atomic

__all__ = ["SAMPLE_SENTENCE", "preview_voice"]

# Short enough for every model's per-request window (Higgs voices ~80 words), long enough to
# hear pace, pitch and a question's rise.
SAMPLE_SENTENCE = (
    "It was a bright cold day in April, and the clocks were striking thirteen. "
    "Would you like to hear the rest of the story?"
)


def preview_voice(
    client: SpeechClient,
    entry: CatalogEntry,
    voice: VoiceChoice,
    *,
    text: str = SAMPLE_SENTENCE,
    out_path: Path | None = None,
    language: str | None = None,
) -> SpeechResult:
    """Speak ``text`` with ``voice`` on ``entry``'s model; also write the WAV to ``out_path``.

    Raises:
        VoiceError: empty text, a voice the model cannot use, or an unwritable ``out_path``.
        SpeechError (and subclasses): the server refused or failed the request.
    """
    if not text.strip():
        raise VoiceError("The preview sentence is empty; type a sentence to hear.")
    result = client.speech(entry, SpeechRequest(text=text.strip(), voice=voice, language=language))
    if out_path is not None:
        out_path = Path(out_path)
        try:
            out_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(out_path, result.audio)
        except OSError as exc:
            raise VoiceError(f"Could not save the preview to {out_path}: {exc.strerror or exc}.") from exc
    return result
