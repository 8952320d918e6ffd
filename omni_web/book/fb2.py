"""FictionBook 2 (.fb2) to a Book: chapters from the body's sections, metadata and cover from the description.

FB2 is one XML file: ``<description>`` (title-info: title, authors, language, annotation,
sequence, the cover's image id), ``<body>`` of nested ``<section>``s with ``<title>``s, and
base64 ``<binary>`` pictures. The body is rewritten as XHTML (sections → ``<div>``, titles →
headings, ``<v>`` verse lines → paragraphs, note links dropped) and read like an EPUB page; the
notes body (``<body name="notes">``) is not read. Parsed without entities, DTDs or network.
"""

from __future__ import annotations

import base64
import binascii
import zipfile
from pathlib import Path

from lxml import etree

from omni_web.book.extract import element_text, localname
from omni_web.book.model import Book, BookMetadata, CoverImage, Identifier
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import book_from_parts, parts_from_markup
from omni_web.book.safety import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    check_office_zip,
    has_entity_declaration,
    parse_xml,
    read_limited,
)
from omni_web.book.txt import language_code
from omni_web.errors import NotAnEpub, UnsafeBook

__all__ = ["load_fb2"]

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_XHTML = "http://www.w3.org/1999/xhtml"
_EPUB_NS = "http://www.idpf.org/2007/ops"
_TEXT_TAGS = {"p": "p", "v": "p", "subtitle": "h4", "text-author": "p", "epigraph": "blockquote",
              "cite": "blockquote", "poem": "div", "stanza": "div", "emphasis": "em", "strong": "strong",
              "strikethrough": "s", "sub": "sub", "sup": "sup", "code": "code", "table": "table", "tr": "tr",
              "td": "td", "th": "th"}


def load_fb2(path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS,
             options: ReadOptions = DEFAULT_OPTIONS) -> Book:
    """Read a FictionBook.

    Raises:
        UnsafeBook: over the size limit, or it declares XML entities.
        NotAnEpub: not well-formed FB2 XML.
        EmptyBook: nothing to read aloud.
    """
    data = _fb2_bytes(path, limits)
    if has_entity_declaration(data):
        raise UnsafeBook(f"'{path.name}' declares XML entities, which FictionBooks do not need and which can "
                         "exhaust memory; it was not opened.")
    try:
        root = parse_xml(data, recover=True)
    except etree.XMLSyntaxError as exc:
        raise NotAnEpub(f"'{path.name}' is not a readable FictionBook (its XML is broken: {exc}).") from exc
    bodies = [
        b
        for b in root
        if localname(b) == "body" and (b.get("name") or "").lower() not in ("notes", "comments")
    ]
    html = etree.Element(f"{{{_XHTML}}}html")
    body = etree.SubElement(html, f"{{{_XHTML}}}body")
    split_ids: list[str] = []
    for fb_body in bodies:
        sections = [s for s in fb_body if localname(s) == "section"]
        if len(sections) == 1 and sum(1 for s in sections[0] if localname(s) == "section") >= 2:
            sections = [
                s for s in sections[0] if localname(s) == "section"
            ]  # one wrapper section: its children
        for child in fb_body:
            _convert(
                child, body, depth=1, chapters=set(map(id, sections)), split_ids=split_ids, options=options
            )
    if options.notes_at_paragraph_end:
        _append_notes(root, body)
    xml = etree.tostring(html, encoding="utf-8")
    metadata, cover_id = _metadata(root, path)
    return book_from_parts(
        parts_from_markup(xml, split_ids, options),
        path=path,
        metadata=metadata,
        cover=_cover(root, cover_id),
        source_format="fb2",
    )


def _fb2_bytes(path: Path, limits: ArchiveLimits) -> bytes:
    """The FictionBook's XML: the file itself, or the one member of a .fb2.zip (checked like a DOCX)."""
    with path.open("rb") as handle:
        zipped = handle.read(4) == b"PK\x03\x04"
    if not zipped:
        return read_limited(path, name=path.name, limit=limits.max_text_file_bytes)
    try:
        with zipfile.ZipFile(path) as archive:
            check_office_zip(archive, name=path.name, limits=limits)
            (member,) = archive.infolist()
            if member.file_size > limits.max_text_file_bytes:
                raise UnsafeBook(
                    f"'{path.name}' unpacks to a FictionBook over the "
                    f"{limits.max_text_file_bytes // 2**20} MiB limit; it was not opened."
                )
            return archive.read(member)
    except (zipfile.BadZipFile, ValueError) as exc:
        raise NotAnEpub(
            f"'{path.name}' is a damaged .fb2.zip ({exc}). Use another copy of the book."
        ) from exc


