"""The book's cast made ready with no click: seeded from the series, voices picked for the model.

:func:`ready_cast_file` is what the cast screen and Generate read. A book with no cast file of
its own starts from an earlier book of its series (:mod:`.series`); a cast with ``auto`` on gets
a voice for every main character still without one (:mod:`.casting`), kept for that model. The
file is saved when anything changed, so the CLI and other browsers see the same cast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from omni_web.book import Book
from omni_web.cast.casting import Persona, guess_personas, pick_voices
from omni_web.cast.characters import Character, find_characters
from omni_web.cast.labels import labels_path, load_labels
from omni_web.cast.record import Cast
from omni_web.cast.series import earlier_cast, seeded, series_fields
from omni_web.cast.store import CastFile, load_cast_file, saved_cast_path
from omni_web.catalog import CatalogEntry, VoiceMode
from omni_web.paths import DataPaths
from omni_web.text import book_identity
from omni_web.voices import VoiceLibrary

__all__ = ["MAIN_CHARACTERS", "Describe", "auto_picked", "ready_cast_file", "render_cast"]

# Personas for characters about to get a voice (the LLM's, or guessed from the book).
Describe = Callable[[Book, Sequence[Character]], dict[str, Persona]]
# Designed voices cost a VoiceDesign request each and a clip in the library: the main cast only.
MAIN_CHARACTERS = 12


def auto_picked(cast: CastFile, book: Book, entry: CatalogEntry, library: VoiceLibrary, *,
                describe: Describe | None = None) -> CastFile:
    """``cast`` with a voice picked for every main character still without one on ``entry``'s model.

    ``describe`` gives the personas (the LLM's, :func:`omni_web.cast.persona_llm.llm_personas`);
    by default they are guessed from the book's words. It is called only when a pick is due.
    """
    people = find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits)
    have = cast.voices_for(entry)
    missing = [p for p in people if p.name not in have][: max(0, MAIN_CHARACTERS - len(have))]
    if not missing:
        return (
            cast if cast.picked_for == entry.key or not cast.picked else replace(cast, picked_for=entry.key)
        )
    taken = [spec.name or spec.clone or "" for spec in (*have.values(), cast.dialogue) if spec is not None]
    narrator = cast.narrator.name if cast.narrator is not None and cast.narrator.name else None
    if narrator is None and entry.voice_mode in (VoiceMode.BUILTIN_SPEAKERS, VoiceMode.PRESET_VOICES):
        narrator = entry.default_voice  # the voice a job narrates with unless told otherwise
    personas = describe(book, missing) if describe is not None else guess_personas(book, missing)
    new = pick_voices(
        [personas[p.name] for p in missing],
        entry,
        library,
        book_key=book_identity(book).key[:8],
        taken=taken,
        narrator=narrator,
    )
    kept = cast.picked if cast.picked_for == entry.key else {}
    return replace(cast, picked=dict(sorted({**kept, **new}.items())), picked_for=entry.key)


def ready_cast_file(
    paths: DataPaths,
    book: Book,
    entry: CatalogEntry,
    library: VoiceLibrary,
    *,
    describe: Describe | None = None,
) -> CastFile:
    """The book's cast file for ``entry``'s model: its own, else its series' (saved as its own), with
    the main characters' voices picked when ``auto`` is on."""
    path = saved_cast_path(paths, book)
    cast = load_cast_file(path)
    found = None
    if not path.is_file():
        names = [p.name for p in find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits)]
        found = earlier_cast(paths, book, names, own=path)
        cast = seeded(found[0], book) if found is not None else cast
    series, author = series_fields(book)
    ready = replace(cast, series=cast.series or series, author=cast.author or author)
    if ready.auto and ready.enabled:
        ready = auto_picked(ready, book, entry, library, describe=describe)
    voiced = bool(ready.characters or ready.picked or ready.dialogue or ready.narrator)
    if (ready != cast or found is not None) and (voiced or path.is_file()):
        ready.save(path)  # a book with no voices yet gets no file, so a later series cast can still seed it
    return ready


def render_cast(
    paths: DataPaths,
    book: Book,
    entry: CatalogEntry,
    library: VoiceLibrary,
    *,
    describe: Describe | None = None,
) -> Cast | None:
    """The cast Generate renders with: the ready cast file resolved for the model, with the book's
    labels; None when it is off or gives no quote another voice."""
    cast_file = ready_cast_file(paths, book, entry, library, describe=describe)
    if not cast_file.enabled:
        return None
    cast = replace(
        cast_file.to_cast(entry, library), labels=load_labels(labels_path(saved_cast_path(paths, book)))
    )
    return cast if cast.active else None
