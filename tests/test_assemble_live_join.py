"""The m4b joined live (chapters piped in as they are mastered, marks set at the end): read back
with ffprobe it must be the book the after-the-fact join writes, and anything unexpected must be
refused without touching the output."""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import omni_web.assemble.workspace as workspace
from omni_web.assemble import (
    CHAPTER_TITLE_MAX_BYTES,
    AudiobookTags,
    AudioFormat,
    probe_chapters,
    probe_duration_ms,
    probe_streams,
    probe_tags,
)
from omni_web.assemble.ffmpeg import probe, run_ffmpeg
from omni_web.assemble.join import EncodedChapter, join_args, join_m4b, join_marks
from omni_web.assemble.live_join import LiveJoin, LiveJoinFailed
from omni_web.assemble.mp4marks import MarksNotPatchable, patch_chapter_marks, placeholder_marks
from omni_web.assemble.mp4tags import set_identifier_tags
from omni_web.errors import DiskFullError, FfmpegError
from omni_web.master.chapter import count_adts_frames, read_chunk

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

TAGS = AudiobookTags(title="Live Book", author="Ada Writer", narrator="Nadia Voice", year=2024, language="en")
ARABIC_TAGS = AudiobookTags(title="Arabic Book", language="ar")
TITLES = ("الفصل الأول: البداية", "Part 2 = the end; #1 \\ hit", "Three", "Four")
SECONDS = (3.1, 5.0, 2.2, 4.4)


def _adts(path: Path, seconds: float, freq: int) -> Path:
    subprocess.run(  # noqa: S603 - argv list
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=f={freq}:r=24000:d={seconds}",
         "-c:a", "aac", "-b:a", "64k", "-f", "adts", str(path)],
        check=True,
    )
    return path


@pytest.fixture(scope="module")
def chapters(tmp_path_factory: pytest.TempPathFactory) -> list[EncodedChapter]:
    root = tmp_path_factory.mktemp("chapters")
    out = []
    for number, (title, seconds) in enumerate(zip(TITLES, SECONDS, strict=True), start=1):
        adts = _adts(root / f"{number}.aac", seconds, 300 + 100 * number)
        out.append(EncodedChapter(number, title, adts, count_adts_frames(adts), 24000))
    return out


@pytest.fixture(scope="module")
def cover(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cover") / "cover.png"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=640x480", "-frames:v", "1",
                    str(path)], check=True)  # noqa: S603, S607
    return path


def test_chapters_added_out_of_order_while_it_runs_make_the_same_book_as_the_join(
    chapters: list[EncodedChapter], cover: Path, tmp_path: Path
) -> None:
    live = LiveJoin([(c.index, c.title) for c in chapters], tmp_path / "work", tags=TAGS, cover=cover)

    def master() -> None:  # chapters finish out of order, as two mastering workers finish them
        for position in (1, 0, 3, 2):
            time.sleep(0.2)
            live.add(chapters[position])

    worker = threading.Thread(target=master)
    worker.start()
    worker.join()
    out = live.finish(chapters, tmp_path / "out" / "Live Book.m4b")
    reference = join_m4b(chapters, tmp_path / "ref.m4b", tags=TAGS, cover=cover)

    marks = join_marks(chapters)
    read = probe_chapters(out)
    assert [(c.title, c.start_ms, c.end_ms) for c in read] == [(m.title, m.start_ms, m.end_ms) for m in marks]
    assert read == probe_chapters(reference)
    assert probe_duration_ms(out) == probe_duration_ms(reference) == marks[-1].end_ms
    assert marks[-1].end_ms == round(sum(c.aac_frames for c in chapters) * 1024 / 24)  # frames, in ms
    assert probe_tags(out)["title"] == "Live Book" and probe_tags(out)["artist"] == "Ada Writer"
    streams = probe_streams(out)
    (audio,) = [s for s in streams if s.codec_type == "audio"]
    assert (audio.codec_name, audio.sample_rate_hz, audio.tags.get("language")) == ("aac", 24000, "eng")
    assert any(s.attached_pic for s in streams)
    # The audio is the chapters' frames, copied: decoded, both books are the same samples.
    assert _pcm_hash(out) == _pcm_hash(reference)
    assert not list((tmp_path / "work").glob(".live-join.*"))  # no scratch left


def test_a_chapter_mastered_again_after_it_went_in_is_refused(
    chapters: list[EncodedChapter], tmp_path: Path
) -> None:
    live = _all_piped_in(chapters, tmp_path / "work")
    replaced = EncodedChapter(2, TITLES[1], chapters[0].adts, chapters[0].aac_frames, 24000)
    live.add(replaced)
    target = tmp_path / "out.m4b"
    with pytest.raises(LiveJoinFailed, match="chapter 2 changed"):
        live.finish([chapters[0], replaced, *chapters[2:]], target)
    assert not target.exists() and not list((tmp_path / "work").glob(".live-join.*"))


