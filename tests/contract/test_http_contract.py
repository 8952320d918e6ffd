"""Our SpeechClient against the real sglang-omni 0.1.9 HTTP server.

Each server here is `sgl-omni serve` itself, started in the contract venv with the argv our serve
builder makes for a catalog entry (`harness/run_app.py`); only the GPU pipeline behind the real
client is the stub (`harness/stub_pipeline.py`). Every assertion is about what that server
answered: status codes, its exact messages, and the audio it sent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice, parse_kv_capacity
from omni_web.errors import KVCapacityError, SpeechError, UnknownVoice, VoiceError
from tests.contract.conftest import HIGGS_KV_CAPACITY, REFERENCE_TEXT, ContractServer
from tests.contract.fake_hub import QWEN3_CUSTOM_VOICE_SPEAKERS

pytestmark = pytest.mark.contract

SENTENCE = "The lighthouse keeper climbed the stairs at dusk and lit the great lamp."
MAX_INPUT_CHARS = 4096


def ffprobe_audio(audio: bytes, tmp_path: Path) -> dict[str, float | int]:
    """Sample rate, channels and duration of an audio body, as ffprobe reads it."""
    path = tmp_path / "speech.bin"
    path.write_bytes(audio)
    out = subprocess.run(  # noqa: S603
        [
            "ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
            "stream=sample_rate,channels:format=duration", "-of", "json", str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out)
    stream = data["streams"][0]
    return {
        "sample_rate": int(stream["sample_rate"]),
        "channels": int(stream["channels"]),
        "duration": float(data["format"]["duration"]),
    }


def raw_speech(server: ContractServer, body: dict[str, object]) -> httpx.Response:
    """One POST /v1/audio/speech with a body we write by hand (not through our client)."""
    return httpx.post(f"{server.base_url}/v1/audio/speech", json=body, timeout=120)


def error_of(response: httpx.Response) -> dict[str, object]:
    return response.json()["error"]


def assert_speech(result: object, entry: CatalogEntry, tmp_path: Path) -> None:
    """The result is WAV speech at the model's native rate, as ffprobe sees it."""
    probed = ffprobe_audio(result.audio, tmp_path)
    assert result.content_type == "audio/wav"
    assert probed["sample_rate"] == result.sample_rate_hz == entry.sample_rate_hz
    assert probed["channels"] == result.channels == 1
    assert probed["duration"] == pytest.approx(result.duration_s, abs=0.01)
    assert probed["duration"] > 1.0
    assert result.finish_reason == "stop"


# --- server identity --------------------------------------------------------------------------


def test_health_and_models_of_the_real_app(qwen_custom: ContractServer) -> None:
    with SpeechClient(qwen_custom.base_url) as client:
        health = client.health()
        assert health.healthy and health.status == "healthy"
        assert set(health.stages) == {"preprocessing", "tts_engine", "vocoder"}
        # --model-name is not in our argv, so /v1/models reports the pipeline name: the model path.
        assert client.model_ids() == [qwen_custom.entry.repo_id]
    # The real warmup (one streaming request in the checkpoint's mode) ran through the stub.
    assert "Server warmup of 1 request(s) finished" in qwen_custom.log_path.read_text()


# --- Qwen3-TTS CustomVoice --------------------------------------------------------------------


def test_customvoice_lists_checkpoint_speakers(qwen_custom: ContractServer) -> None:
    with SpeechClient(qwen_custom.base_url) as client:
        catalog = client.voices()
    assert set(catalog.voices) == {"default", *QWEN3_CUSTOM_VOICE_SPEAKERS}
    assert catalog.uploaded == ()


@pytest.mark.parametrize("name", ["Vivian", "VIVIAN", " ryan "])
def test_customvoice_speaker_any_case(qwen_custom: ContractServer, name: str, tmp_path: Path) -> None:
    entry = qwen_custom.entry
    with SpeechClient(qwen_custom.base_url) as client:
        result = client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.speaker(name), language="English"))
    assert_speech(result, entry, tmp_path)


def test_server_itself_matches_speakers_case_insensitively(qwen_custom: ContractServer) -> None:
    response = raw_speech(qwen_custom, {"input": SENTENCE, "voice": "SoHeE"})
    assert response.status_code == 200, response.text


