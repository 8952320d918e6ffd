"""Footnotes as a setting: skipped (the default) or read after the paragraph that references them.

The trap fixtures already hold notes (tests/formats_builder.py: a noteref and asides in HTML, a
notes body in FB2, ``<text:note>`` in ODT; tests/data/regime-anticancer-arabic.epub: a marker
link and a footnote aside), so each reader is shown on them in both modes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.book.options import ReadOptions
from omni_web.errors import SettingsError
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.formats_builder import NEVER_READ, SPOKEN, fb2_book, html_book, odt_book
from tests.pdf_builder import CHAPTERS, trap_book

_NOTE = NEVER_READ[2]  # "A footnote nobody should hear."
_MOVED = ReadOptions(footnotes="end-of-paragraph")


@pytest.mark.parametrize("builder", [html_book, fb2_book, odt_book], ids=["html", "fb2", "odt"])
def test_a_note_is_read_after_its_paragraph_only_when_asked(tmp_path: Path, builder) -> None:
    path = builder(tmp_path / f"book.{builder.__name__.removesuffix('_book')}")
    skipped = [b.text for c in load_book(path).chapters for b in c.blocks]
    assert not any(_NOTE in text for text in skipped)
    chapters = load_book(path, options=_MOVED).chapters
    storm = next(c for c in chapters if c.title.startswith("Chapter One"))
    texts = [b.text for b in storm.blocks]
    # The note comes right after the paragraph with its marker, which reads as before (no marker).
    first = next(i for i, text in enumerate(texts) if text.startswith(SPOKEN[0][:30]))
    assert texts[first + 1] == f"Note: {_NOTE}"
    assert texts[first] == next(t for t in skipped if t.startswith(SPOKEN[0][:30]))
    assert sum(_NOTE in t for c in chapters for b in c.blocks for t in [b.text]) >= 1


def test_epub_footnote_aside_follows_the_paragraph_with_its_marker() -> None:
    path = DATA_DIR / "regime-anticancer-arabic.epub"
    note = "منشورات أوديل جاكوب"
    skipped = load_book(path).chapters[2]
    assert note not in " ".join(b.text for b in skipped.blocks)
    texts = [b.text for b in load_book(path, options=_MOVED).chapters[2].blocks]
    at = next(i for i, text in enumerate(texts) if note in text)
    assert texts[at].startswith("Note: ") and at > 0 and not texts[at - 1].startswith("Note: ")
    assert "[1]" not in texts[at - 1]  # the marker is still not read
    assert len(texts) == len(skipped.blocks) + sum(t.startswith("Note: ") for t in texts)


def test_pdf_small_print_note_follows_the_paragraph_with_its_raised_marker(tmp_path: Path) -> None:
    path = trap_book(tmp_path / "trap.pdf", outline=False)
    skipped = next(c for c in load_book(path).chapters if c.title == CHAPTERS[0])
    assert not any("great gale" in b.text for b in skipped.blocks)
    storm = next(c for c in load_book(path, options=_MOVED).chapters if c.title == CHAPTERS[0])
    texts = [b.text for b in storm.blocks]
    # The marker sits after "storm" in the first paragraph; the second paragraph comes after the note.
    assert texts == [
        texts[0],
        skipped.blocks[1].text,
        "Note: The great gale of that winter is remembered on the coast still.",
        skipped.blocks[2].text,
    ]
    assert "storm1" not in texts[1] and "storm that" in texts[1]


def test_docx_footnotes_follow_their_paragraph_and_comments_are_never_read() -> None:
    notes = load_book(DATA_DIR / "mammoth-footnotes.docx", options=_MOVED)
    assert [b.text for c in notes.chapters for b in c.blocks] == [
        "Ouch.",
        "Note: A tachyon walks into a bar.",
        "Note: Fin.",
    ]
    comments = load_book(DATA_DIR / "mammoth-comments.docx", options=_MOVED)
    assert [b.text for c in comments.chapters for b in c.blocks] == ["Ouch."]


def test_the_setting_is_checked_and_reaches_the_readers(tmp_path: Path) -> None:
    assert Settings().footnotes == "skip"
    with pytest.raises(SettingsError, match="footnotes"):
        Settings(footnotes="inline").validate()
    options = Settings(footnotes="end-of-paragraph").read_options(_paths(tmp_path))
    assert options.notes_at_paragraph_end and options.cache_dir == tmp_path / "state" / "converted"
    # A job's own choice (convert --footnotes) wins over the setting and is kept with the job.
    assert Settings().read_options(_paths(tmp_path), footnotes="end-of-paragraph").notes_at_paragraph_end
    from omni_web.pipeline.request import ConvertRequest

    request = ConvertRequest(book_path=tmp_path / "b.pdf", model_key="m", footnotes="end-of-paragraph")
    assert ConvertRequest.from_dict(request.to_dict()).footnotes == "end-of-paragraph"
    assert (
        ConvertRequest.from_dict({"book_path": "b.pdf", "model_key": "m"}).footnotes is None
    )  # an older job


def _paths(root: Path):  # noqa: ANN202 - DataPaths
    from omni_web.paths import DataPaths

    return DataPaths(root)


def test_chapters_command_prints_the_note_after_its_paragraph_with_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omni_web.cli import main

    path = html_book(tmp_path / "book.html")
    assert main(["chapters", str(path), "--text", "2"]) == 0
    assert _NOTE not in capsys.readouterr().out
    assert main(["chapters", str(path), "--text", "2", "--footnotes", "end-of-paragraph"]) == 0
    out = capsys.readouterr().out
    assert f"Note: {_NOTE}" in out and out.index(SPOKEN[0][:30]) < out.index(f"Note: {_NOTE}")


# Gutenberg's plain texts (Crime and Punishment, War and Peace, The Brothers Karamazov, words as
# they have them): the markers in the sentence, each note a paragraph of its own under its label.
_PLAIN = """CHAPTER I

