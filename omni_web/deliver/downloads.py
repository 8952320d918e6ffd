"""A finished book's files as downloads: its MP3s as one zip, made on demand, and one zip of all.

The MP3 zip is cut from the book's own m4b (its mastered audio and chapter marks), one tagged
MP3 per chapter (``omni_web/assemble/mp3.py``), unless the job already exported MP3s, which are
zipped as they are. It is cached in a hidden ``.downloads`` folder beside the book, named after
the m4b's size and time, so a second click is instant and a rebuilt book gets a fresh zip. The
"everything" zip (m4b, MP3s, read-along EPUB, subtitles, cover) is streamed as it is read, never
written to disk: a 600 MB book needs no 600 MB copy. Audio is stored, not deflated (it is
already compressed). Pure apart from the files it reads and the cache it writes; the routes
that serve these live in ``omni_web/ui/downloads.py``.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import logging
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from omni_web.assemble.ffmpeg import probe_tags
from omni_web.assemble.mp3 import split_book_to_mp3
from omni_web.assemble.records import AudiobookTags
from omni_web.assemble.workspace import work_dir
from omni_web.errors import OmniWebError, OutputNotWritable
from omni_web.files import atomic_path, locked, write_error

__all__ = [
    "CACHE_DIR",
    "BookDownloads",
    "ZipMember",
    "book_downloads",
    "book_tags",
    "cached_downloads",
    "everything_members",
    "mp3_zip",
    "stream_zip",
]

CACHE_DIR = ".downloads"
_COVERS = (".jpg", ".jpeg", ".png", ".webp")
_BLOCK_BYTES = 1 << 20

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BookDownloads:
    """One finished book's files that a listener can download (only files that exist)."""

    book: Path
    readalong: Path | None = None
    subtitles: tuple[Path, ...] = ()
    mp3_dir: Path | None = None
    cover: Path | None = None

    @property
    def stem(self) -> str:
        """The book's name as its files carry it (``Two Voices``)."""
        return self.book.stem

    @property
    def mp3_zip_name(self) -> str:
        """The MP3 zip's file name as the browser saves it."""
        return f"{self.stem} - MP3.zip"

    @property
    def everything_name(self) -> str:
        """The name of the zip of all the book's files."""
        return f"{self.stem} - all files.zip"

    def subtitle_name(self, path: Path) -> str:
        """A subtitle file by its chapter (``01 - The Switch.vtt``), without the book's name."""
        return path.name.removeprefix(f"{self.stem} - ")

    def exported_mp3s(self) -> list[Path]:
        """The MP3s the job itself exported (the "also MP3" setting), in play order."""
        folder = self.mp3_dir
        return sorted(folder.glob("*.mp3")) if folder is not None and folder.is_dir() else []

    def cached_zip(self) -> Path:
        """Where this version of the book's MP3 zip is cached (named after the m4b's size and time)."""
        stat = self.book.stat()
        key = hashlib.sha256(f"{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
        return self.book.parent / CACHE_DIR / f"{self.stem} - MP3.{key}.zip"


def _own_subtitles(folder: Path, stem: str) -> list[Path]:
    pattern = f"{glob.escape(stem)} - *"
    found = [p for ext in (".vtt", ".srt") for p in folder.glob(pattern + ext)] if folder.is_dir() else []
    return sorted(found, key=lambda p: (p.suffix != ".vtt", p.name))


def book_downloads(
    book: Path, *, readalong: Path | None = None, mp3_dir: Path | None = None
) -> BookDownloads:
    """The downloads of the book file ``book`` (its m4b): the read-along EPUB, the subtitles named
    after the book beside it, the MP3s a job exported into ``mp3_dir``, the folder's cover."""
    book = Path(book)
    folder = book.parent
    epub = Path(readalong) if readalong is not None else folder / f"{book.stem}.readalong.epub"
    cover = next((p for p in sorted(folder.glob("cover.*")) if p.suffix.lower() in _COVERS), None)
    mp3s = Path(mp3_dir) if mp3_dir is not None and Path(mp3_dir).is_dir() else None
    return BookDownloads(
        book=book,
        readalong=epub if epub.is_file() else None,
        subtitles=tuple(_own_subtitles(epub.parent, book.stem)),
        mp3_dir=mp3s,
        cover=cover,
    )


def cached_downloads(book: Path) -> list[Path]:
    """Every cached download of ``book`` (any version), for deleting with it."""
    folder = Path(book).parent / CACHE_DIR
    return sorted(folder.glob(f"{glob.escape(Path(book).stem)} - MP3.*.zip")) if folder.is_dir() else []


def book_tags(book: Path) -> AudiobookTags:
    """The book's own tags, read back from its m4b (title, author, narrator, year, genre…)."""
    tags = probe_tags(book)
    date = tags.get("date", "")[:4]
    return AudiobookTags(
        title=tags.get("album") or tags.get("title") or Path(book).stem,
        author=tags.get("artist") or tags.get("album_artist", ""),
        narrator=tags.get("composer", ""),
        year=int(date) if date.isdigit() else None,
        genre=tags.get("genre") or "Audiobook",
        description=tags.get("description") or tags.get("comment", ""),
    )


def _zip_files(target: Path, members: Sequence[tuple[str, Path]]) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, path in members:
            archive.write(path, name)


def mp3_zip(downloads: BookDownloads) -> Path:
    """The book's MP3s as one zip (``NN - Chapter title.mp3`` and ``cover.jpg``), built on the first
    call and cached beside the book; two callers at once build it once.

    Raises:
        DiskFullError: the disk holding the book is full (the message says what to do).
        FfmpegError: the book cannot be read or cut.
        OutputNotWritable: the book's folder cannot take the cache.
    """
    target = downloads.cached_zip()
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target):
            if target.is_file():  # built by another caller while this one waited
                return target
            for old in cached_downloads(downloads.book):  # an earlier version of the book
                old.unlink(missing_ok=True)
            _build_mp3_zip(downloads, target)
    except OmniWebError:
        raise  # already says what happened (a full disk among them: DiskFullError is an OSError)
    except OSError as exc:
        raise _cache_error(exc, target.parent) from exc
    return target


