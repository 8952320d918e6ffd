"""File helpers every layer shares: one atomic write and one content hash.

A file that matters (a rendered chunk, settings, the server record, a login, a voice clip) is
written under a hidden, unique name beside its final one and moved into place with one
``os.replace``, so a crash, a kill or a full disk never leaves half a file under the final name,
and two writers never share a staging file. An ``OSError`` from a write is translated by
:func:`write_error` (or tested with :func:`is_disk_full`): which errnos mean a full disk is decided
here once; the words, which only the caller knows, are the caller's.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from omni_web.errors import DiskFullError, OmniWebError

__all__ = ["atomic_path", "file_sha256", "is_disk_full", "locked", "write_atomic", "write_error"]

# No space left on the device, or the user's quota on it is used up: to the user both are "full".
_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


@contextlib.contextmanager
def atomic_path(path: Path, *, mode: int | None = None, suffix: str = "") -> Iterator[Path]:
    """A fresh staging path beside ``path``; when the block ends without an error it becomes ``path``.

    Write the staging file any way you like (a tool's output, ``write_bytes``...). On an error,
    or when the block wrote nothing, the staging file is removed and ``path`` is untouched.
    ``mode`` creates the staging file empty with that permission first (e.g. 0o600 for secrets),
    so the content is never readable by others, not even for a moment. ``suffix`` ends the staging
    name, for tools that pick a format by extension. A block may make the staging path a folder
    (fill it, and it replaces nothing: a folder only lands where none is).
    """
    path = Path(path)
    staged = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.partial{suffix}")
    try:
        if mode is not None:
            os.close(os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
        yield staged
        if staged.is_dir():
            staged.rename(path)  # a folder never replaces another: OSError when one is there
        else:
            os.replace(staged, path)
    finally:
        if staged.is_dir():
            shutil.rmtree(staged, ignore_errors=True)
        else:
            staged.unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes | str, *, mode: int | None = None, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`); returns ``path``.

    Raises:
        OSError: the write or the rename failed; ``path`` is as it was.
    """
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_path(path, mode=mode) as staged:
        staged.write_bytes(payload)  # opening an existing file keeps the mode it was created with
    return Path(path)


def file_sha256(path: Path, *, block_bytes: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's contents, read in blocks (flat memory for any size)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(block_bytes):
            digest.update(block)
    return digest.hexdigest()


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is an ``OSError`` saying the disk (or the user's quota on it) is full."""
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS


def write_error(exc: OSError, *, full: str, other: Callable[[str], OmniWebError]) -> OmniWebError:
    """Our error for ``exc``, met while writing: :class:`DiskFullError` with the message ``full``
    when the disk is full, else ``other(reason)`` with the system's reason. Raise it ``from exc``."""
    if is_disk_full(exc):
        return DiskFullError(full)
    return other(str(exc.strerror or exc))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` (beside ``path``) while the block runs.

    For small JSON records read, changed and written by several processes (two converts, the app
    and a CLI run): the read-modify-write happens under the lock, the write itself stays atomic.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_name(path.name + ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
