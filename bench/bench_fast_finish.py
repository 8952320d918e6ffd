"""Fast finish: time from the last chunk to the finished m4b, peak memory, and mastering cost.

Three measurements, each in a fresh child process (so ``getrusage`` peaks are its own):

1. **Mastering cost**: one chapter (the book's chapter length) mastered from chunk WAVs that are
   all present: leveling, room tone, limiter + ebur128 measurement (pass 1) + the first-pass AAC,
   and loudnorm pass 2 (linear) + AAC when pass 1 is off target.
   Reported as wall and CPU seconds per hour of audio and as x realtime.
2. **Tail, 1 h and 20 h books**: every chapter but the last is already mastered (as in a real run,
   where chapters are mastered while later ones render; here they are copies of the chapter from
   step 1, hard-linked, so a 20-hour book costs no 20 hours of mastering on a shared machine).
   The last chapter's chunks then arrive at ``--render-x`` times realtime, as from a fast server,
   while the m4b is joined live (as ``run_conversion`` does: each mastered chapter is piped into
   one stream-copy ffmpeg), and the clock runs from the last chunk to (a) the m4b written and (b)
   the levels report written. Target: under 10 s for both books, whatever their length. The tail is
   broken down: last chunk -> last chapter fed to its ffmpeg -> last chapter's files written ->
   join started -> m4b written.
3. **Streaming check** (``--stream-all``, 1 h book): every chapter's chunks arrive at
   ``--render-x``; shows whether mastering keeps up with rendering (the tail stays the same).

Memory: the peak of python plus every ffmpeg running at the same moment (sampled from /proc:
summed PSS, and summed RSS, which counts shared libraries once per process), and getrusage's
per-process peaks.

Chunks are synthetic (a harmonic tone under a syllable envelope, six takes 16 dB apart) and
cycled, to keep disk and time small.

    .venv/bin/python bench/bench_fast_finish.py                 # 1 h and 20 h books
    .venv/bin/python bench/bench_fast_finish.py --books 1 --stream-all
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from omni_web.assemble import AudiobookTags, AudioFormat, probe_chapters, probe_duration_ms  # noqa: E402
from omni_web.assemble.join import EncodedChapter, join_m4b  # noqa: E402
from omni_web.deliver.layout import OutputLayout, book_place  # noqa: E402
from omni_web.master import ChapterSpec, MasteredChapter, get_preset, master_chapter  # noqa: E402
from omni_web.master.records import chapter_paths, chunks_stamp  # noqa: E402
from omni_web.pipeline.mastering import (  # noqa: E402
    ChapterFinisher,
    finish_book,
    master_options,
    measured_levels,
)

RATE = 24000
CHUNK_S = (9.0, 11.5, 7.25, 13.0, 10.5, 8.75)
GAINS_DB = (0.0, -16.0, -5.0, -11.0, -2.5, -8.0)
PAUSE_MS = (350, 350, 350, 350, 900)
TAIL_TARGET_S = 10.0
RSS_TARGET_MB = 300


@dataclass(frozen=True)
class Book:
    hours: float
    chapters: int

    @property
    def chapter_s(self) -> float:
        return self.hours * 3600 / self.chapters


def make_chunks(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, (seconds, gain) in enumerate(zip(CHUNK_S, GAINS_DB, strict=True)):
        t = np.arange(int(seconds * RATE)) / RATE
        pitch = 120 + 17 * number
        envelope = np.abs(np.sin(2 * np.pi * 2.3 * t)) ** 1.5 * (0.7 + 0.3 * np.sin(2 * np.pi * 0.31 * t))
        tone = 0.6 * np.sin(2 * np.pi * pitch * t) + 0.3 * np.sin(2 * np.pi * 3 * pitch * t)
        tone += 0.1 * np.sin(2 * np.pi * 7 * pitch * t)
        samples = 0.5 * 10 ** (gain / 20) * envelope * tone
        path = folder / f"take-{number}.wav"
        if path.is_file():  # the book runs reuse the mastering run's takes (their stamps must hold)
            paths.append(path)
            continue
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes((samples * 32767).astype("<i2").tobytes())
        paths.append(path)
    return paths


def chapter_spec(number: int, seconds: float) -> tuple[ChapterSpec, list[int]]:
    """A chapter of ``seconds``: keys cycle over the takes; returns the spec and each key's take."""
    keys, pauses, takes, total, cursor = [], [], [], 0.0, 0
    while total < seconds:
        take = cursor % len(CHUNK_S)
        pause = PAUSE_MS[cursor % len(PAUSE_MS)]
        keys.append(f"c{number:03d}-{cursor:05d}")
        pauses.append(pause)
        takes.append(take)
        total += CHUNK_S[take] + pause / 1000
        cursor += 1
    pauses[-1] = 0
    return ChapterSpec(number, f"Chapter {number}", tuple(keys), tuple(pauses), f"{number:03d}-bench"), takes


