"""Master one chapter while it renders, then encode its final files.

How (one chapter, ``audiobook``-like presets):

1. **Feed, during rendering.** As each chunk file lands (in reading order), Python reads it (a few
   seconds of PCM), applies its leveling gain, lays room tone under it and under the pause after
   it, and writes the samples to one long-running ffmpeg: a delay-compensated limiter, then the
   BS.1770 measurement (ffmpeg's ebur128: integrated loudness, range, true peak), plus a lossless
   copy of the leveled chapter and the chapter's final encodes as it stands (AAC, and MP3 when
   asked). Pass 1 therefore costs nothing after the last chunk: closing the pipe prints the
   measurement at once, and a chapter that measures on target keeps those files (nothing else is
   left to do).
2. **Apply, when pass 1 is off target.** loudnorm pass 2 in linear mode (predicted with
   loudnorm's own rule, then checked in its JSON) on the leveled copy, encoded in the same run to
   the chapter's final AAC (an ``.m4a`` for the browser and an ADTS twin the book is joined from),
   plus MP3 and lossless masters when asked. When linear mode would break the peak limit, the
   chapter is limited first and measured again; the dynamic (pumping) result is never shipped.

The chapter's length is padded with room tone to a whole number of AAC frames, so chapters join by
stream copy with marks that land exactly where each chapter's audio starts. Every chunk's start in
the final file is recorded (read-along timings survive mastering: the limiter is delay-compensated
and loudnorm in linear mode is a constant gain).
"""

from __future__ import annotations

import json
import logging
import math
import wave
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from omni_web.assemble.ffmpeg import path_arg
from omni_web.assemble.join import AAC_FRAME_SAMPLES
from omni_web.assemble.records import AudioFormat
from omni_web.assemble.workspace import conform_audio, ensure_dir, publish, wav_format, work_dir
from omni_web.errors import FfmpegError
from omni_web.master.leveling import leveling_gain_db, speech_level_db
from omni_web.master.loudnorm import (
    Loudness,
    limiter_filter,
    linear_gain_fits,
    measure_filter,
    normalize_filter,
    parse_ebur128_loudness,
    parse_loudnorm_json,
)
from omni_web.master.presets import ACX_MP3_KBPS, LoudnessPreset
from omni_web.master.process import PcmSink, run_ffmpeg_logged
from omni_web.master.records import (
    ChapterSpec,
    MasteredChapter,
    MasterOptions,
    chapter_paths,
)
from omni_web.master.roomtone import RoomTone

__all__ = ["count_adts_frames", "master_chapter", "read_chunk"]

log = logging.getLogger(__name__)

# --- reading chunks ---------------------------------------------------------------------------


def read_chunk(path: Path, fmt: AudioFormat, scratch: Path) -> np.ndarray:
    """A chunk's samples as float32 (frames, channels) in the book's format.

    A 16-bit WAV in the right format is read directly; anything else is converted by ffmpeg first.
    """
    source = Path(path)
    if wav_format(source) != fmt:
        (source,) = conform_audio(
            [source],
            scratch,
            fmt,
            codec="pcm_s16le",
            action=f"Reading chunk audio {path.name}",
            output_dir=scratch,
        )
    with wave.open(str(source), "rb") as wav:
        raw = wav.readframes(wav.getnframes())
    if source != Path(path):
        source.unlink(missing_ok=True)
    data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    return data.reshape(-1, fmt.channels)


# --- the two passes ---------------------------------------------------------------------------


def _db(value: float) -> float:
    return round(value, 2) if math.isfinite(value) else -99.0


