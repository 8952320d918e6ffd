"""A letter or a story that runs over several paragraphs of one open quote is its writer's: the
signature names them, or the teller gives their name (Dracula, Frankenstein, Great Expectations)."""

from __future__ import annotations

from omni_web.book import load_book
from omni_web.cast import book_quote_style, chapter_dialogue
from omni_web.cast.attribution import canonical_name
from omni_web.cast.characters import book_roster
from omni_web.cast.letters import signed_speeches
from omni_web.cast.spans import STYLES, split_paragraphs
from tests.conftest import DATA_DIR
from tests.test_cast_rules import book_of

STRAIGHT = STYLES["straight-double"]


def writers(paragraphs: list[str], known: set[str]) -> dict[int, str]:
    return signed_speeches(split_paragraphs(paragraphs, STRAIGHT), canonical_name, known)


def test_a_letter_is_the_character_who_signs_it() -> None:
    """Dracula: Quincey's letter ("QUINCEY P. MORRIS.") was read as Arthur's, to whom it is written,
    and Mina's as Mr. Hawkins's; the signature names the writer, by the character's known name."""
    letter = [
        'Arthur read the letter twice.',
        '"25 May.',
        '"My dear Art,--',
        '"We\'ve told yarns by the camp-fire in the prairies; come and tell one more with me.',
        '"Yours, as ever and always,',
        '"QUINCEY P. MORRIS."',
        '"It is from Quincey," said Arthur.',
    ]
    assert writers(letter, {"Quincey Morris", "Arthur"}) == dict.fromkeys(range(1, 6), "Quincey Morris")
    # The closing and the name in one paragraph (Frankenstein's father), a name the book gives
    # nowhere else.
    father = ['"My dear Victor,', '"William is dead!', '"Your affectionate father, "Alphonse Frankenstein.']
    assert set(writers(father, set()).values()) == {"Alphonse Frankenstein"}


def test_a_greeting_a_playbill_or_a_name_called_is_no_signature() -> None:
    greeting = ['"My Dearest Margaret,', '"I can no longer keep silent.', '"Send me one word."']
    assert writers(greeting, {"Margaret"}) == {}
    playbill = ['"GRAND CONTESTED ELECTION.', '"WHALING VOYAGE.', '"BLOODY BATTLE IN AFFGHANISTAN."']
    assert writers(playbill, set()) == {}
    # Without a closing before it, a name alone must be a character's: a call is not a letter.
    called = ['"Listen to me.', '"I have waited long enough.', '"Jane Smith."']
    assert writers(called, {"Mary"}) == {}


def test_a_story_over_paragraphs_is_the_teller_who_names_themselves() -> None:
    """Great Expectations: Magwitch's story ("I know'd my name to be Magwitch") over 40 paragraphs
    was Compeyson's, a name in it read as a call; then no one's."""
    story = [
        '"Dear boy and Pip\'s comrade. I am not a going fur to tell you my life like a song.',
        '"I know\'d my name to be Magwitch, chrisen\'d Abel.',
        '"Compeyson, he looks at me very noticing, and I look at him.',
        '"\'You are out of luck,\' says Compeyson to me."',
    ]
    assert writers(story, {"Compeyson", "Magwitch"}) == dict.fromkeys(range(4), "Magwitch")
    # A phrase is not a teller ("my name is Legion").
    assert writers(['"My name is Legion.', '"For we are many."'], set()) == {}


def test_a_signed_letter_is_read_by_its_writer_in_the_book() -> None:
    book = book_of(
        '"Good morning," said Mina Harker. "Is there a letter?"',
        '"Only one," said Lucy.',
        "She opened it and read:",
        '"9 May.',
        '"My dearest Lucy,--',
        '"Forgive my long delay in writing.',
        '"Your loving',
        '"MINA HARKER."',
        '"How sweet," said Lucy.',
    )
    chapter = book.chapters[0]
    quotes = list(chapter_dialogue(chapter, STRAIGHT).quotes())
    letter = [q for q in quotes if q.attribution.rule == "signed"]
    assert [q.attribution.speaker for q in letter] == ["Mina Harker"] * 5, quotes
    assert {q.attribution.confidence for q in letter} == {0.8}
    assert quotes[-1].attribution.speaker == "Lucy"


def test_jekyll_s_letter_is_read_by_jekyll_in_the_real_book() -> None:
    """Dr Jekyll and Mr Hyde (Project Gutenberg #43): Jekyll's letter to Utterson, signed "HENRY
    JEKYLL.", went to Poole and Utterson by turn-taking."""
    book = load_book(DATA_DIR / "corpus" / "txt" / "pg43.txt")
    chapters = list(book.chapters)
    style = book_quote_style(book, chapters)
    roster = book_roster(book, chapters, style=style)
    signed = [
        quote
        for chapter in chapters
        for quote in chapter_dialogue(chapter, style, roster=roster).quotes()
        if quote.attribution.rule == "signed"
    ]
    assert signed and {q.attribution.speaker for q in signed} == {"Jekyll"}, signed
    assert signed[0].text.startswith('"My dear Utterson') and "HENRY JEKYLL" in signed[-1].text


def test_a_teller_s_surname_is_the_one_character_called_by_a_title_and_it() -> None:
    """A Tale of Two Cities: Doctor Manette's paper opens "I, Alexandre Manette, unfortunate
    physician"; the book calls him "Doctor Manette" only, and Lucie Manette by her own name."""
    paper = [
        '"I, Alexandre Manette, unfortunate physician, native of Beauvais, write this.',
        '"I write it at stolen intervals, under every difficulty."',
    ]
    assert writers(paper, {"Doctor Manette", "Lucie"}) == dict.fromkeys(range(2), "Doctor Manette")
    # Two people so called ("Mr. Manette", "Doctor Manette"): no guess.
    assert writers(paper, {"Doctor Manette", "Mr. Manette"}) == {}