def test_customvoice_unknown_speaker(qwen_custom: ContractServer) -> None:
    response = raw_speech(qwen_custom, {"input": SENTENCE, "voice": "Bob"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["message"] == (
        "Unknown voice 'Bob'. Supported voices: default, " + ", ".join(QWEN3_CUSTOM_VOICE_SPEAKERS)
    )
    assert (error["type"], error["param"], error["code"]) == ("BadRequestError", "voice", 400)
    # Our client refuses the same name before sending any speech request.
    with SpeechClient(qwen_custom.base_url) as client, pytest.raises(UnknownVoice) as info:
        client.speech(qwen_custom.entry, SpeechRequest(SENTENCE, VoiceChoice.speaker("Bob")))
    assert set(info.value.valid) == {"default", *QWEN3_CUSTOM_VOICE_SPEAKERS}


def test_customvoice_refuses_a_reference(qwen_custom: ContractServer, reference_clip: Path) -> None:
    response = raw_speech(qwen_custom, {"input": SENTENCE, "ref_audio": str(reference_clip)})
    assert response.status_code == 400
    assert error_of(response)["message"] == "ref_audio is not supported by this model"


# --- Qwen3-TTS VoiceDesign --------------------------------------------------------------------


def test_voicedesign(qwen_design: ContractServer, tmp_path: Path) -> None:
    entry = qwen_design.entry
    voice = VoiceChoice.design("A warm, low female voice, speaking slowly.")
    with SpeechClient(qwen_design.base_url) as client:
        result = client.speech(entry, SpeechRequest(SENTENCE, voice))
    assert_speech(result, entry, tmp_path)


def test_voicedesign_needs_task_type(qwen_design: ContractServer) -> None:
    # Without task_type the request means CustomVoice, which this checkpoint cannot do; the text
    # comes from the real validate_qwen3_tts_model_task and maps to 400.
    response = raw_speech(qwen_design, {"input": SENTENCE, "instructions": "A calm voice."})
    assert response.status_code == 400
    assert error_of(response)["message"] == "Qwen3-TTS VoiceDesign checkpoint does not support CustomVoice"
    missing = raw_speech(qwen_design, {"input": SENTENCE, "task_type": "VoiceDesign"})
    assert missing.status_code == 400
    assert error_of(missing)["message"] == "Qwen3-TTS VoiceDesign requires instructions"


# --- Qwen3-TTS Base: clone and uploaded voices -------------------------------------------------


def test_clone_by_local_path(qwen_base: ContractServer, reference_clip: Path, tmp_path: Path) -> None:
    entry = qwen_base.entry
    with SpeechClient(qwen_base.base_url) as client:
        assert client.local_server
        result = client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.clone(reference_clip,
                                                                                REFERENCE_TEXT)))
    assert_speech(result, entry, tmp_path)


def test_clone_by_base64_data_url(qwen_base: ContractServer, reference_clip: Path, tmp_path: Path) -> None:
    entry = qwen_base.entry
    with SpeechClient(qwen_base.base_url, local_server=False) as client:
        assert client.inline_reference
        result = client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.clone(reference_clip)))
    assert_speech(result, entry, tmp_path)


def test_base_checkpoint_refuses_text_only(qwen_base: ContractServer) -> None:
    response = raw_speech(qwen_base, {"input": SENTENCE})
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "Qwen3-TTS Base requires ref_audio or speaker_embedding; "
        "text-only requests require a CustomVoice or VoiceDesign checkpoint"
    )


def test_missing_local_reference_is_refused_by_the_server(qwen_base: ContractServer, tmp_path: Path) -> None:
    gone = tmp_path / "gone.wav"
    response = raw_speech(qwen_base, {"input": SENTENCE, "ref_audio": str(gone)})
    assert response.status_code == 400
    assert error_of(response)["message"] == f"ref_audio file does not exist: {gone}"


def test_uploaded_voice_upload_list_use_delete(
    qwen_base: ContractServer, reference_clip: Path, tmp_path: Path
) -> None:
    entry = qwen_base.entry
    with SpeechClient(qwen_base.base_url) as client:
        stored = client.upload_voice(
            "Narrator-1", reference_clip, consent="I agree to this use.", ref_text=REFERENCE_TEXT
        )
        assert stored.name == "Narrator-1"
        assert stored.mime_type == "audio/wav"
        assert stored.file_size == reference_clip.stat().st_size
        assert stored.ref_text == REFERENCE_TEXT
        listed = client.voices()
        assert "Narrator-1" in listed.uploaded_names
        assert listed.match("narrator-1") == "Narrator-1"
        result = client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.uploaded("NARRATOR-1")))
        assert_speech(result, entry, tmp_path)
        client.delete_voice("Narrator-1")
        assert "Narrator-1" not in client.voices().uploaded_names
        with pytest.raises(VoiceError, match="no such voice"):
            client.delete_voice("Narrator-1")
        with pytest.raises(UnknownVoice):
            client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.uploaded("Narrator-1")))
    # The server's own answer to a deleted name, sent by hand.
    response = raw_speech(qwen_base, {"input": SENTENCE, "voice": "Narrator-1"})
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "Unknown voice 'Narrator-1'. Upload a voice first via POST /v1/audio/voices, or use ref_audio + "
        "ref_text."
    )


def test_upload_refuses_a_too_short_clip(qwen_base: ContractServer, tmp_path: Path) -> None:
    short = tmp_path / "short.wav"
    subprocess.run(["espeak-ng", "-w", str(short), "Hi."], check=True, capture_output=True)  # noqa: S603, S607
    with SpeechClient(qwen_base.base_url) as client, pytest.raises(SpeechError) as info:
        client.upload_voice("tiny", short, consent="yes")
    assert info.value.status_code == 400
    assert info.value.message == "audio_sample must be at least 1.0s"


