"""Storage: what the data root holds by kind, pruning of finished books, superseded chapter versions."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from omni_web.master.versions import chapter_versions, read_manifests, read_work_keys, remove_superseded

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
    (tmp_path / "Book.book.json").write_text(
        json.dumps(
            {"book": "/b/Book.m4b", "versions": [f"{OLD}.{KEY_B}"], "chunks": ["k1"], "finished_at": 1.0}
        )
    )
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
    second, _ = convert(
        data_paths, server, "hefty-water.epub", settings=Settings(qa_level="off", loudness="r128"), **kwargs
    )
    after = {v.base for v in chapter_versions(parts)}
    assert len(before) == 2 and len(after) == 2 and not before & after
    assert {c.path.name.rpartition(".")[0] for c in second.chapters} == after
    assert second.m4b is not None and second.m4b.is_file()
    (manifest,) = read_manifests(parts)
    assert manifest.versions == after and manifest.book == str(second.m4b)
    assert read_work_keys(parts) == manifest.chunk_keys  # the run said what it makes from its start
    # The job store holds the real result document: Storage ties every chunk file to the book.
    from omni_web.jobs.store import JobState, JobStore
    from omni_web.storage import prune_plan, storage_report
    from tests.conftest import DATA_DIR

    store = JobStore(data_paths.jobs_db)
    job = store.enqueue("convert", {"book_path": str(DATA_DIR / "hefty-water.epub")})
    store.claim_next()
    store.finish(job.id, JobState.DONE, result=second.to_dict())
    wavs = list(data_paths.chunk_cache_dir.glob("*.wav"))
    report = storage_report(data_paths, Settings())
    assert report.size_of("chunks_finished") == sum(p.stat().st_size for p in wavs) > 0
    assert report.size_of("chunks_untracked") == 0 and report.size_of("versions_superseded") == 0
    assert prune_plan(data_paths, Settings()).execute().files == len(wavs)
    assert not list(data_paths.chunk_cache_dir.glob("*.wav")) and second.m4b.is_file()


def _book(
    root: Path,
    name: str,
    *,
    versions: dict[str, int],
    chunks: dict[str, int],
    cache: Path,
    current: list[str],
    source: Path | None = None,
) -> dict:
    """A finished book on disk: its m4b, its work folder's versions, its chunks, its manifest."""
    parts = root / "outputs" / ".parts" / f"{name}-0123456789ab"
    parts.mkdir(parents=True)
    for base, size in versions.items():
        _version(parts, base, size, mtime=time.time() - 3600)
    cache.mkdir(parents=True, exist_ok=True)
    for key, size in chunks.items():
        (cache / f"{key}.wav").write_bytes(b"w" * size)
        (cache / f"{key}.qa.json").write_text("{}")
    m4b = root / "outputs" / name / f"{name}.m4b"
    m4b.parent.mkdir(parents=True)
    m4b.write_bytes(b"m" * 2000)
    (parts / f"{name}.book.json").write_text(
        json.dumps({"book": str(m4b), "versions": current, "chunks": sorted(chunks), "finished_at": 1.0})
    )
    if source is None:  # a Kindle book's stand-in: its converted EPUB is named by this content's hash
        source = root / "books" / f"{name}.azw3"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(name.encode())
    return {
        "book_path": str(source),
        "m4b": str(m4b),
        "parts": parts,
        "source": source,
        "chapters": [{"number": 1, "path": str(parts / f"{current[0]}.m4a")}],
    }


@pytest.fixture()
def library(data_paths):
    from omni_web.jobs.store import JobState, JobStore

    cache, store = data_paths.chunk_cache_dir, JobStore(data_paths.jobs_db)
    done = _book(
        data_paths.root,
        "Done",
        versions={f"{OLD}.{KEY_A}": 1000, f"{OLD}.{KEY_B}": 700},
        chunks={"d1": 3000, "d2": 5000, "flag": 100},
        cache=cache,
        current=[f"{OLD}.{KEY_B}"],
    )
    busy = _book(
        data_paths.root,
        "Busy",
        versions={f"{OLD}.{KEY_A}": 900, f"{OLD}.{KEY_B}": 800},
        chunks={"b1": 4000},
        cache=cache,
        current=[f"{OLD}.{KEY_B}"],
    )
    report = data_paths.root / "outputs" / "Done" / "Done.qa.json"
    report.write_text(
        json.dumps({"chunks": [{"key": "d1", "verdict": "passed"}, {"key": "flag", "verdict": "flagged"}]})
    )
    for book, state in ((done, JobState.DONE), (busy, JobState.DONE)):
        job = store.enqueue("convert", {"book_path": book["book_path"]}, title=book["parts"].name)
        store.claim_next()
        store.finish(
            job.id,
            state,
            result={
                "m4b": book["m4b"],
                "chapters": book["chapters"],
                "qa_report": str(report) if book is done else None,
            },
        )
    store.enqueue("convert", {"book_path": busy["book_path"]}, title="Busy again")  # queued: its book is busy
    converted = data_paths.state_dir / "converted"
    converted.mkdir(parents=True)
    import hashlib

    kept = converted / f"{hashlib.sha256(b'Done').hexdigest()}.epub"
    kept.write_bytes(b"e" * 600)
    (converted / f"{'0' * 64}.epub").write_bytes(b"e" * 400)  # no job reads this book
    return data_paths, done, busy, kept


