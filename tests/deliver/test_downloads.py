"""A finished book's downloads with real ffmpeg: the MP3 zip cut from the m4b (names, durations,
ID3 tags and cover read back), cached; the streamed zip of everything; a full disk said plainly."""

from __future__ import annotations

import errno
import io
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from omni_web.assemble import AudiobookTags, probe_duration_ms, probe_streams, probe_tags
from omni_web.deliver import downloads as dl
from omni_web.errors import DiskFullError
from tests.book_audio import m4b_book

pytestmark = pytest.mark.slow  # real ffmpeg and ffprobe

TAGS = AudiobookTags(title="Two Voices", author="Test Writer", narrator="Vivian", year=1901)
SECONDS = (1.2, 0.8, 1.5)


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)  # noqa: S603 - fixed argv


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> dl.BookDownloads:
    """A library-layout folder: the m4b (three chapters, tags, cover), its EPUB, two subtitles."""
    folder = tmp_path_factory.mktemp("book") / "Test Writer" / "Two Voices {Vivian}"
    folder.mkdir(parents=True)
    chapters = []
    for number, (title, seconds) in enumerate(
        zip(("Opening", "The Switch", "Why? / How"), SECONDS, strict=True), 1
    ):
        wav = folder.parent / f"{number}.wav"
        _ffmpeg("-f", "lavfi", "-i", f"sine=f={300 + 100 * number}:r=24000:d={seconds}", str(wav))
        chapters.append((title, wav))
    cover = folder / "cover.jpg"
    _ffmpeg("-f", "lavfi", "-i", "testsrc=s=300x450", "-frames:v", "1", str(cover))
    m4b = m4b_book(chapters, folder / "Two Voices.m4b", tags=TAGS, cover=cover)
    (folder / "Two Voices.readalong.epub").write_bytes(b"PK epub")
    for name in ("Two Voices - 01 - Opening.vtt", "Two Voices - 01 - Opening.srt", "Other - 01 - X.vtt"):
        (folder / name).write_text("WEBVTT\n")
    return dl.book_downloads(m4b)


def test_the_book_files_are_found_and_subtitles_named_by_chapter(book: dl.BookDownloads) -> None:
    assert book.readalong is not None and book.readalong.name == "Two Voices.readalong.epub"
    assert [book.subtitle_name(p) for p in book.subtitles] == ["01 - Opening.vtt", "01 - Opening.srt"]
    assert book.cover is not None and book.cover.name == "cover.jpg"


def test_mp3_zip_is_cut_from_the_m4b_tagged_and_cached(book: dl.BookDownloads, tmp_path: Path) -> None:
    made = dl.mp3_zip(book)
    assert made.parent.name == dl.CACHE_DIR and made.parent.parent == book.book.parent
    with zipfile.ZipFile(made) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path)
    assert names == ["01 - Opening.mp3", "02 - The Switch.mp3", "03 - Why_ _ How.mp3", "cover.jpg"]
    mp3s = sorted(tmp_path.glob("*.mp3"))
    assert len(mp3s) == 3
    for number, (path, seconds) in enumerate(zip(mp3s, SECONDS, strict=True), 1):
        assert abs(probe_duration_ms(path) - seconds * 1000) < 150, path  # each chapter, not the book
        tags = probe_tags(path)
        assert (
            tags["album"] == "Two Voices" and tags["artist"] == "Test Writer" and tags["composer"] == "Vivian"
        )
        assert tags["track"] == f"{number}/3" and tags["date"] == "1901"
        assert any(s.attached_pic for s in probe_streams(path))  # the cover inside every MP3
    assert probe_tags(mp3s[1])["title"] == "The Switch"
    # A second call is the cached file, untouched.
    stamp = made.stat().st_mtime_ns
    assert dl.mp3_zip(book) == made and made.stat().st_mtime_ns == stamp
    assert dl.cached_downloads(book.book) == [made]


def test_everything_streams_as_one_zip(book: dl.BookDownloads) -> None:
    members = dl.everything_members(book)
    data = b"".join(dl.stream_zip(members))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert archive.read("Two Voices.m4b") == book.book.read_bytes()
    assert names[0] == "Two Voices.m4b" and "Two Voices.readalong.epub" in names and "cover.jpg" in names
    assert sum(n.startswith("MP3/") and n.endswith(".mp3") for n in names) == 3
    assert "Subtitles/01 - Opening.vtt" in names and not any("Other" in n for n in names)


def test_a_full_disk_is_said_plainly(book: dl.BookDownloads, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = dl.BookDownloads(book=book.book, cover=None)
    monkeypatch.setattr(
        dl.BookDownloads, "cached_zip", lambda self: book.book.parent / dl.CACHE_DIR / "full.zip"
    )

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(dl, "_zip_files", full)
    with pytest.raises(DiskFullError, match="is full, so the MP3 zip could not be made. Free some space"):
        dl.mp3_zip(fresh)
    assert not (book.book.parent / dl.CACHE_DIR / "full.zip").exists()


def test_a_zip_link_never_leaves_the_page_and_its_headers_go_out_before_the_mp3s_are_cut(
    book: dl.BookDownloads, tmp_path: Path
) -> None:
    import asyncio
    import shutil

    from fastapi.responses import StreamingResponse

    from omni_web.ui import downloads as ui_downloads

    folder = tmp_path / "Two Voices {Vivian}"
    shutil.copytree(book.book.parent, folder, ignore=shutil.ignore_patterns(dl.CACHE_DIR))
    fresh = dl.book_downloads(folder / book.book.name)
    html = ui_downloads.shelf_links_html(
        type("Shelf", (), {"audio": fresh.book, "readalong": None, "id": "b1"})()
    )
    for link in ("mp3", "all"):  # both zips are saved, never opened in the page
        assert re.search(rf'id="shelf-b1-download-{link}" [^>]* download>', html), html
    for kind in ("mp3.zip", "all.zip"):
        for old in dl.cached_downloads(fresh.book):
            old.unlink()
        response = ui_downloads._serve(fresh, kind)
        assert isinstance(response, StreamingResponse) and not fresh.cached_zip().exists(), kind

        async def body(response: StreamingResponse = response) -> bytes:
            return b"".join([chunk async for chunk in response.body_iterator])

        with zipfile.ZipFile(io.BytesIO(asyncio.run(body()))) as archive:
            mp3s = [n for n in archive.namelist() if n.endswith(".mp3")]
        assert len(mp3s) == 3 and fresh.cached_zip().is_file(), kind
