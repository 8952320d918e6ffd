"""Dialogue spans per quote style: what is speech, what is narration, and the text never changes."""

from __future__ import annotations

import pytest

from omni_web.book import load_book
from omni_web.cast import STYLES, QuoteStyle, detect_quote_style, split_paragraph, split_paragraphs
from tests.conftest import DATA_DIR


def cut(
    text: str, style: str | QuoteStyle | None = None, *, continuing: bool = False
) -> list[tuple[str, str]]:
    chosen = STYLES[style] if isinstance(style, str) else style or detect_quote_style([text])
    result = split_paragraph(text, chosen, continuing=continuing)
    assert "".join(span.text for span in result.spans) == text  # never changes the text
    return [("D" if span.is_dialogue else "N", span.text) for span in result.spans]


CASES = [
    # English double quotes, a single-quoted quote nested inside, apostrophes everywhere.
    (
        "english-double",
        "“Not the same thing a bit!” said the Hatter. “You might just as well say that ‘I see what I eat’ is "
        "the same thing as ‘I eat what I see’!”",
        [
            ("D", "“Not the same thing a bit!”"),
            ("N", " said the Hatter. "),
            (
                "D",
                "“You might just as well say that ‘I see what I eat’ is the same thing as ‘I eat what I "
                "see’!”",
            ),
        ],
    ),
    (
        "english-double",
        "Alice considered a little, and then said “The fourth.”",
        [("N", "Alice considered a little, and then said "), ("D", "“The fourth.”")],
    ),
    # British single quotes: apostrophes inside words, a plural possessive, an elision, a nested double.
    (
        "english-single",
        "‘The dogs’ bowls are empty,’ she said. ‘’Tis true, and “empty” isn’t the word.’",
        [
            ("D", "‘The dogs’ bowls are empty,’"),
            ("N", " she said. "),
            ("D", "‘’Tis true, and “empty” isn’t the word.’"),
        ],
    ),
    (
        "english-single",
        "‘I don’t know,’ said Alice, ‘what you mean’.",
        [("D", "‘I don’t know,’"), ("N", " said Alice, "), ("D", "‘what you mean’"), ("N", ".")],
    ),
    (
        "straight-double",
        '"Hello," he said, "how are you?"',
        [("D", '"Hello,"'), ("N", " he said, "), ("D", '"how are you?"')],
    ),
    (
        "straight-single",
        "He said 'go' and 'tis fine, don't worry.",
        [("N", "He said "), ("D", "'go'"), ("N", " and 'tis fine, don't worry.")],
    ),
    # Guillemets with French spacing (no-break spaces inside the marks), nested guillemets, an incise.
    (
        "guillemets",
        "«\u00a0Il m’a dit «\u00a0non\u00a0» hier\u00a0», dit-elle.",
        [("D", "«\u00a0Il m’a dit «\u00a0non\u00a0» hier\u00a0»"), ("N", ", dit-elle.")],
    ),
    (
        "guillemets",
        "«\u202fBonjour, dit-il, comment allez-vous\u202f?\u202f» Il partit.",
        [
            ("D", "«\u202fBonjour,"),
            ("N", " dit-il,"),
            ("D", " comment allez-vous\u202f?\u202f»"),
            ("N", " Il partit."),
        ],
    ),
    ("german-guillemets", "»Hallo«, sagte er.", [("D", "»Hallo«"), ("N", ", sagte er.")]),
    (
        "low-high",
        "„Hallo“, sagte er. „Wie geht’s?“",
        [("D", "„Hallo“"), ("N", ", sagte er. "), ("D", "„Wie geht’s?“")],
    ),
    (
        "corner-brackets",
        "「こんにちは」と彼は言った。「『はい』です」",
        [("D", "「こんにちは」"), ("N", "と彼は言った。"), ("D", "「『はい』です」")],
    ),
    # Dash dialogue: Spanish incises between dashes, French inverted incises, a line that is narration.
    ("dash", "—Hola —dijo Juan—. ¿Vienes?", [("D", "—Hola"), ("N", " —dijo Juan—. "), ("D", "¿Vienes?")]),
    ("dash", "—¿Qué? —preguntó ella.", [("D", "—¿Qué?"), ("N", " —preguntó ella.")]),
    (
        "dash",
        "— Bonjour, dit-il. Comment ça va ?",
        [("D", "— Bonjour,"), ("N", " dit-il."), ("D", " Comment ça va ?")],
    ),
    ("dash", "Il faisait beau. Personne ne parlait.", [("N", "Il faisait beau. Personne ne parlait.")]),
]


