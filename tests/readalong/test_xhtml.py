"""Sentences found in real XHTML and wrapped in spans without changing the text."""

from __future__ import annotations

import zipfile

from lxml import etree

from omni_web.book import chunk_chapter, load_book
from omni_web.book.text import split_sentences
from omni_web.readalong.package import parse_document, read_package
from omni_web.readalong.tokens import align_tokens, tokenize
from omni_web.readalong.xhtml import document_text, place_sentences, wrap_sentences
from tests.conftest import DATA_DIR

PAGE = b"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>T</title></head>
<body><h1 id="top">Chapter One</h1>
<p>\xe2\x80\x9cHello <em id="x">world.</em>\xe2\x80\x9d Next <i>one here. And</i> the last&#8212;sentence!<a
 epub:type="noteref" href="#n1">1</a></p>
<!-- a comment stays -->
<p>In 1865 she met Dr. Smith. Two <b>sen</b>tences.</p></body></html>"""


def _text(root: etree._Element) -> str:
    body = next(e for e in root.iter() if isinstance(e.tag, str) and e.tag.endswith("body"))
    return "".join(body.itertext())


def test_sentences_across_inline_markup_become_one_span_each_and_the_text_is_unchanged() -> None:
    root = parse_document(PAGE)
    before = _text(root)
    doc = document_text(root)
    sentences = ["Chapter One", '"Hello world."', "Next one here.", "And the last, sentence!",
                 "In eighteen sixty-five she met Doctor Smith.", "Two sentences."]
    placements = place_sentences(sentences, [doc])
    assert [p.sentence for p in placements] == [0, 1, 2, 3, 4, 5]
    done = wrap_sentences(doc, [(p.start, p.end, f"s{p.sentence}") for p in placements])
    assert all(done.values())
    assert _text(root) == before
    spans = {e.get("id"): "".join(e.itertext()) for e in root.iter("{http://www.w3.org/1999/xhtml}span")}
    assert spans["s1"] == "\u201cHello world.\u201d"
    assert spans["s2"] == "Next one here."
    assert spans["s3"].startswith("And the last\u2014sentence!")
    assert spans["s4"] == "In 1865 she met Dr. Smith."
    assert spans["s5"] == "Two sentences."
    assert root.xpath("//*[@id='x']")[0].text == "world."  # the id stays on its element, once
    assert len(root.xpath("//*[@id='x']")) == 1
    serialised = etree.tostring(root, encoding="unicode")
    assert "<!-- a comment stays -->" in serialised and 'epub:type="noteref"' in serialised


def test_alignment_tolerates_asr_errors_and_rewritten_numbers() -> None:
    reference = [t.key for t in tokenize("Alice was beginning to get very tired in 1865.")]
    heard = [t.key for t in tokenize("Alice was begging to get very tide in eighteen sixty five")]
    mapping = align_tokens(reference, heard)
    assert mapping[:2] == [0, 1] and mapping[3:6] == [3, 4, 5]
    assert mapping[2] == 2  # "beginning" ~ "begging": a substitution still pairs
    assert mapping[-1] == 8  # "1865" pairs with the first spoken word of the number


def test_every_spoken_sentence_of_alice_chapter_one_is_found_in_its_page() -> None:
    book = load_book(DATA_DIR / "pg11-alice.epub")
    chapter = next(c for c in book.chapters if c.title.startswith("CHAPTER I."))
    sentences = [s for chunk in chunk_chapter(chapter, chunk_words=60) for s in split_sentences(chunk.text)]
    with zipfile.ZipFile(DATA_DIR / "pg11-alice.epub") as archive:
        package = read_package(archive)
        page = package.path_of(chapter.source_href.partition("#")[0])
        doc = document_text(parse_document(archive.read(page)))
    placements = place_sentences(sentences, [doc])
    assert len(placements) == len(sentences)
    done = wrap_sentences(doc, [(p.start, p.end, f"s{p.sentence}") for p in placements])
    assert sum(done.values()) == len(sentences)
