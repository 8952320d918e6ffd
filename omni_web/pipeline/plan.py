"""Plan a conversion: which chapters, which chunks, which files, with which pauses.

Pure apart from hashing the reference clip: no server, no ffmpeg. The plan is recomputed on every
run of a job (from the same book and settings it is the same plan), which is what makes resume
simple: every chunk and chapter file is named by a hash of what shapes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble import AudiobookTags, safe_filename
from omni_web.book import Book, Chapter, Chunk, PauseKind, chunk_chapter, effective_chunk_limits
from omni_web.cast import Cast, QuoteStyle, Roster, book_quote_style, book_roster, voiced_chapter
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice
from omni_web.deliver.layout import narrator_label
from omni_web.deliver.metadata import audiobook_tags, effective_metadata
from omni_web.errors import BookError, ChapterSelectionError
from omni_web.files import file_sha256
from omni_web.pipeline.request import ConvertRequest
from omni_web.render import RenderItem, chunk_key, shaping_fingerprint
from omni_web.settings import Settings
from omni_web.text import Pronouncer, SpokenForm, spoken_form

__all__ = [
    "ChapterWork",
    "chapter_file_name",
    "ConversionPlan",
    "chunk_size_conflict",
    "narrator_label",
    "pause_ms",
    "plan_conversion",
    "select_chapters",
]


def chunk_size_conflict(entry: CatalogEntry, chunk_words: int) -> int | None:
    """The model's per-request word cap when ``chunk_words`` exceeds it, else None.

    Higgs Audio v3 narrates at most ~80 words per request before its 4096-token window cuts the
    audio off; the UI and CLI ask the user before such a run.
    """
    cap = entry.max_words_per_request
    return cap if cap is not None and chunk_words > cap else None


def chapter_file_name(number: int, keys: list[str], pauses: tuple[int, ...]) -> str:
    """The chapter audio file's name: a hash of its chunks and pauses, so any change renames it."""
    return f"{number:03d}-{shaping_fingerprint({'keys': keys, 'pauses': pauses})[:16]}.flac"


def pause_ms(kind: PauseKind, settings: Settings) -> int:
    """Silence after a chunk; the chapter's end gets none (the m4b adds the chapter pause)."""
    return {
        # A voice change mid-sentence ('"Well," | said Ahab') gets half a sentence pause.
        PauseKind.CLAUSE: settings.pause_between_chunks_ms // 2,
        PauseKind.CHUNK: settings.pause_between_chunks_ms,
        PauseKind.PARAGRAPH: settings.pause_after_paragraph_ms,
        PauseKind.HEADING: settings.pause_after_heading_ms,
        # A narrator marks a scene break ("* * *") with a pause at least as long as after a heading.
        PauseKind.SCENE_BREAK: max(settings.pause_after_heading_ms, settings.pause_after_paragraph_ms),
        PauseKind.CHAPTER_END: 0,
    }[kind]


def select_chapters(book: Book, numbers: tuple[int, ...] | None) -> tuple[Chapter, ...]:
    """The chapters to render: the given 1-based numbers, or the book's default selection."""
    if numbers is None:
        chosen = [c for c in book.chapters if c.selected_by_default]
    else:
        last = len(book.chapters)
        wrong = [n for n in numbers if n > last]
        if wrong:
            raise ChapterSelectionError(
                f"The book has {last} chapters; there is no chapter {', '.join(map(str, wrong))}. "
                "List them with: python -m omni_web chapters BOOK.epub"
            )
        chosen = [book.chapters[n - 1] for n in sorted(numbers)]
    chosen = [c for c in chosen if c.has_text]
    if not chosen:
        raise BookError("None of the selected chapters has any text to read. Select other chapters.")
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class ChapterWork:
    """One chapter of the plan: its chunks, their render items and the chapter file it makes.

    ``chapter`` is the book's chapter as written (its title names the chapter mark); ``chunks`` and
    ``items`` hold the spoken form, after the lexicon and normalisation: exactly what is sent.
    """

    chapter: Chapter
    chunks: tuple[Chunk, ...]
    items: tuple[RenderItem, ...]
    pauses_ms: tuple[int, ...]  # after each chunk
    file_name: str  # the chapter audio file, named by a hash of its chunks and pauses

    @property
    def number(self) -> int:
        """1-based chapter number in the book."""
        return self.chapter.number


@dataclass(frozen=True, slots=True)
class ConversionPlan:
    """Everything a run needs to know before it talks to a server."""

    book: Book
    entry: CatalogEntry
    voice: VoiceChoice
    chunk_words: int
    fingerprint: str
    chapters: tuple[ChapterWork, ...]
    tags: AudiobookTags
    folder_name: str  # the book's work folder under <output>/.parts
    language: str = ""  # the ISO code the text was normalised for ("" when unknown)
    normalized: bool = False  # number/abbreviation rules ran (the model's switch and the language)

    @property
    def items(self) -> list[RenderItem]:
        """Every chunk of every selected chapter, in reading order."""
        return [item for work in self.chapters for item in work.items]

    @property
    def words(self) -> int:
        """Words to be spoken."""
        return sum(chunk.words for work in self.chapters for chunk in work.chunks)


def _voice_shaping(voice: VoiceChoice) -> dict[str, object]:
    reference = voice.reference
    shaping: dict[str, object] = {
        "kind": voice.kind.value,
        "name": voice.name.lower(),
        "reference_sha256": file_sha256(reference) if reference is not None else None,
        "ref_text": voice.transcript,
        "instructions": voice.instructions,
    }
    if voice.delivery:  # only when set, so chunks said plainly keep their keys
        shaping["delivery"] = voice.delivery
    return shaping


