"""A conversion job's files: claiming their name, listing them, and removing them again.

Where the files go and what they are called is decided in :mod:`omni_web.deliver.layout`; this
module adds what a job needs around it. Every job gets its own name, claimed when it is queued, so
a second job for the same book (another voice, to compare) never writes over the first one's m4b
or MP3s; the claimed name (and the layout it was claimed under) travels in the job's request, so a
resume or a re-run writes to the same place.

Removal is planned first (:func:`plan_output_removal` lists the files and their size for the
confirm), then executed; only files inside the output folder are ever listed.
"""

from __future__ import annotations

import glob
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice
from omni_web.deliver.downloads import cached_downloads
from omni_web.deliver.layout import BookPlace, OutputLayout, book_place, claim_name, is_library_folder
from omni_web.deliver.metadata import tags_for_paths
from omni_web.pipeline.convert import ConvertResult
from omni_web.pipeline.progress import ConvertProgress

__all__ = [
    "OutputRemoval",
    "claim_output_name",
    "job_outputs",
    "job_place",
    "plan_output_removal",
]

log = logging.getLogger(__name__)


def claim_output_name(
    output_root: Path,
    book: Book,
    entry: CatalogEntry,
    voice: VoiceChoice,
    *,
    layout: str = OutputLayout.LIBRARY,
    metadata: Iterable[tuple[str, str]] = (),
    claimed: Iterable[str] = (),
) -> str:
    """A name for a new job of ``book`` that no file on disk and no other job (``claimed``) uses.

    ``metadata`` are the user's corrections (a corrected title or series places the book).
    """
    return claim_name(output_root, tags_for_paths(book, metadata), entry, voice,
                      layout=OutputLayout(layout), claimed=claimed)


def job_place(
    output_root: Path,
    book: Book,
    name: str,
    *,
    layout: str,
    metadata: Iterable[tuple[str, str]] = (),
    mp3_only: bool = False,
) -> BookPlace:
    """Every path of the job that claimed ``name`` (see :func:`omni_web.deliver.layout.book_place`)."""
    return book_place(
        output_root, tags_for_paths(book, metadata), name, layout=OutputLayout(layout), mp3_only=mp3_only
    )


def job_outputs(result: ConvertResult, progress: ConvertProgress) -> list[Path]:
    """Every file a job reports having written: the m4b (and its cached MP3 zip), its MP3s (and their subtitles), its QA and
    levels reports, its read-along EPUB and the subtitles named after it, its ACX folder, its
    chapter files, and in the library layout its folder's sidecars and cover."""
    files: list[Path] = [
        p for p in (result.m4b, result.qa_report, result.levels_path, result.readalong_epub) if p
    ]
    if result.m4b:
        files.extend(cached_downloads(result.m4b))  # its MP3 zip, made on a download
    for folder in (result.mp3_dir, result.acx_dir):
        if folder and folder.is_dir():
            files.extend(sorted(p for p in folder.glob("*") if p.is_file()))
    if result.readalong_epub and result.m4b:
        # Subtitles beside the book carry the job's name ("<name> - 01 - Chapter.vtt").
        own = result.m4b.stem
        files.extend(
            sorted(
                p
                for ext in (".vtt", ".srt")
                for p in result.readalong_epub.parent.glob(f"{glob.escape(own)} - *{ext}")
            )
        )
    folder = result.output_dir if result.output_dir.parts else None  # a result without one reads as Path("")
    if folder is not None and is_library_folder(folder) and folder.is_dir():
        # A library-layout folder is the job's own: its sidecars and cover go with the book.
        files.extend(
            sorted(
                p
                for p in folder.iterdir()
                if p.is_file()
                and (
                    p.name in ("metadata.json", "desc.txt", "reader.txt")
                    or p.suffix == ".opf"
                    or p.stem == "cover"
                )
            )
        )
    files.extend(chapter.path for chapter in result.chapters)
    files.extend(chapter.audio_path for chapter in progress.chapters if chapter.audio_path)
    return list(dict.fromkeys(files))


@dataclass(frozen=True, slots=True)
class OutputRemoval:
    """Files to delete for one job, planned but not yet removed."""

    output_root: Path
    files: tuple[Path, ...]
    size_bytes: int

    @property
    def size_str(self) -> str:
        """``604.2 MB`` for the confirm."""
        size = float(self.size_bytes)
        for unit in ("B", "KB", "MB", "GB"):
            if size < 1000 or unit == "GB":
                return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
            size /= 1000
        return f"{size:.1f} GB"

    def execute(self) -> int:
        """Delete the files, then the folders they leave empty (up to the output folder).

        Returns the number of files removed; a file already gone is not an error.
        """
        removed = 0
        parents: set[Path] = set()
        for path in self.files:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                pass
            parents.add(path.parent)
        root = self.output_root.resolve()
        for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
            current = folder
            while current.resolve() != root and current.resolve().is_relative_to(root):
                try:
                    current.rmdir()  # only when empty
                except OSError:
                    break
                current = current.parent
        return removed


def plan_output_removal(
    output_root: Path,
    files: Iterable[Path],
    *,
    kept: Iterable[Path] = (),
) -> OutputRemoval:
    """The removal of ``files`` that lie inside ``output_root`` and are not in ``kept``.

    ``kept`` are files another job still reports (two jobs of one request share chapter files).
    Anything outside the output folder is never touched, whatever a job's record says.
    """
    root = Path(output_root).resolve()
    keep = {Path(path).resolve() for path in kept}
    chosen: list[Path] = []
    size = 0
    for path in dict.fromkeys(Path(p) for p in files):
        resolved = path.resolve()
        if not resolved.is_relative_to(root) or resolved in keep or not resolved.is_file():
            if not resolved.is_relative_to(root):
                log.warning("Not removing %s: it is outside the output folder %s", path, root)
            continue
        chosen.append(resolved)
        size += resolved.stat().st_size
    return OutputRemoval(output_root=root, files=tuple(chosen), size_bytes=size)
