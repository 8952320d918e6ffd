"""The corpus judge: reads a real book the way a job does and grades it as a listener would.

Used by tests/test_book_corpus.py (every file must meet its expectation) and bench/bench_corpus.py
(the GOOD/FAIR/BAD table). A file ``tests/data/corpus/<format>/<name>`` has its expectation beside
it in ``<name>.expect.json`` (see tests/data/corpus/README.md for the fields).

A book is read through the product's own path: :func:`omni_web.book.load_book`, the chapters
preselected for a job, their spoken form (the book's language rules) and the chunks a job sends.

Grades:
- **GOOD**: the expected refusal (its words, naming the file); or the chapter count and the first
  titles as expected, every ``must_read`` phrase spoken, nothing from ``never_read`` (case-sensitive)
  or the corpus-wide junk list (:data:`JUNK`) in any chunk, the language as expected.
- **FAIR**: listenable with flaws: the chapter count off by a little (within half), a title or the
  language wrong, or under half of the ``must_read`` phrases missing.
- **BAD**: a wrong refusal or none where one was due, junk read aloud (a ``never_read`` string or a
  corpus-wide junk string in a chunk), chapters wrong by more than half (or one chapter where three
  or more were due), or half the ``must_read`` phrases or more missing.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from omni_web.book import chunk_chapter, effective_chunk_limits, load_book
from omni_web.catalog import get_entry
from omni_web.errors import BookError
from omni_web.settings import Settings
from omni_web.text import spoken_form

__all__ = ["CORPUS", "Expectation", "Reading", "Verdict", "corpus_files", "judge", "read_book"]

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
_ENTRY = get_entry("qwen3_tts_0_6b_customvoice")
# Never speech in any book of the corpus (case-sensitive patterns): licence and producer lines, glyph
# placeholders, web navigation. A book whose own text says one of them lists it in ``junk_ok``.
JUNK = {
    "Project Gutenberg": re.compile(r"Project Gutenberg"),
    "gutenberg.org": re.compile(r"gutenberg\.org"),
    "pgdp.net": re.compile(r"pgdp\.net"),
    "(cid:N)": re.compile(r"\(cid:\d+\)"),
    "Produced by": re.compile(r"^Produced by |Distributed Proofread"),
    "*** START/END": re.compile(r"\*\*\* ?(?:START|END)"),
    "Previous topic": re.compile(r"Previous topic"),
    "Next topic": re.compile(r"Next topic"),
    "citation mark": re.compile(r"[^\s\[]\[\d{1,3}\]"),  # "Firefox[4]": a note number, not a word
}
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a listener should get from one file (``<file>.expect.json``)."""

    chapters: int | None = None
    titles: tuple[str, ...] = ()
    must_read: tuple[str, ...] = ()
    never_read: tuple[str, ...] = ()
    refuse: str | None = None
    language: str | None = None
    junk_ok: tuple[str, ...] = ()

    @classmethod
    def load(cls, book: Path) -> Expectation:
        """The expectation beside ``book``."""
        data = json.loads(book.with_name(book.name + ".expect.json").read_text(encoding="utf-8"))
        return cls(
            chapters=data.get("chapters"),
            titles=tuple(data.get("titles") or ()),
            must_read=tuple(data.get("must_read") or ()),
            never_read=tuple(data.get("never_read") or ()),
            refuse=data.get("refuse"),
            language=data.get("language"),
            junk_ok=tuple(data.get("junk_ok") or ()),
        )


@dataclass(frozen=True, slots=True)
class Reading:
    """What the product made of one file: the preselected chapters' titles and chunks, or its refusal."""

    path: Path
    titles: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()
    language: str = ""
    refusal: str | None = None
    seconds: float = 0.0

    @property
    def spoken(self) -> str:
        """All chunks joined, whitespace collapsed, for phrase look-ups."""
        return _flat(" ".join(self.chunks))


