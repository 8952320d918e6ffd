"""Reading an EPUB file into a :class:`~omni_web.book.model.Book` (ebooklib for the package).

The archive is checked first (:mod:`omni_web.book.safety`), then ebooklib reads the package
(metadata, manifest, spine, guide) from the same open file. The table of contents, landmarks and
text come from our own safe parsers (:mod:`omni_web.book.toc`, :mod:`omni_web.book.extract`), so a
quirky nav or NCX never costs more than its chapter titles. Every failure leaves as a
:class:`~omni_web.errors.BookError` naming the problem and what to do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import posixpath
import re
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import ebooklib
from ebooklib import epub
from lxml import etree

from omni_web.book.chapters import build_chapters
from omni_web.book.extract import DocumentText, Segment, extract_document
from omni_web.book.model import Book, BookMetadata, Chapter, CoverImage
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.package_meta import parse_identifiers, parse_series, parse_subjects, parse_subtitle
from omni_web.book.package_meta import refinements as package_refinements
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveCheck, ArchiveLimits, check_archive
from omni_web.book.toc import (
    Landmark,
    SpineDoc,
    TocEntry,
    assemble_sections,
    parse_nav,
    parse_ncx,
    resolve_href,
    split_ids_by_path,
)
from omni_web.errors import BookError, BookNotFound, EmptyBook, NotAnEpub, exception_detail

__all__ = ["load_book"]

_log = logging.getLogger(__name__)

_DC = "DC"
_OPF_NS = "http://www.idpf.org/2007/opf"
_XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/html"})
_NCX_TYPE = "application/x-dtbncx+xml"
# What ebooklib (and zipfile/lxml under it) raises on a damaged package.
_READ_ERRORS = (
    epub.EpubException,
    KeyError,
    IndexError,
    AttributeError,
    TypeError,
    ValueError,
    etree.LxmlError,
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
)
_GUIDE_KINDS = {"title-page": "titlepage", "notes": "endnotes"}
_TAG_RE = re.compile(r"<[^>]+>")
_EMPTY_SEGMENT = Segment(anchor=None, blocks=(), image_count=0, link_words=0, types=frozenset(), word_count=0)


class _TolerantReader(epub.EpubReader):
    """ebooklib's reader, but a manifest entry missing from the archive reads as empty, not a crash."""

    def read_file(self, name: str) -> bytes:
        try:
            return super().read_file(name)
        except KeyError:
            return b""  # a missing font or image must not make the whole book unreadable

    def _parse_nav(self, data: bytes, base_path: str, navtype: str = "toc") -> None:
        # ebooklib's nav parsing only fills book.toc/pages, which we do not use (toc.py parses the
        # nav itself); a nav without a toc <nav>, or an empty one, must not make the book unreadable.
        with contextlib.suppress(IndexError, AttributeError, TypeError, etree.LxmlError):
            super()._parse_nav(data, base_path, navtype)

    def _parse_ncx(self, data: bytes) -> None:
        # Same for the NCX: toc.py reads it; an empty or broken one only costs its titles.
        with contextlib.suppress(IndexError, AttributeError, TypeError, etree.LxmlError):
            super()._parse_ncx(data)


def load_book(
    path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS
) -> Book:
    """Read an EPUB into chapters of speakable text, with metadata and cover.

    Args:
        path: the .epub file.
        limits: archive size limits (the defaults suit real books; tests pass small ones).

    Raises:
        NotAnEpub: not a ZIP, no container or package document, or a damaged package.
        UnsafeBook: a decompression bomb or XML entity declarations.
        DrmProtected: encrypted content.
        EmptyBook: nothing in the book can be read aloud.
        BookError: the file cannot be opened at all.
    """
    path = Path(path)
    name = path.name
    if path.is_dir():
        raise NotAnEpub(f"'{name}' is a folder, not an EPUB file; choose the .epub file itself.")
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
            handle.seek(0)
            check, ebook = _open(handle, name, head, limits)
    except FileNotFoundError as exc:
        raise BookNotFound(path, remedy="Check the path and try again.") from exc
    except OSError as exc:
        raise BookError(
            f"'{name}' cannot be read ({exc.strerror or exc}). Check the file and its permissions."
        ) from exc
    return _build_book(ebook, path, check, options)


def _open(
    handle: IO[bytes], name: str, head: bytes, limits: ArchiveLimits
) -> tuple[ArchiveCheck, epub.EpubBook]:
    """Check the archive, then let ebooklib read the package from the same handle."""
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise NotAnEpub(_not_a_zip_message(name, head)) from exc
    try:
        with archive:
            check = check_archive(archive, name=name, limits=limits)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise NotAnEpub(
            f"'{name}' is damaged: its ZIP archive cannot be unpacked ({exc}). Download it again or "
            "use another copy of the book."
        ) from exc
    handle.seek(0)
    reader = _TolerantReader(handle, {"ignore_ncx": False})
    try:
        ebook = reader.load()
        reader.process()
    except _READ_ERRORS as exc:
        raise NotAnEpub(
            f"'{name}' could not be read as an EPUB ({exception_detail(exc)}). It may be "
            "damaged: repair it with Calibre or Sigil, or use another copy of the book."
        ) from exc
    return check, ebook


