"""Pure file-name rules for exported audio: safe on Linux, macOS and Windows shares, unique."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from omni_web.assemble.metadata import truncate_utf8

__all__ = ["FILENAME_MAX_BYTES", "safe_filename", "unique_name"]

# Most file systems allow 255 bytes per name; leave room for "NN - " and ".mp3" and for tools
# that append suffixes. Arabic takes 2 bytes per letter, so the limit is in bytes, not characters.
FILENAME_MAX_BYTES = 120
_RESERVED_CHARS = re.compile(r'[<>:"/\\|?*]')
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}
)


def safe_filename(name: str, *, fallback: str, max_bytes: int = FILENAME_MAX_BYTES) -> str:
    """One path component made from free text (a title, an author).

    Path separators and the characters Windows reserves become ``_``; control characters become
    spaces; spaces collapse; leading/trailing dots and spaces go (no ``.``/``..``, no hidden
    files); Windows device names get a ``_`` prefix; the result is NFC and at most ``max_bytes``
    UTF-8 bytes. An empty result becomes ``fallback`` (itself sanitised).
    """
    text = unicodedata.normalize("NFC", name)
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
    text = _RESERVED_CHARS.sub("_", text)
    text = re.sub(r"\s+", " ", text).strip(" .")
    text = truncate_utf8(text, max_bytes).strip(" .")
    if not text or set(text) <= {"_"}:
        return safe_filename(fallback, fallback="untitled", max_bytes=max_bytes) if fallback else "untitled"
    if text.split(".")[0].lower() in _WINDOWS_RESERVED:
        text = "_" + text
    return text


def unique_name(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``… before the extension, unlike any in ``taken``.

    Comparison ignores case, so names stay distinct on case-insensitive file systems too.
    """
    used = {t.casefold() for t in taken}
    if name.casefold() not in used:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    counter = 2
    while True:
        candidate = f"{stem} ({counter}){dot}{ext}"
        if candidate.casefold() not in used:
            return candidate
        counter += 1
