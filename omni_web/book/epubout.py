"""A Book written as a plain EPUB 3 (one page per chapter): the base of a non-EPUB book's read-along.

The read-along EPUB (:mod:`omni_web.readalong.epub`) adds Media Overlays to a book's own EPUB.
A book that came as PDF, text, DOCX, ... has none, so one is written from its Book: chapter N is
``chapter-NNN.xhtml`` (:func:`omni_web.book.parts.page_name`, which every non-EPUB reader put in
``Chapter.source_href``), headings as ``<h1>``/``<h2>``, paragraphs as ``<p>``, the cover as the
cover image, and a navigation document listing the chapters.
"""

from __future__ import annotations

import contextlib
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from omni_web.book.model import Book, Chapter
from omni_web.book.parts import page_name
from omni_web.files import atomic_path

__all__ = ["readalong_source", "write_book_epub"]

_CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
"""


@contextlib.contextmanager
def readalong_source(book: Book, folder: Path) -> Iterator[Path]:
    """The EPUB to build the read-along on: the book's own file, or one written from the Book.

    A written one lives in a temporary file in ``folder`` until the block ends.
    """
    if book.source_format == "epub":
        yield Path(book.source_path)
        return
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="book-epub-", dir=folder) as scratch:
        yield write_book_epub(book, Path(scratch) / "book.epub")


def write_book_epub(book: Book, out_path: Path) -> Path:
    """Write ``book`` as an EPUB 3 at ``out_path`` (EPUBCheck-valid) and return the path."""
    meta = book.metadata
    language = meta.language or "und"
    title = meta.title or Path(book.source_path).stem
    identifier = (
        meta.identifier
        or f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'omni-web:{title}:{book.source_path}')}"
    )
    files: dict[str, bytes] = {}
    manifest = ['<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>']
    spine = []
    for chapter in book.chapters:
        name = page_name(chapter.number)
        files[f"OEBPS/{name}"] = _page(chapter, language).encode("utf-8")
        manifest.append(
            f'<item id="c{chapter.number:03d}" href="{name}" media-type="application/xhtml+xml"/>'
        )
        spine.append(f'<itemref idref="c{chapter.number:03d}"/>')
    if book.cover is not None:
        cover_name = f"cover.{book.cover.extension}"
        files[f"OEBPS/{cover_name}"] = book.cover.data
        manifest.append(
            f'<item id="cover" href="{cover_name}" media-type="{escape(book.cover.media_type)}" '
            'properties="cover-image"/>'
        )
    creators = "".join(f"<dc:creator>{escape(a)}</dc:creator>" for a in meta.authors)
    extra = "".join(
        f"<dc:{tag}>{escape(value)}</dc:{tag}>"
        for tag, value in (("description", meta.description), ("publisher", meta.publisher))
        if value
    )
    modified = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    files["OEBPS/content.opf"] = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="uid">{escape(identifier)}</dc:identifier><dc:title>{escape(title)}</dc:title>'
        f"<dc:language>{escape(language)}</dc:language>{creators}{extra}"
        f'<meta property="dcterms:modified">{modified}</meta></metadata>\n'
        f"<manifest>{''.join(manifest)}</manifest>\n<spine>{''.join(spine)}</spine>\n</package>\n"
    ).encode()
    files["OEBPS/nav.xhtml"] = _nav(book, title, language).encode("utf-8")
    with atomic_path(Path(out_path), suffix=".epub") as staged, zipfile.ZipFile(staged, "w") as archive:
        archive.writestr(
            zipfile.ZipInfo("mimetype"), b"application/epub+zip", compress_type=zipfile.ZIP_STORED
        )
        archive.writestr("META-INF/container.xml", _CONTAINER, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in files.items():
            archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return Path(out_path)


def _document(title: str, language: str, body: str) -> str:
    lang = quoteattr(language)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
        f'<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang={lang} '
        f'xml:lang={lang}>\n<head><meta charset="utf-8"/><title>{escape(title)}</title></head>\n'
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _page(chapter: Chapter, language: str) -> str:
    lines, first_heading = [], True
    for block in chapter.blocks:
        if block.is_heading:
            tag = "h1" if first_heading else "h2"
            first_heading = False
        else:
            tag = "p"
        lines.append(f"<{tag}>{escape(block.text)}</{tag}>")
    if not lines:
        lines.append(f"<h1>{escape(chapter.title)}</h1>")
    return _document(
        chapter.title, language, '<section epub:type="chapter">\n' + "\n".join(lines) + "\n</section>"
    )


def _nav(book: Book, title: str, language: str) -> str:
    items = "\n".join(
        f'<li><a href="{page_name(c.number)}">{escape(c.title)}</a></li>' for c in book.chapters
    )
    body = f'<nav epub:type="toc" id="toc"><h1>{escape(title)}</h1>\n<ol>\n{items}\n</ol>\n</nav>'
    return _document(title, language, body)
