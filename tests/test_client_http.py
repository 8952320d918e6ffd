"""SpeechClient transport behaviour: health, models, error envelopes, retries (MockTransport only)."""

from __future__ import annotations

import httpx
import pytest

from omni_web.client import SpeechClient, is_loopback_url, normalize_base_url
from omni_web.client.errors import ServerText, classify, parse_kv_capacity
from omni_web.errors import (
    RequestTimedOut,
    ServerBusy,
    ServerError,
    ServerMisconfigured,
    ServerUnavailable,
    ServerUnreachable,
    SpeechError,
)
from omni_web.retry import NO_RETRY, FailureKind, failure_kind

BASE = "http://127.0.0.1:8100"


def make_client(handler, **kwargs) -> SpeechClient:
    kwargs.setdefault("sleep", lambda _s: None)
    return SpeechClient(BASE, transport=httpx.MockTransport(handler), **kwargs)


def envelope(message: str, *, status: int, error_type: str = "BadRequestError", param=None):
    return httpx.Response(
        status,
        json={"error": {"message": message, "type": error_type, "param": param, "code": status}},
    )


# --- URLs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8100", True),
        ("http://127.3.2.1:8100", True),
        ("http://localhost:8000", True),
        ("http://LOCALHOST:8000/", True),
        ("http://[::1]:8000", True),
        ("http://0.0.0.0:8000", True),
        ("http://gpu-box.lan:8100", False),
        ("http://192.168.1.20:8100", False),
        ("https://tts.example.com", False),
        ("not a url", False),
    ],
)
def test_is_loopback_url(url: str, expected: bool) -> None:
    assert is_loopback_url(url) is expected


def test_normalize_base_url_drops_slash_and_v1() -> None:
    assert normalize_base_url("http://h:1/v1/") == "http://h:1"
    assert normalize_base_url(" http://h:1/ ") == "http://h:1"


@pytest.mark.parametrize("url", ["gpu-box:8100", "ftp://h:1", ""])
def test_normalize_base_url_refuses_non_urls(url: str) -> None:
    with pytest.raises(ServerError, match="not a server URL"):
        normalize_base_url(url)


def test_local_server_decided_from_url_unless_given() -> None:
    handler = lambda r: httpx.Response(200)  # noqa: E731
    assert SpeechClient("http://localhost:1", transport=httpx.MockTransport(handler)).local_server
    assert not SpeechClient("http://gpu-box.lan:8100", transport=httpx.MockTransport(handler)).local_server
    forced = SpeechClient(
        "http://gpu-box.lan:8100", transport=httpx.MockTransport(handler), local_server=True
    )
    assert forced.local_server and not forced.inline_reference


# --- health ---------------------------------------------------------------------------------


def test_health_healthy() -> None:
    body = {"status": "healthy", "running": True, "stages": ["preprocessing", "tts_engine", "vocoder"]}
    with make_client(lambda r: httpx.Response(200, json=body)) as client:
        health = client.health()
    assert health.healthy and not health.starting
    assert health.status == "healthy" and health.http_status == 200
    assert health.stages == ("preprocessing", "tts_engine", "vocoder")
    assert health.body["running"] is True


def test_health_starting_is_a_status_not_an_error() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503, json={"status": "starting", "running": True, "stages": []})

    health = make_client(handler).health()
    assert health.starting and not health.healthy
    assert health.http_status == 503
    assert len(calls) == 1  # health is never retried


def test_health_unhealthy_and_foreign_bodies() -> None:
    assert (
        make_client(lambda r: httpx.Response(503, json={"status": "unhealthy"})).health().status
        == "unhealthy"
    )
    foreign = make_client(lambda r: httpx.Response(404, json={"detail": "Not Found"})).health()
    assert foreign.status == "unknown" and foreign.http_status == 404 and not foreign.healthy
    html = make_client(lambda r: httpx.Response(200, text="<html>hi</html>")).health()
    assert html.status == "unknown" and not html.healthy


def test_health_connection_refused_raises_server_unavailable() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(ServerUnavailable, match="Cannot reach the sgl-omni server at http://127.0.0.1:8100"):
        make_client(handler).health()
    assert len(calls) == 1


# --- models ---------------------------------------------------------------------------------