class TreeMemory:
    """Samples the memory of this process and all its descendants together (every 0.1 s): the sum
    of RSS (shared library pages counted once per process, an overestimate) and of PSS (shared
    pages split between the processes sharing them: what the job really holds)."""

    def __init__(self) -> None:
        self.peak_rss_mb = 0.0
        self.peak_pss_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @staticmethod
    def _tree() -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
        tree, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, []))
        return tree

    def _sample(self) -> None:
        rss = pss = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
                    for line in f:
                        if line.startswith("Rss:"):
                            rss += int(line.split()[1])
                        elif line.startswith("Pss:"):
                            pss += int(line.split()[1])
            except OSError:
                continue
        self.peak_rss_mb = max(self.peak_rss_mb, rss / 1024)
        self.peak_pss_mb = max(self.peak_pss_mb, pss / 1024)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return {"tree_rss_mb": self.peak_rss_mb, "tree_pss_mb": self.peak_pss_mb}


def _rusage() -> dict[str, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
        "self_mb": me.ru_maxrss / 1024,
        "child_mb": kids.ru_maxrss / 1024,
    }


def options():
    return master_options(get_preset("audiobook"), AudioFormat(RATE, 1), aac_kbps=64, mp3=False,
                          pause_between_chapters_ms=1500)


def run_master(workdir: Path, chapter_s: float, results) -> None:  # noqa: ANN001
    """Child: master one chapter with every chunk present."""
    takes = make_chunks(workdir / "takes")
    spec, which = chapter_spec(1, chapter_s)
    by_key = dict(zip(spec.keys, (takes[i] for i in which), strict=True))
    started = time.perf_counter()
    record = master_chapter(spec, workdir / "master", options(), wait_chunk=by_key.__getitem__)
    wall = time.perf_counter() - started
    measured_levels(record.m4a)  # the report's measurement, cached beside the file for the book runs
    usage = _rusage()
    results.put({"audio_s": record.duration_ms / 1000, "wall_s": wall, **usage, "gain_db": record.gain_db,
                 "limited_again": record.limited_again})


def clone_mastered(
    source_dir: Path,
    folder: Path,
    spec: ChapterSpec,
    opts,  # noqa: ANN001
    chunk_files: list[Path],
    miss_db: float = 0.0,
) -> None:
    """Chapter ``spec`` as an already mastered chapter: hard links to the step-1 chapter's files."""
    source = next(source_dir.glob("*.json"))
    record = json.loads(source.read_text(encoding="utf-8"))
    target = chapter_paths(folder, spec, opts)
    for name in ("m4a", "adts"):
        os.link(record[name], target[name])
    os.link(record["m4a"] + ".levels.json", str(target["m4a"]) + ".levels.json")
    record.update(
        # --miss: the book's leveling calibration is told it lands ``miss_db`` off, so the last
        # chapter measures off target in pass 1 and needs its second pass after the last chunk.
        reference_db=record["reference_db"] + miss_db,
        number=spec.number,
        title=spec.title,
        m4a=str(target["m4a"]),
        adts=str(target["adts"]),
        chunks_stamp=chunks_stamp(chunk_files),
    )
    target["record"].write_text(json.dumps(record), encoding="utf-8")


