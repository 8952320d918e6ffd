"""Build small EPUB files for tests: good ones with chosen structure, and deliberately bad ones."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = ["CONTAINER_XML", "make_epub", "nav_xhtml", "ncx_xml", "xhtml"]

CONTAINER_XML = (
    '<?xml version="1.0"?>\n'
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def xhtml(body: str, *, title: str = "", body_attrs: str = "") -> str:
    """A complete XHTML content document around ``body``."""
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
        f"<head><title>{escape(title)}</title></head><body {body_attrs}>{body}</body></html>"
    )


def nav_xhtml(items: Sequence[tuple[str, str]], *, nested: str = "", landmarks: str = "") -> str:
    """An EPUB 3 navigation document; ``items`` are (href, title) pairs."""
    lis = "".join(f'<li><a href="{href}">{escape(title)}</a></li>' for href, title in items)
    return xhtml(f'<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>{lis}{nested}</ol></nav>{landmarks}')


def ncx_xml(items: Sequence[tuple[str, str]]) -> str:
    """An EPUB 2 NCX; ``items`` are (src, label) pairs."""
    points = "".join(
        f'<navPoint id="np{i}" playOrder="{i + 1}"><navLabel><text>{escape(title)}</text></navLabel>'
        f'<content src="{src}"/></navPoint>'
        for i, (src, title) in enumerate(items)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
        f"<head/><docTitle><text>T</text></docTitle><navMap>{points}</navMap></ncx>"
    )


def make_epub(
    path: Path,
    documents: Sequence[tuple[str, str]] = (("ch1.xhtml", xhtml("<h1>One</h1><p>Hello there.</p>")),),
    *,
    nav: str | None = None,
    ncx: str | None = None,
    title: str = "Test Book",
    author: str | None = "Ann Author",
    language: str = "en",
    extra_files: Mapping[str, bytes | str] | None = None,
    extra_manifest: str = "",
    container: str | None = CONTAINER_XML,
    opf: str | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
    extra_meta: str = "",
) -> Path:
    """Write an EPUB with the given XHTML documents (names under OEBPS/) in spine order.

    ``opf`` replaces the generated package document; ``container=None`` leaves out
    META-INF/container.xml; ``extra_files`` adds archive members by full path; ``extra_meta`` adds
    elements to the generated package's metadata (e.g. calibre's series).
    """
    manifest = [
        f'<item id="d{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(documents)
    ]
    spine = [f'<itemref idref="d{i}"/>' for i in range(len(documents))]
    if nav is not None:
        manifest.append(
            '<item id="nav" href="nav.xhtml" properties="nav" media-type="application/xhtml+xml"/>'
        )
    if ncx is not None:
        manifest.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    toc_attr = ' toc="ncx"' if ncx is not None else ""
    creator = f"<dc:creator>{escape(author)}</dc:creator>" if author else ""
    package = opf or (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier '
        f'id="uid">urn:test:{escape(title)}</dc:identifier><dc:title>{escape(title)}</dc:title>'
        f"{creator}<dc:language>{language}</dc:language>{extra_meta}</metadata>"
        f"<manifest>{''.join(manifest)}{extra_manifest}</manifest>"
        f"<spine{toc_attr}>{''.join(spine)}</spine></package>"
    )
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        if container is not None:
            archive.writestr("META-INF/container.xml", container)
        archive.writestr("OEBPS/content.opf", package)
        for name, content in documents:
            archive.writestr(f"OEBPS/{name}", content)
        if nav is not None:
            archive.writestr("OEBPS/nav.xhtml", nav)
        if ncx is not None:
            archive.writestr("OEBPS/toc.ncx", ncx)
        for name, content in (extra_files or {}).items():
            archive.writestr(name, content)
    return path
