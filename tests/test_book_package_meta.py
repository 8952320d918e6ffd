"""Series, subtitle, identifiers and subjects from the package document (calibre and EPUB 3 forms)."""

from __future__ import annotations

from pathlib import Path

from omni_web.book import Identifier, load_book
from omni_web.book.package_meta import parse_identifiers, parse_series, parse_subtitle, refinements

DATA = Path(__file__).parent / "data"
OPF = "http://www.idpf.org/2007/opf"


def test_calibre_series_fixture_reads_every_field() -> None:
    meta = load_book(DATA / "hefty-water-series.epub").metadata
    assert (meta.title, meta.authors) == ("Hefty Water", ("Ann Writer",))
    assert (meta.series, meta.series_index) == ("The Water Cycle", "2")
    assert meta.isbn == "9780306406157"
    assert meta.subjects == ("Fiction", "Water")
    assert (meta.publisher, meta.description) == ("Sample Press", "A short book about water.")


def test_epub3_collection_wins_over_calibre_meta() -> None:
    metas = [
        (None, {"name": "calibre:series", "content": "Old Name"}),
        (None, {"name": "calibre:series_index", "content": "7"}),
        ("New Name", {"property": "belongs-to-collection", "id": "c1"}),
        ("series", {"refines": "#c1", "property": "collection-type"}),
        ("2.5", {"refines": "#c1", "property": "group-position"}),
    ]
    assert parse_series(metas) == ("New Name", "2.5")
    assert parse_series(metas[:2]) == ("Old Name", "7")
    # A "set" collection is not a series.
    assert parse_series([metas[2], ("set", {"refines": "#c1", "property": "collection-type"})]) == ("", "")
    assert parse_series([(None, {"name": "calibre:series_index", "content": "1"})]) == ("", "")


def test_identifier_schemes() -> None:
    refined = refinements([("15", {"refines": "#i3", "property": "identifier-type"})])
    values = [
        ("urn:isbn:978-0-306-40615-7", {}),
        ("B00TEST123", {f"{{{OPF}}}scheme": "ASIN"}),
        ("9780306406157", {"id": "i3"}),
        ("isbn:0306406152", {}),
        ("http://example.org/x", {}),
    ]
    assert parse_identifiers(values, refined) == (
        Identifier("ISBN", "9780306406157"),
        Identifier("ASIN", "B00TEST123"),
        Identifier("ISBN", "0306406152"),
        Identifier("", "http://example.org/x"),
    )


def test_subtitle_from_title_type() -> None:
    titles = [("Main", {"id": "t1"}), ("The Sub", {"id": "t2"})]
    refined = refinements([("subtitle", {"refines": "#t2", "property": "title-type"})])
    assert parse_subtitle(titles, refined) == "The Sub"
    assert load_book(DATA / "childrens-literature.epub").metadata.subtitle.startswith("A Textbook of Sources")
