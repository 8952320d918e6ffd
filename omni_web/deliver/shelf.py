"""The finished books of the output folder, and their OPDS 1.2 acquisition feed (Atom).

A book is a folder of the library layout holding ``metadata.json`` (written with the book, see
omni_web/deliver/folder.py): its metadata is read from there, its files (m4b, read-along EPUB,
cover) from the folder. Flat-layout books have no such folder; ``outputs migrate`` moves them in.
Pure apart from reading the folder; the routes live in :mod:`omni_web.deliver.opds`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from lxml import etree

from omni_web.deliver.sidecars import METADATA_JSON

__all__ = ["ATOM_TYPE", "ShelfBook", "book_by_id", "opds_feed", "shelf_books"]

log = logging.getLogger(__name__)

ATOM_TYPE = "application/atom+xml;profile=opds-catalog;kind=acquisition"
_ATOM = "http://www.w3.org/2005/Atom"
_DC = "http://purl.org/dc/terms/"
_OPDS = "http://opds-spec.org/2010/catalog"
_MEDIA = {".m4b": "audio/mp4", ".mp3": "audio/mpeg", ".epub": "application/epub+zip", ".jpg": "image/jpeg",
          ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}


@dataclass(frozen=True, slots=True)
class ShelfBook:
    """One finished book (one narrator version) with the files a reader can fetch."""

    id: str
    folder: Path
    metadata: dict
    audio: Path | None
    readalong: Path | None
    cover: Path | None
    updated: float

    @property
    def title(self) -> str:
        """The book's title, or its folder's name."""
        return str(self.metadata.get("title") or self.folder.name)

    def file(self, name: str) -> Path | None:
        """The book's file called ``name``, only if it is one of its own (never another path)."""
        for path in (self.audio, self.readalong, self.cover):
            if path is not None and path.name == name:
                return path
        return None


def _book(folder: Path, root: Path) -> ShelfBook | None:
    try:
        metadata = json.loads((folder / METADATA_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("Not on the shelf: %s (%s)", folder, exc)
        return None
    audio = next(iter(sorted(folder.glob("*.m4b"))), None) or next(iter(sorted(folder.glob("*.mp3"))), None)
    if audio is None or not isinstance(metadata, dict):
        return None
    readalong = next(iter(sorted(folder.glob("*.readalong.epub"))), None)
    cover = next((p for p in sorted(folder.glob("cover.*")) if p.suffix.lower() in _MEDIA), None)
    rel = folder.relative_to(root).as_posix()
    return ShelfBook(id=hashlib.sha256(rel.encode()).hexdigest()[:16], folder=folder, metadata=metadata,
                     audio=audio, readalong=readalong, cover=cover, updated=audio.stat().st_mtime)


def shelf_books(root: Path) -> list[ShelfBook]:
    """Every finished book under ``root`` (library layout), newest first; the mp3/acx trees are skipped."""
    root = Path(root)
    books = []
    for sidecar in root.rglob(METADATA_JSON):
        rel = sidecar.relative_to(root).parts
        if rel[0] in (".parts", "mp3", "acx") or any(part.startswith(".") for part in rel):
            continue
        book = _book(sidecar.parent, root)
        if book is not None:
            books.append(book)
    return sorted(books, key=lambda b: (-b.updated, b.title))


def book_by_id(root: Path, book_id: str) -> ShelfBook | None:
    """The shelf's book with this id, if any."""
    return next((b for b in shelf_books(root) if b.id == book_id), None)


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def _content_line(title: str, meta: dict) -> str:
    """'Title by Author, read by Voice (Model).' from the book's metadata.json."""
    line = f"{title} by {', '.join(map(str, meta.get('authors') or ['Unknown Author']))}"
    if meta.get("narrators"):
        line += f", read by {', '.join(map(str, meta['narrators']))}"
    return line + "."


def _entry(feed: etree._Element, book: ShelfBook, base: str) -> None:
    meta = book.metadata
    entry = _sub(feed, f"{{{_ATOM}}}entry")
    _sub(entry, f"{{{_ATOM}}}title", book.title)
    _sub(entry, f"{{{_ATOM}}}id", f"urn:omni-web:book:{book.id}")
    _sub(entry, f"{{{_ATOM}}}updated", _stamp(book.updated))
    for name in meta.get("authors") or ["Unknown Author"]:
        _sub(_sub(entry, f"{{{_ATOM}}}author"), f"{{{_ATOM}}}name", str(name))
    for name in meta.get("narrators") or []:
        _sub(_sub(entry, f"{{{_ATOM}}}contributor"), f"{{{_ATOM}}}name", str(name))
    for tag, key in (("language", "language"), ("publisher", "publisher"), ("issued", "publishedDate")):
        if meta.get(key):
            _sub(entry, f"{{{_DC}}}{tag}", str(meta[key]))
    if meta.get("isbn"):
        _sub(entry, f"{{{_DC}}}identifier", f"urn:isbn:{meta['isbn']}")
    for genre in meta.get("genres") or []:
        _sub(entry, f"{{{_ATOM}}}category", term=str(genre), label=str(genre))
    for series in meta.get("series") or []:
        _sub(entry, f"{{{_ATOM}}}category", term=str(series), label=f"Series: {series}",
             scheme="urn:omni-web:series")
    if meta.get("description"):
        _sub(entry, f"{{{_ATOM}}}summary", str(meta["description"]), type="text")
    # RFC 4287 4.1.1: an entry with no alternate link must have content (a Schematron rule of
    # atom.rnc that RELAX NG validation does not check); a line a reader's list can show.
    _sub(entry, f"{{{_ATOM}}}content", _content_line(book.title, meta), type="text")
    href = f"{base}/books/{book.id}"
    if book.cover is not None:
        kind = _MEDIA[book.cover.suffix.lower()]
        for rel in ("http://opds-spec.org/image", "http://opds-spec.org/image/thumbnail"):
            _sub(entry, f"{{{_ATOM}}}link", rel=rel, type=kind, href=f"{href}/{quote(book.cover.name)}")
    for path, title in ((book.audio, "Audiobook"), (book.readalong, "Read-along EPUB")):
        if path is not None:
            _sub(entry, f"{{{_ATOM}}}link", rel="http://opds-spec.org/acquisition", title=title,
                 type=_MEDIA.get(path.suffix.lower(), "application/octet-stream"),
                 href=f"{href}/{quote(path.name)}")


def opds_feed(books: list[ShelfBook], *, base: str) -> bytes:
    """The OPDS 1.2 acquisition feed (the catalog root) for ``books``; ``base`` is the feed's URL path."""
    feed = etree.Element(f"{{{_ATOM}}}feed", nsmap={None: _ATOM, "dc": _DC, "opds": _OPDS})
    _sub(feed, f"{{{_ATOM}}}id", "urn:omni-web:shelf")
    _sub(feed, f"{{{_ATOM}}}title", "omni-web: finished books")
    _sub(feed, f"{{{_ATOM}}}updated", _stamp(max((b.updated for b in books), default=0.0)))
    _sub(_sub(feed, f"{{{_ATOM}}}author"), f"{{{_ATOM}}}name", "omni-web")
    for rel in ("self", "start"):
        _sub(feed, f"{{{_ATOM}}}link", rel=rel, href=base, type=ATOM_TYPE)
    for book in books:
        _entry(feed, book, base)
    return etree.tostring(feed, xml_declaration=True, encoding="utf-8", pretty_print=True)
