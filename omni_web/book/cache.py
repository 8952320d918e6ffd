"""The books an app session has open, each parsed once per version of its file.

The web UI asks for the loaded book on many events (the lexicon's sample sentence on every blur,
its candidates, the edit impact, the cast panel); parsing an EPUB each time costs seconds for a
long book. A book is keyed by its path, size, modification time and reader options, so a replaced
file (or a changed footnote setting) is read again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from omni_web.book.formats import load_book
from omni_web.book.model import Book
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions

__all__ = ["BookCache"]


class BookCache:
    """The last ``size`` books loaded, by file version; safe to share between threads."""

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._books: OrderedDict[tuple[str, int, int, ReadOptions], Book] = OrderedDict()

    def load(self, path: Path, *, options: ReadOptions = DEFAULT_OPTIONS) -> Book:
        """The book at ``path`` (see :func:`omni_web.book.load_book`, whose errors it raises)."""
        path = Path(path)
        try:
            stat = path.stat()
        except OSError:
            return load_book(path, options=options)  # its own error says what is wrong with the path
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, options)
        with self._lock:
            book = self._books.get(key)
            if book is not None:
                self._books.move_to_end(key)
                return book
        book = load_book(path, options=options)
        with self._lock:
            self._books[key] = book
            while len(self._books) > self._size:
                self._books.popitem(last=False)
        return book