def _pass1_args(options: MasterOptions, leveled: Path, speculative: dict[str, Path] | None) -> list[str]:
    """Limiter, then the measurement and a lossless copy; with ``speculative``, also the
    chapter's AAC (and MP3 when it has a path there) as it stands, kept when the measurement
    shows it already on target."""
    preset = options.preset
    labels = ["m",
              "o"] + (["s"] if speculative else []) + (["b"] if speculative and "mp3" in speculative else [])
    graph = (
        f"[0:a]{limiter_filter(preset.limiter_ceiling_db)},asplit={len(labels)}" + "".join(f"[{x}]" for x in labels)
        + f";[m]{measure_filter()}[n]"
    )
    args = [
        "-filter_complex", graph,
        "-map", "[n]", "-f", "null", "-",
        "-map", "[o]", "-c:a", "flac", "-sample_fmt", "s16", "-f", "flac", path_arg(leveled),
    ]
    if speculative:
        tee = f"[f=ipod:movflags=+faststart]{_tee_path(speculative['m4a'])}|[f=adts]{_tee_path(speculative['adts'])}"
        args += ["-map", "[s]", "-c:a", "aac", "-aac_coder", "fast", "-b:a", f"{options.aac_kbps}k",
                 "-map_metadata", "-1", "-f", "tee", tee]
        if "mp3" in speculative:
            args += _mp3_args(options, "b", speculative["mp3"])
    return args


def _mp3_args(options: MasterOptions, label: str, path: Path) -> list[str]:
    """The MP3 output of a run (CBR, at the preset's rate; the LAME header says CBR)."""
    kbps = options.mp3_kbps or ACX_MP3_KBPS
    return [
        "-map",
        f"[{label}]",
        "-ar",
        str(options.mp3_rate_hz),
        "-c:a",
        "libmp3lame",
        "-b:a",
        f"{kbps}k",
        "-map_metadata",
        "-1",
        "-write_xing",
        "1",
        "-f",
        "mp3",
        path_arg(path),
    ]


def _remeasure(
    options: MasterOptions, source: Path, limited: Path, ceiling_db: float, *, pre_gain_db: float
) -> Loudness:
    """Gain, limit and measure again (the fallback when linear mode would break the peak limit)."""
    graph = f"[0:a]volume={pre_gain_db:.3f}dB,{limiter_filter(ceiling_db)},asplit=2[m][o];[m]{measure_filter()}[n]"
    log_text = run_ffmpeg_logged(
        [
            "-i",
            path_arg(source),
            "-filter_complex",
            graph,
            "-map",
            "[n]",
            "-f",
            "null",
            "-",
            "-map",
            "[o]",
            "-c:a",
            "flac",
            "-sample_fmt",
            "s16",
            "-f",
            "flac",
            path_arg(limited),
        ],
        action="Limiting a chapter before normalising it",
        output_dir=limited.parent,
    )
    return parse_ebur128_loudness(log_text)


def _encode_args(options: MasterOptions, level_filter: str, outputs: dict[str, Path], mp3: bool) -> list[str]:
    """One run: the level filter, then AAC (m4a + ADTS twin), and MP3 / FLAC when asked."""
    branches = ["a"] + (["b"] if mp3 else []) + (["c"] if options.lossless else [])
    rate = options.fmt.sample_rate_hz
    layout = "mono" if options.fmt.channels == 1 else "stereo"
    head = (
        f"[0:a]{level_filter + ',' if level_filter else ''}aresample={rate},aformat=channel_layouts={layout}"
    )
    graph = f"{head},asplit={len(branches)}" + "".join(f"[{b}]" for b in branches)
    args = ["-filter_complex", graph]
    tee = f"[f=ipod:movflags=+faststart]{_tee_path(outputs['m4a'])}|[f=adts]{_tee_path(outputs['adts'])}"
    args += [
        "-map",
        "[a]",
        "-c:a",
        "aac",
        "-aac_coder",
        "fast",
        "-b:a",
        f"{options.aac_kbps}k",
        "-map_metadata",
        "-1",
        "-f",
        "tee",
        tee,
    ]
    if mp3:
        args += _mp3_args(options, "b", outputs["mp3"])
    if options.lossless:
        args += ["-map", "[c]", "-c:a", "flac", "-sample_fmt", "s16", "-f", "flac", path_arg(outputs["flac"])]
    return args


