"""The m4b joined while the book renders, so that after the last chapter only its own frames remain.

A stream-copy join touches every AAC frame (1.7 million for 20 hours: seconds of CPU, more on a
busy machine), so doing it after the last chunk makes the wait grow with the book. Instead one
ffmpeg is started with the book's first chapter and reads ADTS on stdin; each chapter's frames
are piped in, in reading order, as soon as it is mastered. When the last one is in, ffmpeg only
muxes that chapter and writes the index, and the real chapter marks (known only now) replace the
placeholders it was started with (:mod:`omni_web.assemble.mp4marks`). The result is checked with
ffprobe; anything unexpected raises :class:`LiveJoinFailed` and the caller joins the normal way.

Trade-off: the index (``moov``) ends up after the audio. Moving it to the front
(``+faststart``) would rewrite the whole file (586 MB for 20 hours) after the last chunk, which is
what this avoids. Local players (Apple Books, BookPlayer, Smart AudioBook Player, VLC, mpv) read
it wherever it is, and browsers ask for the end with a range request before playing; only a
player streaming over plain HTTP without ranges would have to download the book first.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from omni_web.assemble.ffmpeg import FfmpegPipe, path_arg, probe, probe_chapters, probe_duration_us
from omni_web.assemble.join import EncodedChapter, join_args, join_marks
from omni_web.assemble.metadata import ChapterMark, clean_chapter_title
from omni_web.assemble.mp4marks import MarksNotPatchable, patch_chapter_marks, placeholder_marks
from omni_web.assemble.mp4tags import set_identifier_tags
from omni_web.assemble.records import AudiobookTags
from omni_web.assemble.workspace import check_free_space, ensure_dir, publish, translate_os_error
from omni_web.errors import FfmpegError

__all__ = ["LiveJoin", "LiveJoinFailed"]

log = logging.getLogger(__name__)

_BLOCK = 1 << 20
_MARK_SLACK_MS = 1
_PREFIX = ".live-join."
# A live join's folder untouched this long belongs to a run that died (a live join writes
# whenever a chapter is mastered); it can hold most of a book, so it is removed.
_STALE_S = 12 * 3600


class LiveJoinFailed(Exception):
    """The live join could not produce a correct m4b (the reason is the message); join again."""


class LiveJoin:
    """One book's m4b, joined chapter by chapter as :meth:`add` hands them in.

    ``chapters`` are the book's (index, title) pairs in reading order; ``folder`` takes the
    scratch files (the book's work folder). Use :meth:`finish` once every chapter is added, or
    :meth:`abort`.
    """

    def __init__(
        self,
        chapters: Sequence[tuple[int, str]],
        folder: Path,
        *,
        tags: AudiobookTags,
        cover: Path | None,
    ) -> None:
        if not chapters:
            raise ValueError("LiveJoin needs at least one chapter.")
        self._tags = tags
        self._positions = {index: position for position, (index, _title) in enumerate(chapters)}
        self._placeholders = placeholder_marks(
            [clean_chapter_title(title, index=index) for index, title in chapters]
        )
        _remove_stale(ensure_dir(folder))
        self._scratch = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=folder))
        self._joined = self._scratch / "book.m4b"
        self._lock = threading.Condition()
        self._ready: dict[int, EncodedChapter] = {}
        self._fed: list[EncodedChapter] = []
        self._fed_files: list[tuple[int, int, int]] = []  # inode, size, mtime of what was piped
        self._error: BaseException | None = None
        self._stopped = False
        try:
            self._pipe = self._start(tags, cover)
        except BaseException:
            shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        self._feeder = threading.Thread(target=self._feed, name="omni-live-join", daemon=True)
        self._feeder.start()

    def _start(self, tags: AudiobookTags, cover: Path | None) -> FfmpegPipe:
        args = join_args(["-f", "aac", "-i", "pipe:0"], self._scratch, tags=tags, cover=cover,
                         marks=self._placeholders)
        args += ["-f", "ipod", path_arg(self._joined)]  # the index at the end: see the module's note
        return FfmpegPipe(args, action="Joining the audiobook", output_dir=self._scratch, cwd=self._scratch)

    def add(self, chapter: EncodedChapter) -> None:
        """A chapter's final AAC exists (any order; it is piped in once those before it are)."""
        with self._lock:
            position = self._positions.get(chapter.index)
            if position is None:
                return
            if position < len(self._fed) and self._fed[position] != chapter:
                # Mastered again after its frames went in (a replaced take): this join is stale.
                self._error = self._error or LiveJoinFailed(
                    f"chapter {chapter.index} changed after it was joined"
                )
            self._ready[position] = chapter
            self._lock.notify_all()

    def _feed(self) -> None:
        try:
            for position in range(len(self._placeholders)):
                with self._lock:
                    while position not in self._ready and not self._stopped:
                        self._lock.wait()
                    if self._stopped:
                        return
                    chapter = self._ready[position]
                    self._fed.append(chapter)
                with open(chapter.adts, "rb") as source:
                    self._fed_files.append(_identity(os.fstat(source.fileno())))
                    while block := source.read(_BLOCK):
                        self._pipe.write(block)
        except BaseException as exc:  # reported by finish()
            with self._lock:
                self._error = self._error or exc

    def finish(self, chapters: Sequence[EncodedChapter], out_path: Path) -> Path:
        """Write the m4b at ``out_path`` from ``chapters`` (the book's, in order, all added).

        Raises:
            LiveJoinFailed: the live join does not hold exactly these chapters, or its file did not
                come out right (nothing is written at ``out_path``; join the normal way).
            DiskFullError, OutputNotWritable: the output folder cannot take the file.
        """
        try:
            for chapter in chapters:
                self.add(chapter)
            self._feeder.join()
            with self._lock:
                error = self._error
                fed = list(self._fed)
            if error is not None:
                raise LiveJoinFailed(f"feeding the join failed: {error}") from error
            if fed != list(chapters) or self._fed_files != [_identity(os.stat(c.adts)) for c in chapters]:
                # A chapter file replaced in place after it was piped in keeps its name: its
                # identity on disk tells.
                raise LiveJoinFailed("the chapters joined are not the book's final chapters")
            started = time.perf_counter()
            try:
                self._pipe.finish()
            except FfmpegError as exc:
                raise LiveJoinFailed(str(exc)) from exc
            written = time.perf_counter()
            marks = join_marks(chapters)
            if [m.title for m in marks] != [m.title for m in self._placeholders]:
                raise LiveJoinFailed("the chapter titles changed since the join started")
            try:
                patch_chapter_marks(self._joined, self._placeholders, marks)
            except MarksNotPatchable as exc:
                raise LiveJoinFailed(f"the chapter marks could not be set: {exc}") from exc
            try:
                set_identifier_tags(self._joined, self._tags)
            except FfmpegError as exc:
                raise LiveJoinFailed(str(exc)) from exc
            patched = time.perf_counter()
            self._verify(marks)
            log.info("Live join: index written in %.2f s, marks set in %.2f s, checked in %.2f s",
                     written - started, patched - written, time.perf_counter() - patched)
            return _move(self._joined, Path(out_path))
        finally:
            self.abort()

    def _verify(self, marks: Sequence[ChapterMark]) -> None:
        info = probe(self._joined)
        read = probe_chapters(self._joined, info)
        ok = len(read) == len(marks) and all(
            abs(r.start_ms - m.start_ms) <= _MARK_SLACK_MS and abs(r.end_ms - m.end_ms) <= _MARK_SLACK_MS
            for r, m in zip(read, marks, strict=True)
        )
        if not ok or abs(probe_duration_us(self._joined, info) / 1000 - marks[-1].end_ms) > 50:
            raise LiveJoinFailed("the joined book's chapter marks read back wrong")

    def abort(self) -> None:
        """Stop feeding, kill ffmpeg, remove the scratch files (safe to call twice)."""
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        self._pipe.abort()
        if threading.current_thread() is not self._feeder:
            self._feeder.join(timeout=30)
        shutil.rmtree(self._scratch, ignore_errors=True)


def _identity(stat: os.stat_result) -> tuple[int, int, int]:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _remove_stale(folder: Path) -> None:
    now = time.time()
    for scratch in folder.glob(f"{_PREFIX}*"):
        try:
            newest = max((p.stat().st_mtime for p in scratch.iterdir()), default=scratch.stat().st_mtime)
        except OSError:
            continue
        if now - newest > _STALE_S:
            shutil.rmtree(scratch, ignore_errors=True)


def _move(done: Path, final_path: Path) -> Path:
    """Publish onto ``final_path``; across file systems, copied beside it first (still atomic)."""
    ensure_dir(final_path.parent)
    if os.stat(done).st_dev == os.stat(final_path.parent).st_dev:
        return publish(done, final_path)
    check_free_space(final_path.parent, os.stat(done).st_size)
    tmp = final_path.with_name(f".{final_path.name}.copy")
    try:
        shutil.copyfile(done, tmp)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise translate_os_error(exc, final_path.parent) from exc
    return publish(tmp, final_path)