def test_model_ids() -> None:
    body = {
        "object": "list",
        "data": [
            {"id": "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice", "object": "model", "owned_by": "sglang-omni"},
        ],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.method == "GET" and request.url.path == "/v1/models"
        return httpx.Response(200, json=body)

    assert make_client(handler).model_ids() == ["Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice"]


def test_model_ids_not_json_is_a_clear_error() -> None:
    with pytest.raises(SpeechError, match="not JSON; is this an sgl-omni server"):
        make_client(lambda r: httpx.Response(200, text="hello")).model_ids()


# --- errors and retries ---------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 500])
def test_error_envelope_surfaces_message_and_is_not_retried(status: int) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return envelope("input must be a non-empty string", status=status, param="input")

    with pytest.raises(SpeechError) as info:
        make_client(handler).model_ids()
    assert info.value.message == "input must be a non-empty string"
    assert info.value.status_code == status
    assert info.value.error_type == "BadRequestError"
    assert info.value.param == "input"
    assert str(info.value) == f"HTTP {status}: input must be a non-empty string"
    assert len(calls) == 1


def test_fastapi_detail_bodies() -> None:
    with pytest.raises(SpeechError) as info:
        make_client(lambda r: httpx.Response(404, json={"detail": "Not Found"})).model_ids()
    assert info.value.message == "Not Found" and info.value.status_code == 404
    detail = {"detail": [{"loc": ["body", "consent"], "msg": "Field required", "type": "missing"}]}
    with pytest.raises(SpeechError) as info:
        make_client(lambda r: httpx.Response(422, json=detail)).model_ids()
    assert info.value.message == "consent: Field required"


def test_503_is_retried_with_backoff_then_succeeds() -> None:
    replies = [
        envelope("The request queue is full.", status=503, error_type="server_error"),
        envelope("The request queue is full.", status=503, error_type="server_error"),
        httpx.Response(200, json={"data": [{"id": "m"}]}),
    ]
    sleeps: list[float] = []
    client = make_client(lambda r: replies.pop(0), sleep=sleeps.append, backoff_s=0.5)
    assert client.model_ids() == ["m"]
    assert sleeps == [0.5, 1.0]


def test_503_through_every_retry_raises_server_unavailable() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return envelope("The request queue is full.", status=503, error_type="server_error")

    with pytest.raises(ServerBusy, match="stayed busy through 3 attempts") as info:
        make_client(handler, connect_retries=2).model_ids()
    assert info.value.status_code == 503 and failure_kind(info.value) is FailureKind.BUSY
    assert len(calls) == 3


def test_missing_encoder_503_is_not_retried() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return envelope(
            "PyAV or pydub is required for response_format='mp3'", status=503, error_type="server_error"
        )

    with pytest.raises(ServerMisconfigured) as info:
        make_client(handler).model_ids()
    assert info.value.message == "PyAV or pydub is required for response_format='mp3'"
    assert not isinstance(info.value, ServerUnavailable)  # nothing transient about it
    assert failure_kind(info.value) is FailureKind.PERMANENT
    assert len(calls) == 1


def test_connection_errors_retried_then_server_unavailable() -> None:
    calls = []
    sleeps: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(ServerUnreachable, match="after 4 attempts") as info:
        make_client(handler, connect_retries=3, sleep=sleeps.append, backoff_s=1.0).model_ids()
    assert failure_kind(info.value) is FailureKind.UNREACHABLE
    assert len(calls) == 4
    assert sleeps == [1.0, 2.0, 4.0]


def test_connection_reset_then_success() -> None:
    state = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        state["n"] += 1
        if state["n"] == 1:
            raise httpx.ReadError("Connection reset by peer", request=request)
        return httpx.Response(200, json={"data": [{"id": "m"}]})

    assert make_client(handler).model_ids() == ["m"]
    assert state["n"] == 2


def test_read_timeout_is_not_retried() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(RequestTimedOut, match="did not answer") as info:
        make_client(handler, sleep=lambda s: pytest.fail("a timed-out request was resent")).model_ids()
    assert len(calls) == 1
    assert failure_kind(info.value) is FailureKind.TIMED_OUT


def test_a_client_whose_caller_owns_the_retries_makes_one_attempt() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if request.url.path == "/v1/audio/speech":
            raise httpx.ConnectError("Connection refused", request=request)
        return httpx.Response(503, json={"error": {"message": "The request queue is full."}})

    client = make_client(handler, speech_retry=NO_RETRY, connect_retries=2, sleep=lambda s: None)
    with pytest.raises(ServerUnreachable):
        client._send("POST", "/v1/audio/speech", json={}, retry=client.speech_retry)
    assert len(calls) == 1
    with pytest.raises(ServerBusy):
        client.model_ids()  # the other calls keep the client's own retries
    assert len(calls) == 1 + 3


# --- the server-text table ------------------------------------------------------------------

KV_TEXT = (
    "Request requires more tokens than the thinker KV cache can hold (input_tokens=1200, "
    "max_new_tokens=3000, required_tokens=4200, kv_capacity=4095). Try setting a higher "
    "--thinker-mem-fraction-static value."
)


def test_kv_text_is_parsed() -> None:
    report = parse_kv_capacity(KV_TEXT)
    assert report is not None
    assert (report.input_tokens, report.max_new_tokens, report.required_tokens, report.kv_capacity) == (
        1200,
        3000,
        4200,
        4095,
    )
    assert report.fitting_max_new_tokens == 2895
    assert classify(KV_TEXT) is ServerText.KV_CAPACITY
    assert parse_kv_capacity("input must be a non-empty string") is None
    assert classify("input must be a non-empty string") is None
