"""OpenDocument text (.odt) to a Book with odfpy: chapters from headings, notes and comments not read.

The archive passes the EPUB's ZIP rules first, entity declarations included (odfpy's SAX parser
would expand them). ``<text:h>`` elements carry their outline level; chapters start at the
shallowest level used at least twice (as for DOCX, :func:`omni_web.book.docx.split_by_level`).
Footnotes and endnotes (``<text:note>``), comments (``<office:annotation>``), tracked deletions
and tables of contents are skipped; a picture before any text is the cover.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import Any

from omni_web.book.docx import split_by_level
from omni_web.book.model import Book, BookMetadata, CoverImage
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions, note_paragraph, table_lines
from omni_web.book.parts import book_from_parts
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, office_archive
from omni_web.book.txt import language_code

__all__ = ["load_odt"]

_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_OFFICE_NS = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_DRAW_NS = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_SKIP = {
    (_TEXT_NS, "note"),
    (_OFFICE_NS, "annotation"),
    (_OFFICE_NS, "annotation-end"),
    (_TEXT_NS, "tracked-changes"),
    (_TEXT_NS, "table-of-content"),
    (_TEXT_NS, "alphabetical-index"),
    (_TEXT_NS, "bibliography"),
    (_TEXT_NS, "illustration-index"),
    (_TEXT_NS, "sequence-decls"),
}
_SKIP_IN_TEXT = {(_DRAW_NS, "frame")}  # a picture's caption box inside a paragraph is not the sentence
_MEDIA = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif"}


def load_odt(
    path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS
) -> Book:
    """Read an OpenDocument text.

    Raises:
        UnsafeBook, DrmProtected: the archive breaks the size/ratio/entity rules or is encrypted.
        NotAnEpub: not a readable ODT.
        EmptyBook: nothing to read aloud.
    """
    from odf.opendocument import load

    # odfpy raises AttributeError on some malformed content.xml files.
    with office_archive(
        path, kind="OpenDocument text", app="LibreOffice", limits=limits, unreadable=(AttributeError,)
    ) as archive:
        document = load(str(path))
        items: list[tuple[int | None, str]] = []
        # odfpy's ``document.text`` is the body's first child, a whitespace node in an indented file.
        text = next(
            (c for c in document.body.childNodes if getattr(c, "qname", None) == (_OFFICE_NS, "text")),
            document.text,
        )
        cover_href = _walk(text, items, [], options)
        cover = _cover(archive, cover_href)
    return book_from_parts(
        split_by_level(items), path=path, metadata=_metadata(document, path), cover=cover, source_format="odt"
    )


def _walk(node: Any, items: list[tuple[int | None, str]], covers: list[str], options: ReadOptions) -> str:
    """Headings and paragraphs in order into ``items``; returns a picture seen before any text."""
    notes = options.notes_at_paragraph_end
    for child in node.childNodes:
        qname = getattr(child, "qname", None)
        if qname is None or qname in _SKIP:
            continue
        if qname == (_TABLE_NS, "table"):
            items.extend((None, line) for line in table_lines(_rows(child), mode=options.tables))
            continue
        if qname == (_DRAW_NS, "image") and not items and not covers:
            covers.append(child.getAttrNS(_XLINK_NS, "href") or "")
        if qname in ((_TEXT_NS, "h"), (_TEXT_NS, "p")):
            text = " ".join(_text(child).split())
            if text:
                level = None
                if qname[1] == "h":
                    raw = child.getAttrNS(_TEXT_NS, "outline-level") or "1"
                    level = int(raw) if raw.isdigit() else 1
                items.append((level, text))
                if notes and level is None:
                    items.extend((None, note_paragraph(note)) for note in _notes(child))
            elif not items:
                _walk(child, items, covers, options)  # a picture anchored in an empty paragraph
            continue
        _walk(child, items, covers, options)
    return covers[0] if covers else ""


def _rows(table: Any) -> list[list[str]]:
    """A table's rows (header rows included) as lists of cell texts."""
    rows = []
    for child in table.childNodes:
        qname = getattr(child, "qname", None)
        if qname == (_TABLE_NS, "table-row"):
            rows.append(
                [
                    " ".join(_text(cell).split())
                    for cell in child.childNodes
                    if getattr(cell, "qname", None) == (_TABLE_NS, "table-cell")
                ]
            )
        elif qname in (
            (_TABLE_NS, "table-header-rows"),
            (_TABLE_NS, "table-rows"),
            (_TABLE_NS, "table-row-group"),
        ):
            rows.extend(_rows(child))
    return rows


def _notes(node: Any) -> list[str]:
    """The texts of the footnotes and endnotes (``<text:note>``) inside a paragraph, in order."""
    found = []
    for child in node.childNodes:
        qname = getattr(child, "qname", None)
        if qname == (_TEXT_NS, "note"):
            body = [c for c in child.childNodes if getattr(c, "qname", None) == (_TEXT_NS, "note-body")]
            text = " ".join(_text(body[0]).split()) if body else ""
            if text:
                found.append(text)
        elif qname is not None and child.nodeType != child.TEXT_NODE:
            found.extend(_notes(child))
    return found


def _text(node: Any) -> str:
    out = []
    for child in node.childNodes:
        if child.nodeType == child.TEXT_NODE:
            out.append(child.data)
            continue
        qname = getattr(child, "qname", None)
        if qname in _SKIP or qname in _SKIP_IN_TEXT or qname is None:
            continue
        if qname == (_TEXT_NS, "s"):
            count = child.getAttrNS(_TEXT_NS, "c") or "1"
            out.append(" " * (int(count) if count.isdigit() else 1))
        elif qname in ((_TEXT_NS, "tab"), (_TEXT_NS, "line-break")):
            out.append(" ")
        else:
            out.append(_text(child))
    return "".join(out)


def _cover(archive: zipfile.ZipFile, href: str) -> CoverImage | None:
    name = posixpath.normpath(href) if href and "://" not in href else ""
    media_type = _MEDIA.get(posixpath.splitext(name)[1].lower(), "")
    if not name or not media_type or name.startswith(".."):
        return None
    try:
        return CoverImage(data=archive.read(name), media_type=media_type)
    except KeyError:
        return None


def _metadata(document: Any, path: Path) -> BookMetadata:
    values: dict[str, str] = {}
    keywords: list[str] = []
    for child in document.meta.childNodes:
        qname = getattr(child, "qname", None)
        if qname is not None and qname[1] == "keyword":
            keywords.append(" ".join(_text(child).split()))
        elif qname is not None and qname[1] not in values:
            values[qname[1]] = " ".join(_text(child).split())
    author = values.get("creator") or values.get("initial-creator") or ""
    return BookMetadata(
        title=values.get("title") or path.stem,
        authors=(author,) if author else (),
        language=language_code(values.get("language", "")),
        description=values.get("description") or values.get("subject", ""),
        date=(values.get("creation-date") or values.get("date") or "")[:10],
        subjects=tuple(k for k in keywords if k),
    )