def _not_a_zip_message(name: str, head: bytes) -> str:
    if head.startswith(b"%PDF"):
        kind = "a PDF file"
    elif not head:
        kind = "an empty file"
    else:
        kind = "not a ZIP archive, which every EPUB is"
    return (
        f"'{name}' is not an EPUB: it is {kind}. Choose the book file itself (omni-web reads EPUB, PDF, "
        "DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown and text), or convert it to EPUB with Calibre."
    )


def _build_book(ebook: epub.EpubBook, path: Path, check: ArchiveCheck, options: ReadOptions) -> Book:
    """Metadata, cover and chapters from ebooklib's package plus our TOC and text parsing."""
    metadata = _metadata(ebook, fallback_title=path.stem)
    contents = _spine(ebook)
    spine = [doc for doc, _ in contents]
    if not spine:
        raise EmptyBook(f"'{path.name}' has no readable pages: its spine lists no XHTML documents.")
    entries, landmarks = _toc(ebook, {doc.path for doc in spine})
    ids = split_ids_by_path(entries)
    documents: dict[str, DocumentText] = {}
    for doc, content in contents:
        try:
            documents[doc.path] = extract_document(content, split_ids=ids.get(doc.path, ()), options=options)
        except etree.LxmlError as exc:  # an unreadable page reads as empty; the rest of the book still loads
            _log.warning(
                "%s: the page %s cannot be parsed (%s); it is read as empty", path.name, doc.path, exc
            )
            documents[doc.path] = DocumentText(segments=(_EMPTY_SEGMENT,), title="")
    sections = assemble_sections(
        spine,
        entries,
        documents,
        landmark_paths=frozenset(landmark.path for landmark in landmarks),
        fixed_layout=_is_fixed_layout(ebook),
    )
    chapters = build_chapters(
        sections, book_title=metadata.title, landmarks=landmarks, language=metadata.language
    )
    if not any(chapter.word_count for chapter in chapters):
        images = sum(1 for chapter in chapters if chapter.matter_reason in ("image-only page", "cover"))
        detail = (
            f"its {len(chapters)} pages hold only pictures or nothing" if images else "its pages are empty"
        )
        if _is_fixed_layout(ebook):
            detail = (
                f"it is a fixed-layout book whose {len(chapters)} pages are pictures with no text layer "
                "(no HTML text and no SVG <text>)"
            )
        raise EmptyBook(
            f"'{path.name}' has no text to read aloud: {detail} (a scanned or picture book?). omni-web "
            "reads text; use an EPUB with real text, e.g. an OCR'd edition."
        )
    _refuse_a_picture_book(path, documents, chapters)
    texts = [chapter for chapter in chapters if chapter.word_count]
    if len(texts) == 1 and not texts[0].selected_by_default:
        # The book's only text (a page that repeats its title) is the book, not its title page.
        chapters = tuple(
            dataclasses.replace(c, selected_by_default=True, matter_reason="") if c is texts[0] else c
            for c in chapters
        )
    cover = _cover(ebook, check)
    return Book(metadata=metadata, cover=cover, chapters=chapters, source_path=path)


# A book whose pages are this share pictures with no text, and whose text is short (a colophon, an
# "about this edition" page), is a picture book (a manga, a scan): reading its few words is no
# audiobook.
_PICTURE_SHARE = 0.8
_PICTURE_BOOK_WORDS = 1500


def _refuse_a_picture_book(
    path: Path, documents: dict[str, DocumentText], chapters: Sequence[Chapter]
) -> None:
    pictures = sum(
        1
        for document in documents.values()
        if any(s.image_count for s in document.segments) and not any(s.blocks for s in document.segments)
    )
    words = sum(chapter.word_count for chapter in chapters)
    if pictures < 4 or pictures < _PICTURE_SHARE * len(documents) or words >= _PICTURE_BOOK_WORDS:
        return
    titles = ", ".join(f"'{c.title}'" for c in chapters if c.word_count)
    raise EmptyBook(
        f"'{path.name}' is a picture book: {pictures} of its {len(documents)} pages are pictures with no "
        f"text, and its only text is {words} words ({titles}). omni-web reads text aloud; use an edition "
        "with real text (an OCR'd or text edition of the book)."
    )


def _is_fixed_layout(ebook: epub.EpubBook) -> bool:
    """Whether the package says its pages are pre-paginated (EPUB 3 fixed layout)."""
    return any(
        attrs.get("property") == "rendition:layout" and str(value).strip() == "pre-paginated"
        for value, attrs in ebook.get_metadata("OPF", "meta")
    )


