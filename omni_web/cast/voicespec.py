"""A cast voice as a person writes it (``ryan``, a clip, a description) and what it means per model.

A saved cast outlives the model it was made with, so it stores what the user chose, not a
request field: a name becomes a built-in speaker or preset on models that have them, a library
clip on a clone model that has a voice by that name, else a voice uploaded to the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.errors import CastError
from omni_web.voices import VoiceLibrary

__all__ = ["VoiceSpec"]


@dataclass(frozen=True, slots=True)
class VoiceSpec:
    """Exactly one of ``name``, ``clone`` or ``instructions``; ``transcript`` goes with a clone, and
    ``design`` (a description) with a clone designed by the app when its library clip is missing."""

    name: str | None = None
    clone: str | None = None
    transcript: str | None = None
    instructions: str | None = None
    design: str | None = None

    def __post_init__(self) -> None:
        given = [v for v in (self.name, self.clone, self.instructions) if v and v.strip()]
        if len(given) != 1:
            raise CastError(
                "A cast voice is one of: a name (e.g. ryan), {clone: CLIP, transcript: TEXT} or "
                "{instructions: TEXT}."
            )

    @property
    def label(self) -> str:
        """Short text for lists: the name, ``clone of X`` or ``designed: …``."""
        if self.name:
            return self.name
        if self.clone:
            return f"clone of {Path(self.clone).stem}"
        text = self.instructions or ""
        return f"designed: {text[:40]}{'…' if len(text) > 40 else ''}"

    def to_yaml(self) -> str | dict[str, str]:
        """A bare name, or a small mapping."""
        if self.name:
            return self.name
        if self.clone:
            data = {"clone": self.clone}
            if self.transcript:
                data["transcript"] = self.transcript
            if self.design:
                data["design"] = self.design
            return data
        return {"instructions": self.instructions or ""}

    @classmethod
    def from_yaml(cls, value: Any, *, where: str) -> VoiceSpec:
        """Parse what :meth:`to_yaml` wrote; ``where`` names the entry in error messages."""
        if isinstance(value, str) and value.strip():
            return cls(name=value.strip())
        if isinstance(value, Mapping):
            unknown = set(value) - {"name", "clone", "transcript", "instructions", "design"}
            if unknown:
                raise CastError(f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}.")
            try:
                return cls(**{k: (str(v) if v is not None else None) for k, v in value.items()})
            except CastError as exc:
                raise CastError(f"{where}: {exc}") from None
        raise CastError(f"{where}: expected a voice name or a mapping, got {value!r}.")

    @classmethod
    def from_choice(cls, voice: VoiceChoice) -> VoiceSpec:
        """What to save for a voice chosen in the UI or on the command line."""
        if voice.kind is VoiceKind.CLONE and voice.reference is not None:
            return cls(clone=str(voice.reference), transcript=voice.transcript)
        if voice.kind is VoiceKind.DESIGN:
            return cls(instructions=voice.instructions)
        if voice.kind is VoiceKind.DEFAULT:
            return cls(name="default")
        return cls(name=voice.name)

    def resolve(self, entry: CatalogEntry, library: VoiceLibrary) -> VoiceChoice:
        """The voice choice for ``entry``'s model (names are checked against the server later)."""
        if self.instructions:
            return VoiceChoice.design(self.instructions)
        if self.clone:
            saved = library.find(self.clone)
            if saved is not None:
                return VoiceChoice.clone(saved.wav_path, self.transcript or saved.transcript)
            if self.design:
                # Designed before the book renders (omni_web.cast.design): the clip's place in the
                # library, with the description it is made from.
                return VoiceChoice(VoiceKind.CLONE, reference=library.directory / f"{self.clone}.wav",
                                   ref_text=self.transcript, instructions=self.design)
            path = Path(self.clone).expanduser()
            if not path.is_file():
                raise CastError(
                    f"The cast's clip '{self.clone}' is neither a file nor a library voice. "
                    "See: python -m omni_web voices list"
                )
            return VoiceChoice.clone(path.resolve(), self.transcript)
        name = (self.name or "").strip()
        if name.casefold() == "default":
            return VoiceChoice.default()
        if entry.voice_mode in (VoiceMode.BUILTIN_SPEAKERS, VoiceMode.PRESET_VOICES):
            return VoiceChoice.speaker(name)
        saved = library.find(name)
        if entry.can_clone and saved is not None:
            return VoiceChoice.clone(saved.wav_path, saved.transcript)
        return VoiceChoice.uploaded(name)