def test_a_chapter_file_replaced_in_place_after_it_went_in_is_refused(
    chapters: list[EncodedChapter], tmp_path: Path
) -> None:
    copies = []
    for chapter in chapters:
        copy = tmp_path / chapter.adts.name
        copy.write_bytes(chapter.adts.read_bytes())
        copies.append(EncodedChapter(chapter.index, chapter.title, copy, chapter.aac_frames, 24000))
    live = _all_piped_in(copies, tmp_path / "work")
    # Same name, same frame count, new audio (a take regenerated in place and the chapter remastered).
    replacement = tmp_path / "new.aac"
    replacement.write_bytes(chapters[2].adts.read_bytes())
    replacement.replace(copies[1].adts)
    with pytest.raises(LiveJoinFailed, match="not the book's final chapters"):
        live.finish(copies, tmp_path / "out.m4b")


def test_marks_are_only_set_where_ffmpeg_put_the_placeholders(
    chapters: list[EncodedChapter], tmp_path: Path
) -> None:
    book = join_m4b(chapters, tmp_path / "book.m4b", tags=TAGS, cover=None)  # real marks, not placeholders
    before = hashlib.sha256(book.read_bytes()).hexdigest()
    titles = [m.title for m in join_marks(chapters)]
    with pytest.raises(MarksNotPatchable):
        patch_chapter_marks(book, placeholder_marks(titles), join_marks(chapters))
    assert hashlib.sha256(book.read_bytes()).hexdigest() == before


def _all_piped_in(chapters: list[EncodedChapter], folder: Path) -> LiveJoin:
    """A live join with every chapter added, once the last one has started into the pipe."""
    live = LiveJoin([(c.index, c.title) for c in chapters], folder, tags=TAGS, cover=None)
    for chapter in chapters:
        live.add(chapter)
    deadline = time.monotonic() + 120
    while len(live._fed) < len(chapters) and time.monotonic() < deadline:  # noqa: SLF001 - wait for the pipe
        time.sleep(0.05)
    return live


def _pcm_hash(path: Path) -> str:
    done = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"],
                          capture_output=True, check=True)  # noqa: S603, S607
    return hashlib.sha256(done.stdout).hexdigest()


ID_TAGS = dataclasses.replace(
    TAGS, series="Water Cycle", series_part="2", isbn="9780306406157", asin="B00ABCDEFG"
)


def test_the_live_join_carries_isbn_and_asin_with_marks_cover_and_tags_intact(
    chapters: list[EncodedChapter], cover: Path, tmp_path: Path
) -> None:
    live = LiveJoin([(c.index, c.title) for c in chapters], tmp_path / "work", tags=ID_TAGS, cover=cover)
    for chapter in chapters:
        live.add(chapter)
    out = live.finish(chapters, tmp_path / "Live Book.m4b")
    tags = probe(out)["format"]["tags"]  # as ffprobe names them: Audiobookshelf reads "ISBN"/"ASIN"
    assert (tags["ISBN"], tags["ASIN"]) == ("9780306406157", "B00ABCDEFG")
    assert "lyrics" not in tags  # the placeholder is gone
    assert (
        tags["title"],
        tags["artist"],
        tags["composer"],
        tags["show"],
        tags["episode_id"],
        tags["date"],
    ) == ("Live Book", "Ada Writer", "Nadia Voice", "Water Cycle", "2", "2024")
    marks = join_marks(chapters)
    assert [(c.title, c.start_ms, c.end_ms) for c in probe_chapters(out)] == [
        (m.title, m.start_ms, m.end_ms) for m in marks
    ]
    assert any(s.attached_pic for s in probe_streams(out))


