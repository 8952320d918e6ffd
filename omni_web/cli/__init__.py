"""The command-line interface: argument parsing only; every command calls the core.

Each subcommand lives in its own module under ``omni_web/cli/`` and exposes
``register(subparsers)``; it sets ``handler`` on its parser, and the handler returns an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from omni_web.errors import OmniWebError

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

# One module per top-level command; each defines register(subparsers).
COMMAND_MODULES: tuple[str, ...] = ("convert", "chapters", "cast", "voices", "server", "models", "setup", "lexicon", "review", "queue", "token", "outputs", "storage")


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="python -m omni_web",
        description="Turn books (EPUB, PDF, DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown, TXT) into audiobooks with the TTS models SGLang-Omni serves.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"omni_web.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; OmniWebError becomes a one-line message and exit 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except OmniWebError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