def _build_mp3_zip(downloads: BookDownloads, target: Path) -> None:
    exported = downloads.exported_mp3s()
    with work_dir(target) as scratch:
        if exported:
            members = [(p.name, p) for p in exported]
            cover = downloads.mp3_dir / "cover.jpg" if downloads.mp3_dir is not None else None
        else:
            files = split_book_to_mp3(
                downloads.book, scratch, tags=book_tags(downloads.book), cover=downloads.cover
            )
            members = [(p.name, p) for p in files]
            cover = scratch / "cover.jpg"
        if cover is not None and cover.is_file():
            members.append(("cover.jpg", cover))
        with atomic_path(target) as staged:
            _zip_files(staged, members)
    log.info("Made the MP3 zip of %s (%d files)", downloads.book, len(members))


def _cache_error(exc: OSError, folder: Path) -> OmniWebError:
    return write_error(
        exc,
        full=f"The disk holding {folder} is full, so the MP3 zip could not be made. Free some space "
        "(the Storage screen shows what can go), then click again.",
        other=lambda reason: OutputNotWritable(
            f"Cannot write the MP3 zip into {folder}: {reason}. "
            "Check the output folder's permissions in Settings."
        ),
    )


@dataclass(frozen=True, slots=True)
class ZipMember:
    """One entry of a streamed zip: ``name`` in the zip, read from ``path`` or, with ``inner``,
    from the member of that name inside the zip file ``path``."""

    name: str
    path: Path
    inner: str | None = None


def everything_members(downloads: BookDownloads) -> list[ZipMember]:
    """The zip of all: the m4b, the MP3s under ``MP3/`` (their zip is made first if needed), the
    read-along EPUB, the subtitles under ``Subtitles/`` and the cover."""
    members = [ZipMember(downloads.book.name, downloads.book)]
    mp3s = mp3_zip(downloads)
    with zipfile.ZipFile(mp3s) as archive:
        members += [
            ZipMember(f"MP3/{name}", mp3s, name) for name in archive.namelist() if name.endswith(".mp3")
        ]
    if downloads.readalong is not None:
        members.append(ZipMember(downloads.readalong.name, downloads.readalong))
    members += [ZipMember(f"Subtitles/{downloads.subtitle_name(p)}", p) for p in downloads.subtitles]
    if downloads.cover is not None:
        members.append(ZipMember(f"cover{downloads.cover.suffix.lower()}", downloads.cover))
    return members


class _Spool(io.RawIOBase):
    """A write-only sink the zip writer fills and the response drains (not seekable, so
    ``zipfile`` writes data descriptors instead of seeking back)."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # noqa: ANN001 - a buffer of any kind
        self._parts.append(bytes(data))
        return len(data)

    def drain(self) -> bytes:
        out, self._parts = b"".join(self._parts), []
        return out


@contextlib.contextmanager
def _opened(member: ZipMember) -> Iterator[tuple[zipfile.ZipInfo, BinaryIO]]:
    if member.inner is None:
        with member.path.open("rb") as source:
            yield zipfile.ZipInfo.from_file(member.path, member.name), source
        return
    with zipfile.ZipFile(member.path) as archive, archive.open(member.inner) as source:
        info = zipfile.ZipInfo(member.name, archive.getinfo(member.inner).date_time)
        yield info, source


def stream_zip(members: Sequence[ZipMember]) -> Iterator[bytes]:
    """The zip of ``members`` as a stream of blocks (flat memory, nothing written to disk)."""
    spool = _Spool()
    with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for member in members:
            with _opened(member) as (info, source), archive.open(info, "w", force_zip64=True) as sink:
                while block := source.read(_BLOCK_BYTES):
                    sink.write(block)
                    yield spool.drain()
            yield spool.drain()
    yield spool.drain()