def run_book(
    workdir: Path,
    book: Book,
    render_x: float,
    stream_all: bool,
    miss_db: float,
    results,  # noqa: ANN001
) -> None:
    """Child: the last chapter (or every chapter) arrives at ``render_x``; time the finish."""
    takes = make_chunks(workdir / "takes")
    opts = options()
    run_dir = workdir / ("every-chapter" if stream_all else "last-chapter")  # one run of each per book
    folder = run_dir / "parts"
    folder.mkdir(parents=True)
    specs, feeds = [], []
    for number in range(1, book.chapters + 1):
        spec, which = chapter_spec(number, book.chapter_s)
        specs.append(spec)
        feeds.append(
            [
                (key, takes[i], CHUNK_S[i] + p / 1000)
                for key, i, p in zip(spec.keys, which, spec.pauses_ms, strict=True)
            ]
        )
        if number < book.chapters and not stream_all:
            clone_mastered(workdir / "master", folder, spec, opts, [takes[i] for i in which], miss_db)
    marks: dict[str, float] = {}

    def on_state(number: int, state: str) -> None:
        if number == book.chapters:
            marks[f"last_{state}"] = time.perf_counter()

    def on_ready(record: MasteredChapter) -> None:
        if record.number == book.chapters:
            marks["last_ready"] = time.perf_counter()

    memory = TreeMemory()
    tags = AudiobookTags("Synthetic Book", author="Bench")
    # As run_conversion does for an m4b: the book is joined live while its chapters are mastered.
    finisher = ChapterFinisher(specs, folder, opts, on_state=on_state, on_ready=on_ready, m4b_tags=tags)

    def render() -> None:
        for number, feed in enumerate(feeds, start=1):
            paced = stream_all or number == book.chapters
            for key, path, seconds in feed:
                if paced:
                    time.sleep(seconds / render_x)
                finisher.chunk_done(_Item(key), path)
        marks["last_chunk"] = time.perf_counter()

    def phase(name: str, message: str) -> None:
        if name == "joining" and "join_started" not in marks:
            marks["join_started"] = time.perf_counter()
        if message == "Checking levels":
            marks["m4b"] = time.perf_counter()

    started = time.perf_counter()
    renderer = threading.Thread(target=render)
    renderer.start()
    renderer.join()
    try:
        place = book_place(run_dir / "out", tags, "Synthetic Book {Bench}", layout=OutputLayout.LIBRARY)
        files = finish_book(finisher, place=place, tags=tags, cover=None, output_format="m4b", also_mp3=False,
                            phase=phase)
    finally:
        finisher.close()
    done = time.perf_counter()
    tree = memory.stop()
    load = os.getloadavg()[0]
    # For comparison, the join after the fact (what the live join saves), and its CPU cost
    # (load-independent): a child's CPU is counted when it exits.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    encoded = [
        EncodedChapter(r.number, r.title, r.adts, r.aac_frames, r.sample_rate_hz) for r in files.records
    ]
    join_m4b(encoded, run_dir / "again.m4b", tags=AudiobookTags("Synthetic Book"), cover=None)
    join_wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    join_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    last = files.records[-1]
    marks_read = probe_chapters(files.m4b)
    drift = max(abs(m.duration_ms - c.duration_ms) for m, c in zip(marks_read, files.chapters, strict=True))
    results.put(
        {
            "render_s": marks["last_chunk"] - started,
            "tail_m4b_s": marks["m4b"] - marks["last_chunk"],
            "tail_steps": {
                step: marks[step] - marks["last_chunk"]
                for step in ("last_encoding", "last_ready", "join_started")
            },
            "tail_report_s": done - marks["last_chunk"],
            "book_s": probe_duration_ms(files.m4b) / 1000,
            "marks": len(marks_read),
            "max_mark_drift_ms": drift,
            "m4b_mb": files.m4b.stat().st_size / 1e6,
            "passed": bool(files.levels.get("passed")),
            "load": load,
            "join_cpu_s": join_cpu,
            "join_wall_s": join_wall,
            "last_second_pass": last.second_pass,
            "last_gain_db": last.gain_db,
            **_rusage(),
            **tree,
        }
    )


class _Item:
    def __init__(self, key: str) -> None:
        self.key = key


