"""Complete a finished book's folder for a library: sidecars and the cover beside the audio.

Only in the library layout, where the folder holds exactly one narrator version (in the flat
layout several versions share a folder, and one ``metadata.json`` would name the wrong narrator).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from omni_web.assemble.metadata import ChapterMark
from omni_web.book import BookMetadata
from omni_web.deliver.layout import BookPlace, OutputLayout
from omni_web.deliver.sidecars import Narration, sidecar_files, write_sidecars
from omni_web.files import atomic_path

__all__ = ["complete_book_folder"]


def complete_book_folder(
    place: BookPlace,
    meta: BookMetadata,
    narration: Narration,
    marks: Sequence[ChapterMark],
    *,
    cover: Path | None,
) -> list[Path]:
    """Write ``metadata.json``, ``<Title>.opf``, ``desc.txt``, ``reader.txt`` and ``cover.<ext>``
    into the book's folder; returns the files written (none in the flat layout)."""
    if place.layout is not OutputLayout.LIBRARY:
        return []
    place.folder.mkdir(parents=True, exist_ok=True)
    written = write_sidecars(place.folder, sidecar_files(meta, narration, marks, stem=place.stem))
    if cover is not None and Path(cover).is_file():
        # A scanner takes "cover.*" first (audiobookshelf server/scanner/BookScanner.js).
        target = place.folder / f"cover{Path(cover).suffix.lower()}"
        with atomic_path(target) as staged:
            shutil.copyfile(cover, staged)
        written.append(target)
    return written
