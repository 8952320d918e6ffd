"""Measure a written audio file the way delivery checkers do, and judge it against a preset.

One ffmpeg run decodes the file through the ``ebur128`` filter (integrated loudness, loudness
range, true peak with 4x oversampling) and streams the decoded samples to Python, which sums
RMS in 100 ms blocks: the file's RMS, its sample peak, and its noise floor as ACX's checkers
define it (RMS of the quietest 500 ms, a sliding window). Memory stays flat: one block at a time.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from omni_web.assemble.ffmpeg import path_arg
from omni_web.errors import FfmpegError
from omni_web.master.presets import LoudnessPreset
from omni_web.systools import find_tool

__all__ = ["FileLevels", "measure_file", "parse_ebur128_summary"]

_BLOCK_S = 0.1
_FLOOR_WINDOW_BLOCKS = 5  # 500 ms
_SUMMARY = {
    "integrated_lufs": re.compile(r"Integrated loudness:\s*\n\s*I:\s*(-?[\d.]+|-inf)\s*LUFS"),
    "lra_lu": re.compile(r"Loudness range:\s*\n\s*LRA:\s*(-?[\d.]+|-inf)\s*LU"),
    "true_peak_db": re.compile(r"True peak:\s*\n\s*Peak:\s*(-?[\d.]+|-inf)\s*dBFS"),
}


def _db(power: float) -> float:
    return 10 * math.log10(power) if power > 0 else -math.inf


def parse_ebur128_summary(stderr: str) -> dict[str, float]:
    """The ``Summary:`` numbers of ffmpeg's ebur128 filter (the last summary printed)."""
    tail = stderr[stderr.rfind("Summary:") :]
    values: dict[str, float] = {}
    for key, pattern in _SUMMARY.items():
        match = pattern.search(tail)
        if match is None:
            raise FfmpegError(
                f"ffmpeg's ebur128 printed no {key.replace('_', ' ')}; the file may hold no audio."
            )
        values[key] = float(match.group(1))
    return values


@dataclass(frozen=True, slots=True)
class FileLevels:
    """What one written file measures (dB values may be -inf for digital silence)."""

    path: str
    duration_s: float
    integrated_lufs: float
    lra_lu: float
    true_peak_db: float
    rms_db: float
    peak_db: float
    noise_floor_db: float
    sample_rate_hz: int
    channels: int

    def failures(self, preset: LoudnessPreset) -> list[str]:
        """Every rule of ``preset`` this file breaks, as sentences (empty: it passes)."""
        if not preset.master:
            return []
        problems: list[str] = []
        low, high = preset.target_lufs - preset.tolerance_lu, preset.target_lufs + preset.tolerance_lu
        if not low <= self.integrated_lufs <= high:
            problems.append(f"loudness {self.integrated_lufs:.1f} LUFS is outside {low:.0f}..{high:.0f} LUFS")
        if self.true_peak_db > preset.max_true_peak_db:
            problems.append(
                f"true peak {self.true_peak_db:.1f} dBTP is above {preset.max_true_peak_db:.0f} dBTP"
            )
        if self.lra_lu > preset.max_lra_lu:
            problems.append(f"loudness range {self.lra_lu:.1f} LU is above {preset.max_lra_lu:.0f} LU")
        if preset.rms_range_db is not None:
            rms_low, rms_high = preset.rms_range_db
            if not rms_low <= self.rms_db <= rms_high:
                problems.append(f"RMS {self.rms_db:.1f} dB is outside {rms_low:.0f}..{rms_high:.0f} dB")
        floor_low, floor_high = preset.noise_floor_range_db
        if not math.isfinite(self.noise_floor_db):
            problems.append("the noise floor is digital silence (-inf); ACX rejects dead silence")
        elif self.noise_floor_db > floor_high:
            problems.append(f"noise floor {self.noise_floor_db:.1f} dB is above {floor_high:.0f} dB")
        return problems

    def to_json(self) -> dict[str, object]:
        """JSON-safe values (-inf written as null)."""
        return {k: (round(v, 2) if math.isfinite(v) else None) if isinstance(v, float) else v
                for k, v in asdict(self).items()}


def measure_file(path: Path) -> FileLevels:
    """Measure ``path`` (any audio ffmpeg reads).

    Raises:
        FfmpegError: the file is missing, unreadable, or has no audio.
    """
    path = Path(path)
    if not path.is_file():
        raise FfmpegError(f"Cannot measure {path}: the file does not exist.")
    info = _probe_audio(path)
    rate, channels = info
    block = max(1, int(rate * _BLOCK_S))
    argv = [
        find_tool("ffmpeg"), "-hide_banner", "-nostats", "-nostdin",
"-i", path_arg(path), "-map", "0:a:0",
        # framelog 40 (verbose): per-frame lines stay out of the info-level log.
        "-af", "ebur128=peak=true:framelog=40", "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1",
    ]
    sums: list[float] = []
    total_power, total_frames, peak = 0.0, 0, 0.0
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)  # noqa: S603
        assert proc.stdout is not None
        leftover = np.zeros((0, channels), dtype=np.float32)
        while True:
            raw = proc.stdout.read(block * channels * 4 * 10)
            if not raw:
                break
            data = np.frombuffer(raw[: len(raw) - len(raw) % (channels * 4)], dtype="<f4").reshape(
                -1, channels
            )
            data = np.vstack([leftover, data]) if len(leftover) else data
            whole = len(data) // block * block
            blocks = data[:whole].reshape(-1, block, channels).astype(np.float64)
            power = np.square(blocks).mean(axis=(1, 2))
            sums.extend(power.tolist())
            total_power += float(power.sum()) * block
            total_frames += whole
            if whole:
                peak = max(peak, float(np.abs(data[:whole]).max()))
            leftover = data[whole:]
        proc.stdout.close()
        returncode = proc.wait()
        err.seek(0)
        log = err.read().decode("utf-8", "replace")
    if returncode != 0:
        tail = "\n".join(log.strip().splitlines()[-8:])
        raise FfmpegError(f"Measuring {path.name} failed: ffmpeg exited with code {returncode}.\n{tail}")
    summary = parse_ebur128_summary(log)
    powers = np.asarray(sums or [0.0])
    if len(powers) >= _FLOOR_WINDOW_BLOCKS:
        window = np.convolve(powers, np.ones(_FLOOR_WINDOW_BLOCKS) / _FLOOR_WINDOW_BLOCKS, mode="valid")
    else:
        window = np.asarray([powers.mean()])
    return FileLevels(
        path=str(path),
        duration_s=round(total_frames / rate, 3),
        integrated_lufs=summary["integrated_lufs"],
        lra_lu=summary["lra_lu"],
        true_peak_db=summary["true_peak_db"],
        rms_db=_db(total_power / max(total_frames, 1)),
        peak_db=20 * math.log10(peak) if peak > 0 else -math.inf,
        noise_floor_db=_db(float(window.min())),
        sample_rate_hz=rate,
        channels=channels,
    )


def _probe_audio(path: Path) -> tuple[int, int]:
    from omni_web.assemble.ffmpeg import probe

    for stream in probe(path).get("streams", []):
        if stream.get("codec_type") == "audio":
            return int(stream.get("sample_rate") or 0), int(stream.get("channels") or 1)
    raise FfmpegError(f"Cannot measure {path}: it has no audio stream.")
