"""Chapter audio: chunk files and pauses joined into one lossless, playable file per chapter.

Why FLAC (or WAV) and not AAC per chapter: AAC frames carry encoder priming and padding (about
21-46 ms per file), so chapters joined by stream copy would gain small gaps and chapter marks
would drift by up to a second over a long book. A lossless chapter joins sample-exactly, its
measured duration is exact, the m4b and the MP3 export are each one lossy generation, and the
bitrate is chosen when the book is built. FLAC plays on its own in every current browser (the
Gradio audio player included) and desktop player, at about half the size of WAV.

How: every input that is already 16-bit PCM WAV in the book's format is joined as it is; the
others are converted once by ffmpeg into the scratch folder; pauses are WAVs of zero samples.
One ffmpeg run then joins the list with the concat demuxer and encodes FLAC. Audio never passes
through Python, and ffmpeg streams, so memory stays flat whatever the chapter's length.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, probe, probe_duration_ms, run_ffmpeg
from omni_web.assemble.metadata import clean_chapter_title
from omni_web.assemble.records import AAC_SAMPLE_RATES_HZ, AudioFormat, ChapterAudio, ChapterPlan
from omni_web.assemble.workspace import (
    concat_list_text,
    conform_audio,
    publish,
    wav_format,
    work_dir,
    write_silence_wav,
    write_text,
)
from omni_web.errors import FfmpegError

__all__ = [
    "CHAPTER_SUFFIXES",
    "chapter_audio_from_file",
    "choose_format",
    "render_chapter_audio",
]

# Suffix of the chapter file → (codec, muxer). ".flac" is the recommended one.
CHAPTER_SUFFIXES = {".flac": ("flac", "flac"), ".wav": ("pcm_s16le", "wav")}


def choose_format(paths: Iterable[Path]) -> AudioFormat:
    """The output format that loses nothing from any input.

    The rate is the highest input rate (rounded up to an AAC rate, at most 48 kHz): upsampling
    a 24 kHz chunk costs nothing audible, downsampling a 48 kHz one would cut its top octave.
    Channels are stereo only if some input is stereo: TTS voices are mono, and a mono AAC stream
    gets twice the bits per channel at the same bitrate; but MOSS-TTS Local returns stereo, and
    folding it to mono could cancel out-of-phase content, so stereo is kept when present.

    Raises:
        FfmpegError: an input is unreadable, or no input was given.
    """
    best_rate, best_channels, seen = 0, 1, False
    for path in paths:
        fmt = wav_format(Path(path)) or _probe_format(Path(path))
        best_rate = max(best_rate, fmt.sample_rate_hz)
        best_channels = max(best_channels, fmt.channels)
        seen = True
    if not seen:
        raise FfmpegError("Cannot choose an audio format: no chunk audio files were given.")
    rate = next((r for r in AAC_SAMPLE_RATES_HZ if r >= best_rate), AAC_SAMPLE_RATES_HZ[-1])
    return AudioFormat(sample_rate_hz=rate, channels=min(best_channels, 2))


def render_chapter_audio(
    plan: ChapterPlan,
    out_path: Path,
    *,
    fmt: AudioFormat,
    lead_in_ms: int = 0,
    tail_ms: int = 0,
) -> ChapterAudio:
    """Join a chapter's chunk files, with their pauses, into one FLAC (or WAV) file.

    Args:
        plan: the chapter; every segment's ``pause_after_ms`` is honoured, the last one included
            (give the last segment 0 and use ``tail_ms`` or the m4b's chapter pause instead).
        out_path: the chapter file, ``.flac`` (recommended) or ``.wav``. Written atomically: it
            appears only when complete, replacing an older version.
        fmt: the book's output format; every input is resampled and remixed to it.
        lead_in_ms, tail_ms: silence before the first and after the last segment.

    Returns:
        The chapter with its duration measured by ffprobe.

    Raises:
        ValueError: no segments, negative silence, or an unsupported suffix (programming errors).
        FfmpegError: a chunk file is missing or unreadable (named in the message), or ffmpeg failed.
        DiskFullError, OutputNotWritable: the output folder cannot take the file.
    """
    out_path = Path(out_path)
    codec, muxer = _chapter_codec(out_path)
    if not plan.segments:
        raise ValueError(f"Chapter {plan.index} has no segments to join.")
    if lead_in_ms < 0 or tail_ms < 0:
        raise ValueError("lead_in_ms and tail_ms must be >= 0")
    label = f"chapter {plan.index} '{clean_chapter_title(plan.title, index=plan.index)}'"
    _require_files(plan, label)
    with work_dir(out_path) as scratch:
        entries = _playlist(plan, fmt, scratch, lead_in_ms=lead_in_ms, tail_ms=tail_ms, label=label)
        list_file = write_text(scratch / "concat.txt", concat_list_text(entries))
        joined = scratch / f"chapter{out_path.suffix.lower()}"
        run_ffmpeg(
            [
                "-f",
                "concat",
                "-safe",
                "0",
                "-i",
                path_arg(list_file),
                "-map",
                "0:a:0",
                "-map_metadata",
                "-1",
                "-metadata",
                f"title={clean_chapter_title(plan.title, index=plan.index)}",
                "-metadata",
                f"track={plan.index}",
                "-c:a",
                codec,
                "-f",
                muxer,
                path_arg(joined),
            ],  # fmt: skip
            action=f"Joining {label}",
            output_dir=out_path.parent,
        )
        duration_ms = probe_duration_ms(joined)
        publish(joined, out_path)
    return ChapterAudio(index=plan.index, title=plan.title, path=out_path, duration_ms=duration_ms)


def chapter_audio_from_file(path: Path, *, index: int, title: str) -> ChapterAudio:
    """Describe an already rendered chapter file (after a restart), measuring it with ffprobe."""
    return ChapterAudio(index=index, title=title, path=Path(path), duration_ms=probe_duration_ms(path))


def _chapter_codec(out_path: Path) -> tuple[str, str]:
    try:
        return CHAPTER_SUFFIXES[out_path.suffix.lower()]
    except KeyError:
        raise ValueError(
            f"Chapter files must end in {' or '.join(CHAPTER_SUFFIXES)}, got '{out_path.name}'."
        ) from None


def _require_files(plan: ChapterPlan, label: str) -> None:
    missing = [s.audio_path for s in plan.segments if not Path(s.audio_path).is_file()]
    if missing:
        shown = ", ".join(str(p) for p in missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise FfmpegError(
            f"Cannot join {label}: {len(missing)} chunk audio file(s) are missing: {shown}. "
            "Render the chapter's chunks again."
        )


def _playlist(
    plan: ChapterPlan, fmt: AudioFormat, scratch: Path, *, lead_in_ms: int, tail_ms: int, label: str
) -> list[Path]:
    """The files to join in play order: chunks (converted where needed) and silences."""
    sources = [Path(s.audio_path) for s in plan.segments]
    mismatched = [i for i, path in enumerate(sources) if wav_format(path) != fmt]
    if mismatched:
        converted = conform_audio(
            [sources[i] for i in mismatched],
            scratch,
            fmt,
            codec="pcm_s16le",
            action=f"Reading chunk audio of {label}",
            output_dir=scratch.parent,
        )
        for i, path in zip(mismatched, converted, strict=True):
            sources[i] = path
    silences: dict[int, Path] = {}

    def silence(ms: int) -> Path:
        if ms not in silences:
            silences[ms] = write_silence_wav(scratch / f"silence-{ms}ms.wav", ms, fmt)
        return silences[ms]

    entries = [silence(lead_in_ms)] if lead_in_ms > 0 else []
    for segment, source in zip(plan.segments, sources, strict=True):
        entries.append(source)
        if segment.pause_after_ms > 0:
            entries.append(silence(segment.pause_after_ms))
    if tail_ms > 0:
        entries.append(silence(tail_ms))
    return entries


def _probe_format(path: Path) -> AudioFormat:
    for stream in probe(path).get("streams", []):
        if stream.get("codec_type") == "audio":
            rate = int(stream.get("sample_rate") or 0)
            channels = int(stream.get("channels") or 1)
            aac_rate = next((r for r in AAC_SAMPLE_RATES_HZ if r >= rate), AAC_SAMPLE_RATES_HZ[-1])
            return AudioFormat(sample_rate_hz=aac_rate, channels=min(channels, 2))
    raise FfmpegError(f"Cannot use {path}: it has no audio stream. Render it again.")
