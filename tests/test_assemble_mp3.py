"""MP3 export with real ffmpeg: Audiobookshelf folder tree, safe names, ID3 tags and cover."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from omni_web.assemble import (
    AudiobookTags,
    ChapterAudio,
    export_mp3_chapters,
    probe_duration_ms,
    probe_streams,
    probe_tags,
)
from omni_web.errors import FfmpegError
from tests.book_audio import chapter_audio, chapter_file

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

# MP3 frames are 1152 samples and the encoder adds a delay; ffprobe reports the padded length.
MP3_TOLERANCE_MS = 120


def make_tone(path: Path, *, rate: int, channels: int, seconds: float) -> Path:
    subprocess.run(  # noqa: S603
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=f=440:r={rate}:d={seconds}",
         "-ac", str(channels), "-c:a", "pcm_s16le", str(path)],
        check=True,
    )
    return path


@pytest.fixture
def chapters(tmp_path: Path) -> list[ChapterAudio]:
    tone = make_tone(tmp_path / "t.wav", rate=24000, channels=1, seconds=0.7)
    titles = ["Prologue", "الفصل الثاني", "Why? / How: <the> \"end\"", "Prologue"]
    return [
        chapter_audio(i, t, chapter_file([(tone, 100)], tmp_path / "ch" / f"{i}.flac")[0])
        for i, t in enumerate(titles, start=1)
    ]


def test_export_tree_names_tags_and_cover(chapters: list[ChapterAudio], tmp_path: Path) -> None:
    cover = tmp_path / "cover.png"
    subprocess.run(  # noqa: S603
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc=s=1200x1800",
            "-frames:v",
            "1",
            str(cover),
        ],
        check=True,
    )
    tags = AudiobookTags(
        title="Book: Part 1/2", author="../Evil Author", narrator="Reader", year=1901, publisher="Pub House"
    )
    root = tmp_path / "library"

    paths = export_mp3_chapters(chapters, root, tags=tags, cover=cover, bitrate_kbps=64)

    folder = root / "_Evil Author" / "Book_ Part 1_2"
    assert [p.parent for p in paths] == [folder] * 4
    assert [p.name for p in paths] == [
        "01 - Prologue.mp3",
        "02 - الفصل الثاني.mp3",
        "03 - Why_ _ How_ _the_ _end_.mp3",
        "04 - Prologue.mp3",
    ]
    assert sorted(p.name for p in folder.iterdir()) == sorted([p.name for p in paths] + ["cover.jpg"])
    assert all(root in p.resolve().parents for p in paths)

    tags_2 = probe_tags(paths[1])
    assert tags_2["title"] == "الفصل الثاني"
    assert tags_2["album"] == "Book: Part 1/2"
    assert tags_2["artist"] == tags_2["album_artist"] == "../Evil Author"
    assert tags_2["composer"] == "Reader"
    assert tags_2["track"] == "2/4"
    assert tags_2["genre"] == "Audiobook"
    assert tags_2["date"] == "1901"
    assert tags_2["publisher"] == "Pub House"

    streams = probe_streams(paths[0])
    (audio,) = [s for s in streams if s.codec_type == "audio"]
    assert audio.codec_name == "mp3"
    (picture,) = [s for s in streams if s.attached_pic]
    assert picture.codec_name == "mjpeg" and (picture.width, picture.height) == (666, 1000)
    assert picture.tags.get("comment") == "Cover (front)"
    (jpg,) = probe_streams(folder / "cover.jpg")
    assert (jpg.codec_name, jpg.width, jpg.height) == ("mjpeg", 666, 1000)

    for path, chapter in zip(paths, chapters, strict=True):
        assert abs(probe_duration_ms(path) - chapter.duration_ms) <= MP3_TOLERANCE_MS


def test_export_without_cover_and_with_missing_chapter(chapters: list[ChapterAudio], tmp_path: Path) -> None:
    paths = export_mp3_chapters(chapters[:1], tmp_path / "lib", tags=AudiobookTags(""), cover=None)
    assert paths[0].parent == tmp_path / "lib" / "Unknown Author" / "Untitled"
    assert not (paths[0].parent / "cover.jpg").exists()
    assert not [s for s in probe_streams(paths[0]) if s.attached_pic]

    gone = ChapterAudio(9, "Gone", tmp_path / "missing.flac", 1000)
    with pytest.raises(FfmpegError, match="missing.flac"):
        export_mp3_chapters([gone], tmp_path / "lib2", tags=AudiobookTags("B"), cover=None)
    with pytest.raises(ValueError):
        export_mp3_chapters(chapters, tmp_path / "lib3", tags=AudiobookTags("B"), cover=None, bitrate_kbps=97)
