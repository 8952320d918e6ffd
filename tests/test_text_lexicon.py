"""The pronunciation lexicon: whole words, case rules, regex opt-in, book over global, YAML round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.errors import LexiconError
from omni_web.paths import DataPaths
from omni_web.text import (
    CaseRule,
    Lexicon,
    LexiconEntry,
    LexiconStore,
    Pronouncer,
    book_identity,
    read_lexicon_file,
)
from tests.conftest import DATA_DIR
from tests.epub_builder import make_epub, xhtml


def lex(*entries: LexiconEntry) -> Lexicon:
    return Lexicon().merged(entries)[0]


def say(text: str, *entries: LexiconEntry, book: tuple[LexiconEntry, ...] = ()) -> str:
    return Pronouncer(lex(*entries), lex(*book)).apply(text)


def test_whole_words_only_by_default() -> None:
    entry = LexiconEntry("Ron", "Ronn")
    assert say("Ron met Ronald and Byron; Ron's hat.", entry) == "Ronn met Ronald and Byron; Ronn's hat."
    inside = LexiconEntry("colour", "color", whole_word=False)
    assert say("colourful colours", inside) == "colorful colors"


def test_case_rules() -> None:
    capital = LexiconEntry("Hermione", "her-MY-oh-nee")
    assert say("Hermione, HERMIONE, hermione", capital) == "her-MY-oh-nee, her-MY-oh-nee, hermione"
    lower = LexiconEntry("gaol", "jail")
    assert say("gaol, Gaol, GAOL", lower) == "jail, Jail, Jail"
    exact = LexiconEntry("bath", "barth", case=CaseRule.EXACT)
    assert say("bath Bath", exact) == "barth Bath"
    ignore = LexiconEntry("Nginx", "engine x", case=CaseRule.IGNORE)
    assert say("NGINX nginx", ignore) == "engine x engine x"


def test_regex_only_when_asked() -> None:
    literal = LexiconEntry("a.b", "A B")
    assert say("axb a.b", literal) == "axb A B"
    pattern = LexiconEntry(r"(\d+)lb", r"\1 pounds", regex=True)
    assert say("5lb of flour", pattern) == "5 pounds of flour"
    with pytest.raises(LexiconError, match="not a valid regular expression"):
        LexiconEntry("(unclosed", "x", regex=True).validated()
    with pytest.raises(LexiconError, match="group 2"):
        LexiconEntry(r"(\d)", r"\2", regex=True).validated()
    with pytest.raises(LexiconError, match="empty"):
        LexiconEntry(r"x*", "y", regex=True).validated()
    with pytest.raises(LexiconError, match="written form"):
        LexiconEntry("  ", "y").validated()


def test_book_entries_win_and_longest_first() -> None:
    text = "Ron Weasley and Ron."
    global_entries = (LexiconEntry("Ron", "Ronn"), LexiconEntry("Ron Weasley", "Ron WEE-zlee"))
    assert say(text, *global_entries) == "Ron WEE-zlee and Ronn."
    assert say(text, *global_entries, book=(LexiconEntry("ron", "Rawn"),)) == "Ron WEE-zlee and Rawn."
    # A spoken form is not rewritten by another entry.
    assert say("A and B", LexiconEntry("A", "B"), LexiconEntry("B", "C")) == "B and C"


def test_symbols_and_typographic_quotes() -> None:
    assert say("Tom & Jerry", LexiconEntry("&", "and")) == "Tom and Jerry"
    assert say("O'Brien", LexiconEntry("O’Brien", "oh-BRY-en")) == "oh-BRY-en"


def test_lexicon_editing() -> None:
    lexicon = lex(LexiconEntry("Ron", "Ronn"))
    lexicon = lexicon.with_entry(LexiconEntry("ron", "Rawn"))  # same key: replaced in place
    assert [(e.written, e.spoken) for e in lexicon.entries] == [("ron", "Rawn")]
    assert lexicon.find("RON").spoken == "Rawn"
    assert len(lexicon.without("Ron")) == 0
    with pytest.raises(LexiconError, match="no lexicon entry for 'Harry'"):
        lexicon.without("Harry")


def test_store_round_trip_and_book_identity(tmp_path: Path) -> None:
    store = LexiconStore(DataPaths(tmp_path))
    book = load_book(DATA_DIR / "pg11-alice.epub")
    identity = book_identity(book)
    store.save(lex(LexiconEntry("Gryphon", "GRIFF-in", note="the beast")), identity)
    store.save(lex(LexiconEntry("&", "and"), LexiconEntry("Gryphon", "gry-FON")))
    assert store.book_path(identity).parent == tmp_path / "lexicon" / "books"
    # A re-upload (a copy under another name) finds the same lexicon.
    copy = tmp_path / "renamed.epub"
    copy.write_bytes((DATA_DIR / "pg11-alice.epub").read_bytes())
    again = book_identity(load_book(copy))
    assert again == identity
    pronouncer = store.pronouncer(again)
    assert pronouncer.apply("the Gryphon & the Queen") == "the GRIFF-in and the Queen"
    loaded = store.load(identity)
    assert loaded.entries[0].note == "the beast" and loaded.entries[0].case is CaseRule.AUTO
    # Export, then import into another book: merged, counted.
    exported = tmp_path / "export.yaml"
    assert store.export_file(exported, identity) == 1
    other = book_identity(load_book(DATA_DIR / "wasteland.epub"))
    store.save(lex(LexiconEntry("Gryphon", "old")), other)
    assert store.import_file(exported, other) == (0, 1)
    assert store.load(other).find("Gryphon").spoken == "GRIFF-in"


def test_identity_without_identifier_uses_title_and_authors(tmp_path: Path) -> None:
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Same</dc:title>'
        "<dc:creator>A. Writer</dc:creator><dc:language>en</dc:language></metadata>"
        '<manifest><item id="d0" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="d0"/></spine></package>'
    )
    one = make_epub(tmp_path / "one.epub", (("ch1.xhtml", xhtml("<p>First edition text.</p>")),), opf=opf)
    two = make_epub(tmp_path / "two.epub", (("ch1.xhtml", xhtml("<p>Fixed edition text.</p>")),), opf=opf)
    assert book_identity(load_book(one)).key == book_identity(load_book(two)).key


def test_import_formats_and_bad_files(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text("Hermione: her-MY-oh-nee\nNgaio: NY-oh\n", encoding="utf-8")
    assert [e.written for e in read_lexicon_file(plain).entries] == ["Hermione", "Ngaio"]
    listed = tmp_path / "list.yaml"
    listed.write_text("- {written: 'v(\\d)', spoken: 'version \\1', regex: true}\n", encoding="utf-8")
    assert read_lexicon_file(listed).entries[0].regex
    broken = tmp_path / "broken.yaml"
    broken.write_text("entries: [unclosed\n", encoding="utf-8")
    with pytest.raises(LexiconError, match="broken.yaml is not a readable YAML lexicon"):
        read_lexicon_file(broken)
    bad_item = tmp_path / "bad.yaml"
    bad_item.write_text("entries:\n  - spoken: x\n", encoding="utf-8")
    with pytest.raises(LexiconError, match="bad.yaml: A lexicon entry must have 'written'"):
        read_lexicon_file(bad_item)
    # A broken stored lexicon is reported, never silently replaced.
    store = LexiconStore(DataPaths(tmp_path))
    store.global_path.parent.mkdir(parents=True)
    store.global_path.write_text("entries: [unclosed\n", encoding="utf-8")
    with pytest.raises(LexiconError):
        store.load()
    assert store.global_path.read_text(encoding="utf-8") == "entries: [unclosed\n"
