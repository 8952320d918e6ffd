"""Clip cleaning on real audio: espeak-ng speech, sox padding and noise, ffmpeg containers."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from omni_web.errors import VoiceError
from omni_web.voices.clip import (
    MAX_SPEECH_S,
    choose_cut,
    decode_mono,
    frame_levels_db,
    prepare_clip,
    probe_clip,
    silence_threshold_db,
)
from tests.voice_clips import EIGHT_SECONDS_TEXT, LONG_TEXT, espeak, ffmpeg, probe, sox

pytestmark = pytest.mark.slow  # real ffmpeg, espeak-ng speech, sox


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every source clip the tests need, made once per module."""
    d = tmp_path_factory.mktemp("clips")
    speech = espeak(EIGHT_SECONDS_TEXT, d / "speech.wav")
    sox(speech, d / "padded.wav", "pad", "2", "2")
    espeak("Hi there.", d / "short_raw.wav")
    sox(d / "short_raw.wav", d / "short.wav", "pad", "0.5", "0.5")  # ~1 s of speech in 2 s
    espeak(LONG_TEXT, d / "long.wav")
    sox(
        "-n",
        "-r",
        "22050",
        "-c",
        "1",
        "-b",
        "16",
        d / "noise45.wav",
        "synth",
        "45",
        "pinknoise",
        "vol",
        "0.3",
    )
    sox("-n", "-r", "22050", "-c", "1", "-b", "16", d / "silence.wav", "trim", "0", "5")
    # Quiet speech (-26 dB) between stretches of faint noise: the threshold must follow the clip.
    sox(speech, d / "quiet_speech.wav", "vol", "0.05")
    sox(
        "-n",
        "-r",
        "22050",
        "-c",
        "1",
        "-b",
        "16",
        d / "hiss.wav",
        "synth",
        "1.5",
        "whitenoise",
        "vol",
        "0.0005",
    )
    sox(d / "hiss.wav", d / "quiet_speech.wav", d / "hiss.wav", d / "quiet_padded.wav")
    (d / "notes.txt").write_text("not audio at all\n")
    (d / "renamed.wav").write_text("RIFF? no, just a text file renamed to .wav\n" * 20)
    sox(d / "padded.wav", "-r", "96000", "-c", "2", d / "hires.flac")
    ffmpeg("-i", d / "padded.wav", d / "padded.mp3")
    ffmpeg("-i", d / "padded.wav", "-c:a", "libvorbis", d / "padded.ogg")
    ffmpeg("-i", d / "padded.wav", "-c:a", "aac", d / "padded.m4a")
    ffmpeg("-i", d / "padded.wav", "-c:a", "libopus", d / "padded.webm")
    return {p.name: p for p in d.iterdir()}


def _wav_format(path: Path) -> tuple[int, int, int]:
    with wave.open(str(path), "rb") as wav:
        return wav.getnchannels(), wav.getsampwidth(), wav.getframerate()


def test_clean_speech_is_kept_whole_as_mono_16_bit(clips: dict[str, Path], tmp_path: Path) -> None:
    source = probe(clips["speech.wav"])
    clip = prepare_clip(clips["speech.wav"], tmp_path / "out.wav")
    out = probe(tmp_path / "out.wav")
    assert _wav_format(tmp_path / "out.wav") == (1, 2, 22050)
    assert abs(out["duration"] - clip.duration_s) < 0.01
    # espeak-ng ends on a little silence; nothing of the speech itself is lost.
    assert source["duration"] - 0.5 < out["duration"] <= source["duration"]
    assert not clip.was_cut


def test_silence_padding_is_trimmed_back_to_the_speech(clips: dict[str, Path], tmp_path: Path) -> None:
    plain = prepare_clip(clips["speech.wav"], tmp_path / "plain.wav")
    padded = prepare_clip(clips["padded.wav"], tmp_path / "padded.wav")
    assert probe(clips["padded.wav"])["duration"] == pytest.approx(plain.source_duration_s + 4, abs=0.01)
    assert probe(tmp_path / "padded.wav")["duration"] == pytest.approx(plain.duration_s, abs=0.15)
    assert padded.trimmed_start_s == pytest.approx(2.0, abs=0.15)
    assert padded.trimmed_end_s == pytest.approx(2.2, abs=0.2)
    assert any("Trimmed" in note for note in padded.notes)


def test_threshold_follows_the_clip_loudness(clips: dict[str, Path], tmp_path: Path) -> None:
    # -26 dB speech with hiss at about -70 dB around it: a fixed -50 dBFS threshold would keep
    # the hiss or eat the speech; a relative one trims the hiss only.
    reference = prepare_clip(clips["speech.wav"], tmp_path / "reference.wav")
    quiet = prepare_clip(clips["quiet_padded.wav"], tmp_path / "quiet.wav")
    assert quiet.trimmed_start_s == pytest.approx(1.5, abs=0.15)
    assert quiet.duration_s == pytest.approx(reference.duration_s, abs=0.2)


