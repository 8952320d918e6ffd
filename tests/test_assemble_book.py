"""The m4b with real ffmpeg: chapter marks, titles, tags and cover read back with ffprobe, and
failures that leave no partial book and never touch the chapter files."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

import omni_web.assemble.book as book_module
from omni_web.assemble import (
    CHAPTER_TITLE_MAX_BYTES,
    AudiobookTags,
    AudioFormat,
    ChapterAudio,
    ChapterPlan,
    Segment,
    build_m4b,
    probe_chapters,
    probe_duration_ms,
    probe_streams,
    probe_tags,
    render_chapter_audio,
)
from omni_web.errors import DiskFullError, FfmpegError

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

TOLERANCE_MS = 50
PAUSE_MS = 1200
ARABIC = "الفصل الأول: البداية"
SPECIAL = "Part 2 = the end; #1 \\ hit"
LONG = "A very long chapter title " * 12
TAGS = AudiobookTags(
    title="The Test Book",
    author="Ada Writer",
    narrator="Nadia Voice",
    year=2021,
    description="First line.\nSecond line; with = and #.",
    language="ar",
    comment="Made by omni-web tests",
)


def make_tone(path: Path, *, rate: int, channels: int, seconds: float, freq: int = 440) -> Path:
    subprocess.run(  # noqa: S603
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=f={freq}:r={rate}:d={seconds}",
         "-ac", str(channels), "-c:a", "pcm_s16le", str(path)],
        check=True,
    )  # fmt: skip
    return path


def make_cover(path: Path, size: str = "1600x1200") -> Path:
    subprocess.run(  # noqa: S603
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc=s={size}", "-frames:v", "1", str(path)],
        check=True,
    )  # fmt: skip
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[ChapterAudio]:
    """Three chapters at 24 kHz mono with the titles the m4b must carry."""
    root = tmp_path_factory.mktemp("book")
    a = make_tone(root / "a.wav", rate=24000, channels=1, seconds=1.0)
    b = make_tone(root / "b.wav", rate=24000, channels=1, seconds=0.6, freq=660)
    plans = [
        ChapterPlan(1, ARABIC, (Segment(a, 300), Segment(b, 0))),
        ChapterPlan(2, SPECIAL, (Segment(b, 200), Segment(a, 0))),
        ChapterPlan(3, LONG, (Segment(a, 0),)),
    ]
    return [render_chapter_audio(p, root / "chapters" / f"{p.index:03d}.flac", fmt=AudioFormat()) for p in plans]


@pytest.fixture(scope="module")
def m4b(rendered: list[ChapterAudio], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[float]]:
    root = tmp_path_factory.mktemp("out")
    seen: list[float] = []
    out = build_m4b(
        rendered,
        root / "The Test Book.m4b",
        tags=TAGS,
        cover=make_cover(root / "cover.png"),
        pause_between_chapters_ms=PAUSE_MS,
        progress=seen.append,
    )
    return out, seen


def test_chapter_marks_carry_real_titles_and_measured_times(
    m4b: tuple[Path, list[float]], rendered: list[ChapterAudio]
) -> None:
    out, _ = m4b
    chapters = probe_chapters(out)
    assert len(chapters) == 3
    assert chapters[0].title == ARABIC
    assert chapters[1].title == SPECIAL
    assert chapters[2].title.endswith("…") and LONG.startswith(chapters[2].title[:-1])
    assert len(chapters[2].title.encode("utf-8")) <= CHAPTER_TITLE_MAX_BYTES

    durations = [probe_duration_ms(c.path) for c in rendered]
    starts = [0, durations[0] + PAUSE_MS, durations[0] + durations[1] + 2 * PAUSE_MS]
    ends = [starts[1], starts[2], starts[2] + durations[2]]
    for chapter, start, end in zip(chapters, starts, ends, strict=True):
        assert abs(chapter.start_ms - start) <= TOLERANCE_MS
        assert abs(chapter.end_ms - end) <= TOLERANCE_MS
    assert abs(probe_duration_ms(out) - ends[-1]) <= TOLERANCE_MS


def test_tags_audio_and_cover_streams(m4b: tuple[Path, list[float]]) -> None:
    out, _ = m4b
    tags = probe_tags(out)
    assert tags["title"] == tags["album"] == "The Test Book"
    assert tags["artist"] == tags["album_artist"] == "Ada Writer"
    assert tags["composer"] == "Nadia Voice"
    assert tags["genre"] == "Audiobook"
    assert tags["date"] == "2021"
    assert tags["comment"] == "Made by omni-web tests"
    assert tags["description"] == "First line.\nSecond line; with = and #."
    assert tags["major_brand"].strip() == "M4A"

    streams = probe_streams(out)
    (audio,) = [s for s in streams if s.codec_type == "audio"]
    assert (audio.codec_name, audio.sample_rate_hz, audio.channels) == ("aac", 24000, 1)
    assert audio.tags.get("language") == "ara"
    (cover,) = [s for s in streams if s.attached_pic]
    assert cover.codec_name == "mjpeg"
    assert (cover.width, cover.height) == (1000, 750)


def test_progress_rises_to_one(m4b: tuple[Path, list[float]]) -> None:
    _, seen = m4b
    assert seen and seen[-1] == 1.0
    assert seen == sorted(seen)
    assert all(0.0 <= f <= 1.0 for f in seen)


def test_no_scratch_left_beside_the_book(m4b: tuple[Path, list[float]]) -> None:
    out, _ = m4b
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_corrupt_chapter_fails_without_a_partial_book(rendered: list[ChapterAudio], tmp_path: Path) -> None:
    broken = tmp_path / "002.flac"
    broken.write_bytes(b"fLaC" + bytes(4000))
    chapters = [rendered[0], ChapterAudio(2, "Broken", broken, 1000), rendered[2]]
    before = {c.path: sha256(c.path) for c in rendered}
    out = tmp_path / "out" / "book.m4b"

    with pytest.raises(FfmpegError, match="002.flac"):
        build_m4b(chapters, out, tags=TAGS, cover=None, pause_between_chapters_ms=500)

    assert not out.exists()
    assert {c.path: sha256(c.path) for c in rendered} == before


def test_cancel_from_progress_stops_ffmpeg_and_keeps_the_old_book(rendered: list[ChapterAudio], tmp_path: Path) -> None:
    out = tmp_path / "book.m4b"
    out.write_bytes(b"previous version")

    def cancel(_fraction: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_m4b(rendered, out, tags=TAGS, cover=None, pause_between_chapters_ms=0, progress=cancel)

    assert out.read_bytes() == b"previous version"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.m4b"]


def test_disk_too_small_is_refused_up_front(
    rendered: list[ChapterAudio], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Usage:
        free = 10_000

    monkeypatch.setattr(book_module.shutil, "disk_usage", lambda _path: Usage())
    out = tmp_path / "full" / "book.m4b"
    with pytest.raises(DiskFullError) as caught:
        build_m4b(rendered, out, tags=TAGS, cover=None, pause_between_chapters_ms=0)
    assert str(out.parent) in str(caught.value)
    assert not out.exists()


def test_chapters_in_different_formats_and_a_bad_cover(tmp_path: Path) -> None:
    mono = make_tone(tmp_path / "m.wav", rate=24000, channels=1, seconds=0.8)
    stereo = make_tone(tmp_path / "s.wav", rate=48000, channels=2, seconds=0.5)
    first = render_chapter_audio(ChapterPlan(1, "Mono", (Segment(mono, 0),)), tmp_path / "1.flac", fmt=AudioFormat())
    second = render_chapter_audio(
        ChapterPlan(2, "Stereo", (Segment(stereo, 0),)), tmp_path / "2.wav", fmt=AudioFormat(48000, 2)
    )
    bad_cover = tmp_path / "cover.jpg"
    bad_cover.write_bytes(b"not an image")

    out = build_m4b(
        [first, second], tmp_path / "mixed.m4b", tags=AudiobookTags("Mixed"), cover=bad_cover, pause_between_chapters_ms=0
    )

    streams = probe_streams(out)
    (audio,) = [s for s in streams if s.codec_type == "audio"]
    assert (audio.sample_rate_hz, audio.channels) == (48000, 2)
    assert not [s for s in streams if s.attached_pic]
    assert [c.title for c in probe_chapters(out)] == ["Mono", "Stereo"]
    assert abs(probe_duration_ms(out) - (first.duration_ms + second.duration_ms)) <= TOLERANCE_MS


def test_bad_options_are_value_errors(rendered: list[ChapterAudio], tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build_m4b([], tmp_path / "x.m4b", tags=TAGS, cover=None, pause_between_chapters_ms=0)
    with pytest.raises(ValueError):
        build_m4b(rendered, tmp_path / "x.m4b", tags=TAGS, cover=None, pause_between_chapters_ms=0, bitrate_kbps=5)
