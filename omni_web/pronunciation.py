"""Hear a lexicon entry before a render: a sample sentence with the entry applied, spoken by the
server that already hosts the job's model (nothing is started, as with the book preview).

The sentence is the first one in the book holding the written form, else a short carrier
sentence; it goes through the same lexicon (global, the book's, and the entry being tried) and
normalisation as the job's chunks, so what is heard is what the render will send.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from omni_web.book import Book, load_book, split_sentences
from omni_web.book.text import normalize_text
from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import prepare_voice
from omni_web.preview import PreviewResult, preview_endpoint
from omni_web.server import ServerManager
from omni_web.settings import Settings
from omni_web.text import (
    Lexicon,
    LexiconEntry,
    LexiconStore,
    Pronouncer,
    SpokenForm,
    book_identity,
    normalization_applies,
    rules_for,
    spoken_form,
)
from omni_web.voices import preview_voice

__all__ = ["hear_entry", "sample_sentence"]

_MAX_SAMPLE_CHARS = 300


def sample_sentence(book: Book | None, entry: LexiconEntry) -> str:
    """The first sentence of the book's preselected chapters that the entry changes; else a carrier."""
    # Probe with a marker as the spoken form: the entry being tried may say the word as written.
    probe = Pronouncer(Lexicon((replace(entry.validated(), spoken="\u2063"),)))
    if book is not None:
        chosen = set(book.selected_by_default())
        for chapter in book.chapters:
            if chapter.index not in chosen:
                continue
            for block in chapter.blocks:
                text = normalize_text(block.text)
                if not text or probe.apply(text) == text:
                    continue
                for sentence in split_sentences(text):
                    if probe.apply(sentence) != sentence and len(sentence) <= _MAX_SAMPLE_CHARS:
                        return sentence
    shown = entry.written if not entry.regex else re.sub(r"[\\^$.*+?()\[\]{}|]", "", entry.written) or "this"
    return f"Here is {shown}, said in a sentence."


def hear_entry(
    entry: LexiconEntry,
    *,
    model_key: str,
    voice: VoiceChoice,
    book_path: Path | None,
    language: str | None = None,
    sample: str,
    for_book: bool,
    paths: DataPaths,
    settings: Settings,
    server: ServerManager,
    out_path: Path,
    client_factory: Callable[[str], SpeechClient] = SpeechClient,
) -> PreviewResult:
    """Speak ``sample`` (empty: the book's first sentence holding the word) with ``entry`` applied,
    as the book's entry when ``for_book``, else as a global one; the model and voice are the job's.

    Raises:
        ServerNotRunning: no healthy server hosts the request's model.
        LexiconError: the entry is unusable. VoiceError, SpeechError: as for a book preview.
    """
    entry = entry.validated()
    model = get_entry(model_key)
    book = load_book(book_path) if book_path is not None else None
    store = LexiconStore(paths)
    identity = book_identity(book) if book is not None else None
    global_lexicon = store.load(None)
    book_lexicon = store.load(identity) if identity is not None else Lexicon()
    if for_book and identity is not None:
        book_lexicon = book_lexicon.with_entry(entry)
    else:
        global_lexicon = global_lexicon.with_entry(entry)
    pronouncer = Pronouncer(global_lexicon, book_lexicon)
    text = sample.strip() or sample_sentence(book, entry)
    if book is not None:
        speech = spoken_form(book, entry=model, settings=settings, language=language, pronouncer=pronouncer,
                             announce=False)
        spoken = speech.spoken(text)
    else:
        rules = rules_for(language) if normalization_applies(model, settings) else None
        spoken = SpokenForm(language or "", rules, pronouncer).spoken(text)
    with client_factory(preview_endpoint(server, model)) as client:
        chosen = prepare_voice(model, voice, client=client, paths=paths)
        result = preview_voice(client, model, chosen, text=spoken, out_path=out_path, language=language)
    return PreviewResult(Path(out_path), spoken, result.duration_s)