# --- Voxtral ----------------------------------------------------------------------------------


def test_voxtral_preset_sends_no_extra_fields(voxtral: ContractServer, tmp_path: Path) -> None:
    entry = voxtral.entry
    # language and seed are set on purpose: the client must leave them out for Voxtral, or the
    # real validate_voxtral_speech_params answers 500.
    request = SpeechRequest(SENTENCE, VoiceChoice.preset("Casual_Male"), language="English", seed=7)
    with SpeechClient(voxtral.base_url) as client:
        result = client.speech(entry, request)
    assert_speech(result, entry, tmp_path)


def test_voxtral_refuses_an_extra_field(voxtral: ContractServer) -> None:
    response = raw_speech(
        voxtral, {"input": SENTENCE, "voice": "casual_male", "instructions": "Speak softly."}
    )
    assert response.status_code == 500
    error = error_of(response)
    assert error["message"] == (
        "Voxtral TTS does not support these /v1/audio/speech fields: instructions. "
        "Supported model-specific fields are voice and max_new_tokens."
    )
    assert error["type"] == "server_error"


def test_voxtral_unknown_preset_is_refused_by_our_client(voxtral: ContractServer) -> None:
    with SpeechClient(voxtral.base_url) as client, pytest.raises(UnknownVoice) as info:
        client.speech(voxtral.entry, SpeechRequest(SENTENCE, VoiceChoice.preset("pirate_captain")))
    assert "casual_male" in info.value.valid


# --- Higgs: KV capacity -----------------------------------------------------------------------


def test_higgs_kv_capacity_400_is_the_real_text(higgs: ContractServer) -> None:
    response = raw_speech(higgs, {"input": SENTENCE, "max_new_tokens": 3000})
    assert response.status_code == 400
    error = error_of(response)
    assert (error["type"], error["code"]) == ("BadRequestError", 400)
    report = parse_kv_capacity(str(error["message"]))
    assert report is not None, error["message"]
    assert report.kv_capacity == HIGGS_KV_CAPACITY
    assert report.max_new_tokens == 3000
    assert report.required_tokens == report.input_tokens + 3000
    # The hint names the engine's fraction, 0.80 from configs/higgs_audio_v3_tts.yaml.
    assert str(error["message"]).endswith(
        "Current mem_fraction_static is 0.800; try setting --thinker-mem-fraction-static higher."
    )


def test_higgs_refit_after_kv_400(higgs: ContractServer, tmp_path: Path) -> None:
    entry = higgs.entry
    assert entry.request_max_new_tokens == 3000
    with SpeechClient(higgs.base_url) as client:
        result = client.speech(entry, SpeechRequest(SENTENCE, VoiceChoice.default()))
    assert result.refitted
    assert result.max_new_tokens_sent == HIGGS_KV_CAPACITY - result.prompt_tokens
    assert_speech(result, entry, tmp_path)


def test_higgs_prompt_larger_than_the_window(higgs: ContractServer) -> None:
    text = "é" * MAX_INPUT_CHARS  # 2 bytes a character: the prompt alone overflows the window
    with SpeechClient(higgs.base_url) as client, pytest.raises(KVCapacityError) as info:
        client.speech(higgs.entry, SpeechRequest(text, VoiceChoice.default()))
    assert info.value.kv_capacity == HIGGS_KV_CAPACITY
    assert info.value.input_tokens > HIGGS_KV_CAPACITY
    assert info.value.status_code == 400


def test_higgs_unknown_voice(higgs: ContractServer) -> None:
    response = raw_speech(higgs, {"input": SENTENCE, "voice": "nobody"})
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "Unknown voice 'nobody'. Upload a voice first via POST /v1/audio/voices, or use ref_audio + ref_text."
    )
    with SpeechClient(higgs.base_url) as client, pytest.raises(UnknownVoice):
        client.speech(higgs.entry, SpeechRequest(SENTENCE, VoiceChoice.uploaded("nobody")))


# --- input length -----------------------------------------------------------------------------


def test_input_limit_is_4096_characters(qwen_custom: ContractServer, tmp_path: Path) -> None:
    entry = qwen_custom.entry
    text = (SENTENCE + " ") * (MAX_INPUT_CHARS // (len(SENTENCE) + 1) + 1)
    with SpeechClient(qwen_custom.base_url) as client:
        at_limit = client.speech(entry, SpeechRequest(text[:MAX_INPUT_CHARS], VoiceChoice.speaker("Vivian")))
        assert at_limit.duration_s and at_limit.duration_s > 60
        with pytest.raises(SpeechError) as info:
            client.speech(entry, SpeechRequest(text[: MAX_INPUT_CHARS + 1], VoiceChoice.speaker("Vivian")))
    assert info.value.status_code == 400
    assert info.value.message == "input must be at most 4096 characters"
    assert info.value.param == "input"
