"""A book told in parts by several of its people (Dracula's journals): "I said" in each part is
that part's teller, not one narrator."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from omni_web.book import BlockKind, Book, BookMetadata, Chapter, TextBlock, load_book
from omni_web.cast import book_quote_style, chapter_dialogue, find_characters
from omni_web.cast.characters import book_roster
from omni_web.cast.names import Gender
from omni_web.cast.sections import section_teller, teller_forms
from tests.conftest import DATA_DIR


def test_a_header_names_the_teller_of_its_part() -> None:
    headers = {
        "JONATHAN HARKER'S JOURNAL--_continued_": "Jonathan Harker",
        "CHAPTER XII: DR. SEWARD'S DIARY--continued": "Dr. Seward",
        "_Dr. Seward's Phonograph Diary, spoken by Van Helsing._": "Dr. Seward",
        "LETTER, MISS MINA MURRAY TO MISS LUCY WESTENRA.": "Miss Mina Murray",
        "_Letter from Quincey P. Morris to Hon. Arthur Holmwood._": "Quincey P. Morris",
        "The Story begun by Walter Hartright (of Clement's Inn, Teacher of Drawing)": "Walter Hartright",
        "THE NARRATIVE OF HESTER PINHORN": "Hester Pinhorn",
        "16. Narrative Continued by the Doctor: How the Ship Was Abandoned": "Doctor",
        "19. Narrative Resumed by Jim Hawkins: The Garrison in the Stockade": "Jim Hawkins",
    }
    assert {text: section_teller(text) for text in headers} == headers
    for text in (
        "the story of my life",
        "He read his diary.",
        "Jonathan Harker's journal was found, and the story of that night is told in it at length.",
        "CHAPTER I",
        "The Story of the Three Bears",  # about them, not by them
        "12. Council of War",
    ):
        assert section_teller(text) is None, text
    assert teller_forms("Miss Mina Murray")[:2] == ["Miss Mina Murray", "Mina Murray"]
    assert teller_forms("Quincey P. Morris")[-1] == "Quincey Morris"


def _chapter(index: int, title: str, paragraphs: list[str]) -> Chapter:
    blocks = (TextBlock(BlockKind.HEADING, title), *(TextBlock(BlockKind.PARAGRAPH, p) for p in paragraphs))
    return Chapter(
        index=index,
        title=title,
        blocks=blocks,
        word_count=sum(len(p.split()) for p in paragraphs),
        selected_by_default=True,
        matter_reason="",
        source_href=f"c{index}.xhtml",
    )


def _journal(other: str, i_lines: list[str]) -> list[str]:
    paragraphs = [f"I went to see {other}, and I told {other} what I had found. I was tired and I slept."]
    for line in i_lines:
        paragraphs += [f'"{line}," I said.', f'"Is it so?" said {other}.', "I said nothing more that night."]
    return paragraphs


def test_i_said_in_each_part_is_its_teller_and_one_teller_is_the_narrator() -> None:
    harker = _journal("Dr. Seward", ["I saw the Count", "He has no reflection", "The door was locked"])
    seward = _journal("Jonathan Harker", ["The patient is calm", "I doubt it", "Renfield ate a fly"])
    book = Book(
        metadata=BookMetadata(title="Journals"),
        cover=None,
        chapters=(
            _chapter(0, "CHAPTER I: JONATHAN HARKER'S JOURNAL", harker),
            _chapter(1, "CHAPTER II: DR. SEWARD'S DIARY", seward),
        ),
        source_path=Path("journals.txt"),
    )
    cast = {c.name: c for c in find_characters(book, min_confidence=0.6)}
    assert "Narrator" not in cast, cast
    assert cast["Jonathan Harker"].quotes == 3 + 3 and cast["Dr. Seward"].quotes == 3 + 3, cast
    # One teller's journal is a first-person book: "I said" is the narrator's.
    single = Book(
        metadata=BookMetadata(title="Journal"),
        cover=None,
        chapters=(_chapter(0, "CHAPTER I: JONATHAN HARKER'S JOURNAL", harker),),
        source_path=Path("journal.txt"),
    )
    cast = {c.name: c for c in find_characters(single, min_confidence=0.6)}
    assert cast["Narrator"].quotes == 3 and cast["Dr. Seward"].quotes == 3, cast


DRACULA = DATA_DIR / "cast" / "dracula-parts" / "dracula-2-6-15.txt"


def test_dracula_s_journals_give_i_said_to_their_writers() -> None:
    """Dracula (Project Gutenberg #345), chapters II, VI and XV: Jonathan Harker's journal, Mina
    Murray's and Dr. Seward's diary. Each "I said" was the narrator's; "Jonathan Harker" was a
    place ("a letter from Jonathan"), and a date's "July" a character."""
    book = load_book(DRACULA)
    chapters = list(book.chapters)
    style = book_quote_style(book, chapters)
    roster = book_roster(book, chapters, style=style)
    assert roster.told_in_parts
    tellers = []
    for chapter in chapters:
        said = Counter(
            attribution.speaker
            for row in chapter_dialogue(chapter, style, roster=roster).attributions
            for attribution in row
            if attribution is not None and attribution.rule == "narrator"
        )
        tellers.append(said)
    assert tellers == [
        Counter({"Jonathan Harker": 7}),
        Counter({"Mina Murray": 6, "Dr. Seward": 1}),  # Seward's diary between her entries
        Counter({"Dr. Seward": 12}),
    ]
    names = {c.name for c in find_characters(book, chapters=chapters)}
    assert "Narrator" not in names and "July" not in names, names
    # A teller the book names only in their header is a person of their given name's sex.
    assert roster.told_by("Mina Murray").narrator == "Mina Murray"
    assert roster.gender("Mina Murray") is Gender.FEMALE


TREASURE_ISLAND = DATA_DIR / "corpus" / "txt" / "pg120.txt"


def test_treasure_island_s_doctor_tells_his_three_chapters_and_jim_the_rest() -> None:
    """Treasure Island (Project Gutenberg #120) is Jim Hawkins's story, but its chapters 16 to 18 are
    headed "Narrative Continued by the Doctor" and chapter 19 "Narrative Resumed by Jim Hawkins".
    Their "I said" lines were the narrator's: the header's chapter number hid it, and "the Doctor"
    was not read as a teller."""
    book = load_book(TREASURE_ISLAND)
    chapters = [c for c in book.chapters if c.selected_by_default]
    style = book_quote_style(book, chapters)
    roster = book_roster(book, chapters, style=style)
    assert roster.told_in_parts and roster.first_person
    said: dict[str, Counter[str]] = {}
    for chapter in chapters:
        number = chapter.title.split(".")[0]
        if number in {"15", "16", "17", "18", "19", "22"}:
            said[number] = Counter(
                attribution.speaker
                for row in chapter_dialogue(chapter, style, roster=roster).attributions
                for attribution in row
                if attribution is not None and attribution.rule == "narrator"
            )
    doctor = said["16"] + said["17"] + said["18"]  # chapter 16 has no "I said"
    assert set(doctor) == {"Dr. Livesey"} and doctor.total() >= 10, said
    assert set(said["15"]) == set(said["19"]) == set(said["22"]) == {"Narrator"}, said
    # Jim is still the book's narrator, under every form of his name.
    assert roster.resolve("Jim Hawkins") == roster.resolve("Jim") == "Narrator"
