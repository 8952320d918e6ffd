"""How a line is said (whispered, shouted, …) in each model's own control, and the words to listen for.

A delivery label comes from the cast (a tag verb, the LLM, the user). The catalog says how a model
takes it (:class:`~omni_web.catalog.DeliveryControl`): the request's ``instructions`` (Qwen3-TTS
CustomVoice and VoiceDesign), a leading ``<|emotion:…|>``/``<|style:…|>`` token (the Higgs Audio v3
cookbook: control tokens must lead the turn), or a bracket cue like ``[whispering]`` (Fish S2-Pro's
tag system); a model without one gets the line plain. Tags read aloud are a known failure of these
models, so QA listens for the control's words (:func:`control_words`) in each take's transcript.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from omni_web.catalog import CatalogEntry, DeliveryControl

__all__ = ["DELIVERIES", "DeliveryCue", "control_words", "delivery_cue", "heard_control_words"]

# label -> (instructions sentence, Higgs token, bracket tag)
_CUES: dict[str, tuple[str, str, str]] = {
    "whispered": ("Whisper the line, soft and breathy.", "<|style:whispering|>", "[whispering]"),
    "shouted": ("Shout the line, loud and forceful.", "<|style:shouting|>", "[shouting]"),
    "laughing": ("Say the line laughing.", "<|emotion:amused|>", "[laughing]"),
    "sad": ("Say the line sadly, with a heavy, low voice.", "<|emotion:sad|>", "[sad]"),
    "angry": ("Say the line angrily.", "<|emotion:angry|>", "[angry]"),
    "excited": ("Say the line excitedly.", "<|emotion:excited|>", "[excited]"),
    "fearful": ("Say the line frightened, trembling.", "<|emotion:fearful|>", "[scared]"),
}
DELIVERIES: tuple[str, ...] = tuple(_CUES)
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class DeliveryCue:
    """What a request carries for a delivery: an instructions sentence, or a prefix to the input."""

    instructions: str = ""
    prefix: str = ""


def delivery_cue(entry: CatalogEntry, label: str | None) -> DeliveryCue:
    """The cue for ``label`` on ``entry``'s model; an empty cue where the model has no control
    or the label is unknown (a plain line)."""
    cues = _CUES.get((label or "").strip().casefold())
    if cues is None:
        return DeliveryCue()
    instructions, token, tag = cues
    control = entry.delivery_control
    if control is DeliveryControl.INSTRUCTIONS:
        return DeliveryCue(instructions=instructions)
    if control is DeliveryControl.HIGGS_TOKENS:
        return DeliveryCue(prefix=token)
    if control is DeliveryControl.BRACKET_TAGS:
        return DeliveryCue(prefix=f"{tag} ")
    return DeliveryCue()


def control_words(entry: CatalogEntry, label: str | None) -> frozenset[str]:
    """Words of ``label``'s cue on this model that must never be heard (lowercase)."""
    cue = delivery_cue(entry, label)
    return frozenset(_WORD.findall((cue.instructions + " " + cue.prefix).casefold())) - {
        "the",
        "line",
        "a",
        "and",
        "with",
        "say",
    }


def heard_control_words(entry: CatalogEntry, label: str | None, *, text: str, transcript: str) -> list[str]:
    """Control words in ``transcript`` that the line's own ``text`` does not contain (a tag read aloud)."""
    said = set(_WORD.findall(transcript.casefold()))
    own = set(_WORD.findall(text.casefold()))
    return sorted(w for w in control_words(entry, label) if w in said and w not in own)
