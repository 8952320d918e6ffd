"""Storage: what the data root holds by kind, pruning of finished books, superseded chapter versions."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from omni_web.master.versions import chapter_versions, read_manifests, remove_superseded

OLD, KEY_A, KEY_B = "001-aaaaaaaaaaaaaaaa", "321186b7ea", "c84cd1f640"


def _version(folder: Path, base: str, size: int, *, mtime: float | None = None) -> list[Path]:
    files = []
    for suffix in (".json", ".m4a", ".aac", ".m4a.levels.json"):
        path = folder / f"{base}{suffix}"
        path.write_bytes(b"x" * size)
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        files.append(path)
    return files


class _Record:
    def __init__(self, number: int) -> None:
        self.number, self.in_book = number, True


def test_superseded_versions_of_the_rebuilt_chapters_go_others_stay(tmp_path: Path) -> None:
    an_hour_ago = time.time() - 3600
    old = _version(tmp_path, f"{OLD}.{KEY_A}", 1000, mtime=an_hour_ago)
    current = _version(tmp_path, f"{OLD}.{KEY_B}", 700, mtime=an_hour_ago)
    other_book = _version(tmp_path, f"002-bbbbbbbbbbbbbbbb.{KEY_A}", 500, mtime=an_hour_ago)  # chapter 2
    beside = _version(tmp_path, f"{OLD[:4]}cccccccccccccccc.{KEY_A}", 300)  # written by a job running now
    (tmp_path / "cover.jpg").write_bytes(b"c" * 50)
    (tmp_path / "Book.book.json").write_text(json.dumps({"book": "/b/Book.m4b", "versions": [f"{OLD}.{KEY_B}"],
                                                         "chunks": ["k1"], "finished_at": 1.0}))
    assert {v.base: v.size_bytes for v in chapter_versions(tmp_path)}[f"{OLD}.{KEY_A}"] == 4000
    freed = remove_superseded(tmp_path, [_Record(1)], older_than=time.time() - 60)
    assert freed == 4000
    assert not any(p.exists() for p in old)
    assert all(p.exists() for p in current + other_book + beside)
    assert (tmp_path / "cover.jpg").exists()
    assert [m.chunk_keys for m in read_manifests(tmp_path)] == [frozenset({"k1"})]


@pytest.mark.slow  # two real conversions against the fake server, ffmpeg mastering
def test_a_new_mastering_version_replaces_the_old_after_the_book_is_rebuilt(data_paths, fake_server) -> None:
    from omni_web.client import VoiceChoice
    from omni_web.settings import Settings
    from tests.test_pipeline import FAST, convert

    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    kwargs = dict(voice=VoiceChoice.speaker("Vivian"), chapters=(1, 2))
    first, _ = convert(data_paths, server, "hefty-water.epub", **kwargs)
    parts = first.chapters[0].path.parent
    before = {v.base for v in chapter_versions(parts)}
    second, _ = convert(data_paths, server, "hefty-water.epub", settings=Settings(qa_level="off", loudness="r128"),
                        **kwargs)
    after = {v.base for v in chapter_versions(parts)}
    assert len(before) == 2 and len(after) == 2 and not before & after
    assert {c.path.name.rpartition(".")[0] for c in second.chapters} == after
    assert second.m4b is not None and second.m4b.is_file()
    (manifest,) = read_manifests(parts)
    assert manifest.versions == after and manifest.book == str(second.m4b)
