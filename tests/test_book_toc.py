"""Chapters from nav, NCX and spine; anchor splits; what text extraction keeps and drops."""

from __future__ import annotations

from pathlib import Path

from omni_web.book import load_book
from omni_web.book.extract import extract_document
from omni_web.book.matter import MatterSignals, classify_matter
from omni_web.book.model import BlockKind, TextBlock
from omni_web.book.toc import parse_nav, parse_ncx, resolve_href
from tests.epub_builder import make_epub, nav_xhtml, ncx_xml, xhtml


def _texts(data: str, split_ids: tuple[str, ...] = ()) -> list[list[str]]:
    document = extract_document(data.encode(), split_ids=split_ids)
    return [[block.text for block in segment.blocks] for segment in document.segments]


def test_three_chapters_in_one_file_split_at_anchors(tmp_path: Path) -> None:
    body = (
        "<p>Before any chapter.</p>"
        '<section id="one"><h2>One</h2><p>First text.</p></section>'
        '<section id="two"><h2>Two</h2><p>Second <a id="inline"/>text.</p></section>'
        '<div id="three"><h2>Three</h2><p>Third text.</p></div>'
    )
    nav = nav_xhtml(
        [
            ("book.xhtml#one", "Chapter One"),
            ("book.xhtml#two", "Chapter Two"),
            ("book.xhtml#three", "Chapter Three"),
        ]
    )
    book = load_book(make_epub(tmp_path / "b.epub", [("book.xhtml", xhtml(body))], nav=nav))
    assert [c.title for c in book.chapters] == ["Chapter 1", "Chapter One", "Chapter Two", "Chapter Three"]
    assert [[b.text for b in c.blocks] for c in book.chapters] == [
        ["Before any chapter."],
        ["One", "First text."],
        ["Two", "Second text."],
        ["Three", "Third text."],
    ]
    assert book.chapters[2].source_href == "book.xhtml#two"
    assert book.chapters[1].blocks[0].kind is BlockKind.HEADING


def test_ncx_only_epub2_book(tmp_path: Path) -> None:
    docs = [("a.xhtml", xhtml("<p>Alpha words here.</p>")), ("b.xhtml", xhtml("<p>Beta words here.</p>"))]
    ncx = ncx_xml([("a.xhtml", "The Alpha"), ("b.xhtml", "The Beta")])
    book = load_book(make_epub(tmp_path / "ncx.epub", docs, ncx=ncx))
    assert [c.title for c in book.chapters] == ["The Alpha", "The Beta"]
    assert all(c.selected_by_default for c in book.chapters)


def test_nav_is_preferred_over_ncx(tmp_path: Path) -> None:
    docs = [("a.xhtml", xhtml("<p>Alpha words here.</p>")), ("b.xhtml", xhtml("<p>Beta words here.</p>"))]
    book = load_book(
        make_epub(
            tmp_path / "both.epub",
            docs,
            nav=nav_xhtml([("a.xhtml", "Nav A"), ("b.xhtml", "Nav B")]),
            ncx=ncx_xml([("a.xhtml", "Ncx A"), ("b.xhtml", "Ncx B")]),
        )
    )
    assert [c.title for c in book.chapters] == ["Nav A", "Nav B"]


def test_no_toc_falls_back_to_spine_with_heading_titles(tmp_path: Path) -> None:
    docs = [
        ("a.xhtml", xhtml("<h1>First Heading</h1><p>Alpha.</p>")),
        ("b.xhtml", xhtml("<p>No heading here.</p>", title="Doc Title B")),
        ("c.xhtml", xhtml("<p>Nothing names this one.</p>")),
    ]
    book = load_book(make_epub(tmp_path / "spine.epub", docs))
    assert [c.title for c in book.chapters] == ["First Heading", "Doc Title B", "Chapter 3"]


def test_useless_single_entry_toc_falls_back_to_spine(tmp_path: Path) -> None:
    docs = [(f"p{i}.xhtml", xhtml(f"<h1>Part {i}</h1><p>Words of part {i}.</p>")) for i in range(4)]
    book = load_book(make_epub(tmp_path / "one.epub", docs, nav=nav_xhtml([("p0.xhtml", "Start")])))
    assert [c.title for c in book.chapters] == ["Part 0", "Part 1", "Part 2", "Part 3"]


