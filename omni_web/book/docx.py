"""Word (.docx) to a Book with python-docx: chapters from Heading styles, footnotes and comments not read.

The archive passes the EPUB's ZIP rules first (:func:`omni_web.book.safety.check_office_zip`).
Body paragraphs are read in order; footnotes, endnotes, comments, headers and footers live in
other parts of the package and are never read (footnotes and endnotes are, after the paragraph
that references them, when the footnote setting asks), and a reference mark has no text. A
paragraph styled "Title" or "Heading N" (or with an outline level) is a heading; chapters start
at the shallowest heading level used at least twice. A picture before any text is the cover.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree

from omni_web.book.model import Book, BookMetadata, CoverImage
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions, note_paragraph
from omni_web.book.parts import Part, book_from_parts, heading, paragraph
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, office_archive, parse_xml

__all__ = ["load_docx", "split_by_level"]

_HEADING_RE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"
_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"


def load_docx(path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS,
              options: ReadOptions = DEFAULT_OPTIONS) -> Book:
    """Read a Word document.

    Raises:
        UnsafeBook, DrmProtected: the archive breaks the size/ratio/entity rules or is encrypted.
        NotAnEpub: not a readable DOCX.
        EmptyBook: nothing to read aloud.
    """
    import docx

    with office_archive(path, kind="Word document", app="Word or LibreOffice", limits=limits) as archive:
        notes = _notes(archive) if options.notes_at_paragraph_end else {}
        document = docx.Document(str(path))
    items: list[tuple[int | None, str]] = []  # (heading level or None, text)
    cover = None
    for para in document.paragraphs:
        text = " ".join(para.text.split())
        if not text:
            if cover is None and not items:
                cover = _picture(para, document)
            continue
        items.append((_level(para), text))
        for kind in ("footnote", "endnote"):
            for ref in para._p.iter(f"{_W}{kind}Reference"):
                if (kind, ref.get(f"{_W}id")) in notes:
                    items.append((None, note_paragraph(notes.pop((kind, ref.get(f"{_W}id"))))))
    props = document.core_properties
    metadata = BookMetadata(
        title=(props.title or "").strip() or _title(items) or path.stem,
        authors=tuple(a.strip() for a in re.split(r";|,", props.author or "") if a.strip()),
        language=(props.language or "").strip(),
        description=(props.subject or props.comments or "").strip(),
        date=props.created.date().isoformat() if props.created else "",
        identifier=(props.identifier or "").strip(),
        subjects=tuple(k.strip() for k in re.split(r"[;,]", f"{props.keywords or ''},{props.category or ''}")
                       if k.strip()),
    )
    return book_from_parts(split_by_level(items), path=path, metadata=metadata, cover=cover, source_format="docx")


def _notes(archive: zipfile.ZipFile) -> dict[tuple[str, str], str]:
    """(kind, id) -> text of the package's footnotes and endnotes (separators left out)."""
    notes = {}
    for kind in ("footnote", "endnote"):
        try:
            root = parse_xml(archive.read(f"word/{kind}s.xml"))
        except (KeyError, etree.XMLSyntaxError):
            continue
        for note in root.iter(f"{_W}{kind}"):
            if note.get(f"{_W}type") in (None, "normal"):
                text = " ".join("".join(t.text or "" for t in note.iter(f"{_W}t")).split())
                if text:
                    notes[(kind, note.get(f"{_W}id") or "")] = text
    return notes


def _level(para: Any) -> int | None:
    style = para.style
    while style is not None:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_RE.match(name)
        if match:
            return int(match.group(1))
        style = style.base_style
    outline = para._p.find(f"{_W}pPr/{_W}outlineLvl")
    if outline is not None and (outline.get(f"{_W}val") or "").isdigit() and int(outline.get(f"{_W}val")) < 9:
        return int(outline.get(f"{_W}val")) + 1
    return None


def _title(items: list[tuple[int | None, str]]) -> str:
    return next((text for level, text in items if level == 0), "")


def _picture(para: Any, document: Any) -> CoverImage | None:
    for blip in para._p.iter(_BLIP):
        part = document.part.related_parts.get(blip.get(_EMBED, ""))
        if part is not None and getattr(part, "content_type", "").startswith("image/"):
            return CoverImage(data=part.blob, media_type=part.content_type)
    return None


def split_by_level(items: list[tuple[int | None, str]]) -> list[Part]:
    """Parts cut at the shallowest heading level (1-9) used at least twice; ``level 0`` is the title."""
    counts: dict[int, int] = {}
    for level, _ in items:
        if level:
            counts[level] = counts.get(level, 0) + 1
    chapter_level = min((lv for lv, n in counts.items() if n >= 2), default=min(counts, default=None))
    parts: list[Part] = []
    title, blocks = "", []
    for level, text in items:
        if level is not None and chapter_level is not None and 0 < level <= chapter_level:
            if title or blocks:
                parts.append(Part(title=title, blocks=tuple(blocks)))
            title, blocks = text, [heading(text)]
        else:
            blocks.append(heading(text) if level is not None else paragraph(text))
    if title or blocks:
        parts.append(Part(title=title, blocks=tuple(blocks)))
    return parts
