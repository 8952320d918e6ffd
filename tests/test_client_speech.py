"""SpeechClient speech and voices against httpx.MockTransport: bodies, refits, voices, uploads."""

from __future__ import annotations

import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.errors import KVCapacityError, ServerUnavailable, SpeechError, UnknownVoice, VoiceError
from tests.audio import wav_bytes as _wav_bytes


def wav_bytes(seconds: float = 0.5, rate: int = 24000, channels: int = 1) -> bytes:
    return _wav_bytes(seconds, rate, channels, sample=b"\x00\x00")


LOOPBACK = "http://127.0.0.1:8100"
REMOTE = "http://gpu-box.lan:8100"



def kv_text(input_tokens: int, max_new_tokens: int, kv_capacity: int) -> str:
    return (
        "Request requires more tokens than the thinker KV cache can hold "
        f"(input_tokens={input_tokens}, max_new_tokens={max_new_tokens}, "
        f"required_tokens={input_tokens + max_new_tokens}, kv_capacity={kv_capacity}). "
        "Try setting a higher --thinker-mem-fraction-static value."
    )


def error(message: str, status: int = 400) -> httpx.Response:
    kind = "BadRequestError" if status == 400 else "server_error"
    return httpx.Response(
        status, json={"error": {"message": message, "type": kind, "param": None, "code": status}}
    )


class FakeServer:
    """A scripted server: records every request; speech replies come from a queue or default to audio."""

    def __init__(self, *, voices: list[str] | None = None, uploaded: list[dict] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.speech_replies: list[httpx.Response] = []
        self.voices = voices if voices is not None else ["default"]
        self.uploaded = uploaded or []
        self.audio = wav_bytes(1.5, rate=44100, channels=2)
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.requests.append(request)
        path = request.url.path
        if path == "/v1/audio/voices" and request.method == "GET":
            return httpx.Response(
                200, json={"voices": self.voices, "uploaded_voices": self.uploaded, "cache_stats": {}}
            )
        if path == "/v1/audio/speech":
            with self.lock:
                if self.speech_replies:
                    return self.speech_replies.pop(0)
            return httpx.Response(
                200,
                content=self.audio,
                headers={
                    "content-type": "audio/wav",
                    "x-finish-reason": "stop",
                    "x-request-id": "speech-1234",
                    "x-prompt-tokens": "40",
                    "x-completion-tokens": "90",
                },
            )
        return httpx.Response(404, json={"detail": "Not Found"})

    def speech_bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests if r.url.path == "/v1/audio/speech"]


def client_for(server: FakeServer, url: str = LOOPBACK, **kwargs) -> SpeechClient:
    kwargs.setdefault("sleep", lambda _s: None)
    return SpeechClient(url, transport=httpx.MockTransport(server), **kwargs)


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    path = tmp_path / "ref.wav"
    path.write_bytes(wav_bytes(2.0))
    return path


# --- results --------------------------------------------------------------------------------


def test_speech_result_reads_the_wav_header() -> None:
    server = FakeServer(voices=["default", "vivian", "serena"])
    result = client_for(server).speech(
        get_entry("qwen3_tts_0_6b_customvoice"), SpeechRequest("Hello.", VoiceChoice.speaker("Vivian"))
    )
    # The header says 44.1 kHz stereo although the catalog says 24 kHz mono: the header wins.
    assert (result.sample_rate_hz, result.channels) == (44100, 2)
    assert result.duration_s == pytest.approx(1.5)
    assert result.audio == server.audio and result.size_bytes == len(server.audio)
    assert result.content_type == "audio/wav"
    assert (result.finish_reason, result.request_id) == ("stop", "speech-1234")
    assert (result.prompt_tokens, result.completion_tokens) == (40, 90)
    assert result.refitted is False and result.max_new_tokens_sent is None


def test_non_wav_body_for_wav_request_is_a_clear_error() -> None:
    server = FakeServer()
    server.speech_replies.append(
        httpx.Response(200, content=b"not audio", headers={"content-type": "audio/wav"})
    )
    with pytest.raises(SpeechError, match="not a readable WAV"):
        client_for(server).speech(get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.default()))


# --- voice names ----------------------------------------------------------------------------


def test_speaker_name_matched_case_insensitively_and_sent_in_server_spelling() -> None:
    server = FakeServer(voices=["aiden", "default", "serena", "vivian"])
    client = client_for(server)
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    client.speech(entry, SpeechRequest("One.", VoiceChoice.speaker("Vivian")))
    client.speech(entry, SpeechRequest("Two.", VoiceChoice.speaker("SERENA")))
    assert [b["voice"] for b in server.speech_bodies()] == ["vivian", "serena"]
    # The voice list is read once and cached.
    assert sum(r.url.path == "/v1/audio/voices" for r in server.requests) == 1


