"""Which mastered chapter versions in a book's work folder (``<output>/.parts/<book>``) a finished
book still uses, and the removal of the ones it no longer does.

A chapter's files are named ``<stem>.<options key>.<suffix>`` (:func:`omni_web.master.records.chapter_paths`):
a changed chunk renames the stem, a changed mastering preset the key, so a regenerate or a new
loudness setting leaves the old version beside the new one. When a book is finished, its manifest
(``<book file stem>.book.json`` in the work folder) lists the versions and chunk keys it was built
from; versions no manifest lists, of chapters the new book holds, are removed after the book is
in place, never before.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omni_web.files import write_atomic
from omni_web.master.records import ChapterSpec, MasteredChapter, MasterOptions

__all__ = [
    "MANIFEST_SUFFIX",
    "BookManifest",
    "ChapterVersion",
    "chapter_versions",
    "read_manifests",
    "read_work_keys",
    "remove_superseded",
    "version_base",
    "write_manifest",
    "write_work_keys",
]

log = logging.getLogger(__name__)

MANIFEST_SUFFIX = ".book.json"
# The chunks of the book a job is making in the folder: a long book renders for hours before its
# manifest exists, and its chunks would be no book's until then (storage showed 0 B for it).
WORK_KEYS_FILE = "in-work.chunks.json"
# "003-1a2b3c4d5e6f7a8b.321186b7ea.m4a", "credits-opening-fe8857e8aa01.c84cd1f640.mp3.levels.json"
_VERSION_FILE = re.compile(
    r"^(?P<base>(?P<chapter>\d{3}|credits-(?:opening|closing))-[0-9a-f]{12,16}\.[0-9a-f]{10})\.[a-z0-9.]+$"
)


@dataclass(frozen=True, slots=True)
class ChapterVersion:
    """One mastered version of one chapter: every file sharing its base name."""

    base: str  # "<stem>.<options key>"
    chapter: str  # "003", "credits-opening"
    files: tuple[Path, ...]
    size_bytes: int
    mtime: float  # the newest of its files

    @property
    def number(self) -> int | None:
        """The chapter's number (None for credits)."""
        return int(self.chapter) if self.chapter.isdigit() else None


@dataclass(frozen=True, slots=True)
class BookManifest:
    """What one finished book was built from (saved in its work folder)."""

    path: Path
    book: str  # the m4b (or MP3 folder) the manifest belongs to
    versions: frozenset[str]
    chunk_keys: frozenset[str]
    finished_at: float


def version_base(spec: ChapterSpec, options: MasterOptions) -> str:
    """The base name of ``spec``'s files under ``options``."""
    return f"{spec.stem}.{options.key}"


def chapter_versions(folder: Path) -> list[ChapterVersion]:
    """Every chapter version in a work folder, by base name (scratch folders and other files left out)."""
    groups: dict[str, list[Path]] = {}
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for path in entries:
        found = _VERSION_FILE.match(path.name)
        if found and path.is_file():
            groups.setdefault(found["base"], []).append(path)
    versions = []
    for base, files in sorted(groups.items()):
        stats = [p.stat() for p in files]
        chapter = _VERSION_FILE.match(files[0].name)["chapter"]  # type: ignore[index]
        versions.append(ChapterVersion(base, chapter, tuple(sorted(files)), sum(s.st_size for s in stats),
                                       max(s.st_mtime for s in stats)))
    return versions


def read_manifests(folder: Path) -> list[BookManifest]:
    """The manifests of the books built from ``folder`` (unreadable ones are skipped)."""
    found = []
    for path in sorted(folder.glob(f"*{MANIFEST_SUFFIX}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            found.append(BookManifest(path, str(data["book"]), frozenset(data["versions"]),
                                      frozenset(data.get("chunks") or ()), float(data.get("finished_at", 0))))
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("Unreadable book manifest %s", path)
    return found


def write_manifest(folder: Path, book: Path, specs: Iterable[ChapterSpec], options: MasterOptions) -> Path:
    """Record what the finished ``book`` (its m4b or MP3 folder) was built from; returns the manifest."""
    specs = list(specs)
    data = {
        "book": str(book),
        "versions": sorted(version_base(s, options) for s in specs),
        "chunks": sorted({key for s in specs for key in s.keys}),
        "finished_at": time.time(),
    }
    name = book.stem if book.suffix else book.name
    return write_atomic(folder / f"{name}{MANIFEST_SUFFIX}", json.dumps(data, indent=1))


def write_work_keys(folder: Path, specs: Iterable[ChapterSpec]) -> Path:
    """Record the chunk keys of the chapters a job is making in ``folder`` (the newest run's)."""
    return write_atomic(folder / WORK_KEYS_FILE, json.dumps(sorted({k for s in specs for k in s.keys})))


def read_work_keys(folder: Path) -> frozenset[str]:
    """The chunk keys :func:`write_work_keys` recorded in ``folder`` (none when unreadable)."""
    try:
        keys = json.loads((folder / WORK_KEYS_FILE).read_text(encoding="utf-8"))
        return frozenset(str(key) for key in keys)
    except (OSError, ValueError, TypeError):
        return frozenset()


def remove_superseded(folder: Path, records: Iterable[MasteredChapter], *, older_than: float) -> int:
    """Remove the versions of the chapters in ``records`` that no manifest in ``folder`` lists.

    Only versions last written before ``older_than`` (the run's start) go: a job of the same book
    running beside this one writes newer files, and those stay. Returns the bytes freed.
    """
    chapters = {f"{r.number:03d}" if r.in_book else _credit_name(r) for r in records}
    kept = set().union(*(m.versions for m in read_manifests(folder)))
    freed = 0
    for version in chapter_versions(folder):
        if version.chapter not in chapters or version.base in kept or version.mtime >= older_than:
            continue
        for path in version.files:
            try:
                size = path.stat().st_size
                path.unlink()
                freed += size
            except OSError:
                continue
    if freed:
        log.info("Removed superseded chapter versions in %s: %d bytes", folder, freed)
    return freed


def _credit_name(record: MasteredChapter) -> str:
    return "credits-opening" if record.number == 0 else "credits-closing"
