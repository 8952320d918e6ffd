"""Books handed to the queue from outside (API uploads, the inbox, multi-upload, OPDS) get a copy
of their own in the data root, so a job never depends on a temporary upload or a folder the user
cleans up."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from omni_web.assemble import safe_filename
from omni_web.files import atomic_path, file_sha256, write_atomic
from omni_web.paths import DataPaths

__all__ = ["books_dir", "keep_book", "keep_book_bytes"]


def books_dir(paths: DataPaths) -> Path:
    """Where kept books live (under ``state/``, which is never served)."""
    return paths.state_dir / "books"


def _target(paths: DataPaths, digest: str, name: str) -> Path:
    stem, dot, ext = Path(name).name.rpartition(".")
    clean = (
        f"{safe_filename(stem, fallback='book', max_bytes=120)}{dot}{ext}"
        if dot
        else safe_filename(name, fallback="book")
    )
    return books_dir(paths) / digest[:16] / clean


def keep_book(paths: DataPaths, source: Path, *, name: str | None = None) -> Path:
    """Copy ``source`` into the kept books (named by its content); returns the copy's path."""
    target = _target(paths, file_sha256(source), name or Path(source).name)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as staged:  # two takers of one book never share a staging file
            shutil.copyfile(source, staged)
    return target


def keep_book_bytes(paths: DataPaths, data: bytes, name: str) -> Path:
    """Like :func:`keep_book` for bytes already in memory (an upload, a download)."""
    target = _target(paths, hashlib.sha256(data).hexdigest(), name)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data)
    return target
