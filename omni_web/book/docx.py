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

from omni_web.book.docxbody import body_items, style_map
from omni_web.book.model import Book, BookMetadata, CoverImage
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions, note_paragraph
from omni_web.book.parts import Part, book_from_parts, heading, paragraph
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, office_archive, parse_xml

__all__ = ["load_docx", "split_by_level"]

_PLACEHOLDER_RE = re.compile(r"<%.*%>|\{\{.*\}\}|\$\{.*\}|\[\[.*\]\]|«[^»]*»")
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
    with office_archive(path, kind="Word document", app="Word or LibreOffice", limits=limits,
                        unreadable=(etree.XMLSyntaxError,)) as archive:
        notes = _notes(archive) if options.notes_at_paragraph_end else {}
        root = parse_xml(archive.read(_main_part(archive)))
        styles = style_map(
            parse_xml(archive.read("word/styles.xml")) if "word/styles.xml" in archive.namelist() else None
        )
        core = (
            parse_xml(archive.read("docProps/core.xml"))
            if "docProps/core.xml" in archive.namelist()
            else None
        )
    body = next(
        (e for e in root.iter() if isinstance(e.tag, str) and etree.QName(e).localname == "body"), root
    )
    items: list[tuple[int | None, str]] = []  # (heading level or None, text)
    for item in body_items(body, styles, tables=options.tables):
        items.append((item.level, item.text))
        items += [(None, note_paragraph(notes.pop(ref))) for ref in item.notes if ref in notes]
    fields = _core_fields(core)
    metadata = BookMetadata(
        title=_usable_title(fields.get("title", "")) or _title(items) or path.stem,
        authors=tuple(a.strip() for a in re.split(r";|,", fields.get("creator", "")) if a.strip()),
        language=fields.get("language", ""),
        description=fields.get("subject", "") or fields.get("description", ""),
        date=fields.get("created", "")[:10],
        identifier=fields.get("identifier", ""),
        subjects=tuple(
            k.strip()
            for k in re.split(r"[;,]", f"{fields.get('keywords', '')},{fields.get('category', '')}")
            if k.strip()
        ),
    )
    return book_from_parts(
        split_by_level(items), path=path, metadata=metadata, cover=_cover(path, items), source_format="docx"
    )


def _main_part(archive: zipfile.ZipFile) -> str:
    """The main document's name from the package relationships (``word/document.xml`` nearly always)."""
    try:
        rels = parse_xml(archive.read("_rels/.rels"))
    except (KeyError, etree.XMLSyntaxError):
        return "word/document.xml"
    for rel in rels:
        if (rel.get("Type") or "").endswith("/officeDocument") and rel.get("Target"):
            return rel.get("Target", "").lstrip("/")
    return "word/document.xml"


def _core_fields(core: etree._Element | None) -> dict[str, str]:
    """The core properties (title, creator, language, ...) by local name; "" where absent."""
    if core is None:
        return {}
    return {
        etree.QName(e).localname: " ".join((e.text or "").split()) for e in core if isinstance(e.tag, str)
    }


def _usable_title(title: str) -> str:
    """The title property, unless it is a template's placeholder ("<%AcceptAction::Approve%>", "{{title}}")."""
    return "" if _PLACEHOLDER_RE.search(title) else title


def _cover(path: Path, items: list[tuple[int | None, str]]) -> CoverImage | None:
    """A picture before any text, through python-docx (which a Strict Open XML file does not open)."""
    import docx

    try:
        document = docx.Document(str(path))
    except (ValueError, KeyError, etree.XMLSyntaxError, Exception):  # noqa: BLE001 - the cover is optional
        return None
    for para in document.paragraphs:
        if " ".join(para.text.split()):
            return None
        picture = _picture(para, document)
        if picture is not None:
            return picture
    return None


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
