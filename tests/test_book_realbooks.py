"""The reader fixes the book corpus asked for, each on the smallest real input that shows it.

The corpus itself (tests/test_book_corpus.py) checks whole books; these pin each rule: plain-text
marks, chapters from a book's own spacing, the table setting, language from the text.
"""

from __future__ import annotations

from pathlib import Path

from omni_web.book import load_book
from omni_web.book.headings import is_chapter_heading, is_part_heading
from omni_web.book.language import detect_language
from omni_web.book.numbered import numbered_headings
from omni_web.book.options import ReadOptions, table_lines
from omni_web.book.plaincontents import is_contents_list
from omni_web.book.plainmarks import is_unspoken_paragraph, strip_plain_marks
from omni_web.book.spacing import paragraphs_of, spaced_headings
from omni_web.book.txt import parts_from_text

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"


def test_plain_marks_are_not_read() -> None:
    assert (
        strip_plain_marks("It was _very_ =bold= of him{1} to say so.") == "It was very bold of him to say so."
    )
    assert strip_plain_marks("[Illustration: A HOUSE] The house stood.") == "The house stood."
    assert strip_plain_marks("snake_case stays apart") == "snake case stays apart"
    # Monte Cristo's Gutenberg text keeps its pictures' names ("0023m") on lines of their own.
    text = "the interrupted conversation.\n\n0023m\n\n\n\n“Alas, sir, in the most unexpected manner.”"
    assert [b.text for p in parts_from_text(text) for b in p.blocks] == [
        "the interrupted conversation.", "“Alas, sir, in the most unexpected manner.”"
    ]
    assert is_unspoken_paragraph("frontispiece.jpg") and not is_unspoken_paragraph("1888")


def test_chapters_from_the_books_own_spacing() -> None:
    prose = " ".join(["word"] * 200)
    gap = "\n" * 5  # four blank lines before a chapter, two before a section, one between paragraphs
    body = f"\n\nTITLE{gap}I\n\n{prose}\n\n\nSECTION\n\n\n{prose}{gap}II. The Second\n\n{prose}{gap}III\n\n{prose}\n"
    paragraphs = paragraphs_of(body)
    heads = spaced_headings(paragraphs)
    assert [paragraphs[i].lines[0] for i in sorted(heads)] == ["I", "II. The Second", "III"]


def test_a_text_without_set_apart_lines_has_no_spaced_chapters() -> None:
    assert not spaced_headings(paragraphs_of("One paragraph.\n\nAnother one.\n\n\nA third one, spaced.\n"))


def test_chapters_numbered_by_a_lone_number_under_part_headings() -> None:
    # Treasure Island's newer Gutenberg text: "PART ONE--..." headings, chapters headed "1", "2", ...
    prose = " ".join(["word"] * 300)
    body = "".join(f"\n\n\n{n}\n\nTitle {n}\n\n{prose}" for n in range(1, 6))
    paragraphs = paragraphs_of(f"PART ONE--The Start{body}")
    assert [paragraphs[i].lines[0] for i in sorted(numbered_headings(paragraphs))] == list("12345")
    # Not a numbered list, nor numbers that start over, nor a book whose headings say "Chapter".
    assert not numbered_headings(paragraphs_of("\n\n".join(f"{n}\n\nA short item." for n in range(1, 9))))
    again = paragraphs_of(body + body)
    assert not numbered_headings(again)
    # Starting again at 1 under each part's heading.
    assert len(numbered_headings(paragraphs_of(f"PART ONE{body}\n\nPART TWO{body}"))) == 10
    assert not numbered_headings(paragraphs_of(f"CHAPTER I\n\nTitle{body}\n\nCHAPTER II\n\n{prose}"))


def test_long_titles_in_capitals_and_numbers_under_the_heading_word() -> None:
    prose = " ".join(["word"] * 300)
    # Oliver Twist's titles wrap over two or three lines in capitals under "CHAPTER III."
    oliver = (
        f"CHAPTER II.\nTREATS OF OLIVER TWIST'S GROWTH, EDUCATION, AND BOARD\n\n{prose}\n\n\n"
        "CHAPTER III.\nRELATES HOW OLIVER TWIST WAS VERY NEAR GETTING A PLACE WHICH WOULD NOT\n"
        f"HAVE BEEN A SINECURE\n\n{prose}\n"
    )
    titles = [part.title for part in parts_from_text(oliver)]
    assert titles == [
        "CHAPTER II. TREATS OF OLIVER TWIST'S GROWTH, EDUCATION, AND BOARD",
        "CHAPTER III. RELATES HOW OLIVER TWIST WAS VERY NEAR GETTING A PLACE WHICH WOULD NOT HAVE BEEN"
        " A SINECURE",
    ]
    # The Sun Also Rises sets "CHAPTER" and its number on two lines, under "BOOK I".
    sun = f"BOOK I\n\n\n\nCHAPTER\n1\n\n\n{prose}\n\n\nCHAPTER\n2\n\n\n{prose}\n"
    parts = parts_from_text(sun)
    assert [part.title for part in parts] == ["CHAPTER 1", "CHAPTER 2"]
    assert parts[0].blocks[0].text == "BOOK I"


