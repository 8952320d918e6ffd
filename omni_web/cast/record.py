"""The cast a conversion renders with: the dialogue voice and each mapped character's voice.

The narrator's voice is the request's own voice. A quote goes to its character's voice when the
character is mapped, else to the dialogue voice, else (no dialogue voice) to the narrator. A
first-person narrator's own quotes ("I said") are read in the narrator's voice unless mapped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from omni_web.cast.delivery import labelled, split_label
from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE, DIALOGUE, NARRATOR
from omni_web.cast.edits import CastEdits
from omni_web.cast.labels import BookLabels
from omni_web.cast.roster import FIRST_PERSON_NARRATOR
from omni_web.client import VoiceChoice
from omni_web.errors import CastError

__all__ = ["Cast"]


@dataclass(frozen=True, slots=True)
class Cast:
    """Voices beyond the narrator's; ``characters`` pairs a character's name with its voice."""

    dialogue: VoiceChoice | None = None
    characters: tuple[tuple[str, VoiceChoice], ...] = ()
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    # The model takes a line's delivery (the catalog's delivery_control): quotes keep their
    # "whispered"/"shouted" labels and are sent with the model's cue; else they are said plainly.
    delivery: bool = False
    # Labels laid over the rules' attribution (the LLM's, a person's); see omni_web.cast.labels.
    labels: BookLabels = BookLabels()
    edits: CastEdits = CastEdits()  # the user's merges, splits, renames and hidden names

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_confidence <= 1.0:
            raise CastError(
                f"The cast's min_confidence is {self.min_confidence}; use a number from 0 to 1 (0.6 is the "
                "default)."
            )
        names = [name.casefold() for name, _ in self.characters]
        if len(set(names)) != len(names):
            raise CastError("The cast maps a character twice; keep one voice per character.")

    @property
    def active(self) -> bool:
        """True when any quote would be spoken by another voice than the narrator's."""
        return self.dialogue is not None or bool(self.characters)

    def character_voice(self, name: str) -> VoiceChoice | None:
        """The voice mapped to ``name`` (case-insensitive), or None."""
        wanted = name.casefold()
        return next((voice for who, voice in self.characters if who.casefold() == wanted), None)

    def voice_for(self, label: str, narrator: VoiceChoice) -> VoiceChoice:
        """The voice of a chunk spoken under ``label`` (from :mod:`omni_web.cast.dialogue`), with the
        label's delivery when the model takes one."""
        speaker, delivery = split_label(label)
        voice = self._voice_of(speaker, narrator)
        return voice.with_delivery(delivery) if delivery and self.delivery and speaker != NARRATOR else voice

    def _voice_of(self, speaker: str, narrator: VoiceChoice) -> VoiceChoice:
        if speaker == NARRATOR:
            return narrator
        if speaker != DIALOGUE:
            mapped = self.character_voice(speaker)
            if mapped is not None:
                return mapped
            if speaker == FIRST_PERSON_NARRATOR:
                return narrator
        return self.dialogue or narrator

    def voice_label(self, label: str) -> str:
        """The label a speaker's lines are read under: the speaker's own when mapped, else the
        label of the voice that reads them (:data:`DIALOGUE`, or the narrator's when there is no
        dialogue voice), with the line's delivery only when the model takes one. Runs of one voice
        said one way then join into one request, and ``voice_for(voice_label(s))`` is ``voice_for(s)``."""
        speaker, delivery = split_label(label)
        if speaker == NARRATOR or (speaker != DIALOGUE and self.character_voice(speaker) is not None):
            base = speaker
        elif speaker == FIRST_PERSON_NARRATOR:
            base = NARRATOR
        else:
            base = DIALOGUE if self.dialogue is not None else NARRATOR
        return labelled(base, delivery if self.delivery and base != NARRATOR else None)

    def voices(self) -> list[VoiceChoice]:
        """Every voice of the cast (dialogue first), for checking them all against the server."""
        found = [self.dialogue] if self.dialogue is not None else []
        return found + [voice for _, voice in self.characters]

    def map_voices(self, change: Callable[[str, VoiceChoice], VoiceChoice]) -> Cast:
        """The same cast with ``change(role, voice)`` applied to every voice (e.g. the server's spelling).

        ``role`` is :data:`~omni_web.cast.dialogue.DIALOGUE` or the character's name.
        """
        return Cast(
            dialogue=change(DIALOGUE, self.dialogue) if self.dialogue is not None else None,
            characters=tuple((name, change(name, voice)) for name, voice in self.characters),
            min_confidence=self.min_confidence,
            delivery=self.delivery,
            labels=self.labels,
            edits=self.edits,
        )

    @classmethod
    def of(
        cls,
        *,
        dialogue: VoiceChoice | None = None,
        characters: Mapping[str, VoiceChoice] | None = None,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        delivery: bool = False,
        labels: BookLabels | None = None,
        edits: CastEdits | None = None,
    ) -> Cast:
        """Build from a mapping of character names to voices."""
        return cls(
            dialogue,
            tuple(sorted((characters or {}).items())),
            min_confidence,
            delivery,
            labels or BookLabels(),
            edits or CastEdits(),
        )
