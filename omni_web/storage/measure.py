"""What the data root and the output folder hold, by kind: chunk cache, chapter versions (in use
and superseded), finished books, their MP3/ACX copies, read-along and subtitle files, converted
books, logs, voices, the backend venv."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from omni_web.backend.disk import format_bytes
from omni_web.paths import DataPaths
from omni_web.storage.survey import BookFolder, Survey

__all__ = ["BookUsage", "KindUsage", "StorageReport", "measure", "tree_size"]

PARTS = ".parts"
_COPY_TREES = {"mp3": "mp3", "MP3": "mp3", "acx": "acx"}
_READALONG_SUFFIXES = (".readalong.epub", ".vtt", ".srt", ".lrc")
_BOOK_SUFFIXES = (".m4b", ".mp3", ".m4a")


@dataclass(frozen=True, slots=True)
class KindUsage:
    """The bytes one kind of file takes, and where."""

    kind: str
    label: str
    size_bytes: int
    files: int
    where: str = ""

    @property
    def size_str(self) -> str:
        """``4.4 GB``."""
        return format_bytes(self.size_bytes)


@dataclass(frozen=True, slots=True)
class BookUsage:
    """One book's work folder: its chunks in the cache and its chapter versions."""

    title: str
    folder: Path
    chunk_bytes: int
    chunks: int
    current_bytes: int
    superseded_bytes: int
    finished: bool
    busy: bool


@dataclass(frozen=True, slots=True)
class StorageReport:
    """The data root and the output folder, measured."""

    root: Path
    output_root: Path
    kinds: tuple[KindUsage, ...]
    books: tuple[BookUsage, ...]

    @property
    def total_bytes(self) -> int:
        """Everything measured."""
        return sum(k.size_bytes for k in self.kinds)

    def size_of(self, kind: str) -> int:
        """The bytes of ``kind`` (0 when it is not there)."""
        return sum(k.size_bytes for k in self.kinds if k.kind == kind)


def tree_size(folder: Path) -> tuple[int, int]:
    """Bytes and number of files under ``folder`` (0, 0 when it is missing)."""
    size = count = 0
    for path in _files(folder):
        try:
            size += path.stat().st_size
            count += 1
        except OSError:
            continue
    return size, count


def _files(folder: Path) -> Iterator[Path]:
    for top, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(top) / name


def measure(paths: DataPaths, output_root: Path, found: Survey) -> StorageReport:
    """Measure every kind (the survey says which chunks and versions belong to which book)."""
    kinds: list[KindUsage] = []
    state = paths.state_dir
    kinds += _chunk_kinds(paths.chunk_cache_dir, found)
    kinds += _parts_kinds(output_root / PARTS, found)
    kinds += _output_kinds(output_root)
    for kind, label, folder in (
        ("converted", "Converted books (Kindle → EPUB)", state / "converted"),
        ("uploads", "Uploaded books", state / "books"),
        ("logs", "Logs", paths.logs_dir),
        ("voices", "Voices and reference clips", paths.voices_dir),
        ("references", "Prepared reference clips and transcripts", state / "references"),
        ("backend", "Backend venv and interpreters", paths.envs_dir),
        ("app_cache", "Upload cache (Gradio)", paths.gradio_temp_dir),
    ):
        size, count = tree_size(folder)
        if kind == "references":
            more, extra = tree_size(state / "transcripts")
            size, count = size + more, count + extra
        kinds.append(KindUsage(kind, label, size, count, str(folder)))
    books = tuple(_book_usage(entry, paths.chunk_cache_dir) for entry in found.folders)
    return StorageReport(paths.root, output_root, tuple(kinds), books)


