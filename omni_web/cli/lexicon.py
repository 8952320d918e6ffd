"""``python -m omni_web lexicon list|add|remove|import|export|candidates [--book BOOK.epub]``.

The pronunciation lexicon from the command line: the global lexicon, or a book's with ``--book``
(its entries win over the global ones). ``add`` and ``remove`` with ``--book`` say how many of
the book's chunks the edit changes, i.e. how many the next render redoes. ``candidates`` lists
words a model may misread, with counts and the first sentence each appears in.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from omni_web.book import Book, load_book
from omni_web.catalog import get_entry, keys
from omni_web.paths import data_root_from_env
from omni_web.settings import load_settings
from omni_web.text import (
    BookIdentity,
    CaseRule,
    Lexicon,
    LexiconEntry,
    LexiconStore,
    Pronouncer,
    book_identity,
    edit_impact,
    find_candidates,
)

__all__ = ["register"]

_DEFAULT_MODEL = "qwen3_tts_0_6b_customvoice"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``lexicon`` command and its subcommands."""
    parser = subparsers.add_parser(
        "lexicon",
        help="the pronunciation lexicon: how names and symbols are said",
        description="Manage pronunciation entries (written form -> spoken form), globally or for one "
        "book (--book), and find the words a model may misread.",
    )
    actions = parser.add_subparsers(dest="lexicon_action", metavar="ACTION")

    def add_book(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--book", type=Path, metavar="BOOK", help="the book's own lexicon (wins over the global one)"
        )

    listing = actions.add_parser("list", help="list the entries")
    add_book(listing)
    listing.set_defaults(handler=_list)

    adding = actions.add_parser("add", help="add or replace an entry")
    adding.add_argument("written", help="the word as the book writes it, e.g. Hermione")
    adding.add_argument("spoken", help="what to send instead, e.g. her-MY-oh-nee")
    adding.add_argument(
        "--regex", action="store_true", help="WRITTEN is a regular expression (SPOKEN may use \\1)"
    )
    adding.add_argument(
        "--case",
        choices=[c.value for c in CaseRule],
        default="auto",
        help="auto (default): a capitalised entry matches that spelling and ALL CAPS, a "
        "lower-case one any case; exact; ignore",
    )
    adding.add_argument("--inside-words", action="store_true", help="also match inside longer words")
    adding.add_argument("--note", default="", help="a note for yourself")
    _impact_options(adding)
    add_book(adding)
    adding.set_defaults(handler=_add)

    removing = actions.add_parser("remove", help="remove an entry")
    removing.add_argument("written", help="the entry's written form")
    _impact_options(removing)
    add_book(removing)
    removing.set_defaults(handler=_remove)

    importing = actions.add_parser("import", help="merge entries from a YAML file")
    importing.add_argument(
        "file", type=Path, help="YAML: entries: [{written, spoken, ...}] or written: spoken"
    )
    add_book(importing)
    importing.set_defaults(handler=_import)

    exporting = actions.add_parser("export", help="write the entries to a YAML file")
    exporting.add_argument("file", type=Path, help="where to write")
    add_book(exporting)
    exporting.set_defaults(handler=_export)

    candidates = actions.add_parser("candidates", help="words in a book a model may misread")
    candidates.add_argument("book", type=Path, metavar="BOOK")
    candidates.add_argument(
        "--limit", type=int, default=60, help="show at most this many (default 60; 0 = all)"
    )
    candidates.add_argument("--language", metavar="LANG", help="the book's language if its metadata is wrong")
    candidates.set_defaults(handler=_candidates)
    parser.set_defaults(handler=lambda _args: parser.print_help() or 2)


def _impact_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--count-in",
        type=Path,
        metavar="BOOK",
        help="say how many of this book's chunks a global edit changes (--book does it for its own)",
    )
    parser.add_argument(
        "--model",
        choices=keys(),
        default=_DEFAULT_MODEL,
        metavar="MODEL",
        help="count chunks as this model's jobs cut them",
    )
    parser.add_argument("--language", metavar="LANG", help="the language the job will use")


def _store() -> LexiconStore:
    return LexiconStore(data_root_from_env())


def _identity(book_path: Path | None) -> BookIdentity | None:
    return book_identity(load_book(book_path)) if book_path is not None else None


def _where(identity: BookIdentity | None) -> str:
    return f"the lexicon of '{identity.title}'" if identity is not None else "the global lexicon"