def test_unknown_voice_refused_before_any_speech_request() -> None:
    server = FakeServer(voices=["default", "vivian", "serena"])
    with pytest.raises(UnknownVoice) as info:
        client_for(server).speech(
            get_entry("qwen3_tts_0_6b_customvoice"), SpeechRequest("Hi.", VoiceChoice.speaker("Nobody"))
        )
    assert info.value.valid == ["default", "vivian", "serena"]
    assert "Unknown voice 'Nobody'. Valid voices: default, vivian, serena." in str(info.value)
    assert not any(r.url.path == "/v1/audio/speech" for r in server.requests)


def test_cached_list_is_refreshed_once_on_a_miss() -> None:
    server = FakeServer(voices=["default"])
    client = client_for(server)
    entry = get_entry("higgs_audio_v3_tts")
    assert client.resolve_voice_name(entry, "default") == "default"
    server.voices = ["default", "Narrator"]  # uploaded elsewhere since
    assert client.resolve_voice_name(entry, "narrator") == "Narrator"
    assert sum(r.url.path == "/v1/audio/voices" for r in server.requests) == 2


def test_voxtral_presets_checked_against_the_catalog_without_requests() -> None:
    server = FakeServer()
    client = client_for(server)
    entry = get_entry("voxtral_tts")
    assert client.resolve_voice_name(entry, "Casual_Male") == "casual_male"
    with pytest.raises(UnknownVoice, match="Valid voices: default, cheerful_female"):
        client.resolve_voice_name(entry, "pirate")
    with pytest.raises(UnknownVoice):
        client.speech(entry, SpeechRequest("Hi.", VoiceChoice.preset("pirate")))
    assert server.requests == []


def test_voxtral_preset_speech_body() -> None:
    server = FakeServer()
    client_for(server).speech(
        get_entry("voxtral_tts"),
        SpeechRequest("Bonjour.", VoiceChoice.preset("CASUAL_FEMALE"), language="French", seed=9),
    )
    assert server.speech_bodies() == [
        {"input": "Bonjour.", "voice": "casual_female", "response_format": "wav"}
    ]


def test_uploaded_voice_speech_body() -> None:
    server = FakeServer(voices=["default", "Narrator"], uploaded=[{"name": "Narrator", "consent": "yes"}])
    client_for(server).speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.uploaded("narrator"))
    )
    assert server.speech_bodies() == [
        {"input": "T.", "voice": "Narrator", "response_format": "wav", "max_new_tokens": 3000}
    ]


def test_voice_kind_mismatch_refused_without_requests(clip: Path) -> None:
    server = FakeServer()
    with pytest.raises(VoiceError, match="cannot use a clone voice"):
        client_for(server).speech(
            get_entry("qwen3_tts_0_6b_customvoice"), SpeechRequest("T.", VoiceChoice.clone(clip))
        )
    assert server.requests == []


# --- reference clips: path vs base64 --------------------------------------------------------


@pytest.mark.parametrize("url", ["http://127.0.0.1:8100", "http://localhost:8100", "http://[::1]:8100"])
def test_loopback_server_gets_the_local_path(url: str, clip: Path) -> None:
    server = FakeServer()
    client_for(server, url).speech(
        get_entry("qwen3_tts_0_6b_base"), SpeechRequest("T.", VoiceChoice.clone(clip, "Hi."))
    )
    assert server.speech_bodies() == [
        {"input": "T.", "ref_audio": str(clip.resolve()), "ref_text": "Hi.", "response_format": "wav"}
    ]


def test_remote_server_gets_a_base64_data_url(clip: Path) -> None:
    server = FakeServer()
    client_for(server, REMOTE).speech(
        get_entry("qwen3_tts_0_6b_base"), SpeechRequest("T.", VoiceChoice.clone(clip))
    )
    (body,) = server.speech_bodies()
    assert set(body) == {"input", "ref_audio", "response_format"}
    header, _, data = body["ref_audio"].partition(",")
    assert header == "data:audio/wav;base64"
    assert base64.b64decode(data) == clip.read_bytes()
    assert server.requests[0].url.host == "gpu-box.lan"


def test_local_server_flag_overrides_the_url(clip: Path) -> None:
    server = FakeServer()
    client_for(server, REMOTE, local_server=True).speech(
        get_entry("moss_tts"), SpeechRequest("T.", VoiceChoice.clone(clip))
    )
    assert server.speech_bodies()[0]["ref_audio"] == str(clip.resolve())
    server = FakeServer()
    client_for(server, LOOPBACK, local_server=False).speech(
        get_entry("moss_tts"), SpeechRequest("T.", VoiceChoice.clone(clip))
    )
    assert server.speech_bodies()[0]["ref_audio"].startswith("data:audio/wav;base64,")


