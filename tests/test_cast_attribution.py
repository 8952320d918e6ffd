"""Speaker attribution on a fixture book's dialogue, and the rules it rests on."""

from __future__ import annotations

import pytest

from omni_web.book import load_book
from omni_web.cast import (
    CONFIDENCE,
    STYLES,
    attribute_speakers,
    book_quote_style,
    chapter_dialogue,
    find_characters,
    split_paragraphs,
)
from omni_web.cast.attribution import canonical_name
from omni_web.cast.names import Gender
from omni_web.cast.tags import TagKind, tag_after, tag_before
from tests.conftest import DATA_DIR

ALICE = DATA_DIR / "pg11-alice.epub"


@pytest.fixture(scope="module")
def alice():
    return load_book(ALICE)


def speakers(paragraphs: list[str], style: str = "english-double") -> list[tuple[str | None, float, str]]:
    split = split_paragraphs(paragraphs, STYLES[style])
    found = []
    for paragraph, row in zip(split, attribute_speakers(split), strict=True):
        for span, attribution in zip(paragraph.spans, row, strict=True):
            if span.is_dialogue:
                found.append((attribution.speaker, attribution.confidence, span.text))
    return found


# "A Mad Tea-Party" (chapter VII): opening words of a quote -> who says it, as the book tells.
TEA_PARTY = {
    "“There isn’t any,”": "March Hare",  # said the March Hare
    "“Then it wasn’t very civil": "Alice",  # said Alice angrily
    "“Your hair wants cutting,”": "Hatter",  # said the Hatter
    "“You should learn not to make personal remarks,”": "Alice",  # Alice said with some severity
    "“Why is a raven like a writing-desk?”": "Hatter",  # all he said was (the Hatter opened his eyes)
    "“Do you mean that you think you can find out": "March Hare",
    "“Then you should say what you mean,”": "March Hare",  # the March Hare went on
    "“I do,”": "Alice",  # Alice hastily replied
    "“I don’t see any wine,”": "Alice",  # she remarked, in a paragraph that opens with Alice
    "“The fourth.”": "Alice",  # Alice considered a little, and then said
    "“Two days wrong!”": "Hatter",  # sighed the Hatter
    "“It was the best butter,”": "March Hare",  # the March Hare meekly replied
    "“Which is just the case with mine,”": "Hatter",
}


def test_tea_party_quotes_are_attributed_as_the_book_tells(alice) -> None:
    chapter = next(c for c in alice.chapters if "Mad Tea-Party" in c.title)
    dialogue = chapter_dialogue(chapter, book_quote_style(alice))
    quotes = dialogue.quotes()
    checked = 0
    for opening, speaker in TEA_PARTY.items():
        quote = next(q for q in quotes if q.text.startswith(opening))
        assert quote.attribution.speaker == speaker, (opening, quote.attribution)
        assert quote.attribution.confidence >= 0.6
        checked += 1
    assert checked == len(TEA_PARTY)
    # Most of the chapter's quotes get a speaker the cast can use.
    sure = [q for q in quotes if q.attribution.speaker and q.attribution.confidence >= 0.6]
    assert len(sure) >= 0.75 * len(quotes)  # the rest is below the floor: unsure rules say so


def test_alice_characters_list_names_counts_and_sample_lines(alice) -> None:
    people = {c.name: c for c in find_characters(alice)}
    assert next(iter(people)) == "Alice"  # most quotes first
    for name in (
        "Hatter",
        "March Hare",
        "Dormouse",
        "Queen",
        "King",
        "Mock Turtle",
        "Gryphon",
        "Caterpillar",
    ):
        assert name in people, name
        assert people[name].quotes >= 5 and people[name].sample
    assert people["Alice"].quotes > 5 * people["Hatter"].quotes > 0
    assert "“" not in people["Hatter"].sample and people["Hatter"].sample[0].isupper()
    # Words that only look like names next to a speech verb are not characters.
    assert not {"She", "He", "It", "They", "Rabbit’s"} & set(people)
    assert people["Hatter"].first_chapter == 12


def test_explicit_forms_and_their_confidence() -> None:
    found = speakers(
        [
            "“Call me Ishmael,” said Ahab.",
            "“Aye,” Starbuck said quietly.",
            "“Where?” asked Starbuck.",
            "Stubb said: “Here.”",
            "“My dear Ahab,” Stubb expostulated, “I never thought it would interest you.”",
            "“Not here,” Flask interjected.",
        ]
    )
    tag, before = CONFIDENCE["tag"], CONFIDENCE["tag-before"]
    assert [(s, c) for s, c, _ in found] == [
        ("Ahab", tag),
        ("Starbuck", tag),
        ("Starbuck", tag),
        ("Stubb", before),
        ("Stubb", tag),
        ("Stubb", before),
        ("Flask", tag),
    ]


def test_a_tag_s_name_or_noun_may_be_followed_by_when_and_how_it_was_said() -> None:
    # Mansfield Park: "said Edmund the next day, after thinking some time on the subject himself."
    tag = tag_after(" said Edmund the next day, after thinking.", canonical_name)
    assert tag is not None and tag.name == "Edmund"
    # The noun is the phrase's last one before the rest: "the old man in a low voice" is a man.
    for narration in (" said the old man in a low voice.", " said the old gentleman thoughtfully."):
        tag = tag_after(narration, canonical_name)
        assert tag is not None and tag.kind is TagKind.NOUN and tag.gender is Gender.MALE, narration
    # A capital word before a lowercase noun is an adjective, not a speaker.
    assert tag_after(" cried the Court pages.", canonical_name) is None


