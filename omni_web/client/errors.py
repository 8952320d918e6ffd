"""The server texts the client recognises, and the translation of error responses.

Every sglang-omni message the client acts on is matched here, in one table (``SERVER_TEXTS``),
so a wording change in a later server release is fixed in one place. Error bodies come in three
shapes, all read by :func:`parse_error_body`:

- the OpenAI envelope ``{"error": {"message", "type", "param", "code"}}``
  (``sglang_omni/serve/speech_errors.py``), used by every speech and voice-upload failure;
- FastAPI's ``{"detail": "..."}`` or ``{"detail": [{"loc": [...], "msg": "..."}]}`` (unknown
  routes, 422 multipart validation);
- ``{"success": false, "error": "Voice '<n>' not found"}`` from ``DELETE /v1/audio/voices/{name}``.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

import httpx

from omni_web.errors import KVCapacityError, SpeechError

__all__ = [
    "SERVER_TEXTS",
    "ErrorBody",
    "KVCapacityReport",
    "ServerText",
    "classify",
    "error_from_response",
    "kv_capacity_error",
    "parse_error_body",
    "parse_kv_capacity",
]


class ServerText(enum.Enum):
    """A server message the client reacts to."""

    KV_CAPACITY = "kv_capacity"  # refit max_new_tokens and resend once
    QUEUE_FULL = "queue_full"  # transient 503: retried with backoff
    ENCODER_MISSING = "encoder_missing"  # 503 that no retry can fix: raised at once
    # The SGLang-Omni router (sglang_omni_router/python/proxy.py): a worker dropped the request (502),
    # or no worker is routable (503). Both mean "never answered": safe to send again (unreachable).
    ROUTER_UPSTREAM_FAILED = "router_upstream_failed"
    ROUTER_NO_UPSTREAM = "router_no_upstream"


# note: the KV text is built in sglang_omni/scheduling/omni_scheduler.py
# (request_kv_capacity_error); it says "thinker" even for TTS models. The queue-full text is
# QueueFullError.MESSAGE (sglang_omni/admission); the encoder texts come from
# audio_encoding_unavailable_reason (sglang_omni/client/audio.py).
_KV_CAPACITY_RE = re.compile(
    r"Request requires more tokens than the thinker KV cache can hold \("
    r"input_tokens=(?P<input_tokens>\d+), max_new_tokens=(?P<max_new_tokens>\d+), "
    r"required_tokens=(?P<required_tokens>\d+), kv_capacity=(?P<kv_capacity>\d+)\)"
)

SERVER_TEXTS: tuple[tuple[ServerText, re.Pattern[str]], ...] = (
    (ServerText.KV_CAPACITY, _KV_CAPACITY_RE),
    (ServerText.QUEUE_FULL, re.compile(r"The request queue is full")),
    (
        ServerText.ENCODER_MISSING,
        re.compile(r"\b(?:soundfile|PyAV or pydub) is required for response_format="),
    ),
    (ServerText.ROUTER_UPSTREAM_FAILED, re.compile(r"^upstream (?:request|response) failed$")),
    (ServerText.ROUTER_NO_UPSTREAM, re.compile(r"^no (?:eligible|routable) upstream$")),
)


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """The fields of a server error, whichever body shape carried them."""

    message: str
    error_type: str | None = None
    param: str | None = None
    code: int | str | None = None


@dataclass(frozen=True, slots=True)
class KVCapacityReport:
    """The numbers in the server's KV-capacity rejection."""

    input_tokens: int
    max_new_tokens: int
    required_tokens: int
    kv_capacity: int

    @property
    def fitting_max_new_tokens(self) -> int:
        """The largest ``max_new_tokens`` that fits: ``kv_capacity - input_tokens`` (may be < 1)."""
        return self.kv_capacity - self.input_tokens


def classify(message: str) -> ServerText | None:
    """Which recognised server text ``message`` is, or None."""
    for kind, pattern in SERVER_TEXTS:
        if pattern.search(message):
            return kind
    return None


def parse_kv_capacity(message: str) -> KVCapacityReport | None:
    """The numbers of a KV-capacity rejection, or None when ``message`` is another error."""
    match = _KV_CAPACITY_RE.search(message)
    if match is None:
        return None
    return KVCapacityReport(**{name: int(value) for name, value in match.groupdict().items()})


def parse_error_body(response: httpx.Response) -> ErrorBody:
    """Read the error fields of a non-2xx response, whatever its body shape.

    A body that is not JSON (a proxy's HTML page, an empty body) becomes its first 300
    characters, or the status line when it is empty.
    """
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return ErrorBody(
                message=str(error["message"]),
                error_type=_optional_str(error.get("type")),
                param=_optional_str(error.get("param")),
                code=error.get("code"),
            )
        if isinstance(error, str) and error:
            return ErrorBody(message=error)
        if "detail" in body:
            return ErrorBody(message=_detail_text(body["detail"]))
    text = response.text.strip()
    if text:
        return ErrorBody(message=text[:300])
    return ErrorBody(message=f"{response.status_code} {response.reason_phrase}".strip())


def error_from_response(response: httpx.Response) -> SpeechError:
    """The :class:`SpeechError` for a non-2xx response; ``message`` is the server's own text."""
    body = parse_error_body(response)
    return SpeechError(
        body.message,
        status_code=response.status_code,
        error_type=body.error_type,
        param=body.param,
    )


def _detail_text(detail: object) -> str:
    """FastAPI's ``detail``: a string, or a list of ``{"loc": [...], "msg": ...}`` items."""
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, dict):
                loc = ".".join(str(p) for p in item.get("loc", ()) if p != "body")
                msg = str(item.get("msg", ""))
                parts.append(f"{loc}: {msg}" if loc else msg)
            else:
                parts.append(str(item))
        return "; ".join(parts) or "invalid request"
    return str(detail)


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


_KV_REMEDY = (
    "Use a shorter reference clip (10-20 s), smaller chunks, or relaunch the server with a larger "
    "--mem-fraction-static."
)


def kv_capacity_error(
    report: KVCapacityReport, *, refitted: bool, status_code: int | None
) -> KVCapacityError:
    """The user-facing KV-capacity error, with the numbers the server reported."""
    if refitted:
        what = (
            f"The request still does not fit the model's window after lowering max_new_tokens to "
            f"{report.max_new_tokens}: it needs {report.required_tokens} tokens, the window holds "
            f"{report.kv_capacity}."
        )
    else:
        what = (
            f"The prompt (text plus reference clip) takes {report.input_tokens} of the model's "
            f"{report.kv_capacity}-token window, leaving no room to generate speech."
        )
    return KVCapacityError(
        f"{what} {_KV_REMEDY}",
        kv_capacity=report.kv_capacity,
        input_tokens=report.input_tokens,
        max_new_tokens=report.max_new_tokens,
        status_code=status_code,
    )
