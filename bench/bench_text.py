"""Benchmark: what the text layer (lexicon + normalisation) costs on top of chunking a book.

For each fixture book (and the largest one repeated to ~5x its size): median seconds to chunk the
preselected chapters as written, and with the spoken form (English rules plus a 200-entry lexicon),
their ratio, words per second through the rules, and the process's peak RSS. Not a test.

    .venv/bin/python bench/bench_text.py [--runs 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.book import Book, chunk_chapter, effective_chunk_limits, load_book  # noqa: E402
from omni_web.catalog import get_entry  # noqa: E402
from omni_web.settings import Settings  # noqa: E402
from omni_web.text import Lexicon, LexiconEntry, Pronouncer, find_candidates, spoken_form  # noqa: E402

DATA_DIR = ROOT / "tests" / "data"
ENTRY = get_entry("qwen3_tts_0_6b_customvoice")


def _lexicon(size: int) -> Pronouncer:
    entries = [LexiconEntry(f"Name{i}x", f"NAYM-{i}") for i in range(size - 2)]
    entries += [LexiconEntry("Gryphon", "GRIFF-in"), LexiconEntry(r"(\d+)lb", r"\1 pounds", regex=True)]
    return Pronouncer(Lexicon().merged(entries)[0])


def _chunk(book: Book, speech=None) -> tuple[int, int]:
    words, max_words, max_chars = effective_chunk_limits(ENTRY, 120)
    chunks = spoken_words = 0
    for chapter in book.chapters:
        if not chapter.selected_by_default:
            continue
        source = speech.chapter(chapter) if speech is not None else chapter
        for chunk in chunk_chapter(source, chunk_words=words, max_words=max_words, max_chars=max_chars):
            chunks += 1
            spoken_words += chunk.words
    return chunks, spoken_words


def _bigger(book: Book, times: int) -> Book:
    chapters = tuple(replace(c, index=i) for i, c in enumerate(book.chapters * times))
    return replace(book, chapters=chapters)


def measure(name: str, book: Book, runs: int, pronouncer: Pronouncer) -> None:
    speech = spoken_form(
        book, entry=ENTRY, settings=Settings(), language="en", pronouncer=pronouncer, announce=False
    )
    plain_s, spoken_s = [], []
    for _ in range(runs):
        start = time.perf_counter()
        _chunk(book)
        plain_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        chunks, words = _chunk(book, speech)
        spoken_s.append(time.perf_counter() - start)
    start = time.perf_counter()
    candidates = len(find_candidates(book))
    candidates_s = time.perf_counter() - start
    plain, spoken = statistics.median(plain_s), statistics.median(spoken_s)
    written_words = sum(c.word_count for c in book.chapters if c.selected_by_default)
    print(
        f"{name:34} words {written_words:>8,}  chunks {chunks:>6,}  chunk {plain:6.3f}s  "
        f"spoken+chunk {spoken:6.3f}s  ratio {spoken / plain:5.2f}x  "
        f"{written_words / max(spoken - plain, 1e-9):>9,.0f} words/s through the text layer  "
        f"candidates {candidates} in {candidates_s:.3f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pronouncer = _lexicon(200)
    books = {path.name: load_book(path) for path in sorted(DATA_DIR.glob("*.epub"))}
    for name, book in books.items():
        measure(name, book, args.runs, pronouncer)
    largest = max(books, key=lambda n: books[n].word_count)
    measure(f"{largest} x5", _bigger(books[largest], 5), max(1, args.runs // 2), pronouncer)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
