"""Uploaded books are kept in the data root, once per content."""

from __future__ import annotations

import shutil

from omni_web.bookshelf import books_dir, store_book
from tests.conftest import DATA_DIR


def test_store_book_copies_once_per_content(data_paths, tmp_path):
    upload = tmp_path / "upload" / "tmpab12cd.epub"
    upload.parent.mkdir()
    shutil.copyfile(DATA_DIR / "hefty-water.epub", upload)
    kept = store_book(data_paths, upload, name="Hefty Water.epub")
    assert kept.parent == books_dir(data_paths)
    assert kept.name.endswith("-Hefty_Water.epub")
    assert kept.read_bytes() == upload.read_bytes()
    upload.unlink()  # Gradio cleans its upload folder; the kept copy stays
    again_src = tmp_path / "again.epub"
    shutil.copyfile(DATA_DIR / "hefty-water.epub", again_src)
    assert store_book(data_paths, again_src, name="Hefty Water.epub") == kept
    other = store_book(data_paths, DATA_DIR / "wasteland.epub")
    assert other != kept and other.is_file()
    assert sorted(p.name for p in books_dir(data_paths).iterdir()) == sorted([kept.name, other.name])