@pytest.mark.parametrize("faststart", [True, False], ids=["index-first", "index-last"])
def test_setting_the_identifiers_rewrites_only_the_index_never_the_audio(
    chapters: list[EncodedChapter], cover: Path, tmp_path: Path, faststart: bool
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    book = scratch / "book.m4b"
    args = join_args(
        ["-i", str(chapters[0].adts)], scratch, tags=ID_TAGS, cover=cover, marks=join_marks(chapters[:1])
    )
    args += [*(["-movflags", "+faststart"] if faststart else []), "-f", "ipod", str(book)]
    run_ffmpeg(args, action="Joining", output_dir=scratch, cwd=scratch)
    before = _top_atoms(book)
    mdat_before = _mdat_hash(book)
    assert probe_tags(book)["lyrics"].startswith("...") and "isbn" not in probe_tags(book)

    set_identifier_tags(book, ID_TAGS)

    assert _top_atoms(book) == before  # same atoms, same offsets, same sizes: the file did not grow
    assert _mdat_hash(book) == mdat_before
    tags = probe(book)["format"]["tags"]
    assert (tags["ISBN"], tags["ASIN"], tags["title"], tags["grouping"]) == (
        "9780306406157",
        "B00ABCDEFG",
        "Live Book",
        "Water Cycle #2",
    )
    assert len(probe_chapters(book)) == 1 and any(s.attached_pic for s in probe_streams(book))
    assert _pcm_hash(book) == _pcm_hash(chapters[0].adts)


def _top_atoms(path: Path) -> list[tuple[bytes, int, int]]:
    atoms, offset, size = [], 0, path.stat().st_size
    with path.open("rb") as f:
        while offset < size:
            f.seek(offset)
            length, name = struct.unpack(">I4s", f.read(8))
            if length == 1:
                length = struct.unpack(">Q", f.read(8))[0]
            atoms.append((name, offset, length))
            offset += length
    return atoms


def _mdat_hash(path: Path) -> str:
    ((_, offset, length),) = [a for a in _top_atoms(path) if a[0] == b"mdat"]
    with path.open("rb") as f:
        f.seek(offset)
        return hashlib.sha256(f.read(length)).hexdigest()


LONG = "A very long chapter title " * 12


def test_the_book_cuts_long_titles_tags_arabic_and_scales_the_cover(
    chapters: list[EncodedChapter], tmp_path: Path
) -> None:
    big_cover = tmp_path / "cover.png"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=1600x1200", "-frames:v",
                    "1",
                    str(big_cover)], check=True)  # noqa: S603, S607
    book = [*chapters[:2], dataclasses.replace(chapters[2], title=LONG)]
    live = LiveJoin([(c.index, c.title) for c in book], tmp_path / "work", tags=ARABIC_TAGS, cover=big_cover)
    for chapter in book:
        live.add(chapter)
    out = live.finish(book, tmp_path / "Arabic.m4b")
    titles = [c.title for c in probe_chapters(out)]
    assert titles[:2] == list(TITLES[:2])
    assert titles[2].endswith("…") and LONG.startswith(titles[2][:-1])
    assert len(titles[2].encode("utf-8")) <= CHAPTER_TITLE_MAX_BYTES
    streams = probe_streams(out)
    (audio,) = [s for s in streams if s.codec_type == "audio"]
    assert audio.tags.get("language") == "ara"
    (picture,) = [s for s in streams if s.attached_pic]
    assert (picture.codec_name, picture.width, picture.height) == ("mjpeg", 1000, 750)


def test_a_damaged_chapter_is_named_and_leaves_no_book(
    chapters: list[EncodedChapter], tmp_path: Path
) -> None:
    damaged = tmp_path / "002.aac"
    damaged.write_bytes(b"\xff\xf1" + bytes(4000))
    book = [chapters[0], dataclasses.replace(chapters[1], adts=damaged), chapters[2]]
    before = [hashlib.sha256(c.adts.read_bytes()).hexdigest() for c in book]
    out = tmp_path / "out" / "book.m4b"
    with pytest.raises(FfmpegError, match="002.aac"):
        join_m4b(book, out, tags=TAGS, cover=None)
    assert not out.exists() and not [p for p in out.parent.iterdir()]
    assert [hashlib.sha256(c.adts.read_bytes()).hexdigest() for c in book] == before


def test_a_cancelled_live_join_keeps_the_old_book(chapters: list[EncodedChapter], tmp_path: Path) -> None:
    out = tmp_path / "book.m4b"
    out.write_bytes(b"previous version")
    live = LiveJoin([(c.index, c.title) for c in chapters], tmp_path / "work", tags=TAGS, cover=None)
    live.add(chapters[0])
    live.abort()  # what cancelling the job does
    assert out.read_bytes() == b"previous version"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.m4b", "work"]
    assert not list((tmp_path / "work").iterdir())


def test_a_disk_too_small_is_refused_before_joining(
    chapters: list[EncodedChapter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Usage:
        free = 10_000

    monkeypatch.setattr(workspace.shutil, "disk_usage", lambda _path: Usage())
    out = tmp_path / "full" / "book.m4b"
    with pytest.raises(DiskFullError) as caught:
        join_m4b(chapters, out, tags=TAGS, cover=None)
    assert str(out.parent) in str(caught.value)
    assert not out.exists()


def test_a_bad_cover_only_costs_the_cover(chapters: list[EncodedChapter], tmp_path: Path) -> None:
    bad_cover = tmp_path / "cover.jpg"
    bad_cover.write_bytes(b"not an image")
    out = join_m4b(chapters[:2], tmp_path / "book.m4b", tags=TAGS, cover=bad_cover)
    assert not [s for s in probe_streams(out) if s.attached_pic]
    assert [c.title for c in probe_chapters(out)] == list(TITLES[:2])


def test_chunks_in_other_formats_are_read_in_the_book_format(tmp_path: Path) -> None:
    stereo = tmp_path / "s.wav"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:r=48000:d=0.5", "-ac",
                    "2",
                    "-c:a", "pcm_s16le", str(stereo)], check=True)  # noqa: S603, S607
    samples = read_chunk(stereo, AudioFormat(24000, 1), tmp_path)
    assert samples.shape == (12000, 1)
    assert 0.05 < float(np.abs(samples).max()) <= 1.0  # the tone survives the downmix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.wav"]  # the converted copy is gone
