"""Where a finished book's files go and what they are called: the one place that decides it.

Two layouts (the ``output_layout`` setting):

- ``library`` (the default) is safe for a library scanner such as Audiobookshelf, which treats all
  audio files of one folder as the tracks of one book: one folder per (book, narrator version),
  ``<Author>/<Series>/Vol 2 - <Title> {<Voice> - <Model>}/<Title>.m4b``, holding the cover, the
  read-along EPUB, the subtitles, the reports and the sidecars. An extra MP3 set and an ACX set go
  into their own trees (``mp3/…``, ``acx/…``) with the same relative path, never inside a book
  folder. A book made only as MP3 is its own folder of tracks, like an m4b's. A book without an
  author sits at the top (ABS reads the first folder as the author, so no made-up author folder),
  and a second copy of a name is ``<Title> (2) {…}``: ABS reads the narrator only from a folder
  name that ends with ``}``.
- ``flat`` is the layout of earlier versions: every version of a title in ``<Author>/<Title>/`` as
  ``<Title> - <Model> (<Voice>).m4b``, MP3s under ``MP3/<Author>/<name>``, ACX beside the m4b.

A job claims its name when it is queued (:func:`claim_name`), so a second voice of a book never
writes over the first; the name travels in the job's request and :func:`book_place` turns it back
into every path. Pure apart from listing what already exists.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble.filenames import safe_filename, unique_name
from omni_web.assemble.records import AudiobookTags
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.deliver.names import narrator_name
from omni_web.voices.names import canonical_spelling, display_name

__all__ = [
    "BookPlace",
    "OutputLayout",
    "book_place",
    "claim_name",
    "default_name",
    "is_library_folder",
    "library_name",
    "name_of_files",
    "narrator_label",
    "narrator_parts",
    "taken_names",
]

# The numbered copies of earlier versions put the number last: "Title {Voice, Model} (2)".
_LIBRARY_NAME = re.compile(r"\{[^{}]*\}( \(\d+\))?$")
# Room for " (12)", ".m4b" and the MP3s' "NN - chapter.mp3" one level down.
_NAME_MAX_BYTES = 150
_MP3_TREE = "mp3"
_ACX_TREE = "acx"
_FLAT_MP3_TREE = "MP3"


class OutputLayout(enum.StrEnum):
    """How finished books are laid out in the output folder."""

    LIBRARY = "library"
    FLAT = "flat"


def narrator_parts(entry: CatalogEntry, voice: VoiceChoice) -> tuple[str, str]:
    """``(voice, model)`` as people read them, e.g. ``("Uncle Fu", "Qwen3-TTS 0.6B CustomVoice")``."""
    if voice.kind is VoiceKind.CLONE and voice.reference is not None:
        detail = f"voice clone of {voice.reference.stem}"
    elif voice.kind is VoiceKind.DESIGN:
        detail = "designed voice"
    elif voice.kind is VoiceKind.DEFAULT:
        detail = "default voice"
    else:
        # One voice, one book name, whichever list spelled it (the server's "vivian", the card's "Vivian").
        detail = display_name(canonical_spelling(voice.name, entry.preset_voices))
    return detail, entry.label


def narrator_label(entry: CatalogEntry, voice: VoiceChoice) -> str:
    """The narrator in every tag and sidecar: voice and model, e.g. "Vivian - Qwen3-TTS 0.6B CustomVoice",
    in a form Audiobookshelf's name parser keeps whole (see :mod:`omni_web.deliver.names`)."""
    return narrator_name(*narrator_parts(entry, voice))


def _flat_label(entry: CatalogEntry, voice: VoiceChoice) -> str:
    """The flat layout's file-name form, "Qwen3-TTS 0.6B CustomVoice (Vivian)" (names of earlier versions)."""
    detail, model = narrator_parts(entry, voice)
    return f"{model} ({detail})"


@dataclass(frozen=True, slots=True)
class BookPlace:
    """Every path of one job's book, from its claimed ``name``.

    ``folder`` holds the m4b (or the MP3 tracks of an MP3-only book), cover, read-along EPUB,
    subtitles, reports and sidecars; ``stem`` names the files in it.
    """

    layout: OutputLayout
    root: Path
    folder: Path
    name: str
    m4b: Path
    mp3_dir: Path
    acx_dir: Path

    @property
    def stem(self) -> str:
        """The file stem of the book's own files (``Title`` or, flat, the claimed name)."""
        return self.m4b.stem

    def beside(self, suffix: str) -> Path:
        """A file of this book next to its m4b: ``beside(".levels.json")``."""
        return self.folder / f"{self.stem}{suffix}"

    def report(self, suffix: str, *, mp3_only: bool) -> Path:
        """A report of this book in its folder, named like its m4b, or for an MP3-only book like
        its MP3 folder: two jobs of one book keep their own reports."""
        return self.folder / f"{self.mp3_dir.name if mp3_only else self.stem}{suffix}"


def _author(tags: AudiobookTags) -> str:
    return safe_filename(tags.author, fallback="Unknown Author")


def _title(tags: AudiobookTags) -> str:
    return safe_filename(tags.title, fallback="Untitled")


