"""Other scripts: CJK books measured in characters; SVG text of fixed-layout pages read in visual order."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from omni_web.book import chapter_rows, load_book
from omni_web.book.summary import CJK_CHARS_PER_MINUTE, book_size
from omni_web.book.svgtext import svg_paragraphs
from omni_web.cli import main
from omni_web.errors import EmptyBook
from omni_web.ui.book_panel import book_header_html, chapter_choices
from tests.epub_builder import make_epub, xhtml

SVG = "http://www.w3.org/2000/svg"
JAPANESE = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。" * 40


def _svg(body: str, attrs: str = "") -> etree._Element:
    return etree.fromstring(f'<svg xmlns="{SVG}" viewBox="0 0 600 800" {attrs}>{body}</svg>')


def test_cjk_chapters_are_measured_in_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make_epub(tmp_path / "neko.epub", (("c.xhtml", xhtml(f"<h1>第一章</h1><p>{JAPANESE}</p>")),),
                     language="ja", title="吾輩は猫である")
    book = load_book(path)
    row = chapter_rows(book)[0]
    characters = len(JAPANESE.replace("。", "")) + 3  # the heading's three characters
    assert row.characters == characters and row.size.words == 0
    assert row.size_str == f"{characters:,} characters"
    assert row.estimated_seconds == pytest.approx(characters * 60 / CJK_CHARS_PER_MINUTE)
    assert book_size(book).size_str == f"{characters:,} characters"
    assert f"{characters:,} characters" in book_header_html(book)
    assert chapter_choices(book)[0][0][0].endswith(f"{characters:,} characters")
    assert main(["chapters", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"({characters:,} characters, about 4 min of audio)" in out and f"{characters:,} ch" in out


def test_mixed_and_latin_sizes() -> None:
    from omni_web.book.summary import TextSize
    assert TextSize(2153).size_str == "2,153 words"
    assert TextSize(10, 300).size_str == "10 words, 300 characters"
    assert TextSize(150, 300).estimated_seconds == pytest.approx(60 + 60)


def test_svg_lines_are_read_in_visual_order_whatever_the_document_order() -> None:
    svg = _svg(
        '<g transform="translate(0,100)">'
        '<text x="300" y="40" font-size="20">du soir.</text>'
        '<text x="50" y="40" font-size="20">au bord</text>'
        '<text x="50" y="0" font-size="20">Il était une fois un loup qui mar-</text>'
        '<text x="50" y="20" font-size="20">chait</text>'
        "</g>"
        '<text transform="matrix(1 0 0 1 50 400)" font-size="20">Le lendemain, il plut.</text>'
        "<defs><text>hidden template</text></defs>"
    )
    assert svg_paragraphs(svg) == [
        "Il était une fois un loup qui marchait au bord du soir.",
        "Le lendemain, il plut.",
    ]


def test_svg_tspans_rtl_and_vertical() -> None:
    spans = _svg(
        '<text x="10" y="50" font-size="10"><tspan x="10" y="60">second</tspan>'
        '<tspan x="10" y="50">first</tspan></text>'
    )
    assert svg_paragraphs(spans) == ["first second"]
    rtl = _svg(
        '<text x="100" y="10" direction="rtl">مرحبا</text><text x="200" y="10" direction="rtl">قال</text>'
    )
    assert svg_paragraphs(rtl) == ["قال مرحبا"]
    vertical = _svg(
        '<g writing-mode="tb"><text x="100" y="10">二列目</text><text x="120" y="10">一列目</text></g>'
    )
    assert svg_paragraphs(vertical) == ["一列目二列目"]
    assert svg_paragraphs(_svg('<rect width="5" height="5"/>')) == []


def _fixed_layout(path: Path, pages: list[tuple[str, str]], media: str = "application/xhtml+xml") -> Path:
    manifest = "".join(
        f'<item id="p{i}" href="{name}" media-type="{media}"/>' for i, (name, _) in enumerate(pages)
    )
    spine = "".join(f'<itemref idref="p{i}"/>' for i in range(len(pages)))
    opf = (
        '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="uid">urn:test:fxl</dc:identifier><dc:title>Le '
        'Loup</dc:title><dc:language>fr</dc:language>'
        '<meta property="rendition:layout">pre-paginated</meta></metadata>'
        f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
    )
    return make_epub(path, pages, opf=opf)


def test_french_fixed_layout_book_is_read_not_refused(tmp_path: Path) -> None:
    page = xhtml(
        f'<svg xmlns="{SVG}" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 600 800">'
        '<image width="600" height="800" xlink:href="page1.jpg"/>'
        '<text x="40" y="120" font-size="24">en 1851 chez M. Dupont.</text>'
        '<text x="40" y="90" font-size="24">Il arriva le 1er mai</text></svg>'
    )
    svg_page = (
        f'<svg xmlns="{SVG}" viewBox="0 0 600 800"><text x="40" y="200" font-size="24">tard.</text>'
        '<text x="40" y="170" font-size="24">Le loup revint</text></svg>'
    )
    path = _fixed_layout(tmp_path / "fxl.epub", [("p1.xhtml", page)])
    book = load_book(path)
    texts = [b.text for c in book.chapters for b in c.blocks]
    assert texts == ["Il arriva le 1er mai en 1851 chez M. Dupont."]
    svg_book = load_book(
        _fixed_layout(tmp_path / "svgpages.epub", [("p1.svg", svg_page)], media="image/svg+xml")
    )
    assert [b.text for c in svg_book.chapters for b in c.blocks] == ["Le loup revint tard."]


def test_picture_only_fixed_layout_is_refused_clearly(tmp_path: Path) -> None:
    page = xhtml(
        f'<svg xmlns="{SVG}" xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="p.jpg"/></svg>'
    )
    with pytest.raises(EmptyBook, match="fixed-layout book whose 1 pages are pictures with no text layer"):
        load_book(_fixed_layout(tmp_path / "pictures.epub", [("p1.xhtml", page)]))
