"""Cast files: a book's voices saved as YAML in the data root, keyed by the book's identity.

``<data root>/casts/<title>-<id>.yaml``, where ``<id>`` is the book's identity key (the one its
lexicon uses: its ``dc:identifier``, else its title, authors and language), so a re-uploaded copy of the book finds its cast
again. A series reuses a cast by importing it (``cast BOOK2.epub --from BOOK1.epub``) or by
passing the file (``convert … --cast FILE.yaml``). The file is plain YAML meant to be edited::

    book: Moby-Dick
    enabled: true          # the app's Generate uses this cast (the CLI asks for it: --cast saved)
    narrator: vivian
    dialogue: ryan
    min_confidence: 0.6
    characters:
      Ahab: eric
      Starbuck: {clone: /clips/starbuck.wav, transcript: "What the clip says."}
      Queequeg: {instructions: "A deep, calm voice, speaking slowly."}
    edits:                 # corrections to the characters the book gives (omni_web.cast.edits)
      merge: {Lizzy: Elizabeth}
      rename: {Narrator: Ishmael}
      split: [Bennet]
      hide: [Rather]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from omni_web.assemble import safe_filename
from omni_web.book import Book
from omni_web.cast.dialogue import DEFAULT_MIN_CONFIDENCE
from omni_web.cast.edits import CastEdits
from omni_web.cast.labels import labels_path, load_labels
from omni_web.cast.record import Cast
from omni_web.cast.voicespec import VoiceSpec
from omni_web.catalog import CatalogEntry, DeliveryControl
from omni_web.client import VoiceChoice
from omni_web.errors import CastError
from omni_web.files import write_atomic
from omni_web.paths import DataPaths
from omni_web.text import book_identity
from omni_web.voices import VoiceLibrary

__all__ = ["CastFile", "casts_dir", "edit_characters", "load_cast_file", "saved_cast", "saved_cast_path"]


def casts_dir(paths: DataPaths) -> Path:
    """Where saved casts live."""
    return paths.root / "casts"


def saved_cast_path(paths: DataPaths, book: Book) -> Path:
    """The book's cast file (it may not exist yet)."""
    # One identity for a book's lexicon and its cast (omni_web.text.book_identity): a re-uploaded
    # copy finds both again.
    identity = book_identity(book).key
    folder = casts_dir(paths)
    existing = sorted(folder.glob(f"*-{identity}.yaml")) if folder.is_dir() else []
    if existing:
        return existing[0]  # the title part may have been written from another copy's metadata
    title = safe_filename(book.metadata.title or book.source_path.stem, fallback="book", max_bytes=60)
    return folder / f"{title}-{identity}.yaml"