def _series_path(tags: AudiobookTags) -> Path:
    """``<Author>/<Series>`` (or just ``<Author>``) under a tree's root; nothing for a book without an
    author, whose series folder ABS would read as its author."""
    if not tags.author.strip():
        return Path()
    author = Path(_author(tags))
    return author / safe_filename(tags.series, fallback="Series") if tags.series.strip() else author


def default_name(tags: AudiobookTags, entry: CatalogEntry, voice: VoiceChoice, layout: OutputLayout) -> str:
    """The name a job of this book and narrator gets when nothing else holds it.

    Library: ``Vol 2 - Title {Vivian - Qwen3-TTS 0.6B CustomVoice}``, the folder-name form
    Audiobookshelf parses (``Vol N - `` the sequence inside a series folder, ``{…}`` narrators).
    Flat: ``Title - Qwen3-TTS 0.6B CustomVoice (Vivian)``.
    """
    title = safe_filename(tags.title, fallback="audiobook", max_bytes=80)
    if layout is OutputLayout.FLAT:
        narrator = safe_filename(_flat_label(entry, voice), fallback=entry.key,
                                 max_bytes=_NAME_MAX_BYTES - 85)
        return f"{title} - {narrator}"
    detail, model = narrator_parts(entry, voice)
    return library_name(tags, detail, model)


def library_name(tags: AudiobookTags, voice: str, model: str, *, copy: int = 1) -> str:
    """``Vol 2 - Title {Voice - Model}`` (no ``Vol`` outside a series folder, none without a number);
    ``copy`` 2 and up: ``Title (2) {Voice - Model}``."""
    title = safe_filename(tags.title, fallback="audiobook", max_bytes=80)
    in_series = tags.series.strip() and tags.author.strip()
    volume = f"Vol {tags.series_part} - " if in_series and tags.series_part else ""
    narrator = safe_filename(narrator_name(voice, model), fallback="narrator", max_bytes=_NAME_MAX_BYTES - 95)
    number = f" ({copy})" if copy > 1 else ""
    return f"{volume}{title}{number} {{{narrator}}}"


def book_place(
    root: Path, tags: AudiobookTags, name: str, *, layout: OutputLayout, mp3_only: bool = False
) -> BookPlace:
    """The paths of the book a job claimed ``name`` for (``mp3_only``: MP3 is the book's format)."""
    root = Path(root)
    if layout is OutputLayout.FLAT:
        folder = root / _author(tags) / _title(tags)
        mp3_root = root if mp3_only else root / _FLAT_MP3_TREE
        return BookPlace(
            layout,
            root,
            folder,
            name,
            folder / f"{name}.m4b",
            mp3_root / _author(tags) / name,
            folder / f"{name} - ACX",
        )
    relative = _series_path(tags) / name
    folder = root / relative
    mp3_dir = folder if mp3_only else root / _MP3_TREE / relative
    return BookPlace(
        layout, root, folder, name, folder / f"{_title(tags)}.m4b", mp3_dir, root / _ACX_TREE / relative
    )


def taken_names(root: Path, tags: AudiobookTags, layout: OutputLayout) -> set[str]:
    """Names already used on disk by books of this title."""
    root = Path(root)
    taken: set[str] = set()
    if layout is OutputLayout.FLAT:
        folder = root / _author(tags) / _title(tags)
        if folder.is_dir():
            taken |= {path.stem for path in folder.glob("*.m4b")}
        parents = (root / _FLAT_MP3_TREE / _author(tags), folder.parent)
    else:
        relative = _series_path(tags)
        parents = (root / relative, root / _MP3_TREE / relative, root / _ACX_TREE / relative)
    for parent in parents:
        if parent.is_dir():
            taken |= {path.name for path in parent.iterdir() if path.is_dir()}
    return taken


def claim_name(
    root: Path,
    tags: AudiobookTags,
    entry: CatalogEntry,
    voice: VoiceChoice,
    *,
    layout: OutputLayout,
    claimed: Iterable[str] = (),
) -> str:
    """A name for a new job that no file on disk and no other job (``claimed``) uses.

    A collision gets a numbered copy, ``Title (2) {…}`` (flat: ``… (2)``); case is ignored, as on
    file systems that ignore it.
    """
    taken = set(claimed) | taken_names(root, tags, layout)
    if layout is OutputLayout.LIBRARY:
        used = {name.casefold() for name in taken}
        detail, model = narrator_parts(entry, voice)
        copy = 1
        while (name := library_name(tags, detail, model, copy=copy)).casefold() in used:
            copy += 1
        return name
    # Compared with an extension: narrator names hold dots ("0.6B") that are not one.
    return unique_name(default_name(tags, entry, voice, layout) + ".m4b", {name + ".m4b" for name in taken})[
        :-4
    ]


def is_library_folder(folder: Path) -> bool:
    """True for a book folder of the library layout: ``… {Voice, Model}``, or a numbered copy of one."""
    return _LIBRARY_NAME.search(Path(folder).name) is not None


def name_of_files(folder: Path, stem: str, layout: OutputLayout) -> str | None:
    """The name a job claimed for the book whose own files in ``folder`` are ``<stem>.*``: the
    inverse of :func:`book_place`; None where the folder does not say (not a library folder)."""
    if layout is OutputLayout.FLAT:
        return stem
    return Path(folder).name if is_library_folder(folder) else None
