"""ffmpeg's loudnorm in two passes: the first pass's measurement, and the second pass's filter.

Pass 1 measures the chapter with ffmpeg's ``ebur128`` filter (the BS.1770 meter: integrated
loudness and its gate threshold, loudness range, true peak), which is what loudnorm's own measuring
run reports as ``input_*``, at a sixth of its cost: a measuring loudnorm resamples to 192 kHz and
runs its whole dynamic normaliser on output that is thrown away, which is what made mastering fall
behind a fast server. Pass 2 feeds the measurement to loudnorm with ``linear=true`` (one constant
gain, at the chapter's own rate). The trap: loudnorm uses linear mode only when
``measured_tp + (target_i - measured_i) <= target_tp`` and ``measured_lra <= target_lra``
(af_loudnorm.c ``init()``); otherwise it silently switches to its dynamic mode, which pumps and
resamples to 192 kHz. The JSON it prints at the end says which it used (``normalization_type``);
we predict it with the same rule, and check it afterwards.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from omni_web.errors import FfmpegError

__all__ = [
    "LRA_TARGET",
    "Loudness",
    "LoudnormResult",
    "linear_gain_fits",
    "measure_filter",
    "normalize_filter",
    "parse_ebur128_loudness",
    "parse_loudnorm_json",
]

# A generous LRA target: leveled speech is far under it, so the LRA rule never forces dynamic mode.
LRA_TARGET = 20.0
# Below this a chapter holds no measurable speech; its leveled chunks are left as they are.
SILENT_LUFS = -60.0
_JSON_BLOCK = re.compile(r"\{[^{}]*\"normalization_type\"[^{}]*\}", re.S)
_NUMBER = r"(-?[\d.]+|-inf|inf|nan)"
_EBUR128 = {
    "input_i": re.compile(rf"Integrated loudness:\s*\n\s*I:\s*{_NUMBER}\s*LUFS"),
    "input_thresh": re.compile(rf"Integrated loudness:\s*\n\s*I:[^\n]*\n\s*Threshold:\s*{_NUMBER}\s*LUFS"),
    "input_lra": re.compile(rf"Loudness range:\s*\n\s*LRA:\s*{_NUMBER}\s*LU"),
    "input_tp": re.compile(rf"True peak:\s*\n\s*Peak:\s*{_NUMBER}\s*dBFS"),
}


@dataclass(frozen=True, slots=True)
class Loudness:
    """A chapter's pass-1 measurement, named as loudnorm's ``measured_*`` options take it."""

    input_i: float
    input_tp: float
    input_lra: float
    input_thresh: float

    @property
    def silent(self) -> bool:
        """Nothing to normalise: no speech above the gates (-inf, or the -70 LUFS absolute gate
        itself, as for a chapter of a few words shorter than one 400 ms block)."""
        return not math.isfinite(self.input_i) or self.input_i <= SILENT_LUFS


@dataclass(frozen=True, slots=True)
class LoudnormResult(Loudness):
    """loudnorm's JSON summary: the input's measurement and the mode it used."""

    output_i: float
    output_tp: float
    normalization_type: str
    target_offset: float

    @property
    def linear(self) -> bool:
        """True when loudnorm applied one constant gain."""
        return self.normalization_type == "linear"


def _number(value: object) -> float:
    text = str(value).strip().lower()
    if text in ("-inf", "inf", "+inf", "nan"):
        return float(text.replace("+", ""))
    return float(text)


def parse_loudnorm_json(stderr: str) -> LoudnormResult:
    """The last loudnorm JSON block in ffmpeg's stderr.

    Raises:
        FfmpegError: no block found (ffmpeg too old, or the run failed before the end).
    """
    blocks = _JSON_BLOCK.findall(stderr)
    if not blocks:
        raise FfmpegError("ffmpeg's loudnorm printed no measurement; is ffmpeg 4.2 or newer installed?")
    data = json.loads(blocks[-1])
    try:
        return LoudnormResult(
            input_i=_number(data["input_i"]),
            input_tp=_number(data["input_tp"]),
            input_lra=_number(data["input_lra"]),
            input_thresh=_number(data["input_thresh"]),
            output_i=_number(data["output_i"]),
            output_tp=_number(data["output_tp"]),
            normalization_type=str(data["normalization_type"]).strip().lower(),
            target_offset=_number(data.get("target_offset", 0)),
        )
    except (KeyError, ValueError) as exc:
        raise FfmpegError(f"ffmpeg's loudnorm printed a measurement we cannot read: {exc}") from exc


def parse_ebur128_loudness(stderr: str) -> Loudness:
    """The last ``Summary:`` of ffmpeg's ``ebur128`` filter (run with ``peak=true``).

    Raises:
        FfmpegError: no summary in the log (the run failed before the end, or no audio).
    """
    tail = stderr[stderr.rfind("Summary:") :]
    values: dict[str, float] = {}
    for key, pattern in _EBUR128.items():
        match = pattern.search(tail)
        if match is None:
            raise FfmpegError("ffmpeg's ebur128 printed no loudness summary; the chapter may hold no audio.")
        values[key] = _number(match.group(1))
    return Loudness(**values)


def linear_gain_fits(measured: Loudness, *, target_i: float, target_tp: float) -> bool:
    """loudnorm's own rule for keeping linear mode (af_loudnorm.c), with a 0.05 dB safety margin."""
    gain = target_i - measured.input_i
    return measured.input_tp + gain <= target_tp - 0.05 and measured.input_lra <= LRA_TARGET


def measure_filter() -> str:
    """Pass 1: the BS.1770 meter with true peak (4x oversampled); its per-frame lines stay out of
    the info-level log, the summary is printed at the end."""
    return "ebur128=peak=true:framelog=verbose"


def normalize_filter(measured: Loudness, *, target_i: float, target_tp: float) -> str:
    """Pass 2: the same targets, fed the measurement, in linear mode."""
    return (
        f"loudnorm=I={target_i:.1f}:TP={target_tp:.1f}:LRA={LRA_TARGET:.0f}"
        f":measured_I={measured.input_i:.2f}:measured_TP={measured.input_tp:.2f}"
        f":measured_LRA={measured.input_lra:.2f}:measured_thresh={measured.input_thresh:.2f}"
        ":linear=true:print_format=json"
    )


def limiter_filter(ceiling_db: float) -> str:
    """A look-ahead sample-peak limiter at ``ceiling_db`` dBFS, delay-compensated (timings hold)
    and without alimiter's default auto-level (which would undo the leveling)."""
    limit = min(1.0, max(0.0625, 10 ** (ceiling_db / 20)))
    return f"alimiter=limit={limit:.5f}:attack=5:release=50:level=false:latency=true"


__all__ += ["limiter_filter"]