def _tee_path(path: Path) -> str:
    """A path inside a tee muxer's list, where ``|``, ``[``, ``]`` and ``\\`` are special."""
    text = path_arg(path)
    for char in "\\|[]'":
        text = text.replace(char, "\\" + char)
    return text


def count_adts_frames(path: Path) -> int:
    """Frames in an ADTS file, read from its headers (exact; no decoding)."""
    data = Path(path).read_bytes()
    count, pos, end = 0, 0, len(data)
    while pos + 7 <= end:
        if data[pos] != 0xFF or (data[pos + 1] & 0xF0) != 0xF0:
            raise FfmpegError(
                f"{path} is not a clean ADTS stream (bad header at byte {pos}). Master it again."
            )
        length = ((data[pos + 3] & 0x03) << 11) | (data[pos + 4] << 3) | (data[pos + 5] >> 5)
        if length < 7:
            raise FfmpegError(f"{path} has a damaged ADTS frame at byte {pos}. Master it again.")
        blocks = (data[pos + 6] & 0x03) + 1
        count += blocks
        pos += length
    return count


@dataclass
class _Feed:
    """What feeding the chunks produced."""

    samples: int = 0
    starts: list[int] = field(default_factory=list)
    gains: list[float] = field(default_factory=list)


def _feed_chapter(
    spec: ChapterSpec,
    options: MasterOptions,
    sink: PcmSink,
    wait_chunk: Callable[[str], Path],
    scratch: Path,
    reference_db: float,
) -> _Feed:
    preset = options.preset
    fmt = options.fmt
    rate = fmt.sample_rate_hz
    tone = RoomTone(preset.room_tone_db, channels=fmt.channels, seed=f"{spec.stem}")
    feed = _Feed()

    def filler(frames: int) -> np.ndarray:
        if preset.master:
            return tone.samples(frames)
        return np.zeros((frames, fmt.channels), dtype=np.float32)

    def write(block: np.ndarray) -> None:
        if len(block):
            sink.write(block)
            feed.samples += len(block)

    write(filler(round(options.head_ms * rate / 1000)))
    for key, pause in zip(spec.keys, spec.pauses_ms, strict=True):
        samples = read_chunk(wait_chunk(key), fmt, scratch)
        gain_db = leveling_gain_db(speech_level_db(samples, rate), reference_db) if preset.master else 0.0
        if preset.master:
            samples = samples * np.float32(10 ** (gain_db / 20)) + tone.samples(len(samples))
        feed.starts.append(feed.samples)
        feed.gains.append(gain_db)
        write(samples)
        write(filler(round(pause * rate / 1000)))
    tail = round(options.tail_ms * rate / 1000)
    # Pad to whole AAC frames, so the joined book's marks fall exactly on each chapter's start.
    tail += (-(feed.samples + tail)) % AAC_FRAME_SAMPLES
    write(filler(tail))
    return feed


