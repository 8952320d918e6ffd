"""Letter case carried from written text to its spoken form."""

from __future__ import annotations

__all__ = ["capitalise_like"]


def capitalise_like(source: str, spoken: str) -> str:
    """``spoken`` with its first letter upper-cased when ``source`` starts with a capital."""
    if source[:1].isupper() and spoken[:1].islower():
        return spoken[0].upper() + spoken[1:]
    return spoken
