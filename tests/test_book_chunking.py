"""Chunks hold whole sentences, respect every cap, keep the pauses, and drop nothing."""

from __future__ import annotations

import re
from functools import cache

import pytest

from omni_web.book import (
    BlockKind,
    Book,
    Chapter,
    PauseKind,
    TextBlock,
    chunk_chapter,
    effective_chunk_limits,
    load_book,
    normalize_text,
)
from omni_web.book.chunking import title_is_spoken
from omni_web.catalog import CATALOG, CatalogEntry, get_entry
from tests.conftest import DATA_DIR

FIXTURES = sorted(p.name for p in DATA_DIR.glob("*.epub"))
# (chunk_words, max_words, max_chars): app default, a Higgs-like cap, tight caps, absurd caps.
LIMITS = [(120, None, None), (80, 80, 4096), (20, 25, 150), (5, 5, 40)]
_SPACE = re.compile(r"\s+")


@cache
def _book(name: str) -> Book:
    return load_book(DATA_DIR / name)


def _chapter(blocks: list[tuple[BlockKind, str]], title: str = "A Title") -> Chapter:
    text_blocks = tuple(TextBlock(kind, text) for kind, text in blocks)
    return Chapter(
        index=3,
        title=title,
        blocks=text_blocks,
        word_count=0,
        selected_by_default=True,
        matter_reason="",
        source_href="x.xhtml",
    )


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize(("chunk_words", "max_words", "max_chars"), LIMITS)
def test_chunks_respect_caps_and_drop_nothing(
    name: str, chunk_words: int, max_words: int | None, max_chars: int | None
) -> None:
    book = _book(name)
    for chapter in book.chapters:
        chunks = chunk_chapter(chapter, chunk_words=chunk_words, max_words=max_words, max_chars=max_chars)
        cap = min(chunk_words, max_words or chunk_words)
        for position, chunk in enumerate(chunks):
            assert chunk.chapter_index == chapter.index and chunk.index == position
            assert 0 < chunk.words <= cap, (chapter.title, chunk)
            if max_chars is not None:
                assert len(chunk.text) <= max_chars, (chapter.title, chunk)
            assert chunk.text == chunk.text.strip() and chunk.text
        expected = [normalize_text(block.text) for block in chapter.blocks]
        if chunks and title_is_spoken(chapter):
            expected.insert(0, normalize_text(chapter.title))
        joined = _SPACE.sub("", "".join(chunk.text for chunk in chunks))
        assert joined == _SPACE.sub("", "".join(expected)), chapter.title
        spoken_blocks = sum(1 for text in expected if text)
        ends = [c for c in chunks if c.pause_after is not PauseKind.CHUNK]
        assert len(ends) == spoken_blocks  # one block end per paragraph/heading: no pause is lost
        if chunks:
            assert chunks[-1].pause_after is PauseKind.CHAPTER_END
            assert all(c.pause_after is not PauseKind.CHAPTER_END for c in chunks[:-1])


def test_alice_chapter_chunks_are_whole_sentences() -> None:
    chapter = next(c for c in _book("pg11-alice.epub").chapters if c.title.startswith("CHAPTER I."))
    chunks = chunk_chapter(chapter, chunk_words=120)
    assert chunks[0].text == "CHAPTER I. Down the Rabbit-Hole" and chunks[0].pause_after is PauseKind.HEADING
    assert len(chunks) > 20
    assert chunks[1].text.startswith("Alice was beginning to get very tired")
    assert chunks[1].pause_after is PauseKind.PARAGRAPH
    # Not a single title chunk: the chapter already opens with its heading.
    assert sum(1 for c in chunks if c.text == chapter.title) == 1
    for chunk in chunks:
        if chunk.pause_after is not PauseKind.HEADING:
            assert chunk.text[-1] in '.!?"\')', chunk.text  # ends at a sentence end


def test_paragraph_packs_sentences_up_to_the_budget() -> None:
    sentences = [f"Sentence number {i} has six words." for i in range(10)]
    chapter = _chapter([(BlockKind.HEADING, "A Title"), (BlockKind.PARAGRAPH, " ".join(sentences))])
    chunks = chunk_chapter(chapter, chunk_words=20)
    assert [c.words for c in chunks] == [2, 18, 18, 18, 6]
    assert [c.pause_after for c in chunks] == [
        PauseKind.HEADING, PauseKind.CHUNK, PauseKind.CHUNK, PauseKind.CHUNK, PauseKind.CHAPTER_END,
    ]
    assert chunks[1].text == " ".join(sentences[:3])


def test_paragraphs_are_never_merged() -> None:
    chapter = _chapter(
        [(BlockKind.PARAGRAPH, "One."), (BlockKind.PARAGRAPH, "Two."), (BlockKind.PARAGRAPH, "Three.")]
    )
    chunks = chunk_chapter(chapter, chunk_words=100, speak_title=False)
    assert [c.text for c in chunks] == ["One.", "Two.", "Three."]
    assert [c.pause_after for c in chunks] == [
        PauseKind.PARAGRAPH,
        PauseKind.PARAGRAPH,
        PauseKind.CHAPTER_END,
    ]


