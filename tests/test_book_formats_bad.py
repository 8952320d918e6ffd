"""The EPUB reader's hostile-input rules hold for the other readers: size, time, memory, bombs, entities, paths."""

from __future__ import annotations

import os
import resource
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.book.mobi import convert_to_epub, is_drm_locked
from omni_web.book.options import ReadOptions
from omni_web.book.pdf import load_pdf
from omni_web.book.safety import ArchiveLimits
from omni_web.errors import DrmProtected, UnsafeBook, UnsupportedFormat
from tests.formats_builder import docx_book, fb2_book, html_book, odt_book, text_book
from tests.pdf_builder import trap_book

pytestmark = pytest.mark.slow  # subprocesses

_LOL = (
    '<!DOCTYPE x [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    + "]>"
)


def _rewrite(path: Path, member: str, change) -> Path:  # noqa: ANN001 - bytes -> bytes
    """The archive with one member's bytes changed (or added, when missing)."""
    out = path.with_name("changed-" + path.name)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        names = source.namelist()
        for name in names:
            data = source.read(name)
            target.writestr(name, change(data) if name == member else data)
        if member not in names:
            target.writestr(member, change(b""))
    return out


@pytest.mark.parametrize(
    "builder,member",
    [(docx_book, "word/media/zeros.bin"), (odt_book, "Pictures/zeros.bin")],
    ids=["docx", "odt"],
)
def test_zip_bombs_in_office_files_are_refused(tmp_path: Path, builder, member: str) -> None:  # noqa: ANN001
    path = _rewrite(builder(tmp_path / f"book.{member[:4]}"), member, lambda _: b"\0" * (4 * 1024 * 1024))
    with pytest.raises(UnsafeBook, match=r"zeros.bin, compressed \d+:1 .*decompression bomb"):
        load_book(path)
    with pytest.raises(UnsafeBook, match="limit for a whole book"):
        load_book(builder(tmp_path / "plain"), limits=ArchiveLimits(max_total_bytes=2_000))


