"""``<Title>.readalong.epub`` from every fixture book passes epubcheck, and its overlays are sound."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from omni_web.book import chunk_chapter, load_book
from omni_web.readalong import ChunkSpan, OverlayChapter, chapter_timings, write_readalong_epub
from tests.conftest import DATA_DIR
from tests.readalong.checks import check_overlays, epubcheck_errors

# (book, how many of its default chapters to overlay)
BOOKS = [("wasteland.epub", 5), ("hefty-water.epub", 4), ("regime-anticancer-arabic.epub", 4),
         ("childrens-literature.epub", 3), ("pg11-alice.epub", 3)]
_SECONDS_PER_CHAR = 0.01


def _silence(path: Path, seconds: float) -> Path:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=24000:cl=mono",
                    "-t", f"{seconds:.3f}", "-c:a", "flac", str(path)], check=True, timeout=120)
    return path


def _overlay_chapters(book_path: Path, count: int, folder: Path) -> list[OverlayChapter]:
    book = load_book(book_path)
    out = []
    for chapter in [c for c in book.chapters if c.selected_by_default][:count]:
        spans, clock = [], 0.0
        for chunk in chunk_chapter(chapter, chunk_words=60):
            length = 0.2 + _SECONDS_PER_CHAR * len(chunk.text)
            spans.append(ChunkSpan(chunk.index, chunk.text, Path("unused.wav"), clock, clock + length))
            clock += length + 0.3
        audio = _silence(folder / f"{chapter.number:03d}.flac", clock)
        timings = chapter_timings(spans, [None] * len(spans), number=chapter.number, title=chapter.title,
                                  audio_path=audio, duration_s=clock)
        following = book.chapters[chapter.index + 1].source_href if chapter.index + 1 < len(book.chapters) else None
        out.append(OverlayChapter(timings, chapter.source_href, following))
    return out


def _normalised(lines: list[str], epub: Path) -> set[str]:
    return {re.sub(r"^.*?" + re.escape(epub.name), "", line) for line in lines}


def _body_text(data: bytes) -> str:
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True))
    body = root.find("{http://www.w3.org/1999/xhtml}body")
    return "".join(body.itertext()) if body is not None else ""


@pytest.mark.parametrize(("name", "count"), BOOKS, ids=[b for b, _ in BOOKS])
def test_readalong_epub_passes_epubcheck_and_its_overlays_point_at_real_text(name: str, count: int,
                                                                             tmp_path: Path) -> None:
    source = DATA_DIR / name
    chapters = _overlay_chapters(source, count, tmp_path)
    out = tmp_path / "Book.readalong.epub"
    result = write_readalong_epub(source, chapters, out)
    assert result.placed_share > 0.8  # spoken titles that the page does not print have no text to point at
    # The original's own faults (childrens-literature's NCX) may remain; we add none.
    errors = epubcheck_errors(out)
    if errors:
        assert _normalised(errors, out) - _normalised(epubcheck_errors(source), source) == set()
    overlays = check_overlays(out, tmp_path)
    assert sum(len(rows) for rows in overlays.values()) == result.placed
    with zipfile.ZipFile(source) as before, zipfile.ZipFile(out) as after:
        assert after.infolist()[0].filename == "mimetype" and after.infolist()[0].compress_type == zipfile.ZIP_STORED
        for info in before.infolist():
            old, new = before.read(info.filename), after.read(info.filename)
            if info.filename.endswith((".xhtml", ".html", ".htm")) and old != new:
                # Pages change only by spans: the text is the same, character for character.
                assert _body_text(new) == _body_text(old), info.filename
                assert b'<span id="ra' in new or b"<!DOCTYPE html>" in new  # an EPUB 2 page lifted to EPUB 3
            elif not info.filename.endswith(".opf") and not info.filename.endswith((".xhtml", ".html", ".htm")):
                assert new == old, info.filename
