"""Candidate words on the fixture books, and the lexicon CLI end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.cli import main
from omni_web.paths import DataPaths
from omni_web.text import CandidateKind, Lexicon, LexiconEntry, Pronouncer, find_candidates
from tests.conftest import DATA_DIR
from tests.epub_builder import make_epub, xhtml


def _words(book: str, **kwargs) -> dict[str, object]:
    return {c.word: c for c in find_candidates(load_book(DATA_DIR / book), **kwargs)}


def test_alice_lists_its_unusual_names_with_counts_and_first_sentences() -> None:
    found = _words("pg11-alice.epub")
    for name in ("Alice", "Gryphon", "Dormouse", "Dodo", "Dinah"):
        assert CandidateKind.NAME in found[name].kinds
    gryphon = found["Gryphon"]
    assert gryphon.count >= 50 and gryphon.sentence.startswith("They very soon came upon a Gryphon")
    # Ordinary words and sentence-initial capitals are not listed; licence pages are not read.
    for word in ("The", "She", "Rabbit", "rabbit", "Project", "Foundation"):
        assert word not in found
    counts = [c.count for c in found.values()]
    assert counts == sorted(counts, reverse=True)


def test_other_fixtures_show_names_caps_and_digit_words() -> None:
    children = _words("childrens-literature.epub")
    assert {"Gluck", "Schwartz", "Fairyfoot", "Stumpinghame"} <= set(children)
    waste = _words("wasteland.epub")
    assert {"Tiresias", "Phoenician"} <= set(waste)
    assert CandidateKind.ALL_CAPS in waste["HURRY"].kinds
    hefty = _words("hefty-water.epub")
    assert CandidateKind.DIGITS in hefty["2H2O"].kinds
    arabic = _words("regime-anticancer-arabic.epub")
    assert CandidateKind.ALL_CAPS in arabic["DNA"].kinds


def test_unusual_letters_and_lexicon_marks(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "b.epub", (("c.xhtml", xhtml(
        "<p>Then Zoë met Þórr in the café. They saw R2D2 and the 3rd moon. Zoë left.</p>"
        "<p>Zoë was late; the zoë was not a word.</p>")),))
    book = load_book(path)
    found = {
        c.word: c
        for c in find_candidates(
            book, pronouncer=Pronouncer(Lexicon().with_entry(LexiconEntry("Þórr", "Thor")))
        )
    }
    assert CandidateKind.UNUSUAL_LETTERS in found["Zoë"].kinds and found["Zoë"].count == 3
    assert found["Þórr"].in_lexicon and not found["Zoë"].in_lexicon
    assert CandidateKind.DIGITS in found["R2D2"].kinds
    assert "3rd" not in found  # the rules already spell it
    assert "café" in {c.word for c in find_candidates(book)}  # English: é is unusual
    assert "café" not in {c.word for c in find_candidates(book, language="fr")}


def test_lexicon_cli(data_paths: DataPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    alice = str(DATA_DIR / "pg11-alice.epub")
    children = str(DATA_DIR / "childrens-literature.epub")
    assert main(["lexicon", "add", "Gluck", "Glook", "--count-in", children]) == 0
    assert re.search(r"This changes [1-9]\d* chunks of \d+", capsys.readouterr().out)
    assert main(["lexicon", "add", "&", "and", "--count-in", children]) == 0  # the rules say "and" already
    assert "This changes none of the" in capsys.readouterr().out
    assert main(["lexicon", "remove", "Gluck"]) == 0
    assert main(["lexicon", "add", "Gryphon", "GRIFF-in", "--book", alice]) == 0
    assert main(["lexicon", "add", r"(\d+)lb", r"\1 pounds", "--regex"]) == 0
    capsys.readouterr()
    assert main(["lexicon", "list", "--book", alice]) == 0
    out = capsys.readouterr().out
    assert "Gryphon -> GRIFF-in" in out and "& -> and" in out and "[regex]" in out
    exported = tmp_path / "mine.yaml"
    assert main(["lexicon", "export", str(exported)]) == 0
    assert "written: '&'" in exported.read_text(encoding="utf-8")
    assert main(["lexicon", "remove", "&"]) == 0
    assert main(["lexicon", "import", str(exported)]) == 0
    assert "2 entries" in capsys.readouterr().out.splitlines()[-1]
    assert main(["lexicon", "remove", "nothing"]) == 1
    assert "no lexicon entry for 'nothing'" in capsys.readouterr().err
    assert main(["lexicon", "add", "(x", "y", "--regex"]) == 1
    assert "not a valid regular expression" in capsys.readouterr().err
    assert main(["lexicon", "candidates", alice, "--limit", "10"]) == 0
    out = capsys.readouterr().out
    assert (
        re.search(r"^Gryphon\s*\*", out, re.MULTILINE) and "already in the lexicon" in out and "Alice" in out
    )
