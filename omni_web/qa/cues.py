"""A delivery cue read aloud: the words of a ``[whispering]`` tag or an instructions sentence heard in a
take's transcript, which the chunk's own text does not hold (a known failure of tag-driven models)."""

from __future__ import annotations

from omni_web.catalog import get_entry
from omni_web.delivery_cues import heard_control_words
from omni_web.errors import UnknownModel
from omni_web.qa.findings import Finding, FindingKind

__all__ = ["cue_failures"]


def cue_failures(model_key: str, delivery: str | None, *, text: str, transcript: str) -> list[Finding]:
    """The failure to record when the take says its cue's words (empty when it does not)."""
    if not delivery:
        return []
    try:
        entry = get_entry(model_key)
    except UnknownModel:
        return []  # a foreign server's model: no catalog control, no cue was sent
    heard = heard_control_words(entry, delivery, text=text, transcript=transcript)
    if not heard:
        return []
    words = ", ".join(heard)
    return [Finding(FindingKind.CUE, f"the delivery cue was read aloud ({words})", words=words)]
