"""What the jobs say about the files on disk: which book work folders (``<output>/.parts/<book>``)
belong to finished books, which chunks and chapter versions those books were built from, and
which books a queued or running job still works on (busy: never pruned).

Read from the job store, each finished job's result (its chapter files, its book, its QA report)
and the manifests the pipeline writes beside the chapter versions (:mod:`omni_web.master.versions`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from omni_web.files import file_sha256
from omni_web.jobs import Job, JobState, JobStore
from omni_web.master.versions import (
    BookManifest,
    ChapterVersion,
    chapter_versions,
    read_manifests,
    read_work_keys,
)
from omni_web.pipeline import ConvertProgress, ConvertRequest, ConvertResult
from omni_web.qa import QaReport

__all__ = ["BookFolder", "Survey", "survey"]

_ALL_JOBS = 1_000_000


@dataclass(slots=True)
class BookFolder:
    """One book's work folder and what the jobs of the book say about it."""

    path: Path
    title: str = ""
    versions: list[ChapterVersion] = field(default_factory=list)
    manifests: list[BookManifest] = field(default_factory=list)
    current: set[str] = field(default_factory=set)  # version bases a finished book uses
    chunk_keys: set[str] = field(default_factory=set)  # chunks its finished books were built from
    work_keys: frozenset[str] = frozenset()  # chunks of the book its newest run makes (finished or not)
    flagged: set[str] = field(default_factory=set)  # chunks its QA report still asks a person about
    books: set[Path] = field(default_factory=set)  # finished books (m4b or MP3 folder) on disk
    book_paths: set[Path] = field(default_factory=set)  # the source books its jobs read
    busy: bool = False  # a queued or running job works on this book

    @property
    def finished(self) -> bool:
        """A finished book of it is on disk and no job works on it."""
        return bool(self.books) and not self.busy

    @property
    def superseded(self) -> list[ChapterVersion]:
        """Versions no finished book uses (only known once a finished book says what it uses)."""
        if not self.current:
            return []
        return [v for v in self.versions if v.base not in self.current]


@dataclass(frozen=True, slots=True)
class Survey:
    """The book folders of every job's output root, and the jobs still to run."""

    folders: tuple[BookFolder, ...]
    busy_keys: frozenset[str]  # chunks of busy books' manifests: kept whatever else says
    job_book_digests: frozenset[str]  # sha256 of every book file a job refers to (converted-book cache)


def survey(store: JobStore, parts_roots: Iterable[Path]) -> Survey:
    """Read the jobs and the work folders under each ``<output>/.parts`` in ``parts_roots``."""
    listed = store.list(limit=_ALL_JOBS)
    requests = {job.id: ConvertRequest.read(job.params) for job in listed}
    jobs = [
        job for job in listed if requests[job.id].book_path.parts
    ]  # a job that names no book has no folder
    folders: dict[Path, BookFolder] = {}
    for root in parts_roots:
        if root.is_dir():
            for path in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
                folders[path] = _folder(path)
    busy_books = {_resolved(requests[job.id].book_path) for job in jobs if not job.state.finished}
    # The same book uploaded twice has two paths but one content (and one work folder).
    busy_digests = {d for d in (_digest(p) for p in busy_books) if d}
    seen_books: set[str] = set()  # jobs come newest first: the newest finished job of each book counts
    for job in jobs:
        folder = _job_folder(job)
        if folder is None:
            continue
        entry = folders.get(folder)
        if entry is None:  # a folder outside the output roots (a job's own output folder that moved)
            entry = folders[folder] = _folder(folder)
        entry.book_paths.add(_resolved(requests[job.id].book_path))
        if not job.state.finished:
            entry.busy = True
        elif job.state is JobState.DONE:
            result = ConvertResult.from_dict(job.result)
            book = str(result.m4b or result.mp3_dir or job.id)
            _read_result(entry, result, newest=book not in seen_books)
            seen_books.add(book)
    for entry in folders.values():
        entry.busy = (
            entry.busy
            or bool(entry.book_paths & busy_books)
            or any(_digest(p) in busy_digests for p in entry.book_paths)
        )
        if entry.busy:  # a book in work: its chunks are its own (kept) long before its manifest exists
            entry.chunk_keys |= entry.work_keys
        for manifest in entry.manifests:
            entry.current |= manifest.versions
            entry.chunk_keys |= manifest.chunk_keys
            if Path(manifest.book).exists():
                entry.books.add(Path(manifest.book))
    busy_keys = frozenset().union(*(e.chunk_keys for e in folders.values() if e.busy))
    digests = frozenset(
        d for d in (_digest(p) for p in {_resolved(requests[j.id].book_path) for j in jobs}) if d
    )
    return Survey(tuple(folders.values()), busy_keys, digests)


def _folder(path: Path) -> BookFolder:
    title = path.name.rpartition("-")[0] or path.name
    return BookFolder(path, title=title, versions=chapter_versions(path), manifests=read_manifests(path),
                      work_keys=read_work_keys(path))


def _resolved(raw: object) -> Path:
    return Path(str(raw)).expanduser().resolve()


def _job_folder(job: Job) -> Path | None:
    """The work folder a job's chapter files sit in (from its result, else its progress)."""
    paths = [c.path for c in ConvertResult.from_dict(job.result).chapters]
    paths += [c.audio_path for c in ConvertProgress.from_dict(job.progress).chapters if c.audio_path]
    return paths[0].parent.resolve() if paths else None  # the folders found on disk are resolved too


def _read_result(entry: BookFolder, result: ConvertResult, *, newest: bool) -> None:
    """A finished job: the chapter versions and chunks its book was built from, and the book.

    Only the ``newest`` job of a book says which versions it uses now (an older job of the same
    book names versions a rebuild replaced); a manifest of the book says it better still."""
    book = result.m4b or result.mp3_dir
    if book and any(m.book == str(book) for m in entry.manifests):
        newest = False
    for chapter in result.chapters if newest else ():
        entry.current.add(chapter.path.name.rpartition(".")[0])
    for path in (result.m4b, result.mp3_dir):
        if path and path.exists():
            entry.books.add(path)
    if result.qa_report:
        keys, flagged = _report_keys(str(result.qa_report))
        entry.chunk_keys |= keys
        entry.flagged |= flagged


def _report_keys(path: str) -> tuple[set[str], set[str]]:
    """Every chunk key of a QA report, and the ones still flagged there."""
    try:
        report = QaReport.read(Path(path))
    except ValueError:
        return set(), set()
    return report.keys, report.flagged_keys


def _digest(path: Path) -> str | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return _file_sha256(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=512)
def _file_sha256(path: str, _size: int, _mtime_ns: int) -> str | None:
    """A book file's SHA-256 (the converted-book cache's names), once per file version."""
    try:
        return file_sha256(Path(path))
    except OSError:
        return None