def test_unlisted_documents_continue_the_previous_chapter(tmp_path: Path) -> None:
    docs = [
        ("cover.xhtml", xhtml('<img src="cover.jpg" alt="cover"/>')),
        ("c1.xhtml", xhtml("<h1>One</h1><p>Start of one.</p>")),
        ("c1b.xhtml", xhtml("<p>Rest of one.</p>")),
        ("c2.xhtml", xhtml("<h1>Two</h1><p>All of two.</p>")),
    ]
    nav = nav_xhtml([("c1.xhtml", "One"), ("c2.xhtml", "Two")])
    book = load_book(make_epub(tmp_path / "split.epub", docs, nav=nav))
    assert [c.title for c in book.chapters] == ["Cover", "One", "Two"]
    assert [b.text for b in book.chapters[1].blocks] == ["One", "Start of one.", "Rest of one."]
    assert book.chapters[0].matter_reason == "cover" and not book.chapters[0].selected_by_default


def test_image_only_page_in_the_middle_is_deselected(tmp_path: Path) -> None:
    docs = [
        ("c1.xhtml", xhtml("<h1>One</h1><p>Text one.</p>")),
        ("plate.xhtml", xhtml('<figure><img src="plate.png" alt="A plate"/></figure>')),
        ("c2.xhtml", xhtml("<h1>Two</h1><p>Text two.</p>")),
    ]
    nav = nav_xhtml([("c1.xhtml", "One"), ("plate.xhtml", "Plate"), ("c2.xhtml", "Two")])
    book = load_book(make_epub(tmp_path / "plate.epub", docs, nav=nav))
    plate = book.chapters[1]
    assert plate.title == "Plate" and plate.word_count == 0 and plate.blocks == ()
    assert plate.matter_reason == "image-only page" and not plate.selected_by_default


def test_generic_toc_label_gives_way_to_the_heading(tmp_path: Path) -> None:
    docs = [("c.xhtml", xhtml("<header><h2>Chapter 2</h2><h1>What is it?</h1></header><p>Body text.</p>"))]
    book = load_book(
        make_epub(tmp_path / "generic.epub", docs, nav=nav_xhtml([("c.xhtml", "Start Reading")]))
    )
    assert book.chapters[0].title == "Chapter 2: What is it?"


def test_front_matter_classified_by_title_type_and_content(tmp_path: Path) -> None:
    docs = [
        ("toc.xhtml", xhtml("<h1>Contents</h1><p>One</p>")),
        (
            "copy.xhtml",
            xhtml("<p>Copyright © 2020 Ann Author. All rights reserved. ISBN 978-0-00-000000-0.</p>"),
        ),
        (
            "ded.xhtml",
            xhtml('<section epub:type="dedication"><p>For my mother, who read to me.</p></section>'),
        ),
        ("c1.xhtml", xhtml("<h1>One</h1><p>" + "Real story words. " * 20 + "</p>")),
        ("idx.xhtml", xhtml("<h1>Index</h1><p>apples, 3; pears, 5</p>")),
    ]
    nav = nav_xhtml(
        [
            ("toc.xhtml", "Contents"),
            ("copy.xhtml", "Legal"),
            ("ded.xhtml", "Dedication"),
            ("c1.xhtml", "One"),
            ("idx.xhtml", "Index"),
        ]
    )
    book = load_book(make_epub(tmp_path / "matter.epub", docs, nav=nav))
    assert [c.matter_reason for c in book.chapters] == [
        "table of contents",
        "copyright page",
        "",
        "",
        "index",
    ]
    assert [c.selected_by_default for c in book.chapters] == [False, False, True, True, False]


