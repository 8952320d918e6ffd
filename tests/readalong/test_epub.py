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
from omni_web.readalong.tidy import unwrap_switches
from tests.conftest import DATA_DIR
from tests.epub_builder import make_epub, nav_xhtml, xhtml
from tests.readalong.checks import check_overlays, epubcheck_errors

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, EPUBCheck

# (book, how many of its default chapters to overlay)
BOOKS = [("wasteland.epub", 5), ("hefty-water.epub", 4), ("regime-anticancer-arabic.epub", 4),
         ("childrens-literature.epub", 3), ("pg11-alice.epub", 3)]
_SECONDS_PER_CHAR = 0.01


def _silence(path: Path, seconds: float) -> Path:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=24000:cl=mono",
                    "-t", f"{seconds:.3f}", "-c:a", "flac", str(path)], check=True, timeout=120)
    return path


def _overlay_chapters(
    book_path: Path, count: int | None, folder: Path, *, pause_s: float = 0.3
) -> list[OverlayChapter]:
    """The first ``count`` default chapters (all with None), timed from their chunks' characters
    over silent chapter files, as a conversion with no ASR model would time them."""
    book = load_book(book_path)
    out = []
    for chapter in [c for c in book.chapters if c.selected_by_default][:count]:
        spans, clock = [], 0.0
        for chunk in chunk_chapter(chapter, chunk_words=60):
            length = 0.2 + _SECONDS_PER_CHAR * len(chunk.text)
            spans.append(ChunkSpan(chunk.index, chunk.text, Path("unused.wav"), clock, clock + length))
            clock += length + pause_s
        audio = _silence(folder / f"{chapter.number:03d}.flac", clock)
        timings = chapter_timings(
            spans,
            [None] * len(spans),
            number=chapter.number,
            title=chapter.title,
            audio_path=audio,
            duration_s=clock,
        )
        following = (
            book.chapters[chapter.index + 1].source_href if chapter.index + 1 < len(book.chapters) else None
        )
        out.append(OverlayChapter(timings, chapter.source_href, following))
    return out


def _normalised(lines: list[str], epub: Path) -> set[str]:
    return {re.sub(r"^.*?" + re.escape(epub.name), "", line) for line in lines}


def _body_text(data: bytes, *, fallback_only: bool = False) -> str:
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True))
    if fallback_only:
        unwrap_switches(root)  # the read-along keeps a deprecated epub:switch's fallback only
    body = root.find("{http://www.w3.org/1999/xhtml}body")
    return "".join(body.itertext()) if body is not None else ""


@pytest.mark.parametrize(("name", "count"), BOOKS, ids=[b for b, _ in BOOKS])
def test_readalong_epub_passes_epubcheck_and_its_overlays_point_at_real_text(
    name: str, count: int, tmp_path: Path
) -> None:
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
        assert (
            after.infolist()[0].filename == "mimetype"
            and after.infolist()[0].compress_type == zipfile.ZIP_STORED
        )
        for info in before.infolist():
            old, new = before.read(info.filename), after.read(info.filename)
            if info.filename.endswith((".xhtml", ".html", ".htm")) and old != new:
                # Pages change only by spans: the text is the same, character for character (an
                # epub:switch, deprecated, by its fallback); a nav document may gain its <title>.
                assert _body_text(new) == _body_text(old, fallback_only=True), info.filename
                assert b'<span id="ra' in new or b"<!DOCTYPE html>" in new  # an EPUB 2 page lifted to EPUB 3
            elif info.filename.endswith(".css") and old != new:
                # A stylesheet changes only by the highlight rule at its end.
                assert new.startswith(old) and b"-epub-media-overlay-active" in new[len(old) :], info.filename
            elif not info.filename.endswith(".opf") and not info.filename.endswith(
                (".xhtml", ".html", ".htm")
            ):
                assert new == old, info.filename


_SMIL_NS = "{http://www.w3.org/ns/SMIL}"


def test_a_spoken_title_the_page_does_not_print_plays_with_the_first_sentence(tmp_path: Path) -> None:
    # Two chapters on one page whose headings exist only in the table of contents: chunking speaks
    # each title as its own chunk. The second title is printed in the first chapter's text, where
    # the overlay must not point (the reader would be sent back up the page while it is spoken).
    page = xhtml(
        '<section id="c1"><p>The apples were ripe at last. Everyone came to pick them.</p>'
        "<p>Next they would find the garden gate.</p></section>"
        '<section id="c2"><p>Rain fell all day long. Nobody went out.</p></section>',
        title="Chapters",
    )
    nav = nav_xhtml([("ch.xhtml#c1", "The Orchard"), ("ch.xhtml#c2", "The Garden Gate")]).replace(
        "<title></title>", "<title>Contents</title>"
    )
    source = make_epub(tmp_path / "book.epub", [("ch.xhtml", page)], nav=nav)
    overlays = _overlay_chapters(source, None, tmp_path, pause_s=0.9)
    for overlay in overlays:  # each title is spoken as a chunk of its own
        assert overlay.timings.sentences[0].text == overlay.timings.title
        assert overlay.timings.sentences[0].chunk_index == 0 != overlay.timings.sentences[1].chunk_index
    out = tmp_path / "Book.readalong.epub"
    result = write_readalong_epub(source, overlays, out)
    assert epubcheck_errors(out) == []
    rows = check_overlays(out, tmp_path)  # the clips tile each chapter's audio, title included
    assert result.placed == result.sentences - 2  # every sentence but the two titles
    with zipfile.ZipFile(out) as archive:
        marked = archive.read("OEBPS/ch.xhtml").decode()
        smil = etree.fromstring(archive.read(next(n for n in archive.namelist() if n.endswith(".smil"))))
    # The second chapter's title, printed inside the first chapter, is left alone.
    assert "find the garden gate." in marked and 'id="ra002' not in marked.split('id="c2"')[0]
    seqs = list(smil.iter(f"{_SMIL_NS}seq"))
    assert len(seqs) == 2 and sum(len(r) for r in rows.values()) == result.placed
    for seq, overlay in zip(seqs, overlays, strict=True):
        first = seq.find(f"{_SMIL_NS}par")
        text_src = first.find(f"{_SMIL_NS}text").get("src")
        clip = first.find(f"{_SMIL_NS}audio")
        sentences = overlay.timings.sentences
        # The first par is the chapter's first printed sentence, heard from the chapter's first
        # moment: the spoken title and its pause, then the sentence, up to the next sentence.
        assert text_src.endswith(f"#ra{overlay.timings.number:03d}s0002")
        assert sentences[0].text == overlay.timings.title and sentences[1].start_s > 1.0
        assert clip.get("clipBegin") == "0.000s"
        assert float(clip.get("clipEnd")[:-1]) == pytest.approx(sentences[2].start_s, abs=0.001)
        span_text = marked.split(f'id="ra{overlay.timings.number:03d}s0002">')[1].split("</span>")[0]
        assert span_text == sentences[1].text
