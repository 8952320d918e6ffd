"""The QA inbox for hundreds of flagged chunks: filter by chapter and by reason, one page at a time.

Pure functions over :class:`~omni_web.pipeline.review.ReviewRow` lists, so the web UI and the CLI
show the same filters and the same counts. A reason is a finding's kind
(:class:`~omni_web.qa.FindingKind`), recorded when the check ran, so chunks that failed the same way
fall under one filter whatever their numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.pipeline.review import ReviewRow
from omni_web.qa import FindingKind

__all__ = ["PAGE_SIZE", "InboxPage", "inbox_page"]

PAGE_SIZE = 50


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
    reasons: tuple[tuple[FindingKind, int], ...]

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
    reason: FindingKind | str | None = None,
    page: int = 1,
    size: int = PAGE_SIZE,
) -> InboxPage:
    """Filter ``rows`` (flagged, in reading order) by chapter and reason kind, and cut out ``page``.

    ``reason`` is a :class:`FindingKind` or its value (a filter menu's); an unknown word matches nothing.
    """
    chapters = Counter(row.chapter for row in rows)
    reasons = Counter(kind for row in rows for kind in row.kinds)
    matching = tuple(
        row
        for row in rows
        if (chapter is None or row.chapter == chapter) and (not reason or reason in row.kinds)
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