def test_landmarks_mark_cover_and_body_start(tmp_path: Path) -> None:
    docs = [
        ("half.xhtml", xhtml("<h1>Test Book</h1>")),
        ("part.xhtml", xhtml("<h1>Part One</h1>")),
        ("c1.xhtml", xhtml("<h1>One</h1><p>" + "Words. " * 30 + "</p>")),
    ]
    landmarks = (
        '<nav epub:type="landmarks" hidden=""><ol>'
        '<li><a epub:type="bodymatter" href="part.xhtml">Start</a></li></ol></nav>'
    )
    nav = nav_xhtml(
        [("half.xhtml", "Test Book"), ("part.xhtml", "Part One"), ("c1.xhtml", "One")], landmarks=landmarks
    )
    book = load_book(make_epub(tmp_path / "landmarks.epub", docs, nav=nav))
    # The half-title before the body is front matter; the part title where the body starts is read.
    assert [c.matter_reason for c in book.chapters] == ["title page", "", ""]
    assert [c.selected_by_default for c in book.chapters] == [False, True, True]


def test_extraction_drops_what_must_not_be_read() -> None:
    body = (
        '<p>Text<a epub:type="noteref" href="#n1">1</a> with<sup><a href="#n2">2</a></sup> notes'
        '<a role="doc-noteref" href="n.xhtml#n3">[3]</a>.</p>'
        '<p>Page<span epub:type="pagebreak" id="p5" title="5">5</span> break'
        '<span role="doc-pagebreak">6</span> and <span class="pagenum">[7]</span>numbers.</p>'
        "<script>alert('no');</script><style>p { color: red }</style>"
        '<p hidden="hidden">Hidden text.</p><p style="display: none">Also hidden.</p>'
        '<aside epub:type="footnote" id="n1"><p>The footnote body.</p></aside>'
        '<aside class="endnote"><p>An endnote body.</p></aside>'
        '<p>See <a href="https://example.org/1">1</a> and <a href="#sec">section two</a>.</p>'
        "<p>Ruby <ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby> here.</p>"
    )
    assert _texts(xhtml(body)) == [
        [
            "Text with notes.",
            "Page break and numbers.",
            "See 1 and section two.",
            "Ruby 漢 here.",
        ]
    ]


def test_notes_page_keeps_its_notes() -> None:
    body = '<h1>Notes</h1><aside epub:type="footnote"><p>First note text.</p></aside><aside epub:type="footnote"><p>Second note text.</p></aside>'
    assert _texts(xhtml(body)) == [["Notes", "First note text.", "Second note text."]]


def test_extraction_keeps_blocks_and_inline_text() -> None:
    body = (
        "<h2>CHAPTER I.<br/>Down the Hole</h2><p>One <i>two</i> <b>three</b>.</p>"
        "<div>Loose <span>text</span><p>Nested para.</p>tail text</div>"
        "<ul><li>Item one</li><li>Item two</li></ul><p>a&nbsp;b</p>"
    )
    document = extract_document(xhtml(body).encode())
    blocks = document.segments[0].blocks
    assert [(b.kind.value, b.text) for b in blocks] == [
        ("heading", "CHAPTER I. Down the Hole"),
        ("paragraph", "One two three."),
        ("paragraph", "Loose text"),
        ("paragraph", "Nested para."),
        ("paragraph", "tail text"),
        ("paragraph", "Item one"),
        ("paragraph", "Item two"),
        ("paragraph", "a b"),
    ]


def test_xhtml11_named_entities_become_text() -> None:
    data = (
        '<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
        '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd"><html xmlns="http://www.w3.org/1999/xhtml">'
        "<body><p>caf&eacute; &mdash; na&iuml;ve &amp; more</p></body></html>"
    )
    assert _texts(data) == [["café — naïve & more"]]


def test_parse_nav_nested_and_landmarks() -> None:
    nested = '<li><span>Group</span><ol><li><a href="../Text/c2.xhtml#x">Deep</a></li></ol></li>'
    landmarks = '<nav epub:type="landmarks"><ol><li><a epub:type="cover" href="../Text/cover.xhtml">Cover</a></li></ol></nav>'
    data = nav_xhtml([("../Text/c1.xhtml", "Top")], nested=nested, landmarks=landmarks).encode()
    entries, marks = parse_nav(data, "Nav/nav.xhtml")
    assert [(e.title, e.path, e.fragment, e.depth) for e in entries] == [
        ("Top", "Text/c1.xhtml", "", 0),
        ("Deep", "Text/c2.xhtml", "x", 1),
    ]
    assert [(m.kinds, m.path, m.title) for m in marks] == [
        (frozenset({"cover"}), "Text/cover.xhtml", "Cover")
    ]


