"""Pruning, planned first: the chunk cache of finished books, superseded chapter versions, and
converted books no job refers to. :func:`plan_prune` says what would go and how much it frees;
:meth:`PrunePlan.execute` surveys the jobs again and removes only what is still prunable, so a job
queued in between keeps its book's files.

Kept always: the files of a book a queued or running job works on (busy), chunks its QA report
still flags for a person to hear, chunk QA records (small; the reports read them), chapter
versions a finished book uses, and anything no finished book accounts for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.disk import format_bytes
from omni_web.storage.survey import Survey

__all__ = ["PrunePlan", "PruneResult", "plan_prune"]


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What :meth:`PrunePlan.execute` removed."""

    freed_bytes: int
    files: int
    skipped: int  # planned files kept because a job started on their book, or already gone

    @property
    def freed_str(self) -> str:
        """``1.2 GB``."""
        return format_bytes(self.freed_bytes)


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """Files to remove, by kind, with their sizes when planned."""

    chunks: tuple[tuple[Path, int], ...]
    versions: tuple[tuple[Path, int], ...]
    converted: tuple[tuple[Path, int], ...]
    books: int  # finished books whose chunks go
    busy_titles: tuple[str, ...]  # books skipped: a job works on them
    flagged_kept: int  # chunks kept for review
    chunk_cache: Path
    converted_dir: Path | None = None
    resurvey: Callable[[], Survey] | None = None

    @property
    def files(self) -> tuple[tuple[Path, int], ...]:
        """Every planned file with its size."""
        return self.chunks + self.versions + self.converted

    @property
    def expected_freed_bytes(self) -> int:
        """What executing the plan frees (if nothing changes meanwhile)."""
        return sum(size for _path, size in self.files)

    @property
    def expected_freed_str(self) -> str:
        """``1.2 GB``."""
        return format_bytes(self.expected_freed_bytes)

    def summary(self) -> str:
        """What would be freed, by kind, and what regenerating costs afterwards (the confirm text)."""
        chunk_bytes = sum(s for _p, s in self.chunks)
        lines = [
            f"Pruning frees {self.expected_freed_str}:",
            f"- chunk cache of {self.books} finished book(s): {format_bytes(chunk_bytes)} "
            f"({len(self.chunks)} chunks)",
            f"- superseded chapter versions: {format_bytes(sum(s for _p, s in self.versions))} "
            f"({len(self.versions)} files)",
            f"- converted books no job refers to: {format_bytes(sum(s for _p, s in self.converted))} "
            f"({len(self.converted)} files)",
        ]
        notes = []
        if self.chunks:
            notes.append(
                "Regenerating a chunk or running these books again will render their chunks again "
                "on the server (the finished books stay as they are)."
            )
        if self.flagged_kept:
            notes.append(f"{self.flagged_kept} chunk(s) flagged for review are kept.")
        if self.busy_titles:
            notes.append("Skipped, a job works on them: " + ", ".join(self.busy_titles) + ".")
        return "\n\n".join(["\n".join(lines), *notes])  # paragraphs apart (the UI shows it as Markdown)

    def execute(self) -> PruneResult:
        """Remove the planned files that are still prunable now; returns the bytes freed."""
        allowed = None
        if self.resurvey is not None:
            again = plan_prune(
                self.resurvey(), chunk_cache=self.chunk_cache, converted_dir=self.converted_dir
            )
            allowed = {p for p, _s in again.files}
        freed = removed = skipped = 0
        for path, _size in self.files:
            if allowed is not None and path not in allowed:
                skipped += 1
                continue
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                skipped += 1
                continue
            freed += size
            removed += 1
        return PruneResult(freed, removed, skipped)


def plan_prune(
    found: Survey,
    *,
    chunk_cache: Path,
    converted_dir: Path | None = None,
    resurvey: Callable[[], Survey] | None = None,
) -> PrunePlan:
    """What pruning would remove now (nothing is touched); ``resurvey`` reads the jobs again for
    :meth:`PrunePlan.execute`."""
    finished = [e for e in found.folders if e.finished]
    keep = set(found.busy_keys).union(*(e.flagged for e in found.folders))
    keep |= set().union(*(e.chunk_keys for e in found.folders if e.busy))
    keys = set().union(*(e.chunk_keys for e in finished)) - keep
    chunks = _sized(chunk_cache / f"{key}.wav" for key in sorted(keys))
    flagged = set().union(*(e.flagged for e in finished))
    versions = _sized(p for e in found.folders if not e.busy for v in e.superseded for p in v.files)
    converted: tuple[tuple[Path, int], ...] = ()
    if converted_dir is not None and converted_dir.is_dir():
        converted = _sized(
            p
            for p in sorted(converted_dir.glob("*.epub"))
            if not p.name.startswith(".") and p.stem not in found.job_book_digests
        )
    books = sum(1 for e in finished if e.chunk_keys - keep)
    busy = tuple(
        sorted({e.title for e in found.folders if e.busy and (e.chunk_keys or e.superseded or e.books)})
    )
    return PrunePlan(
        chunks, versions, converted, books, busy, len(flagged), chunk_cache, converted_dir, resurvey
    )


def _sized(paths) -> tuple[tuple[Path, int], ...]:  # noqa: ANN001 - any iterable of paths
    out = []
    for path in paths:
        try:
            out.append((path, path.stat().st_size))
        except OSError:
            continue
    return tuple(out)
