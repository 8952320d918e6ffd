"""Read levels back from written files with ffmpeg itself (ebur128, astats), not with the app's code.

The mastering tests judge the app's output with these, so a bug in omni_web.master.levels cannot
hide a bug in the mastering.
"""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Ebur128:
    integrated_lufs: float
    lra_lu: float
    true_peak_db: float


def _ffmpeg(args: list[str]) -> str:
    done = subprocess.run(  # noqa: S603 - argv list
        ["ffmpeg", "-hide_banner", "-nostats", "-nostdin", *args, "-f", "null", "-"],
        capture_output=True, check=True, timeout=600,
    )
    return done.stderr.decode("utf-8", "replace")


def ebur128(path: Path, *, start_s: float | None = None, end_s: float | None = None) -> Ebur128:
    """Integrated loudness, LRA and true peak of a file, or of [start, end) of it."""
    window = []
    if start_s is not None:
        window += ["-ss", f"{start_s:.3f}"]
    if end_s is not None:
        window += ["-to", f"{end_s:.3f}"]
    log = _ffmpeg([*window, "-i", str(path), "-map", "0:a:0", "-af", "ebur128=peak=true:framelog=40"])
    summary = log[log.rfind("Summary:") :]

    def value(pattern: str) -> float:
        match = re.search(pattern, summary)
        assert match, summary
        return float(match.group(1))

    return Ebur128(
        integrated_lufs=value(r"I:\s*(-?[\d.]+|-inf) LUFS"),
        lra_lu=value(r"LRA:\s*(-?[\d.]+|-inf) LU\b"),
        true_peak_db=value(r"Peak:\s*(-?[\d.]+|-inf) dBFS"),
    )


def block_rms_db(path: Path, *, block_s: float = 0.5, rate: int = 24000) -> list[float]:
    """RMS level (dB) of consecutive ``block_s`` blocks, by ffmpeg's astats (``-inf`` for zeros)."""
    samples = int(rate * block_s)
    log = _ffmpeg([
        "-i", str(path), "-map", "0:a:0", "-af",
        f"aresample={rate},asetnsamples=n={samples}:p=0,astats=metadata=1:reset=1,"
        "ametadata=print:key=lavfi.astats.Overall.RMS_level",
    ])
    values = []
    for match in re.finditer(r"lavfi\.astats\.Overall\.RMS_level=(\S+)", log):
        text = match.group(1)
        values.append(-math.inf if text in ("-inf", "inf") else float(text))
    # The last block is partial; ACX's checkers look at whole 500 ms windows.
    return values[:-1] if len(values) > 1 else values


def overall_rms_db(path: Path) -> float:
    """The file's RMS level (dB) by astats."""
    log = _ffmpeg(["-i", str(path), "-map", "0:a:0", "-af", "astats=measure_perchannel=none"])
    match = re.search(r"RMS level dB:\s*(-?[\d.]+|-inf)", log[log.rfind("Overall") :])
    assert match, log[-2000:]
    return float(match.group(1))


def digital_silence_spans(path: Path, *, min_s: float = 0.05) -> int:
    """How many stretches of at least ``min_s`` are below -90 dB (digital silence, not room tone)."""
    log = _ffmpeg(["-i", str(path), "-map", "0:a:0", "-af", f"silencedetect=n=-90dB:d={min_s}"])
    return log.count("silence_start")
