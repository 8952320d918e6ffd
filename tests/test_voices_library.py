"""The voice library on disk: add, list, get, rename, delete, transcripts, names, overwrite."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from omni_web.errors import VoiceError
from omni_web.paths import DataPaths
from omni_web.voices.library import VoiceLibrary
from omni_web.voices.names import name_from_path, sanitize_name, validate_name
from tests.voice_clips import EIGHT_SECONDS_TEXT, LONG_TEXT, espeak, ffmpeg, probe, sox

pytestmark = pytest.mark.slow  # real ffmpeg, espeak-ng speech, sox


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("sources")
    speech = espeak(EIGHT_SECONDS_TEXT, d / "speech.wav")
    sox(speech, d / "padded.wav", "pad", "2", "2")
    ffmpeg("-i", d / "padded.wav", d / "My Narrator!.mp3")
    espeak("A different voice says something else entirely, for several seconds.", d / "other.wav")
    espeak(LONG_TEXT, d / "long.wav")
    (d / "renamed.wav").write_text("just text\n" * 50)
    return {p.name: p for p in d.iterdir()}


@pytest.fixture
def library(data_paths: DataPaths) -> VoiceLibrary:
    return VoiceLibrary(data_paths)


def _files(library: VoiceLibrary) -> list[str]:
    return sorted(p.name for p in library.directory.iterdir())


def test_add_stores_a_cleaned_wav_and_its_transcript(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    voice = library.add(sources["padded.wav"], name="narrator", transcript="  The quick brown fox.\n")
    assert voice.wav_path == library.directory / "narrator.wav"
    assert _files(library) == ["narrator.txt", "narrator.wav"]
    assert (library.directory / "narrator.txt").read_text() == "The quick brown fox.\n"
    assert voice.transcript == "The quick brown fox."
    measured = probe(voice.wav_path)
    assert measured["channels"] == 1 and measured["codec"] == "pcm_s16le"
    assert voice.duration_s == pytest.approx(measured["duration"], abs=0.01)
    assert voice.duration_s < probe(sources["padded.wav"])["duration"] - 3.5  # padding gone
    assert voice.sample_rate == 22050
    assert voice.size_bytes == voice.wav_path.stat().st_size
    assert voice.content_sha256 == hashlib.sha256(voice.wav_path.read_bytes()).hexdigest()
    assert any("Trimmed" in note for note in voice.notes)
    assert voice.label == f"narrator ({voice.duration_str})"


def test_name_defaults_to_the_sanitised_file_name(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    voice = library.add(sources["My Narrator!.mp3"])
    assert voice.name == "My_Narrator"
    assert voice.transcript is None and not voice.has_transcript
    assert "no transcript" in voice.label
    assert _files(library) == ["My_Narrator.wav"]


def test_list_get_and_find_are_case_insensitive(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    library.add(sources["speech.wav"], name="zed")
    library.add(sources["other.wav"], name="Alpha")
    assert library.names() == ["Alpha", "zed"]
    assert library.get("ZED").name == "zed"
    assert library.find("nobody") is None
    with pytest.raises(VoiceError, match=r"no voice called 'nobody'.*Alpha, zed"):
        library.get("nobody")


def test_adding_over_an_existing_name_needs_overwrite(
    library: VoiceLibrary, sources: dict[str, Path]
) -> None:
    first = library.add(sources["speech.wav"], name="narrator", transcript="first")
    with pytest.raises(VoiceError, match="already exists.*--overwrite"):
        library.add(sources["other.wav"], name="narrator")
    with pytest.raises(VoiceError, match="'narrator' already exists"):
        library.add(sources["other.wav"], name="NARRATOR")  # the server compares case-insensitively
    assert library.get("narrator").content_sha256 == first.content_sha256
    replaced = library.add(sources["other.wav"], name="Narrator", overwrite=True)
    assert replaced.content_sha256 != first.content_sha256
    assert _files(library) == ["Narrator.wav"]  # old spelling and its transcript are gone
    assert replaced.transcript is None


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", "..", ".hidden", "default", "DEFAULT", "", "a b", "x" * 65, "é"]
)
def test_invalid_names_are_refused_and_nothing_escapes(
    bad: str, library: VoiceLibrary, sources: dict[str, Path], data_paths: DataPaths
) -> None:
    with pytest.raises(VoiceError, match="The voice name"):
        library.add(sources["speech.wav"], name=bad)
    with pytest.raises(VoiceError):
        library.get(bad)
    assert library.find(bad) is None
    assert _files(library) == []
    assert not (data_paths.root / "x.wav").exists()


def test_traversal_is_refused_in_rename_and_delete(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    library.add(sources["speech.wav"], name="narrator")
    with pytest.raises(VoiceError, match="may hold only"):
        library.rename("narrator", "../../escaped")
    with pytest.raises(VoiceError, match="may hold only"):
        library.delete("../narrator")
    assert _files(library) == ["narrator.wav"]


def test_name_rules_match_the_servers_upload_rule() -> None:
    assert validate_name(" narrator.v2_x-y ") == "narrator.v2_x-y"
    assert sanitize_name("../x") == "x"
    assert sanitize_name("a/b") == "a_b"
    assert sanitize_name("default") == "default_voice"
    assert sanitize_name("???") == "voice"
    assert name_from_path(Path("/clips/Jane Doe (take 2).flac")) == "Jane_Doe_take_2"
    with pytest.raises(VoiceError, match="Try 'a_b'"):
        validate_name("a/b")


def test_rename_moves_clip_and_transcript(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    original = library.add(sources["speech.wav"], name="narrator", transcript="hello")
    renamed = library.rename("narrator", "storyteller")
    assert _files(library) == ["storyteller.txt", "storyteller.wav"]
    assert renamed.transcript == "hello"
    assert renamed.content_sha256 == original.content_sha256
    assert library.rename("storyteller", "Storyteller").name == "Storyteller"  # case only
    assert _files(library) == ["Storyteller.txt", "Storyteller.wav"]


def test_rename_onto_an_existing_voice_needs_overwrite(
    library: VoiceLibrary, sources: dict[str, Path]
) -> None:
    library.add(sources["speech.wav"], name="a", transcript="voice a")
    other = library.add(sources["other.wav"], name="b")
    with pytest.raises(VoiceError, match="'b' already exists"):
        library.rename("a", "b")
    assert library.get("b").content_sha256 == other.content_sha256
    moved = library.rename("a", "b", overwrite=True)
    assert moved.transcript == "voice a"
    assert _files(library) == ["b.txt", "b.wav"]


def test_delete_removes_both_files(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    library.add(sources["speech.wav"], name="narrator", transcript="hello")
    library.delete("NARRATOR")
    assert _files(library) == []
    with pytest.raises(VoiceError, match="no voice called"):
        library.delete("narrator")


def test_transcripts_are_editable(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    library.add(sources["speech.wav"], name="narrator")
    assert library.set_transcript("narrator", "The quick\nbrown fox.").transcript == "The quick brown fox."
    assert (library.directory / "narrator.txt").read_text() == "The quick brown fox.\n"
    assert library.set_transcript("narrator", "   ").transcript is None
    assert _files(library) == ["narrator.wav"]


def test_a_refused_clip_leaves_nothing_behind(library: VoiceLibrary, sources: dict[str, Path]) -> None:
    with pytest.raises(VoiceError, match="could not be read as audio"):
        library.add(sources["renamed.wav"], name="broken")
    assert _files(library) == []


def test_a_long_clip_is_cut_unless_a_transcript_was_typed(
    library: VoiceLibrary, sources: dict[str, Path]
) -> None:
    with pytest.raises(VoiceError, match="transcript you typed would no longer match"):
        library.add(sources["long.wav"], name="long", transcript=LONG_TEXT)
    assert _files(library) == []
    voice = library.add(sources["long.wav"], name="long")
    assert 20 <= voice.duration_s <= 30
    assert any("cut at a pause" in note for note in voice.notes)


def test_hand_dropped_files_list_and_bad_ones_are_skipped(
    library: VoiceLibrary, sources: dict[str, Path]
) -> None:
    library.directory.mkdir(parents=True, exist_ok=True)
    sox(sources["speech.wav"], "-c", "2", "-r", "44100", library.directory / "dropped.wav")
    (library.directory / "not audio.wav").write_text("x")  # invalid name: skipped
    (library.directory / "broken.wav").write_text("x")  # unreadable: skipped
    voices = library.list()
    assert [v.name for v in voices] == ["dropped"]
    assert voices[0].sample_rate == 44100