def test_under_three_seconds_of_speech_is_refused_with_the_advice(
    clips: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(VoiceError) as caught:
        prepare_clip(clips["short.wav"], tmp_path / "out.wav")
    message = str(caught.value)
    assert "s of speech after trimming silence; clones need at least 3 s" in message
    assert "10-20 s of clean speech works best" in message
    assert not (tmp_path / "out.wav").exists()


def test_long_speech_is_cut_at_a_sentence_pause(clips: dict[str, Path], tmp_path: Path) -> None:
    clip = prepare_clip(clips["long.wav"], tmp_path / "out.wav")
    measured = probe(tmp_path / "out.wav")["duration"]
    assert clip.was_cut
    assert 20.0 <= measured <= MAX_SPEECH_S
    assert clip.duration_s + clip.cut_s > 45
    # The cut lands in a pause: the last 50 ms are far quieter than the speech.
    samples = decode_mono(tmp_path / "out.wav", sample_rate=22050)
    levels = frame_levels_db(samples, 22050)
    speech_db, _threshold = silence_threshold_db(levels)
    assert levels[-5:].max() < speech_db - 30
    assert any("cut at a pause" in note for note in clip.notes)


def test_long_clip_without_a_pause_is_refused_with_the_reason(clips: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="no pause to cut at"):
        prepare_clip(clips["noise45.wav"], tmp_path / "out.wav")


def test_silent_clip_is_refused(clips: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="is silent"):
        prepare_clip(clips["silence.wav"], tmp_path / "out.wav")


def test_a_text_file_is_refused_by_extension(clips: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match=r"'notes.txt' is not a supported audio file.*wav, mp3"):
        prepare_clip(clips["notes.txt"], tmp_path / "out.wav")


def test_a_text_file_renamed_to_wav_is_refused_as_not_audio(clips: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match=r"'renamed.wav' could not be read as audio"):
        prepare_clip(clips["renamed.wav"], tmp_path / "out.wav")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="does not exist"):
        probe_clip(tmp_path / "nope.wav")


@pytest.mark.parametrize("name", ["padded.mp3", "padded.ogg", "padded.m4a", "padded.webm"])
def test_compressed_formats_are_converted(name: str, clips: dict[str, Path], tmp_path: Path) -> None:
    plain = prepare_clip(clips["padded.wav"], tmp_path / "plain.wav")
    clip = prepare_clip(clips[name], tmp_path / "out.wav")
    out = probe(tmp_path / "out.wav")
    assert (out["codec"], out["channels"], out["bits"]) == ("pcm_s16le", 1, 16)
    assert out["sample_rate"] == probe(clips[name])["sample_rate"]
    # Encoder delay and padding differ by codec; the speech length does not.
    assert out["duration"] == pytest.approx(plain.duration_s, abs=0.2)
    assert clip.trimmed_start_s == pytest.approx(2.0, abs=0.2)


def test_stereo_96_khz_flac_becomes_mono_48_khz(clips: dict[str, Path], tmp_path: Path) -> None:
    assert probe(clips["hires.flac"])["channels"] == 2
    clip = prepare_clip(clips["hires.flac"], tmp_path / "out.wav")
    assert _wav_format(tmp_path / "out.wav") == (1, 2, 48000)
    assert clip.sample_rate == 48000


def test_choose_cut_prefers_the_latest_sentence_pause_within_the_limit() -> None:
    speech, pause_short, pause_long = -15.0, 0.25, 0.5
    levels: list[float] = []

    def add(seconds: float, level: float) -> None:
        levels.extend([level] * int(round(seconds * 100)))

    add(8, speech)
    add(pause_long, -120)  # at 8 s: too early (under 10 s)
    add(6, speech)
    add(pause_long, -120)  # at 14.5 s: a sentence pause
    add(9, speech)
    add(pause_long, -120)  # at 24 s: the latest sentence pause under 30 s
    add(3, speech)
    add(pause_short, -120)  # at 27.5 s: a comma-length pause, not preferred
    add(6, speech)
    add(pause_long, -120)  # at 34 s: past the limit
    add(4, speech)
    cut = choose_cut(np.array(levels), -55.0, max_s=30.0, min_s=3.0)
    assert cut is not None
    assert 24.0 <= cut <= 24.2


def test_choose_cut_finds_nothing_in_continuous_sound() -> None:
    assert choose_cut(np.full(4500, -15.0), -55.0, max_s=30.0, min_s=3.0) is None
