"""Turn a user's recording into a reference clip: decode, check, mono, trim silence, limit length.

The steps, in order (:func:`prepare_clip`):

1. The extension must be one of :data:`SUPPORTED_EXTENSIONS` and ffprobe must find an audio
   stream; anything else (a text file, a text file renamed to ``.wav``) is refused by name.
2. ffmpeg decodes the first audio stream to mono 16-bit PCM at the clip's own rate, capped at
   48 kHz. ffmpeg (not pydub) does this step because its resampler filters before it decimates,
   and pydub's ``from_file`` cannot pass decoder options; numpy measures loudness, the stdlib
   ``wave`` module writes the result. Nothing else needs pydub here.
3. Leading and trailing silence is trimmed with a threshold relative to the clip's own speech
   loudness (see :func:`silence_threshold_db`), so quiet and loud recordings trim alike.
4. Under :data:`MIN_SPEECH_S` of speech is refused. Over :data:`MAX_SPEECH_S` the clip is **cut**
   at the longest pause that ends speech between 10 s and 30 s (a sentence end, most likely), so a
   long recording still yields a usable clip; only a clip with no such pause is refused, with the
   reason. Cutting rather than refusing is the friendlier rule, because most people record more
   than they need; the library refuses the cut only when the user typed a transcript for the whole
   recording, which would no longer match.
"""

from __future__ import annotations

import json
import math
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omni_web.errors import VoiceError
from omni_web.files import atomic_path, write_error
from omni_web.systools import find_tool

__all__ = [
    "CLIP_ADVICE",
    "MAX_SAMPLE_RATE_HZ",
    "MAX_SOURCE_S",
    "MAX_SPEECH_S",
    "MIN_SPEECH_S",
    "SUPPORTED_EXTENSIONS",
    "ClipInfo",
    "PreparedClip",
    "check_extension",
    "choose_cut",
    "decode_mono",
    "frame_levels_db",
    "prepare_clip",
    "probe_clip",
    "run_tool",
    "silence_threshold_db",
    "speech_bounds",
    "write_wav",
]

SUPPORTED_EXTENSIONS = (".wav", ".mp3", ".flac", ".m4a", ".ogg", ".webm")
MIN_SPEECH_S = 3.0
MAX_SPEECH_S = 30.0  # also the server's upload limit (POST /v1/audio/voices: 1.0-30.0 s)
MAX_SAMPLE_RATE_HZ = 48000
# A longer source is not a reference clip; refusing it early keeps the decode small.
MAX_SOURCE_S = 600.0
# Advice for voice cloning on these models, shown wherever clips are added.
CLIP_ADVICE = "10-20 s of clean speech works best."
_ADVICE_AMOUNT = "10-20 s of clean speech"

_FRAME_S = 0.01  # loudness is measured in 10 ms frames
_EDGE_MARGIN_S = 0.08  # kept around speech so soft onsets and word endings are not clipped
_MIN_RUN_FRAMES = 3  # 30 ms above threshold counts as speech; a lone click does not
_MIN_PAUSE_S = 0.2  # shorter gaps are inside words or between them
_SENTENCE_PAUSE_S = 0.3  # espeak-ng and most readers pause about this long at a full stop
_PREFERRED_MIN_CUT_S = 10.0  # CLIP_ADVICE's 10-20 s: prefer cuts that keep at least this
_DIGITAL_SILENCE_DB = -90.0  # 16-bit dither is about -96 dBFS: below this is "zero"
_SILENT_DBFS = -60.0  # loudest speech frames below this: the clip is silent


@dataclass(frozen=True, slots=True)
class ClipInfo:
    """What ffprobe says about a source file's first audio stream."""

    path: Path
    codec: str
    sample_rate: int
    channels: int
    duration_s: float | None  # None when the container does not say (browser webm recordings)


