"""Which reader opens a book: decided by the file's content (magic bytes, ZIP members, XML root), not its name.

The name only breaks ties the content cannot (a text file is Markdown or plain text by its
extension). A PDF renamed ``.epub`` is read as a PDF; a ZIP is an EPUB, a DOCX or an ODT by its
members. :func:`load_book` is the one entry point every caller uses (pipeline, UI, CLI).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from omni_web.book.letterspacing import without_letter_spacing
from omni_web.book.model import Book
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits
from omni_web.errors import BookError, BookNotFound, NotAnEpub, UnsupportedFormat

__all__ = ["BOOK_SUFFIXES", "FORMAT_NAMES", "detect_format", "load_book"]

# What each reader is called in messages, and the file names people give such books.
FORMAT_NAMES = {
    "epub": "an EPUB",
    "pdf": "a PDF",
    "txt": "a plain text file",
    "markdown": "a Markdown file",
    "html": "a web page",
    "fb2": "a FictionBook",
    "docx": "a Word document",
    "odt": "an OpenDocument text",
    "mobi": "a Kindle book",
}
_SUFFIX_FORMATS = {
    ".epub": "epub",
    ".pdf": "pdf",
    ".txt": "txt",
    ".text": "txt",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".fb2": "fb2",
    ".zip": "fb2",
    ".docx": "docx",
    ".odt": "odt",
    ".mobi": "mobi",
    ".azw": "mobi",
    ".azw3": "mobi",
    ".prc": "mobi",
    ".kf8": "mobi",
}
BOOK_SUFFIXES = tuple(_SUFFIX_FORMATS)
_SNIFF_BYTES = 4096
# Fewer words than this, in a file whose name is no book's, is not read as a book.
_SCRAP_WORDS = 20
_ODT_MIMETYPES = (b"application/vnd.oasis.opendocument.text",)


def detect_format(path: Path) -> str:
    """The reader for the file at ``path`` ("epub", "pdf", ...), from its first bytes.

    Raises:
        UnsupportedFormat: the content is no format omni-web reads.
        OSError: the file cannot be read.
    """
    with Path(path).open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    suffix_format = _SUFFIX_FORMATS.get(Path(path).suffix.lower(), "")
    if head.startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _zip_format(path, suffix_format)
    if head[60:68] in (b"BOOKMOBI", b"TEXtREAd"):
        return "mobi"
    if not head:
        return suffix_format or "txt"
    if b"\x00" in head[:512] and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnsupportedFormat(
            f"'{Path(path).name}' is not a book format omni-web reads (it is binary, not text). Use an "
            "EPUB, PDF, DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown or text file."
        )
    kind = _text_format(head, suffix_format)
    if kind == "txt" and not suffix_format:
        _refuse_a_scrap(Path(path), head)
    return kind


def _refuse_a_scrap(path: Path, head: bytes) -> None:
    """A few words of text under a name no book has (``vm``, ``notes.log``) is a stray file, not a book."""
    words = len(head.decode("utf-8", errors="ignore").split())
    if len(head) < _SNIFF_BYTES and words < _SCRAP_WORDS:
        raise UnsupportedFormat(
            f"'{path.name}' is not a book: it has no book extension and holds {words} "
            f"word{'s' if words != 1 else ''} "
            f"of text ({len(head)} bytes). Choose the book file itself, or name a text book .txt."
        )


def _zip_format(path: Path, suffix_format: str) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            mimetype = archive.read("mimetype").strip() if "mimetype" in names else b""
    except (zipfile.BadZipFile, OSError, KeyError):
        return "epub"  # damaged: the EPUB reader says what is wrong with the archive
    if mimetype == b"application/epub+zip" or "META-INF/container.xml" in names:
        return "epub"
    if "word/document.xml" in names:
        return "docx"
    if len(names) == 1 and next(iter(names)).lower().endswith(".fb2"):
        return "fb2"  # .fb2.zip, as FictionBook libraries hand books out
    if mimetype in _ODT_MIMETYPES or ("content.xml" in names and suffix_format == "odt"):
        return "odt"
    if mimetype.startswith(b"application/vnd.oasis.opendocument"):
        raise UnsupportedFormat(
            f"'{path.name}' is an OpenDocument file but not a text document "
            f"({mimetype.decode(errors='replace')}). "
            "Save it as an .odt text document, or export it to PDF."
        )
    return "epub"  # a ZIP of something else: the EPUB reader names what is missing


def _text_format(head: bytes, suffix_format: str) -> str:
    lowered = head.lstrip(b"\xef\xbb\xbf\xff\xfe").lower()
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        lowered = head.decode("utf-16", errors="ignore").encode("utf-8", errors="ignore").lower()
    start = lowered.lstrip()
    if b"<fictionbook" in lowered:
        return "fb2"
    if start.startswith((b"<!doctype html", b"<html")) or (
        start.startswith(b"<?xml") and b"<html" in lowered
    ):
        return "html"
    if suffix_format == "txt" and _looks_like_markdown(lowered.decode("utf-8", errors="ignore")):
        return "markdown"
    if suffix_format:
        # A name that promises a binary format (an .epub that is text) goes to that reader, whose
        # message says what the file is not; text formats keep the name's choice.
        return suffix_format
    return "txt"


_MD_FRONT_RE = re.compile(r"\A\s*(?:---\n(?:[\w-]+:.*\n)+(?:---|\.\.\.)\n|%[^\n]+\n)")
_MD_SIGNS = (
    re.compile(r"^#{1,6} \S", re.MULTILINE),
    re.compile(r"^```", re.MULTILINE),
    re.compile(r"\]\((?:https?://|#|\.{0,2}/|[\w.-]+\.(?:md|html|png|jpg))"),
    re.compile(r"^\[[^\]]+\]: \S", re.MULTILINE),
)


def _looks_like_markdown(head: str) -> bool:
    """A text file written in Markdown: front matter or a title block, or several of its marks
    (ATX headings, fenced code, links, link definitions); a plain-text book has none of them."""
    head = head.replace("\r\n", "\n")
    if _MD_FRONT_RE.match(head):
        return True
    return sum(len(sign.findall(head)) for sign in _MD_SIGNS) >= 3


def load_book(
    path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS
) -> Book:
    """Read any supported book into chapters of speakable text, with metadata and cover.

    Args:
        path: the book file (EPUB, PDF, TXT, Markdown, HTML, FB2, DOCX, ODT, MOBI/AZW3/AZW).
        limits: size limits (the defaults suit real books; tests pass small ones).
        options: the reader choices every reader honours (footnotes, the conversion cache).

    Raises:
        BookNotFound: there is no such file.
        UnsupportedFormat: the content is no format omni-web reads (or calibre is missing for MOBI).
        BookError: the reader's own errors (NotAnEpub, UnsafeBook, DrmProtected, EmptyBook, ScannedBook).
    """
    path = Path(path)
    if path.is_dir():
        raise NotAnEpub(f"'{path.name}' is a folder, not a book file; choose the book file itself.")
    try:
        kind = detect_format(path)
    except FileNotFoundError as exc:
        raise BookNotFound(path, remedy="Check the path and try again.") from exc
    except OSError as exc:
        raise BookError(
            f"'{path.name}' cannot be read ({exc.strerror or exc}). Check the file and its permissions."
        ) from exc
    try:
        return without_letter_spacing(_reader(kind)(path, limits=limits, options=options))
    except FileNotFoundError as exc:
        raise BookNotFound(path, remedy="Check the path and try again.") from exc
    except OSError as exc:
        raise BookError(
            f"'{path.name}' cannot be read ({exc.strerror or exc}). Check the file and its permissions."
        ) from exc


def _reader(kind: str):  # noqa: ANN202 - one of the readers' load functions
    """The reader module's load function (imported on use: PDF and DOCX libraries are not small)."""
    if kind == "epub":
        from omni_web.book.epub import load_book as load_epub

        return load_epub
    if kind == "pdf":
        from omni_web.book.pdf import load_pdf

        return load_pdf
    if kind == "txt":
        from omni_web.book.txt import load_txt

        return load_txt
    if kind == "markdown":
        from omni_web.book.md import load_markdown

        return load_markdown
    if kind == "html":
        from omni_web.book.webpage import load_html

        return load_html
    if kind == "fb2":
        from omni_web.book.fb2 import load_fb2

        return load_fb2
    if kind == "docx":
        from omni_web.book.docx import load_docx

        return load_docx
    if kind == "odt":
        from omni_web.book.odt import load_odt

        return load_odt
    from omni_web.book.mobi import load_mobi

    return load_mobi
