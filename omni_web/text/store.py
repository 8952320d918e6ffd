"""Lexicons on disk: plain YAML under ``<data root>/lexicon/``, one global file and one per book.

A book's file is named by the book's identity (its ``dc:identifier``, else title, authors and
language), not by the uploaded file, so entries survive a re-upload or a fixed edition of the
same book. Files are written atomically; a file the user broke is reported, never overwritten.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from omni_web.book import Book
from omni_web.errors import LexiconError
from omni_web.files import write_atomic
from omni_web.paths import DataPaths
from omni_web.text.lexicon import Lexicon, LexiconEntry, Pronouncer

__all__ = [
    "BookIdentity",
    "LexiconStore",
    "book_identity",
    "lexicon_dir",
    "read_lexicon_file",
    "write_lexicon_file",
]

_HEADER = (
    "# omni-web pronunciation lexicon: what the book writes -> what the narrator is sent.\n"
    "# Options per entry: regex (false), whole_word (true), case (auto | exact | ignore), note.\n"
)


def lexicon_dir(paths: DataPaths) -> Path:
    """Where lexicons live: ``<data root>/lexicon``."""
    return paths.root / "lexicon"


@dataclass(frozen=True, slots=True)
class BookIdentity:
    """What names a book's lexicon: a stable key plus what a person reads in the file."""

    key: str  # 16 hex characters
    title: str
    identifier: str


def book_identity(book: Book) -> BookIdentity:
    """The identity of a book: its ``dc:identifier`` if it has one, else title, authors and language."""
    meta = book.metadata
    identifier = meta.identifier.strip()
    basis = (
        f"id:{identifier.lower()}"
        if identifier
        else (
            f"title:{meta.title.strip().casefold()}|{'|'.join(a.casefold() for a in meta.authors)}|{meta.language.lower()}"
        )
    )
    key = hashlib.sha256(basis.encode("utf-8")).hexdigest()[:16]
    return BookIdentity(key=key, title=meta.title or Path(book.source_path).stem, identifier=identifier)


def read_lexicon_file(path: Path) -> Lexicon:
    """Entries from a YAML file: ``entries: [{written, spoken, ...}]``, a plain list of such items,
    or a plain mapping ``written: spoken``. Raises LexiconError naming the file and the problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LexiconError(f"No lexicon file at {path}.") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise LexiconError(
            f"{path} is not a readable YAML lexicon ({exc}). Fix the file, or move it away."
        ) from None
    try:
        return Lexicon().merged(_entries(data))[0]
    except LexiconError as exc:
        raise LexiconError(f"{path}: {exc}") from None


def _entries(data: Any) -> list[LexiconEntry]:
    if data is None:
        return []
    if isinstance(data, dict) and "entries" in data:
        data = data["entries"] or []
    if isinstance(data, dict):
        return [LexiconEntry(str(k), "" if v is None else str(v)).validated() for k, v in data.items()]
    if isinstance(data, list):
        return [LexiconEntry.from_dict(item) for item in data]
    raise LexiconError("a lexicon file holds 'entries:' with a list of {written, spoken} items.")


def write_lexicon_file(path: Path, lexicon: Lexicon, *, book: BookIdentity | None = None) -> None:
    """Write ``lexicon`` as YAML atomically (temp file + rename)."""
    document: dict[str, Any] = {"version": 1}
    if book is not None:
        document["book"] = {"title": book.title, "identifier": book.identifier, "key": book.key}
    document["entries"] = [entry.to_dict() for entry in lexicon.entries]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, _HEADER + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))


class LexiconStore:
    """Reads and writes the global lexicon and the per-book ones in a data root."""

    def __init__(self, paths: DataPaths) -> None:
        self.root = lexicon_dir(paths)

    @property
    def global_path(self) -> Path:
        """The global lexicon file."""
        return self.root / "global.yaml"

    def book_path(self, book: BookIdentity) -> Path:
        """A book's lexicon file."""
        return self.root / "books" / f"{book.key}.yaml"

    def path_for(self, book: BookIdentity | None) -> Path:
        """The book's file, or the global one for None."""
        return self.global_path if book is None else self.book_path(book)

    def load(self, book: BookIdentity | None = None) -> Lexicon:
        """The global lexicon (``book`` None) or a book's; empty when there is no file yet."""
        path = self.path_for(book)
        return read_lexicon_file(path) if path.is_file() else Lexicon()

    def save(self, lexicon: Lexicon, book: BookIdentity | None = None) -> Path:
        """Write the global lexicon or a book's; returns the file written."""
        path = self.path_for(book)
        write_lexicon_file(path, lexicon, book=book)
        return path

    def pronouncer(self, book: BookIdentity | None) -> Pronouncer:
        """The global entries plus the book's, the book's winning."""
        return Pronouncer(self.load(None), self.load(book) if book is not None else Lexicon())

    def import_file(self, source: Path, book: BookIdentity | None = None) -> tuple[int, int]:
        """Merge a file's entries into a lexicon: (added, replaced)."""
        imported = read_lexicon_file(source)
        lexicon, added, replaced = self.load(book).merged(imported.entries)
        self.save(lexicon, book)
        return added, replaced

    def export_file(self, target: Path, book: BookIdentity | None = None) -> int:
        """Write a lexicon to ``target``; returns the number of entries."""
        lexicon = self.load(book)
        write_lexicon_file(target, lexicon, book=book)
        return len(lexicon)
