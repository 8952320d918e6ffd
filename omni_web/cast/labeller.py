"""The optional LLM pass: who speaks the quotes the rules leave unsure, and how they are said.

The book goes out in windows of paragraphs with every quote numbered (``[Q12]“…”``) and the
character list (ids ``C1``, ``C2``, …); the endpoint answers with **labels only**, a JSON object
``{"labels": [{"quote": 12, "speaker": "C2", "confidence": 0.9, "delivery": "whispered"}]}``.
Only the quotes asked about are taken, only ids from the list (or ``NARRATOR``) are understood;
a malformed, empty or missing answer leaves the window's quotes to the rules. No text ever comes
back from the endpoint, so nothing it says can change what is read aloud.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from omni_web.book import Book
from omni_web.cast.characters import book_roster
from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE, ChapterDialogue, book_quote_style, chapter_dialogue
from omni_web.cast.edits import CastEdits
from omni_web.cast.labels import LLM, BookLabels, QuoteLabel, quote_hash, relabelled
from omni_web.delivery_cues import DELIVERIES
from omni_web.errors import LlmError, LlmUnusableAnswer
from omni_web.llm import ChatClient, LlmUsage, json_in_answer

__all__ = [
    "LabelRun",
    "Window",
    "book_windows",
    "chapter_windows",
    "label_book",
    "parse_labels",
    "window_prompt",
]

WINDOW_CHARS = 6000  # a window's text: room for context around the unsure quotes, well under any context size
NARRATOR_ID = "NARRATOR"
_SYSTEM = (
    "You label quoted speech in a novel. For every quote number you are asked about, say which "
    "character speaks it, how sure you are, and how it is said. Answer with one JSON object and "
    'nothing else: {"labels": [{"quote": 12, "speaker": "C3", "confidence": 0.9, "delivery": "neutral"}]}. '
    f'speaker: a character id from the list, "{NARRATOR_ID}" when the first-person narrator speaks, or '
    '"UNKNOWN". confidence: 0 to 1. delivery: one of neutral, ' + ", ".join(DELIVERIES) + ". "
    "Never repeat or rewrite the text."
)


@dataclass(frozen=True, slots=True)
class Window:
    """Consecutive paragraphs of one chapter sent in one request."""

    chapter: int  # chapter index
    text: str  # the paragraphs with their quotes numbered
    asked: tuple[int, ...]  # quote numbers (within the chapter) to label
    hashes: dict[int, str]  # quote number -> hash of its text


@dataclass(frozen=True, slots=True)
class LabelRun:
    """What one pass gave: the labels, what it cost, and the windows that fell back to the rules."""

    labels: BookLabels
    usage: LlmUsage
    windows: int
    fell_back: int
    errors: tuple[str, ...] = ()
    joined: tuple[tuple[str, str], ...] = ()  # (name, into): characters the LLM said are one person


def _unsure(dialogue: ChapterDialogue, min_confidence: float) -> list[tuple[int, int, bool, str]]:
    """(paragraph, quote number, unsure, text) for every quote of the chapter."""
    found = []
    ordinal = 0
    for index, (paragraph, row) in enumerate(zip(dialogue.paragraphs, dialogue.attributions, strict=True)):
        for span, attribution in zip(paragraph.spans, row, strict=True):
            if span.is_dialogue and attribution is not None:
                unsure = attribution.speaker is None or attribution.confidence < min_confidence
                found.append((index, ordinal, unsure, span.text))
                ordinal += 1
    return found


def _paragraph_text(dialogue: ChapterDialogue, index: int, first: int) -> str:
    """A paragraph with each quote marked by its number, from ``first`` on."""
    parts = []
    ordinal = first
    for span, attribution in zip(dialogue.paragraphs[index].spans, dialogue.attributions[index], strict=True):
        if span.is_dialogue and attribution is not None:
            parts.append(f"[Q{ordinal}]{span.text}")
            ordinal += 1
        else:
            parts.append(span.text)
    return "".join(parts).strip()


def chapter_windows(
    dialogue: ChapterDialogue, chapter: int, *, min_confidence: float, max_chars: int = WINDOW_CHARS
) -> list[Window]:
    """The chapter's windows that hold at least one unsure quote."""
    quotes = _unsure(dialogue, min_confidence)
    first_of: dict[int, int] = {}
    for paragraph, ordinal, _, _ in quotes:
        first_of.setdefault(paragraph, ordinal)
    windows: list[Window] = []
    texts: list[str] = []
    asked: list[int] = []
    hashes: dict[int, str] = {}
    by_paragraph: dict[int, list[tuple[int, bool, str]]] = {}
    for paragraph, ordinal, unsure, text in quotes:
        by_paragraph.setdefault(paragraph, []).append((ordinal, unsure, text))

    def flush() -> None:
        if asked:
            windows.append(Window(chapter, "\n\n".join(texts), tuple(asked), dict(hashes)))
        texts.clear()
        asked.clear()
        hashes.clear()

    for index in range(len(dialogue.paragraphs)):
        text = _paragraph_text(dialogue, index, first_of.get(index, 0))
        if not text:
            continue
        if texts and sum(map(len, texts)) + len(text) > max_chars:
            flush()
        texts.append(text)
        for ordinal, unsure, quote in by_paragraph.get(index, ()):
            hashes[ordinal] = quote_hash(quote)
            if unsure:
                asked.append(ordinal)
    flush()
    return windows