def _chunk_kinds(cache: Path, found: Survey) -> list[KindUsage]:
    """The chunk cache: audio of finished books, of books in work, audio no finished book accounts
    for (cancelled or failed jobs, books made before manifests with QA off), and QA/word records."""
    finished = set().union(*(e.chunk_keys for e in found.folders if e.finished)) - found.busy_keys
    totals = {name: [0, 0] for name in ("chunks_finished", "chunks_busy", "chunks_untracked",
                                        "chunk_records")}
    for path in _files(cache):
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if path.parent != cache or path.suffix != ".wav":
            kind = "chunk_records"
        elif path.stem in finished:
            kind = "chunks_finished"
        else:
            kind = "chunks_busy" if path.stem in found.busy_keys else "chunks_untracked"
        totals[kind][0] += size
        totals[kind][1] += 1
    labels = {
        "chunks_finished": "Chunk cache: finished books",
        "chunks_busy": "Chunk cache: books in work",
        "chunks_untracked": "Chunk cache: not tied to a finished book",
        "chunk_records": "Chunk cache: QA records and word timings",
    }
    return [KindUsage(k, labels[k], size, count, str(cache)) for k, (size, count) in totals.items()]


def _parts_kinds(parts: Path, found: Survey) -> list[KindUsage]:
    """Chapter versions in use, superseded, and the rest of the work folders (cover, edits, scratch)."""
    superseded = {p for e in found.folders if not e.busy for v in e.superseded for p in v.files}
    sup_size = sup_count = rest_size = rest_count = 0
    for path in _files(parts):
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if path in superseded:
            sup_size, sup_count = sup_size + size, sup_count + 1
        else:
            rest_size, rest_count = rest_size + size, rest_count + 1
    return [
        KindUsage(
            "versions_current", "Chapter versions in use (and work files)", rest_size, rest_count, str(parts)
        ),
        KindUsage("versions_superseded", "Chapter versions superseded", sup_size, sup_count, str(parts)),
    ]


def _output_kinds(output_root: Path) -> list[KindUsage]:
    """Finished books, their MP3 and ACX copies, read-along/subtitle files, sidecars."""
    totals = {name: [0, 0] for name in ("books", "mp3", "acx", "readalong", "sidecars", "hidden")}
    if output_root.is_dir():
        for top in output_root.iterdir():
            if top.name == PARTS or top.name.startswith("."):
                continue
            copy = _COPY_TREES.get(top.name) if top.is_dir() else None
            for path in [top] if top.is_file() else _files(top):
                try:
                    size = path.stat().st_size
                except OSError:
                    continue
                hidden = any(part.startswith(".") for part in path.relative_to(output_root).parts[:-1])
                kind = "hidden" if hidden else (copy or _output_kind(path.name))
                totals[kind][0] += size
                totals[kind][1] += 1
    labels = {
        "books": "Finished books",
        "mp3": "MP3 chapter copies",
        "acx": "ACX sets",
        "readalong": "Read-along books and subtitles",
        "sidecars": "Book sidecars (reports, metadata, covers)",
        "hidden": "Download zips and scratch files (hidden folders beside the books)",
    }
    return [KindUsage(k, labels[k], size, count, str(output_root)) for k, (size, count) in totals.items()]


def _output_kind(name: str) -> str:
    lower = name.lower()
    if lower.endswith(_READALONG_SUFFIXES):
        return "readalong"
    if lower.endswith(_BOOK_SUFFIXES):
        return "books"
    return "sidecars"


def _book_usage(entry: BookFolder, cache: Path) -> BookUsage:
    chunk_bytes = chunks = 0
    for key in entry.chunk_keys | entry.work_keys:  # a cancelled run's chunks are still its book's
        try:
            chunk_bytes += (cache / f"{key}.wav").stat().st_size
            chunks += 1
        except OSError:
            continue
    superseded = {v.base for v in entry.superseded}
    return BookUsage(
        title=entry.title,
        folder=entry.path,
        chunk_bytes=chunk_bytes,
        chunks=chunks,
        current_bytes=sum(v.size_bytes for v in entry.versions if v.base not in superseded),
        superseded_bytes=sum(v.size_bytes for v in entry.versions if v.base in superseded),
        finished=entry.finished,
        busy=entry.busy,
    )
