"""The base of every error omni-web raises on purpose, and the one line shown for a bug."""

from __future__ import annotations

import re

__all__ = [
    "OmniWebError",
    "exception_detail",
    "internal_error_message",
]


class OmniWebError(Exception):
    """Base of every error omni-web raises on purpose; ``str()`` is the user-facing message."""


def exception_detail(exc: BaseException) -> str:
    """What a library's exception says, in words: its message, else its kind ("read timeout" for
    an empty ``ReadTimeout``); never the class name as such."""
    text = " ".join(str(exc).split()).strip()
    if text and text not in ("None", "''"):
        return text
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", type(exc).__name__).lower()


def internal_error_message(exc: BaseException) -> str:
    """The line shown for an exception that is not an :class:`OmniWebError` (a bug); log the traceback too."""
    return (f"Internal error: something went wrong inside omni-web ({exception_detail(exc)}). "
            "This is a bug; the app log has the details.")
