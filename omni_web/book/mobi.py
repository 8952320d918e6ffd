"""Kindle books (MOBI, AZW3, AZW) to a Book: calibre's ``ebook-convert`` makes an EPUB, the EPUB reader reads it.

DRM is refused before converting: a MOBI header whose encryption field is set is a locked book
(calibre would refuse it too, after a while). The conversion runs as an argv list with a time
limit, in a temporary folder; the Book keeps the MOBI as its source and gets its read-along EPUB
written from the Book like every other non-EPUB format. With a cache folder (``ReadOptions.cache_dir``,
the data root's state) the EPUB is kept there under the file's SHA-256, so the upload, the job and
every later look at the same book convert it once.
"""

from __future__ import annotations

import dataclasses
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from omni_web.book.model import Book
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import page_name
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits
from omni_web.errors import BookError, DrmProtected, UnsafeBook, UnsupportedFormat
from omni_web.files import atomic_path, file_sha256

__all__ = ["CALIBRE_INSTALL_HINT", "EBOOK_CONVERT", "convert_to_epub", "is_drm_locked", "load_mobi"]

EBOOK_CONVERT = "ebook-convert"
CALIBRE_INSTALL_HINT = (
    "install calibre (Debian/Ubuntu: sudo apt install calibre), which provides ebook-convert"
)
CONVERT_TIMEOUT_S = 300.0
_DRM_MESSAGES = ("drm", "encrypted", "locked")


def is_drm_locked(header: bytes) -> bool:
    """Whether a Palm database's first record says its text is encrypted (MOBI DRM)."""
    if len(header) < 82 or header[60:68] not in (b"BOOKMOBI", b"TEXtREAd"):
        return False
    (first_record,) = struct.unpack(">I", header[78:82])
    if first_record + 14 > len(header):
        return False
    (encryption,) = struct.unpack(">H", header[first_record + 12 : first_record + 14])
    return encryption != 0


def convert_to_epub(
    source: Path, out_dir: Path, *, timeout_s: float = CONVERT_TIMEOUT_S, which=shutil.which
) -> Path:  # noqa: ANN001 - the PATH lookup (tests inject one)
    """Run ``ebook-convert SOURCE OUT.epub`` and return the EPUB.

    Raises:
        UnsupportedFormat: calibre is not installed.
        DrmProtected: calibre says the book is DRM-locked.
        BookError: the conversion failed or timed out.
    """
    program = which(EBOOK_CONVERT)
    if program is None:
        raise UnsupportedFormat(
            f"'{source.name}' is a Kindle book; reading it needs calibre's {EBOOK_CONVERT}, which "
            f"is not installed: {CALIBRE_INSTALL_HINT}. Or convert it to EPUB elsewhere."
        )
    target = out_dir / "book.epub"
    argv = [program, str(source), str(target)]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise UnsafeBook(
            f"Converting '{source.name}' with {EBOOK_CONVERT} took more than {timeout_s:.0f} s; it was "
            "stopped. Convert it to EPUB with calibre yourself and use the EPUB."
        ) from exc
    output = f"{done.stdout}\n{done.stderr}"
    if done.returncode != 0 or not target.is_file():
        last = next((line for line in reversed(output.strip().splitlines()) if line.strip()), "no output")
        if any(word in output.lower() for word in _DRM_MESSAGES) and "drm" in output.lower():
            raise DrmProtected(
                f"'{source.name}' is protected by DRM; omni-web reads DRM-free books only. Use a "
                "DRM-free copy of the book."
            )
        raise BookError(
            f"{EBOOK_CONVERT} could not convert '{source.name}' ({last.strip()[:200]}). Is it a "
            "complete MOBI/AZW3 file?"
        )
    return target


def load_mobi(
    path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS
) -> Book:
    """Read a DRM-free MOBI/AZW3/AZW through calibre.

    Raises:
        DrmProtected: the book is DRM-locked.
        UnsupportedFormat: calibre is not installed.
        BookError: conversion or reading failed (the EPUB reader's errors included).
    """
    from omni_web.book.epub import load_book as load_epub

    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise UnsafeBook(
            f"'{path.name}' is {size / 2**20:.1f} MiB, over the {limits.max_file_bytes / 2**20:.0f} MiB "
            "limit for one book file; it was not opened."
        )
    with path.open("rb") as handle:
        header = handle.read(64 * 1024)
    if is_drm_locked(header):
        raise DrmProtected(
            f"'{path.name}' is a Kindle book locked with DRM; omni-web reads DRM-free books only. "
            "Use a DRM-free copy of the book."
        )
    with tempfile.TemporaryDirectory(prefix="omni-mobi-") as scratch:
        epub = _converted(path, Path(scratch), options.cache_dir)
        book = load_epub(epub, limits=limits, options=options)
    # The converted EPUB is gone: chapters point at the pages of the EPUB written from the Book.
    chapters = tuple(dataclasses.replace(c, source_href=page_name(c.number)) for c in book.chapters)
    return dataclasses.replace(book, chapters=chapters, source_path=path, source_format="mobi")


def _converted(path: Path, scratch: Path, cache_dir: Path | None) -> Path:
    """The book as EPUB: from the cache when this content was converted before, else converted now
    (and kept in the cache, written under a temporary name and renamed so a reader never sees half)."""
    if cache_dir is None:
        return convert_to_epub(path, scratch)
    cached = cache_dir / f"{file_sha256(path)}.epub"
    if cached.is_file():
        return cached
    epub = convert_to_epub(path, scratch)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(cached) as staged:
            shutil.copyfile(epub, staged)
    except OSError:
        return epub  # a full or read-only disk costs the cache, not the book
    return cached