def test_scene_break_is_a_long_pause_never_spoken() -> None:
    chapter = _chapter(
        [
            (BlockKind.PARAGRAPH, "She ate it."),
            (BlockKind.PARAGRAPH, "* * * * * *"),
            (BlockKind.PARAGRAPH, "\u2042"),
            (BlockKind.PARAGRAPH, "Later, she woke."),
        ]
    )
    chunks = chunk_chapter(chapter, chunk_words=100, speak_title=False)
    assert [c.text for c in chunks] == ["She ate it.", "Later, she woke."]
    assert [c.pause_after for c in chunks] == [PauseKind.SCENE_BREAK, PauseKind.CHAPTER_END]


def test_alice_scene_breaks_are_pauses() -> None:
    # Alice chapter I has a line of twenty asterisks mid-chapter and another as its last block.
    chapter = next(c for c in _book("pg11-alice.epub").chapters if "Rabbit-Hole" in c.title)
    chunks = chunk_chapter(chapter, chunk_words=120)
    assert not any("*" in c.text for c in chunks)
    breaks = [c for c in chunks if c.pause_after is PauseKind.SCENE_BREAK]
    assert [c.text[-20:] for c in breaks] == ["very soon finished it off."[-20:]]
    assert chunks[-1].pause_after is PauseKind.CHAPTER_END


def test_title_is_spoken_when_the_chapter_does_not_open_with_it() -> None:
    chapter = _chapter([(BlockKind.PARAGRAPH, "It was a dark night.")], title="Chapter 3: Storm")
    chunks = chunk_chapter(chapter, chunk_words=50)
    assert [c.text for c in chunks] == ["Chapter 3: Storm", "It was a dark night."]
    assert chunks[0].pause_after is PauseKind.HEADING
    assert [c.text for c in chunk_chapter(chapter, chunk_words=50, speak_title=False)] == [
        "It was a dark night."
    ]
    # A first heading that matches the title (modulo case and punctuation) is not doubled.
    same = _chapter(
        [(BlockKind.HEADING, "CHAPTER 3 — STORM"), (BlockKind.PARAGRAPH, "Rain.")], title="Chapter 3: Storm"
    )
    assert [c.text for c in chunk_chapter(same, chunk_words=50)] == ["CHAPTER 3, STORM", "Rain."]
    # A different first heading still gets the title spoken before it.
    other = _chapter([(BlockKind.HEADING, "Part One"), (BlockKind.PARAGRAPH, "Rain.")], title="Storm")
    assert [c.text for c in chunk_chapter(other, chunk_words=50)] == ["Storm", "Part One", "Rain."]


def test_empty_chapter_has_no_chunks_not_even_a_title() -> None:
    chapter = _chapter([(BlockKind.PARAGRAPH, "* * *")], title="Cover")
    assert chunk_chapter(chapter, chunk_words=50) == ()


def test_long_sentence_splits_at_clauses_then_words() -> None:
    clause = "the rain fell on the roof all night long"
    sentence = ", ".join([clause] * 12) + "."
    chapter = _chapter([(BlockKind.PARAGRAPH, sentence)])
    chunks = chunk_chapter(chapter, chunk_words=200, max_words=30, speak_title=False)
    assert all(c.words <= 30 for c in chunks)
    assert all(c.text.endswith((",", ".")) for c in chunks)  # cut after commas, not mid-clause
    words = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_chapter(
        _chapter([(BlockKind.PARAGRAPH, words)]), chunk_words=80, max_words=80, speak_title=False
    )
    assert [c.words for c in chunks] == [50, 50]


def test_cjk_and_arabic_chunking() -> None:
    cjk = _chapter([(BlockKind.PARAGRAPH, "我们走吧。" * 30)])
    chunks = chunk_chapter(cjk, chunk_words=12, max_chars=30, speak_title=False)
    assert all(c.words <= 12 and len(c.text) <= 30 for c in chunks)
    assert chunks[0].text == "我们走吧。" * 3  # no spaces put between CJK sentences
    arabic = next(c for c in _book("regime-anticancer-arabic.epub").chapters if c.selected_by_default)
    chunks = chunk_chapter(arabic, chunk_words=30, max_chars=200)
    assert chunks[0].text == "الفصل الثاني: ما هو السرطان؟"
    assert all(c.words <= 30 and len(c.text) <= 200 for c in chunks)


@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.key)
def test_effective_chunk_limits_follow_the_catalog(entry: CatalogEntry) -> None:
    words, max_words, max_chars = effective_chunk_limits(entry, 120)
    assert max_words == entry.max_words_per_request
    assert max_chars == entry.max_input_chars
    assert words == (min(120, max_words) if max_words else 120)


def test_effective_chunk_limits_clamp_to_the_model_cap() -> None:
    capped = next(e for e in CATALOG if e.max_words_per_request)
    assert effective_chunk_limits(capped, 500)[0] == capped.max_words_per_request
    assert effective_chunk_limits(capped, 10)[0] == 10
    uncapped = next(e for e in CATALOG if e.max_words_per_request is None and e.max_input_chars is None)
    assert effective_chunk_limits(uncapped, 500) == (500, None, None)
    assert effective_chunk_limits(get_entry(capped.key), 0)[0] == 1


def test_every_pause_kind_has_a_length_and_a_scene_break_is_long() -> None:
    from omni_web.pipeline.plan import pause_ms
    from omni_web.settings import Settings

    settings = Settings()
    lengths = {kind: pause_ms(kind, settings) for kind in PauseKind}
    assert lengths[PauseKind.SCENE_BREAK] >= lengths[PauseKind.HEADING] > lengths[PauseKind.PARAGRAPH]
