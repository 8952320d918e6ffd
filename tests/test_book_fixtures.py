"""The five real EPUBs in tests/data load with real chapter titles and sensible preselection."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from omni_web.book import Book, chapter_rows, load_book
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # every real EPUB fixture through the reader

FIXTURES = sorted(p.name for p in DATA_DIR.glob("*.epub"))


@cache
def _book(name: str) -> Book:
    return load_book(DATA_DIR / name)


def _text(book: Book, index: int) -> str:
    return " ".join(block.text for block in book.chapters[index].blocks)


def _titles(book: Book) -> list[str]:
    return [chapter.title for chapter in book.chapters]


def test_every_fixture_is_present() -> None:
    assert FIXTURES == [
        "childrens-literature.epub",
        "hefty-water-series.epub",
        "hefty-water.epub",
        "pg11-alice.epub",
        "regime-anticancer-arabic.epub",
        "wasteland.epub",
    ]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_loads_with_consistent_chapters(name: str) -> None:
    book = _book(name)
    assert book.source_path == DATA_DIR / name
    assert book.metadata.title
    assert [c.index for c in book.chapters] == list(range(len(book.chapters)))
    for chapter in book.chapters:
        assert chapter.title.strip()
        assert chapter.selected_by_default == (chapter.matter_reason == "" and chapter.word_count > 0)
        assert chapter.source_href
    assert any(c.selected_by_default for c in book.chapters)


def test_alice_real_titles_and_gutenberg_matter() -> None:
    book = _book("pg11-alice.epub")
    assert book.metadata.title == "Alice's Adventures in Wonderland"
    assert book.metadata.authors == ("Lewis Carroll",)
    assert book.metadata.language == "en"
    assert book.metadata.year == 2008  # the publication date, not the conversion date
    assert book.cover is not None and book.cover.media_type == "image/jpeg"
    assert book.cover.extension == "jpg" and book.cover.data[:2] == b"\xff\xd8"
    selected = [c for c in book.chapters if c.selected_by_default]
    assert [c.title for c in selected] == [
        "CHAPTER I. Down the Rabbit-Hole",
        "CHAPTER II. The Pool of Tears",
        "CHAPTER III. A Caucus-Race and a Long Tale",
        "CHAPTER IV. The Rabbit Sends in a Little Bill",
        "CHAPTER V. Advice from a Caterpillar",
        "CHAPTER VI. Pig and Pepper",
        "CHAPTER VII. A Mad Tea-Party",
        "CHAPTER VIII. The Queen’s Croquet-Ground",
        "CHAPTER IX. The Mock Turtle’s Story",
        "CHAPTER X. The Lobster Quadrille",
        "CHAPTER XI. Who Stole the Tarts?",
        "CHAPTER XII. Alice’s Evidence",
    ]
    by_title = {c.title: c for c in book.chapters}
    licence = by_title["THE FULL PROJECT GUTENBERG LICENSE"]
    assert not licence.selected_by_default and licence.matter_reason == "Project Gutenberg licence"
    assert by_title["Contents"].matter_reason == "table of contents"
    assert book.chapters[0].matter_reason == "cover" and book.chapters[0].title == "Cover"
    # The footer's "END OF THE PROJECT GUTENBERG EBOOK" goes with the licence, not chapter XII.
    last = by_title["CHAPTER XII. Alice’s Evidence"]
    assert "GUTENBERG" not in " ".join(b.text for b in last.blocks)
    assert last.blocks[-1].text == "THE END"
    assert "END OF THE PROJECT GUTENBERG EBOOK" in licence.blocks[0].text
    first = by_title["CHAPTER I. Down the Rabbit-Hole"]
    assert first.blocks[0].is_heading and first.blocks[0].text == "CHAPTER I. Down the Rabbit-Hole"
    assert first.blocks[1].text.startswith("Alice was beginning to get very tired")
    assert 2000 < first.word_count < 2300


def test_wasteland_noterefs_and_line_numbers_are_not_read() -> None:
    book = _book("wasteland.epub")
    assert book.metadata.authors == ("T.S. Eliot",)
    assert _titles(book) == [
        "The Waste Land",
        "I. THE BURIAL OF THE DEAD",
        "II. A GAME OF CHESS",
        "III. THE FIRE SERMON",
        "IV. DEATH BY WATER",
        "V. WHAT THE THUNDER SAID",
        'NOTES ON "THE WASTE LAND"',
    ]
    burial = _text(book, 1)
    assert "Son of man, You cannot say" in burial  # the noteref "*" after "man," is gone
    assert "*" not in burial
    assert "Hofgarten, And drank coffee" in burial  # the line number "10" is gone
    assert " 10 " not in burial and " 20 " not in burial
    # The epigraph page before chapter I is the title page; the notes are back matter.
    assert book.chapters[0].matter_reason == "title page"
    notes = book.chapters[6]
    assert notes.matter_reason == "notes" and not notes.selected_by_default
    assert "Cf. Ezekiel 2:1." in _text(book, 6)  # the notes chapter itself keeps its notes
    assert [c.selected_by_default for c in book.chapters[1:6]] == [True] * 5


def test_arabic_book_has_real_rtl_text_and_titles() -> None:
    book = _book("regime-anticancer-arabic.epub")
    assert book.metadata.language == "ar"
    assert book.metadata.authors == ("Pr David Khayat", "Nathalie Hutter-Lardeau")  # not the translator
    assert book.metadata.publisher == "Hachette Antoine"
    assert [c.matter_reason for c in book.chapters] == ["cover", "title page", ""]
    body = book.chapters[2]
    # "Commencer la lecture" only says where to start; the chapter's own heading names it.
    assert body.title == "الفصل الثاني: ما هو السرطان؟"
    assert body.blocks[0].text == body.title and body.blocks[1].text == "من أين تأتي الحياة؟"
    text = _text(book, 2)
    assert body.word_count > 4000
    assert sum("\u0600" <= ch <= "\u06ff" for ch in text) > 0.8 * len(text.replace(" ", ""))
    assert "[1]" not in text  # the footnote marker link
    assert "منشورات أوديل جاكوب" not in text  # the footnote aside at the chapter's end
    assert text.endswith("إلى كلّ أغذيتنا.")


def test_hefty_water_tiny_book_without_author() -> None:
    book = _book("hefty-water.epub")
    assert book.metadata.authors == ()
    assert book.cover is None
    assert _titles(book) == ["Hefty Water", "The Switch", "The Source", "Hefty Ruby Water"]
    assert all(c.selected_by_default for c in book.chapters)
    switch = _text(book, 1)
    assert "2H2 + O2 ⟶ 2H2O" in switch  # the epub:switch fallback is read ...
    assert "hydrogen" not in switch.split("Here the switch begins")[-1]  # ... the CML case is not
    ruby = _text(book, 3)
    assert "(hydrogen)" not in ruby  # ruby annotations (rt/rp) are not read twice


def test_a_code_sample_is_not_read_aloud_symbol_by_symbol() -> None:
    source = _text(_book("hefty-water.epub"), 2)  # "The Source": a sentence, then a <pre><code> listing
    assert "<switch" not in source and "<sub>" not in source and "molecule" not in source
    assert source.endswith("regardless of whether it supports the switch element.")  # inline <code> read


def test_childrens_literature_nested_toc_flattened_in_reading_order() -> None:
    book = _book("childrens-literature.epub")
    titles = _titles(book)
    assert titles[:4] == [
        "Cover",
        "THE CONTENTS",
        "SECTION IV FAIRY STORIES—MODERN FANTASTIC TALES",
        "BIBLIOGRAPHY",
    ]
    assert titles[4:10] == [
        "INTRODUCTORY",
        "190 A FOUR-LEAVED CLOVER",
        "I. The Rabbi and the Diadem",
        "II. Friendship",
        "III. True Charity",
        "IV. An Eastern Garden",
    ]
    assert titles[-1] == "204 THE KING OF THE GOLDEN RIVER OR THE BLACK BROTHERS"
    assert len(titles) == 24
    reasons = {c.title: c.matter_reason for c in book.chapters}
    assert reasons["THE CONTENTS"] == "table of contents"
    assert reasons["BIBLIOGRAPHY"] == "bibliography"
    assert reasons["Cover"] == "cover"
    assert reasons["INTRODUCTORY"] == ""
    assert book.metadata.authors == ("Charles Madison Curry", "Erle Elsworth Clippinger")
    assert book.cover is not None and book.cover.extension == "png"
    intro = _text(book, 4)
    assert "171" not in intro  # page-break markers are not read
    assert intro.startswith("INTRODUCTORY The difficulties of classification")


def test_chapter_rows_follow_selection() -> None:
    book = _book("pg11-alice.epub")
    rows = chapter_rows(book)
    assert [r.selected for r in rows] == [c.selected_by_default for c in book.chapters]
    assert rows[5].number == 6 and rows[5].words_str == f"{book.chapters[5].word_count:,}"
    assert rows[-1].reason == "Project Gutenberg licence"
    custom = chapter_rows(book, selected={0, 17})
    assert [r.index for r in custom if r.selected] == [0, 17]
    assert custom[17].selected_by_default is False
    assert rows[5].duration_str.count(":") == 1 and rows[5].estimated_seconds > 600


def test_book_summary_properties() -> None:
    book = _book("regime-anticancer-arabic.epub")
    assert book.title == book.metadata.title
    assert book.word_count == sum(c.word_count for c in book.chapters)
    assert book.selected_by_default() == (2,)
    assert book.metadata.authors_str == "Pr David Khayat and Nathalie Hutter-Lardeau"


def test_loaded_book_is_independent_of_the_file(tmp_path: Path) -> None:
    copy = tmp_path / "alice.epub"
    copy.write_bytes((DATA_DIR / "pg11-alice.epub").read_bytes())
    book = load_book(copy)
    copy.unlink()
    assert book.chapters[5].word_count > 2000
