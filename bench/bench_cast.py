"""Benchmark: what a cast costs. Dialogue analysis time and memory on a whole book, how many more
(and shorter) requests a cast makes, and the conversion time with and without it against the fake
sgl-omni with a fixed per-request latency and B parallel slots.

    .venv/bin/python bench/bench_cast.py [--book tests/data/pg11-alice.epub] [--slots 16] [--latency 0.2]

Not a test: it prints numbers. The fake server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.book import load_book  # noqa: E402
from omni_web.cast import Cast, book_quote_style, chapter_dialogue, find_characters  # noqa: E402
from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, VoiceChoice  # noqa: E402
from omni_web.paths import DataPaths  # noqa: E402
from omni_web.pipeline import ConvertRequest, plan_conversion, run_conversion  # noqa: E402
from omni_web.settings import Settings  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"


def analysis(book_path: Path) -> None:
    book = load_book(book_path)
    chapters = [c for c in book.chapters if c.selected_by_default]
    words = sum(c.word_count for c in chapters)
    tracemalloc.start()
    started = time.perf_counter()
    style = book_quote_style(book, chapters)
    quotes = sum(len(chapter_dialogue(c, style).quotes()) for c in chapters)
    split_s = time.perf_counter() - started
    people = find_characters(book)
    total_s = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"analysis: {book_path.name}, {words} words, style {style.name}, {quotes} quotes, {len(people)} "
        "speakers"
    )
    print(
        f"  split + attribute: {split_s:.3f} s ({words / split_s / 1000:.0f}k words/s); with the character "
        f"list {total_s:.3f} s; peak traced memory {peak / 2**20:.1f} MiB"
    )


def conversion(book_path: Path, slots: int, latency_s: float, chapters: tuple[int, ...]) -> None:
    book = load_book(book_path)
    entry = get_entry(MODEL)
    narrator = VoiceChoice.speaker("Vivian")
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"))
    base = ConvertRequest(
        book_path=book_path, model_key=MODEL, voice=narrator, chapters=chapters, concurrency=slots
    )
    env = {
        "FAKE_SGL_SLOTS": str(slots),
        "FAKE_SGL_LATENCY_S": str(latency_s),
        # Speech as long as read aloud: with hundredths of a second per word a one-word quote came
        # back too short to trust and was asked again (820 requests for 457 chunks).
        "FAKE_SGL_SECONDS_PER_WORD": "0.3",
    }
    print(f"conversion: chapters {chapters}, fake server B={slots} slots, L={latency_s:.2f} s/request")
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_server(MODEL, env=env, log_path=Path(tmp) / "f.log") as srv,
    ):
        log = Path(tmp) / "f.log"
        times, efficiency, posted = {}, {}, 0
        for label, request in (("one voice", base), ("cast", replace(base, cast=cast))):
            plan = plan_conversion(book, request, entry, Settings())
            items = plan.items
            words = [len(i.text.split()) for i in items]
            paths = DataPaths(Path(tmp) / label.replace(" ", "-")).ensure()
            started = time.perf_counter()
            with SpeechClient(srv.base_url) as client:
                run_conversion(request, paths=paths, settings=Settings(), client=client, book=book)
            times[label] = time.perf_counter() - started
            posts = _speech_posts(log) - posted
            posted += posts
            # The server's share kept busy: the fewest rounds of B requests it needed, over the time.
            efficiency[label] = math.ceil(posts / slots) * latency_s / times[label]
            print(
                f"  {label:>9}: {len(items)} chunks, {posts} requests, {sum(words) / len(words):.1f} words "
                f"each on average, converted in {times[label]:.2f} s, "
                f"batch efficiency {efficiency[label]:.3f}"
            )
        print(
            f"  cast / one voice: {times['cast'] / times['one voice']:.2f}x the time (more, shorter "
            f"requests at a fixed cost each); efficiency {efficiency['cast'] / efficiency['one voice']:.3f} "
            "of the one voice's"
        )


def _speech_posts(log: Path) -> int:
    """Speech requests the fake server has answered (its access log)."""
    return log.read_text(encoding="utf-8", errors="replace").count("POST /v1/audio/speech")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--book", type=Path, default=ROOT / "tests" / "data" / "pg11-alice.epub")
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--chapters", default="12,13")
    args = parser.parse_args()
    analysis(args.book)
    conversion(args.book, args.slots, args.latency, tuple(int(n) for n in args.chapters.split(",")))


if __name__ == "__main__":
    main()