def book_windows(
    book: Book,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    labels: BookLabels | None = None,
    edits: CastEdits | None = None,
) -> list[Window]:
    """Every window of the book's selected chapters with a quote still unsure after ``labels``,
    attributed as the render attributes them (the book's roster, with the cast's ``edits``)."""
    chapters = [c for c in book.chapters if c.selected_by_default] or list(book.chapters)
    style = book_quote_style(book, chapters)
    roster = book_roster(book, chapters, style=style, edits=edits)
    found: list[Window] = []
    for chapter in chapters:
        dialogue = chapter_dialogue(chapter, style, roster=roster)
        if labels is not None:
            dialogue = relabelled(dialogue, labels.for_chapter(chapter.index))
        found += chapter_windows(dialogue, chapter.index, min_confidence=min_confidence)
    return found


def window_prompt(window: Window, characters: Sequence[str]) -> tuple[str, str]:
    """The system and user messages for one window."""
    roster = "\n".join(f"C{n}: {name}" for n, name in enumerate(characters, start=1)) or "(none known yet)"
    asked = ", ".join(str(n) for n in window.asked)
    return _SYSTEM, f"Characters:\n{roster}\n\nText:\n{window.text}\n\nLabel these quotes: {asked}"


def _items(data: object) -> list[object]:
    if isinstance(data, dict) and isinstance(data.get("labels"), list):
        return list(data["labels"])
    if isinstance(data, list):
        return data
    raise LlmUnusableAnswer('The LLM\'s answer has no "labels" list.')


def _speaker(value: object, characters: Sequence[str]) -> str | None:
    """A character's name for an id (``C3``), ``NARRATOR`` or a listed name; None when unknown."""
    text = str(value or "").strip()
    if text.upper() == NARRATOR_ID:
        return ""
    match = re.fullmatch(r"[Cc](\d+)", text)
    if match and 1 <= int(match.group(1)) <= len(characters):
        return characters[int(match.group(1)) - 1]
    return next((name for name in characters if name.casefold() == text.casefold()), None)


def parse_labels(answer: str, window: Window, characters: Sequence[str]) -> list[QuoteLabel]:
    """The labels in an answer for the window's asked quotes; items that are not understood are skipped.

    Raises:
        LlmUnusableAnswer: no JSON, no label list, or not one usable label.
    """
    found: dict[int, QuoteLabel] = {}
    for item in _items(json_in_answer(answer)):
        if not isinstance(item, dict):
            continue
        try:
            number = int(item.get("quote"))
            confidence = min(max(float(item.get("confidence", 0.7)), 0.0), 1.0)
        except (TypeError, ValueError):
            continue
        speaker = _speaker(item.get("speaker"), characters)
        if number not in window.asked or speaker is None:
            continue
        delivery = str(item.get("delivery") or "").strip().casefold()
        found[number] = QuoteLabel(
            window.chapter,
            number,
            window.hashes[number],
            speaker,
            confidence,
            delivery if delivery in DELIVERIES else None,
            LLM,
        )
    if window.asked and not found and "UNKNOWN" not in answer.upper():
        raise LlmUnusableAnswer("The LLM's answer labels none of the quotes asked about.")
    return list(found.values())


def _one(
    client: ChatClient, window: Window, characters: Sequence[str]
) -> tuple[list[QuoteLabel], LlmUsage, str]:
    system, user = window_prompt(window, characters)
    try:
        answer = client.complete(system, user)
    except LlmError as exc:
        return [], LlmUsage(failures=1), str(exc)
    try:
        return parse_labels(answer.text, window, characters), answer.usage, ""
    except LlmUnusableAnswer as exc:
        return [], answer.usage.plus(LlmUsage(failures=1)), str(exc)


def label_book(
    book: Book,
    client: ChatClient,
    characters: Sequence[str],
    *,
    labels: BookLabels | None = None,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    concurrency: int = 2,
    edits: CastEdits | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> LabelRun:
    """Ask the endpoint about every quote the rules (and ``labels``) leave below ``min_confidence``.

    Windows go out ``concurrency`` at a time; one that fails or answers badly keeps the rules'
    labels for its quotes. ``labels`` (earlier labels, a person's) win over the new ones.
    """
    windows = book_windows(book, min_confidence=min_confidence, labels=labels, edits=edits)
    usage = LlmUsage()
    new: list[QuoteLabel] = []
    errors: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="llm-label") as pool:
        for done, (found, cost, error) in enumerate(
            pool.map(lambda w: _one(client, w, characters), windows), 1
        ):
            new += found
            usage = usage.plus(cost)
            errors += [error] if error else []
            if progress is not None:
                progress(done, len(windows))
    merged = (labels or BookLabels()).merged(new)
    return LabelRun(merged, usage, len(windows), len(errors), tuple(dict.fromkeys(errors)))
