"""Uploaded books kept in the data root, so a queued or resumed job still finds its book file.

The web UI's upload folder is temporary (Gradio cleans it); a job may run hours later or resume
after a restart. Each book is copied once under a name made from its content hash, so uploading the
same file twice reuses one copy and resumed jobs see identical bytes.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from omni_web.book import BOOK_SUFFIXES
from omni_web.errors import BookError, UnsupportedFormat
from omni_web.files import atomic_path, file_sha256, write_error
from omni_web.paths import DataPaths

__all__ = ["EBOOK_SUFFIXES", "books_dir", "require_book_name", "store_book"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Formats people pick for an audiobook that no reader here opens; they get the way to convert them.
_OTHER_FORMATS = {
    ".rtf": "an RTF document",
    ".doc": "a Word 97-2003 document",
    ".lit": "a LIT book",
    ".djvu": "a DjVu scan",
    ".cbz": "a comic archive",
    ".cbr": "a comic archive",
    ".kfx": "a Kindle KFX book",
}
EBOOK_SUFFIXES = (
    *BOOK_SUFFIXES,
    *_OTHER_FORMATS,
)  # what the upload box takes (the others get the way to convert)


def require_book_name(name: str) -> None:
    """Raise UnsupportedFormat naming the user's file when its name says it is a format no reader opens.

    Any other name is left to the content (:func:`omni_web.book.load_book` sniffs it). The message
    gives the remedy: convert it with Calibre's ``ebook-convert``, then upload the EPUB.
    """
    suffix = Path(name).suffix.lower()
    kind = _OTHER_FORMATS.get(suffix)
    if kind is None:
        return
    stem = Path(name).stem or "book"
    raise UnsupportedFormat(
        f"'{name}' is {kind}, which omni-web does not read. Convert it with Calibre "
        f'(ebook-convert "{name}" "{stem}.epub", or Calibre\'s Convert books), then upload the .epub.'
    )


def books_dir(paths: DataPaths) -> Path:
    """Where uploaded books are kept (``state/books``)."""
    return paths.state_dir / "books"


def store_book(paths: DataPaths, source: Path, *, name: str | None = None) -> Path:
    """Copy ``source`` into :func:`books_dir` (once per content) and return the kept path.

    ``name`` is the file name the user uploaded (the upload's own name may be mangled).

    Raises:
        BookError: the file cannot be read.
        DiskFullError: no space left for the copy.
    """
    source = Path(source)
    try:
        digest = file_sha256(source)
    except OSError as exc:
        raise BookError(
            f"Cannot read the uploaded book {source.name}: {exc.strerror or exc}. Upload it again."
        ) from exc
    stem = _UNSAFE.sub("_", Path(name or source.name).stem).strip("._") or "book"
    # The kept copy keeps its kind's extension (the reader is chosen by content, the name helps
    # tell Markdown from plain text).
    suffix = Path(name or source.name).suffix.lower()
    suffix = suffix if suffix in BOOK_SUFFIXES else ".epub"
    target = books_dir(paths) / f"{digest[:16]}-{stem[:80]}{suffix}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_path(target) as staged:
            shutil.copyfile(source, staged)
    except OSError as exc:
        raise write_error(
            exc,
            full=f"No space left to keep the book in {target.parent}. Free some space.",
            other=lambda why: BookError(f"Cannot keep a copy of the book in {target.parent}: {why}."),
        ) from exc
    return target
