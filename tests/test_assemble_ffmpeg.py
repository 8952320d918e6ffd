"""The ffmpeg boundary: missing binaries, failing runs, full disks, and the probe helpers."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from omni_web.assemble import AudiobookTags
from omni_web.assemble.ffmpeg import (
    probe,
    probe_chapters,
    probe_duration_ms,
    probe_streams,
    probe_tags,
    run_ffmpeg,
    translate_os_error,
)
from omni_web.assemble.join import EncodedChapter, join_m4b
from omni_web.errors import DiskFullError, FfmpegError, OutputNotWritable
from omni_web.systools import INSTALL_HINT

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

EXPECTED_MISSING = "ffmpeg is not installed. Install it: sudo apt install ffmpeg | sudo pacman -S ffmpeg | sudo dnf install ffmpeg"


def test_missing_ffmpeg_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tone = tmp_path / "t.wav"
    tone.write_bytes(b"")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(FfmpegError) as caught:
        run_ffmpeg(["-version"], action="Checking", output_dir=tmp_path)
    assert str(caught.value) == EXPECTED_MISSING
    with pytest.raises(FfmpegError, match="ffprobe is not installed") as caught_probe:
        probe(tone)
    assert INSTALL_HINT in str(caught_probe.value)
    # The public entry point reports the same, not a FileNotFoundError traceback.
    with pytest.raises(FfmpegError, match="is not installed"):
        join_m4b(
            [EncodedChapter(1, "x", tone, 1, 24000)], tmp_path / "x.m4b", tags=AudiobookTags("x"), cover=None
        )


def test_failing_ffmpeg_carries_the_last_stderr_lines(tmp_path: Path) -> None:
    junk = tmp_path / "junk-input.wav"
    junk.write_bytes(b"\x00garbage" * 50)
    with pytest.raises(FfmpegError) as caught:
        run_ffmpeg(["-i", str(junk), "-f", "null", "-"], action="Decoding junk", output_dir=tmp_path)
    err = caught.value
    assert err.returncode not in (None, 0)
    assert "junk-input.wav" in err.stderr_tail
    assert str(err).startswith("Decoding junk failed: ffmpeg exited with code")
    assert err.stderr_tail in str(err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_no_space_left_becomes_disk_full(tmp_path: Path) -> None:
    with pytest.raises(DiskFullError) as caught:
        run_ffmpeg(
            ["-f", "lavfi", "-i", "anoisesrc=r=24000:d=30", "-f", "flac", "/dev/full"],
            action="Writing",
            output_dir=tmp_path,
        )
    assert str(tmp_path) in str(caught.value)
    assert isinstance(caught.value, OSError)


def test_os_errors_are_translated(tmp_path: Path) -> None:
    full = translate_os_error(OSError(errno.ENOSPC, "No space left on device"), tmp_path)
    assert isinstance(full, DiskFullError) and str(tmp_path) in str(full)
    denied = translate_os_error(PermissionError(errno.EACCES, "Permission denied"), tmp_path)
    assert isinstance(denied, OutputNotWritable) and "Permission denied" in str(denied)


def test_probe_helpers_read_real_files(tmp_path: Path) -> None:
    wav = tmp_path / "two-seconds.wav"
    subprocess.run(  # noqa: S603
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "sine=r=44100:d=2.5",
            "-ac",
            "2",
            "-metadata",
            "title=Probe Me",
            str(wav),
        ],
        check=True,
    )
    assert probe_duration_ms(wav) == 2500
    assert probe_tags(wav)["title"] == "Probe Me"
    assert probe_chapters(wav) == []
    (stream,) = probe_streams(wav)
    assert (stream.codec_type, stream.sample_rate_hz, stream.channels) == ("audio", 44100, 2)

    with pytest.raises(FfmpegError, match="does not exist"):
        probe(tmp_path / "nope.wav")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(FfmpegError, match="damaged or not an audio file"):
        probe_duration_ms(text)