Then the great hour struck,[*] and every man showed himself in his true colours.

     [*] The emancipation of the serfs in 1861 is meant.

Anna Pávlovna's "At Home" was like the former one, only the novelty she offered her guests this
time was not Mortemart, but a diplomatist fresh from Berlin. La femme la plus séduisante de
Pétersbourg, * was also there.

     * The most fascinating woman in Petersburg.

"Cela nous convient à merveille.*(2) Suvórov now, he knew what he was about."

     *(2) That suits us down to the ground.

I am strong,[1] for I've made a decision once for all.

He would *not* go; "*Really*," he said, and went on.

A list of what he took:

* bread
* a knife

 [1] In Russian, "silen."
"""


def test_plain_text_notes_follow_the_setting_and_their_markers_are_never_read(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(_PLAIN, encoding="utf-8")
    skipped = [b.text for c in load_book(path).chapters for b in c.blocks if not b.is_heading]
    assert skipped == [
        "Then the great hour struck, and every man showed himself in his true colours.",
        'Anna Pávlovna\'s "At Home" was like the former one, only the novelty she offered her guests this'
        " time was not Mortemart, but a diplomatist fresh from Berlin. La femme la plus séduisante de"
        " Pétersbourg, was also there.",
        '"Cela nous convient à merveille. Suvórov now, he knew what he was about."',
        "I am strong, for I've made a decision once for all.",
        'He would not go; "Really," he said, and went on.',  # asterisks around words are no markers
        "A list of what he took:",
        "* bread * a knife",  # a list, though "*" was a marker before it: its lines are not one note
    ]
    moved = [b.text for c in load_book(path, options=_MOVED).chapters for b in c.blocks if not b.is_heading]
    assert [t for t in moved if t.startswith("Note: ")] == [
        "Note: The emancipation of the serfs in 1861 is meant.",
        "Note: The most fascinating woman in Petersburg.",
        "Note: That suits us down to the ground.",
        'Note: In Russian, "silen."',
    ]
    assert moved.index("Note: The emancipation of the serfs in 1861 is meant.") == 1
