"""Errors of the optional chat endpoint that labels a cast's quotes (an OpenAI-compatible LLM)."""

from __future__ import annotations

from omni_web.errors.base import OmniWebError

__all__ = ["LlmError", "LlmUnreachable", "LlmUnusableAnswer"]


class LlmError(OmniWebError):
    """The chat endpoint set in Settings refused a request (HTTP error, wrong model, bad key).

    ``url`` is the endpoint; ``status`` the HTTP status when there was one.
    """

    def __init__(self, message: str, *, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class LlmUnreachable(LlmError):
    """Nothing answered at the endpoint, or it did not answer in time."""


class LlmUnusableAnswer(LlmError):
    """The endpoint answered, but not with the JSON labels asked for (the rules' labels stay)."""
