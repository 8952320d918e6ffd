"""Review and regenerate from the CLI: one flagged chunk redone, one request, one chapter rebuilt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.deliver.layout import is_library_folder
from omni_web.jobs import JobState, JobStore
from omni_web.paths import REPO_ROOT, DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.pipeline.review import ReviewRow, accept_chunks
from omni_web.qa import (
    ChunkRecord,
    Finding,
    FindingKind,
    QaStore,
    TakeRecord,
    Verdict,
    find_report,
    read_report,
)
from omni_web.settings import Settings, save_settings
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # subprocesses

MODEL = "qwen3_tts_0_6b_customvoice"


def _flagged_book(data_paths: DataPaths, fake_server, tmp_path: Path):
    """Wasteland chapters 2-3 with one take per chunk and 30 % silent answers: some chunks flagged."""
    server = fake_server(MODEL, env={"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "0.3"})
    request = ConvertRequest(
        book_path=DATA_DIR / "wasteland.epub",
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=(2, 3),
        qa_takes=1,
    )
    with SpeechClient(server.base_url) as client:
        result = run_conversion(
            request, paths=data_paths, settings=Settings(chunk_size_words=40), client=client
        )
    server.stop()
    return result


def _cli(data_paths: DataPaths, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMNI_WEB_HOME": str(data_paths.root)}
    return subprocess.run(
        [sys.executable, "-m", "omni_web", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_review_lists_flagged_chunks_and_regenerate_redoes_one(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    result = _flagged_book(data_paths, fake_server, tmp_path)
    report = read_report(find_report(result.output_dir))
    flagged = [c for c in report.chunks if c.verdict is Verdict.FLAGGED]
    assert flagged, "30 % silent answers with one take must flag some chunks"
    assert any(FindingKind.SILENT in c.figures.kinds for c in flagged)
    listed = _cli(data_paths, "review", str(result.output_dir))
    assert listed.returncode == 0, listed.stderr
    assert f"{len(flagged)} flagged" in listed.stdout and "% of the audio is silent" in listed.stdout
    assert f"chapter 2: voice -, pace {report.drift[0].pace_text}" in listed.stdout  # basic QA: no embedding
    target = flagged[0]
    chapter_files = {p.name: p.stat().st_mtime_ns for p in report.parts_dir.glob("*.m4a")}
    m4b_before = result.m4b.stat().st_mtime_ns
    log = tmp_path / "regen.jsonl"
    clean = fake_server(MODEL, env={"FAKE_SGL_REQUEST_LOG": str(log)})
    # A mastering setting changed since the book was made: the fix still masters as the book was.
    save_settings(data_paths, Settings(aac_bitrate_kbps=96, pause_between_chapters_ms=900))
    done = _cli(
        data_paths,
        "regenerate",
        str(result.output_dir),
        "--chapter",
        str(target.chapter),
        "--chunk",
        str(target.chunk),
        "--api-url",
        clean.base_url,
    )
    assert done.returncode == 0, done.stderr
    assert f"Only chapter {target.chapter} is rebuilt; the other chapter is reused" in done.stdout
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["input"] for r in requests] == [target.text]  # one request, for that chunk only
    assert "seed" in requests[0]  # a retake asks for other sampling
    record = QaStore(data_paths.chunk_cache_dir).load(target.key)
    assert record.verdict.value == "retaken" and len(record.takes) == 2
    # Only that chapter's file is new; the other chapter's file is untouched; the m4b is rebuilt.
    after = {p.name: p.stat().st_mtime_ns for p in report.parts_dir.glob("*.m4a")}
    changed = {name for name in after if chapter_files.get(name) != after[name]}
    assert len(changed) == 1 and changed.pop().startswith(f"{target.chapter:03d}-")
    assert result.m4b.stat().st_mtime_ns != m4b_before
    assert len(probe_chapters(result.m4b)) == 2
    assert list(data_paths.root.rglob("*.m4b")) == [result.m4b]  # rebuilt in its own folder, none beside it
    again = read_report(find_report(result.output_dir))
    row = next(c for c in again.chunks if c.key == target.key)
    assert row.verdict is Verdict.RETAKEN


def _as_before_the_fix(report_path: Path, stem: str) -> None:
    """The report as versions that kept the file stem as the request's output name wrote it."""
    read_report(report_path).with_request(output_name=stem).write(report_path)