def test_parse_ncx_and_resolve_href() -> None:
    entries = parse_ncx(ncx_xml([("Text/a%20b.xhtml#frag", "A B")]).encode(), "toc.ncx")
    assert [(e.title, e.path, e.fragment) for e in entries] == [("A B", "Text/a b.xhtml", "frag")]
    assert resolve_href("https://example.org/x", "a.xhtml") is None
    assert resolve_href("#n", "Text/a.xhtml") == ("Text/a.xhtml", "n")
    assert resolve_href("../b.xhtml", "Text/a.xhtml") == ("b.xhtml", "")


def test_classify_matter_rules() -> None:
    def reason(title: str, text: str = "Some words here.", **kwargs: object) -> str:
        blocks = (TextBlock(BlockKind.PARAGRAPH, text),) if text else ()
        words = len(text.split())
        return classify_matter(MatterSignals(title=title, blocks=blocks, word_count=words, **kwargs))  # type: ignore[arg-type]

    assert reason("Table of Contents") == "table of contents"
    assert reason("Sommaire") == "table of contents"
    assert reason("Chapter 1", types=frozenset({"copyright-page"})) == "copyright page"
    assert reason("Bibliography") == "bibliography"
    assert reason("Also by Ann Author") == "other books by the author"
    assert reason("Chapter 1", text="", image_count=2) == "image-only page"
    assert reason("Chapter 1", text="") == "empty page"
    assert reason("The Cover Story", text="word " * 100) == ""
    assert reason("Chapter 1", text="A story that mentions Project Gutenberg once. " + "word " * 400) == ""
    assert reason("My Book", text="by Ann", book_title="My Book") == "title page"
    # A byline set as a heading (Heart of Darkness's Gutenberg HTML) is the title page, not a chapter.
    assert reason("By Joseph Conrad", text="") == "title page"
    assert reason("By the Waters of Babylon", text="word " * 300) == ""  # a long chapter keeps its title
    assert reason("Chapter 1", text="Some words.", is_nav=True) == "table of contents"


def test_nav_without_toc_or_empty_nav_falls_back_to_spine(tmp_path: Path) -> None:
    docs = [
        ("a.xhtml", xhtml("<h1>A</h1><p>Alpha text.</p>")),
        ("b.xhtml", xhtml("<h1>B</h1><p>Beta text.</p>")),
    ]
    landmarks_only = xhtml('<nav epub:type="landmarks"><ol><li><a href="a.xhtml">A</a></li></ol></nav>')
    for name, nav in (("landmarks-only", landmarks_only), ("empty", "")):
        book = load_book(make_epub(tmp_path / f"{name}.epub", docs, nav=nav))
        assert [c.title for c in book.chapters] == ["A", "B"], name


def test_anchor_inside_a_paragraph_splits_it(tmp_path: Path) -> None:
    docs = [("b.xhtml", xhtml("<h1>B</h1><p>End of b. <a id='two'/>Start of two.</p>"))]
    nav = nav_xhtml([("b.xhtml", "B"), ("b.xhtml#two", "Two")])
    book = load_book(make_epub(tmp_path / "inline.epub", docs, nav=nav))
    assert [[b.text for b in c.blocks] for c in book.chapters] == [["B", "End of b."], ["Start of two."]]


def test_broken_ncx_falls_back_to_spine(tmp_path: Path) -> None:
    docs = [
        ("a.xhtml", xhtml("<h1>A</h1><p>Alpha text.</p>")),
        ("b.xhtml", xhtml("<h1>B</h1><p>Beta text.</p>")),
    ]
    book = load_book(make_epub(tmp_path / "ncx.epub", docs, ncx=""))
    assert [c.title for c in book.chapters] == ["A", "B"]