@dataclass(frozen=True, slots=True)
class PreparedClip:
    """A cleaned reference clip written to ``path`` (mono 16-bit WAV) and how it was made."""

    path: Path
    duration_s: float
    sample_rate: int
    source_duration_s: float  # decoded length of the source, before any trimming
    trimmed_start_s: float  # silence removed before the speech
    trimmed_end_s: float  # silence removed after the speech (before any cut)
    cut_s: float = 0.0  # speech dropped to fit MAX_SPEECH_S; 0 when the clip was not cut

    @property
    def was_cut(self) -> bool:
        """True when speech past the length limit was dropped."""
        return self.cut_s > 0

    @property
    def notes(self) -> tuple[str, ...]:
        """Plain sentences about what cleaning did, for the UI and the CLI."""
        notes = []
        if self.trimmed_start_s >= 0.05 or self.trimmed_end_s >= 0.05:
            notes.append(
                f"Trimmed {self.trimmed_start_s:.1f} s of silence at the start and "
                f"{self.trimmed_end_s:.1f} s at the end."
            )
        if self.was_cut:
            notes.append(
                f"The speech ran {self.duration_s + self.cut_s:.1f} s, over the {MAX_SPEECH_S:.0f} s limit; "
                f"it was cut at a pause to {self.duration_s:.1f} s."
            )
        return tuple(notes)


def check_extension(path: Path) -> None:
    """Refuse a file whose extension is not a supported audio format."""
    if path.suffix.lower() not in SUPPORTED_EXTENSIONS:
        raise VoiceError(
            f"'{path.name}' is not a supported audio file. Add a {_kinds()} recording of speech; "
            f"{CLIP_ADVICE}"
        )


