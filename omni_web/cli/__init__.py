"""The command-line interface: argument parsing only; every command calls the core.

Each subcommand lives in its own module under ``omni_web/cli/`` and exposes
``register(subparsers)``; it sets ``handler`` on its parser, and the handler returns an exit code.
:func:`main` imports only the module of the command it runs (the others pull in the server,
cast and API layers, a second of CPU before anything is read); the top-level help lists every
command from :data:`COMMANDS` without importing any of them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import MappingProxyType

from omni_web.errors import OmniWebError

__all__ = ["COMMANDS", "COMMAND_MODULES", "build_parser", "main"]

# One module per top-level command; each defines register(subparsers).
COMMAND_MODULES: tuple[str, ...] = (
    "convert",
    "chapters",
    "cast",
    "voices",
    "server",
    "models",
    "setup",
    "lexicon",
    "review",
    "queue",
    "token",
    "outputs",
    "storage",
    "agent",
)
# Command → (its module, its one-line help), in the help's order; a test keeps it equal to what
# the modules register.
COMMANDS = MappingProxyType(
    {
        "convert": ("convert", "turn a book (EPUB, PDF, DOCX, ...) into an m4b (or MP3 chapters)"),
        "chapters": ("chapters", "list a book's chapters, word counts and the default selection"),
        "cast": ("cast", "list a book's characters and map them to voices"),
        "voices": (
            "voices",
            "manage reference clips (voices/), transcripts and voices uploaded to the server",
        ),
        "server": ("server", "start, stop or inspect the sgl-omni server"),
        "models": ("models", "list, install or remove TTS models (Hugging Face cache)"),
        "setup": ("setup", "create or repair the sglang-omni backend venv (--check: report only)"),
        "lexicon": ("lexicon", "the pronunciation lexicon: how names and symbols are said"),
        "review": ("review", "list the chunks QA flagged in a book"),
        "regenerate": ("review", "redo one chunk and rebuild its chapter and the book"),
        "queue": ("queue", "queue books for the web app's worker and steer the queue"),
        "token": ("token", "create, list and revoke API tokens"),
        "outputs": ("outputs", "manage the finished books in the output folder"),
        "storage": ("storage", "show what the data root holds; prune the cache of finished books"),
        "agent": ("agent", "on a GPU box: join an app's farm with a farm token and serve its model"),
    }
)


def build_parser(*, only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand registered by its module.

    Args:
        only: a command name: only its module is imported and registered, the other commands
            are listed by name and help; "" lists every command without importing any.
    """
    parser = argparse.ArgumentParser(
        prog="python -m omni_web",
        description="Turn books (EPUB, PDF, DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown, TXT) into audiobooks "
                    "with the TTS models SGLang-Omni serves.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if only is None:
        for name in COMMAND_MODULES:
            importlib.import_module(f"omni_web.cli.{name}").register(subparsers)
        return parser
    wanted = COMMANDS[only][0] if only in COMMANDS else ""
    for name, (module, text) in COMMANDS.items():
        if module != wanted:
            subparsers.add_parser(name, help=text)
    if wanted:
        importlib.import_module(f"omni_web.cli.{wanted}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; OmniWebError becomes a one-line message and exit 1."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list and args_list[0] in COMMANDS else ""
    parser = build_parser(only=command)
    args = parser.parse_args(args_list)
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