@pytest.mark.parametrize(
    ("style", "text", "expected"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_split_per_quote_style(style: str, text: str, expected: list[tuple[str, str]]) -> None:
    assert cut(text, style) == expected


def test_the_style_is_detected_from_the_text() -> None:
    assert detect_quote_style(["“Yes,” she said.", "“No.”"]).name == "english-double"
    assert detect_quote_style(["‘Yes,’ she said. It’s fine.", "‘No.’"]).name == "english-single"
    assert detect_quote_style(["„Ja“, sagte er.", "„Nein.“"]).name == "low-high"
    assert detect_quote_style(["« Oui », dit-il.", "« Non. »"]).name == "guillemets"
    assert detect_quote_style(["—Sí —dijo.", "—No.", "Llovía."]).name == "dash"
    assert detect_quote_style(["「はい」", "「いいえ」"]).name == "corner-brackets"
    assert detect_quote_style(["It’s a dog’s life, isn’t it."]).name == "none"


def test_a_quote_spanning_paragraphs_continues_only_when_reopened() -> None:
    style = STYLES["english-double"]
    first, second, third, fourth = split_paragraphs(
        [
            "“I went on and on,” he said, “for days",
            "“and then I came back.”",
            "He sat down.",
            "Nothing else.",
        ],
        style,
    )
    assert first.open_at_end and not first.spans[-1].closed
    assert second.spans[0].is_dialogue and second.spans[0].continued and not second.open_at_end
    assert [s.is_dialogue for s in third.spans] == [False] and not fourth.has_dialogue


def test_a_quote_with_no_closing_mark_ends_with_its_paragraph() -> None:
    style = STYLES["english-double"]
    unclosed, after = split_paragraphs(["He said, “Come here now.", "The room was quiet."], style)
    assert cut("He said, “Come here now.", style) == [("N", "He said, "), ("D", "“Come here now.")]
    assert unclosed.open_at_end
    assert not after.has_dialogue  # the next paragraph does not reopen: the missing mark swallows nothing
    # A straight quote placed like an opener ends an unclosed one before it.
    assert cut('"Wait, he said. Then "Go."', "straight-double") == [
        ("D", '"Wait, he said. Then'),
        ("N", " "),
        ("D", '"Go."'),
    ]


def test_apostrophes_inside_words_never_open_or_close_speech() -> None:
    assert cut("It’s the cat’s ’90s toy, o’clock or not.", "english-single") == [
        ("N", "It’s the cat’s ’90s toy, o’clock or not.")
    ]
    assert cut("Don’t ‘go’ yet.", "english-single") == [("N", "Don’t "), ("D", "‘go’"), ("N", " yet.")]


@pytest.mark.parametrize("book", sorted(p.name for p in DATA_DIR.glob("*.epub")))
def test_every_fixture_paragraph_joins_back_unchanged(book: str) -> None:
    parsed = load_book(DATA_DIR / book)
    for chapter in parsed.chapters:
        texts = [block.text for block in chapter.blocks]
        for style in (
            detect_quote_style(texts),
            STYLES["english-single"],
            STYLES["dash"],
            STYLES["guillemets"],
        ):
            for text, split in zip(texts, split_paragraphs(texts, style), strict=True):
                assert "".join(span.text for span in split.spans) == text
                assert all(span.text for span in split.spans)


def test_french_exchange_opened_with_guillemets_and_continued_on_dash_lines() -> None:
    texts = [
        "Il entra dans la pièce.",
        "«\u00a0Bonjour, dit-il. Vous allez bien\u00a0?",
        "— Très bien, répondit Marie.",
        "— Tant mieux.\u00a0»",
        "Elle sourit. Personne — pas même lui — ne parla.",
    ]
    style = detect_quote_style(texts + ["« Et vous ? » demanda-t-elle.", "— Moi aussi."])
    assert style.name == "guillemets+dash" and style.dash
    marked = [
        [("D" if s.is_dialogue else "N", s.text) for s in p.spans] for p in split_paragraphs(texts, style)
    ]
    assert marked == [
        [("N", "Il entra dans la pièce.")],
        [("D", "«\u00a0Bonjour,"), ("N", " dit-il."), ("D", " Vous allez bien\u00a0?")],
        [("D", "— Très bien,"), ("N", " répondit Marie.")],
        [("D", "— Tant mieux.\u00a0»")],
        [("N", "Elle sourit. Personne — pas même lui — ne parla.")],  # dashes inside narration stay narration
    ]