def test_entity_declarations_are_refused_before_any_parser_sees_them(tmp_path: Path) -> None:
    odt = _rewrite(
        odt_book(tmp_path / "book.odt"),
        "content.xml",
        lambda data: data.replace(b"?>", b"?>" + _LOL.encode(), 1),
    )
    docx = _rewrite(
        docx_book(tmp_path / "book.docx"),
        "word/document.xml",
        lambda data: data.replace(b"?>", b"?>" + _LOL.encode(), 1),
    )
    fb2 = fb2_book(tmp_path / "book.fb2")
    fb2.write_text(
        fb2.read_text(encoding="utf-8").replace("?>", "?>" + _LOL, 1).replace("A short test novel", "&lol9;"),
        encoding="utf-8",
    )
    html = html_book(tmp_path / "book.html")
    html.write_text(_LOL + html.read_text(encoding="utf-8").replace("<!DOCTYPE html>", ""), encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for path in (odt, docx, fb2, html):
        with pytest.raises(UnsafeBook, match="entities"):
            load_book(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # no billion lols in memory


def test_single_file_formats_are_refused_over_their_size_limit(tmp_path: Path) -> None:
    small = ArchiveLimits(max_text_file_bytes=500, max_file_bytes=500)
    for path in (
        text_book(tmp_path / "b.txt"),
        html_book(tmp_path / "b.html"),
        fb2_book(tmp_path / "b.fb2"),
        trap_book(tmp_path / "b.pdf"),
    ):
        with pytest.raises(UnsafeBook, match="over the .* limit"):
            load_book(path, limits=small)


def test_pdf_layout_stops_at_its_time_limit(tmp_path: Path) -> None:
    with pytest.raises(UnsafeBook, match="took more than 0 s to lay out"):
        load_pdf(trap_book(tmp_path / "b.pdf"), max_seconds=0.0)


def test_password_protected_office_zip_is_refused(tmp_path: Path) -> None:
    path = docx_book(tmp_path / "book.docx")
    data = bytearray(path.read_bytes())
    data[6] |= 0x1  # the first local header's "encrypted" flag, as a password-protected ZIP has
    offset = data.rfind(b"PK\x01\x02")
    data[offset + 8] |= 0x1
    path.write_bytes(bytes(data))
    with pytest.raises(DrmProtected, match="password-protected ZIP"):
        load_book(path)


def test_an_odt_picture_outside_the_archive_is_not_the_cover(tmp_path: Path) -> None:
    path = _rewrite(
        odt_book(tmp_path / "book.odt"),
        "content.xml",
        lambda data: data.replace(b"Pictures/", b"../../../etc/"),
    )
    book = load_book(path)
    assert book.cover is None and book.chapters


def test_binary_garbage_is_no_book(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UnsupportedFormat, match="not a book format omni-web reads"):
        load_book(path)


def test_mobi_drm_is_refused_from_the_header_and_missing_calibre_is_named(tmp_path: Path) -> None:
    header = bytearray(200)
    header[60:68] = b"BOOKMOBI"
    header[78:82] = (90).to_bytes(4, "big")  # the first record starts at byte 90
    header[90 + 12 : 90 + 14] = (2).to_bytes(2, "big")  # Mobipocket DRM
    assert is_drm_locked(bytes(header))
    locked = tmp_path / "locked.azw3"
    locked.write_bytes(bytes(header))
    with pytest.raises(DrmProtected, match="locked with DRM"):
        load_book(locked)
    header[90 + 12 : 90 + 14] = b"\0\0"
    assert not is_drm_locked(bytes(header))
    with pytest.raises(
        UnsupportedFormat, match="needs calibre's ebook-convert, which is not installed.*apt install calibre"
    ):
        convert_to_epub(locked, tmp_path, which=lambda _name: None)


@pytest.mark.skipif(
    shutil.which("ebook-convert") is None,
    reason="calibre's ebook-convert is not installed (Debian: apt install calibre)",
)
def test_mobi_and_azw3_are_read_through_ebook_convert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from tests.conftest import DATA_DIR

    source = DATA_DIR / "hefty-water.epub"
    expected = [c.title for c in load_book(source).chapters]
    # ebook-convert behind a wrapper that counts its runs: the cache must make it one per book.
    runs, shim = tmp_path / "runs.log", tmp_path / "bin"
    shim.mkdir()
    (shim / "ebook-convert").write_text(
        f'#!/bin/sh\necho run >> "{runs}"\nexec "{shutil.which("ebook-convert")}" "$@"\n'
    )
    (shim / "ebook-convert").chmod(0o755)
    cache = ReadOptions(cache_dir=tmp_path / "state" / "converted")
    for suffix in (".mobi", ".azw3"):
        kindle = tmp_path / f"hefty{suffix}"
        subprocess.run(
            ["ebook-convert", str(source), str(kindle)], check=True, capture_output=True, timeout=300
        )
        monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
        started = time.monotonic()
        book = load_book(kindle, options=cache)
        again = load_book(kindle, options=cache)  # the job after the upload: no second conversion
        assert runs.read_text().count("run") == (1 if suffix == ".mobi" else 2)
        assert [c.title for c in again.chapters] == [c.title for c in book.chapters]
        monkeypatch.undo()
        assert book.source_format == "mobi" and book.source_path == kindle
        assert book.metadata.title == "Hefty Water"
        titles = [c.title for c in book.chapters if c.has_text and c.selected_by_default]
        assert titles == [t for t in expected if t in titles] and "The Switch" in titles
        assert all(c.source_href == f"chapter-{c.number:03d}.xhtml" for c in book.chapters)
        assert time.monotonic() - started < 120


def test_a_few_bytes_of_text_with_no_book_name_is_no_book(tmp_path: Path) -> None:
    scrap = tmp_path / "vm"
    scrap.write_bytes(b"vm")
    with pytest.raises(
        UnsupportedFormat, match=r"'vm' is not a book: it has no book extension and holds 1 word"
    ):
        load_book(scrap)
    # The same text named as a text book, or a real text under no book name, is still read.
    named = tmp_path / "notes.txt"
    named.write_text("A short note that is a book because its name says so.")
    assert load_book(named).chapters
    long = tmp_path / "README"
    long.write_text("Call me Ishmael. " * 200)
    assert load_book(long).chapters
