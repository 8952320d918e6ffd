"""Chapters to speech chunks: whole sentences up to a word budget, never over the model's caps.

Each chunk is one request to the TTS server. Chunks never cross a paragraph or heading boundary,
so every chunk's ``pause_after`` can tell assembly which silence follows it (a longer one after a
heading and at the chapter's end). Sentences longer than the budget are cut at clause
punctuation, then between words. A paragraph given as runs of speakers (narration and dialogue,
see omni_web.cast) is chunked run by run, so a chunk never mixes two speakers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from omni_web.book.model import Chapter, Chunk, PauseKind
from omni_web.book.text import (
    count_words,
    normalize_text,
    pack_pieces,
    split_long_text,
    split_sentences,
    text_key,
)
from omni_web.catalog import CatalogEntry

__all__ = ["chunk_chapter", "effective_chunk_limits", "title_is_spoken"]

# Text that ends a sentence: final punctuation, then any closing quotes or brackets.
_ENDS_SENTENCE_RE = re.compile(
    "[.!?\u2026\u061f\u06d4\u0964\u3002\uff01\uff1f][\"'\u00bb\u201d\u2019\u300d\u300f)\\]]*$"
)


def effective_chunk_limits(
    entry: CatalogEntry, chunk_words: int, *, keep_over_cap: bool = False
) -> tuple[int, int | None, int | None]:
    """The (chunk_words, max_words, max_chars) to chunk with for a model.

    ``chunk_words`` (the user's setting) is clamped to the entry's ``max_words_per_request``,
    unless the user chose to keep a larger size (``keep_over_cap``: audio may then cut off);
    ``max_chars`` is the server's input limit for the model (None where it has none) and always holds.
    """
    words = max(1, chunk_words)
    max_words = None if keep_over_cap else entry.max_words_per_request
    if max_words is not None:
        words = min(words, max_words)
    return words, max_words, entry.max_input_chars


def title_is_spoken(chapter: Chapter) -> bool:
    """Whether :func:`chunk_chapter` puts the title first: unless the first block is that heading."""
    title = text_key(chapter.title)
    if not title:
        return False
    for block in chapter.blocks:
        if not normalize_text(block.text):
            continue
        heading = text_key(block.text) if block.is_heading else ""
        return not (heading and (title in heading or heading in title))
    return False  # nothing to read: no title either


def chunk_chapter(
    chapter: Chapter,
    *,
    chunk_words: int,
    max_words: int | None = None,
    max_chars: int | None = None,
    speak_title: bool = True,
    speakers: Mapping[int, Sequence[tuple[str, str]]] | None = None,
) -> tuple[Chunk, ...]:
    """Cut a chapter's text into chunks of whole sentences.

    Args:
        chapter: the chapter to read.
        chunk_words: target words per chunk (sentences are packed up to it).
        max_words: hard cap on words per chunk (the model's per-request cap), None for none.
        max_chars: hard cap on characters per chunk (the server's input limit), None for none.
        speak_title: put the chapter title first as its own heading chunk (skipped when the
            chapter already opens with that heading).
        speakers: per block index, the paragraph as (speaker, text) runs that join back to its
            text; those paragraphs are chunked run by run, each chunk labelled with its speaker.

    Returns:
        The chunks in reading order; empty when the chapter has nothing to speak.
    """
    cap = max(1, min(chunk_words, max_words) if max_words is not None else chunk_words)
    units: list[tuple[list[str], PauseKind, str]] = []
    if speak_title and title_is_spoken(chapter):
        title = normalize_text(chapter.title)
        if title:
            units.append((split_long_text(title, max_words=cap, max_chars=max_chars), PauseKind.HEADING, ""))
    for number, block in enumerate(chapter.blocks):
        runs = speakers.get(number) if speakers is not None and not block.is_heading else None
        if runs is not None:
            units.extend(_speaker_units(runs, cap=cap, max_chars=max_chars))
            continue
        text = normalize_text(block.text)
        if not text:
            # A line of symbols between paragraphs ("* * *", "~~~") is a scene break: it is never
            # sent to the model (which would say "asterisk" or babble); the text before it ends
            # with a longer pause instead.
            if block.text.strip() and units and units[-1][1] is PauseKind.PARAGRAPH:
                units[-1] = (units[-1][0], PauseKind.SCENE_BREAK, units[-1][2])
            continue
        if block.is_heading:
            units.append((split_long_text(text, max_words=cap, max_chars=max_chars), PauseKind.HEADING, ""))
            continue
        units.append((_pack_text(text, cap=cap, max_chars=max_chars), PauseKind.PARAGRAPH, ""))
    chunks: list[Chunk] = []
    for parts, end_pause, speaker in units:
        for position, part in enumerate(parts):
            pause = end_pause if position == len(parts) - 1 else PauseKind.CHUNK
            chunks.append(
                Chunk(
                    chapter_index=chapter.index,
                    index=len(chunks),
                    text=part,
                    words=count_words(part),
                    pause_after=pause,
                    speaker=speaker,
                )
            )
    if chunks:
        chunks[-1] = replace(chunks[-1], pause_after=PauseKind.CHAPTER_END)
    return tuple(chunks)


def _pack_text(text: str, *, cap: int, max_chars: int | None) -> list[str]:
    """Normalised text as chunks of whole sentences."""
    pieces = [
        piece
        for sentence in split_sentences(text)
        for piece in split_long_text(sentence, max_words=cap, max_chars=max_chars)
    ]
    return pack_pieces(pieces, target_words=cap, max_chars=max_chars)


def _speaker_units(
    runs: Sequence[tuple[str, str]], *, cap: int, max_chars: int | None
) -> list[tuple[list[str], PauseKind, str]]:
    """One unit per speaker run of a paragraph; only the last one ends with the paragraph's pause.

    Between runs the pause is a sentence's (CHUNK) where the run ends a sentence, else a clause's:
    '"Well,"' | 'said Ahab,' | '"we sail."' reads as one sentence in three voices.
    """
    spoken = [(speaker, normalize_text(text)) for speaker, text in runs]
    spoken = [(speaker, text) for speaker, text in spoken if text]
    units: list[tuple[list[str], PauseKind, str]] = []
    for position, (speaker, text) in enumerate(spoken):
        if position == len(spoken) - 1:
            pause = PauseKind.PARAGRAPH
        else:
            pause = PauseKind.CHUNK if _ENDS_SENTENCE_RE.search(text) else PauseKind.CLAUSE
        units.append((_pack_text(text, cap=cap, max_chars=max_chars), pause, speaker))
    return units
