"""``storage``: what the data root and the output folder hold, and pruning.

    python -m omni_web storage                    # sizes by kind and by book
    python -m omni_web storage --prune --dry-run  # what pruning would free, nothing removed
    python -m omni_web storage --prune            # remove it; prints the bytes freed
"""

from __future__ import annotations

import argparse

from omni_web.backend.disk import format_bytes
from omni_web.paths import data_root_from_env
from omni_web.settings import load_settings
from omni_web.storage import prune_plan, storage_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``storage``."""
    parser = subparsers.add_parser(
        "storage",
        help="show what the data root holds; prune the cache of finished books",
        description="Sizes by kind (chunk cache, chapter versions, books, extras, converted books, logs) and "
                    "by "
        "book. --prune removes the chunk cache of finished books, superseded chapter versions and "
        "converted books no job refers to; books a queued or running job works on are skipped.",
    )
    parser.add_argument("--prune", action="store_true", help="remove what finished books no longer need")
    parser.add_argument("--dry-run", action="store_true", help="with --prune: only say what would be freed")
    parser.set_defaults(handler=_storage)


def _storage(args: argparse.Namespace) -> int:
    paths = data_root_from_env()
    settings = load_settings(paths)
    if args.prune:
        plan = prune_plan(paths, settings)
        print(plan.summary())
        if args.dry_run:
            print("Nothing removed (--dry-run).")
            return 0
        result = plan.execute()
        print(f"Freed {result.freed_str} ({result.freed_bytes} bytes, {result.files} files).")
        return 0
    report = storage_report(paths, settings)
    print(f"Data root {report.root}, output folder {report.output_root}")
    width = max(len(k.label) for k in report.kinds)
    for kind in report.kinds:
        print(f"  {kind.label:<{width}}  {kind.size_str:>9}  {kind.files:>7} files")
    print(f"  {'Total':<{width}}  {format_bytes(report.total_bytes):>9}")
    for book in report.books:
        state = "in work" if book.busy else ("finished" if book.finished else "not finished")
        print(
            f"  {book.title} ({state}): chunks {format_bytes(book.chunk_bytes)}, chapter versions "
            f"{format_bytes(book.current_bytes)} in use, {format_bytes(book.superseded_bytes)} superseded"
        )
    return 0
