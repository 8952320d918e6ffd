"""Every format's reader on real files written by others and on generated files with each trap.

Per format: the chapter count and titles, metadata, and that nothing that must not be read
(running heads, page numbers, footnotes, comments, Gutenberg licence) is in any chapter's text.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from omni_web.book import detect_format, load_book
from omni_web.book.epubout import write_book_epub
from omni_web.errors import DrmProtected, ScannedBook
from tests.conftest import DATA_DIR
from tests.formats_builder import (
    CHAPTER_TITLES,
    NEVER_READ,
    SPOKEN,
    docx_book,
    fb2_book,
    html_book,
    odt_book,
    text_book,
)
from tests.pdf_builder import CHAPTERS, RUNNING_HEAD, TITLE, encrypted_pdf, scanned_pdf, trap_book


def _text(book) -> str:
    return "\n".join(block.text for chapter in book.chapters for block in chapter.blocks)


def _selected_titles(book) -> list[str]:
    return [chapter.title for chapter in book.chapters if chapter.selected_by_default]


# --- real files -------------------------------------------------------------------------------


def test_gutenberg_text_has_its_twelve_chapters_and_no_licence() -> None:
    book = load_book(DATA_DIR / "pg11-alice.txt")
    assert book.source_format == "txt"
    assert book.metadata.title == "Alice's Adventures in Wonderland"
    assert book.metadata.authors == ("Lewis Carroll",) and book.metadata.language == "en"
    titles = _selected_titles(book)
    assert len(titles) == 12
    assert titles[0] == "CHAPTER I. Down the Rabbit-Hole" and titles[-1] == "CHAPTER XII. Alice’s Evidence"
    # The indented contents list is its own chapter, not twelve empty ones; it is not preselected.
    assert [(c.title, c.matter_reason) for c in book.chapters[:2]] == [("Title page", "title page"),
                                                                       ("Contents", "table of contents")]
    text = _text(book)
    assert "Project Gutenberg" not in text and "START OF THE" not in text
    assert text.count("Alice was beginning to get very tired") == 1


def test_outlined_latex_pdf_takes_its_chapters_from_the_bookmarks() -> None:
    book = load_book(DATA_DIR / "pdfminer-pagelabels.pdf")
    assert book.source_format == "pdf"
    assert _selected_titles(book) == ["First section", "Second section", "Third section",
                                      "Heading on Level 1 (section)"]
    assert (
        book.chapters[0].matter_reason == "table of contents"
    )  # the contents page before the first bookmark
    for chapter in book.chapters[1:]:
        # The foot's page numbers (iii, iv, 1, 2, 1) are not read.
        assert all(block.text not in ("iii", "iv", "1", "2") for block in chapter.blocks), chapter.blocks
    assert (
        book.chapters[3].blocks[1:] == book.chapters[3].blocks[1:2] * 2
    )  # "Some text here.." twice, page 3 too


def test_encrypted_pdfs_are_refused_as_protected_within_seconds(tmp_path: Path) -> None:
    for path in (DATA_DIR / "pdfminer-rc4-128.pdf", encrypted_pdf(tmp_path / "secret.pdf")):
        started = time.monotonic()
        with pytest.raises(DrmProtected, match="password-protected \\(encrypted\\) PDF"):
            load_book(path)
        assert time.monotonic() - started < 5


def test_scanned_pdf_is_refused_as_needing_ocr_within_seconds(tmp_path: Path) -> None:
    path = scanned_pdf(tmp_path / "scan.pdf", pages=40)
    started = time.monotonic()
    with pytest.raises(
        ScannedBook, match="is a scanned PDF: .* pictures with no text layer, so it needs OCR first"
    ):
        load_book(path)
    assert time.monotonic() - started < 5


def test_a_pdf_whose_first_pages_are_pictures_is_not_taken_for_a_scan(tmp_path: Path) -> None:
    book = load_book(scanned_pdf(tmp_path / "plates.pdf", pages=5, text_pages=6))
    assert (
        "The text begins after the plates." in _text(book)
        and _text(book).count("It goes on for a while") == 6
    )
    assert book.cover is not None and book.cover.media_type == "image/jpeg"  # page one's picture


def test_markdown_sections_are_chapters() -> None:
    book = load_book(DATA_DIR / "pdfminer-contributing.md")
    assert book.source_format == "markdown" and book.metadata.title == "Contributing guidelines"
    assert [c.title for c in book.chapters][1:] == [
        "How can I contribute?",
        "Guideline for creating issues",
        "Guideline for creating pull request",
        "Guideline for posting comments",
        "Guidelines for publishing",
        "Guideline for dependencies",
        "Getting started",
    ]
    assert "##" not in _text(book) and "](" not in _text(book)  # no Markdown syntax read aloud


def test_gutenberg_html_page_reads_its_chapter() -> None:
    book = load_book(DATA_DIR / "pg11-alice-chapter1.html")
    assert book.source_format == "html"
    assert [c.title for c in book.chapters] == ["CHAPTER I. Down the Rabbit-Hole"]
    assert book.chapters[0].word_count > 2000


def test_docx_footnotes_and_comments_are_not_read() -> None:
    for name in ("mammoth-footnotes.docx", "mammoth-comments.docx"):
        book = load_book(DATA_DIR / name)
        assert book.source_format == "docx"
        assert _text(book) == "Ouch."  # the body; "A tachyon walks into a bar." is the note or comment
    book = load_book(DATA_DIR / "python-docx-test.docx")
    assert [c.title for c in book.chapters] == ["python-docx was here!"]


def test_odt_sections_from_heading_levels_without_picture_captions() -> None:
    book = load_book(DATA_DIR / "odfpy-climate-change.odt")
    assert book.source_format == "odt" and book.metadata.title == "Climate change impact in Europe"
    titles = _selected_titles(book)
    assert (
        len(titles) == 9
        and titles[0] == "Climate change in context"
        and titles[-1] == "How we can adapt to change"
    )
    assert (
        book.chapters[1].blocks[1].text.startswith("The earth's climate")
    )  # not the picture's caption "Sun"


# --- generated files: the traps ----------------------------------------------------------------


@pytest.mark.parametrize("outline", [True, False], ids=["outline", "heading-sizes"])
def test_pdf_traps(tmp_path: Path, outline: bool) -> None:
    book = load_book(trap_book(tmp_path / "trap.pdf", outline=outline))
    assert book.metadata.title == TITLE and book.metadata.authors == ("Ada Lovelace-Byron",)
    assert _selected_titles(book) == list(CHAPTERS)
    one, two, three = (c for c in book.chapters if c.selected_by_default)
    text = _text(book)
    assert RUNNING_HEAD not in text and "- 3 -" not in text and "- 4 -" not in text  # head and folios dropped
    assert "remarkable night" in text and "lighthouse that had stood" in text  # hyphenation joined
    assert (
        "great gale" not in text and "storm1" not in text and "storm that" in text
    )  # footnote and its marker
    # A paragraph that runs over the page break is one paragraph; the blank line after it is a break.
    assert [b.text for b in two.blocks][1:] == [
        "A letter came with the supply boat on the first calm morning. The keeper read it twice at the "
        "window, then "
        "folded it into the pocket of his coat and went on with the work of the day, which was the same as "
        "every day.",
        "In the evening he wrote an answer by the lamp.",
    ]
    # The two-column page reads the left column, then the right one.
    assert three.blocks[1].text.startswith(
        "The harbour was full of boats when he came down at last, and the people"
    )
    assert three.blocks[2].text.startswith("His daughter stood at the end of the pier")
    assert len(one.blocks) == 3


def test_generated_formats_read_their_chapters_and_nothing_else(tmp_path: Path) -> None:
    for builder, kind in ((docx_book, "docx"), (odt_book, "odt"), (html_book, "html"), (fb2_book, "fb2")):
        book = load_book(builder(tmp_path / f"book.{kind}"))
        assert book.source_format == kind
        assert _selected_titles(book) == list(CHAPTER_TITLES), kind
        text = _text(book)
        assert all(sentence in text for sentence in SPOKEN), (kind, text)
        assert not [never for never in NEVER_READ if never in text], (kind, text)
        assert "never read" not in text and "[1]" not in text
    fb2 = load_book(tmp_path / "book.fb2")
    assert (fb2.metadata.series, fb2.metadata.series_index, fb2.metadata.isbn) == (
        "Coast Tales",
        "2",
        "9780306406157",
    )
    assert fb2.cover is not None and fb2.cover.media_type == "image/png"
    assert load_book(tmp_path / "book.odt").cover is not None  # the picture before the text
    import zipfile

    with zipfile.ZipFile(tmp_path / "book.fb2.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(tmp_path / "book.fb2", "book.fb2")  # as FictionBook libraries hand books out
    zipped = load_book(tmp_path / "book.fb2.zip")
    assert zipped.source_format == "fb2" and _selected_titles(zipped) == list(CHAPTER_TITLES)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "cp1252"])
def test_text_encodings_are_detected(tmp_path: Path, encoding: str) -> None:
    path = text_book(tmp_path / "book.txt", encoding=encoding)
    if encoding == "cp1252":  # a word only cp1252 spells so, for the detector to go on
        path.write_bytes(path.read_bytes().replace(b"town,", "town café — naïve,".encode("cp1252")))
    book = load_book(path)
    assert [c.title for c in book.chapters] == [
        "CHAPTER I. The Storm",
        "CHAPTER II. The Letter",
        "CHAPTER III. The Harbour",
    ]
    assert book.metadata.title == "The Lighthouse Keeper"
    assert "Project Gutenberg" not in _text(book)
    if encoding == "cp1252":
        assert "town café — naïve," in _text(book)


def test_content_decides_the_reader_not_the_name(tmp_path: Path) -> None:
    renamed = {
        "book.txt": trap_book(tmp_path / "a.pdf"),
        "book.epub": docx_book(tmp_path / "b.docx"),
        "book.doc.txt": odt_book(tmp_path / "c.odt"),
        "notes.md": fb2_book(tmp_path / "d.fb2"),
        "page.txt": html_book(tmp_path / "e.html"),
    }
    kinds = {}
    for name, source in renamed.items():
        target = tmp_path / name
        source.rename(target)
        kinds[name] = detect_format(target)
    assert kinds == {
        "book.txt": "pdf",
        "book.epub": "docx",
        "book.doc.txt": "odt",
        "notes.md": "fb2",
        "page.txt": "html",
    }
    assert detect_format(DATA_DIR / "pg11-alice.epub") == "epub"
    assert load_book(tmp_path / "book.epub").source_format == "docx"


def test_a_book_written_as_epub_has_one_page_per_chapter(tmp_path: Path) -> None:
    # EPUBCheck runs on the read-along EPUBs made from it (tests/test_convert_formats.py).
    book = load_book(trap_book(tmp_path / "trap.pdf"))
    epub = write_book_epub(book, tmp_path / "trap.epub")
    again = load_book(epub)
    assert [c.title for c in again.chapters] == [c.title for c in book.chapters]
    assert [c.source_href for c in book.chapters] == [f"chapter-{n:03d}.xhtml" for n in range(1, 5)]


def test_a_real_report_loses_its_heads_feet_and_footnotes_but_keeps_its_bulleted_paragraphs() -> None:
    book = load_book(DATA_DIR / "us-copyright-office-dmca.pdf")
    assert book.metadata.title == "The Digital Millennium Copyright Act of 1998"
    assert book.metadata.authors == ("United States Copyright Office - jmf",)
    text = "\n".join(b.text for c in book.chapters if c.selected_by_default for b in c.blocks)
    for furniture in ("Copyright Office Summary", "December 1998", "Pub. L. No. 105-304"):
        assert furniture not in text, furniture
    assert not re.search(r"\bPage \d", text)
    # No outline and no heading set larger than the body: chapters at the small bold capitals
    # standing alone before body text; the larger bold mixed-case section titles are headings inside.
    assert _selected_titles(book) == [
        "INTRODUCTION",
        "TITLE I: WIPO TREATY IMPLEMENTATION",
        "TITLE II: ONLINE COPYRIGHT INFRINGEMENT LIABILITY LIMITATION",
        "TITLE III: COMPUTER MAINTENANCE OR REPAIR",
        "TITLE IV: MISCELLANEOUS PROVISIONS",
        "TITLE V: PROTECTION OF CERTAIN ORIGINAL DESIGNS",
        "EFFECTIVE DATES",
    ]
    one = book.chapters[2]
    assert "Technical Amendments" in [b.text for b in one.blocks if b.is_heading]
    intro = next(c for c in book.chapters if c.title == "INTRODUCTION")
    assert [b.text for b in intro.blocks].count("INTRODUCTION") == 1  # the title said once
    starts = [b.text[:10] for b in intro.blocks]
    assert ["Title I, t", "Title II, ", "Title III,", "Title IV c", "Title V, t"] == [
        s for s in starts if s.startswith("Title ")
    ][:5]  # one paragraph per bullet
    assert "The DMCA is divided into five titles:" in starts[0] + " ".join(b.text for b in intro.blocks[:4])


def test_text_without_headings_is_one_chapter_named_after_the_book(tmp_path: Path) -> None:
    path = tmp_path / "A Short Note.txt"
    path.write_text("It was a dark night.\n\nThe end came soon after, as ends do.\n", encoding="utf-8")
    book = load_book(path)
    assert [(c.title, c.selected_by_default) for c in book.chapters] == [("A Short Note", True)]
