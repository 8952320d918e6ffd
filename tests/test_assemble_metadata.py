"""Pure rules of the assembly layer: FFMETADATA escaping, titles, chapter marks, file names."""

from __future__ import annotations

import pytest

from omni_web.assemble.filenames import FILENAME_MAX_BYTES, safe_filename, unique_name
from omni_web.assemble.metadata import (
    CHAPTER_TITLE_MAX_BYTES,
    ChapterMark,
    build_ffmetadata,
    clean_chapter_title,
    escape_ffmetadata,
    iso639_2,
    mp4_tags,
    plan_chapter_marks,
    truncate_utf8,
)
from omni_web.assemble.records import AudiobookTags, AudioFormat


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain title", "plain title"),
        ("a=b", "a\\=b"),
        ("a;b", "a\\;b"),
        ("#1 hit", "\\#1 hit"),
        ("back\\slash", "back\\\\slash"),
        ("two\nlines", "two\\\nlines"),
        ("crlf\r\nline", "crlf\\\nline"),
        ("nul\x00gone", "nulgone"),
        ("=;#\\", "\\=\\;\\#\\\\"),
        ("الفصل = ١", "الفصل \\= ١"),
    ],
)
def test_escape_ffmetadata(raw: str, escaped: str) -> None:
    assert escape_ffmetadata(raw) == escaped


def test_build_ffmetadata_writes_tags_and_chapters() -> None:
    tags = AudiobookTags(
        title="Book; One", author="A. Writer", narrator="N = Reader", year=1999, description="Line 1\nLine 2"
    )
    marks = [ChapterMark("Intro #1", 0, 1500), ChapterMark("الفصل الثاني", 1500, 4000)]
    text = build_ffmetadata(tags, marks)
    lines = text.splitlines()
    assert lines[0] == ";FFMETADATA1"
    assert "title=Book\\; One" in lines
    assert "album=Book\\; One" in lines
    assert "artist=A. Writer" in lines
    assert "album_artist=A. Writer" in lines
    assert "composer=N \\= Reader" in lines
    assert "date=1999" in lines
    assert "genre=Audiobook" in lines
    assert "description=Line 1\\" in lines and "Line 2" in lines
    chapter_block = text.split("[CHAPTER]")[2].strip().splitlines()
    assert chapter_block == ["TIMEBASE=1/1000", "START=1500", "END=4000", "title=الفصل الثاني"]
    assert "title=Intro \\#1" in text
    assert text.count("[CHAPTER]") == 2


def test_mp4_tags_leave_out_empty_values() -> None:
    pairs = dict(mp4_tags(AudiobookTags(title="T")))
    assert pairs == {"title": "T", "album": "T", "genre": "Audiobook"}


def test_truncate_utf8_keeps_whole_characters_and_marks_the_cut() -> None:
    arabic = "الفصل " * 60
    cut = truncate_utf8(arabic, 101)
    assert len(cut.encode("utf-8")) <= 101
    assert cut.endswith("…")
    assert arabic.startswith(cut[:-1])
    assert truncate_utf8("short", 10) == "short"


def test_truncate_utf8_prefers_a_word_edge() -> None:
    text = "The quick brown fox jumps over the lazy dog"
    assert truncate_utf8(text, 30) == "The quick brown fox jumps…"
    # One long word: cut inside it rather than drop everything.
    assert truncate_utf8("x" * 50, 20) == "x" * 17 + "…"


def test_clean_chapter_title() -> None:
    assert clean_chapter_title("  Chapter\n\tOne  ", index=1) == "Chapter One"
    assert clean_chapter_title(" \n ", index=7) == "Chapter 7"
    long = clean_chapter_title("word " * 100, index=1)
    assert len(long.encode("utf-8")) <= CHAPTER_TITLE_MAX_BYTES and long.endswith("…")
    # NFC: a decomposed é becomes one code point.
    assert clean_chapter_title("Cafe\u0301", index=1) == "Caf\u00e9"


def test_plan_chapter_marks_are_contiguous_and_pauses_belong_to_the_chapter_before() -> None:
    marks = plan_chapter_marks(
        [(1, "One", 2_000_000), (2, "", 3_500_000), (3, "Three", 1_000_000)], pause_between_ms=1500
    )
    assert [(m.title, m.start_ms, m.end_ms) for m in marks] == [
        ("One", 0, 3500),
        ("Chapter 2", 3500, 8500),
        ("Three", 8500, 9500),
    ]


def test_plan_chapter_marks_do_not_drift_over_many_chapters() -> None:
    # 1000 chapters of 1.0004 s: rounding each to ms would lose 0.4 s; the marks must not.
    marks = plan_chapter_marks([(i, f"c{i}", 1_000_400) for i in range(1000)], pause_between_ms=0)
    assert marks[-1].end_ms == 1_000_400
    assert all(a.end_ms == b.start_ms for a, b in zip(marks, marks[1:], strict=False))


def test_iso639_2() -> None:
    assert iso639_2("ar") == "ara"
    assert iso639_2("en-US") == "eng"
    assert iso639_2("fra") == "fra"
    assert iso639_2("xx") is None


def test_records_validate() -> None:
    with pytest.raises(ValueError):
        AudioFormat(sample_rate_hz=22000)
    with pytest.raises(ValueError):
        AudioFormat(channels=3)
    assert AudioFormat(48000, 2).label == "48 kHz stereo"


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("Chapter 1: The Beginning?", "Chapter 1_ The Beginning_"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..", "fallback"),
        ("a/b\\c", "a_b_c"),
        ('<>:"|?*', "fallback"),
        ("  .hidden.  ", "hidden"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("line\nbreak\ttab", "line break tab"),
        ("الفصل الأول", "الفصل الأول"),
        ("", "fallback"),
    ],
)
def test_safe_filename(raw: str, safe: str) -> None:
    assert safe_filename(raw, fallback="fallback") == safe


def test_safe_filename_limits_bytes_not_characters() -> None:
    name = safe_filename("ب" * 200, fallback="x")
    assert len(name.encode("utf-8")) <= FILENAME_MAX_BYTES
    assert "/" not in name and name.endswith("…")


def test_unique_name_ignores_case() -> None:
    assert unique_name("01 - A.mp3", []) == "01 - A.mp3"
    assert unique_name("01 - A.mp3", ["01 - a.mp3"]) == "01 - A (2).mp3"
    assert unique_name("x", ["x", "x (2)"]) == "x (3)"


def test_series_tags_are_the_itunes_atoms_ffmpeg_writes_and_audiobookshelf_reads() -> None:
    pairs = dict(mp4_tags(AudiobookTags(title="T", series="The Water Cycle", series_part="2")))
    assert (pairs["show"], pairs["episode_id"], pairs["grouping"]) == ("The Water Cycle", "2",
                                                                       "The Water Cycle #2")
    assert not {"show", "episode_id", "grouping"} & set(
        dict(mp4_tags(AudiobookTags(title="T", series_part="2")))
    )


def test_only_a_book_with_an_isbn_or_asin_reserves_room_for_them() -> None:
    plain = build_ffmetadata(AudiobookTags(title="T"), [])
    assert "lyrics=" not in plain
    text = build_ffmetadata(AudiobookTags(title="T", isbn="9780306406157", asin="B00ABCDEFG"), [])
    (line,) = [line for line in text.splitlines() if line.startswith("lyrics=")]
    # Free-form atoms of 81 and 78 bytes, a free atom's header and spare, less ©lyr's own 24.
    assert len(line) - len("lyrics=") == 81 + 78 + 8 + 64 - 24
    assert "isbn" not in text.lower()  # ffmpeg could not write it: the swap after the join does
