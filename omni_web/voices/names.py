"""Voice names: one rule for the library's file names and the server's upload names.

The server accepts upload names matching ``^(?=.*[A-Za-z0-9])[A-Za-z0-9_.-]+$``, compares them
case-insensitively and reserves ``default`` (``DEFAULT_VOICE_PRESETS`` in
``sglang_omni/serve/speech_voices.py``).
Library names follow the same rule, so any library voice can be uploaded under its own name, and
add two more for the file system: no leading dot (no hidden files, no ``..``) and at most 64
characters. A name is therefore always a single plain file name: no path can be smuggled in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from omni_web.errors import VoiceError

__all__ = [
    "MAX_NAME_LENGTH",
    "canonical_spelling",
    "display_name",
    "RESERVED_NAMES",
    "name_from_path",
    "sanitize_name",
    "validate_name",
]

MAX_NAME_LENGTH = 64
RESERVED_NAMES = frozenset({"default"})
_NAME = re.compile(r"^(?=.*[A-Za-z0-9])[A-Za-z0-9_.-]+$")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_.-]+")


def display_name(name: str) -> str:
    """A built-in speaker or preset as people write it: ``Uncle_Fu`` -> ``Uncle Fu``.

    Only for showing; requests keep the server's own spelling.
    """
    return " ".join(name.replace("_", " ").split()) or name


def canonical_spelling(name: str, known: Sequence[str]) -> str:
    """``name`` as ``known`` spells it when it is there ignoring case, else ``name`` itself.

    The server names its built-in speakers in lower case (``vivian``) where the catalog follows
    the model card (``Vivian``), and it compares them case-insensitively
    (``sglang_omni/serve/speech_voices.py``): one voice, so one key and one book name.
    """
    folded = name.casefold()
    return next((spelled for spelled in known if spelled.casefold() == folded), name)


def sanitize_name(raw: str) -> str:
    """The nearest valid name to ``raw``: unsafe runs become ``_``, edges lose dots and dashes.

    Returns ``"voice"`` when nothing usable is left, and appends ``_voice`` to a reserved name.
    """
    name = _UNSAFE_RUN.sub("_", raw.strip()).strip("._-")[:MAX_NAME_LENGTH].rstrip("._-")
    if not name or not _NAME.match(name):
        return "voice"
    if name.casefold() in RESERVED_NAMES:
        return f"{name}_voice"
    return name


def validate_name(name: str) -> str:
    """Return ``name`` stripped if it is a valid voice name; raise :class:`VoiceError` otherwise.

    The message names the rule and suggests the sanitised form.
    """
    text = name.strip()
    problem = None
    if not text:
        problem = "is empty"
    elif len(text) > MAX_NAME_LENGTH:
        problem = f"is longer than {MAX_NAME_LENGTH} characters"
    elif not _NAME.match(text):
        problem = "may hold only letters, digits, '.', '_' and '-', with at least one letter or digit"
    elif text.startswith("."):
        problem = "may not start with '.'"
    elif text.casefold() in RESERVED_NAMES:
        problem = "is reserved for the server's default voice"
    if problem is None:
        return text
    shown = text if len(text) <= 80 else text[:77] + "..."
    raise VoiceError(f"The voice name '{shown}' {problem}. Try '{sanitize_name(text)}'.")


def name_from_path(path: Path) -> str:
    """A valid voice name made from a clip's file name (its stem, sanitised)."""
    return sanitize_name(Path(path).stem)