@dataclass(frozen=True, slots=True)
class Verdict:
    """A file's grade and why it is not GOOD."""

    grade: str
    reasons: tuple[str, ...] = field(default=())


def corpus_files(root: Path = CORPUS) -> list[Path]:
    """Every book of the corpus (files with an expectation beside them), by format then name."""
    return sorted(p.with_name(p.name.removesuffix(".expect.json")) for p in root.glob("*/*.expect.json"))


def read_book(path: Path) -> Reading:
    """Read ``path`` as a job would: load, preselected chapters, spoken form, chunks."""
    start = time.process_time()
    try:
        book = load_book(path)
    except BookError as exc:
        return Reading(path=path, refusal=str(exc), seconds=time.process_time() - start)
    speech = spoken_form(book, entry=_ENTRY, settings=Settings(), announce=False)
    words, max_words, max_chars = effective_chunk_limits(_ENTRY, 120)
    titles, chunks = [], []
    for chapter in book.chapters:
        if not (chapter.selected_by_default and chapter.has_text):
            continue
        titles.append(chapter.title)
        spoken = speech.chapter(chapter)
        chunks += [
            c.text for c in chunk_chapter(spoken, chunk_words=words, max_words=max_words, max_chars=max_chars)
        ]
    return Reading(
        path=path,
        titles=tuple(titles),
        chunks=tuple(chunks),
        language=book.metadata.language,
        seconds=time.process_time() - start,
    )


def judge(expect: Expectation, reading: Reading) -> Verdict:
    """Grade one reading against its expectation (the rules in this module's docstring)."""
    name = reading.path.name
    if expect.refuse is not None:
        if reading.refusal is None:
            return Verdict("BAD", (f"read as a book; expected a refusal saying {expect.refuse!r}",))
        if expect.refuse.lower() not in reading.refusal.lower() or name not in reading.refusal:
            return Verdict(
                "BAD", (f"refused with {reading.refusal!r}; expected {expect.refuse!r} naming the file",)
            )
        return Verdict("GOOD")
    if reading.refusal is not None:
        return Verdict("BAD", (f"refused: {reading.refusal}",))
    bad, fair = _junk(expect, reading), []
    count = len(reading.titles)
    if expect.chapters is not None and count != expect.chapters:
        note = f"{count} chapters, expected {expect.chapters}"
        wrong = (count <= 1 < 3 <= expect.chapters) or abs(count - expect.chapters) > expect.chapters / 2
        (bad if wrong else fair).append(note)
    for want, got in zip(expect.titles, reading.titles, strict=False):
        if not _title_matches(want, got):
            fair.append(f"title {got!r}, expected {want!r}")
            break
    missing = [p for p in expect.must_read if _flat(p) not in reading.spoken]
    if missing:
        (bad if 2 * len(missing) >= len(expect.must_read) else fair).append(f"not read: {missing[:3]}")
    if expect.language and reading.language.split("-")[0].lower() != expect.language.lower():
        fair.append(f"language {reading.language or 'none'!r}, expected {expect.language!r}")
    if bad:
        return Verdict("BAD", tuple(bad + fair))
    return Verdict("FAIR", tuple(fair)) if fair else Verdict("GOOD")


def _junk(expect: Expectation, reading: Reading) -> list[str]:
    found = []
    for label, pattern in JUNK.items():
        chunk = (
            None if label in expect.junk_ok else next((c for c in reading.chunks if pattern.search(c)), None)
        )
        if chunk is not None:
            found.append(f"read {label!r} in {chunk[:80]!r}")
    for needle in expect.never_read:
        chunk = next((c for c in reading.chunks if needle in c), None)
        if chunk is not None:
            found.append(f"read {needle!r} in {chunk[:80]!r}")
    return found


def _title_matches(want: str, got: str) -> bool:
    want_key, got_key = _key(want), _key(got)
    return bool(want_key) and (want_key in got_key or got_key in want_key) if got_key else not want_key


def _key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _flat(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return _SPACE_RE.sub(" ", text).strip().casefold()
