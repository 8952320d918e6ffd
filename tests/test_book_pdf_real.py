"""The PDF reader on real files by others (tests/data/corpus/pdf): what a listener would hear.

Each test reads one or two small files of the corpus; the whole corpus is graded by
tests/test_book_corpus.py and bench/bench_corpus.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.book.pdfglyphs import builtin_text_map
from omni_web.cli import main
from omni_web.errors import NotAnEpub, ScannedBook
from omni_web.ui.book_panel import book_header_html
from tests.conftest import DATA_DIR

PDFS = DATA_DIR / "corpus" / "pdf"


def _spoken(path: Path) -> str:
    book = load_book(path)
    return " ".join(block.text for chapter in book.chapters for block in chapter.blocks)


def test_a_two_column_paper_is_read_column_by_column_as_pdfminer_reads_it() -> None:
    from pdfminer.high_level import extract_text

    path = PDFS / "sample-files-latex-multicolumn.pdf"
    ours = _spoken(path)
    # pdfminer's own plain extraction keeps the columns apart: the same sentences in the same order.
    plain = " ".join(extract_text(path).replace("-\n", "").split())
    probes = [
        "This is a sample document with two columns",
        "Lorem ipsum dolor sit amet",
        "pellentesque ante.",
        "Maecenas lacinia.",
        "Quisque ullamcorper placerat ipsum.",
    ]
    assert [ours.index(p) for p in probes] == sorted(ours.index(p) for p in probes)
    assert [plain.index(p) for p in probes] == sorted(plain.index(p) for p in probes)
    assert "Maecewith" not in ours and "Sed diam turpis, This is" not in ours


def test_overprinted_bold_is_read_once() -> None:
    spoken = _spoken(PDFS / "pdfplumber-french-chapter.pdf")
    assert spoken.count("UE 8. Circulation - Métabolismes") == 1
    assert (
        "N°265. Troubles de l’équilibre acido-basique et désordres hydro-électrolytiques. N°265" not in spoken
    )


def test_a_tex_symbol_font_is_read_through_its_own_encoding() -> None:
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfinterp import PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    with (PDFS / "sample-files-geotopo-de.pdf").open("rb") as handle:
        document = PDFDocument(PDFParser(handle))
        manager = PDFResourceManager()
        page = next(p for i, p in enumerate(PDFPage.create_pages(document)) if i == 12)
        fonts = {name: resolve1(spec) for name, spec in resolve1(page.resources["Font"]).items()}
        cmsy = next(spec for spec in fonts.values() if "CMSY10" in resolve1(spec["BaseFont"]).name)
        mapping = builtin_text_map(manager.get_font(None, cmsy))
    # pdfminer reads code 0x32 through the standard encoding as "2"; the font says "element".
    assert mapping[0x32] == "∈" and mapping[0x12] == "⊆"


@pytest.mark.slow  # a 117-page book
def test_a_latex_book_has_no_glyph_placeholders_and_says_what_it_left_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = PDFS / "sample-files-geotopo-de.pdf"
    book = load_book(path)
    spoken = " ".join(block.text for chapter in book.chapters for block in chapter.blocks)
    assert "(cid:" not in spoken and "⊆" in spoken
    # Running heads change with the section ("1.1. TOPOLOGISCHE RÄUME", "1.2. METRISCHE RÄUME"): found by
    # their place and type, none is read; the contents page is a chapter of its own, not read by default.
    assert not re.search(r"\d\.\d\. [A-ZÄÖÜ]{4,} [A-ZÄÖÜ]{4,}", spoken)
    assert "Dieses Skript wurde im Wintersemester 2013/2014" in spoken and "1.2 Metrische Räume" in spoken
    contents = next(c for c in book.chapters if c.title == "Inhaltsverzeichnis")
    assert contents.matter_reason == "table of contents" and not contents.selected_by_default
    assert not any(
        ". . . ." in block.text for c in book.chapters if c.selected_by_default for block in c.blocks
    )
    assert len(book.warnings) == 1 and re.search(
        r"[\d,]+ letters or symbols .* were left out", book.warnings[0]
    )
    assert book.warnings[0] in book_header_html(book).replace("&#x27;", "'")
    import omni_web.cli.chapters as chapters_cli

    monkeypatch.setattr(chapters_cli, "load_book", lambda *_args, **_kw: book)  # read once: 117 pages
    assert main(["chapters", str(path)]) == 0
    assert f"Warning: {book.warnings[0]}" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["sample-files-pdf-annotator-scan.pdf", "pdfjs-scan-bad.pdf"])
def test_a_picture_with_a_watermark_or_stray_word_still_needs_ocr(name: str) -> None:
    with pytest.raises(ScannedBook, match=rf"'{re.escape(name)}' is a scanned PDF: .*stray words.*needs OCR"):
        load_book(PDFS / name)


def test_a_text_layer_in_fonts_without_letters_needs_ocr() -> None:
    with pytest.raises(
        ScannedBook, match=r"'pdfjs-tamreview.pdf' has a text layer that cannot be read: .*OCR"
    ):
        load_book(PDFS / "pdfjs-tamreview.pdf")


@pytest.mark.parametrize(
    "name", ["pdfjs-tracemonkey-truncated.pdf", "sample-files-pdflatex-outline-truncated.pdf"]
)
def test_a_truncated_pdf_is_told_damaged_not_scanned(name: str) -> None:
    with pytest.raises(
        NotAnEpub, match=rf"'{re.escape(name)}' is a damaged PDF: the file is cut short.*again"
    ):
        load_book(PDFS / name)


def test_an_outline_whose_titles_are_not_the_headings_is_not_trusted() -> None:
    # Outline: "First", "Tenth", "Fifteenth"...; the pages say "1 Foo", "2 Bar", ...: the headings win.
    book = load_book(PDFS / "sample-files-mistitled-outlines.pdf")
    titles = [c.title for c in book.chapters if c.selected_by_default]
    assert titles == ["1 Foo", "2 Bar", "3 Baz", "4 Foo", "5 Bar", "6 Baz", "7 Foo", "8 Bar", "9 Baz"]


def test_an_outline_that_agrees_is_kept_with_two_same_titled_sections_on_one_page() -> None:
    book = load_book(PDFS / "sample-files-pdflatex-outline.pdf")
    chapters = [c for c in book.chapters if c.selected_by_default]
    assert [c.title for c in chapters] == ["Foo", "Bar", "Baz"] * 3
    assert chapters[3].blocks[0].text == "4 Foo" and "4 Foo" not in " ".join(
        b.text for b in chapters[2].blocks
    )


def test_a_three_column_gazette_reads_column_by_column_without_its_printer_slug() -> None:
    book = load_book(PDFS / "pdfplumber-federal-register.pdf")
    spoken = " ".join(block.text for chapter in book.chapters for block in chapter.blocks)
    assert (
        "The FAA is proposing this AD to address the unsafe condition on these products. DATES: The FAA must "
        "receive comments on this proposed AD by September 21, 2020." in spoken
    )
    assert "VerDate" not in spoken and "Jkt 250001" not in spoken  # the printer's slug under each page
    assert not re.search(
        r"\b47\d{3}\b", " ".join(c.title for c in book.chapters)
    )  # page numbers are no chapters


def test_a_papers_title_and_authors_are_its_title_page() -> None:
    book = load_book(PDFS / "pdfjs-tracemonkey.pdf")
    assert book.chapters[0].matter_reason == "title page" and "Andreas Gal" in book.chapters[0].blocks[1].text
    titles = [c.title for c in book.chapters if c.selected_by_default]
    assert titles[:4] == ["Abstract", "1. Introduction", "2. Overview: Example Tracing Run", "3. Trace Trees"]