def test_headings_by_ordinal_word() -> None:
    for line in ("FIRST ACT", "SECOND ACT", "CHAPTER THE LAST"):
        assert is_chapter_heading(line), line
    assert is_part_heading("Book the Second--the Golden Thread") and not is_part_heading("CHAPTER XLII.")
    for prose in ("First book I ever read", "Act the fool", "Part of the reason was this"):
        assert not is_chapter_heading(prose), prose
    # A Tale of Two Cities: parts named by their word, chapters only by their spacing.
    prose = " ".join(["word"] * 300)
    gap = "\n\n\n\n\n"
    lines = [
        "A TALE OF TWO CITIES", "Book the First--Recalled to Life", "I. The Period", prose,
        "II. The Mail", prose, "Book the Second--the Golden Thread", "I. Five Years Later", prose,
        "II. A Sight", prose, "Book the Third--the Track of a Storm", "I. In Secret", prose,
    ]
    tale = gap.join(lines) + "\n"
    parts = parts_from_text(tale)
    assert [part.title for part in parts] == [
        "", "I. The Period", "II. The Mail", "I. Five Years Later", "II. A Sight", "I. In Secret"
    ]
    assert parts[3].blocks[0].text == "Book the Second--the Golden Thread"


def test_a_contents_list_with_page_numbers_is_not_a_chapter() -> None:
    assert is_contents_list([
        "16.  NARRATIVE CONTINUED BY THE DOCTOR:",
        "       HOW THE SHIP WAS ABANDONED . . . . . . 100",
        "20.  SILVER'S EMBASSY . . . . . . . . . . . . 120",
        "21.  THE ATTACK     125",
    ])
    assert not is_contents_list(["He counted to 100", "and then to 50", "and stopped."])
    assert not is_contents_list(["THE ATTACK . . . . 125", "THE EMBASSY . . . . 120"])  # pages go back
    book = load_book(CORPUS / "txt" / "pg120.txt")
    contents = [c for c in book.chapters if c.matter_reason == "table of contents"]
    assert len(contents) == 1 and "THE ATTACK" in " ".join(b.text for b in contents[0].blocks)
    first = next(c for c in book.chapters if c.title.startswith("1."))
    assert [b.text for b in first.blocks[1:3]] == ["PART ONE--The Old Buccaneer", first.title]


def test_tables_read_row_by_row_or_as_a_note() -> None:
    rows = [["Name", "Game"], ["Lebron James", "Basketball"]]
    assert table_lines(rows, mode="rows") == ["Name, Game.", "Lebron James, Basketball."]
    assert table_lines(rows, mode="note") == ["Table: Name, Game."]
    assert table_lines(rows, mode="note", caption="Players") == ["Table: Players."]


def test_table_setting_reaches_word_documents() -> None:
    path = CORPUS / "docx" / "pandoc-tables.docx"
    rows = " ".join(b.text for c in load_book(path).chapters for b in c.blocks)
    note = " ".join(
        b.text for c in load_book(path, options=ReadOptions(tables="note")).chapters for b in c.blocks
    )
    assert "Lebron James, Basketball, Very High, Leaving Cleveland." in rows
    assert "Lebron James" not in note and "Table: Name, Game, Fame, Blame." in note


def test_language_from_the_text() -> None:
    assert (
        detect_language(
            "Als Gregor Samsa eines Morgens aus unruhigen Träumen erwachte, fand er sich in "
            "seinem Bett zu einem ungeheueren Ungeziefer verwandelt. Er lag auf dem Rücken und "
            "sah, wenn er den Kopf ein wenig hob, seinen gewölbten Bauch, der nicht mehr war."
        )
        == "de"
    )
    assert (
        detect_language(
            "Il y avait en Vestphalie, dans le château de monsieur le baron, un jeune garçon à qui "
            "la nature avait donné les moeurs les plus douces. Sa physionomie annonçait son âme; "
            "il avait le jugement assez droit, avec l'esprit le plus simple; c'est, je crois, pour "
            "cette raison qu'on le nommait Candide."
        )
        == "fr"
    )
    assert detect_language("Ο γεωργός όμως, ενάρετος και έντιμος άνθρωπος") == "el"
    assert detect_language("Chapter One") == ""


def test_word_content_controls_and_text_boxes_are_read() -> None:
    controls = load_book(CORPUS / "docx" / "pandoc-sdt_elements.docx")
    assert "Body copy" in " ".join(b.text for c in controls.chapters for b in c.blocks)
    box = load_book(CORPUS / "docx" / "mammoth-text-box.docx")
    assert [b.text for c in box.chapters for b in c.blocks if not b.is_heading] == ["Datum plane"]


def test_markdown_under_a_txt_name_is_read_as_markdown(tmp_path: Path) -> None:
    from omni_web.book.formats import detect_format

    page = tmp_path / "notes.txt"
    page.write_text(
        "---\ntitle: Field Notes\nauthor: A. Writer\n---\n\n# One\n\nSee [the map](map.html).\n\n"
        "```\ncode here\n```\n",
        encoding="utf-8",
    )
    book = load_book(page)
    spoken = " ".join(b.text for c in book.chapters for b in c.blocks)
    assert detect_format(page) == "markdown" and book.title == "Field Notes"
    assert "See the map." in spoken and "code here" not in spoken and "title:" not in spoken
    assert detect_format(CORPUS / "txt" / "pg11.txt") == "txt"


def test_fixed_layout_pages_join_into_the_books_chapters() -> None:
    book = load_book(CORPUS / "epub" / "sous-le-vent.epub")
    story = [c for c in book.chapters if c.selected_by_default]
    assert len(story) == 1 and not any(c.title.startswith("Chapter") for c in book.chapters)
    paragraphs = [b.text for b in story[0].blocks]
    # the page turn after "où" no longer splits the sentence
    assert any("où" in p and "le vent serait chaud" in p for p in paragraphs)


def test_small_capitals_and_web_help_navigation_are_not_spoken() -> None:
    from omni_web.book.text import normalize_text

    assert normalize_text("Jᴇᴀɴ-Bᴇʀɴᴀʀᴅ") == "Jean-Bernard"
    book = load_book(CORPUS / "epub" / "linear-algebra.epub")
    spoken = " ".join(b.text for c in book.chapters for b in c.blocks)
    assert "Previous topic" not in spoken and "T h i s" not in spoken
