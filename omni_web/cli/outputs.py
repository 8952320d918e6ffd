"""``outputs migrate``: move books made in the flat layout into the library layout.

    python -m omni_web outputs migrate [--yes]

Shows every move first; nothing moves without ``--yes`` or a "y" at the prompt.
"""

from __future__ import annotations

import argparse
import sys

from omni_web.deliver.migrate import plan_migration
from omni_web.jobs import JobStore
from omni_web.paths import data_root_from_env
from omni_web.settings import load_settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``outputs`` with its ``migrate`` subcommand."""
    outputs = subparsers.add_parser("outputs", help="manage the finished books in the output folder")
    commands = outputs.add_subparsers(dest="outputs_command", metavar="SUBCOMMAND")
    migrate = commands.add_parser(
        "migrate", help="move flat-layout books into the library layout",
        description="Move books of the flat layout (every narrator version in one folder) into one folder "
                    "per book and narrator version, MP3 and ACX sets into their own trees.",
    )
    migrate.add_argument("--yes", action="store_true", help="move without asking")
    migrate.set_defaults(handler=_migrate)
    outputs.set_defaults(handler=lambda _args: outputs.print_help() or 2)


def _migrate(args: argparse.Namespace) -> int:
    paths = data_root_from_env()
    root = load_settings(paths).output_path(paths)
    plan = plan_migration(root)
    for note in plan.skipped:
        print(f"skipped: {note}")
    if not plan.books:
        print(f"Nothing to move: no flat-layout book in {root}.")
        return 0
    for book in plan.books:
        print(f"{book.m4b.relative_to(root)}")
        for source, target in book.moves:
            print(f"    {source.relative_to(root)}  ->  {target.relative_to(root)}")
    print(f"{len(plan.books)} books, {plan.move_count} files and folders to move.")
    if not args.yes:
        if not sys.stdin.isatty():
            print("Nothing moved. Run again with --yes to move them.")
            return 1
        if input("Move them? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Nothing moved.")
            return 1
    moved = plan.execute(job_store=JobStore(paths.jobs_db))
    print(f"Moved {moved} books into the library layout.")
    return 0
