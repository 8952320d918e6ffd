"""``python -m omni_web cast BOOK.epub``: list a book's speakers and map them to voices.

The mapping is saved per book (see :mod:`omni_web.cast.store`); ``convert … --cast saved`` renders
with it, and ``--from`` imports another book's cast (the next book of a series).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from omni_web.book import BOOK_SUFFIXES, Book, load_book
from omni_web.cast import (
    Cast,
    CastFile,
    Character,
    VoiceSpec,
    book_quote_style,
    edit_characters,
    find_characters,
    load_cast_file,
    saved_cast_path,
)
from omni_web.cast.autocast import ready_cast_file
from omni_web.cast.review import book_labels, joined_summary, review_list, run_llm_pass
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice
from omni_web.errors import BookNotFound, CastError
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.pipeline import parse_chapter_spec, select_chapters
from omni_web.settings import Settings, load_settings
from omni_web.voices import VoiceLibrary
from omni_web.voices.choice import VoiceAsk, voice_for

__all__ = ["add_cast_arguments", "cast_from_args", "parse_voice_spec", "register"]

SAVED = "saved"


def add_cast_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``convert`` flags of a cast: the dialogue voice and a cast file."""
    dialogue = parser.add_mutually_exclusive_group()
    dialogue.add_argument(
        "--dialogue-voice", metavar="NAME", help="read quoted speech in this voice (as --voice)"
    )
    dialogue.add_argument("--dialogue-clone", metavar="CLIP", help="read quoted speech cloning this clip")
    dialogue.add_argument(
        "--dialogue-instructions", metavar="TEXT", help="read quoted speech in a designed voice"
    )
    parser.add_argument(
        "--dialogue-transcription", metavar="TEXT", help="what the --dialogue-clone clip says"
    )
    parser.add_argument(
        "--cast",
        metavar="FILE|saved",
        help="character voices: a cast YAML file, or 'saved' for the book's cast (see: cast BOOK.epub)",
    )


def cast_from_args(
    args: argparse.Namespace, entry: CatalogEntry, book: Book, paths: DataPaths, settings: Settings
) -> tuple[VoiceChoice, Cast | None]:
    """The narrator's voice and the cast the ``convert`` flags ask for (None: one voice).

    ``--voice``/``--clone``/``--instructions`` win over a cast file's narrator, the
    ``--dialogue-*`` flags over its dialogue voice.
    """
    library = VoiceLibrary(paths)
    cast_file = _cast_file(args.cast, book, paths, entry) if args.cast else None
    narrator = None
    if cast_file is not None and not (args.voice or args.clone or args.instructions):
        narrator = cast_file.narrator_voice(entry, library)
    if narrator is None:
        narrator = _voice(
            VoiceAsk(args.voice, args.clone, args.instructions, args.transcription), entry, paths, settings
        )
    cast = cast_file.to_cast(entry, library) if cast_file is not None else Cast()
    if (
        args.cast and args.cast.strip().lower() == SAVED
    ):  # the book's labels (the LLM's, a person's) go with it
        cast = replace(cast, labels=book_labels(paths, book))
    if args.dialogue_voice or args.dialogue_clone or args.dialogue_instructions:
        ask = VoiceAsk(
            args.dialogue_voice, args.dialogue_clone, args.dialogue_instructions, args.dialogue_transcription
        )
        cast = replace(cast, dialogue=_voice(ask, entry, paths, settings))
    return narrator, (cast if cast.active else None)