def master_chapter(
    spec: ChapterSpec,
    folder: Path,
    options: MasterOptions,
    *,
    wait_chunk: Callable[[str], Path],
    reference_db: float | None = None,
    on_fed: Callable[[], None] | None = None,
    stamp: Callable[[], str] | None = None,
) -> MasteredChapter:
    """Master and encode one chapter; its files appear atomically under ``folder``.

    Args:
        spec: the chapter.
        folder: where the mastered files go (the book's work folder).
        options: the book's mastering options.
        wait_chunk: returns a chunk's file by key, blocking until it is rendered; raises
            MasteringAborted when the job stops.
        reference_db: the level every chunk is leveled to (default: the preset's target, which the
            book refines after each chapter so loudnorm's final gain stays small).
        on_fed: called when the last chunk has been fed (the chapter moves to encoding).
        stamp: returns the chunk files' stamp, kept in the record (see :func:`load_mastered`).

    Raises:
        MasteringAborted: the job stopped; nothing is written.
        FfmpegError, DiskFullError, OutputNotWritable: as the assembly layer.
    """
    preset = options.preset
    final = chapter_paths(ensure_dir(folder), spec, options)
    reference = preset.target_lufs if reference_db is None else reference_db
    rate, channels = options.fmt.sample_rate_hz, options.fmt.channels
    mp3 = options.mp3_kbps is not None
    with work_dir(final["m4a"]) as scratch:
        outs = {name: scratch / path.name for name, path in final.items()}
        leveled = scratch / "leveled.flac"
        # With calibrated leveling most chapters land on target in pass 1: encode their final
        # files there too (the leveled FLAC is then the lossless master), and skip pass 2 when the
        # measurement agrees: nothing but closing the pipe is left after the last chunk. A miss
        # costs the first-pass encodes and a second pass, as without the shortcut.
        speculative = (
            {"m4a": scratch / "first-pass.m4a", "adts": scratch / "first-pass.aac"}
            | ({"mp3": scratch / "first-pass.mp3"} if mp3 else {})
            if preset.master
            else None
        )
        if preset.master:
            sink_args = _pass1_args(options, leveled, speculative)
        else:
            sink_args = _encode_args(options, "", outs, mp3)
        sink = PcmSink(sink_args, rate=rate, channels=channels, action=f"Mastering chapter {spec.number}",
                       output_dir=folder)
        try:
            feed = _feed_chapter(spec, options, sink, wait_chunk, scratch, reference)
        except BaseException:
            sink.abort()
            raise
        if on_fed is not None:
            on_fed()
        log_text = sink.finish()
        measured: dict[str, float] = {}
        gain_db, limited_again, second_pass = 0.0, False, preset.master
        if preset.master:
            measured, gain_db, limited_again, second_pass = _second_pass(
                options, spec, parse_ebur128_loudness(log_text), leveled, outs, speculative
            )
        frames = count_adts_frames(outs["adts"])
        record = MasteredChapter(
            number=spec.number, title=spec.title, in_book=spec.in_book,
            m4a=final["m4a"], adts=final["adts"], mp3=final["mp3"] if mp3 else None,
            flac=final["flac"] if options.lossless else None,
            sample_rate_hz=rate, channels=channels, samples=feed.samples, aac_frames=frames,
            chunk_starts_ms=tuple(s * 1000 / rate for s in feed.starts), chunk_gains_db=tuple(feed.gains),
            measured=measured, gain_db=round(gain_db, 2), limited_again=limited_again, preset=preset.name,
            second_pass=second_pass, reference_db=round(reference, 3), chunks_stamp=stamp() if stamp else "",
        )
        _publish(record, outs, final)
    return record


def _second_pass(
    options: MasterOptions,
    spec: ChapterSpec,
    first: Loudness,
    leveled: Path,
    outs: dict[str, Path],
    speculative: dict[str, Path] | None,
) -> tuple[dict[str, float], float, bool, bool]:
    """Keep pass 1's files when it measured on target, else run loudnorm's pass 2.

    Returns the measurement, loudnorm's gain, whether it was limited again, and whether pass 2 ran.
    """
    if speculative is not None and _on_target(first, options.preset):
        for name, path in speculative.items():
            path.replace(outs[name])
        if options.lossless:
            leveled.replace(outs["flac"])
        return _measurement(first), 0.0, False, False
    gain_db, limited_again, measured = _normalise(
        options, spec, leveled, outs, first, options.mp3_kbps is not None
    )
    return measured, gain_db, limited_again, True


