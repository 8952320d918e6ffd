"""The httpx client for one sgl-omni endpoint: health, models, voices, speech.

One :class:`SpeechClient` wraps one ``httpx.Client`` whose connection pool is sized for a
renderer that keeps many speech requests in flight from a thread pool; httpx clients are safe to
share across threads, and the only other state (a cached voice list) sits behind a lock.

Retries: connection errors (refused, reset, dropped before a response) and HTTP 503 are retried
with exponential backoff, up to ``connect_retries`` times, then raise :class:`ServerUnavailable`.
400 and 500 are never retried; a KV-capacity 400 is refit once (see :meth:`SpeechClient.speech`).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx

from omni_web.client.errors import ServerText, classify, error_from_response, parse_error_body
from omni_web.client.records import HealthStatus
from omni_web.errors import ServerError, ServerUnavailable, SpeechError

__all__ = ["SpeechClient", "is_loopback_url", "normalize_base_url"]

# Errors raised before any response arrived: the request can be sent again safely.
_RETRYABLE_TRANSPORT_ERRORS = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,  # the server closed a kept-alive connection without answering
    httpx.PoolTimeout,
)
_HEALTH_TIMEOUT_S = 10.0


def normalize_base_url(url: str) -> str:
    """``url`` without trailing slashes or a trailing ``/v1``; raise :class:`ServerError` if unusable.

    People paste OpenAI-style base URLs (``http://host:8000/v1``); the client adds the paths.
    """
    text = url.strip().rstrip("/")
    if text.endswith("/v1"):
        text = text[: -len("/v1")]
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(
            f"'{url}' is not a server URL. Write it like http://127.0.0.1:8000 "
            "(scheme, host and port of the sgl-omni server)."
        )
    return text


def is_loopback_url(url: str) -> bool:
    """True when ``url`` points at this machine: ``localhost``, 127.0.0.0/8, ``::1`` (or 0.0.0.0).

    A server on this machine reads a reference clip from its local path; any other server gets
    the clip inlined as a base64 data URL (the seed's "How voice cloning works").
    """
    host = urlsplit(url.strip()).hostname
    if not host:
        return False
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    # Connecting to the unspecified address reaches this machine as well.
    return address.is_loopback or address.is_unspecified


class SpeechClient:
    """Client for one sgl-omni server.

    Args:
        base_url: ``http://host:port`` of the server (a trailing ``/v1`` is dropped).
        transport: an httpx transport; tests pass ``httpx.MockTransport``.
        local_server: True when the server runs on this machine (managed by us, or loopback):
            reference clips then go as local paths, otherwise as base64 data URLs. None decides
            from the URL (:func:`is_loopback_url`).
        timeout_s: read timeout for one request (long chunks on a busy GPU take minutes).
        connect_retries: how many times a connection error or 503 is retried.
        backoff_s: first retry delay; it doubles on each retry.
        sleep: the function that waits between retries (tests inject a no-op).
    """

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        local_server: bool | None = None,
        timeout_s: float = 600.0,
        connect_retries: int = 5,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.local_server = is_loopback_url(self.base_url) if local_server is None else local_server
        self.timeout_s = timeout_s
        self.connect_retries = max(0, connect_retries)
        self.backoff_s = backoff_s
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            # The renderer keeps up to ~64 requests in flight (Qwen3-TTS batches 64).
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
        )

    # --- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool; the client cannot be used afterwards."""
        self._http.close()

    def __enter__(self) -> SpeechClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SpeechClient({self.base_url!r}, local_server={self.local_server})"

    @property
    def inline_reference(self) -> bool:
        """True when reference clips must travel as base64 data URLs (a remote server)."""
        return not self.local_server

    # --- health and discovery -------------------------------------------------------------------

    def health(self, *, timeout_s: float = _HEALTH_TIMEOUT_S) -> HealthStatus:
        """One ``GET /health``, never retried (callers poll).

        Returns the status for any HTTP answer: 200 ``healthy``; 503 ``starting`` during warmup
        or ``unhealthy``. Raises :class:`ServerUnavailable` when nothing answers (connection
        refused while the model loads, or no server at all).
        """
        try:
            response = self._http.get("/health", timeout=timeout_s)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {}
        status = body.get("status")
        stages = body.get("stages")
        return HealthStatus(
            status=status if isinstance(status, str) and status else "unknown",
            http_status=response.status_code,
            stages=tuple(str(s) for s in stages) if isinstance(stages, list) else (),
            body=body,
        )

    def model_ids(self) -> list[str]:
        """The ids ``GET /v1/models`` lists (``--model-name``, or the model path by default)."""
        body = self._get_json("/v1/models")
        data = body.get("data")
        if not isinstance(data, list):
            return []
        return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]

    # --- request core ---------------------------------------------------------------------------

    def _get_json(self, path: str) -> dict[str, Any]:
        response = self._send("GET", path)
        return self._json_object(response)

    def _json_object(self, response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError as exc:
            raise SpeechError(
                f"The server at {self.base_url} answered {response.request.url.path} with "
                "something that is not JSON; is this an sgl-omni server?",
                status_code=response.status_code,
            ) from exc
        if not isinstance(body, dict):
            raise SpeechError(
                f"The server at {self.base_url} answered {response.request.url.path} with "
                "unexpected JSON; is this an sgl-omni server?",
                status_code=response.status_code,
            )
        return body

    def _send(self, method: str, path: str, *, ok_statuses: tuple[int, ...] = (), **kwargs: Any) -> httpx.Response:
        """Send one request; retry connection errors and 503; raise for any other error status.

        Statuses in ``ok_statuses`` are returned to the caller instead of raised.
        """
        attempts = self.connect_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(method, path, **kwargs)
            except _RETRYABLE_TRANSPORT_ERRORS as exc:
                if last:
                    raise self._unreachable(exc, attempts=attempts) from exc
                self._sleep(self._backoff(attempt))
                continue
            except httpx.TimeoutException as exc:
                # A read timeout means the server took the request and is still busy with it:
                # sending it again would only add load.
                raise ServerUnavailable(
                    f"The server at {self.base_url} did not answer {path} within {self.timeout_s:.0f} s. "
                    "It may be overloaded: lower the number of requests in flight, or raise the timeout."
                ) from exc
            except httpx.HTTPError as exc:
                raise ServerUnavailable(f"Request to {self.base_url}{path} failed: {exc}") from exc
            if response.is_success or response.status_code in ok_statuses:
                return response
            if response.status_code == 503:
                body = parse_error_body(response)
                if classify(body.message) is ServerText.ENCODER_MISSING:
                    # Not transient: the remedy is another response format, not a retry.
                    raise ServerUnavailable(body.message, status_code=503, error_type=body.error_type)
                if last:
                    raise self._busy(body.message, attempts=attempts)
                self._sleep(self._backoff(attempt))
                continue
            raise error_from_response(response)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _backoff(self, attempt: int) -> float:
        return self.backoff_s * (2**attempt)

    def _unreachable(self, exc: Exception, *, attempts: int = 1) -> ServerUnavailable:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return ServerUnavailable(
            f"Cannot reach the sgl-omni server at {self.base_url}{tries} ({type(exc).__name__}: {exc}). "
            "Start the server (Server tab, or python -m omni_web server start), wait until it is "
            "healthy, or check the URL."
        )

    def _busy(self, message: str, *, attempts: int) -> ServerUnavailable:
        return ServerUnavailable(
            f"The server at {self.base_url} stayed busy through {attempts} attempts (HTTP 503: {message}). "
            "Lower the number of requests in flight, or wait and try again.",
            status_code=503,
            error_type="server_error",
        )
