"""The UI's open books are parsed once per file version."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from omni_web.book.cache import BookCache
from omni_web.errors import BookError
from tests.conftest import DATA_DIR


def test_a_book_is_parsed_once_per_version_of_its_file(tmp_path: Path) -> None:
    path = tmp_path / "book.epub"
    shutil.copyfile(DATA_DIR / "pg11-alice.epub", path)
    cache = BookCache(size=2)
    first = cache.load(path)
    assert cache.load(path) is first  # the same parse, not a second one
    shutil.copyfile(DATA_DIR / "childrens-literature.epub", path)  # the file is replaced
    os.utime(path, ns=(1, 1))
    replaced = cache.load(path)
    assert replaced is not first and replaced.metadata.title != first.metadata.title


def test_a_missing_book_raises_the_readers_error(tmp_path: Path) -> None:
    with pytest.raises(BookError):
        BookCache().load(tmp_path / "gone.epub")


def test_another_footnote_setting_reads_the_book_again(tmp_path: Path) -> None:
    from omni_web.book.options import ReadOptions
    from tests.formats_builder import NEVER_READ, html_book

    path = html_book(tmp_path / "book.html")
    cache = BookCache()
    skipped = cache.load(path)
    moved = cache.load(path, options=ReadOptions(footnotes="end-of-paragraph"))
    assert moved is not skipped and cache.load(path) is skipped
    assert f"Note: {NEVER_READ[2]}" in [b.text for c in moved.chapters for b in c.blocks]