def _publish(record: MasteredChapter, outs: dict[str, Path], final: dict[str, Path]) -> None:
    """Move the chapter's files from the scratch folder into place, the record last (it vouches for them)."""
    for name in ("m4a", "adts", "mp3", "flac"):
        if outs[name].is_file():
            publish(outs[name], final[name])
    scratch_record = outs["record"]
    scratch_record.write_text(json.dumps(record.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
    publish(scratch_record, final["record"])


def _normalise(
    options: MasterOptions,
    spec: ChapterSpec,
    leveled: Path,
    outs: dict[str, Path],
    measured: Loudness,
    mp3: bool,
) -> tuple[float, bool, dict[str, float]]:
    """Pass 2. Returns (gain applied, limited again?, the measurement used)."""
    preset = options.preset
    target_i, target_tp = preset.target_lufs, preset.true_peak_ceiling_db
    action = f"Normalising chapter {spec.number}"
    if measured.silent:
        # Nothing above the meter's gates (a chapter of room tone): there is no loudness to set.
        run_ffmpeg_logged(
            ["-i", path_arg(leveled), *_encode_args(options, "", outs, mp3)],
            action=action,
            output_dir=outs["m4a"].parent,
        )
        return 0.0, False, _measurement(measured)
    source, limited_again, pre_gain = leveled, False, 0.0
    for attempt in range(6):
        if not linear_gain_fits(measured, target_i=target_i, target_tp=target_tp):
            # loudnorm would fall back to dynamic mode: raise the chapter to the target and limit
            # its peaks under the ceiling first, so only a small linear gain is left for loudnorm.
            # Each round adds what the limiter took off the loudness in the round before.
            pre_gain += target_i - measured.input_i
            ceiling = target_tp - 0.6
            limited = leveled.with_name(f"limited-{attempt}.flac")
            log.info(
                "Chapter %s: peak %.2f dBTP + gain %.2f dB breaks %.1f dBTP; gain %.2f dB and limit at %.2f "
                "dBFS",
                spec.number,
                measured.input_tp,
                target_i - measured.input_i,
                target_tp,
                pre_gain,
                ceiling,
            )
            previous = measured
            measured = _remeasure(options, leveled, limited, ceiling, pre_gain_db=pre_gain)
            source, limited_again = limited, True
            if attempt and measured.input_i - previous.input_i < 0.1:
                break  # the limiter takes back all the gain: the waveform cannot get louder
            continue
        level_filter = normalize_filter(measured, target_i=target_i, target_tp=target_tp)
        log_text = run_ffmpeg_logged(
            ["-i", path_arg(source), *_encode_args(options, level_filter, outs, mp3)],
            action=action,
            output_dir=outs["m4a"].parent,
        )
        applied = parse_loudnorm_json(log_text)
        if applied.linear:
            return pre_gain + target_i - measured.input_i, limited_again, _measurement(measured)
        # loudnorm disagreed with the prediction and pumped: throw that result away, limit harder.
        log.warning(
            "Chapter %s: loudnorm fell back to dynamic mode; limiting and measuring again", spec.number
        )
        measured = replace(measured, input_tp=max(measured.input_tp, target_tp + 1.0))
    # Still no room for loudnorm's linear mode: apply the remaining gain ourselves (constant, so it
    # cannot pump) with the limiter after it. The report shows what the file measures.
    residual = target_i - measured.input_i
    log.warning(
        "Chapter %s: applying the last %.2f dB without loudnorm, limited at %.2f dBTP",
        spec.number,
        residual,
        target_tp - 0.6,
    )
    level_filter = f"volume={residual:.3f}dB,{limiter_filter(target_tp - 0.6)}"
    run_ffmpeg_logged(
        ["-i", path_arg(source), *_encode_args(options, level_filter, outs, mp3)],
        action=action,
        output_dir=outs["m4a"].parent,
    )
    return pre_gain + residual, True, _measurement(measured)


# Pass 1 within this of the target needs no second pass (its linear gain would be this small).
FIRST_PASS_TOLERANCE_LU = 0.3


def _on_target(measured: Loudness, preset: LoudnessPreset) -> bool:
    return (
        not measured.silent
        and abs(preset.target_lufs - measured.input_i) <= FIRST_PASS_TOLERANCE_LU
        and measured.input_tp <= preset.true_peak_ceiling_db
        and measured.input_lra <= preset.max_lra_lu
    )


def _measurement(measured: Loudness) -> dict[str, float]:
    return {
        "input_i": _db(measured.input_i),
        "input_tp": _db(measured.input_tp),
        "input_lra": _db(measured.input_lra),
        "input_thresh": _db(measured.input_thresh),
    }
