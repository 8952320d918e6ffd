"""Settings, the catalog and cast files."""

from __future__ import annotations

from omni_web.errors.base import OmniWebError

__all__ = [
    "CastError",
    "PresetError",
    "SettingsError",
    "UnknownModel",
]


class SettingsError(OmniWebError):
    """A setting has a value the app cannot use (raised when settings are loaded or changed)."""


class PresetError(SettingsError):
    """A job preset or a preset rule cannot be used (unknown name, bad field, a rule naming no preset)."""


class CastError(SettingsError):
    """A cast cannot be used: a cast file (bad YAML, unknown fields), a voice written wrongly, a
    clip that is neither a file nor a library voice, or a ``--cast``/``--set`` flag; the message
    names the file or flag and shows the right form."""


class UnknownModel(OmniWebError, KeyError):
    """A catalog key that is not in the catalog."""

    def __init__(self, key: str, known: list[str]) -> None:
        self.key = key
        self.known = known
        super().__init__(f"Unknown model '{key}'. Known models: {', '.join(known)}.")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])