def _voice(ask: VoiceAsk, entry: CatalogEntry, paths: DataPaths, settings: Settings) -> VoiceChoice:
    return voice_for(ask, entry, paths, transcription_model=settings.transcription_model, warn=_warn)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _cast_file(value: str, book: Book, paths: DataPaths, entry: CatalogEntry) -> CastFile:
    if value.strip().lower() == SAVED:
        # The book's own cast, or its series' (saved as its own), with the app's picks for the model.
        ready = ready_cast_file(paths, book, entry, VoiceLibrary(paths))
        if not saved_cast_path(paths, book).is_file():
            raise CastError(
                f"{book.metadata.title or book.source_path.name} has no saved cast. Map its characters "
                "first: "
                f"python -m omni_web cast {book.source_path} --set 'NAME=VOICE' (or --auto)"
            )
        return ready
    path = Path(value).expanduser()
    if not path.is_file():
        raise CastError(f"No cast file at {path}. Give a cast YAML file, or --cast saved for the book's own.")
    return load_cast_file(path)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``cast``."""
    parser = subparsers.add_parser(
        "cast",
        help="list a book's characters and map them to voices",
        description="List who speaks in a book (quotes, a sample line) and map characters to voices. "
        "VOICE is a name (ryan), clone:CLIP (a file or library voice) or instructions:TEXT.",
    )
    parser.add_argument("book", type=Path, metavar="BOOK")
    parser.add_argument("--chapters", metavar="SPEC", help="where to look, e.g. 1-3,5 (default: the body)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VOICE",
        help="map a character to a voice (repeatable), e.g. --set 'Ahab=ryan'",
    )
    parser.add_argument(
        "--unset", action="append", default=[], metavar="NAME", help="remove a character's voice"
    )
    parser.add_argument("--narrator", metavar="VOICE", help="save the narrator's voice")
    parser.add_argument(
        "--dialogue", metavar="VOICE", help="save the voice of quotes no character is mapped for"
    )
    parser.add_argument(
        "--min-confidence",
        type=float,
        metavar="X",
        help="quotes attributed less surely than X (0-1, default 0.6) use the dialogue voice",
    )
    parser.add_argument(
        "--from",
        dest="source",
        metavar="BOOK_OR_FILE",
        help="import the cast of another book (its EPUB) or a cast YAML file",
    )
    parser.add_argument("--export", type=Path, metavar="FILE", help="also write the cast to FILE")
    parser.add_argument("--all", action="store_true", help="list speakers with a single quote too")
    parser.add_argument(
        "--merge",
        action="append",
        default=[],
        metavar="NAME[,NAME]=CHARACTER",
        help="these names are one character, e.g. --merge 'Lizzy,Eliza=Elizabeth' (repeatable)",
    )
    parser.add_argument(
        "--split",
        action="append",
        default=[],
        metavar="NAME",
        help="a name that was merged is a character of its own again",
    )
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="NAME=NEW",
        help="show and map a character under another name, e.g. --rename 'Narrator=Watson'",
    )
    parser.add_argument(
        "--hide",
        action="append",
        default=[],
        metavar="NAME",
        help="not a character (its quotes go to the dialogue voice)",
    )
    parser.add_argument("--unhide", action="append", default=[], metavar="NAME", help="undo --hide")
    parser.add_argument(
        "--auto",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let the app pick a voice for every main character (for the model convert uses; "
        "your --set choices win)",
    )
    parser.add_argument(
        "--llm",
        action="store_true",
        help="label the quotes the rules are unsure of with the LLM set in Settings, and save the labels",
    )
    parser.set_defaults(handler=_cast)


def parse_voice_spec(text: str) -> VoiceSpec:
    """``ryan`` / ``clone:CLIP`` / ``instructions:TEXT`` as a :class:`VoiceSpec`."""
    value = text.strip()
    kind, sep, rest = value.partition(":")
    if sep and kind.strip().lower() == "clone":
        return VoiceSpec(clone=rest.strip())
    if sep and kind.strip().lower() in ("instructions", "design"):
        return VoiceSpec(instructions=rest.strip())
    if not value:
        raise CastError("A voice is empty; write a name (ryan), clone:CLIP or instructions:TEXT.")
    return VoiceSpec(name=value)


def _edited(cast: CastFile, args: argparse.Namespace, paths: DataPaths) -> CastFile:
    if args.source:
        cast = cast.merged(_other_cast(args.source, paths))
    for item in args.set:
        name, sep, voice = item.partition("=")
        if not sep or not name.strip():
            raise CastError(f"--set '{item}': write NAME=VOICE, e.g. --set 'Ahab=ryan'.")
        cast = cast.with_character(name.strip(), parse_voice_spec(voice))
    for name in args.unset:
        cast = cast.with_character(name.strip(), None)
    cast = _character_edits(cast, args)
    changes: dict[str, object] = {}
    if args.narrator:
        changes["narrator"] = parse_voice_spec(args.narrator)
    if args.dialogue:
        changes["dialogue"] = parse_voice_spec(args.dialogue)
    if args.auto is not None:
        changes["auto"] = args.auto
        changes["enabled"] = True if args.auto else cast.enabled
    if args.min_confidence is not None:
        if not 0.0 <= args.min_confidence <= 1.0:
            raise CastError("--min-confidence takes a number from 0 to 1.")
        changes["min_confidence"] = args.min_confidence
    return replace(cast, **changes) if changes else cast


def _pair(item: str, flag: str, example: str) -> tuple[str, str]:
    left, sep, right = item.partition("=")
    if not sep or not left.strip() or not right.strip():
        raise CastError(f"{flag} '{item}': write {example}.")
    return left.strip(), right.strip()


def _character_edits(cast: CastFile, args: argparse.Namespace) -> CastFile:
    """The --merge/--split/--rename/--hide/--unhide flags applied to the cast's edits (and voices)."""
    for item in args.merge:
        names, into = _pair(item, "--merge", "NAME[,NAME]=CHARACTER, e.g. --merge 'Lizzy=Elizabeth'")
        cast = edit_characters(cast, merge=([n.strip() for n in names.split(",") if n.strip()], into))
    for name in args.split:
        cast = edit_characters(cast, split=name.strip())
    for item in args.rename:
        cast = edit_characters(
            cast, rename=_pair(item, "--rename", "NAME=NEW, e.g. --rename 'Narrator=Watson'")
        )
    for name in args.hide:
        cast = edit_characters(cast, hide=name.strip())
    for name in args.unhide:
        cast = edit_characters(cast, unhide=name.strip())
    return cast


