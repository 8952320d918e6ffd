"""Peak memory and speed of assembling a long audiobook: chunk WAVs → FLAC chapters → m4b.

Builds a synthetic book (default 10 hours: 30 chapters × 20 minutes) from a handful of short
chunk WAVs made with ffmpeg (tone + pink noise with a speech-like tremolo), reused many times to
save disk and time, then runs the real assembly: ``render_chapter_audio`` per chapter and
``build_m4b`` with chapter marks. The assembly runs in a fresh child process so its peak RSS and
its ffmpeg children's peak RSS (``getrusage(RUSAGE_SELF / RUSAGE_CHILDREN).ru_maxrss``) are its
own. Target: under 300 MB.

    .venv/bin/python bench/bench_assembly_memory.py            # 10 h book
    .venv/bin/python bench/bench_assembly_memory.py --quick    # 1 h book, 6 chapters
    .venv/bin/python bench/bench_assembly_memory.py --hours 2 --rate 48000 --channels 2 --mp3
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from omni_web.assemble import (  # noqa: E402 - after the path fix-up
    AudiobookTags,
    AudioFormat,
    ChapterPlan,
    Segment,
    build_m4b,
    export_mp3_chapters,
    probe_chapters,
    probe_duration_ms,
    render_chapter_audio,
)

TARGET_MB = 300
CHUNK_SECONDS = (9.0, 11.5, 7.25, 13.0, 10.5, 8.75)
SENTENCE_PAUSE_MS = 350
PARAGRAPH_PAUSE_MS = 900


@dataclass(frozen=True, slots=True)
class BenchSpec:
    """What the child process assembles."""

    workdir: Path
    chunks: tuple[Path, ...]
    hours: float
    chapters: int
    rate: int
    channels: int
    bitrate_kbps: int
    mp3: bool


def make_chunks(folder: Path, rate: int, channels: int) -> tuple[Path, ...]:
    """A few distinct chunk WAVs; the book reuses them in a cycle."""
    folder.mkdir(parents=True, exist_ok=True)
    chunks = []
    for number, seconds in enumerate(CHUNK_SECONDS):
        path = folder / f"chunk-{number}.wav"
        graph = (
            f"sine=f={180 + 37 * number}:r={rate}:d={seconds},volume=0.4[s];"
            f"anoisesrc=r={rate}:color=pink:a=0.08:d={seconds}[n];"
            "[s][n]amix=inputs=2:duration=shortest,tremolo=f=4.5:d=0.8[out]"
        )
        subprocess.run(  # noqa: S603 - argv list
            ["ffmpeg", "-v", "error", "-y", "-filter_complex", graph, "-map", "[out]",
             "-ac", str(channels), "-c:a", "pcm_s16le", str(path)],
            check=True,
        )  # fmt: skip
        chunks.append(path)
    return tuple(chunks)


def plan_book(spec: BenchSpec) -> list[ChapterPlan]:
    """Chapters of equal length made by cycling the chunks, with sentence and paragraph pauses."""
    chapter_ms = spec.hours * 3_600_000 / spec.chapters
    lengths = [round(s * 1000) for s in CHUNK_SECONDS]
    plans, cursor = [], 0
    for index in range(1, spec.chapters + 1):
        segments: list[Segment] = []
        total = 0.0
        while total < chapter_ms:
            pause = PARAGRAPH_PAUSE_MS if len(segments) % 5 == 4 else SENTENCE_PAUSE_MS
            segments.append(Segment(spec.chunks[cursor % len(spec.chunks)], pause))
            total += lengths[cursor % len(lengths)] + pause
            cursor += 1
        plans.append(ChapterPlan(index, f"Chapter {index}: a synthetic chapter", tuple(segments)))
    return plans


def assemble(spec: BenchSpec, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """Child process: the measured assembly. Puts a dict of measurements on ``results``."""
    fmt = AudioFormat(spec.rate, spec.channels)
    plans = plan_book(spec)
    started = time.perf_counter()
    chapters = []
    for plan in plans:
        chapters.append(render_chapter_audio(plan, spec.workdir / "chapters" / f"{plan.index:03d}.flac", fmt=fmt))
        print(f"  chapter {plan.index:3d}/{len(plans)} rendered ({chapters[-1].duration_str})", flush=True)
    chapters_s = time.perf_counter() - started
    marks = []

    def progress(fraction: float) -> None:
        step = int(fraction * 10)
        if not marks or step > marks[-1]:
            marks.append(step)
            print(f"  m4b {fraction:6.1%}", flush=True)

    out = build_m4b(
        chapters,
        spec.workdir / "book.m4b",
        tags=AudiobookTags("Synthetic Book", author="Bench", narrator="ffmpeg", year=2026),
        cover=None,
        pause_between_chapters_ms=1500,
        bitrate_kbps=spec.bitrate_kbps,
        progress=progress,
    )
    m4b_s = time.perf_counter() - started - chapters_s
    mp3_s = 0.0
    if spec.mp3:
        t0 = time.perf_counter()
        export_mp3_chapters(chapters, spec.workdir / "mp3", tags=AudiobookTags("Synthetic Book", author="Bench"), cover=None)
        mp3_s = time.perf_counter() - t0
    results.put(
        {
            "segments": sum(len(p.segments) for p in plans),
            "chapters_s": chapters_s,
            "m4b_s": m4b_s,
            "mp3_s": mp3_s,
            "book_ms": probe_duration_ms(out),
            "marks": len(probe_chapters(out)),
            "m4b_bytes": out.stat().st_size,
            "flac_bytes": sum(c.path.stat().st_size for c in chapters),
            # Linux reports ru_maxrss in KiB. RUSAGE_CHILDREN is the largest single child.
            "self_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "children_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=10.0, help="book length (default 10)")
    parser.add_argument("--chapters", type=int, default=30, help="chapter count (default 30)")
    parser.add_argument("--quick", action="store_true", help="a 1-hour book in 6 chapters")
    parser.add_argument("--rate", type=int, default=24000, help="chunk and output rate (default 24000)")
    parser.add_argument("--channels", type=int, default=1, choices=(1, 2))
    parser.add_argument("--bitrate", type=int, default=64, help="AAC kbps (default 64)")
    parser.add_argument("--mp3", action="store_true", help="also time the MP3 export")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    if args.quick:
        args.hours, args.chapters = 1.0, 6

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="omni-bench-assembly-"))
    try:
        chunks = make_chunks(workdir / "chunks", args.rate, args.channels)
        spec = BenchSpec(workdir, chunks, args.hours, args.chapters, args.rate, args.channels, args.bitrate, args.mp3)
        print(f"Assembling a {args.hours:g}-hour book ({args.chapters} chapters, "
              f"{AudioFormat(args.rate, args.channels).label}) in {workdir}", flush=True)  # fmt: skip
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        child = ctx.Process(target=assemble, args=(spec, results))
        started = time.perf_counter()
        child.start()
        child.join()
        wall_s = time.perf_counter() - started
        if child.exitcode != 0:
            print(f"assembly failed (exit code {child.exitcode})", file=sys.stderr)
            return 1
        report(results.get(), wall_s, args.mp3)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(r: dict, wall_s: float, mp3: bool) -> None:
    book_s = r["book_ms"] / 1000
    assembly_s = r["chapters_s"] + r["m4b_s"]
    self_mb, child_mb = r["self_kib"] / 1024, r["children_kib"] / 1024
    peak_mb = self_mb + child_mb  # children run one at a time, beside the Python process
    hours, rest = divmod(round(book_s), 3600)
    print()
    print(f"book duration        {hours}:{rest // 60:02d}:{rest % 60:02d} ({book_s:,.0f} s), "
          f"{r['marks']} chapter marks, {r['segments']:,} chunk segments")  # fmt: skip
    print(f"chapters (FLAC)      {r['chapters_s']:7.1f} s   {book_s / r['chapters_s']:7.0f}x realtime   "
          f"{r['flac_bytes'] / 1e6:8.1f} MB")  # fmt: skip
    print(f"m4b (AAC)            {r['m4b_s']:7.1f} s   {book_s / r['m4b_s']:7.0f}x realtime   "
          f"{r['m4b_bytes'] / 1e6:8.1f} MB")  # fmt: skip
    if mp3:
        print(f"mp3 export           {r['mp3_s']:7.1f} s   {book_s / r['mp3_s']:7.0f}x realtime")
    print(f"assembly total       {assembly_s:7.1f} s   {book_s / assembly_s:7.0f}x realtime   (wall incl. start-up {wall_s:.1f} s)")
    print(f"peak RSS python      {self_mb:7.1f} MB")
    print(f"peak RSS ffmpeg      {child_mb:7.1f} MB   (largest child)")
    verdict = "PASS" if peak_mb < TARGET_MB else "FAIL"
    print(f"peak RSS total       {peak_mb:7.1f} MB   target < {TARGET_MB} MB: {verdict}")


if __name__ == "__main__":
    sys.exit(main())