def test_regenerate_with_edited_text_and_accept(data_paths: DataPaths, fake_server, tmp_path: Path) -> None:
    result = _flagged_book(data_paths, fake_server, tmp_path)
    report = read_report(find_report(result.output_dir))
    flagged = [c for c in report.chunks if c.verdict is Verdict.FLAGGED]
    assert flagged
    # A library-layout book whose report is older than the fix, regenerated by its job's id.
    assert is_library_folder(result.output_dir) and result.m4b.stem != result.output_dir.name
    _as_before_the_fix(result.qa_report, result.m4b.stem)
    jobs = JobStore(data_paths.jobs_db)
    job = jobs.enqueue("convert", dict(read_report(result.qa_report).request), title="The Waste Land")
    jobs.claim_next()
    jobs.finish(job.id, JobState.DONE, result=result.to_dict())
    m4b_before = result.m4b.stat().st_mtime_ns
    log = tmp_path / "regen.jsonl"
    clean = fake_server(MODEL, env={"FAKE_SGL_REQUEST_LOG": str(log)})
    target = flagged[0]
    new_text = "April is the cruellest month, breeding lilacs out of the dead land, mixing memory and desire."
    done = _cli(
        data_paths,
        "regenerate",
        job.id,
        "--chapter",
        str(target.chapter),
        "--chunk",
        str(target.chunk),
        "--text",
        new_text,
        "--api-url",
        clean.base_url,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["input"] for line in log.read_text().splitlines()] == [new_text]
    assert result.m4b.stat().st_mtime_ns != m4b_before
    assert list(data_paths.root.rglob("*.m4b")) == [result.m4b]
    assert read_report(result.qa_report).request["output_name"] == result.output_dir.name  # written anew
    row = read_report(find_report(result.output_dir)).chunk_at(target.chapter, target.chunk)
    assert row.text == new_text and row.verdict is Verdict.PASSED
    if len(flagged) > 1:
        other = flagged[1]
        accepted = _cli(
            data_paths, "review", str(result.output_dir), "--accept", f"{other.chapter}:{other.chunk}"
        )
        assert accepted.returncode == 0, accepted.stderr
        assert f"chapter {other.chapter} chunk {other.chunk} " not in accepted.stdout.split("Accepted")[1]
        again = read_report(result.qa_report)
        assert again.chunk_at(other.chapter, other.chunk).verdict is Verdict.ACCEPTED
        assert again.count(Verdict.ACCEPTED) == 1 and again.count(Verdict.FLAGGED) == len(flagged) - 2
    missing = _cli(data_paths, "regenerate", str(result.output_dir), "--chapter", "9", "--chunk", "1")
    assert missing.returncode == 1 and "no chunk 1 in chapter 9" in missing.stderr


def test_a_running_job_lists_its_flagged_chunks_from_its_progress(tmp_path: Path) -> None:
    from omni_web.jobs import Job, JobState
    from omni_web.pipeline.progress import ConvertProgress, QaProgress
    from omni_web.qa import ChunkRecord, TakeRecord
    from omni_web.ui.review import flagged_rows, row_choice

    store = QaStore(tmp_path)
    take = TakeRecord(
        number=1,
        seed=None,
        finish_reason="stop",
        duration_s=0.9,
        expected_s=3.0,
        duration_ratio=0.3,
        silence_share=0.1,
        longest_internal_silence_s=0.0,
        clipped_share=0.0,
        failures=(
            Finding(
                FindingKind.CUT,
                "the audio is 0.30 of the expected length: cut off or words skipped",
                {"ratio": 0.3},
            ),
        ),
    )
    store.save(
        ChunkRecord(
            key="k",
            text="Down the rabbit hole.",
            level="basic",
            verdict=Verdict.FLAGGED,
            chosen=1,
            takes=(take,),
            chapter=2,
            chunk=7,
        )
    )
    progress = ConvertProgress(phase="rendering", qa=QaProgress(flagged=1, passed=5, flagged_keys=("k",)))
    job = Job(
        id="j", kind="convert", title="Alice", state=JobState.RUNNING, params={}, progress=progress.to_dict()
    )
    rows, line, can_regenerate = flagged_rows(job, store)
    assert [(r.chapter, r.chunk, r.text) for r in rows] == [(2, 7, "Down the rabbit hole.")]
    assert "5 passed" in line and not can_regenerate
    assert row_choice(rows[0]) == (
        "chapter 2 · chunk 7 — the audio is 0.30 of the expected length: cut off or words skipped",
        "2:7",
    )