# --- KV capacity refit ----------------------------------------------------------------------


def test_kv_error_refits_max_new_tokens_and_resends_once(clip: Path) -> None:
    server = FakeServer()
    server.speech_replies.append(error(kv_text(1500, 3000, 4095)))
    result = client_for(server).speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.clone(clip))
    )
    first, second = server.speech_bodies()
    assert first["max_new_tokens"] == 3000
    assert second["max_new_tokens"] == 4095 - 1500
    assert {k: v for k, v in first.items() if k != "max_new_tokens"} == {
        k: v for k, v in second.items() if k != "max_new_tokens"
    }
    assert first != second
    assert result.refitted and result.max_new_tokens_sent == 2595


def test_kv_error_without_max_new_tokens_sent_uses_the_reported_default() -> None:
    server = FakeServer(voices=["default", "vivian"])
    server.speech_replies.append(error(kv_text(300, 2048, 2000)))
    result = client_for(server).speech(
        get_entry("qwen3_tts_0_6b_customvoice"), SpeechRequest("T.", VoiceChoice.speaker("vivian"))
    )
    first, second = server.speech_bodies()
    assert "max_new_tokens" not in first and second["max_new_tokens"] == 1700
    assert result.refitted


def test_second_kv_error_raises_kv_capacity_error(clip: Path) -> None:
    server = FakeServer()
    server.speech_replies += [error(kv_text(1500, 3000, 4095)), error(kv_text(1600, 2595, 4095))]
    with pytest.raises(KVCapacityError) as info:
        client_for(server).speech(
            get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.clone(clip))
        )
    bodies = server.speech_bodies()
    assert len(bodies) == 2 and bodies[0] != bodies[1]
    assert info.value.kv_capacity == 4095 and info.value.status_code == 400
    assert "shorter reference clip" in str(info.value) and "--mem-fraction-static" in str(info.value)


def test_kv_error_with_no_room_is_not_resent(clip: Path) -> None:
    server = FakeServer()
    server.speech_replies.append(error(kv_text(4095, 3000, 4095)))
    with pytest.raises(KVCapacityError, match="leaving no room") as info:
        client_for(server).speech(
            get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.clone(clip))
        )
    assert len(server.speech_bodies()) == 1
    assert info.value.input_tokens == 4095


# --- errors and retries on speech -----------------------------------------------------------


@pytest.mark.parametrize("status", [400, 500])
def test_speech_errors_not_retried_and_carry_the_server_message(status: int) -> None:
    server = FakeServer()
    message = "Voxtral TTS does not support these /v1/audio/speech fields: seed. Supported model-specific fields are voice and max_new_tokens."
    server.speech_replies.append(error(message, status))
    with pytest.raises(SpeechError) as info:
        client_for(server).speech(get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.default()))
    assert info.value.message == message and info.value.status_code == status
    assert not isinstance(info.value, KVCapacityError)
    assert len(server.speech_bodies()) == 1


def test_speech_503_retried_then_success() -> None:
    server = FakeServer()
    server.speech_replies += [error("The request queue is full.", 503)] * 2
    sleeps: list[float] = []
    result = client_for(server, sleep=sleeps.append).speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.default())
    )
    assert result.duration_s == pytest.approx(1.5)
    assert len(server.speech_bodies()) == 3 and sleeps == [1.0, 2.0]


def test_speech_connection_errors_end_in_server_unavailable() -> None:
    attempts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    client = SpeechClient(
        LOOPBACK, transport=httpx.MockTransport(handler), sleep=lambda _s: None, connect_retries=2
    )
    with pytest.raises(ServerUnavailable, match="after 3 attempts"):
        client.speech(get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.default()))
    assert len(attempts) == 3