def _format(entry: LexiconEntry) -> str:
    flags = [f for f, on in (("regex", entry.regex), ("inside words", not entry.whole_word)) if on]
    if entry.case is not CaseRule.AUTO:
        flags.append(f"case {entry.case.value}")
    tail = f"  [{', '.join(flags)}]" if flags else ""
    note = f"  # {entry.note}" if entry.note else ""
    return f"{entry.written} -> {entry.spoken}{tail}{note}"


def _list(args: argparse.Namespace) -> int:
    store = _store()
    identity = _identity(args.book)
    global_lexicon = store.load(None)
    book_lexicon = store.load(identity) if identity is not None else Lexicon()
    book_keys = {e.key for e in book_lexicon.entries}
    if identity is not None:
        print(f"{_where(identity)} ({len(book_lexicon)} entries, {store.book_path(identity)}):")
        for entry in book_lexicon.entries:
            print(f"  {_format(entry)}")
        print()
    print(f"the global lexicon ({len(global_lexicon)} entries, {store.global_path}):")
    for entry in global_lexicon.entries:
        shadow = "  (the book's entry wins)" if entry.key in book_keys else ""
        print(f"  {_format(entry)}{shadow}")
    return 0


def _counted_book(args: argparse.Namespace) -> tuple[Book | None, BookIdentity | None]:
    """The book whose chunks an edit is counted in: --book, else --count-in; None for neither."""
    path = args.book or args.count_in
    if path is None:
        return None, None
    book = load_book(path)
    return book, book_identity(book)


def _report_impact(
    args: argparse.Namespace, book: Book | None, before: Pronouncer, after: Pronouncer
) -> None:
    if book is None:
        return
    settings = load_settings(data_root_from_env())
    impact = edit_impact(
        book,
        before=before,
        after=after,
        entry=get_entry(args.model),
        settings=settings,
        language=args.language,
    )
    print(impact.summary)
    for example in impact.examples:
        print(f"  chapter {example.chapter_number}, chunk {example.chunk_number}: {example.text[:160]}")


def _add(args: argparse.Namespace) -> int:
    store = _store()
    identity = _identity(args.book)
    counted, counted_identity = _counted_book(args)
    entry = LexiconEntry(
        args.written,
        args.spoken,
        regex=args.regex,
        whole_word=not args.inside_words,
        case=CaseRule(args.case),
        note=args.note,
    ).validated()
    before = store.pronouncer(counted_identity)
    lexicon = store.load(identity)
    old = lexicon.find(entry.written)
    replaced = old is not None and old.key == entry.key
    path = store.save(lexicon.with_entry(entry), identity)
    print(f"{'Replaced' if replaced else 'Added'} {_format(entry)} in {_where(identity)} ({path}).")
    _report_impact(args, counted, before, store.pronouncer(counted_identity))
    return 0


def _remove(args: argparse.Namespace) -> int:
    store = _store()
    identity = _identity(args.book)
    counted, counted_identity = _counted_book(args)
    before = store.pronouncer(counted_identity)
    lexicon = store.load(identity)
    store.save(lexicon.without(args.written), identity)
    print(f"Removed '{args.written}' from {_where(identity)}.")
    _report_impact(args, counted, before, store.pronouncer(counted_identity))
    return 0


def _import(args: argparse.Namespace) -> int:
    identity = _identity(args.book)
    added, replaced = _store().import_file(args.file, identity)
    print(f"Imported {added + replaced} entries into {_where(identity)}: {added} new, {replaced} replaced.")
    return 0


def _export(args: argparse.Namespace) -> int:
    identity = _identity(args.book)
    count = _store().export_file(args.file, identity)
    print(f"Wrote {count} entries of {_where(identity)} to {args.file}.")
    return 0


def _candidates(args: argparse.Namespace) -> int:
    book = load_book(args.book)
    pronouncer = _store().pronouncer(book_identity(book))
    found = find_candidates(book, language=args.language, pronouncer=pronouncer, limit=args.limit or None)
    if not found:
        print("No candidate words: nothing looks hard to read.")
        return 0
    width = min(24, max(len(c.word) for c in found))
    print(f"{'word':{width}}  {'count':>5}  {'why':16}  {'ch':>3}  first sentence")
    for c in found:
        mark = "*" if c.in_lexicon else " "
        print(f"{c.word:{width}}{mark} {c.count:>5}  {c.kinds_str:16}  {c.chapter_number:>3}  {c.sentence}")
    if any(c.in_lexicon for c in found):
        print("\n* already in the lexicon")
    print(f"\nFix one with: python -m omni_web lexicon add WORD RESPELLING --book {args.book}")
    return 0
