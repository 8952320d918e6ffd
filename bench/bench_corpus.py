"""Benchmark: every real book of tests/data/corpus read as a job reads it, graded as a listener would.

Each file goes through ``load_book``, the chapters a job preselects, their spoken form (the book's
language rules) and the chunks a job sends; tests/corpus_judge.py grades it against the
expectation beside it (``<file>.expect.json``):

- GOOD: the expected refusal (its words, naming the file); or the chapter count and first titles as
  expected, every ``must_read`` phrase spoken, nothing from ``never_read`` or the corpus-wide junk
  list (licence and producer lines, glyph placeholders, "Previous topic") in any chunk, the
  language as expected.
- FAIR: listenable with flaws: chapters off by at most half, a title or the language wrong, fewer
  than half of the ``must_read`` phrases missing.
- BAD: a wrong refusal or none where one was due, junk read aloud, chapters wrong by more than half
  (or one chapter where three or more were due), half the ``must_read`` phrases or more missing.

Prints one line per file that is not GOOD (with its reasons), then the table by format, the
CPU seconds per format, and the Gutenberg books whose TXT and HTML editions disagree on chapters.

    .venv/bin/python bench/bench_corpus.py [--format txt] [--all]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus_judge import CORPUS, Expectation, corpus_files, judge, read_book  # noqa: E402

GRADES = ("GOOD", "FAIR", "BAD")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="", help="only this format's folder (txt, epub, ...)")
    parser.add_argument("--all", action="store_true", help="print every file's line, GOOD ones too")
    args = parser.parse_args()
    counts: dict[str, Counter] = defaultdict(Counter)
    seconds: Counter = Counter()
    titles: dict[str, dict[str, tuple[str, ...]]] = defaultdict(dict)
    for path in corpus_files():
        fmt = path.parent.name
        if args.format and fmt != args.format:
            continue
        reading = read_book(path)
        verdict = judge(Expectation.load(path), reading)
        counts[fmt][verdict.grade] += 1
        seconds[fmt] += reading.seconds
        if path.stem.startswith("pg") and fmt in ("txt", "html"):
            titles[path.stem][fmt] = reading.titles
        if args.all or verdict.grade != "GOOD":
            print(f"{verdict.grade:4}  {path.relative_to(CORPUS)}: {'; '.join(verdict.reasons)}"[:300])
    _table(counts, seconds)
    _pairs(titles)


def _table(counts: dict[str, Counter], seconds: Counter) -> None:
    print()
    print(
        f"| {'format':8} | {'files':>5} | {'GOOD':>4} | {'FAIR':>4} | {'BAD':>4} | {'GOOD %':>6} | "
        f"{'CPU s':>6} |"
    )
    print(f"|{'-' * 10}|{'-' * 7}|{'-' * 6}|{'-' * 6}|{'-' * 6}|{'-' * 8}|{'-' * 8}|")
    total: Counter = Counter()
    for fmt in sorted(counts):
        total.update(counts[fmt])
        _row(fmt, counts[fmt], seconds[fmt])
    _row("all", total, sum(seconds.values()))


def _row(name: str, count: Counter, cpu: float) -> None:
    files = sum(count.values())
    share = 100 * count["GOOD"] / files if files else 0.0
    cells = " | ".join(f"{count[g]:>4}" for g in GRADES)
    print(f"| {name:8} | {files:>5} | {cells} | {share:>5.0f}% | {cpu:>6.1f} |")


def _pairs(titles: dict[str, dict[str, tuple[str, ...]]]) -> None:
    both = {stem: pair for stem, pair in titles.items() if len(pair) == 2}
    differ = [
        f"{stem} {len(pair['txt'])}/{len(pair['html'])}"
        for stem, pair in sorted(both.items())
        if len(pair["txt"]) != len(pair["html"])
    ]
    note = f" (differ, TXT/HTML: {', '.join(differ)})" if differ else ""
    print(f"\nGutenberg TXT = HTML chapters: {len(both) - len(differ)} of {len(both)} books{note}")


if __name__ == "__main__":
    main()
