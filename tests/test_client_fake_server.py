"""SpeechClient against the fake sgl-omni server over real loopback HTTP (tests/fakes/)."""

from __future__ import annotations

import io
import json
import math
import struct
import subprocess
import wave
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, parse_kv_capacity
from omni_web.errors import KVCapacityError, UnknownVoice, VoiceError
from tests.fakes.sgl_omni import FakeServer, start_fake_server

pytestmark = pytest.mark.slow  # subprocesses, real ffprobe

REPO = Path(__file__).resolve().parent.parent
HIGGS_CONFIG = REPO / "configs" / "higgs_audio_v3_tts.yaml"


def tone_wav(path: Path, seconds: float, rate: int = 24000) -> Path:
    """A mono 16-bit sine clip (not silent: the server refuses silent voice uploads)."""
    frames = int(seconds * rate)
    samples = (int(8000 * math.sin(2 * math.pi * 220 * i / rate)) for i in range(frames))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    path.write_bytes(buffer.getvalue())
    return path


def ffprobe_duration_s(audio: bytes, tmp_path: Path) -> float:
    path = tmp_path / "probe.wav"
    path.write_bytes(audio)
    out = subprocess.run(  # noqa: S603 - fixed argv
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        capture_output=True, text=True, check=True,
    )
    return float(out.stdout.strip())


class Running:
    """A fake server plus its request log and a client for it."""

    def __init__(self, server: FakeServer, log: Path, client: SpeechClient) -> None:
        self.server = server
        self.log = log
        self.client = client

    def speech_bodies(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


@pytest.fixture
def launch(tmp_path: Path) -> Iterator:
    started: list[Running] = []

    def _launch(
        model_key: str, *, env: dict[str, str] | None = None, extra_args=(), local_server=None
    ) -> Running:
        log = tmp_path / f"requests-{len(started)}.jsonl"
        server = start_fake_server(
            model_key,
            env={"FAKE_SGL_REQUEST_LOG": str(log), "FAKE_SGL_WARMUP_S": "0", **(env or {})},
            extra_args=list(extra_args),
            log_path=tmp_path / f"server-{len(started)}.log",
        )
        client = SpeechClient(server.base_url, local_server=local_server, backoff_s=0.01, timeout_s=60)
        running = Running(server, log, client)
        started.append(running)
        return running

    yield _launch
    for running in started:
        running.client.close()
        running.server.stop()


def test_health_models_and_customvoice_speaker(launch, tmp_path: Path) -> None:
    run = launch("qwen3_tts_0_6b_customvoice")
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    health = run.client.health()
    assert health.healthy and "tts_engine" in health.stages
    assert run.client.model_ids() == [entry.repo_id]
    result = run.client.speech(entry, SpeechRequest("Hello there, reader.", VoiceChoice.speaker("vivian")))
    served_name = run.client.voices().match("vivian")
    assert served_name is not None
    assert run.speech_bodies() == [
        {"input": "Hello there, reader.", "voice": served_name, "response_format": "wav"}
    ]
    assert result.sample_rate_hz == 24000 and result.channels == 1
    assert result.duration_s == pytest.approx(ffprobe_duration_s(result.audio, tmp_path), abs=0.01)
    assert result.duration_s > 0.5


def test_unknown_speaker_refused_before_any_speech(launch) -> None:
    run = launch("qwen3_tts_0_6b_customvoice")
    with pytest.raises(UnknownVoice, match="Valid voices: .*default"):
        run.client.speech(
            get_entry("qwen3_tts_0_6b_customvoice"), SpeechRequest("Hi.", VoiceChoice.speaker("Nobody"))
        )
    assert run.speech_bodies() == []


def test_clone_by_local_path_on_loopback(launch, tmp_path: Path) -> None:
    run = launch("qwen3_tts_0_6b_base")
    clip = tone_wav(tmp_path / "ref.wav", 3.0)
    result = run.client.speech(
        get_entry("qwen3_tts_0_6b_base"),
        SpeechRequest("Cloned words.", VoiceChoice.clone(clip, "A transcript.")),
    )
    assert run.speech_bodies() == [
        {
            "input": "Cloned words.",
            "ref_audio": str(clip.resolve()),
            "ref_text": "A transcript.",
            "response_format": "wav",
        }
    ]
    assert result.duration_s and result.duration_s > 0


def test_clone_as_base64_for_a_remote_server(launch, tmp_path: Path) -> None:
    run = launch("higgs_audio_v3_tts", local_server=False, extra_args=["--config", str(HIGGS_CONFIG)])
    clip = tone_wav(tmp_path / "ref.wav", 3.0)
    result = run.client.speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("Inline clip.", VoiceChoice.clone(clip))
    )
    (body,) = run.speech_bodies()
    assert body["ref_audio"].startswith("data:audio/wav;base64,")
    assert "ref_text" not in body and body["max_new_tokens"] == 3000
    assert result.sample_rate_hz == 24000 and not result.refitted


