"""The httpx client for one sgl-omni endpoint: health, models, voices, speech.

One :class:`SpeechClient` wraps one ``httpx.Client`` whose connection pool is sized for a
renderer that keeps many speech requests in flight from a thread pool; httpx clients are safe to
share across threads, and the only other state (a cached voice list) sits behind a lock.

Retries follow one :class:`~omni_web.retry.RetryPolicy`: by default connection errors (refused,
reset, dropped before a response: :class:`ServerUnreachable`) and HTTP 503 (:class:`ServerBusy`)
are retried with exponential back-off, up to ``connect_retries`` times. A read timeout
(:class:`RequestTimedOut`) is never resent by the client, nor are 400 and 500; a 503 that names a
missing encoder is :class:`ServerMisconfigured` at once. A caller that owns its retries (the
renderer) passes ``retry=NO_RETRY``. A KV-capacity 400 is refit once (see :meth:`SpeechClient.speech`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.client.errors import (
    ServerText,
    classify,
    error_from_response,
    kv_capacity_error,
    parse_error_body,
    parse_kv_capacity,
)
from omni_web.client.inflight import MAX_IN_FLIGHT, SpeechMeter, metered_call
from omni_web.client.records import HealthStatus, SpeechResult, UploadedVoice, VoiceCatalog, read_wav_info
from omni_web.client.requests import (
    MAX_REFERENCE_AUDIO_BYTES,
    SpeechRequest,
    VoiceKind,
    audio_mime_type,
    build_speech_payload,
    check_voice_choice,
)
from omni_web.client.urls import is_loopback_url, normalize_base_url
from omni_web.errors import (
    RequestTimedOut,
    ServerBusy,
    ServerMisconfigured,
    ServerUnavailable,
    ServerUnreachable,
    SpeechError,
    UnknownVoice,
    VoiceError,
    exception_detail,
)
from omni_web.retry import RetryPolicy

__all__ = ["SpeechClient"]

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
# POST /v1/audio/voices name rule (VOICE_NAME_PATTERN, sglang_omni/serve/speech_voices.py).
_VOICE_NAME_RE = re.compile(r"^(?=.*[A-Za-z0-9])[A-Za-z0-9_.-]+$")
_NAMED_KINDS = (VoiceKind.SPEAKER, VoiceKind.PRESET, VoiceKind.UPLOADED)


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
        retry: the whole policy instead of ``connect_retries``/``backoff_s`` (``NO_RETRY``: one attempt).
        speech_retry: the policy for speech requests (default: ``retry``); a renderer that retries
            chunks itself passes ``NO_RETRY`` so one layer owns a book's retries.
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
        retry: RetryPolicy | None = None,
        speech_retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.local_server = is_loopback_url(self.base_url) if local_server is None else local_server
        self.timeout_s = timeout_s
        self.retry = retry if retry is not None else RetryPolicy(
            attempts=max(0, connect_retries) + 1, unreachable_attempts=None, backoff_s=backoff_s,
            retry_timeouts=False, retry_server_errors=False,
        )
        self.speech_retry = speech_retry if speech_retry is not None else self.retry
        self._sleep = sleep
        self._meter: SpeechMeter | None = None  # set by metered() while a job renders
        # The server's voice list, fetched once and refreshed on a miss or after an upload/delete.
        self._voices_lock = threading.Lock()
        self._voices_cache: VoiceCatalog | None = None
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            # The renderer keeps up to MAX_IN_FLIGHT requests in flight (Qwen3-TTS batches 64, a
            # router as many per worker plus one): a smaller pool would queue them here instead.
            limits=httpx.Limits(max_connections=MAX_IN_FLIGHT, max_keepalive_connections=MAX_IN_FLIGHT),
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

    # --- voices ---------------------------------------------------------------------------------

    def voices(self) -> VoiceCatalog:
        """``GET /v1/audio/voices``: the names the server accepts and its uploaded voices."""
        body = self._get_json("/v1/audio/voices")
        names = body.get("voices")
        uploaded = body.get("uploaded_voices")
        catalog = VoiceCatalog(
            voices=tuple(str(n) for n in names) if isinstance(names, list) else (),
            uploaded=tuple(UploadedVoice.from_json(v) for v in uploaded if isinstance(v, dict))
            if isinstance(uploaded, list)
            else (),
        )
        with self._voices_lock:
            self._voices_cache = catalog
        return catalog

    def upload_voice(self, name: str, clip: Path, *, consent: str,
                     ref_text: str | None = None) -> UploadedVoice:
        """Store ``clip`` on the server as voice ``name`` (``POST /v1/audio/voices``, multipart).

        The server keeps 1-30 s clips, decodes them to 24 kHz mono and overwrites a voice of the
        same name (case-insensitive). ``consent`` is the speaker's consent statement (required).

        Raises:
            VoiceError: bad name, empty consent, missing or oversized clip (checked before sending).
            SpeechError: the server refused the clip (``message`` is its reason).
        """
        name = name.strip()
        if not _VOICE_NAME_RE.match(name):
            raise VoiceError(
                f"Voice name '{name}' is not allowed: use letters, numbers, '.', '_' and '-' "
                "(at least one letter or number)."
            )
        if name.casefold() == "default":
            raise VoiceError("'default' is reserved for the model's own voice; choose another name.")
        if not consent.strip():
            raise VoiceError("Uploading a voice needs the speaker's consent statement; fill it in.")
        audio = _read_clip(clip)
        data = {"name": name, "consent": consent.strip()}
        if ref_text and ref_text.strip():
            data["ref_text"] = ref_text.strip()
        files = {"audio_sample": (clip.name, audio, audio_mime_type(clip, audio[:16]))}
        try:
            response = self._send("POST", "/v1/audio/voices", data=data, files=files)
        finally:
            self._forget_voices()
        return UploadedVoice.from_json(self._json_object(response))

    def delete_voice(self, name: str) -> None:
        """Remove an uploaded voice; raise :class:`VoiceError` when the server has no such voice."""
        try:
            response = self._send(
                "DELETE", f"/v1/audio/voices/{quote(name.strip(), safe='')}", ok_statuses=(404,)
            )
        finally:
            self._forget_voices()
        if response.status_code == 404:
            raise VoiceError(
                f"There is no such voice '{name}' on the server at {self.base_url}; "
                "refresh the voice list to see the uploaded voices."
            )

    def resolve_voice_name(self, entry: CatalogEntry, name: str) -> str:
        """The server's spelling of voice ``name`` for ``entry``'s model, matched case-insensitively.

        Built-in speakers and uploaded voices are matched against ``GET /v1/audio/voices`` (the
        list is cached and fetched again once on a miss). Preset voices, which the server does not
        list, are matched against the catalog's ``preset_voices`` plus ``default``.

        Raises:
            UnknownVoice: no such name; the message lists the valid ones.
        """
        if entry.voice_mode is VoiceMode.PRESET_VOICES:
            valid = ["default", *entry.preset_voices]
            return _match_name(name, valid) or _raise_unknown(name, valid)
        with self._voices_lock:
            cached = self._voices_cache
        catalog = cached if cached is not None else self.voices()
        found = catalog.match(name)
        if found is None and cached is not None:
            catalog = self.voices()  # someone may have uploaded it since the list was read
            found = catalog.match(name)
        if found is None:
            valid = list(dict.fromkeys((*catalog.voices, *catalog.uploaded_names)))
            _raise_unknown(name, valid)
        return found

    def _forget_voices(self) -> None:
        with self._voices_lock:
            self._voices_cache = None

    # --- speech ---------------------------------------------------------------------------------

    def speech(self, entry: CatalogEntry, request: SpeechRequest) -> SpeechResult:
        """Synthesize ``request`` with the model of ``entry`` (``POST /v1/audio/speech``).

        Voice names are resolved first (:meth:`resolve_voice_name`), so an unknown voice is
        refused before any speech request. When the server rejects the request because prompt +
        ``max_new_tokens`` exceed its KV window, ``max_new_tokens`` is refit to
        ``kv_capacity - input_tokens`` and the request is sent once more; the identical request is
        never resent.

        Raises:
            VoiceError: the model cannot use the voice, or the clip cannot be sent.
            UnknownVoice: the voice name is not one the server (or catalog) knows.
            KVCapacityError: the request does not fit even after the refit.
            ServerUnreachable, ServerBusy: no connection, or 503 through every retry.
            RequestTimedOut: no answer within ``timeout_s`` (not resent).
            ServerMisconfigured: the server cannot encode the response format.
            SpeechError: any other server error; ``message`` is the server's ``error.message``.
        """
        check_voice_choice(entry, request.voice)
        if request.voice.kind in _NAMED_KINDS:
            resolved = self.resolve_voice_name(entry, request.voice.name)
            request = dataclasses.replace(request, voice=request.voice.with_name(resolved))
        payload = build_speech_payload(entry, request, inline_reference=self.inline_reference)
        try:
            return self._metered_post(payload, refitted=False)
        except SpeechError as exc:
            report = parse_kv_capacity(exc.message) if not isinstance(exc, ServerUnavailable) else None
            if report is None:
                raise
            fitted = report.fitting_max_new_tokens
            sent = payload.get("max_new_tokens", report.max_new_tokens)
            if fitted < 1 or fitted >= sent:
                raise kv_capacity_error(report, refitted=False, status_code=exc.status_code) from exc
            refit_payload = {**payload, "max_new_tokens": fitted}
        try:
            return self._metered_post(refit_payload, refitted=True)
        except SpeechError as exc:
            report = parse_kv_capacity(exc.message) if not isinstance(exc, ServerUnavailable) else None
            if report is None:
                raise
            raise kv_capacity_error(report, refitted=True, status_code=exc.status_code) from exc

    @contextlib.contextmanager
    def metered(self, meter: SpeechMeter) -> Iterator[None]:
        """Tell ``meter`` of every speech request sent meanwhile (sent, then answered, refused or ended)."""
        self._meter = meter
        try:
            yield
        finally:
            self._meter = None

    def _metered_post(self, payload: dict[str, Any], *, refitted: bool) -> SpeechResult:
        return metered_call(self._meter, lambda: self._post_speech(payload, refitted=refitted))

    def _post_speech(self, payload: dict[str, Any], *, refitted: bool) -> SpeechResult:
        response = self._send("POST", "/v1/audio/speech", json=payload, retry=self.speech_retry)
        audio = response.content
        content_type = response.headers.get("content-type", "")
        is_wav = str(payload.get("response_format", "wav")).strip().lower() == "wav"
        info = read_wav_info(audio) if is_wav else None
        return SpeechResult(
            audio=audio,
            content_type=content_type,
            sample_rate_hz=info.sample_rate_hz if info else None,
            channels=info.channels if info else None,
            duration_s=info.duration_s if info else None,
            finish_reason=response.headers.get("x-finish-reason"),
            request_id=response.headers.get("x-request-id"),
            max_new_tokens_sent=payload.get("max_new_tokens"),
            refitted=refitted,
            prompt_tokens=_int_header(response, "x-prompt-tokens"),
            completion_tokens=_int_header(response, "x-completion-tokens"),
        )

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

    def _send(
        self,
        method: str,
        path: str,
        *,
        ok_statuses: tuple[int, ...] = (),
        retry: RetryPolicy | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send one request, retried as ``retry`` (default ``self.retry``) says; raise for any error status.

        Statuses in ``ok_statuses`` are returned to the caller instead of raised.
        """
        attempt = 0
        while True:
            attempt += 1
            error: ServerUnavailable
            cause: Exception | None = None
            try:
                response = self._http.request(method, path, **kwargs)
            except _RETRYABLE_TRANSPORT_ERRORS as exc:
                error, cause = self._unreachable(exc, attempts=attempt), exc
            except httpx.TimeoutException as exc:
                # The server took the request and may still be busy with it: see RequestTimedOut.
                error, cause = RequestTimedOut(
                    f"The server at {self.base_url} did not answer {path} within {self.timeout_s:.0f} s. "
                    "It may be overloaded: lower the number of requests in flight, or raise the timeout."
                ), exc
            except httpx.HTTPError as exc:
                raise SpeechError(f"Request to {self.base_url}{path} failed: {exc}") from exc
            else:
                if response.is_success or response.status_code in ok_statuses:
                    return response
                if response.status_code not in (502, 503):
                    raise error_from_response(response)
                body = parse_error_body(response)
                kind = classify(body.message)
                if kind is ServerText.ENCODER_MISSING:
                    # Not transient: the remedy is another response format, not a retry.
                    raise ServerMisconfigured(body.message, status_code=503, error_type=body.error_type)
                if kind in (ServerText.ROUTER_UPSTREAM_FAILED, ServerText.ROUTER_NO_UPSTREAM):
                    error = self._router_unreachable(body.message, response.status_code, attempts=attempt)
                elif response.status_code == 502:
                    raise error_from_response(response)
                else:
                    error = self._busy(body.message, attempts=attempt)
            delay = (retry or self.retry).delay_s_for(error, attempt)
            if delay is None:
                raise error from cause
            self._sleep(delay)

    def _unreachable(self, exc: Exception, *, attempts: int = 1) -> ServerUnreachable:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return ServerUnreachable(
            f"Cannot reach the sgl-omni server at {self.base_url}{tries} ({exception_detail(exc)}). "
            "Start the server (Server tab, or python -m omni_web server start), wait until it is "
            "healthy, or check the URL."
        )

    def _router_unreachable(self, message: str, status: int, *, attempts: int) -> ServerUnreachable:
        """The router's 502 (a worker dropped the request) or 503 (no worker routable) as unreachable."""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        what = (
            "a worker of the server group dropped the request (it died or was cut off)"
            if status == 502
            else "no worker of the server group is routable"
        )
        return ServerUnreachable(
            f"The router at {self.base_url}: {what}{tries} (HTTP {status}: {message}). See the Server tab "
            "(CLI: python -m omni_web server status) for each worker.",
            status_code=status,
        )

    def _busy(self, message: str, *, attempts: int) -> ServerBusy:
        tries = f" through {attempts} attempts" if attempts > 1 else ""
        return ServerBusy(
            f"The server at {self.base_url} stayed busy{tries} (HTTP 503: {message}). "
            "Lower the number of requests in flight, or wait and try again.",
            status_code=503,
            error_type="server_error",
        )


def _match_name(name: str, valid: list[str]) -> str | None:
    wanted = name.strip().casefold()
    return next((candidate for candidate in valid if candidate.casefold() == wanted), None)


def _raise_unknown(name: str, valid: list[str]) -> str:
    raise UnknownVoice(name, valid)


def _read_clip(clip: Path) -> bytes:
    """The bytes of a clip to upload; :class:`VoiceError` when missing or over the server's limit."""
    try:
        size = clip.stat().st_size
        if size > MAX_REFERENCE_AUDIO_BYTES:
            raise VoiceError(
                f"Clip {clip.name} is {size / 2**20:.1f} MiB ({size} bytes); the server stores at most "
                f"{MAX_REFERENCE_AUDIO_BYTES // 2**20} MiB ({MAX_REFERENCE_AUDIO_BYTES} bytes). "
                "Use a shorter clip (1-30 s) or re-encode it."
            )
        return clip.read_bytes()
    except FileNotFoundError:
        raise VoiceError(f"Clip not found: {clip}. Choose another file.") from None
    except IsADirectoryError:
        raise VoiceError(f"{clip} is a folder, not an audio clip. Choose a file.") from None


def _int_header(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