@dataclass(frozen=True, slots=True)
class CastFile:
    """The voices chosen for one book (or a series), as saved."""

    book: str = ""
    narrator: VoiceSpec | None = None
    dialogue: VoiceSpec | None = None
    characters: dict[str, VoiceSpec] = field(default_factory=dict)
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    enabled: bool = True  # Generate in the app reads the book's quotes with this cast
    edits: CastEdits = CastEdits()  # merges, splits, renames and hidden names of the book's characters
    # The app picks voices for the main characters (omni_web.cast.autocast); its picks are kept
    # for the model they were made for, and a person's choice in ``characters`` wins over them.
    auto: bool = False
    picked: dict[str, VoiceSpec] = field(default_factory=dict)
    picked_for: str = ""
    # What finds the next book of a series (omni_web.cast.series).
    series: str = ""
    author: str = ""

    def with_character(self, name: str, voice: VoiceSpec | None) -> CastFile:
        """A copy with ``name`` mapped to ``voice`` (None removes the mapping)."""
        characters = {k: v for k, v in self.characters.items() if k.casefold() != name.casefold()}
        if voice is not None:
            characters[name] = voice
        return replace(self, characters=dict(sorted(characters.items())))

    def merged(self, other: CastFile) -> CastFile:
        """This cast with ``other``'s choices laid over it (importing a series' cast)."""
        result = self
        for name, voice in other.characters.items():
            result = result.with_character(name, voice)
        return replace(
            result,
            narrator=other.narrator or self.narrator,
            dialogue=other.dialogue or self.dialogue,
            min_confidence=other.min_confidence,
        )

    def voices_for(self, entry: CatalogEntry) -> dict[str, VoiceSpec]:
        """Each character's voice on ``entry``'s model: the app's picks for it, a person's choices over them."""
        picks = self.picked if self.picked_for == entry.key else {}
        chosen = {name.casefold() for name in self.characters}
        return {**{n: v for n, v in picks.items() if n.casefold() not in chosen}, **self.characters}

    def to_cast(self, entry: CatalogEntry, library: VoiceLibrary) -> Cast:
        """The resolved cast for ``entry``'s model (the narrator is resolved by :meth:`narrator_voice`)."""
        return Cast.of(
            dialogue=self.dialogue.resolve(entry, library) if self.dialogue is not None else None,
            characters={name: spec.resolve(entry, library) for name, spec in self.voices_for(entry).items()},
            min_confidence=self.min_confidence,
            delivery=entry.delivery_control is not DeliveryControl.NONE,
            edits=self.edits,
        )

    def narrator_voice(self, entry: CatalogEntry, library: VoiceLibrary) -> VoiceChoice | None:
        """The saved narrator voice for ``entry``'s model, or None."""
        return self.narrator.resolve(entry, library) if self.narrator is not None else None

    def to_yaml(self) -> str:
        """The file's text."""
        data: dict[str, Any] = {}
        if self.book:
            data["book"] = self.book
        data["enabled"] = self.enabled
        if self.narrator is not None:
            data["narrator"] = self.narrator.to_yaml()
        if self.dialogue is not None:
            data["dialogue"] = self.dialogue.to_yaml()
        data["min_confidence"] = self.min_confidence
        data["characters"] = {name: spec.to_yaml() for name, spec in self.characters.items()}
        if not self.edits.empty:
            data["edits"] = self.edits.to_yaml()
        if self.auto or self.picked:
            data["auto"] = self.auto
            data["picked_for"] = self.picked_for
            data["picked"] = {name: spec.to_yaml() for name, spec in self.picked.items()}
        data.update(
            {key: value for key, value in (("series", self.series), ("author", self.author)) if value}
        )
        return "# omni-web cast: voices for narration, dialogue and characters\n" + yaml.safe_dump(
            data, sort_keys=False, allow_unicode=True
        )

    @classmethod
    def from_yaml(cls, text: str, *, source: str) -> CastFile:
        """Parse a cast file's text; ``source`` names it in error messages."""
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise CastError(
                f"The cast file {source} is not valid YAML ({exc}). Fix it or delete it."
            ) from exc
        if not isinstance(data, dict):
            raise CastError(
                f"The cast file {source} should hold a mapping (book, narrator, dialogue, characters)."
            )
        characters = data.get("characters") or {}
        picked = data.get("picked") or {}
        if not isinstance(characters, dict) or not isinstance(picked, dict):
            raise CastError(f"In {source}, characters should map names to voices (e.g. 'Ahab: ryan').")
        try:
            confidence = float(data.get("min_confidence", DEFAULT_MIN_CONFIDENCE))
        except (TypeError, ValueError):
            raise CastError(f"In {source}, min_confidence should be a number from 0 to 1.") from None
        if not 0.0 <= confidence <= 1.0:
            raise CastError(f"In {source}, min_confidence is {confidence}; use a number from 0 to 1.")

        def spec(key: str) -> VoiceSpec | None:
            value = data.get(key)
            return None if value in (None, "") else VoiceSpec.from_yaml(value, where=f"{source}: {key}")

        return cls(
            book=str(data.get("book") or ""),
            narrator=spec("narrator"),
            dialogue=spec("dialogue"),
            characters={
                str(name): VoiceSpec.from_yaml(value, where=f"{source}: characters: {name}")
                for name, value in sorted(characters.items(), key=lambda kv: str(kv[0]))
            },
            min_confidence=confidence,
            enabled=bool(data.get("enabled", True)),
            edits=CastEdits.from_yaml(data.get("edits"), source=source),
            auto=bool(data.get("auto", False)),
            picked={
                str(name): VoiceSpec.from_yaml(value, where=f"{source}: picked: {name}")
                for name, value in sorted(picked.items(), key=lambda kv: str(kv[0]))
            },
            picked_for=str(data.get("picked_for") or ""),
            series=str(data.get("series") or ""),
            author=str(data.get("author") or ""),
        )

    def save(self, path: Path) -> Path:
        """Write the file atomically; returns ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(path, self.to_yaml())


def _voice_of(cast: CastFile, name: str) -> VoiceSpec | None:
    return next((v for k, v in cast.characters.items() if k.casefold() == name.casefold()), None)


def edit_characters(
    cast: CastFile,
    *,
    merge: tuple[list[str], str] | None = None,
    split: str | None = None,
    rename: tuple[str, str] | None = None,
    hide: str | None = None,
    unhide: str | None = None,
) -> CastFile:
    """The cast with one edit of the book's characters; voices follow their character.

    Args:
        merge: (names, character): the names are that character; a voice of theirs moves to it
            when it has none.
        split: a name that is a character of its own again.
        rename: (name, new): the character is shown and mapped as ``new`` (its voice moves).
        hide: a name that is no character; ``unhide`` brings it back.
    """
    edits = cast.edits
    if merge is not None:
        names, into = merge
        edits = edits.merge(names, into)
        for name in names:
            voice = _voice_of(cast, name)
            if voice is not None:
                cast = cast.with_character(name, None)
                if _voice_of(cast, into) is None:
                    cast = cast.with_character(into, voice)
    if split is not None:
        edits = edits.split(split)
    if rename is not None:
        old, new = rename
        edits = edits.rename(old, new)
        voice = _voice_of(cast, old)
        if voice is not None:
            cast = cast.with_character(old, None).with_character(new, voice)
    if hide is not None:
        edits = edits.hide(hide)
    if unhide is not None:
        edits = edits.hide(unhide, hidden=False)
    return replace(cast, edits=edits)


def load_cast_file(path: Path) -> CastFile:
    """Read a cast file; a missing file is an empty cast.

    Raises:
        CastError: the file cannot be read or is not a cast.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return CastFile()
    except (OSError, UnicodeDecodeError) as exc:
        raise CastError(f"Cannot read the cast file {path}: {exc}.") from exc
    return CastFile.from_yaml(text, source=str(path))


def saved_cast(paths: DataPaths, book: Book, entry: CatalogEntry, library: VoiceLibrary) -> Cast | None:
    """The book's saved cast for ``entry``'s model when it is enabled and has any voice, else None; it
    carries the book's saved labels (the LLM's, a person's)."""
    cast_file = load_cast_file(saved_cast_path(paths, book))
    if not cast_file.enabled:
        return None
    cast = replace(
        cast_file.to_cast(entry, library), labels=load_labels(labels_path(saved_cast_path(paths, book)))
    )
    return cast if cast.active else None
