"""Letter-spaced words are joined into the book's own words; rows of variables are left alone."""

from __future__ import annotations

from pathlib import Path

from omni_web.book import load_book
from omni_web.book.letterspacing import book_words, join_letter_spacing
from tests.conftest import DATA_DIR

WORDS = book_words(["This section shows the matrix and a vector, and the eigenspaces of a map."])


def test_letters_with_the_word_gaps_lost_are_cut_into_the_books_words() -> None:
    assert join_letter_spacing("T h i s s e c t i o n shows", WORDS) == "This section shows"
    assert join_letter_spacing("the e i g e n s p a c e s of", WORDS) == "the eigenspaces of"


def test_letters_with_the_word_gaps_kept_are_joined_as_they_stand() -> None:
    assert join_letter_spacing("C H A P T E R  O N E", WORDS) == "CHAPTER ONE"


def test_rows_of_variables_and_unknown_runs_stay() -> None:
    for text in ("a b c d e f g h", "S a b c d", "c B A B c", "a b a b c d c d a b", "x y z"):
        assert join_letter_spacing(text, WORDS | {"ab", "cd", "sab"}) == text


def test_a_real_textbook_reads_its_letter_spaced_terms_as_words(tmp_path: Path) -> None:
    book = load_book(DATA_DIR / "corpus" / "epub" / "linear-algebra.epub")
    text = " ".join(block.text for chapter in book.chapters for block in chapter.blocks)
    assert "m a t r i x" not in text and "e i g e n s p a c e s" not in text
    assert "a b c d e f g h" in text  # the matrix entries are still letters
