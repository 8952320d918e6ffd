"""Set the chapter marks of an m4b that ffmpeg wrote, in place: fixed-size fields only.

Why: the m4b is joined while the book renders (:mod:`omni_web.assemble.live_join`), before the
later chapters' lengths are known, so ffmpeg is given placeholder marks (every chapter a distinct
length, so that each gets its own entry in the tables below) and the real ones are written here
once the last chapter is in. No box changes size, nothing moves, nothing else is touched; every
value is checked against what ffmpeg wrote before it is replaced, so a file laid out differently
(another ffmpeg) is refused with :class:`MarksNotPatchable` and the caller joins the normal way.

ffmpeg (5.1, ``-f ipod``) keeps chapters in two places, and players read one or the other:

- the QuickTime chapter track (``trak`` with a ``text`` handler): one text sample per chapter,
  whose durations are its ``stts`` entries; the track's length is in ``mdhd`` (track timescale),
  ``tkhd`` and its edit list (movie timescale);
- Nero's ``moov/udta/chpl``: each chapter's start in 100 ns units.

The movie's length (``mvhd``) is the longest track's, which the real marks make the audio's.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from omni_web.assemble.metadata import ChapterMark

__all__ = ["MarksNotPatchable", "patch_chapter_marks", "placeholder_marks"]

_CHPL_UNITS_PER_MS = 10_000  # 100 ns


class MarksNotPatchable(Exception):
    """The file is not laid out as expected; it was not changed."""


def placeholder_marks(titles: Sequence[str]) -> tuple[ChapterMark, ...]:
    """Marks ffmpeg can be started with: chapter ``i`` lasts ``1000 + i`` ms (all distinct)."""
    marks, cursor = [], 0
    for index, title in enumerate(titles):
        marks.append(ChapterMark(title=title, start_ms=cursor, end_ms=cursor + 1000 + index))
        cursor += 1000 + index
    return tuple(marks)


@dataclass(frozen=True, slots=True)
class _Box:
    kind: bytes
    start: int  # offset of the box header
    body: int  # offset of the payload
    end: int

    def field(self, version_0: int, version_1: int, version: int) -> int:
        """Offset of a field that sits ``version_0`` (``version_1``) bytes into a full box's body."""
        return self.body + (version_1 if version else version_0)


def _boxes(f: BinaryIO, start: int, end: int) -> Iterator[_Box]:
    pos = start
    while pos + 8 <= end:
        f.seek(pos)
        size, kind = struct.unpack(">I4s", f.read(8))
        header = 8
        if size == 1:
            (size,) = struct.unpack(">Q", f.read(8))
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise MarksNotPatchable(f"a damaged '{kind.decode('latin-1')}' box at byte {pos}")
        yield _Box(kind, pos, pos + header, pos + size)
        pos += size


def _child(f: BinaryIO, parent: _Box, kind: bytes) -> _Box:
    for box in _boxes(f, parent.body, parent.end):
        if box.kind == kind:
            return box
    raise MarksNotPatchable(f"no '{kind.decode()}' inside '{parent.kind.decode()}'")


def _path(f: BinaryIO, parent: _Box, *kinds: bytes) -> _Box:
    box = parent
    for kind in kinds:
        box = _child(f, box, kind)
    return box


def _read(f: BinaryIO, offset: int, size: int) -> int:
    f.seek(offset)
    return int.from_bytes(f.read(size), "big")


def _version(f: BinaryIO, box: _Box) -> int:
    return _read(f, box.body, 1)


class _Writes:
    """Planned writes, checked against the file's current values; applied only when all are."""

    def __init__(self) -> None:
        self._items: list[tuple[int, int, int]] = []

    def put(self, f: BinaryIO, offset: int, size: int, value: int, *, expect: int | None = None) -> None:
        if expect is not None and _read(f, offset, size) != expect:
            raise MarksNotPatchable(f"unexpected value at byte {offset}")
        if not 0 <= value < 1 << (8 * size):
            raise MarksNotPatchable(f"{value} does not fit in {size} bytes")
        self._items.append((offset, size, value))

    def apply(self, f: BinaryIO) -> None:
        for offset, size, value in self._items:
            f.seek(offset)
            f.write(value.to_bytes(size, "big"))


def _handler(f: BinaryIO, trak: _Box) -> bytes:
    hdlr = _path(f, trak, b"mdia", b"hdlr")
    f.seek(hdlr.body + 8)  # version/flags, pre_defined
    return f.read(4)


def _duration_field(f: BinaryIO, box: _Box) -> tuple[int, int]:
    """(offset, size) of the duration in an mvhd / mdhd / tkhd box."""
    version = _version(f, box)
    if box.kind == b"tkhd":
        return (box.field(20, 28, version), 8 if version else 4)
    return (box.field(16, 24, version), 8 if version else 4)


def _timescale(f: BinaryIO, box: _Box) -> int:
    """The timescale of an mvhd / mdhd box."""
    return _read(f, box.field(12, 20, _version(f, box)), 4)


