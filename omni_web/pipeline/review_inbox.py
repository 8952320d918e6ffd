"""The QA inbox for hundreds of flagged chunks: filter by chapter and by reason, one page at a time.

Pure functions over :class:`~omni_web.pipeline.review.ReviewRow` lists, so the web UI and the CLI
show the same filters and the same counts. A reason's kind is its text with the figures taken out
("the audio is … of the expected length: cut off or words skipped"), so chunks that failed the
same way fall under one filter whatever their numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.pipeline.review import ReviewRow

__all__ = ["PAGE_SIZE", "InboxPage", "inbox_page", "reason_kind", "row_kinds"]

PAGE_SIZE = 50
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*\s*%?")


def reason_kind(reason: str) -> str:
    """One failure's text with its figures replaced by ``…`` (the same kind for every chunk)."""
    return " ".join(_FIGURE.sub("…", reason).split())


def row_kinds(row: ReviewRow) -> tuple[str, ...]:
    """Every kind of failure of the row's kept take."""
    return tuple(reason_kind(part) for part in row.reasons.split(";") if part.strip())


@dataclass(frozen=True, slots=True)
class InboxPage:
    """One page of the filtered inbox, and what the filters offer.

    ``matching`` holds every row the filters let through (what "accept all" accepts); ``rows`` is
    the page of them shown. ``chapters`` and ``reasons`` are ``(value, count)`` over all flagged
    rows, so a filter's menu says how many each choice holds.
    """

    rows: tuple[ReviewRow, ...]
    matching: tuple[ReviewRow, ...]
    total: int
    page: int
    pages: int
    chapters: tuple[tuple[int, int], ...]
    reasons: tuple[tuple[str, int], ...]

    @property
    def line(self) -> str:
        """``120 of 560 flagged chunks match · page 2 of 3``."""
        shown = (
            f"{len(self.matching):,} of {self.total:,} flagged chunks match"
            if len(self.matching) != self.total
            else f"{self.total:,} flagged chunks"
        )
        return shown + (f" · page {self.page} of {self.pages}" if self.pages > 1 else "")


def inbox_page(
    rows: Sequence[ReviewRow],
    *,
    chapter: int | None = None,
    reason: str | None = None,
    page: int = 1,
    size: int = PAGE_SIZE,
) -> InboxPage:
    """Filter ``rows`` (flagged, in reading order) by chapter and reason kind, and cut out ``page``."""
    chapters = Counter(row.chapter for row in rows)
    reasons = Counter(kind for row in rows for kind in set(row_kinds(row)))
    matching = tuple(
        row
        for row in rows
        if (chapter is None or row.chapter == chapter) and (not reason or reason in row_kinds(row))
    )
    pages = max(1, -(-len(matching) // size))
    page = min(max(1, page), pages)
    start = (page - 1) * size
    return InboxPage(
        rows=matching[start : start + size],
        matching=matching,
        total=len(rows),
        page=page,
        pages=pages,
        chapters=tuple(sorted(chapters.items())),
        reasons=tuple(reasons.most_common()),
    )
