"""Move books made in the flat layout into the library layout, on request only.

Planned first (:func:`plan_migration` lists every move, nothing is touched), then executed
(:meth:`MigrationPlan.execute`); the command line shows the plan and asks. A book is found by its
m4b in ``<Author>/<Title>/``; its title, author, series and narrator are read back from the m4b's
own tags, so a book whose EPUB is gone moves too. Its companions move with it, renamed to the new
stem: the read-along EPUB, the QA and levels reports, the subtitles, the ACX set (to ``acx/…``) and
the MP3 set (``MP3/<Author>/<name>`` to ``mp3/…``). The QA report's request and the job records
that name the book are rewritten to the new names, so review and regenerate find it again.
"""

from __future__ import annotations

import glob
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.assemble.ffmpeg import probe_tags
from omni_web.assemble.records import AudiobookTags
from omni_web.deliver.layout import (
    BookPlace,
    OutputLayout,
    book_place,
    is_library_folder,
    library_name,
    taken_names,
)
from omni_web.errors import FfmpegError
from omni_web.qa import QaReport

__all__ = ["BookMove", "MigrationPlan", "plan_migration"]

log = logging.getLogger(__name__)

_NARRATOR = re.compile(r"^(?P<model>.+?) \((?P<voice>[^()]*)\)")
_SKIP_TOP = frozenset({".parts", "MP3", "mp3", "acx"})
_SUFFIXES = (".readalong.epub", ".qa.json", ".levels.json")


@dataclass(frozen=True, slots=True)
class BookMove:
    """One flat book and where each of its files goes."""

    m4b: Path
    place: BookPlace
    moves: tuple[tuple[Path, Path], ...]  # (from, to), files and folders

    @property
    def old_name(self) -> str:
        """The stem the book had in the flat layout (its job's claimed name)."""
        return self.m4b.stem


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    """Every move, planned; ``skipped`` says which m4b files were left and why."""

    root: Path
    books: tuple[BookMove, ...]
    skipped: tuple[str, ...]

    @property
    def move_count(self) -> int:
        """Files and folders to move."""
        return sum(len(book.moves) for book in self.books)

    def execute(self, *, job_store: Any = None) -> int:
        """Move everything (renames within the output folder); returns the books moved.

        ``job_store`` (a :class:`omni_web.jobs.JobStore`) gets the jobs that name a moved book
        rewritten to the new paths.
        """
        for book in self.books:
            for source, target in book.moves:
                target.parent.mkdir(parents=True, exist_ok=True)
                source.rename(target)
            _rewrite_report(book)
            for source, _target in book.moves:
                _remove_empty(source.parent, self.root)
            if job_store is not None:
                _rewrite_jobs(job_store, book)
        return len(self.books)


def _tags(m4b: Path) -> tuple[AudiobookTags, str, str] | None:
    """The book's placing tags and its narrator's (voice, model), read back from the m4b."""
    try:
        tags = probe_tags(m4b)
    except FfmpegError as exc:
        log.warning("Not moving %s: ffprobe cannot read it (%s)", m4b, exc)
        return None
    found = {key.lower(): value for key, value in tags.items()}
    narrator = found.get("composer", "")
    match = _NARRATOR.match(narrator)
    voice, model = (match["voice"], match["model"]) if match else ("", narrator or "narrator")
    series = found.get("show", "")
    placing = AudiobookTags(
        title=found.get("title") or found.get("album") or m4b.parent.name,
        author=found.get("artist", ""),
        series=series,
        series_part=found.get("episode_id", "") if series else "",
    )
    return placing, voice, model


def _book_move(m4b: Path, root: Path, claimed: set[str]) -> BookMove | None:
    read = _tags(m4b)
    if read is None:
        return None
    placing, voice, model = read
    taken = {n.casefold() for n in claimed | taken_names(root, placing, OutputLayout.LIBRARY)}
    copy = 1
    while (name := library_name(placing, voice, model, copy=copy)).casefold() in taken:
        copy += 1
    claimed.add(name)
    place = book_place(root, placing, name, layout=OutputLayout.LIBRARY)
    folder, stem = m4b.parent, m4b.stem
    moves: list[tuple[Path, Path]] = [(m4b, place.m4b)]
    for suffix in _SUFFIXES:
        if (folder / f"{stem}{suffix}").is_file():
            moves.append((folder / f"{stem}{suffix}", place.beside(suffix)))
    for path in sorted(folder.glob(f"{glob.escape(stem)} - *")):
        if path.is_file() and path.suffix in (".vtt", ".srt"):
            moves.append((path, place.folder / f"{place.stem}{path.name[len(stem) :]}"))
    if (folder / f"{stem} - ACX").is_dir():
        moves.append((folder / f"{stem} - ACX", place.acx_dir))
    mp3 = root / "MP3" / folder.parent.name / stem
    if mp3.is_dir():
        moves.append((mp3, place.mp3_dir))
    return BookMove(m4b, place, tuple(moves))


def plan_migration(root: Path) -> MigrationPlan:
    """The moves that bring every flat-layout book under ``root`` into the library layout.

    A folder named like the library layout's (``… {Voice, Model}``, maybe `` (2)``) is left alone.
    """
    root = Path(root)
    books: list[BookMove] = []
    skipped: list[str] = []
    claimed: set[str] = set()
    for m4b in sorted(root.glob("*/*/*.m4b")):
        author = m4b.parent.parent.name
        if author in _SKIP_TOP or author.startswith(".") or m4b.name.startswith("."):
            continue
        if is_library_folder(m4b.parent):
            continue
        move = _book_move(m4b, root, claimed)
        if move is None:
            skipped.append(f"{m4b}: its tags cannot be read")
        else:
            books.append(move)
    return MigrationPlan(root, tuple(books), tuple(skipped))


def _remove_empty(folder: Path, root: Path) -> None:
    current = folder
    while current != root and current.is_relative_to(root):
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent


def _moved(book: BookMove) -> dict[str, str]:
    return {str(source): str(target) for source, target in book.moves}


def _rewrite_report(book: BookMove) -> None:
    """The QA report's request names the book by its claimed name: give it the new one."""
    report = book.place.beside(".qa.json")
    if not report.is_file():
        return
    try:
        document = QaReport.read(report)
    except ValueError:
        return
    if document.request:
        document.with_request(output_name=book.place.name, output_layout=OutputLayout.LIBRARY.value).write(
            report
        )


def _rewrite_jobs(store: Any, book: BookMove) -> None:
    moved = _moved(book)
    for job in store.list(limit=100_000):
        result = dict(job.result or {})
        if result.get("m4b") != str(book.m4b):
            continue
        for key, value in list(result.items()):
            if isinstance(value, str) and value in moved:
                result[key] = moved[value]
        result["output_dir"] = str(book.place.folder)
        params = {**job.params, "output_name": book.place.name, "output_layout": OutputLayout.LIBRARY.value}
        store.replace_record(job.id, params=params, result=result)