def test_concurrent_speech_from_many_threads() -> None:
    server = FakeServer(voices=["default", "vivian"])
    client = client_for(server)
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    texts = [f"Sentence {i}." for i in range(48)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(
            pool.map(lambda t: client.speech(entry, SpeechRequest(t, VoiceChoice.speaker("Vivian"))), texts)
        )
    assert all(r.duration_s == pytest.approx(1.5) for r in results)
    assert sorted(b["input"] for b in server.speech_bodies()) == sorted(texts)


# --- voices endpoints -----------------------------------------------------------------------


def test_voices_listing() -> None:
    uploaded = [
        {
            "name": "Narrator",
            "consent": "mine",
            "created_at": 1700000000,
            "file_size": 1234,
            "mime_type": "audio/wav",
            "ref_text": "Hi.",
        }
    ]
    catalog = client_for(FakeServer(voices=["default", "Narrator"], uploaded=uploaded)).voices()
    assert catalog.voices == ("default", "Narrator")
    assert catalog.uploaded_names == ("Narrator",)
    (voice,) = catalog.uploaded
    assert (voice.created_at, voice.file_size, voice.mime_type, voice.ref_text) == (
        1700000000,
        1234,
        "audio/wav",
        "Hi.",
    )


def test_upload_voice_sends_multipart_fields(clip: Path) -> None:
    seen: dict = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["method"], seen["path"] = request.method, request.url.path
        seen["content_type"] = request.headers["content-type"]
        seen["body"] = request.read()
        return httpx.Response(
            200,
            json={
                "name": "Narrator",
                "consent": "I agree",
                "created_at": 5,
                "file_size": 96044,
                "mime_type": "audio/wav",
                "ref_text": "Hello.",
            },
        )

    client = SpeechClient(LOOPBACK, transport=httpx.MockTransport(handler))
    voice = client.upload_voice("Narrator", clip, consent="I agree", ref_text="Hello.")
    assert (seen["method"], seen["path"]) == ("POST", "/v1/audio/voices")
    assert seen["content_type"].startswith("multipart/form-data; boundary=")
    body = seen["body"]
    assert b'name="name"\r\n\r\nNarrator\r\n' in body
    assert b'name="consent"\r\n\r\nI agree\r\n' in body
    assert b'name="ref_text"\r\n\r\nHello.\r\n' in body
    assert b'name="audio_sample"; filename="ref.wav"\r\nContent-Type: audio/wav\r\n\r\n' in body
    assert clip.read_bytes() in body
    assert voice.name == "Narrator" and voice.ref_text == "Hello."


def test_upload_without_transcript_sends_no_ref_text(clip: Path) -> None:
    bodies: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        return httpx.Response(200, json={"name": "n1", "consent": "ok"})

    SpeechClient(LOOPBACK, transport=httpx.MockTransport(handler)).upload_voice("n1", clip, consent="ok")
    assert b'name="ref_text"' not in bodies[0]


@pytest.mark.parametrize(
    ("name", "consent", "message"),
    [("bad name!", "ok", "not allowed"), ("Default", "ok", "reserved"), ("n1", "  ", "consent")],
)
def test_upload_refuses_bad_input_before_sending(clip: Path, name: str, consent: str, message: str) -> None:
    server = FakeServer()
    with pytest.raises(VoiceError, match=message):
        client_for(server).upload_voice(name, clip, consent=consent)
    assert server.requests == []


def test_upload_server_refusal_surfaces_message(clip: Path) -> None:
    client = SpeechClient(
        LOOPBACK, transport=httpx.MockTransport(lambda r: error("audio_sample must be at least 1.0s"))
    )
    with pytest.raises(SpeechError) as info:
        client.upload_voice("n1", clip, consent="ok")
    assert info.value.message == "audio_sample must be at least 1.0s"


def test_delete_voice_and_404() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        name = request.url.path.rsplit("/", 1)[-1]
        if name == "Narrator":
            return httpx.Response(
                200, json={"success": True, "message": "Voice 'Narrator' deleted successfully"}
            )
        return httpx.Response(404, json={"success": False, "error": f"Voice '{name}' not found"})

    client = SpeechClient(LOOPBACK, transport=httpx.MockTransport(handler))
    assert client.delete_voice("Narrator") is None
    assert seen[0].method == "DELETE" and seen[0].url.path == "/v1/audio/voices/Narrator"
    with pytest.raises(VoiceError, match="no such voice 'ghost'"):
        client.delete_voice("ghost")
    assert len(seen) == 2  # a 404 is not retried


def test_upload_and_delete_invalidate_the_voice_cache(clip: Path) -> None:
    server = FakeServer(voices=["default"])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/audio/voices" and request.method == "POST":
            server.voices = ["default", "n1"]
            return httpx.Response(200, json={"name": "n1", "consent": "ok"})
        return server(request)

    client = SpeechClient(LOOPBACK, transport=httpx.MockTransport(handler))
    entry = get_entry("higgs_audio_v3_tts")
    client.voices()
    client.upload_voice("n1", clip, consent="ok")
    assert client.resolve_voice_name(entry, "N1") == "n1"
    gets = [r for r in server.requests if r.url.path == "/v1/audio/voices"]
    assert len(gets) == 2


def test_non_wav_format_has_no_header_facts() -> None:
    server = FakeServer()
    server.speech_replies.append(
        httpx.Response(200, content=b"\xff\xfb\x90\x00" * 10, headers={"content-type": "audio/mpeg"})
    )
    result = client_for(server).speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("T.", VoiceChoice.default(), response_format="mp3")
    )
    assert server.speech_bodies()[0]["response_format"] == "mp3"
    assert result.content_type == "audio/mpeg"
    assert (result.sample_rate_hz, result.channels, result.duration_s) == (None, None, None)