def test_sizes_by_kind_and_book_are_read_back_from_disk(library) -> None:
    from omni_web.settings import Settings
    from omni_web.storage import storage_report

    paths, done, busy, _kept = library
    report = storage_report(paths, Settings())
    assert report.size_of("chunks_finished") == 3000 + 5000 + 100  # the busy book's 4000 are not "finished"
    assert report.size_of("chunks_busy") == 4000  # a job waits for that book
    assert report.size_of("chunks_untracked") == 0
    assert report.size_of("chunk_records") == 4 * 2  # the QA records ({} each)
    assert report.size_of("versions_superseded") == 4 * 1000  # Done's old version only: Busy is in work
    assert report.size_of("books") == 2 * 2000
    assert report.size_of("converted") == 1000
    by_title = {b.title: b for b in report.books}
    assert by_title["Done"].chunk_bytes == 8100 and by_title["Done"].superseded_bytes == 4000
    assert by_title["Busy"].busy and not by_title["Busy"].finished
    zips = Path(done["m4b"]).parent / ".downloads"
    zips.mkdir()
    (zips / "Done.mp3.zip").write_bytes(b"z" * 321)
    (paths.chunk_cache_dir / "orphan.wav").write_bytes(b"o" * 77)  # a cancelled job's chunk, say
    again = storage_report(paths, Settings())
    assert again.size_of("hidden") == 321 and again.size_of("chunks_untracked") == 77


def test_prune_removes_finished_books_chunks_keeps_busy_and_flagged(library) -> None:
    from omni_web.settings import Settings
    from omni_web.storage import prune_plan

    paths, done, busy, kept = library
    cache = paths.chunk_cache_dir
    plan = prune_plan(paths, Settings())
    assert plan.expected_freed_bytes == 3000 + 5000 + 4 * 1000 + 400
    assert "render their chunks again" in plan.summary() and "Busy" in plan.summary()
    assert (cache / "d1.wav").exists()  # planning touches nothing
    result = plan.execute()
    assert result.freed_bytes == plan.expected_freed_bytes and result.files == 2 + 4 + 1
    assert not (cache / "d1.wav").exists() and not (cache / "d2.wav").exists()
    assert (cache / "flag.wav").exists() and (cache / "d1.qa.json").exists()  # flagged for review; QA records
    assert (cache / "b1.wav").exists()  # a queued job's book
    assert [v.base for v in chapter_versions(done["parts"])] == [f"{OLD}.{KEY_B}"]
    assert len(chapter_versions(busy["parts"])) == 2
    assert kept.exists() and not (kept.parent / f"{'0' * 64}.epub").exists()
    assert Path(done["m4b"]).stat().st_size == 2000


def test_a_job_queued_after_the_plan_keeps_its_books_chunks(library) -> None:
    from omni_web.jobs.store import JobStore
    from omni_web.settings import Settings
    from omni_web.storage import prune_plan

    paths, done, _busy, _kept = library
    plan = prune_plan(paths, Settings())
    upload = paths.root / "uploads" / "Done again.azw3"  # the same book uploaded again: another path
    upload.parent.mkdir()
    upload.write_bytes(done["source"].read_bytes())
    JobStore(paths.jobs_db).enqueue("convert", {"book_path": str(upload)}, title="Done again")
    result = plan.execute()
    assert (paths.chunk_cache_dir / "d1.wav").exists() and len(chapter_versions(done["parts"])) == 2
    assert result.freed_bytes == 400  # only the converted book nobody reads


def test_cli_dry_run_then_prune(library, monkeypatch, capsys) -> None:
    from omni_web.cli import main

    paths, _done, _busy, _kept = library
    monkeypatch.setenv("OMNI_WEB_HOME", str(paths.root))
    assert main(["storage"]) == 0
    assert "Chapter versions superseded" in capsys.readouterr().out
    assert main(["storage", "--prune", "--dry-run"]) == 0
    assert "Pruning frees 12.4 kB" in capsys.readouterr().out and (paths.chunk_cache_dir / "d1.wav").exists()
    assert main(["storage", "--prune"]) == 0
    assert "Freed 12.4 kB (12400 bytes, 7 files)" in capsys.readouterr().out
    assert not (paths.chunk_cache_dir / "d1.wav").exists()


def test_a_book_rendering_for_hours_owns_its_chunks_before_its_manifest(data_paths) -> None:
    """A running long book has no manifest and no result yet: its chunks were '0 B' on its row and
    all 'not tied to a finished book'. The job's record of the chunks it makes ties them to it."""
    from omni_web.jobs.store import JobStore
    from omni_web.master.versions import write_work_keys
    from omni_web.settings import Settings
    from omni_web.storage import prune_plan, storage_report

    class _Spec:
        keys = ("m1", "m2")

    parts = data_paths.root / "outputs" / ".parts" / "Moby-0123456789ab"
    parts.mkdir(parents=True)
    _version(parts, f"{OLD}.{KEY_A}", 500)
    write_work_keys(parts, [_Spec()])
    cache = data_paths.chunk_cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    for key, size in (("m1", 3000), ("m2", 4000), ("stray", 50)):
        (cache / f"{key}.wav").write_bytes(b"w" * size)
    store = JobStore(data_paths.jobs_db)
    job = store.enqueue("convert", {"book_path": str(data_paths.root / "moby.epub")}, title="Moby")
    store.claim_next()  # running, chapter 1 mastered
    chapter = {"number": 1, "state": "ready", "audio_path": str(parts / f"{OLD}.{KEY_A}.m4a")}
    store.update_progress(job.id, {"chapters": [chapter]})
    report = storage_report(data_paths, Settings())
    assert report.size_of("chunks_busy") == 7000 and report.size_of("chunks_untracked") == 50
    (moby,) = report.books
    assert moby.busy and moby.chunk_bytes == 7000 and moby.chunks == 2
    assert not {p.name for p, _ in prune_plan(data_paths, Settings()).files} & {"m1.wav", "m2.wav"}