def _flagged_row(tmp_path: Path, key: str, chapter: int, *findings: Finding) -> ReviewRow:
    take = TakeRecord(
        number=1,
        seed=None,
        finish_reason="stop",
        duration_s=1.0,
        expected_s=1.0,
        duration_ratio=1.0,
        silence_share=0.1,
        longest_internal_silence_s=0.0,
        clipped_share=0.0,
        failures=findings,
    )
    record = ChunkRecord(key=key, text="text", level="asr", verdict=Verdict.FLAGGED, chosen=1, takes=(take,))
    return ReviewRow(chapter, "", 1, "text", tmp_path / f"{key}.wav", record)


def test_the_inbox_filters_by_the_kind_each_check_recorded(tmp_path: Path) -> None:
    from omni_web.pipeline.review_inbox import inbox_page

    # Two wordings of a voice finding and a gap: the filter goes by kind, never by the sentence.
    rows = [
        _flagged_row(
            tmp_path, "a", 1, Finding(FindingKind.VOICE, "sounds like another voice: similarity 0.41")
        ),
        _flagged_row(
            tmp_path,
            "b",
            2,
            Finding(FindingKind.VOICE, "a voice unlike the reference (0.52)"),
            Finding(FindingKind.GAP, "6 words not heard: 'x'", {"words": 6}, "x"),
        ),
        _flagged_row(tmp_path, "c", 2, Finding(FindingKind.OTHER, "an old report's sentence")),
    ]
    page = inbox_page(rows)
    assert dict(page.reasons) == {FindingKind.VOICE: 2, FindingKind.GAP: 1, FindingKind.OTHER: 1}
    assert [r.record.key for r in inbox_page(rows, reason="voice").matching] == ["a", "b"]
    assert [r.record.key for r in inbox_page(rows, reason=FindingKind.GAP, chapter=2).matching] == ["b"]
    assert inbox_page(rows, reason="no such kind").matching == ()


def test_a_report_written_before_findings_had_kinds_still_opens(tmp_path: Path) -> None:
    from omni_web.pipeline.review import open_review, review_rows

    take = {
        "number": 1,
        "seed": None,
        "finish_reason": "stop",
        "duration_s": 0.4,
        "expected_s": 2.0,
        "duration_ratio": 0.2,
        "silence_share": 0.1,
        "longest_internal_silence_s": 0.0,
        "clipped_share": 0.0,
        "failures": ["the audio is 0.20 of the expected length: cut off or words skipped"],
    }
    QaStore(tmp_path / "cache").save(
        ChunkRecord.from_dict(
            {
                "key": "k1",
                "text": "Down the rabbit hole.",
                "level": "basic",
                "verdict": "flagged",
                "chosen": 1,
                "takes": [take],
            }
        )
    )
    # The document a version before the record wrote: no drift, no asr_device, sentences for failures.
    old = {
        "version": 1,
        "title": "Alice",
        "written_at": "2026-01-01T00:00:00Z",
        "qa": {"level": "basic", "takes": 3, "asr_model": "tiny.en"},
        "counts": {"passed": 0, "retaken": 0, "flagged": 1, "accepted": 0, "unchecked": 0},
        "cache_dir": str(tmp_path / "cache"),
        "request": {"book_path": "alice.epub", "model_key": "m"},
        "chunks": [
            {
                "chapter": 1,
                "chapter_title": "One",
                "chunk": 1,
                "key": "k1",
                "text": "Down the rabbit hole.",
                "verdict": "flagged",
                "chosen": 1,
                "note": "",
                "audio": "k1.wav",
                "figures": take,
                "takes": [take],
            }
        ],
        "parts_dir": str(tmp_path / "parts"),
        "chapter_files": {"1": "001-x.m4a"},
    }
    path = tmp_path / "Alice.qa.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    target = open_review(path)
    assert target.report.count(Verdict.FLAGGED) == 1 and target.report.chapter_file(1) == "001-x.m4a"
    [row] = review_rows(target)
    assert row.kinds == (FindingKind.OTHER,) and row.first_reason.startswith("the audio is 0.20")
    assert accept_chunks(target, [(1, 1)]) == 1
    again = read_report(path)
    assert (
        again.count(Verdict.ACCEPTED) == 1 and again.chunks[0].figures.failures[0].kind is FindingKind.OTHER
    )