def _other_cast(source: str, paths: DataPaths) -> CastFile:
    path = Path(source).expanduser()
    if not path.is_file():
        raise CastError(f"No file at {path}: give another book's file or a cast YAML file.")
    if path.suffix.lower() in BOOK_SUFFIXES:
        other = saved_cast_path(paths, load_book(path))
        if not other.is_file():
            raise CastError(
                f"{path.name} has no saved cast yet. Map it first: python -m omni_web cast {path}"
            )
        return load_cast_file(other)
    return load_cast_file(path)


def _listing(book: Book, cast: CastFile, args: argparse.Namespace, path: Path) -> str:
    chapters = select_chapters(book, parse_chapter_spec(args.chapters) if args.chapters else None)
    style = book_quote_style(book, chapters)
    people = find_characters(
        book,
        chapters=chapters,
        min_confidence=cast.min_confidence,
        min_quotes=1 if args.all else 2,
        edits=cast.edits,
    )
    lines = [
        f"{book.metadata.title or book.source_path.stem}: quote style {style.name}, "
        f"{len(people)} speakers (quotes attributed with confidence >= {cast.min_confidence:g})",
        f"cast file: {path}" + ("" if path.is_file() else " (not saved yet)"),
        f"narrator: {cast.narrator.label if cast.narrator else '(the --voice of convert)'}",
        "dialogue: "
        f"{cast.dialogue.label if cast.dialogue else '(the narrator, unless convert --dialogue-voice)'}",
        "",
        f"{'character':<24} {'quotes':>6}  {'who':<14} {'voice':<20} sample line",
    ]
    listed = set()
    for person in people:
        mapped = cast.characters.get(person.name)
        listed.add(person.name.casefold())
        voice = mapped.label if mapped else "-"
        sample = textwrap.shorten(person.sample, width=70, placeholder="…")
        lines.append(f"{person.name:<24} {person.quotes:>6}  {_who(person):<14} {voice:<20} “{sample}”")
        if person.aliases:
            lines.append(f"{'':<24} {'':>6}  also: {', '.join(person.aliases)}")
        if person.maybe:
            lines.append(
                f"{'':<24} {'':>6}  maybe the same person as: {' or '.join(person.maybe)} "
                f"(--merge '{person.name}={person.maybe[0]}')"
            )
    for name, spec in cast.characters.items():
        if name.casefold() not in listed:
            lines.append(
                f"{name:<24} {0:>6}  {'':<14} {spec.label:<20} (mapped, not found in these chapters)"
            )
    if cast.edits.hidden:
        lines.append(f"hidden (not characters): {', '.join(cast.edits.hidden)}")
    return "\n".join(lines)


def _who(person: Character) -> str:
    """ "narrator", or the gender and age guesses ("female, adult"); "?" where unknown."""
    if person.narrator:
        return "narrator"
    parts = [v.value for v in (person.gender, person.age) if v.value != "unknown"]
    return ", ".join(parts) or "?"


def _cast(args: argparse.Namespace) -> int:
    paths = data_root_from_env().ensure()
    book_path = args.book.expanduser().resolve()
    if not book_path.is_file():
        raise BookNotFound(book_path)
    book = load_book(book_path, options=load_settings(paths).read_options(paths))
    path = saved_cast_path(paths, book)
    saved = load_cast_file(path)
    cast = _edited(saved, args, paths)
    if cast != saved or (args.source and not path.is_file()):
        if not cast.book:
            cast = replace(cast, book=book.metadata.title or book_path.stem)
        cast.save(path)
        print(f"Saved the cast of {cast.book} to {path}")
    if args.export:
        cast.save(args.export.expanduser())
        print(f"Exported the cast to {args.export}")
    if args.llm:
        run = run_llm_pass(paths, book, load_settings(paths))
        print(
            f"LLM labels: {len(run.labels.labels)} saved ({run.usage.summary}); "
            f"{run.fell_back} of {run.windows} windows kept the rules' labels"
        )
        if run.joined:
            print(joined_summary(run, "undo one with --split NAME"))
            cast = load_cast_file(path)
        print(f"Quotes still below the floor (to review): {len(review_list(paths, book, limit=100_000))}")
    print(_listing(book, cast, args, path))
    return 0