def run_tool(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run an ffmpeg/ffprobe argv list (never a shell string), capturing its output as bytes."""
    return subprocess.run(argv, capture_output=True, check=False)  # noqa: S603 - argv list, no shell


def _not_audio(path: Path, detail: str) -> VoiceError:
    reason = f" ({detail})" if detail else ""
    return VoiceError(
        f"'{path.name}' could not be read as audio{reason}. Add a {_kinds()} recording of speech; "
        f"{CLIP_ADVICE}"
    )


def _kinds() -> str:
    names = [ext.lstrip(".") for ext in SUPPORTED_EXTENSIONS]
    return ", ".join(names[:-1]) + " or " + names[-1]


def probe_clip(path: Path) -> ClipInfo:
    """Read the first audio stream's facts with ffprobe.

    Raises:
        VoiceError: the file is missing, or holds no decodable audio stream.
        FfmpegError: ffprobe is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise VoiceError(f"'{path}' does not exist or is not a file. Check the path and try again.")
    argv = [
        find_tool("ffprobe"), "-v", "error", "-select_streams", "a:0",
        "-show_entries", "stream=codec_name,sample_rate,channels:format=duration",
        "-of", "json", str(path),
    ]
    done = run_tool(argv)
    if done.returncode != 0:
        raise _not_audio(path, _last_line(done.stderr.decode(errors="replace")))
    try:
        data = json.loads(done.stdout or b"{}")
    except ValueError:
        raise _not_audio(path, "ffprobe gave no readable answer") from None
    streams = data.get("streams") or []
    if not streams:
        raise _not_audio(path, "it has no audio stream")
    stream = streams[0]
    try:
        sample_rate = int(stream.get("sample_rate") or 0)
        channels = int(stream.get("channels") or 0)
    except (TypeError, ValueError):
        raise _not_audio(path, "ffprobe reports no sample rate") from None
    if sample_rate <= 0 or channels <= 0:
        raise _not_audio(path, "ffprobe reports no sample rate")
    duration = _float_or_none((data.get("format") or {}).get("duration"))
    return ClipInfo(
        path=path,
        codec=str(stream.get("codec_name") or ""),
        sample_rate=sample_rate,
        channels=channels,
        duration_s=duration,
    )


def _float_or_none(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def decode_mono(path: Path, *, sample_rate: int, max_s: float = MAX_SOURCE_S) -> np.ndarray:
    """Decode the first audio stream to mono int16 samples at ``sample_rate`` (ffmpeg).

    At most ``max_s`` seconds (plus one frame) are decoded, so a caller can tell "longer than
    max_s" from the sample count without decoding hours of audio.
    """
    argv = [
        find_tool("ffmpeg"), "-nostdin", "-v", "error", "-i", str(path),
        "-map", "0:a:0", "-t", f"{max_s + _FRAME_S:.3f}",
        "-ac", "1", "-ar", str(sample_rate), "-f", "s16le", "-acodec", "pcm_s16le", "-",
    ]
    done = run_tool(argv)
    if done.returncode != 0 or not done.stdout:
        raise _not_audio(Path(path), _last_line(done.stderr.decode(errors="replace")))
    usable = len(done.stdout) - len(done.stdout) % 2
    return np.frombuffer(done.stdout[:usable], dtype="<i2").copy()


def frame_levels_db(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """RMS level of each 10 ms frame in dBFS (``-inf``-free: digital silence is -120 dB)."""
    frame = max(1, int(round(sample_rate * _FRAME_S)))
    count = len(samples) // frame
    if count == 0:
        return np.zeros(0)
    block = samples[: count * frame].astype(np.float32).reshape(count, frame) / 32768.0
    rms = np.sqrt(np.mean(block * block, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-6))


def silence_threshold_db(levels: np.ndarray) -> tuple[float, float]:
    """Return ``(speech_level_db, threshold_db)`` for frames from :func:`frame_levels_db`.

    The speech level is the 95th percentile of frame levels (robust to long silences and to
    clicks); the threshold sits 40 dB under it, raised to 6 dB over the noise floor (5th
    percentile of the frames that are not digital silence) for noisy recordings, but never closer
    than 20 dB to the speech level so quiet consonants survive in a clip with no silence at all.
    """
    speech = float(np.percentile(levels, 95))
    # Digital zeros (synthesised or gated audio) say nothing about the recording's noise floor.
    audible = levels[levels > _DIGITAL_SILENCE_DB]
    floor = float(np.percentile(audible, 5)) if len(audible) else _DIGITAL_SILENCE_DB
    threshold = min(max(speech - 40.0, floor + 6.0), speech - 20.0)
    return speech, threshold


def speech_bounds(levels: np.ndarray, threshold_db: float) -> tuple[int, int] | None:
    """First and one-past-last frame of speech (a run of 30 ms above threshold), or None."""
    loud = levels >= threshold_db
    run = np.convolve(loud.astype(np.int32), np.ones(_MIN_RUN_FRAMES, dtype=np.int32), mode="valid")
    starts = np.flatnonzero(run == _MIN_RUN_FRAMES)
    if len(starts) == 0:
        return None
    return int(starts[0]), int(starts[-1]) + _MIN_RUN_FRAMES


def _pauses(loud: np.ndarray, min_frames: int) -> list[tuple[int, int]]:
    """Runs of quiet frames at least ``min_frames`` long, as (start, end) frame indices."""
    pauses = []
    start = None
    for index, is_loud in enumerate(loud):
        if not is_loud and start is None:
            start = index
        elif is_loud and start is not None:
            if index - start >= min_frames:
                pauses.append((start, index))
            start = None
    return pauses


def choose_cut(levels: np.ndarray, threshold_db: float, *, max_s: float, min_s: float) -> float | None:
    """Where to end an over-long clip (seconds from its start), or None when no pause fits.

    ``levels`` covers the clip after edge trimming. Candidates are pauses (200 ms or more) whose
    speech ends between ``min_s`` and ``max_s``. Preferred, in order: cuts keeping at least 10 s
    (:data:`CLIP_ADVICE`), sentence-like pauses (300 ms or more; commas pause less), then the
    latest, which keeps as much speech as the limit allows. The cut keeps a sliver of the pause
    so the last word decays naturally.
    """
    loud = levels >= threshold_db
    best: tuple[bool, bool, float] | None = None
    for start, end in _pauses(loud, int(round(_MIN_PAUSE_S / _FRAME_S))):
        pause_s = (end - start) * _FRAME_S
        cut_s = start * _FRAME_S + min(_EDGE_MARGIN_S, pause_s / 2)
        if not (min_s <= cut_s <= max_s):
            continue
        key = (cut_s >= _PREFERRED_MIN_CUT_S, pause_s >= _SENTENCE_PAUSE_S, cut_s)
        if best is None or key > best:
            best = key
    return None if best is None else best[2]


def write_wav(path: Path, samples: np.ndarray, sample_rate: int) -> None:
    """Write mono 16-bit PCM samples as a WAV file."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(samples.astype("<i2").tobytes())


def _too_long_source(path: Path, seconds: float) -> VoiceError:
    return VoiceError(
        f"'{path.name}' is {seconds / 60:.1f} min long; a reference clip is a short passage of one "
        f"voice ({CLIP_ADVICE}). Cut a passage of under {MAX_SPEECH_S:.0f} s and add that."
    )


def prepare_clip(
    source: Path,
    dest: Path,
    *,
    min_s: float = MIN_SPEECH_S,
    max_s: float = MAX_SPEECH_S,
) -> PreparedClip:
    """Validate ``source`` and write the cleaned mono 16-bit WAV to ``dest``.

    Raises:
        VoiceError: unsupported extension, not audio, silent, shorter than ``min_s`` of speech
            after trimming, or longer than ``max_s`` with no pause to cut at (messages say why
            and what to do).
        FfmpegError: ffmpeg/ffprobe missing.
    """
    source = Path(source)
    check_extension(source)
    info = probe_clip(source)
    if info.duration_s is not None and info.duration_s > MAX_SOURCE_S:
        raise _too_long_source(source, info.duration_s)
    rate = min(info.sample_rate, MAX_SAMPLE_RATE_HZ)
    samples = decode_mono(source, sample_rate=rate)
    source_s = len(samples) / rate
    if source_s > MAX_SOURCE_S:
        raise _too_long_source(source, source_s)
    levels = frame_levels_db(samples, rate)
    if len(levels) == 0:
        raise _too_short(0.0, min_s)
    speech_db, threshold = silence_threshold_db(levels)
    bounds = speech_bounds(levels, threshold) if speech_db > _SILENT_DBFS else None
    if bounds is None:
        raise VoiceError(
            f"'{source.name}' is silent: no speech was found in it. Record {_ADVICE_AMOUNT} "
            "and add that."
        )
    first, last = bounds
    margin = int(round(_EDGE_MARGIN_S / _FRAME_S))
    first, last = max(0, first - margin), min(len(levels), last + margin)
    frame = int(round(rate * _FRAME_S))
    start_sample, end_sample = first * frame, min(len(samples), last * frame)
    speech_s = (end_sample - start_sample) / rate
    if speech_s < min_s:
        raise _too_short(speech_s, min_s)
    speech_end = end_sample
    cut_s = 0.0
    if speech_s > max_s:
        cut_at = choose_cut(levels[first:last], threshold, max_s=max_s, min_s=min_s)
        if cut_at is None:
            raise VoiceError(
                f"'{source.name}' holds {speech_s:.1f} s of speech with no pause to cut at before "
                f"{max_s:.0f} s, the most a clone can use. Cut it to a passage of under {max_s:.0f} s "
                f"({CLIP_ADVICE}) and add it again."
            )
        new_end = start_sample + int(round(cut_at * rate))
        cut_s = (end_sample - new_end) / rate
        end_sample = new_end
    clip = samples[start_sample:end_sample]
    _write_atomic(dest, clip, rate)
    return PreparedClip(
        path=Path(dest),
        duration_s=len(clip) / rate,
        sample_rate=rate,
        source_duration_s=source_s,
        trimmed_start_s=start_sample / rate,
        trimmed_end_s=max(0.0, (len(samples) - speech_end) / rate),
        cut_s=cut_s,
    )


def _too_short(speech_s: float, min_s: float) -> VoiceError:
    return VoiceError(
        f"The clip is {speech_s:.1f} s of speech after trimming silence; clones need at least "
        f"{min_s:.0f} s — {CLIP_ADVICE}"
    )


def _write_atomic(dest: Path, samples: np.ndarray, rate: int) -> None:
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_path(dest, suffix=".wav") as staged:
            write_wav(staged, samples, rate)
    except OSError as exc:
        raise write_error(
            exc,
            full=f"The disk is full: could not write {dest}. Free some space and add the clip again.",
            other=lambda why: VoiceError(f"Could not write the clip to {dest}: {why}."),
        ) from exc
