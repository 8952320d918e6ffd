"""Make a reference clip fit the server's 10 MiB limit, and turn library voices into voice choices.

The server refuses a reference over ``MAX_REFERENCE_AUDIO_BYTES`` whether it arrives as a local
path or as a base64 data URL (``sglang_omni/serve/speech_limits.py``; the limit applies to the
decoded bytes). Library clips are at most 30 s of mono 16-bit audio at up to 48 kHz (2.9 MB), so
they always fit; a clip from elsewhere (a long stereo WAV handed to the CLI) may not. Such a clip
is re-encoded, never sent as is: first to mono 16-bit at the highest of 48/44.1/32/24/22.05/16 kHz
(not above its own rate) whose size fits, and only when even 16 kHz mono is too big, cut to the
length that fits. The fitted file is cached under ``<state>/references/`` by content hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omni_web.client import MAX_REFERENCE_AUDIO_BYTES, VoiceChoice
from omni_web.errors import VoiceError
from omni_web.files import atomic_path, file_sha256
from omni_web.paths import DataPaths
from omni_web.systools import find_tool
from omni_web.voices.clip import probe_clip, run_tool
from omni_web.voices.library import Voice

__all__ = [
    "MAX_REFERENCE_AUDIO_BYTES",
    "FitPlan",
    "clone_choice",
    "fit_reference",
    "plan_fit",
    "reference_cache_dir",
]

_RATES_HZ = (48000, 44100, 32000, 24000, 22050, 16000)
_WAV_HEADER_BYTES = 44
# ffmpeg may add a LIST chunk and rounds lengths; keep this much under the limit.
_SLACK_BYTES = 4096


@dataclass(frozen=True, slots=True)
class FitPlan:
    """How to re-encode a clip so it fits: mono 16-bit WAV at ``sample_rate``, cut at ``max_s``."""

    sample_rate: int
    max_s: float | None  # None: keep the whole clip

    def size_bytes(self, duration_s: float) -> int:
        """Expected size of the re-encoded file for a clip of ``duration_s``."""
        length = duration_s if self.max_s is None else min(duration_s, self.max_s)
        return _WAV_HEADER_BYTES + int(length * self.sample_rate) * 2


def reference_cache_dir(paths: DataPaths) -> Path:
    """Where fitted references are kept: ``<state>/references``."""
    return paths.state_dir / "references"


def plan_fit(duration_s: float, sample_rate: int, *, limit_bytes: int = MAX_REFERENCE_AUDIO_BYTES) -> FitPlan:
    """The gentlest re-encoding of a ``duration_s`` clip that fits in ``limit_bytes`` (pure).

    The highest standard rate not above the clip's own whose mono 16-bit size fits wins; when
    none does, the lowest such rate is used and the clip is cut to fit.
    """
    budget = limit_bytes - _SLACK_BYTES - _WAV_HEADER_BYTES
    if budget <= 0:
        raise VoiceError(f"A reference limit of {limit_bytes} bytes is too small for any audio.")
    rates = [rate for rate in _RATES_HZ if rate <= sample_rate] or [sample_rate]
    for rate in rates:
        if duration_s * rate * 2 <= budget:
            return FitPlan(sample_rate=rate, max_s=None)
    lowest = rates[-1]
    return FitPlan(sample_rate=lowest, max_s=budget / (lowest * 2))


def fit_reference(
    path: Path,
    *,
    cache_dir: Path,
    limit_bytes: int = MAX_REFERENCE_AUDIO_BYTES,
) -> Path:
    """``path`` itself when it is at most ``limit_bytes``, else a re-encoded copy that fits.

    Args:
        path: any audio file ffmpeg can decode.
        cache_dir: where re-encoded copies go (:func:`reference_cache_dir`); reused by content hash.
        limit_bytes: the server's limit (tests lower it).

    Raises:
        VoiceError: the file is missing or not audio, or the re-encode failed.
        FfmpegError: ffmpeg is not installed.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise VoiceError(f"Reference clip not found: {path}. Choose another clip.") from exc
    if size <= limit_bytes:
        return path
    info = probe_clip(path)
    duration = info.duration_s
    if duration is None:
        # Without a duration, plan for the worst case the byte count allows at 48 kHz stereo.
        duration = size / (48000 * 2 * 2)
    plan = plan_fit(duration, info.sample_rate, limit_bytes=limit_bytes)
    target = cache_dir / f"{file_sha256(path)[:32]}-{limit_bytes}.wav"
    if target.is_file() and target.stat().st_size <= limit_bytes:
        return target
    _encode(path, target, plan)
    if target.stat().st_size > limit_bytes:
        target.unlink(missing_ok=True)
        raise VoiceError(
            f"Re-encoding {path.name} did not bring it under {limit_bytes} bytes. Use a shorter clip "
            "(10-20 s of clean speech works best)."
        )
    return target


def _encode(source: Path, target: Path, plan: FitPlan) -> None:
    """Run ffmpeg: first audio stream, mono, ``plan.sample_rate``, 16-bit, cut at ``plan.max_s``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target, suffix=".wav") as staged:
        argv = [find_tool("ffmpeg"), "-nostdin", "-v", "error", "-y", "-i", str(source), "-map", "0:a:0"]
        if plan.max_s is not None:
            argv += ["-t", f"{plan.max_s:.3f}"]
        # -map_metadata -1 and bitexact keep the header at 44 bytes (no LIST/encoder chunk).
        argv += [
            "-ac", "1", "-ar", str(plan.sample_rate), "-c:a", "pcm_s16le",
            "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:a", "+bitexact", "-f", "wav", str(staged),
        ]
        done = run_tool(argv)
        if done.returncode != 0 or not staged.is_file():
            detail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise VoiceError(f"Could not re-encode {source.name} to fit the server's limit ({detail[0]}).")


def clone_choice(voice: Voice, *, paths: DataPaths) -> VoiceChoice:
    """A clone :class:`VoiceChoice` for a library voice: its clip (fitted) and its transcript.

    Without a transcript the choice carries no ``ref_text`` and the request goes without it;
    :func:`omni_web.voices.server_voices.transcript_warning` gives the text the UI shows then.
    """
    reference = fit_reference(voice.wav_path, cache_dir=reference_cache_dir(paths))
    return VoiceChoice.clone(reference, voice.transcript)
