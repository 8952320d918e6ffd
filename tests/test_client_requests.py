"""build_speech_payload: the exact JSON body for every voice mode (pure; no network)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from omni_web.catalog import get_entry
from omni_web.client import (
    MAX_REFERENCE_AUDIO_BYTES,
    SpeechRequest,
    VoiceChoice,
    VoiceKind,
    build_speech_payload,
)
from omni_web.client.requests import audio_mime_type
from omni_web.errors import VoiceError
from tests.audio import wav_bytes


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    path = tmp_path / "narrator.wav"
    path.write_bytes(wav_bytes())
    return path


def test_customvoice_speaker() -> None:
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    request = SpeechRequest("Hello there.", VoiceChoice.speaker("Vivian"), language="English")
    assert build_speech_payload(entry, request, inline_reference=False) == {
        "input": "Hello there.",
        "voice": "Vivian",
        "response_format": "wav",
        "language": "English",
    }


def test_customvoice_default_sends_no_voice() -> None:
    entry = get_entry("qwen3_tts_0_6b_customvoice")
    payload = build_speech_payload(
        entry, SpeechRequest("Hi.", VoiceChoice.default(), seed=7), inline_reference=False
    )
    assert payload == {"input": "Hi.", "response_format": "wav", "seed": 7}


def test_voxtral_preset_carries_nothing_else() -> None:
    entry = get_entry("voxtral_tts")
    request = SpeechRequest(
        "Bonjour.", VoiceChoice.preset("casual_female"), language="French", seed=3, max_new_tokens=1500
    )
    assert build_speech_payload(entry, request, inline_reference=True) == {
        "input": "Bonjour.",
        "voice": "casual_female",
        "response_format": "wav",
        "max_new_tokens": 1500,
    }


def test_voxtral_default_is_input_and_format_only() -> None:
    entry = get_entry("voxtral_tts")
    payload = build_speech_payload(
        entry, SpeechRequest("Salut.", VoiceChoice.default()), inline_reference=False
    )
    assert payload == {"input": "Salut.", "response_format": "wav"}


def test_voice_design() -> None:
    entry = get_entry("qwen3_tts_1_7b_voicedesign")
    request = SpeechRequest("Hello.", VoiceChoice.design("A warm, low female voice, speaking slowly."))
    assert build_speech_payload(entry, request, inline_reference=False) == {
        "input": "Hello.",
        "task_type": "VoiceDesign",
        "instructions": "A warm, low female voice, speaking slowly.",
        "response_format": "wav",
    }


def test_clone_by_local_path_with_transcript(clip: Path) -> None:
    entry = get_entry("qwen3_tts_0_6b_base")
    request = SpeechRequest("Text.", VoiceChoice.clone(clip, ref_text=" Transcript. "), seed=1234)
    assert build_speech_payload(entry, request, inline_reference=False) == {
        "input": "Text.",
        "ref_audio": str(clip.resolve()),
        "response_format": "wav",
        "seed": 1234,
    } | {"ref_text": "Transcript."}


def test_clone_inline_is_base64_data_url(clip: Path) -> None:
    entry = get_entry("higgs_audio_v3_tts")
    payload = build_speech_payload(
        entry, SpeechRequest("Text.", VoiceChoice.clone(clip)), inline_reference=True
    )
    prefix = "data:audio/wav;base64,"
    assert payload["ref_audio"].startswith(prefix)
    assert base64.b64decode(payload["ref_audio"][len(prefix) :]) == clip.read_bytes()
    # No transcript: no ref_text at all. Higgs carries the catalog's max_new_tokens.
    assert "ref_text" not in payload
    assert payload["max_new_tokens"] == 3000


def test_clone_blank_transcript_sends_no_ref_text(clip: Path) -> None:
    entry = get_entry("moss_tts")
    payload = build_speech_payload(
        entry, SpeechRequest("T.", VoiceChoice.clone(clip, "   ")), inline_reference=False
    )
    assert "ref_text" not in payload


def test_zonos2_never_gets_seed(clip: Path) -> None:
    entry = get_entry("zonos2")
    payload = build_speech_payload(
        entry, SpeechRequest("T.", VoiceChoice.clone(clip), seed=5), inline_reference=False
    )
    assert "seed" not in payload
    assert payload["max_new_tokens"] == 12288


def test_explicit_max_new_tokens_wins_over_catalog(clip: Path) -> None:
    entry = get_entry("higgs_audio_v3_tts")
    payload = build_speech_payload(
        entry, SpeechRequest("T.", VoiceChoice.default(), max_new_tokens=1000), inline_reference=False
    )
    assert payload == {"input": "T.", "response_format": "wav", "max_new_tokens": 1000}


def test_uploaded_voice_is_a_plain_voice_name() -> None:
    entry = get_entry("higgs_audio_v3_tts")
    payload = build_speech_payload(
        entry, SpeechRequest("T.", VoiceChoice.uploaded("narrator")), inline_reference=True
    )
    assert payload == {"input": "T.", "voice": "narrator", "response_format": "wav", "max_new_tokens": 3000}


def test_dots_tts_clone_without_transcript_is_refused(clip: Path) -> None:
    entry = get_entry("dots_tts_mf")
    with pytest.raises(VoiceError, match="needs a transcript"):
        build_speech_payload(entry, SpeechRequest("T.", VoiceChoice.clone(clip)), inline_reference=False)
    ok = build_speech_payload(
        entry, SpeechRequest("T.", VoiceChoice.clone(clip, "Words.")), inline_reference=False
    )
    assert ok["ref_text"] == "Words."


def test_oversized_clip_is_refused_naming_size_and_limit(tmp_path: Path) -> None:
    big = tmp_path / "long.wav"
    with big.open("wb") as handle:
        handle.truncate(MAX_REFERENCE_AUDIO_BYTES + 1)
    entry = get_entry("higgs_audio_v3_tts")
    for inline in (True, False):
        with pytest.raises(
            VoiceError, match=r"10\.0 MiB \(10485761 bytes\).*at most 10 MiB \(10485760 bytes\)"
        ):
            build_speech_payload(entry, SpeechRequest("T.", VoiceChoice.clone(big)), inline_reference=inline)


def test_missing_clip_is_refused(tmp_path: Path) -> None:
    entry = get_entry("higgs_audio_v3_tts")
    with pytest.raises(VoiceError, match="Reference clip not found"):
        build_speech_payload(
            entry, SpeechRequest("T.", VoiceChoice.clone(tmp_path / "nope.wav")), inline_reference=True
        )


@pytest.mark.parametrize(
    ("key", "voice"),
    [
        ("qwen3_tts_0_6b_customvoice", VoiceChoice.clone(Path("x.wav"))),
        ("qwen3_tts_0_6b_customvoice", VoiceChoice.uploaded("narrator")),
        ("qwen3_tts_0_6b_base", VoiceChoice.default()),
        ("qwen3_tts_0_6b_base", VoiceChoice.speaker("Vivian")),
        ("qwen3_tts_1_7b_voicedesign", VoiceChoice.default()),
        ("voxtral_tts", VoiceChoice.design("calm")),
        ("zonos2", VoiceChoice.uploaded("narrator")),
        ("higgs_audio_v3_tts", VoiceChoice.design("calm")),
    ],
)
def test_voice_kinds_a_model_cannot_use_are_refused(key: str, voice: VoiceChoice) -> None:
    with pytest.raises(VoiceError, match=f"{get_entry(key).label} (cannot use|does not use)"):
        build_speech_payload(get_entry(key), SpeechRequest("T.", voice), inline_reference=False)


def test_voice_choice_validation() -> None:
    with pytest.raises(VoiceError, match="needs a name"):
        VoiceChoice.speaker("  ")
    with pytest.raises(VoiceError, match="needs a description"):
        VoiceChoice.design("")
    with pytest.raises(VoiceError, match="needs a reference clip"):
        VoiceChoice(VoiceKind.CLONE)
    assert VoiceChoice.speaker("Vivian").with_name("vivian").name == "vivian"


@pytest.mark.parametrize(
    ("head", "name", "mime"),
    [
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", "a.bin", "audio/wav"),
        (b"fLaC\x00\x00\x00\x22", "a.bin", "audio/flac"),
        (b"OggS\x00\x02", "a.bin", "audio/ogg"),
        (b"ID3\x04\x00\x00", "a.bin", "audio/mpeg"),
        (b"\xff\xfb\x90\x00", "a.bin", "audio/mpeg"),
        (b"\xff\xf1\x50\x80", "a.bin", "audio/aac"),
        (b"\x00\x00\x00\x20ftypM4A ", "a.bin", "audio/mp4"),
        (b"\x00\x00\x00\x00", "a.m4a", "audio/mp4"),
    ],
)
def test_audio_mime_type(head: bytes, name: str, mime: str) -> None:
    assert audio_mime_type(Path(name), head) == mime


def test_audio_mime_type_refuses_non_audio() -> None:
    with pytest.raises(VoiceError, match="not a recognised audio file"):
        audio_mime_type(Path("notes.txt"), b"hello world")
