"""Honest time before a book is queued: its words at the speed this machine measured on the books
it finished (wall time, every phase included: rendering, mastering, encoding).

Pure: the caller passes the finished jobs it has, so the Generate tab and the CLI say the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from omni_web.jobs import Job, JobState
from omni_web.pipeline import ConvertProgress, ConvertRequest
from omni_web.timefmt import duration_words

__all__ = ["Estimate", "estimate_book", "measured_rate"]

_RECENT = 5  # the newest finished books the speed is taken from
_MIN_WORDS = 200  # a sample or a one-chunk regenerate says little about a book's speed


@dataclass(frozen=True, slots=True)
class Estimate:
    """``words`` to speak, and the time they should take at ``words_per_s`` (None: not measured yet)."""

    words: int
    words_per_s: float | None
    books: int  # how many finished books the rate comes from
    model_matched: bool = False

    @property
    def seconds(self) -> float | None:
        """The whole job's expected wall time."""
        return self.words / self.words_per_s if self.words_per_s else None

    @property
    def line(self) -> str:
        """``About 1 h 42 min for 215,830 words (measured here: 35 words/s over 3 books)``."""
        if not self.words:
            return ""
        if self.seconds is None:
            return (f"{self.words:,} words. No book has finished on this machine yet: the first one measures "
                    "the speed, then every book gets an estimate here.")
        which = "this model's" if self.model_matched else "the"
        noun = "book" if self.books == 1 else "books"
        return (
            f"About {duration_words(self.seconds)} for {self.words:,} words, rendering and mastering "
            "included "
            f"(measured here: {self.words_per_s:.0f} words/s over {which} last {self.books} {noun})."
        )


def measured_rate(jobs: Iterable[Job], *, model_key: str | None = None) -> tuple[float | None, int, bool]:
    """Words per second of wall time over the newest finished books (``model_key``'s when it has some).

    Returns (rate or None, how many books, whether they are ``model_key``'s).
    """
    finished = []
    for job in jobs:
        if job.state is not JobState.DONE or job.started_at is None or job.finished_at is None:
            continue
        words = ConvertProgress.from_dict(job.progress).words
        took = job.finished_at - job.started_at
        if words >= _MIN_WORDS and took > 0:
            finished.append((job.finished_at, ConvertRequest.read(job.params).model_key, words, took))
    finished.sort(reverse=True)
    same = [row for row in finished if model_key and row[1] == model_key]
    chosen = (same or finished)[:_RECENT]
    if not chosen:
        return None, 0, False
    return sum(row[2] for row in chosen) / sum(row[3] for row in chosen), len(chosen), bool(same)


def estimate_book(words: int, jobs: Iterable[Job], *, model_key: str | None = None) -> Estimate:
    """The estimate for ``words`` from the jobs this app has finished."""
    rate, books, matched = measured_rate(jobs, model_key=model_key)
    return Estimate(words=words, words_per_s=rate, books=books, model_matched=matched)
