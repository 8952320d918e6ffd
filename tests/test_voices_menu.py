"""What each model's voice menu offers, from catalog data, and how an option becomes a request voice."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from omni_web.catalog import CATALOG, VoiceMode, get_entry
from omni_web.client import UploadedVoice, VoiceCatalog, VoiceKind, build_speech_payload
from omni_web.client.requests import SpeechRequest
from omni_web.errors import VoiceError
from omni_web.paths import DataPaths
from omni_web.voices.library import Voice, VoiceLibrary
from omni_web.voices.server_voices import option_for_key, transcript_warning, voice_menu
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

pytestmark = pytest.mark.slow  # espeak-ng speech

_SERVER = VoiceCatalog(
    voices=("default", "Narrator", "alice"),
    uploaded=(UploadedVoice(name="Narrator"), UploadedVoice(name="alice")),
)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return espeak(EIGHT_SECONDS_TEXT, tmp_path_factory.mktemp("menu") / "speech.wav")


@pytest.fixture
def library_voices(data_paths: DataPaths, clip: Path) -> list[Voice]:
    library = VoiceLibrary(data_paths)
    library.add(clip, name="bob", transcript="The quick brown fox.")
    library.add(clip, name="carol")
    return library.list()


def _keys(entry_key: str, server: VoiceCatalog | None, voices: list[Voice]) -> list[str]:
    return [option.key for option in voice_menu(get_entry(entry_key), server, voices)]


def test_builtin_speakers_come_from_the_catalog_or_the_server(library_voices: list[Voice]) -> None:
    keys = _keys("qwen3_tts_0_6b_customvoice", None, library_voices)
    assert keys[0] == "speaker:Vivian"  # the default speaker first
    assert "speaker:Ryan" in keys and len(keys) == 9
    assert not any(k.startswith(("clone", "uploaded")) for k in keys)
    served = VoiceCatalog(voices=("default", "eric", "vivian"))
    # One key per voice whichever list named it (the catalog spells it as the model card does).
    assert _keys("qwen3_tts_0_6b_customvoice", served, library_voices) == ["speaker:Vivian", "speaker:Eric"]


def test_presets_for_voxtral_and_nothing_else(library_voices: list[Voice]) -> None:
    keys = _keys("voxtral_tts", _SERVER, library_voices)
    assert keys[0] == "preset:cheerful_female"
    assert set(keys) == {f"preset:{name}" for name in get_entry("voxtral_tts").preset_voices}


def test_voice_design_is_one_entry(library_voices: list[Voice]) -> None:
    (option,) = voice_menu(get_entry("qwen3_tts_1_7b_voicedesign"), _SERVER, library_voices)
    assert option.kind is VoiceKind.DESIGN and option.key == "design"


def test_clone_models_list_library_clips_and_uploaded_voices(library_voices: list[Voice]) -> None:
    assert _keys("qwen3_tts_0_6b_base", _SERVER, library_voices) == [
        "clone:bob", "clone:carol", "uploaded:alice", "uploaded:Narrator",
    ]
    assert _keys("higgs_audio_v3_tts", _SERVER, library_voices) == [
        "default", "clone:bob", "clone:carol", "uploaded:alice", "uploaded:Narrator",
    ]
    # No server answering: clips only.
    assert _keys("moss_tts", None, library_voices) == ["clone:bob", "clone:carol"]


def test_models_that_ignore_uploaded_voices_do_not_offer_them(library_voices: list[Voice]) -> None:
    assert _keys("zonos2", _SERVER, library_voices) == ["clone:bob", "clone:carol"]


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.key)
def test_every_option_is_accepted_by_the_payload_builder(
    entry, library_voices: list[Voice], data_paths: DataPaths
) -> None:
    options = voice_menu(entry, _SERVER, library_voices)
    assert options, entry.key
    assert len({option.key for option in options}) == len(options)
    uploaded = any(option.kind is VoiceKind.UPLOADED for option in options)
    assert uploaded == (entry.supports_uploaded_voices and entry.voice_mode in (
        VoiceMode.CLONE_REQUIRED, VoiceMode.DEFAULT_OR_CLONE))
    for option in options:
        if option.kind is VoiceKind.CLONE and entry.requires_ref_text and not option.voice.has_transcript:
            continue  # refused on purpose; transcript_warning says why
        choice = option.to_choice(paths=data_paths, instructions="A calm, low voice.")
        payload = build_speech_payload(entry, SpeechRequest(text="Hi.", voice=choice), inline_reference=False)
        if option.kind is VoiceKind.CLONE:
            assert payload["ref_audio"] == str(option.voice.wav_path.resolve())
            assert ("ref_text" in payload) == option.voice.has_transcript


def test_option_lookup_by_key(library_voices: list[Voice]) -> None:
    options = voice_menu(get_entry("higgs_audio_v3_tts"), _SERVER, library_voices)
    assert option_for_key(options, "clone:carol").voice.name == "carol"
    with pytest.raises(VoiceError, match="not in this model's voice menu"):
        option_for_key(options, "speaker:Vivian")


def test_transcript_warning_says_quality_may_drop(library_voices: list[Voice]) -> None:
    bob, carol = library_voices
    higgs, dots = get_entry("higgs_audio_v3_tts"), get_entry("dots_tts_mf")
    assert transcript_warning(higgs, bob) is None
    assert "quality may drop" in (transcript_warning(higgs, carol) or "")
    assert "needs a transcript" in (transcript_warning(dots, carol) or "")
    assert transcript_warning(get_entry("voxtral_tts"), carol) is None


def test_uploaded_voice_display_strings() -> None:
    unknown = UploadedVoice(name="x")
    assert (unknown.created_str, unknown.size_str) == ("-", "0 B")
    stamp = 1_780_000_000
    voice = UploadedVoice(name="x", created_at=stamp, file_size=1_234_567)
    assert voice.created_str == datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")
    assert voice.size_str == "1.2 MB"


def test_a_speaker_is_one_key_whichever_list_spelled_it() -> None:
    # The checkpoint lists "vivian"; the catalog (model card) says "Vivian": one voice, one key, one name.
    from omni_web.pipeline.plan import narrator_label

    entry = get_entry("qwen3_tts_0_6b_customvoice")
    from_catalog = {o.key: o for o in voice_menu(entry, None)}
    from_server = {o.key: o for o in voice_menu(entry, VoiceCatalog(voices=("default", "vivian",
                                                                            "uncle_fu")))}
    assert "speaker:Vivian" in from_catalog and set(from_server) == {"speaker:Vivian", "speaker:Uncle_Fu"}
    assert from_server["speaker:Vivian"].name == "vivian"  # requests keep the server's spelling
    assert from_server["speaker:Uncle_Fu"].label == "Uncle Fu"
    # A key from before the server answered finds the server's voice, either spelling.
    assert option_for_key(list(from_server.values()), "speaker:vivian").name == "vivian"
    names = {
        narrator_label(entry, o.to_choice(paths=None))
        for o in (from_catalog["speaker:Vivian"], from_server["speaker:Vivian"])
    }
    assert names == {"Vivian - Qwen3-TTS 0.6B CustomVoice"}


def test_a_cache_snapshot_path_names_its_catalog_model() -> None:
    from omni_web.catalog import entry_for_repo

    path = "/srv/hf/models--Qwen--Qwen3-TTS-12Hz-0.6B-CustomVoice/snapshots/0123abc"
    assert entry_for_repo(path).key == "qwen3_tts_0_6b_customvoice"
    assert entry_for_repo("/srv/models/my-own-tts") is None
