"""File mechanics shared by the assembly steps: scratch folders beside the output, atomic
publication, free-space checks, WAV header checks and format conversion of inputs.

Every output is written inside a hidden scratch folder next to its final name and moved into place
with one ``os.replace`` when complete, so a failure (or a kill) never leaves a half file under a
final name, and the scratch folder is removed whatever happens. Inputs are never modified.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import tempfile
import wave
from collections.abc import Iterator, Sequence
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, run_ffmpeg, translate_os_error
from omni_web.assemble.records import AudioFormat
from omni_web.errors import DiskFullError

__all__ = [
    "CONFORM_BATCH",
    "check_free_space",
    "conform_audio",
    "ensure_dir",
    "publish",
    "wav_format",
    "work_dir",
    "write_text",
]

# Inputs converted per ffmpeg run: fewer process starts, bounded open files and input threads.
CONFORM_BATCH = 16
# Codec → (ffmpeg muxer, file suffix) for the lossless intermediates the concat demuxer joins.
_CODEC_CONTAINERS = {"pcm_s16le": ("wav", ".wav"), "flac": ("flac", ".flac")}


def ensure_dir(folder: Path) -> Path:
    """Create ``folder`` (and parents); OSError becomes DiskFullError or OutputNotWritable."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise translate_os_error(exc, folder) from exc
    return folder


def check_free_space(folder: Path, needed_bytes: int) -> None:
    """Refuse before writing when ``needed_bytes`` clearly cannot fit in ``folder`` (or the nearest
    existing folder above it): better than a disk that fills up near the end of a long write."""
    probe_dir = Path(folder)
    while not probe_dir.exists() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    try:
        free = shutil.disk_usage(probe_dir).free
    except OSError:
        return
    if free < needed_bytes:
        raise DiskFullError(
            f"Not enough space in {folder} for the audiobook: it needs about {needed_bytes // 1_000_000 + 1} "
            "MB "
            f"and {free // 1_000_000} MB are free. Free some space or choose another output folder; "
            "chapter files already rendered are kept."
        )


@contextlib.contextmanager
def work_dir(final_path: Path) -> Iterator[Path]:
    """A hidden scratch folder beside ``final_path`` (same file system, so publishing is a rename)."""
    folder = ensure_dir(final_path.parent)
    try:
        scratch = Path(tempfile.mkdtemp(prefix=f".{final_path.name}.", suffix=".tmp", dir=folder))
    except OSError as exc:
        raise translate_os_error(exc, folder) from exc
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def publish(done: Path, final_path: Path) -> Path:
    """Move a finished file onto its final name in one step (replacing an older version)."""
    try:
        os.replace(done, final_path)
    except OSError as exc:
        raise translate_os_error(exc, final_path.parent) from exc
    return final_path


def write_text(path: Path, text: str) -> Path:
    """Write a small UTF-8 text file (concat list, metadata) with OSError translated."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise translate_os_error(exc, path.parent) from exc
    return path


def wav_format(path: Path) -> AudioFormat | None:
    """The format of a plain 16-bit PCM WAV, read from its header; None for anything else.

    None (compressed, float, 24-bit, WAVE_FORMAT_EXTENSIBLE on Python 3.11, an AAC-less rate,
    unreadable or damaged files) sends the file through ffmpeg, which converts it or reports why not.
    """
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2 or wav.getcomptype() != "NONE":
                return None
            return AudioFormat(sample_rate_hz=wav.getframerate(), channels=wav.getnchannels())
    # The wave module reports malformed files with any of these (RuntimeError for a chunk size
    # that points past the end); ffmpeg then names what is wrong with the file.
    except (wave.Error, EOFError, OSError, ValueError, RuntimeError, struct.error):
        return None


def conform_audio(
    sources: Sequence[Path],
    dest_dir: Path,
    fmt: AudioFormat,
    *,
    codec: str,
    action: str,
    output_dir: Path,
) -> list[Path]:
    """Convert each source to ``fmt`` in ``codec`` (``pcm_s16le`` or ``flac``) inside ``dest_dir``.

    Runs ffmpeg once per :data:`CONFORM_BATCH` files. Returns the new paths, in order.

    Raises:
        FfmpegError: a source is unreadable; ffmpeg's message names the file.
    """
    muxer, suffix = _CODEC_CONTAINERS[codec]
    outputs: list[Path] = []
    for start in range(0, len(sources), CONFORM_BATCH):
        batch = sources[start : start + CONFORM_BATCH]
        args: list[str] = []
        for source in batch:
            args += ["-i", path_arg(source)]
        for number, _source in enumerate(batch):
            target = dest_dir / f"conformed-{start + number:06d}{suffix}"
            args += [
                "-map",
                f"{number}:a:0",
                "-map_metadata",
                "-1",
                "-ar",
                str(fmt.sample_rate_hz),
                "-ac",
                str(fmt.channels),
                "-c:a",
                codec,
                "-sample_fmt",
                "s16",
                "-f",
                muxer,
                path_arg(target),
            ]
            outputs.append(target)
        run_ffmpeg(args, action=action, output_dir=output_dir)
    return outputs
