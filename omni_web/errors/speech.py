"""What the sgl-omni server answered to a speech or voice request."""

from __future__ import annotations

from omni_web.errors.base import OmniWebError

__all__ = [
    "KVCapacityError",
    "RequestTimedOut",
    "ServerBusy",
    "ServerMisconfigured",
    "ServerUnavailable",
    "ServerUnreachable",
    "SpeechError",
    "UnknownVoice",
]


class SpeechError(OmniWebError):
    """The server answered with an error envelope; fields mirror ``{"error": {...}}``."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        param: str | None = None,
    ) -> None:
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.param = param
        prefix = f"HTTP {status_code}: " if status_code is not None else ""
        super().__init__(prefix + message)


class KVCapacityError(SpeechError):
    """The request does not fit the engine's KV cache / context window even after a refit."""

    def __init__(
        self,
        message: str,
        *,
        kv_capacity: int,
        input_tokens: int,
        max_new_tokens: int,
        status_code: int | None = 400,
    ) -> None:
        self.kv_capacity = kv_capacity
        self.input_tokens = input_tokens
        self.max_new_tokens = max_new_tokens
        super().__init__(message, status_code=status_code, error_type="BadRequestError")


class UnknownVoice(SpeechError):
    """A voice name the server does not list; refused before any speech request is sent."""

    def __init__(self, voice: str, valid: list[str]) -> None:
        self.voice = voice
        self.valid = valid
        super().__init__(f"Unknown voice '{voice}'. Valid voices: {', '.join(valid) or '(none)'}.")


class ServerMisconfigured(SpeechError):
    """The server refused for a reason no retry fixes (e.g. no encoder for the response format)."""


class ServerUnavailable(SpeechError):
    """The server gave no usable answer for a reason outside the request; see the subclasses.

    :mod:`omni_web.retry` decides what each kind is worth: how long to back off, whether to resend.
    """


class ServerUnreachable(ServerUnavailable):
    """Nothing answered (connection refused, reset, or dropped before a response): the server never
    processed the request, so sending it again is safe; for our own server it may mean a crash."""


class ServerBusy(ServerUnavailable):
    """The server answered 503 (its request queue is full) through every retry of the client."""


class RequestTimedOut(ServerUnavailable):
    """The server took the request but did not answer within the read timeout.

    It may still be working on it, so the request is never sent again at once: only after a long
    back-off (and never by the client itself).
    """