def _spine(ebook: epub.EpubBook) -> list[tuple[SpineDoc, bytes]]:
    """XHTML spine documents in reading order (each once), with their raw bytes."""
    docs: list[tuple[SpineDoc, bytes]] = []
    seen: set[str] = set()
    for entry in ebook.spine:
        idref, linear = entry if isinstance(entry, tuple) else (entry, "yes")
        item = ebook.get_item_with_id(idref)
        if item is None or item.file_name in seen:
            continue
        # SVG content documents are pages too (fixed-layout books); their <text> is read.
        if item.media_type not in _XHTML_TYPES | {"image/svg+xml"} and not isinstance(item, epub.EpubHtml):
            continue
        seen.add(item.file_name)
        doc = SpineDoc(
            path=item.file_name, linear=str(linear).lower() != "no", is_nav=isinstance(item, epub.EpubNav)
        )
        docs.append((doc, bytes(item.content or b"")))
    return docs


def _toc(ebook: epub.EpubBook, spine_paths: set[str]) -> tuple[tuple[TocEntry, ...], tuple[Landmark, ...]]:
    """TOC entries (EPUB 3 nav first, else NCX) and landmarks (nav landmarks plus EPUB 2 guide)."""
    entries: tuple[TocEntry, ...] = ()
    landmarks: list[Landmark] = []
    for item in ebook.get_items():
        if isinstance(item, epub.EpubNav) and item.content:
            try:
                nav_entries, nav_landmarks = parse_nav(item.content, item.file_name)
            except etree.LxmlError:
                continue
            landmarks.extend(nav_landmarks)
            if any(entry.path in spine_paths for entry in nav_entries):
                entries = nav_entries
                break
    if not entries:
        for item in ebook.get_items_of_media_type(_NCX_TYPE):
            try:
                entries = parse_ncx(item.content or b"", item.file_name)
            except etree.LxmlError:
                continue
            if entries:
                break
    for reference in getattr(ebook, "guide", None) or []:
        target = resolve_href(reference.get("href") or "", "")
        kind = (reference.get("type") or "").lower()
        if target is not None and kind:
            kinds = frozenset({kind, _GUIDE_KINDS.get(kind, kind)})
            landmarks.append(Landmark(kinds, target[0], target[1], reference.get("title") or ""))
    return entries, tuple(landmarks)


def _metadata(ebook: epub.EpubBook, *, fallback_title: str) -> BookMetadata:
    """Dublin Core fields; authors are creators whose role is author (or all, if none says)."""

    def values(field: str) -> list[tuple[str, dict[str, str]]]:
        return [
            (str(v).strip(), dict(a or {})) for v, a in ebook.get_metadata(_DC, field) if v and str(v).strip()
        ]

    metas = [(value, dict(attrs or {})) for value, attrs in ebook.get_metadata("OPF", "meta")]
    refinements = package_refinements(metas)
    creators = values("creator")
    roles = [
        refinements.get(attrs.get("id", ""), {}).get("role") or attrs.get(f"{{{_OPF_NS}}}role") or ""
        for _, attrs in creators
    ]
    authors = tuple(name for (name, _), role in zip(creators, roles, strict=True) if role in ("", "aut"))
    if not authors:
        authors = tuple(name for name, _ in creators)
    dates = values("date")
    published = [value for value, attrs in dates if attrs.get(f"{{{_OPF_NS}}}event") == "publication"]
    # ebooklib invents a random uuid for a book without dc:identifier: use its uid only when the OPF has it.
    identifiers = [v for v, _ in values("identifier")]
    uid = str(getattr(ebook, "uid", "") or "")
    identifier = uid if uid in identifiers else next(iter(identifiers), "")
    description = next((v for v, _ in values("description")), "")
    titles = values("title")
    series, series_index = parse_series(metas)
    return BookMetadata(
        title=titles[0][0] if titles else fallback_title,
        authors=authors,
        language=next((v for v, _ in values("language")), ""),
        description=" ".join(_TAG_RE.sub(" ", description).split()),
        date=(published or [v for v, _ in dates] or [""])[0],
        publisher=next((v for v, _ in values("publisher")), ""),
        identifier=identifier,
        subtitle=parse_subtitle(titles, refinements),
        series=series,
        series_index=series_index,
        identifiers=parse_identifiers(values("identifier"), refinements),
        subjects=parse_subjects(values("subject")),
    )


def _cover(ebook: epub.EpubBook, check: ArchiveCheck) -> CoverImage | None:
    """The cover image: the EPUB 3 cover-image item, else the EPUB 2 ``<meta name="cover">``."""
    opf_dir = posixpath.dirname(check.opf_path)
    candidates = list(ebook.get_items_of_type(ebooklib.ITEM_COVER))
    for _value, attrs in ebook.get_metadata("OPF", "meta"):
        if (attrs.get("name") or "").lower() == "cover" and attrs.get("content"):
            item = ebook.get_item_with_id(attrs["content"])
            if item is not None:
                candidates.append(item)
    candidates += [
        item
        for item in ebook.get_items_of_type(ebooklib.ITEM_IMAGE)
        if "cover" in f"{item.id} {item.file_name}".lower()
    ]
    for item in candidates:
        media_type = (item.media_type or "").lower()
        archive_path = posixpath.normpath(posixpath.join(opf_dir, item.file_name))
        if media_type.startswith("image/") and item.content and archive_path not in check.encrypted_paths:
            return CoverImage(data=bytes(item.content), media_type=media_type)
    return None
