"""Series memory: the next book of a series starts from the cast of the one before.

An earlier cast belongs to the same series when both books name it in their metadata (calibre's
``series``, EPUB 3's collection), or when they share an author and at least two characters. The
new book takes its characters' voices, the app's picks and the narrator and dialogue voices;
the user's choices there win over anything the app would pick.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from omni_web.book import Book
from omni_web.cast.store import CastFile, casts_dir, load_cast_file
from omni_web.errors import CastError
from omni_web.paths import DataPaths

__all__ = ["MIN_SHARED_CHARACTERS", "earlier_cast", "seeded", "series_fields"]

MIN_SHARED_CHARACTERS = 2


def series_fields(book: Book) -> tuple[str, str]:
    """The book's series and first author as a cast file keeps them."""
    meta = book.metadata
    return meta.series.strip(), (meta.authors[0].strip() if meta.authors else "")


def _shared(cast: CastFile, names: set[str]) -> int:
    return len({n.casefold() for n in (*cast.characters, *cast.picked)} & names)


def earlier_cast(
    paths: DataPaths, book: Book, names: Iterable[str], *, own: Path
) -> tuple[CastFile, Path] | None:
    """The cast of an earlier book of ``book``'s series (its newest when several), and its file."""
    series, author = series_fields(book)
    wanted = {n.casefold() for n in names}
    folder = casts_dir(paths)
    found: list[tuple[int, float, CastFile, Path]] = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if path == own:
            continue
        try:
            cast = load_cast_file(path)
        except CastError:
            continue  # a damaged file is the user's to fix; it never blocks another book
        same_series = bool(series) and cast.series.casefold() == series.casefold()
        overlap = _shared(cast, wanted) if author and cast.author.casefold() == author.casefold() else 0
        if same_series or overlap >= MIN_SHARED_CHARACTERS:
            found.append((1 if same_series else 0, path.stat().st_mtime, cast, path))
    if not found:
        return None
    _, _, cast, path = max(found, key=lambda item: (item[0], item[1]))
    return cast, path


def seeded(earlier: CastFile, book: Book) -> CastFile:
    """A new book's cast made from the earlier one's."""
    series, author = series_fields(book)
    return replace(
        earlier,
        book=book.metadata.title or book.source_path.stem,
        series=series or earlier.series,
        author=author or earlier.author,
    )
