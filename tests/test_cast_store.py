"""Cast files: YAML round trip, clear errors, and what a saved voice means on each kind of model."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.cast import CastFile, VoiceSpec, load_cast_file
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.errors import CastError
from omni_web.paths import DataPaths
from omni_web.voices import VoiceLibrary
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

pytestmark = pytest.mark.slow  # espeak-ng speech


def test_round_trip_and_hand_edited_file(tmp_path: Path) -> None:
    cast = (CastFile(book="Moby-Dick", narrator=VoiceSpec(name="vivian"), dialogue=VoiceSpec(name="ryan"))
            .with_character("Ahab", VoiceSpec(name="eric"))
            .with_character("Queequeg", VoiceSpec(instructions="A deep, calm voice."))
            .with_character("Starbuck", VoiceSpec(clone="/clips/starbuck.wav", transcript="Aye.")))
    path = cast.save(tmp_path / "casts" / "moby.yaml")
    assert load_cast_file(path) == cast
    assert "Ahab: eric" in path.read_text()
    assert cast.with_character("ahab", None).characters.keys() == {"Queequeg", "Starbuck"}
    edited = CastFile.from_yaml("dialogue: ryan\ncharacters:\n  Ishmael: aiden\n", source="x.yaml")
    assert edited.characters["Ishmael"].name == "aiden" and edited.min_confidence == 0.6
    assert load_cast_file(tmp_path / "missing.yaml") == CastFile()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("characters: [Ahab]", "map names to voices"),
        ("characters:\n  Ahab: {voice: x}", "unknown field"),
        ("characters:\n  Ahab: {name: a, instructions: b}", "one of"),
        ("min_confidence: 3", "from 0 to 1"),
        ("dialogue: [unclosed", "not valid YAML"),
    ],
)
def test_bad_cast_files_say_what_is_wrong(text: str, match: str) -> None:
    with pytest.raises(CastError, match=match):
        CastFile.from_yaml(text, source="cast.yaml")


def test_a_saved_name_means_a_speaker_a_library_clip_or_an_uploaded_voice(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    library = VoiceLibrary(data_paths)
    clip = espeak(EIGHT_SECONDS_TEXT, tmp_path / "captain.wav")
    library.add(clip, name="captain", transcript="Call me Ishmael.")
    spec = VoiceSpec(name="captain")
    assert spec.resolve(get_entry("qwen3_tts_0_6b_customvoice"), library) == VoiceChoice.speaker("captain")
    cloned = spec.resolve(get_entry("qwen3_tts_0_6b_base"), library)
    assert cloned.kind is VoiceKind.CLONE and cloned.transcript == "Call me Ishmael."
    assert (
        VoiceSpec(name="stored").resolve(get_entry("qwen3_tts_0_6b_base"), library).kind is VoiceKind.UPLOADED
    )
    assert VoiceSpec(name="default").resolve(get_entry("fish_s2_pro"), library) == VoiceChoice.default()
    designed = VoiceSpec(instructions="Calm.").resolve(get_entry("qwen3_tts_0_6b_customvoice"), library)
    assert designed == VoiceChoice.design("Calm.")
    with pytest.raises(CastError, match="neither a file nor a library voice"):
        VoiceSpec(clone="/nowhere.wav").resolve(get_entry("qwen3_tts_0_6b_base"), library)
    assert VoiceSpec.from_choice(cloned).clone == str(cloned.reference)