def test_a_name_just_before_a_closing_verb_is_its_subject_not_the_sentence_s_first() -> None:
    # Hard Times: the late Mr. Sparsit opens the sentence; Mrs. Sparsit is the one who "called".
    sparsit = "Mr. Sparsit, deceased, had been by the mother's side what Mrs. Sparsit still called "
    tag = tag_before(sparsit, canonical_name)
    assert tag is not None and tag.name == "Mrs. Sparsit" and tag.verb == "called"
    # A name before "and" is an object: the sentence's subject said it.
    tag = tag_before("Philip turned to Miss Abbott and said ", canonical_name)
    assert tag is not None and tag.name == "Philip"
    tag = tag_before("Alice considered a little, and then said ", canonical_name)
    assert tag is not None and tag.name == "Alice"


def test_an_exchange_of_bare_quotes_takes_turns_until_the_scene_changes() -> None:
    calm = "The sea was calm."
    long_narration = " ".join(["The sea was calm and the ship sailed on through the long grey day."] * 12)
    found = speakers(
        [
            "“Is it the whale?” asked Starbuck.",
            "“It is,” said Ahab.",
            "“Then we follow?”",
            "“We follow.”",
            "“To the end?”",
            calm,
            "“Who speaks?”",
            long_narration,
            "“Who now?”",
        ]
    )
    assert [s for s, _, _ in found] == ["Starbuck", "Ahab", "Starbuck", "Ahab", "Starbuck", "Ahab", None]
    # The turn right after a tag, one further on (the surest), and later ones, as measured.
    assert [c for _, c, _ in found[2:5]] == [0.6, 0.78, 0.6]
    assert found[5][1] < 0.6  # a short narration keeps the exchange, but a guess across it is unsure
    assert found[6][1] == 0.0  # a long stretch of narration ends the scene: no guess


def test_a_pronoun_resolves_to_the_paragraphs_named_speaker_and_continued_quotes_keep_it() -> None:
    found = speakers(
        [
            "“Ready,” said Ahab.",
            "Ahab turned to the rail. “Lower the boats,” he cried. “All of them",
            "“and be quick.”",
        ]
    )
    assert [s for s, _, _ in found] == ["Ahab", "Ahab", "Ahab", "Ahab"]
    assert found[1][1] == 0.7 and found[3][1] == found[2][1]


def test_dash_dialogue_incises_name_the_speaker() -> None:
    found = speakers(["—Hola —dijo Juan—. ¿Vienes?", "—No —respondió María."], "dash")
    assert [s for s, _, _ in found] == ["Juan", "Juan", "María"]


def test_story_collection_with_straight_quotes_lists_its_speakers_and_no_common_words() -> None:
    book = load_book(DATA_DIR / "childrens-literature.epub")
    assert book_quote_style(book).name == "straight-double"
    people = {c.name: c for c in find_characters(book)}
    assert {"Gluck", "Emperor", "Old Pipes", "Swallow", "Fir Tree", "Nightingale"} <= set(people)
    # Sentence openers, determiners and an adjective before a noun ("cried the Court pages") are not names.
    assert not {"In", "Into", "Another", "Court", "The"} & set(people)
    assert people["Gluck"].quotes >= 30


def test_quoted_titles_and_phrases_are_narration_and_never_characters() -> None:
    from omni_web.book import BlockKind, Book, BookMetadata, Chapter, TextBlock

    paragraphs = [
        'Ishmael read "The Raven" twice by the stove.',
        'Then the crew sang the song "Yankee Doodle" until dawn.',
        'The word "grin" was carved into the mast.',
        '"Go," said Ahab. "Now."',
        '"Aye," said Ahab.',
        'Starbuck cried "Help!" into the wind.',
    ]
    chapter = Chapter(
        index=0,
        title="One",
        blocks=tuple(TextBlock(BlockKind.PARAGRAPH, p) for p in paragraphs),
        word_count=50,
        selected_by_default=True,
        matter_reason="",
        source_href="c1.xhtml",
    )
    quotes = chapter_dialogue(chapter, STYLES["straight-double"]).quotes()
    assert [q.text for q in quotes] == ['"Go,"', '"Now."', '"Aye,"', '"Help!"']
    assert {q.attribution.speaker for q in quotes} == {"Ahab", "Starbuck"}
    book = Book(metadata=BookMetadata(title="Titles"), cover=None, chapters=(chapter,), source_path=ALICE)
    names = {c.name for c in find_characters(book, chapters=[chapter], min_quotes=1)}
    assert names == {"Ahab", "Starbuck"}, names


def test_a_speech_over_paragraphs_with_no_known_speaker_is_no_one_s_it_names() -> None:
    """Great Expectations: Magwitch's story runs over 40 paragraphs, each opening a quote the last
    left open; "Compeyson, he looks at me" read as a call gave the story to Compeyson."""
    found = speakers(
        [
            "“Dear boy, I am not a going fur to tell you my life like a song.",
            "“I have been in jail and out of jail.",
            "“Compeyson, he looks at me very noticing, and I look at him.",
            "“‘You are out of luck,’ says Compeyson to me.",
            "“‘Luck changes,’ says Compeyson.”",
            "The fire burned low.",
            "“You lie,” said Compeyson.",
        ]
    )
    assert [s for s, _, _ in found[:5]] == [None] * 5, found
