"""Real audio made for the voice tests with espeak-ng, sox and ffmpeg, and ffprobe measurements."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

__all__ = [
    "EIGHT_SECONDS_TEXT",
    "LONG_TEXT",
    "espeak",
    "ffmpeg",
    "probe",
    "sox",
]

# About 7.6 s of espeak-ng speech at its default rate.
EIGHT_SECONDS_TEXT = (
    "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore. "
    "Peter Piper picked a peck of pickled peppers."
)
# About 49 s: fifteen sentences, each followed by a full-stop pause.
LONG_TEXT = " ".join(f"This is sentence number {i}, and it goes on for a while." for i in range(1, 16))


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)  # noqa: S603 - argv list
    assert done.returncode == 0, f"{argv[0]} failed: {done.stderr}"


def espeak(text: str, path: Path) -> Path:
    """Speak ``text`` into a 22.05 kHz mono WAV at ``path``."""
    _run(["espeak-ng", "-w", str(path), text])
    return path


def sox(*args: str | Path) -> None:
    """Run sox with these arguments."""
    _run(["sox", *(str(a) for a in args)])


def ffmpeg(*args: str | Path) -> None:
    """Run ffmpeg quietly with these arguments (overwriting outputs)."""
    _run(["ffmpeg", "-nostdin", "-v", "error", "-y", *(str(a) for a in args)])


def probe(path: Path) -> dict[str, float | int | str]:
    """ffprobe facts of the first audio stream: duration, sample_rate, channels, codec, bits."""
    done = subprocess.run(  # noqa: S603 - argv list
        [
            "ffprobe", "-v", "error", "-select_streams", "a:0",
            "-show_entries", "stream=codec_name,sample_rate,channels,bits_per_sample:format=duration",
            "-of", "json", str(path),
        ],
        capture_output=True, text=True, check=True,
    )
    data = json.loads(done.stdout)
    stream = data["streams"][0]
    return {
        "duration": float(data["format"]["duration"]),
        "sample_rate": int(stream["sample_rate"]),
        "channels": int(stream["channels"]),
        "codec": stream["codec_name"],
        "bits": int(stream.get("bits_per_sample") or 0),
    }