def _convert(
    node: etree._Element,
    parent: etree._Element,
    *,
    depth: int,
    chapters: set[int],
    split_ids: list[str],
    options: ReadOptions,
) -> None:
    tag = localname(node)
    if not tag or tag in ("image", "binary", "description"):
        return
    if tag == "a" and (node.get("type") == "note" or (node.get(_XLINK_HREF) or "").startswith("#")):
        if options.notes_at_paragraph_end:
            # An EPUB note reference: the extractor drops it and reads the note after the paragraph.
            ref = etree.SubElement(
                parent,
                f"{{{_XHTML}}}a",
                {"href": node.get(_XLINK_HREF) or "", f"{{{_EPUB_NS}}}type": "noteref"},
            )
            ref.tail = node.tail
            return
        _tail(node, parent)  # a note reference: never read mid-sentence
        return
    if tag == "section":
        out = etree.SubElement(parent, f"{{{_XHTML}}}div")
        if id(node) in chapters:
            out.set("id", f"ow-section-{len(split_ids) + 1}")
            split_ids.append(out.get("id"))
        for child in node:
            _convert(child, out, depth=depth + 1, chapters=chapters, split_ids=split_ids, options=options)
        return
    if tag == "title":
        out = etree.SubElement(parent, f"{{{_XHTML}}}h{min(depth, 6)}")
        lines = [element_text(p) for p in node if localname(p) == "p" and element_text(p)]
        text = lines[0] if lines else element_text(node)
        for line in lines[1:]:
            text += (" " if text[-1:] in ".:;!?" else ": ") + line
        out.text = text
        return
    out = etree.SubElement(parent, f"{{{_XHTML}}}{_TEXT_TAGS.get(tag, 'span')}")
    out.text = node.text
    for child in node:
        _convert(child, out, depth=depth, chapters=chapters, split_ids=split_ids, options=options)
    out.tail = node.tail


def _append_notes(root: etree._Element, body: etree._Element) -> None:
    """The notes body's sections as EPUB footnotes (asides), for the extractor to read after their paragraphs."""
    for fb_body in root:
        if localname(fb_body) != "body" or (fb_body.get("name") or "").lower() != "notes":
            continue
        for section in fb_body.iter():
            if localname(section) != "section" or not section.get("id"):
                continue
            text = " ".join(element_text(p) for p in section if localname(p) in ("p", "v", "poem", "cite"))
            if text:
                aside = etree.SubElement(
                    body, f"{{{_XHTML}}}aside", {"id": section.get("id"), f"{{{_EPUB_NS}}}type": "footnote"}
                )
                etree.SubElement(aside, f"{{{_XHTML}}}p").text = text


def _tail(node: etree._Element, parent: etree._Element) -> None:
    if not node.tail:
        return
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + node.tail
    else:
        parent.text = (parent.text or "") + node.tail


def _find(root: etree._Element, *names: str) -> etree._Element | None:
    node = root
    for name in names:
        node = next((child for child in node if localname(child) == name), None)
        if node is None:
            return None
    return node


def _text(node: etree._Element | None) -> str:
    return element_text(node) if node is not None else ""


def _metadata(root: etree._Element, path: Path) -> tuple[BookMetadata, str]:
    info = _find(root, "description", "title-info")
    if info is None:
        return BookMetadata(title=path.stem), ""
    authors = []
    for author in (a for a in info if localname(a) == "author"):
        parts = [
            element_text(p) for p in author if localname(p) in ("first-name", "middle-name", "last-name")
        ]
        name = " ".join(p for p in parts if p) or element_text(_find(author, "nickname") or author)
        if name:
            authors.append(name)
    annotation = _find(info, "annotation")
    cover = _find(info, "coverpage", "image")
    isbn = _find(root, "description", "publish-info", "isbn")
    doc_id = _find(root, "description", "document-info", "id")
    date = _find(info, "date")
    publisher = _find(root, "description", "publish-info", "publisher")
    sequence = next((s for s in info if localname(s) == "sequence" and s.get("name")), None)
    return BookMetadata(
        title=_text(_find(info, "book-title")) or path.stem,
        authors=tuple(authors),
        language=language_code(_text(_find(info, "lang"))),
        description=element_text(annotation) if annotation is not None else "",
        date=(date.get("value") or element_text(date)) if date is not None else "",
        publisher=element_text(publisher) if publisher is not None else "",
        identifier=_text(doc_id) or _text(isbn),
        series=sequence.get("name", "").strip() if sequence is not None else "",
        series_index=sequence.get("number", "").strip() if sequence is not None else "",
        identifiers=(Identifier("ISBN", _text(isbn).replace("-", "")),) if _text(isbn) else (),
        subjects=tuple(_text(g) for g in info if localname(g) == "genre" and _text(g)),
    ), ((cover.get(_XLINK_HREF) or cover.get("href") or "").lstrip("#") if cover is not None else "")


def _cover(root: etree._Element, cover_id: str) -> CoverImage | None:
    if not cover_id:
        return None
    for binary in root:
        if localname(binary) == "binary" and binary.get("id") == cover_id:
            try:
                data = base64.b64decode("".join((binary.text or "").split()), validate=False)
            except (binascii.Error, ValueError):
                return None
            media_type = binary.get("content-type") or "image/jpeg"
            return (
                CoverImage(data=data, media_type=media_type)
                if data and media_type.startswith("image/")
                else None
            )
    return None
