"""The only module that runs ffmpeg and ffprobe: argv lists in, typed errors and probe records out.

Every failure is translated here, once: a missing binary, a non-zero exit (with the last stderr
lines), and a full disk (ffmpeg's "No space left on device", which ffmpeg 5.1 reports with exit
code 0 when it happens while the trailer is written, so stderr is checked even on success).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from omni_web.assemble.records import ProbedChapter
from omni_web.errors import DiskFullError, FfmpegError, OutputNotWritable
from omni_web.files import is_disk_full
from omni_web.systools import INSTALL_HINT, find_tool

__all__ = [
    "FfmpegPipe",
    "ProbedStream",
    "disk_full_error",
    "path_arg",
    "probe",
    "probe_chapters",
    "probe_duration_ms",
    "probe_duration_us",
    "probe_streams",
    "probe_tags",
    "run_ffmpeg",
    "translate_os_error",
]

# Messages ffmpeg prints when the target disk is full (strerror of ENOSPC and EDQUOT).
_DISK_FULL_MARKERS = ("No space left on device", "Disk quota exceeded")
_TAIL_BYTES = 16384
_TAIL_LINES = 12
_PROBE_TIMEOUT_S = 120


@dataclass(frozen=True, slots=True)
class ProbedStream:
    """One stream of a probed file (audio, the cover picture, the chapter text track)."""

    index: int
    codec_type: str
    codec_name: str
    sample_rate_hz: int | None = None
    channels: int | None = None
    width: int | None = None
    height: int | None = None
    attached_pic: bool = False
    duration_ts: int | None = None
    tags: dict[str, str] = field(default_factory=dict)


def path_arg(path: Path | str) -> str:
    """A path as an ffmpeg argument: absolute, so a name like ``-x.wav`` is never read as an option."""
    return os.path.abspath(os.fspath(path))


def disk_full_error(folder: Path) -> DiskFullError:
    """The error for a full disk, naming the folder and the remedy."""
    return DiskFullError(
        f"The disk holding {folder} is full (no space left on device). Free some space or choose "
        "another output folder, then assemble again; chapter files already rendered are kept."
    )


def translate_os_error(exc: OSError, folder: Path) -> DiskFullError | OutputNotWritable:
    """Map an OSError met while writing into ``folder`` onto the error tree (caller raises ``from exc``)."""
    if is_disk_full(exc):
        return disk_full_error(folder)
    return OutputNotWritable(
        f"Cannot write to {folder}: {exc.strerror or exc}. Check that the folder exists and that "
        "this user may write there, or choose another output folder."
    )


def run_ffmpeg(
    args: Sequence[str],
    *,
    action: str,
    output_dir: Path,
    cwd: Path | None = None,
) -> None:
    """Run ``ffmpeg <common flags> <args>`` to completion.

    Args:
        args: everything after the binary; input and output paths via :func:`path_arg`.
        action: what the run does, for messages ("Encoding the m4b").
        output_dir: where the output goes; named when the disk is full.
        cwd: working folder, for relative input names (a ``concat:`` protocol list).

    Raises:
        FfmpegError: missing binary or failed run; carries the stderr tail and exit code.
        DiskFullError: the output disk filled up.
    """
    argv = [find_tool("ffmpeg"), "-hide_banner", "-nostdin", "-loglevel", "error", "-xerror", "-y"]
    argv += list(args)
    # stderr goes to a file, not a pipe: a chatty failure can never block the child, and only the
    # tail is read back, so memory stays flat however long the run.
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=cwd,
            )
        except FileNotFoundError as exc:
            raise FfmpegError(f"ffmpeg is not installed. {INSTALL_HINT}") from exc
        except OSError as exc:
            raise FfmpegError(f"Could not start ffmpeg for {action.lower()}: {exc}") from exc
        try:
            returncode = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        tail = _read_tail(err)
    _check(returncode, tail, action=action, output_dir=output_dir)


class FfmpegPipe:
    """ffmpeg reading its input on stdin (``pipe:0`` in ``args``), fed by the caller in blocks.

    :meth:`write` sends bytes (a dead ffmpeg raises its reason); :meth:`finish` closes the input,
    waits and returns stderr (its last megabyte, at ``loglevel``); :meth:`abort` kills it. Memory is
    the pipe buffer, however much is fed.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        action: str,
        output_dir: Path,
        cwd: Path | None = None,
        loglevel: str = "error",
    ) -> None:
        self._action = action
        self._output_dir = output_dir
        self._err = tempfile.TemporaryFile()
        argv = [find_tool("ffmpeg"), "-hide_banner", "-nostats", "-loglevel", loglevel, "-y", *args]
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - argv list, no shell
                argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._err, cwd=cwd
            )
        except OSError as exc:
            self._err.close()
            raise FfmpegError(f"Could not start ffmpeg for {action.lower()}: {exc}. {INSTALL_HINT}") from exc

    def write(self, data: bytes) -> None:
        """Send ``data``; raises FfmpegError (or DiskFullError) when ffmpeg has stopped."""
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
        except (BrokenPipeError, ValueError):
            self._proc.wait()
            self._raise_failure(self._proc.returncode or 1)
            raise FfmpegError(f"{self._action} failed: ffmpeg stopped reading its input.") from None

    def finish(self) -> str:
        """Close the input, wait for ffmpeg and return its stderr."""
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        returncode = self._proc.wait()
        log = self._raise_failure(returncode)
        return log

    def abort(self) -> None:
        """Kill ffmpeg (its partial outputs are scratch files the caller removes)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        self._err.close()

    def _raise_failure(self, returncode: int) -> str:
        size = self._err.seek(0, os.SEEK_END)
        self._err.seek(max(0, size - _PIPE_LOG_BYTES))
        log = self._err.read().decode("utf-8", "replace")
        self._err.close()
        tail = "\n".join(line.rstrip() for line in log.splitlines()[-_PIPE_TAIL_LINES:] if line.strip())
        _check(returncode, tail if returncode else log, action=self._action, output_dir=self._output_dir)
        return log


_PIPE_LOG_BYTES = 1 << 20
_PIPE_TAIL_LINES = 30


def _read_tail(err: IO[bytes]) -> str:
    size = err.seek(0, os.SEEK_END)
    err.seek(max(0, size - _TAIL_BYTES))
    lines = err.read().decode("utf-8", "replace").splitlines()
    return "\n".join(line.rstrip() for line in lines[-_TAIL_LINES:] if line.strip())


def _check(returncode: int, tail: str, *, action: str, output_dir: Path) -> None:
    if any(marker in tail for marker in _DISK_FULL_MARKERS):
        raise disk_full_error(output_dir)
    if returncode != 0:
        detail = tail or "(ffmpeg printed nothing)"
        raise FfmpegError(
            f"{action} failed: ffmpeg exited with code {returncode}.\n{detail}",
            stderr_tail=tail,
            returncode=returncode,
        )


# --- ffprobe --------------------------------------------------------------------------------


def probe(path: Path | str) -> dict[str, Any]:
    """ffprobe's JSON for ``path`` (``-show_chapters -show_format -show_streams``).

    Raises:
        FfmpegError: ffprobe is missing, the file does not exist, or it is not readable media.
    """
    if not os.path.isfile(path):
        raise FfmpegError(f"Cannot read {path}: the file does not exist.")
    argv = [
        find_tool("ffprobe"), "-v", "error", "-print_format", "json",
        "-show_chapters", "-show_format", "-show_streams", path_arg(path),
    ]
    try:
        done = subprocess.run(  # noqa: S603 - argv list, no shell
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except FileNotFoundError as exc:
        raise FfmpegError(f"ffprobe is not installed. {INSTALL_HINT}") from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FfmpegError(f"ffprobe could not read {path}: {exc}") from exc
    tail = "\n".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-_TAIL_LINES:])
    if done.returncode != 0:
        raise FfmpegError(
            f"Cannot read {path}: it is damaged or not an audio file (ffprobe exited with code "
            f"{done.returncode}). Render it again.\n{tail}",
            stderr_tail=tail,
            returncode=done.returncode,
        )
    try:
        return json.loads(done.stdout.decode("utf-8", "replace") or "{}")
    except json.JSONDecodeError as exc:
        raise FfmpegError(f"ffprobe printed unreadable output for {path}: {exc}") from exc


def probe_duration_us(path: Path | str, info: dict[str, Any] | None = None) -> int:
    """Duration in microseconds; sample-exact for PCM and FLAC (from the audio stream's samples).

    Raises:
        FfmpegError: as :func:`probe`, or the file has no duration (not audio).
    """
    info = probe(path) if info is None else info
    for stream in info.get("streams", []):
        if stream.get("codec_type") != "audio":
            continue
        rate = _int(stream.get("sample_rate"))
        samples = _int(stream.get("duration_ts"))
        if rate and samples is not None and stream.get("time_base") == f"1/{rate}":
            return round(samples * 1_000_000 / rate)
        break
    duration = info.get("format", {}).get("duration")
    try:
        return round(float(duration) * 1_000_000)
    except (TypeError, ValueError):
        raise FfmpegError(f"Cannot measure {path}: ffprobe reports no duration; it is not audio.") from None


def probe_duration_ms(path: Path | str) -> int:
    """Duration of a media file in milliseconds, measured by ffprobe."""
    return round(probe_duration_us(path) / 1000)


def probe_chapters(path: Path | str, info: dict[str, Any] | None = None) -> list[ProbedChapter]:
    """The chapter marks of a file (titles and times in milliseconds), in order (``info``: a
    :func:`probe` result for ``path`` already at hand)."""
    chapters = []
    for item in (info if info is not None else probe(path)).get("chapters", []):
        chapters.append(
            ProbedChapter(
                title=str(item.get("tags", {}).get("title", "")),
                start_ms=round(float(item.get("start_time", 0)) * 1000),
                end_ms=round(float(item.get("end_time", 0)) * 1000),
            )
        )
    return chapters


def probe_tags(path: Path | str) -> dict[str, str]:
    """Container-level tags with lower-case keys (``title``, ``artist``, ``composer``, ``track``…)."""
    return {str(k).lower(): str(v) for k, v in probe(path).get("format", {}).get("tags", {}).items()}


def probe_streams(path: Path | str, info: dict[str, Any] | None = None) -> list[ProbedStream]:
    """Every stream of a file; the embedded cover shows up with ``attached_pic=True``."""
    info = probe(path) if info is None else info
    return [_stream(item) for item in info.get("streams", [])]


def _stream(item: dict[str, Any]) -> ProbedStream:
    return ProbedStream(
        index=int(item.get("index", 0)),
        codec_type=str(item.get("codec_type", "")),
        codec_name=str(item.get("codec_name", "")),
        sample_rate_hz=_int(item.get("sample_rate")),
        channels=_int(item.get("channels")),
        width=_int(item.get("width")),
        height=_int(item.get("height")),
        attached_pic=bool(item.get("disposition", {}).get("attached_pic", 0)),
        duration_ts=_int(item.get("duration_ts")),
        tags={str(k).lower(): str(v) for k, v in item.get("tags", {}).items()},
    )


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
