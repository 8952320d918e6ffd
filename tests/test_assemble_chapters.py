"""Chapter audio with real ffmpeg: durations, mixed inputs, pauses, failures that lose nothing."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from omni_web.assemble import (
    AudioFormat,
    ChapterPlan,
    Segment,
    chapter_audio_from_file,
    choose_format,
    probe_duration_ms,
    probe_streams,
    render_chapter_audio,
)
from omni_web.errors import FfmpegError

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, espeak-ng speech

TOLERANCE_MS = 50


def make_tone(path: Path, *, rate: int, channels: int, seconds: float, freq: int = 440) -> Path:
    """A sine WAV written by ffmpeg (16-bit PCM, like the TTS server's)."""
    subprocess.run(  # noqa: S603
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=f={freq}:r={rate}:d={seconds}",
         "-ac", str(channels), "-c:a", "pcm_s16le", str(path)],
        check=True,
    )  # fmt: skip
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def no_scratch_left(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_duration_is_the_sum_of_chunks_pauses_lead_in_and_tail(tmp_path: Path) -> None:
    chunks = [
        make_tone(tmp_path / "a.wav", rate=24000, channels=1, seconds=1.0),
        make_tone(tmp_path / "b.wav", rate=24000, channels=1, seconds=0.5, freq=660),
        make_tone(tmp_path / "c.wav", rate=24000, channels=1, seconds=0.75, freq=880),
    ]
    pauses = [250, 400, 0]
    plan = ChapterPlan(1, "One", tuple(Segment(p, ms) for p, ms in zip(chunks, pauses, strict=True)))
    out = tmp_path / "chapters" / "001.flac"

    chapter = render_chapter_audio(plan, out, fmt=AudioFormat(24000, 1), lead_in_ms=100, tail_ms=300)

    expected = sum(probe_duration_ms(p) for p in chunks) + sum(pauses) + 100 + 300
    assert abs(chapter.duration_ms - expected) <= TOLERANCE_MS
    assert abs(probe_duration_ms(out) - expected) <= TOLERANCE_MS
    assert (chapter.index, chapter.title, chapter.path) == (1, "One", out)
    (audio,) = [s for s in probe_streams(out) if s.codec_type == "audio"]
    assert (audio.codec_name, audio.sample_rate_hz, audio.channels) == ("flac", 24000, 1)
    assert no_scratch_left(out.parent)


def test_pauses_are_silence_at_the_right_place(tmp_path: Path) -> None:
    tone = make_tone(tmp_path / "t.wav", rate=24000, channels=1, seconds=1.0)
    plan = ChapterPlan(1, "x", (Segment(tone, 600), Segment(tone, 0)))
    out = render_chapter_audio(plan, tmp_path / "c.flac", fmt=AudioFormat(24000, 1)).path
    done = subprocess.run(  # noqa: S603
        ["ffmpeg", "-hide_banner", "-nostats", "-i", str(out), "-af", "silencedetect=n=-60dB:d=0.3", "-f", "null", "-"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    starts = [float(line.split("silence_start:")[1]) for line in done.stderr.splitlines() if "silence_start:" in line]
    ends = [float(line.split("silence_end:")[1].split("|")[0]) for line in done.stderr.splitlines() if "silence_end:" in line]
    assert len(starts) == 1 and len(ends) == 1
    assert abs(starts[0] - 1.0) < 0.05 and abs(ends[0] - 1.6) < 0.05


def test_mixed_rates_and_channels_join_cleanly(tmp_path: Path) -> None:
    chunks = [
        make_tone(tmp_path / "qwen.wav", rate=24000, channels=1, seconds=1.0),
        make_tone(tmp_path / "moss_local.wav", rate=48000, channels=2, seconds=1.5),
        make_tone(tmp_path / "zonos.wav", rate=44100, channels=1, seconds=0.7),
    ]
    fmt = choose_format(chunks)
    assert fmt == AudioFormat(48000, 2)
    plan = ChapterPlan(2, "Mixed", tuple(Segment(p, 200) for p in chunks))
    expected = sum(probe_duration_ms(p) for p in chunks) + 3 * 200

    for target in (fmt, AudioFormat(24000, 1)):
        out = tmp_path / f"mixed-{target.sample_rate_hz}.flac"
        chapter = render_chapter_audio(plan, out, fmt=target)
        assert abs(chapter.duration_ms - expected) <= TOLERANCE_MS
        (audio,) = [s for s in probe_streams(out) if s.codec_type == "audio"]
        assert (audio.sample_rate_hz, audio.channels) == (target.sample_rate_hz, target.channels)


def test_espeak_speech_chunk_and_wav_output(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    speech = tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(speech), "Call me Ishmael."], check=True)  # noqa: S603, S607
    fmt = choose_format([speech])
    assert fmt.channels == 1  # espeak-ng writes 22.05 kHz mono
    out = tmp_path / "speech-chapter.wav"
    chapter = render_chapter_audio(ChapterPlan(1, "Speech", (Segment(speech, 500),)), out, fmt=fmt)
    assert abs(chapter.duration_ms - (probe_duration_ms(speech) + 500)) <= TOLERANCE_MS
    (audio,) = [s for s in probe_streams(out) if s.codec_type == "audio"]
    assert audio.codec_name == "pcm_s16le"


def test_corrupt_chunk_names_the_file_and_keeps_earlier_chapters(tmp_path: Path) -> None:
    good = make_tone(tmp_path / "good.wav", rate=24000, channels=1, seconds=0.5)
    bad = tmp_path / "broken-chunk-0042.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk" + bytes(range(256)) * 8)
    folder = tmp_path / "chapters"
    first = render_chapter_audio(ChapterPlan(1, "Fine", (Segment(good, 0),)), folder / "001.flac", fmt=AudioFormat())
    before = sha256(first.path)

    with pytest.raises(FfmpegError) as caught:
        render_chapter_audio(
            ChapterPlan(2, "Broken", (Segment(good, 100), Segment(bad, 0))), folder / "002.flac", fmt=AudioFormat()
        )

    assert "broken-chunk-0042.wav" in str(caught.value)
    assert "chapter 2" in str(caught.value)
    assert not (folder / "002.flac").exists()
    assert sha256(first.path) == before
    assert no_scratch_left(folder)


def test_failed_rerender_keeps_the_previous_version(tmp_path: Path) -> None:
    good = make_tone(tmp_path / "good.wav", rate=24000, channels=1, seconds=0.5)
    out = tmp_path / "001.flac"
    render_chapter_audio(ChapterPlan(1, "One", (Segment(good, 0),)), out, fmt=AudioFormat())
    before = sha256(out)
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    with pytest.raises(FfmpegError):
        render_chapter_audio(ChapterPlan(1, "One", (Segment(bad, 0),)), out, fmt=AudioFormat())
    assert sha256(out) == before


def test_missing_chunk_is_named_before_any_work(tmp_path: Path) -> None:
    plan = ChapterPlan(3, "Gone", (Segment(tmp_path / "nowhere-17.wav", 0),))
    with pytest.raises(FfmpegError, match="nowhere-17.wav"):
        render_chapter_audio(plan, tmp_path / "003.flac", fmt=AudioFormat())
    assert not (tmp_path / "003.flac").exists()


def test_programming_errors_are_value_errors(tmp_path: Path) -> None:
    tone = make_tone(tmp_path / "t.wav", rate=24000, channels=1, seconds=0.2)
    with pytest.raises(ValueError, match="flac"):
        render_chapter_audio(ChapterPlan(1, "x", (Segment(tone, 0),)), tmp_path / "x.mp3", fmt=AudioFormat())
    with pytest.raises(ValueError, match="no segments"):
        render_chapter_audio(ChapterPlan(1, "x", ()), tmp_path / "x.flac", fmt=AudioFormat())


def test_choose_format_rules_and_chapter_from_file(tmp_path: Path) -> None:
    mono24 = make_tone(tmp_path / "m.wav", rate=24000, channels=1, seconds=0.2)
    mono44 = make_tone(tmp_path / "z.wav", rate=44100, channels=1, seconds=0.2)
    assert choose_format([mono24]) == AudioFormat(24000, 1)
    assert choose_format([mono24, mono44]) == AudioFormat(44100, 1)
    with pytest.raises(FfmpegError):
        choose_format([])
    chapter = chapter_audio_from_file(mono44, index=4, title="Four")
    assert (chapter.index, chapter.title, chapter.duration_ms) == (4, "Four", 200)