def test_kv_refit_end_to_end_on_higgs(launch, tmp_path: Path) -> None:
    run = launch("higgs_audio_v3_tts", extra_args=["--config", str(HIGGS_CONFIG)])
    clip = tone_wav(tmp_path / "long-ref.wav", 60.0)  # ~1500 prompt tokens: prompt + 3000 > 4095
    entry = get_entry("higgs_audio_v3_tts")
    result = run.client.speech(entry, SpeechRequest("A short line of narration.", VoiceChoice.clone(clip)))
    first, second = run.speech_bodies()
    assert first["max_new_tokens"] == 3000
    # Ask the server itself what the first request needed, to check the refit arithmetic.
    answer = httpx.post(f"{run.server.base_url}/v1/audio/speech", json=first, timeout=30)
    assert answer.status_code == 400
    report = parse_kv_capacity(answer.json()["error"]["message"])
    assert report is not None
    assert second["max_new_tokens"] == report.kv_capacity - report.input_tokens
    assert {k: v for k, v in first.items() if k != "max_new_tokens"} == {
        k: v for k, v in second.items() if k != "max_new_tokens"
    }
    assert result.refitted and result.max_new_tokens_sent == second["max_new_tokens"]
    assert result.duration_s and result.duration_s > 0


def test_kv_capacity_too_small_raises_without_resend(launch, tmp_path: Path) -> None:
    run = launch(
        "higgs_audio_v3_tts", env={"FAKE_SGL_KV_CAPACITY": "200"}, extra_args=["--config", str(HIGGS_CONFIG)]
    )
    clip = tone_wav(tmp_path / "long-ref.wav", 30.0)  # ~750 prompt tokens > 200
    with pytest.raises(KVCapacityError, match="shorter reference clip") as info:
        run.client.speech(get_entry("higgs_audio_v3_tts"), SpeechRequest("Words.", VoiceChoice.clone(clip)))
    assert info.value.kv_capacity == 200
    assert len(run.speech_bodies()) == 1


def test_503_queue_full_is_retried(launch) -> None:
    run = launch("higgs_audio_v3_tts", env={"FAKE_SGL_FAIL_NEXT_503": "2"})
    result = run.client.speech(
        get_entry("higgs_audio_v3_tts"), SpeechRequest("Retry me.", VoiceChoice.default())
    )
    assert result.duration_s and result.duration_s > 0
    bodies = run.speech_bodies()  # the fake logs each body before admission: 2 refused + 1 served
    assert len(bodies) == 3 and all(body == bodies[0] for body in bodies)


def test_upload_list_use_delete_voice(launch, tmp_path: Path) -> None:
    run = launch("higgs_audio_v3_tts", extra_args=["--config", str(HIGGS_CONFIG)])
    entry = get_entry("higgs_audio_v3_tts")
    clip = tone_wav(tmp_path / "narrator.wav", 3.0)
    uploaded = run.client.upload_voice(
        "Narrator", clip, consent="I recorded this myself.", ref_text="Some words."
    )
    assert uploaded.name == "Narrator" and uploaded.ref_text == "Some words."
    catalog = run.client.voices()
    assert "Narrator" in catalog.uploaded_names and catalog.match("narrator") == "Narrator"
    result = run.client.speech(
        entry, SpeechRequest("Spoken by the upload.", VoiceChoice.uploaded("NARRATOR"))
    )
    assert run.speech_bodies()[-1] == {
        "input": "Spoken by the upload.",
        "voice": "Narrator",
        "response_format": "wav",
        "max_new_tokens": 3000,
    }
    assert result.duration_s and result.duration_s > 0
    run.client.delete_voice("narrator")
    assert "Narrator" not in run.client.voices().uploaded_names
    with pytest.raises(VoiceError, match="no such voice"):
        run.client.delete_voice("narrator")
    bodies_before = len(run.speech_bodies())
    with pytest.raises(UnknownVoice):
        run.client.speech(entry, SpeechRequest("Gone.", VoiceChoice.uploaded("Narrator")))
    assert len(run.speech_bodies()) == bodies_before


def test_voxtral_preset_sends_no_extra_fields(launch) -> None:
    run = launch("voxtral_tts")
    request = SpeechRequest("Bonjour à tous.", VoiceChoice.preset("Casual_Male"), language="French", seed=7)
    result = run.client.speech(get_entry("voxtral_tts"), request)
    assert run.speech_bodies() == [
        {"input": "Bonjour à tous.", "voice": "casual_male", "response_format": "wav"}
    ]
    assert result.sample_rate_hz == 24000


def test_voice_design(launch) -> None:
    run = launch("qwen3_tts_1_7b_voicedesign")
    result = run.client.speech(
        get_entry("qwen3_tts_1_7b_voicedesign"),
        SpeechRequest("Designed.", VoiceChoice.design("A warm, low female voice, speaking slowly.")),
    )
    assert run.speech_bodies() == [
        {
            "input": "Designed.",
            "task_type": "VoiceDesign",
            "instructions": "A warm, low female voice, speaking slowly.",
            "response_format": "wav",
        }
    ]
    assert result.duration_s and result.duration_s > 0