def _cast_note(cast: Cast | None, narrator: VoiceChoice) -> str:
    """" with a 3-voice cast" when quotes are read in other voices than the narrator's (no comma and
    no bare number: Audiobookshelf's name parser would split the narrator there or drop the "2")."""
    if cast is None:
        return ""
    others = {repr(voice) for voice in cast.voices()} - {repr(narrator)}
    return f" with a {len(others) + 1}-voice cast" if others else ""


def _credit(book: Book, request: ConvertRequest, entry: CatalogEntry) -> str:
    """The comment tag's credit line, only beside a description: Audiobookshelf (and other players)
    show the comment as the book's description when it has none of its own."""
    if not effective_metadata(book.metadata, request.metadata).description.strip():
        return ""
    return f"Narrated by {entry.label} through SGLang-Omni, made with omni-web."


def _chunks(
    chapter: Chapter,
    speech: SpokenForm,
    cast: Cast | None,
    style: QuoteStyle | None,
    *,
    roster: Roster | None,
    words: int,
    max_words: int | None,
    max_chars: int | None,
) -> tuple[Chunk, ...]:
    """The chapter's spoken chunks; with a cast, cut by speaker (a chunk never mixes narration and speech)."""
    if cast is None or style is None:
        return chunk_chapter(speech.chapter(chapter), chunk_words=words, max_words=max_words,
                             max_chars=max_chars)
    voiced, speakers = voiced_chapter(
        chapter,
        speech,
        style,
        min_confidence=cast.min_confidence,
        label_of=cast.voice_label,
        labels=cast.labels.for_chapter(chapter.index),
        roster=roster,
    )
    return chunk_chapter(
        voiced, chunk_words=words, max_words=max_words, max_chars=max_chars, speakers=speakers
    )


def plan_conversion(
    book: Book,
    request: ConvertRequest,
    entry: CatalogEntry,
    settings: Settings,
    *,
    pronouncer: Pronouncer | None = None,
) -> ConversionPlan:
    """Chunk the selected chapters' spoken form and name every file the run will make.

    The lexicon (``pronouncer``) and the language's normalisation run before chunking, so each
    chunk key hashes the text as sent and an edit re-renders only the chunks it changes.
    """
    chunk_words = request.chunk_words or settings.chunk_size_words
    words, max_words, max_chars = effective_chunk_limits(entry, chunk_words,
                                                         keep_over_cap=request.keep_over_cap)
    shaping = {
        "model": entry.key,
        "repo": entry.repo_id,
        "voice": _voice_shaping(request.voice),
        "language": request.language,
        "max_new_tokens": entry.request_max_new_tokens,
    }
    fingerprint = shaping_fingerprint(shaping)
    speech = spoken_form(book, entry=entry, settings=settings, language=request.language,
                         pronouncer=pronouncer)
    cast = request.cast if request.cast is not None and request.cast.active else None
    selected = select_chapters(book, request.chapters)
    style = book_quote_style(book, selected) if cast is not None else None
    # One roster for the whole book: a character keeps one name (so one voice) in every chapter.
    roster = book_roster(book, selected, style=style, edits=cast.edits) if cast is not None else None
    # Each voice of a cast has its own fingerprint: a chunk's key changes only with its own voice.
    fingerprints: dict[str, str] = {}

    def voiced(speaker: str) -> tuple[VoiceChoice, str]:
        voice = cast.voice_for(speaker, request.voice) if cast is not None else request.voice
        if voice == request.voice:
            return voice, fingerprint
        key = repr(voice)
        if key not in fingerprints:
            fingerprints[key] = shaping_fingerprint({**shaping, "voice": _voice_shaping(voice)})
        return voice, fingerprints[key]

    chapters: list[ChapterWork] = []
    for chapter in selected:
        chunks = _chunks(chapter, speech, cast, style, roster=roster, words=words, max_words=max_words,
                         max_chars=max_chars)
        items = tuple(
            RenderItem(
                key=chunk_key(chunk.text, voiced(chunk.speaker)[1]),
                text=chunk.text,
                chapter_index=chapter.index,
                chapter_number=chapter.number,
                chapter_title=chapter.title,
                chunk_number=chunk.index + 1,
                voice=voiced(chunk.speaker)[0],
                speaker=chunk.speaker,
            )
            for chunk in chunks
        )
        pauses = tuple(pause_ms(chunk.pause_after, settings) for chunk in chunks)
        name = chapter_file_name(chapter.number, [i.key for i in items], pauses)
        chapters.append(ChapterWork(chapter, chunks, items, pauses, name))
    tags = audiobook_tags(book, request.metadata,
                          narrator=narrator_label(entry, request.voice) + _cast_note(cast, request.voice),
                          comment=_credit(book, request, entry))
    book_id = shaping_fingerprint({"book": file_sha256(Path(book.source_path)), "voice": fingerprint})[:12]
    folder = f"{safe_filename(tags.title, fallback='book', max_bytes=60)}-{book_id}"
    return ConversionPlan(
        book=book,
        entry=entry,
        voice=request.voice,
        chunk_words=words,
        fingerprint=fingerprint,
        chapters=tuple(chapters),
        tags=tags,
        folder_name=folder,
        language=speech.language,
        normalized=speech.rules is not None,
    )
