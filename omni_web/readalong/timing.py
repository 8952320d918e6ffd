"""Sentence and word times inside one chunk, and a chapter's timings from its chunk spans.

A chunk's place in the chapter file is known exactly (assembly joined the files with known pauses);
only the times *inside* a chunk are found: from ASR word timestamps aligned to the known text, or,
without ASR, from each sentence's share of the chunk's characters (marked as estimated). Tokens
ASR missed get times interpolated between their aligned neighbours by character position, so every
word has a time and times never go backwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.book.text import split_sentences
from omni_web.readalong.records import ChapterTimings, ChunkSpan, SentenceTiming, WordTiming
from omni_web.readalong.tokens import Token, align_tokens, tokenize

__all__ = ["AsrWord", "MIN_MATCHED_SHARE", "chunk_sentences", "chapter_timings"]

# Below this share of the text's tokens matched, the ASR words are not trusted (wrong language,
# a garbled take) and the chunk falls back to the characters' share.
MIN_MATCHED_SHARE = 0.35
# Whisper tends to put a word's start a little late, at its loudest part; starting a highlight a
# touch early reads better than a touch late.
_LEAD_S = 0.04


@dataclass(frozen=True, slots=True)
class AsrWord:
    """One word as the recogniser heard it, with times in seconds from the chunk's start."""

    text: str
    start_s: float
    end_s: float


def _asr_tokens(words: Sequence[AsrWord]) -> tuple[list[str], list[tuple[float, float]]]:
    """ASR words cut into tokens (a word of two tokens, "don't", shares its span by characters)."""
    keys: list[str] = []
    spans: list[tuple[float, float]] = []
    for word in words:
        parts = tokenize(word.text)
        if not parts:
            continue
        length = max(1, parts[-1].end - parts[0].start)
        span = max(0.0, word.end_s - word.start_s)
        for part in parts:
            keys.append(part.key)
            spans.append((word.start_s + span * (part.start - parts[0].start) / length,
                          word.start_s + span * (part.end - parts[0].start) / length))
    return keys, spans


def _token_times(
    tokens: list[Token], text_len: int, duration_s: float, anchors: dict[int, tuple[float, float]]
) -> list[tuple[float, float]]:
    """(start, end) per token: anchored ones from ASR, the others interpolated by characters."""
    # Known points (character position → time), including the chunk's two ends.
    points: list[tuple[int, float]] = [(0, 0.0)]
    for i, token in enumerate(tokens):
        if i in anchors:
            start, end = anchors[i]
            points.append((token.start, start))
            points.append((token.end, end))
    points.append((text_len, duration_s))
    # Keep them monotonic in both position and time (an ASR outlier must not pull times back).
    clean: list[tuple[int, float]] = []
    for pos, t in sorted(points):
        t = min(max(t, 0.0), duration_s)
        if clean and t < clean[-1][1]:
            t = clean[-1][1]
        clean.append((pos, t))

    def at(pos: int) -> float:
        for (p0, t0), (p1, t1) in zip(clean, clean[1:], strict=False):
            if p0 <= pos <= p1:
                return t0 if p1 == p0 else t0 + (t1 - t0) * (pos - p0) / (p1 - p0)
        return duration_s

    return [(at(t.start), at(t.end)) for t in tokens]


def chunk_sentences(
    text: str, duration_s: float, words: Sequence[AsrWord] | None
) -> tuple[list[tuple[str, float, float, list[WordTiming]]], bool]:
    """Sentences of one chunk with (text, start, end, words), times from the chunk's start.

    Returns:
        The sentences, and whether the times are estimated (no ASR, or ASR that matched too little).
    """
    sentences = split_sentences(text) or [text]
    # Where each sentence sits in ``text`` (split_sentences keeps the text, minus the spaces between).
    bounds: list[tuple[int, int]] = []
    cursor = 0
    for sentence in sentences:
        start = text.find(sentence, cursor)
        start = cursor if start < 0 else start
        bounds.append((start, start + len(sentence)))
        cursor = start + len(sentence)
    tokens = tokenize(text)
    anchors: dict[int, tuple[float, float]] = {}
    estimated = True
    if words:
        keys, spans = _asr_tokens(words)
        mapping = align_tokens([t.key for t in tokens], keys)
        matched = {i: spans[j] for i, j in enumerate(mapping) if j is not None and tokens[i].key == keys[j]}
        if tokens and len(matched) >= MIN_MATCHED_SHARE * len(tokens):
            anchors = {i: spans[j] for i, j in enumerate(mapping) if j is not None}
            estimated = False
    times = _token_times(tokens, len(text), duration_s, anchors)
    out: list[tuple[str, float, float, list[WordTiming]]] = []
    for n, (sentence, (s_start, s_end)) in enumerate(zip(sentences, bounds, strict=True)):
        members = [i for i, t in enumerate(tokens) if s_start <= t.start < s_end]
        word_list = [
            WordTiming(text[tokens[i].start : tokens[i].end], times[i][0], times[i][1], i in anchors)
            for i in members
        ]
        if n == 0:
            start_s = 0.0  # the chunk's start is known exactly
        elif members:
            start_s = max(0.0, times[members[0]][0] - (0.0 if estimated else _LEAD_S))
        else:
            start_s = out[-1][2] if out else 0.0
        out.append((sentence, start_s, duration_s, word_list))
        if n > 0:  # the previous sentence ends where this one starts
            prev = out[n - 1]
            out[n - 1] = (prev[0], prev[1], max(prev[1], start_s), prev[3])
    return out, estimated


def chapter_timings(
    spans: Sequence[ChunkSpan],
    words_of: Sequence[Sequence[AsrWord] | None],
    *,
    number: int,
    title: str,
    audio_path,
    duration_s: float,
    fingerprint: str = "",
    asr_model: str = "",
) -> ChapterTimings:
    """Every sentence of a chapter with times in the chapter file.

    Args:
        spans: each chunk's exact place in the chapter file, in order.
        words_of: per chunk, the ASR words (times from the chunk's start) or None.
        number, title, audio_path, duration_s: the chapter file the times refer to.
    """
    sentences: list[SentenceTiming] = []
    sources: set[str] = set()
    for span, words in zip(spans, words_of, strict=True):
        length = max(0.0, span.end_s - span.start_s)
        pieces, estimated = chunk_sentences(span.text, length, words)
        sources.add("estimate" if estimated else "asr")
        for text, start, end, word_list in pieces:
            shifted = tuple(
                WordTiming(w.text, span.start_s + w.start_s, span.start_s + w.end_s, w.matched)
                for w in word_list
            )
            sentences.append(
                SentenceTiming(
                    index=len(sentences),
                    chunk_index=span.index,
                    text=text,
                    start_s=span.start_s + start,
                    end_s=span.start_s + end,
                    estimated=estimated,
                    words=shifted,
                )
            )
    source = sources.pop() if len(sources) == 1 else ("mixed" if sources else "estimate")
    return ChapterTimings(
        number=number,
        title=title,
        audio_path=audio_path,
        duration_s=duration_s,
        source=source,
        sentences=tuple(sentences),
        fingerprint=fingerprint,
        asr_model=asr_model,
        chunk_starts_s=tuple(s.start_s for s in spans),
    )
