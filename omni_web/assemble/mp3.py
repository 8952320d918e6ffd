"""Per-chapter MP3 export in the folder layout Audiobookshelf scans: ``<Author>/<Title>/``.

Each chapter becomes ``NN - <Chapter title>.mp3`` with ID3v2.3 tags (title, album, artist,
album artist, composer = narrator, track N/total, genre, year, publisher, language, comment) and
the cover as an APIC front-cover frame; ``cover.jpg`` sits beside them (Audiobookshelf uses it).
ID3v2.3 rather than 2.4 because Windows Explorer and many car stereos read only 2.3; ffmpeg
writes its text frames as UTF-16, so Arabic titles survive.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from omni_web.assemble.cover import prepare_cover_or_none
from omni_web.assemble.ffmpeg import path_arg, probe_chapters, probe_duration_ms, run_ffmpeg
from omni_web.assemble.filenames import safe_filename, unique_name
from omni_web.assemble.metadata import clean_chapter_title, iso639_2
from omni_web.assemble.records import AudiobookTags, ChapterAudio, ProbedChapter
from omni_web.assemble.workspace import ensure_dir, publish, work_dir
from omni_web.errors import FfmpegError

__all__ = ["book_folder", "export_mp3_chapters", "mp3_file_names", "split_book_to_mp3"]

log = logging.getLogger(__name__)

_MP3_KBPS = (32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 192, 224, 256, 320)


def book_folder(root: Path, tags: AudiobookTags) -> Path:
    """``root/<Author>/<Title>`` with both names made safe (Audiobookshelf's ``{Author}/{Book}``)."""
    author = safe_filename(tags.author, fallback="Unknown Author")
    title = safe_filename(tags.title, fallback="Untitled")
    return Path(root) / author / title


def mp3_file_names(chapters: Sequence[ChapterAudio]) -> list[str]:
    """``NN - <title>.mp3`` per chapter, numbered 1..N in the given order, unique and safe.

    The number is zero-padded to at least two digits so names sort in play order.
    """
    width = max(2, len(str(len(chapters))))
    names: list[str] = []
    for number, chapter in enumerate(chapters, start=1):
        title = clean_chapter_title(chapter.title, index=chapter.index)
        stem = safe_filename(title, fallback=f"Chapter {chapter.index}")
        names.append(unique_name(f"{number:0{width}d} - {stem}.mp3", names))
    return names


def export_mp3_chapters(
    chapters: Sequence[ChapterAudio],
    root: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None,
    bitrate_kbps: int = 96,
    progress: Callable[[float], None] | None = None,
    folder: Path | None = None,
    copy_audio: bool = False,
) -> list[Path]:
    """Encode every chapter file to a tagged MP3 under ``root/<Author>/<Title>/`` (or ``folder``).

    Files are written atomically one by one (an existing file of the same name is replaced when
    its new version is complete); other files in the folder are left alone. An unreadable cover
    is logged and left out.

    Args:
        chapters: rendered chapter files in book order.
        root: the library folder (e.g. an Audiobookshelf library root).
        tags: book tags.
        cover: an image file or None.
        bitrate_kbps: constant MP3 bitrate (96 suits speech; at 24 kHz MPEG-2 allows up to 160).
        progress: called with the fraction of chapters done.
        folder: the folder to write to instead of ``root/<Author>/<Title>`` (a job's own copy).
        copy_audio: the chapter files are already MP3 (mastered and encoded while the book
            rendered): copy their audio and only add tags and cover.

    Returns:
        The MP3 paths in chapter order.

    Raises:
        ValueError: no chapters or an invalid bitrate.
        FfmpegError: a chapter file is missing or unreadable (named), or ffmpeg failed.
        DiskFullError, OutputNotWritable: the folder cannot take the files.
    """
    if not chapters:
        raise ValueError("export_mp3_chapters needs at least one chapter.")
    if bitrate_kbps not in _MP3_KBPS:
        raise ValueError(f"bitrate_kbps must be one of {_MP3_KBPS}, got {bitrate_kbps}")
    folder = ensure_dir(Path(folder) if folder is not None else book_folder(root, tags))
    cover_jpg = prepare_cover_or_none(cover, folder / "cover.jpg", purpose="Exporting MP3 files")
    names = mp3_file_names(chapters)
    return _encode_all(chapters, names, folder, tags=tags, cover_jpg=cover_jpg, kbps=bitrate_kbps,
                       progress=progress, copy_audio=copy_audio)


def split_book_to_mp3(
    book: Path,
    folder: Path,
    *,
    tags: AudiobookTags,
    cover: Path | None,
    bitrate_kbps: int = 96,
) -> list[Path]:
    """One tagged MP3 per chapter mark of a finished book file (m4b), cut from its mastered audio.

    The same names and tags as :func:`export_mp3_chapters` (``NN - <title>.mp3``, track N/total);
    nothing is rendered or mastered again. A book without chapter marks becomes one MP3.

    Raises:
        FfmpegError: the book is missing or unreadable, or ffmpeg failed.
        DiskFullError, OutputNotWritable: ``folder`` cannot take the files.
    """
    marks = probe_chapters(book) or [ProbedChapter(tags.title, 0, probe_duration_ms(book))]
    chapters = [ChapterAudio(index=number, title=mark.title, path=Path(book), duration_ms=mark.duration_ms)
                for number, mark in enumerate(marks, start=1)]
    folder = ensure_dir(Path(folder))
    cover_jpg = prepare_cover_or_none(cover, folder / "cover.jpg", purpose="Making the MP3 files")
    cuts = [(mark.start_ms, mark.end_ms) for mark in marks]
    return _encode_all(chapters, mp3_file_names(chapters), folder, tags=tags, cover_jpg=cover_jpg,
                       kbps=bitrate_kbps, cuts=cuts)


def _encode_all(
    chapters: Sequence[ChapterAudio],
    names: Sequence[str],
    folder: Path,
    *,
    tags: AudiobookTags,
    cover_jpg: Path | None,
    kbps: int,
    progress: Callable[[float], None] | None = None,
    copy_audio: bool = False,
    cuts: Sequence[tuple[int, int]] | None = None,
) -> list[Path]:
    """Encode (or, with ``copy_audio``, tag) each chapter into ``folder``; ``cuts`` are the
    ``(start_ms, end_ms)`` of each chapter inside one shared input file."""
    paths: list[Path] = []
    for number, (chapter, name) in enumerate(zip(chapters, names, strict=True), start=1):
        if not Path(chapter.path).is_file():
            raise FfmpegError(
                f"Chapter {chapter.index} '{chapter.title}' has no audio file at {chapter.path}. "
                "Render the chapter again, then export."
            )
        final = folder / name
        with work_dir(final) as scratch:
            encoded = scratch / "chapter.mp3"
            args = _mp3_args(chapter, number, len(chapters), tags, cover_jpg, kbps, encoded)
            if cuts is not None:
                start_ms, end_ms = cuts[number - 1]
                # Input options: seek and stop in the book before decoding (AAC frames all decode alone).
                args[:0] = ["-ss", f"{start_ms / 1000:.3f}", "-t", f"{max(1, end_ms - start_ms) / 1000:.3f}"]
            if copy_audio:
                args[args.index("libmp3lame") : args.index("libmp3lame") + 3] = ["copy"]
            run_ffmpeg(args, action=f"Encoding {name}", output_dir=folder)
            paths.append(publish(encoded, final))
        if progress is not None:
            progress(number / len(chapters))
    return paths


def _mp3_args(
    chapter: ChapterAudio,
    number: int,
    total: int,
    tags: AudiobookTags,
    cover_jpg: Path | None,
    kbps: int,
    encoded: Path,
) -> list[str]:
    args = ["-i", path_arg(chapter.path)]
    if cover_jpg is not None:
        args += ["-i", path_arg(cover_jpg)]
    args += ["-map", "0:a:0", "-map_metadata", "-1", "-map_chapters", "-1", "-c:a", "libmp3lame", "-b:a",
             f"{kbps}k"]
    if cover_jpg is not None:
        args += [
            "-map",
            "1:v:0",
            "-c:v",
            "copy",
            "-disposition:v:0",
            "attached_pic",
            "-metadata:s:v:0",
            "title=Album cover",
            "-metadata:s:v:0",
            "comment=Cover (front)",
        ]
    for key, value in _id3_tags(chapter, number, total, tags):
        args += ["-metadata", f"{key}={value}"]
    args += ["-id3v2_version", "3", "-write_id3v1", "0", "-f", "mp3", path_arg(encoded)]
    return args


def _id3_tags(chapter: ChapterAudio, number: int, total: int, tags: AudiobookTags) -> list[tuple[str, str]]:
    author = tags.author.strip()
    pairs = [
        ("title", clean_chapter_title(chapter.title, index=chapter.index)),
        ("album", tags.title.strip()),
        ("artist", author),
        ("album_artist", author),
        ("composer", tags.narrator.strip()),
        ("track", f"{number}/{total}"),
        ("genre", tags.genre.strip()),
        ("date", str(tags.year) if tags.year else ""),
        ("publisher", tags.publisher.strip()),
        ("language", (iso639_2(tags.language) or "") if tags.language else ""),
        ("comment", (tags.comment or tags.description).strip()),
    ]
    return [(key, value) for key, value in pairs if value]
