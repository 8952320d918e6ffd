"""Fitting reference clips to the server's 10 MiB limit, and library voices as clone choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.client import VoiceKind
from omni_web.errors import VoiceError
from omni_web.paths import DataPaths
from omni_web.voices.library import VoiceLibrary
from omni_web.voices.reference import (
    MAX_REFERENCE_AUDIO_BYTES,
    FitPlan,
    clone_choice,
    fit_reference,
    plan_fit,
    reference_cache_dir,
)
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak, probe, sox

pytestmark = pytest.mark.slow  # espeak-ng speech, sox


def test_the_limit_is_the_servers() -> None:
    assert MAX_REFERENCE_AUDIO_BYTES == 10 * 1024 * 1024


def test_plan_prefers_the_highest_rate_that_fits() -> None:
    assert plan_fit(30, 48000) == FitPlan(48000, None)  # 2.9 MB: fits as it is
    # 120 s: 48 kHz mono is 11.5 MB, 44.1 kHz is 10.6 MB (over 10 MiB), 32 kHz is 7.7 MB.
    assert plan_fit(120, 48000) == FitPlan(32000, None)
    assert plan_fit(120, 22050) == FitPlan(22050, None)  # never above the clip's own rate
    plan = plan_fit(600, 48000)  # 10 min: even 16 kHz mono is 19 MB, so it is cut
    assert plan.sample_rate == 16000 and plan.max_s is not None
    assert plan.size_bytes(600) <= MAX_REFERENCE_AUDIO_BYTES
    assert 320 < plan.max_s < 328


def test_a_small_clip_is_sent_as_it_is(tmp_path: Path) -> None:
    clip = espeak(EIGHT_SECONDS_TEXT, tmp_path / "speech.wav")
    assert fit_reference(clip, cache_dir=tmp_path / "cache") == clip
    assert not (tmp_path / "cache").exists()


def test_a_realistic_oversized_clip_is_re_encoded_to_fit(tmp_path: Path) -> None:
    # 60 s of 48 kHz stereo 16-bit speech: 11.5 MB, over the 10 MiB limit.
    speech = espeak(EIGHT_SECONDS_TEXT, tmp_path / "speech.wav")
    big = tmp_path / "big.wav"
    sox(speech, speech, speech, speech, speech, speech, speech, speech, "-r", "48000", "-c", "2", big)
    assert big.stat().st_size > MAX_REFERENCE_AUDIO_BYTES
    fitted = fit_reference(big, cache_dir=tmp_path / "cache")
    assert fitted != big and fitted.parent == tmp_path / "cache"
    assert fitted.stat().st_size <= MAX_REFERENCE_AUDIO_BYTES
    facts = probe(fitted)
    assert (facts["channels"], facts["sample_rate"], facts["bits"]) == (1, 48000, 16)
    assert facts["duration"] == pytest.approx(probe(big)["duration"], abs=0.05)  # nothing cut
    # A second call reuses the fitted file.
    mtime = fitted.stat().st_mtime_ns
    assert fit_reference(big, cache_dir=tmp_path / "cache") == fitted
    assert fitted.stat().st_mtime_ns == mtime


def test_a_lowered_limit_forces_a_lower_rate_and_then_a_cut(tmp_path: Path) -> None:
    speech = espeak(EIGHT_SECONDS_TEXT, tmp_path / "speech.wav")  # 22.05 kHz mono, ~335 KB
    duration = probe(speech)["duration"]
    lower_rate = fit_reference(speech, cache_dir=tmp_path / "c1", limit_bytes=300_000)
    assert lower_rate.stat().st_size <= 300_000
    assert probe(lower_rate)["sample_rate"] == 16000
    assert probe(lower_rate)["duration"] == pytest.approx(duration, abs=0.05)
    cut = fit_reference(speech, cache_dir=tmp_path / "c2", limit_bytes=100_000)
    assert cut.stat().st_size <= 100_000
    assert probe(cut)["sample_rate"] == 16000
    assert 2.5 < probe(cut)["duration"] < 3.1  # (100000 - slack) / 32000 bytes per second


def test_missing_and_non_audio_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(VoiceError, match="not found"):
        fit_reference(tmp_path / "missing.wav", cache_dir=tmp_path)
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"x" * 20_000)
    with pytest.raises(VoiceError, match="could not be read as audio"):
        fit_reference(junk, cache_dir=tmp_path, limit_bytes=10_000)


def test_clone_choice_carries_the_clip_and_its_transcript(data_paths: DataPaths, tmp_path: Path) -> None:
    library = VoiceLibrary(data_paths)
    voice = library.add(
        espeak(EIGHT_SECONDS_TEXT, tmp_path / "speech.wav"), name="narrator", transcript="Hello."
    )
    choice = clone_choice(voice, paths=data_paths)
    assert choice.kind is VoiceKind.CLONE
    assert choice.reference == voice.wav_path
    assert choice.ref_text == "Hello."
    bare = clone_choice(library.set_transcript("narrator", None), paths=data_paths)
    assert bare.transcript is None
    assert reference_cache_dir(data_paths) == data_paths.state_dir / "references"
