"""Durations in words, the one way the app writes them: ``20 h 45 min``, ``12 min``, ``45 s``."""

from __future__ import annotations

__all__ = ["duration_words"]


def duration_words(seconds: float | None) -> str:
    """``20 h 45 min`` for long spans, ``12 min``, ``45 s`` for short ones; ``-`` when unknown."""
    if seconds is None or seconds < 0:
        return "-"
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    hours, minutes = divmod(round(total / 60), 60)
    if not hours:
        return f"{minutes} min"
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