def child(target, *args):  # noqa: ANN001, ANN201
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=target, args=(*args, queue))
    process.start()
    process.join()
    if process.exitcode != 0:
        raise SystemExit(f"{target.__name__} failed (exit code {process.exitcode})")
    return queue.get()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=float, nargs="+", default=[1.0, 20.0], help="book lengths in hours")
    parser.add_argument(
        "--render-x", type=float, default=60.0, help="render speed of the last chapter, x realtime"
    )
    parser.add_argument("--stream-all", action="store_true", help="stream every chapter (1 h books only)")
    parser.add_argument(
        "--miss",
        action="store_true",
        help="make the last chapter miss the target in pass 1 (its second pass runs after the last chunk)",
    )
    args = parser.parse_args()
    shapes = {1.0: Book(1.0, 6), 20.0: Book(20.0, 60)}
    for hours in args.books:
        book = shapes.get(hours, Book(hours, max(1, round(hours * 3))))
        workdir = Path(tempfile.mkdtemp(prefix="omni-bench-finish-"))
        try:
            print(
                f"\n== {book.hours:g}-hour book: {book.chapters} chapters of {book.chapter_s / 60:.0f} min, "
                f"24 kHz mono, takes 16 dB apart ==",
                flush=True,
            )
            m = child(run_master, workdir, book.chapter_s)
            per_hour = 3600 / m["audio_s"]
            print(
                f"mastering one chapter  {m['audio_s'] / 60:6.1f} min of audio in {m['wall_s']:6.1f} s wall "
                f"({m['audio_s'] / m['wall_s']:5.0f}x realtime), CPU {m['cpu_s']:6.1f} s"
            )
            print(
                f"mastering cost         {m['wall_s'] * per_hour:6.1f} s wall, {m['cpu_s'] * per_hour:6.1f} "
                "s CPU "
                "per hour of audio"
            )
            modes = [False, True] if args.stream_all and book.hours <= 1 else [False]
            for stream_all in modes:
                r = child(run_book, workdir, book, args.render_x, stream_all, 2.0 if args.miss else 0.0)
                label = "every chapter streamed" if stream_all else "last chapter streamed"
                verdict = "PASS" if r["tail_m4b_s"] < TAIL_TARGET_S else "FAIL"
                peak = r["self_mb"] + r["child_mb"]
                print(f"[{label}, chunks at {args.render_x:g}x realtime; render took {r['render_s']:.1f} s]")
                print(
                    f"  last chunk -> m4b      {r['tail_m4b_s']:6.2f} s   target < {TAIL_TARGET_S:g} s: "
                    f"{verdict}"
                )
                steps = r["tail_steps"]
                print(
                    f"    breakdown            fed {steps['last_encoding']:+.2f} s, chapter files "
                    f"{steps['last_ready']:+.2f} s, join start {steps['join_started']:+.2f} s, "
                    f"m4b {r['tail_m4b_s']:+.2f} s"
                )
                print(f"  last chunk -> report   {r['tail_report_s']:6.2f} s   (levels.json written)")
                print(f"  machine load (1 min)   {r['load']:6.1f} on {os.cpu_count()} cores")
                print(
                    f"  join after the fact    {r['join_wall_s']:6.2f} s wall, {r['join_cpu_s']:.2f} s CPU "
                    "(for comparison: the live join did this while the last chapter rendered)"
                )
                second = (
                    "needed (pass 1 off by more than 0.3 LU)"
                    if r["last_second_pass"]
                    else "skipped (pass 1 within 0.3 LU)"
                )
                print(
                    f"  last chapter           second pass {second}, loudnorm gain {r['last_gain_db']:+.2f} "
                    "dB"
                )
                print(
                    f"  m4b                    {r['book_s'] / 3600:6.2f} h, {r['marks']} marks, "
                    f"{r['m4b_mb']:.0f} MB, "
                    f"max |mark - chapter file| {r['max_mark_drift_ms']} ms, report passed: {r['passed']}"
                )
                print(
                    f"  peak RSS               python {r['self_mb']:.0f} MB + largest ffmpeg "
                    f"{r['child_mb']:.0f} MB "
                    f"= {peak:.0f} MB"
                )
                pss = r["tree_pss_mb"]
                print(
                    f"  peak, all at once      PSS {pss:.0f} MB (RSS summed {r['tree_rss_mb']:.0f} MB) of "
                    "python + every "
                    f"ffmpeg running together   target < {RSS_TARGET_MB} MB: "
                    f"{'PASS' if pss < RSS_TARGET_MB else 'FAIL'}"
                )
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
