"""Where a conversion job's files go, and removing them again.

Every job gets its own file names, claimed when it is queued, so a second job for the same book
(another voice, to compare) never writes over the first one's m4b or MP3s: the name carries the
narrator (model and voice), and a job that would still collide gets a numbered copy,
``Title - Qwen3-TTS 0.6B CustomVoice (Vivian) (2).m4b``. The claimed name travels in the job's
request, so a resume or a re-run writes to the same place.

Removal is planned first (:func:`plan_output_removal` lists the files and their size for the
confirm), then executed; only files inside the output folder are ever listed.
"""

from __future__ import annotations

import glob
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.assemble import AudiobookTags, book_folder, safe_filename
from omni_web.assemble.filenames import unique_name
from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice
from omni_web.pipeline.plan import narrator_label

__all__ = [
    "JobOutputs",
    "OutputRemoval",
    "book_tags_for_paths",
    "claim_output_name",
    "job_outputs",
    "plan_output_removal",
]

log = logging.getLogger(__name__)

# Room for " (12)", ".m4b" and the MP3s' "NN - chapter.mp3" one level down.
_NAME_MAX_BYTES = 150


@dataclass(frozen=True, slots=True)
class JobOutputs:
    """The files one job writes: the m4b and the MP3 folder (either may be unused)."""

    folder: Path  # <output>/<Author>/<Title>
    name: str  # the file stem this job claimed
    m4b: Path
    mp3_dir: Path

    @classmethod
    def for_name(cls, output_root: Path, tags: AudiobookTags, name: str, *, mp3_only: bool) -> JobOutputs:
        """The paths for a claimed ``name`` (``mp3_only``: the book format is MP3, not m4b + MP3)."""
        folder = book_folder(output_root, tags)
        mp3_root = output_root if mp3_only else Path(output_root) / "MP3"
        return cls(folder=folder, name=name, m4b=folder / f"{name}.m4b",
                   mp3_dir=book_folder(mp3_root, tags).parent / name)


def book_tags_for_paths(book: Book) -> AudiobookTags:
    """The two tags that name a book's folder (title and author), as the plan sets them."""
    meta = book.metadata
    return AudiobookTags(title=meta.title or Path(book.source_path).stem, author=meta.authors_str)


def _default_stem(tags: AudiobookTags, entry: CatalogEntry, voice: VoiceChoice) -> str:
    title = safe_filename(tags.title, fallback="audiobook", max_bytes=80)
    narrator = safe_filename(narrator_label(entry, voice), fallback=entry.key, max_bytes=_NAME_MAX_BYTES - 85)
    return f"{title} - {narrator}"


def claim_output_name(
    output_root: Path,
    book: Book,
    entry: CatalogEntry,
    voice: VoiceChoice,
    *,
    claimed: Iterable[str] = (),
) -> str:
    """A file stem for a new job that no file on disk and no other job (``claimed``) uses.

    ``claimed`` holds the stems other jobs of this book folder already hold (case is ignored,
    as on the file systems that ignore it).
    """
    tags = book_tags_for_paths(book)
    folder = book_folder(output_root, tags)
    taken = set(claimed)
    if folder.is_dir():
        taken |= {path.stem for path in folder.glob("*.m4b")}
    mp3_parent = book_folder(Path(output_root) / "MP3", tags).parent
    for parent in (mp3_parent, folder.parent):
        if parent.is_dir():
            taken |= {path.name for path in parent.iterdir() if path.is_dir()}
    # Compared with an extension: narrator names hold dots ("0.6B") that are not one.
    return unique_name(_default_stem(tags, entry, voice) + ".m4b", {name + ".m4b" for name in taken})[:-4]


def job_outputs(result: Mapping[str, Any], progress: Mapping[str, Any]) -> list[Path]:
    """Every file a job reports having written: the m4b, its MP3s (and their subtitles), its QA and
    levels reports, its read-along EPUB and the subtitles named after it, its ACX folder, its
    chapter files."""
    files: list[Path] = [Path(result[key]) for key in ("m4b", "qa_report", "levels_path", "readalong_epub")
                         if result.get(key)]  # fmt: skip
    for key, pattern in (("mp3_dir", "*"), ("acx_dir", "*")):
        folder = result.get(key)
        if folder and Path(folder).is_dir():
            files.extend(sorted(p for p in Path(folder).glob(pattern) if p.is_file()))
    epub = result.get("readalong_epub")
    if epub and result.get("m4b"):
        # Subtitles beside the book carry the job's name ("<name> - 01 - Chapter.vtt").
        own = Path(result["m4b"]).stem
        files.extend(sorted(p for ext in (".vtt", ".srt") for p in Path(epub).parent.glob(f"{glob.escape(own)} - *{ext}")))
    for chapter in [*(result.get("chapters") or []), *(progress.get("chapters") or [])]:
        path = chapter.get("path") or chapter.get("audio_path")
        if path:
            files.append(Path(path))
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
