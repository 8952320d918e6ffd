"""ffmpeg runs that mastering needs and the assembly layer does not: PCM fed on stdin, stderr kept.

loudnorm prints its JSON at log level ``info``, so these runs keep the whole (small) stderr, where
:func:`omni_web.assemble.ffmpeg.run_ffmpeg` keeps only error lines. Errors are translated the same
way: a missing binary or a failed run is an FfmpegError with the stderr tail, a full disk a
DiskFullError naming the folder.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np

from omni_web.assemble.ffmpeg import FfmpegPipe, disk_full_error
from omni_web.errors import FfmpegError
from omni_web.systools import INSTALL_HINT, find_tool

__all__ = ["PcmSink", "run_ffmpeg_logged"]

_DISK_FULL = ("No space left on device", "Disk quota exceeded")
_MAX_LOG_BYTES = 1 << 20
_BASE = ("-hide_banner", "-nostats", "-loglevel", "info", "-y")


def _read_log(err: IO[bytes]) -> str:
    size = err.seek(0, os.SEEK_END)
    err.seek(max(0, size - _MAX_LOG_BYTES))
    return err.read().decode("utf-8", "replace")


def _check(returncode: int, log: str, *, action: str, output_dir: Path) -> None:
    if any(marker in log for marker in _DISK_FULL):
        raise disk_full_error(output_dir)
    if returncode != 0:
        tail = "\n".join(line for line in log.strip().splitlines()[-30:])
        raise FfmpegError(
            f"{action} failed: ffmpeg exited with code {returncode}.\n{tail}",
            stderr_tail=tail,
            returncode=returncode,
        )


def run_ffmpeg_logged(args: Sequence[str], *, action: str, output_dir: Path) -> str:
    """Run ffmpeg to completion and return its stderr (info level).

    Raises:
        FfmpegError: ffmpeg is missing or failed (stderr tail in the message).
        DiskFullError: the output disk filled up.
    """
    argv = [find_tool("ffmpeg"), *_BASE, "-nostdin", *args]
    with tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, check=False
            )  # noqa: S603
        except OSError as exc:
            raise FfmpegError(f"Could not start ffmpeg for {action.lower()}: {exc}. {INSTALL_HINT}") from exc
        log = _read_log(err)
    _check(done.returncode, log, action=action, output_dir=output_dir)
    return log


class PcmSink:
    """An ffmpeg process reading float32 PCM (``rate`` Hz, ``channels``) on stdin.

    Write blocks with :meth:`write`; :meth:`finish` closes the input, waits, and returns stderr
    (info level: loudness summaries). :meth:`abort` kills it (a cancelled job).
    """

    def __init__(
        self, args: Sequence[str], *, rate: int, channels: int, action: str, output_dir: Path
    ) -> None:
        pcm = ["-f", "f32le", "-ar", str(rate), "-ac", str(channels), "-i", "pipe:0"]
        self._pipe = FfmpegPipe([*pcm, *args], action=action, output_dir=output_dir, loglevel="info")

    def write(self, samples: np.ndarray) -> None:
        """Send float32 frames (frames, channels); a dead ffmpeg raises FfmpegError with its reason."""
        self._pipe.write(np.ascontiguousarray(samples, dtype="<f4").tobytes())

    def finish(self) -> str:
        """Close the input, wait for ffmpeg and return its stderr."""
        return self._pipe.finish()

    def abort(self) -> None:
        """Kill ffmpeg (its partial outputs are scratch files the caller removes)."""
        self._pipe.abort()
