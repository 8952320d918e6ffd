"""The ACX (Audible) delivery folder: one MP3 per chapter, credits, a retail sample, each checked.

ACX's rules (presets.py): MP3 192 kbit/s CBR at 44.1 kHz, all mono or all stereo, one chapter per
file and at most 120 minutes (a longer chapter is split at the pause nearest each cut), 0.5-1 s of
room tone at the head and 1-5 s at the tail, opening and closing credits as their own files, and a
1-5 minute retail sample. Chapter MP3s were encoded while the book rendered; split parts and the
sample are cut sample-exactly from the mastered lossless chapter and padded with room tone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, probe, run_ffmpeg
from omni_web.assemble.filenames import safe_filename
from omni_web.assemble.metadata import clean_chapter_title
from omni_web.assemble.records import AudiobookTags
from omni_web.assemble.workspace import ensure_dir, publish, work_dir
from omni_web.master.presets import (
    ACX_MAX_FILE_S,
    ACX_MP3_KBPS,
    ACX_SAMPLE_RATE_HZ,
    ACX_SAMPLE_S,
    LoudnessPreset,
)
from omni_web.master.records import ChapterSpec, MasteredChapter

__all__ = ["AcxFile", "closing_credits_text", "export_acx", "opening_credits_text", "probe_acx_rules"]

_SAMPLE_TARGET_S = 120.0


@dataclass(frozen=True, slots=True)
class AcxFile:
    """One delivered MP3 and what it holds."""

    path: Path
    number: int
    title: str
    kind: str  # credits | chapter | part | sample


def opening_credits_text(tags: AudiobookTags) -> str:
    """What the opening credits say (ACX: title, author, narrator)."""
    parts = [f"{tags.title}."]
    if tags.author:
        parts.append(f"Written by {tags.author}.")
    if tags.narrator:
        parts.append(f"Narrated by {tags.narrator}.")
    return " ".join(parts)


def closing_credits_text(tags: AudiobookTags) -> str:
    """What the closing credits say."""
    text = f"This has been {tags.title}"
    if tags.author:
        text += f", written by {tags.author}"
    if tags.narrator:
        text += f", narrated by {tags.narrator}"
    return text + ". The end."


def _noise_amplitude(level_db: float) -> float:
    # anoisesrc's white noise is uniform in [-a, a]: RMS a / sqrt(3).
    return 10 ** (level_db / 20) * math.sqrt(3)


def _cut_args(
    sources: Sequence[Path],
    *,
    start_s: float,
    end_s: float,
    head_s: float,
    tail_s: float,
    preset: LoudnessPreset,
    rate: int,
    channels: int,
    out: Path,
) -> list[str]:
    """Encode ``sources`` joined, trimmed to [start, end), with room tone before and after, to ACX MP3."""
    args: list[str] = []
    for source in sources:
        args += ["-i", path_arg(source)]
    layout = "mono" if channels == 1 else "stereo"
    joined = "".join(f"[{i}:a]" for i in range(len(sources)))
    amp = _noise_amplitude(preset.room_tone_db)
    tone = f"anoisesrc=r={rate}:a={amp:.6f}:c=white:s={{seed}}:d={{d:.3f}},aformat=sample_fmts=fltp:channel_layouts={layout}"
    graph = (
        f"{joined}concat=n={len(sources)}:v=0:a=1,aformat=sample_fmts=fltp:channel_layouts={layout},"
        f"atrim=start={start_s:.4f}:end={end_s:.4f},asetpts=PTS-STARTPTS[x];"
    )
    parts = ["[x]"]
    if head_s > 0:
        graph += tone.format(seed=11, d=head_s) + "[h];"
        parts.insert(0, "[h]")
    if tail_s > 0:
        graph += tone.format(seed=12, d=tail_s) + "[t];"
        parts.append("[t]")
    graph += "".join(parts) + f"concat=n={len(parts)}:v=0:a=1[o]"
    return [
        *args,
        "-filter_complex",
        graph,
        "-map",
        "[o]",
        "-ar",
        str(ACX_SAMPLE_RATE_HZ),
        "-c:a",
        "libmp3lame",
        "-b:a",
        f"{ACX_MP3_KBPS}k",
        "-write_xing",
        "1",
        "-map_metadata",
        "-1",
        "-id3v2_version",
        "3",
        "-f",
        "mp3",
        path_arg(out),
    ]


def _split_points(spec: ChapterSpec, record: MasteredChapter, max_s: float) -> list[float]:
    """Cut times (s) inside pauses, so that every part is at most ``max_s`` long."""
    duration = record.samples / record.sample_rate_hz
    if duration <= max_s:
        return []
    # Candidate cuts: the middle of the pause after each chunk.
    candidates = [
        (start_next - pause / 2) / 1000
        for start_next, pause in zip(record.chunk_starts_ms[1:], spec.pauses_ms[:-1], strict=True)
    ]
    cuts: list[float] = []
    last = 0.0
    while duration - last > max_s:
        fitting = [c for c in candidates if last < c <= last + max_s - 3.0]
        if not fitting:
            raise ValueError(
                f"Chapter {spec.number} has no pause to split at within {max_s / 60:.0f} minutes."
            )
        parts_left = math.ceil((duration - last) / max_s)
        ideal = last + (duration - last) / parts_left
        cut = min(fitting, key=lambda c: abs(c - ideal))
        cuts.append(cut)
        last = cut
    return cuts


def export_acx(
    chapters: Sequence[tuple[ChapterSpec, MasteredChapter]],
    opening: MasteredChapter,
    closing: MasteredChapter,
    folder: Path,
    *,
    tags: AudiobookTags,
    preset: LoudnessPreset,
    max_file_s: float = ACX_MAX_FILE_S,
) -> list[AcxFile]:
    """Write the ACX folder (replacing files of the same names) and return its files in order.

    ``chapters`` are the book's chapters with their specs (pauses, for split points); every record
    has a lossless master and, when no longer than ``max_file_s``, an MP3 already encoded.
    """
    folder = ensure_dir(folder)
    files: list[AcxFile] = []
    width = max(2, len(str(len(chapters) + 1)))
    title = safe_filename(tags.title, fallback="Audiobook", max_bytes=80)

    def copy_mp3(source: Path, name: str, number: int, label: str, kind: str) -> None:
        final = folder / name
        with work_dir(final) as scratch:
            tagged = scratch / "file.mp3"
            run_ffmpeg(
                ["-i", path_arg(source), "-map", "0:a:0", "-c:a", "copy", "-map_metadata", "-1",
                 "-metadata", f"title={label}", "-metadata", f"album={tags.title}",
                 "-metadata", f"artist={tags.author}", "-metadata", f"track={number}",
                 "-id3v2_version", "3", "-write_id3v1", "0", "-f", "mp3", path_arg(tagged)],
                action=f"Writing {name}", output_dir=folder,
            )
            publish(tagged, final)
        files.append(AcxFile(final, number, label, kind))

    def cut(sources: Sequence[Path], name: str, number: int, label: str, kind: str, *, start_s: float,
            end_s: float, head_s: float, tail_s: float, rate: int, channels: int) -> None:
        final = folder / name
        with work_dir(final) as scratch:
            encoded = scratch / "file.mp3"
            run_ffmpeg(
                _cut_args(sources, start_s=start_s, end_s=end_s, head_s=head_s, tail_s=tail_s, preset=preset,
                          rate=rate, channels=channels, out=encoded),
                action=f"Encoding {name}", output_dir=folder,
            )
            publish(encoded, final)
        files.append(AcxFile(final, number, label, kind))

    assert opening.mp3 is not None and closing.mp3 is not None
    copy_mp3(opening.mp3, f"{0:0{width}d} - Opening Credits.mp3", 0, "Opening Credits", "credits")
    head_s, tail_s = preset.head_ms / 1000, (preset.tail_ms or 2000) / 1000
    for position, (spec, record) in enumerate(chapters, start=1):
        label = clean_chapter_title(record.title, index=record.number)
        stem = f"{position:0{width}d} - {safe_filename(label, fallback=f'Chapter {record.number}', max_bytes=120)}"
        cuts = _split_points(spec, record, max_file_s)
        if not cuts and record.mp3 is not None:
            copy_mp3(record.mp3, f"{stem}.mp3", position, label, "chapter")
            continue
        assert record.flac is not None, "ACX chapters keep a lossless master"
        bounds = [0.0, *cuts, record.samples / record.sample_rate_hz]
        for part, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False), start=1):
            # The chapter's own head and tail room tone stay at its ends; inner cuts get new ones.
            cut([record.flac], f"{stem} (part {part} of {len(bounds) - 1}).mp3", position,
                f"{label} (part {part} of {len(bounds) - 1})", "part", start_s=start, end_s=end,
                head_s=head_s if part > 1 else 0.0, tail_s=tail_s if part < len(bounds) - 1 else 0.0,
                rate=record.sample_rate_hz, channels=record.channels)
    copy_mp3(closing.mp3, f"{len(chapters) + 1:0{width}d} - Closing Credits.mp3", len(chapters) + 1,
             "Closing Credits", "credits")
    _retail_sample(chapters, folder / f"{title} - Retail Sample.mp3", cut, tail_s)
    return files


def _retail_sample(chapters, final: Path, cut, tail_s: float) -> None:  # noqa: ANN001 - local helper
    """1-5 minutes from the start of the first chapter (more chapters if the first is shorter)."""
    sources: list[Path] = []
    total = 0.0
    boundaries: list[float] = []
    rate = channels = 0
    for spec, record in chapters:
        assert record.flac is not None
        sources.append(record.flac)
        rate, channels = record.sample_rate_hz, record.channels
        boundaries += [
            total + (start_next - pause / 2) / 1000
            for start_next, pause in zip(record.chunk_starts_ms[1:], spec.pauses_ms[:-1], strict=True)
        ]
        total += record.samples / record.sample_rate_hz
        boundaries.append(total)
        if total >= ACX_SAMPLE_S[0] + 5:
            break
    low, high = ACX_SAMPLE_S
    fitting = [b for b in boundaries if low + 1 <= b + tail_s <= high - 5]
    end = min(fitting, key=lambda b: abs(b - _SAMPLE_TARGET_S)) if fitting else min(total, high - 5 - tail_s)
    cut(
        sources,
        final.name,
        0,
        "Retail Sample",
        "sample",
        start_s=0.0,
        end_s=end,
        head_s=0.0,
        tail_s=tail_s,
        rate=rate,
        channels=channels,
    )


def probe_acx_rules(files: Sequence[AcxFile], *, max_file_s: float = ACX_MAX_FILE_S) -> list[str]:
    """ACX's format rules checked on the written files (levels are checked per file elsewhere)."""
    problems: list[str] = []
    channel_counts = set()
    kinds = [f.kind for f in files]
    if kinds.count("credits") != 2:
        problems.append("opening and closing credits files are missing")
    for item in files:
        info = probe(item.path)
        audio = next((s for s in info.get("streams", []) if s.get("codec_type") == "audio"), {})
        name = item.path.name
        if audio.get("codec_name") != "mp3":
            problems.append(f"{name} is not MP3")
        if int(audio.get("sample_rate") or 0) != ACX_SAMPLE_RATE_HZ:
            problems.append(f"{name} is at {audio.get('sample_rate')} Hz, not 44100 Hz")
        if int(audio.get("bit_rate") or 0) != ACX_MP3_KBPS * 1000:
            problems.append(f"{name} is at {audio.get('bit_rate')} bit/s, not {ACX_MP3_KBPS} kbit/s")
        with open(item.path, "rb") as handle:
            head = handle.read(64 * 1024)
        # LAME marks a constant-bitrate file with an "Info" header (VBR files say "Xing").
        if b"Xing" in head or b"Info" not in head:
            problems.append(f"{name} is not constant bitrate")
        channel_counts.add(int(audio.get("channels") or 0))
        duration = float(info.get("format", {}).get("duration") or 0)
        if duration > max_file_s:
            problems.append(f"{name} runs {duration / 60:.1f} minutes, over {max_file_s / 60:.0f}")
        if item.kind == "sample" and not ACX_SAMPLE_S[0] <= duration <= ACX_SAMPLE_S[1]:
            problems.append(f"the retail sample runs {duration:.0f} s; ACX asks 1-5 minutes")
    if len(channel_counts) > 1:
        problems.append("the files mix mono and stereo")
    if "sample" not in kinds:
        problems.append("the retail sample is missing")
    return problems


def remove_stale(folder: Path, keep: Sequence[AcxFile]) -> None:
    """Drop MP3s an earlier export left that this one did not write (a renamed chapter)."""
    kept = {f.path.name for f in keep}
    for path in Path(folder).glob("*.mp3"):
        if path.name not in kept:
            path.unlink(missing_ok=True)


__all__ += ["remove_stale"]
