"""Hear a book before rendering it: the first sentences of the first selected chapter, spoken with
the chosen model, voice and chunk size by the server that already hosts the model.

A preview never starts a server: it runs inside a web request, and a boot can take minutes. The
conversion job starts the server by itself; the Server tab starts it for previews.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.book import Book, PauseKind, chunk_chapter, effective_chunk_limits, load_book
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.client import SpeechClient, VoiceChoice, check_voice_choice
from omni_web.errors import BookError, ServerNotRunning
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, prepare_voice, select_chapters
from omni_web.server import ServerManager
from omni_web.settings import Settings
from omni_web.text import LexiconStore, SpokenForm, book_identity, spoken_form
from omni_web.voices import preview_voice

__all__ = [
    "PREVIEW_MAX_WORDS",
    "PreviewResult",
    "preview_cast_line",
    "preview_endpoint",
    "preview_request",
    "preview_text",
]

# About 20-25 s of speech: enough to judge voice and pace without waiting long.
PREVIEW_MAX_WORDS = 60


@dataclass(frozen=True, slots=True)
class PreviewResult:
    """The preview's WAV file, the text it speaks and its length."""

    path: Path
    text: str
    duration_s: float | None


def preview_text(
    book: Book,
    chapters: tuple[int, ...] | None,
    *,
    entry: CatalogEntry,
    chunk_words: int,
    speech: SpokenForm | None = None,
) -> str:
    """The first chunk of body text (not a heading) of the first selected chapter with any.

    Chunks are cut as the job cuts them (the model's caps apply; ``speech``, the job's lexicon and
    normalisation, gives the spoken form), at most PREVIEW_MAX_WORDS long.

    Raises:
        ChapterSelectionError, BookError: a chapter number the book lacks, or nothing to read.
    """
    words, max_words, max_chars = effective_chunk_limits(entry, min(chunk_words, PREVIEW_MAX_WORDS))
    for chapter in select_chapters(book, chapters):
        spoken = speech.chapter(chapter) if speech is not None else chapter
        chunks = chunk_chapter(spoken, chunk_words=words, max_words=max_words, max_chars=max_chars,
                               speak_title=False)
        body = [chunk for chunk in chunks if chunk.pause_after is not PauseKind.HEADING]
        if body:
            return body[0].text
    raise BookError("The selected chapters have no sentences to preview. Select other chapters.")


def preview_endpoint(server: ServerManager, entry: CatalogEntry) -> str:
    """The endpoint of the healthy server hosting ``entry``; ServerNotRunning (naming the fix) otherwise."""
    status = server.status()
    if status.hosts(entry.key):
        return status.endpoint
    if status.healthy and status.model_label:
        raise ServerNotRunning(
            f"The server hosts {status.model_label}, not {entry.label}. Start {entry.label} in the Server "
            "tab to preview it (Generate switches the server by itself)."
        )
    raise ServerNotRunning(
        f"Preview needs a running server for {entry.label}. Start it in the Server tab (Generate starts "
        "it by itself)."
    )


def preview_request(
    request: ConvertRequest,
    *,
    paths: DataPaths,
    settings: Settings,
    server: ServerManager,
    out_path: Path,
    client_factory: Callable[[str], SpeechClient] = SpeechClient,
) -> PreviewResult:
    """Speak the first sentences of ``request``'s book with its model and voice into ``out_path``.

    Raises:
        ServerNotRunning: no healthy server hosts the model (nothing is started).
        BookError, ChapterSelectionError: nothing to read in the selected chapters.
        VoiceError, SpeechError: the voice does not fit, or the server refused the request.
    """
    entry = get_entry(request.model_key)
    book = load_book(request.book_path, options=settings.read_options(paths))
    speech = spoken_form(book, entry=entry, settings=settings, language=request.language,
                         pronouncer=LexiconStore(paths).pronouncer(book_identity(book)))
    text = preview_text(book, request.chapters, entry=entry,
                        chunk_words=request.chunk_words or settings.chunk_size_words, speech=speech)
    with client_factory(preview_endpoint(server, entry)) as client:
        voice = prepare_voice(entry, request.voice, client=client, paths=paths)
        result = preview_voice(client, entry, voice, text=text, out_path=out_path, language=request.language)
    return PreviewResult(Path(out_path), text, result.duration_s)


def preview_cast_line(
    model_key: str,
    voice: VoiceChoice,
    text: str,
    *,
    paths: DataPaths,
    server: ServerManager,
    out_path: Path,
    language: str | None = None,
    client_factory: Callable[[str], SpeechClient] = SpeechClient,
) -> PreviewResult:
    """Speak one line of the cast (a character's sample line) with the voice mapped to it.

    The voice is checked as a conversion checks it (kind for the model, name on the server).

    Raises:
        ServerNotRunning: no healthy server hosts the model (nothing is started).
        VoiceError, UnknownVoice, SpeechError: the voice does not fit, or the server refused.
    """
    entry = get_entry(model_key)
    line = " ".join(text.split())[:400]
    with client_factory(preview_endpoint(server, entry)) as client:
        check_voice_choice(entry, voice)
        prepared = prepare_voice(entry, voice, client=client, paths=paths)
        result = preview_voice(client, entry, prepared, text=line, out_path=out_path, language=language)
    return PreviewResult(Path(out_path), line, result.duration_s)
