"""Uploaded books kept in the data root, so a queued or resumed job still finds its EPUB.

The web UI's upload folder is temporary (Gradio cleans it); a job may run hours later or resume
after a restart. Each book is copied once under a name made from its content hash, so uploading the
same file twice reuses one copy and resumed jobs see identical bytes.
"""

from __future__ import annotations

import errno
import re
import shutil
from pathlib import Path

from omni_web.errors import BookError, DiskFullError, NotAnEpub
from omni_web.files import atomic_path, file_sha256
from omni_web.paths import DataPaths

__all__ = ["EBOOK_SUFFIXES", "books_dir", "require_epub_name", "store_book"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Formats people pick for an audiobook; only EPUB is read, the others get the way to convert them.
_OTHER_FORMATS = {
    ".pdf": "a PDF", ".mobi": "a Kindle (MOBI) book", ".azw": "a Kindle book", ".azw3": "a Kindle (AZW3) book",
    ".kf8": "a Kindle book", ".txt": "a plain text file", ".rtf": "an RTF document", ".doc": "a Word document",
    ".docx": "a Word document", ".odt": "an OpenDocument text", ".fb2": "a FictionBook", ".lit": "a LIT book",
    ".html": "a web page", ".htm": "a web page",
}
EBOOK_SUFFIXES = (".epub", *_OTHER_FORMATS)


def require_epub_name(name: str) -> None:
    """Raise NotAnEpub naming the user's file when its name says it is another format.

    The message gives the remedy: convert it with Calibre's ``ebook-convert``, then upload the EPUB.
    """
    suffix = Path(name).suffix.lower()
    if suffix == ".epub":
        return
    kind = _OTHER_FORMATS.get(suffix, f"a {suffix or 'file without extension'} file" if suffix else "not an EPUB")
    stem = Path(name).stem or "book"
    raise NotAnEpub(
        f"'{name}' is {kind}; omni-web reads EPUB books. Convert it with Calibre "
        f"(ebook-convert \"{name}\" \"{stem}.epub\", or Calibre's Convert books), then upload the .epub."
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
        raise BookError(f"Cannot read the uploaded book {source.name}: {exc.strerror or exc}. Upload it again.") from exc
    stem = _UNSAFE.sub("_", Path(name or source.name).stem).strip("._") or "book"
    target = books_dir(paths) / f"{digest[:16]}-{stem[:80]}.epub"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_path(target) as staged:
            shutil.copyfile(source, staged)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise DiskFullError(f"No space left to keep the book in {target.parent}. Free some space.") from exc
        raise BookError(f"Cannot keep a copy of the book in {target.parent}: {exc.strerror or exc}.") from exc
    return target