def patch_chapter_marks(
    path: Path, placeholders: Sequence[ChapterMark], marks: Sequence[ChapterMark]
) -> None:
    """Replace ``placeholders`` (what ffmpeg was given) by ``marks`` (same titles, real times).

    Raises:
        MarksNotPatchable: the file does not hold exactly the placeholders where expected; the
            file is unchanged.
        OSError: the file cannot be read or written.
    """
    if len(placeholders) != len(marks) or not marks:
        raise MarksNotPatchable("the real marks and the placeholders differ in number")
    with open(path, "r+b") as f:
        size = f.seek(0, 2)
        moov = next((b for b in _boxes(f, 0, size) if b.kind == b"moov"), None)
        if moov is None:
            raise MarksNotPatchable("no moov box")
        writes = _Writes()
        mvhd = _child(f, moov, b"mvhd")
        movie_scale = _timescale(f, mvhd)
        traks = [b for b in _boxes(f, moov.body, moov.end) if b.kind == b"trak"]
        texts = [t for t in traks if _handler(f, t) == b"text"]
        audio = [t for t in traks if _handler(f, t) == b"soun"]
        if len(texts) != 1 or len(audio) != 1:
            raise MarksNotPatchable("expected one audio track and one chapter track")
        chapter_end = _patch_chapter_track(f, writes, texts[0], movie_scale, placeholders, marks)
        audio_tkhd = _child(f, audio[0], b"tkhd")
        audio_length = _read(f, *_duration_field(f, audio_tkhd))
        offset, width = _duration_field(f, mvhd)
        writes.put(f, offset, width, max(audio_length, chapter_end))
        _patch_chpl(f, writes, moov, placeholders, marks)
        writes.apply(f)


def _patch_chapter_track(
    f: BinaryIO,
    writes: _Writes,
    trak: _Box,
    movie_scale: int,
    placeholders: Sequence[ChapterMark],
    marks: Sequence[ChapterMark],
) -> int:
    """Plan the chapter track's writes; returns its new length in the movie timescale."""
    mdhd = _path(f, trak, b"mdia", b"mdhd")
    track_scale = _timescale(f, mdhd)
    stts = _path(f, trak, b"mdia", b"minf", b"stbl", b"stts")
    count = _read(f, stts.body + 4, 4)
    if count != len(marks):
        raise MarksNotPatchable(f"the chapter track has {count} duration entries for {len(marks)} chapters")

    def ticks(ms: int, scale: int) -> int:
        return round(ms * scale / 1000)

    for index, (old, new) in enumerate(zip(placeholders, marks, strict=True)):
        entry = stts.body + 8 + 8 * index
        writes.put(f, entry, 4, 1, expect=1)
        old_span = ticks(old.end_ms, track_scale) - ticks(old.start_ms, track_scale)
        new_span = ticks(new.end_ms, track_scale) - ticks(new.start_ms, track_scale)
        writes.put(f, entry + 4, 4, new_span, expect=old_span)
    old_total, new_total = placeholders[-1].end_ms, marks[-1].end_ms
    offset, width = _duration_field(f, mdhd)
    writes.put(f, offset, width, ticks(new_total, track_scale), expect=ticks(old_total, track_scale))
    tkhd = _child(f, trak, b"tkhd")
    offset, width = _duration_field(f, tkhd)
    writes.put(f, offset, width, ticks(new_total, movie_scale), expect=ticks(old_total, movie_scale))
    edts = next((b for b in _boxes(f, trak.body, trak.end) if b.kind == b"edts"), None)
    if edts is not None:
        elst = _child(f, edts, b"elst")
        version = _version(f, elst)
        if _read(f, elst.body + 4, 4) != 1:
            raise MarksNotPatchable("the chapter track's edit list has more than one entry")
        width = 8 if version else 4
        writes.put(f, elst.body + 8, width, ticks(new_total, movie_scale), expect=ticks(old_total,
                                                                                        movie_scale))
    return ticks(new_total, movie_scale)


def _patch_chpl(
    f: BinaryIO,
    writes: _Writes,
    moov: _Box,
    placeholders: Sequence[ChapterMark],
    marks: Sequence[ChapterMark],
) -> None:
    """Plan the Nero chapter list's writes (absent: nothing to do)."""
    udta = next((b for b in _boxes(f, moov.body, moov.end) if b.kind == b"udta"), None)
    chpl = None
    if udta is not None:
        chpl = next((b for b in _boxes(f, udta.body, udta.end) if b.kind == b"chpl"), None)
    if chpl is None:
        return
    version = _version(f, chpl)
    pos = chpl.body + 4 + (4 if version else 0)  # version/flags, then a reserved word in version 1
    count = _read(f, pos, 1)
    if count != len(marks):
        raise MarksNotPatchable(f"the Nero chapter list has {count} entries for {len(marks)} chapters")
    pos += 1
    for old, new in zip(placeholders, marks, strict=True):
        if pos + 9 > chpl.end:
            raise MarksNotPatchable("the Nero chapter list is shorter than its count")
        writes.put(f, pos, 8, new.start_ms * _CHPL_UNITS_PER_MS, expect=old.start_ms * _CHPL_UNITS_PER_MS)
        pos += 9 + _read(f, pos + 8, 1)
