"""The job's progress and result records: one schema, JSON both ways, old and new documents read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble import ChapterAudio
from omni_web.master.records import ChapterState
from omni_web.pipeline import ChapterProgress, ConvertProgress, ConvertResult, PhaseProgress, PhaseState
from omni_web.records import JsonRecord


def test_progress_round_trips_through_json_with_the_stored_key_names(tmp_path: Path) -> None:
    progress = ConvertProgress(
        phase="rendering", title="Alice", model="qwen3_tts", chunks_done=3, chunks_total=10, audio_s=12.5,
        eta_s=40.0, chapters=(ChapterProgress(1, "Down the Rabbit-Hole", "ready", tmp_path / "01.flac", 61.2),
                              ChapterProgress(2, "The Pool of Tears")),
    )
    doc = json.loads(json.dumps(progress.to_dict()))
    assert doc["chunks_done"] == 3 and doc["phase"] == "rendering" and doc["eta_s"] == 40.0
    assert doc["chapters"][0] == {"number": 1, "title": "Down the Rabbit-Hole", "state": "ready",
                                  "audio_path": str(tmp_path / "01.flac"), "duration_s": 61.2}
    assert ConvertProgress.from_dict(doc) == progress
    assert progress.fraction == 0.3
    assert [c.number for c in progress.ready_chapters()] == [1]


def test_a_partial_or_newer_document_still_reads() -> None:
    # The worker reports only a phase before the server is up; a later version may add keys.
    early = ConvertProgress.from_dict({"phase": "starting server", "message": "Getting a server"})
    assert early.phase == "starting server" and early.chunks_done == 0 and early.fraction is None
    newer = ConvertProgress.from_dict({"chunks_done": 2, "chunks_total": 4, "qa_retakes": 7,
                                       "chapters": [{"number": 1, "loudness_lufs": -18}]})
    assert newer.fraction == 0.5 and newer.chapters == (ChapterProgress(number=1),)
    assert ConvertProgress.from_dict(None) == ConvertProgress()


def test_with_chapter_changes_one_row_only() -> None:
    progress = ConvertProgress(chapters=(ChapterProgress(1, "One"), ChapterProgress(2, "Two")))
    changed = progress.with_chapter(2, state=ChapterState.MASTERING)
    assert [c.state for c in changed.chapters] == [ChapterState.PENDING, ChapterState.MASTERING]
    assert [c.state for c in progress.chapters] == ["pending", "pending"]  # frozen: the old one is unchanged


def test_result_round_trips_and_keeps_its_stored_shape(tmp_path: Path) -> None:
    result = ConvertResult(
        output_dir=tmp_path / "Alice", m4b=tmp_path / "Alice" / "Alice.m4b", mp3_dir=None,
        chapters=(ChapterAudio(1, "Down the Rabbit-Hole", tmp_path / "01.flac", 61234),),
        chunks_total=12, chunks_cached=4, duration_s=61.23456,
    )
    doc = json.loads(json.dumps(result.to_dict()))
    expected = {
        "output_dir": str(tmp_path / "Alice"), "m4b": str(tmp_path / "Alice" / "Alice.m4b"), "mp3_dir": None,
        "chapters": [{"number": 1, "title": "Down the Rabbit-Hole", "path": str(tmp_path / "01.flac"),
                      "duration_s": 61.234}],
        "chunks_total": 12, "chunks_cached": 4, "duration_s": 61.235,
        "readalong_epub": None, "levels_path": None, "levels": None, "acx_dir": None, "chunk_starts_ms": None,
        "qa_report": None,
    }
    assert {key: doc[key] for key in expected} == expected  # fields added later (read-along, ...) may follow
    back = ConvertResult.from_dict(doc)
    assert back.m4b == result.m4b and back.chapters == result.chapters and back.chunks_cached == 4


def test_a_new_field_is_one_line() -> None:
    @dataclass(frozen=True, slots=True)
    class Extended(JsonRecord):
        chunks_done: int = 0
        loudness_lufs: float | None = None
        folder: Path | None = None

    record = Extended.from_dict({"chunks_done": 1, "loudness_lufs": -19, "folder": "/x"})
    assert record == Extended(1, -19.0, Path("/x")) and isinstance(record.loudness_lufs, float)
    assert Extended.from_dict(record.to_dict()) == record


def test_chapter_and_phase_states_are_enums_in_the_record_and_words_in_its_json() -> None:
    progress = ConvertProgress(
        chapters=(ChapterProgress(1, "One", state=ChapterState.READY, audio_path=Path("a.m4a")),),
        phases=(PhaseProgress(name="rendering", state=PhaseState.ACTIVE),),
    )
    doc = json.loads(json.dumps(progress.to_dict()))
    assert doc["chapters"][0]["state"] == "ready" and doc["phases"][0]["state"] == "active"
    again = ConvertProgress.from_dict(doc)
    assert again.chapters[0].state is ChapterState.READY and again.phases[0].state is PhaseState.ACTIVE
    assert again.ready_chapters() == again.chapters


def test_a_server_away_and_back_is_shown_while_it_lasts_and_logged() -> None:
    from omni_web.pipeline.progress import MAX_EVENTS, ConvertProgress

    doc = ConvertProgress(message="Rendering")
    away = doc.server_said("The server died; restarting it.", at=100.0)
    assert (
        away.server_status == away.message == "The server died; restarting it."
        and away.server_down_since == 100.0
    )
    still = away.server_said("Waiting for http://gpu:8100, down since 10:00.", at=105.0)
    assert still.server_down_since == 100.0  # down since the first line, not the latest
    back = ConvertProgress.from_dict(still.server_said("", at=112.0).to_dict())  # stored and read back
    assert back.server_status == "" and back.server_down_since is None
    assert [e.text for e in back.events][-1] == "The server answers again after 12 s; the job goes on."
    assert len(back.events) == 3 and doc.server_said("", at=1.0) == doc  # nothing was away: nothing logged
    many = doc
    for n in range(MAX_EVENTS + 5):
        many = many.with_event(f"event {n}", at=float(n))
    assert len(many.events) == MAX_EVENTS and many.events[-1].text == f"event {MAX_EVENTS + 4}"


def test_an_estimate_comes_from_the_books_finished_here() -> None:
    from omni_web.jobs import Job, JobState
    from omni_web.library import estimate_book

    def done(model: str, words: int, took_s: float, at: float) -> Job:
        return Job(
            id=f"j{at}",
            kind="convert",
            title="B",
            state=JobState.DONE,
            params={"model_key": model},
            progress={"words": words},
            created_at=at,
            started_at=at,
            finished_at=at + took_s,
        )

    assert "No book has finished" in estimate_book(5000, []).line
    jobs = [done("a", 10_000, 500.0, 1.0), done("b", 10_000, 100.0, 2.0), done("a", 50, 1.0, 3.0)]
    same = estimate_book(6000, jobs, model_key="a")  # the 50-word regenerate says nothing about speed
    assert same.words_per_s == 20.0 and same.seconds == 300.0 and same.model_matched
    assert "About 5 min for 6,000 words" in same.line and "this model's last 1 book" in same.line
    other = estimate_book(6000, jobs, model_key="c")
    assert other.books == 2 and other.words_per_s == 20_000 / 600 and not other.model_matched


def test_the_jobs_list_eta_is_the_longest_phase_still_going() -> None:
    from omni_web.jobs import Job, JobState
    from omni_web.pipeline.progress import ConvertProgress, PhaseProgress, PhaseState
    from omni_web.ui.jobview import job_eta_s

    phases = (
        PhaseProgress(name="rendering", state=PhaseState.DONE, eta_s=0.0),
        PhaseProgress(name="chapters", state=PhaseState.ACTIVE, eta_s=900.0),
        PhaseProgress(name="book", state=PhaseState.ACTIVE, eta_s=None),
    )
    doc = ConvertProgress(eta_s=0.0, phases=phases).to_dict()
    job = Job(id="j", kind="convert", title="B", state=JobState.RUNNING, params={}, progress=doc)
    assert job_eta_s(job) == 900.0  # not the renderer's 0:00 while chapters are mastered


def test_a_job_stored_by_an_older_version_still_loads_through_its_records(tmp_path: Path) -> None:
    """A jobs.sqlite from before the steering columns, layouts, phases, failed chunks and kept
    mastering: the store opens it, and the request, progress and result read through their records."""
    import sqlite3

    from omni_web.api.models import job_out
    from omni_web.deliver.layout import OutputLayout
    from omni_web.jobs import JobState, JobStore
    from omni_web.library import job_files
    from omni_web.pipeline import ConvertRequest
    from omni_web.qa import QaLevel

    out = tmp_path / "out" / "Old Book"
    out.mkdir(parents=True)
    (out / "Old Book.m4b").write_bytes(b"m4b")
    (out / "001.m4a").write_bytes(b"m4a")
    params = {
        "book_path": "/books/old.epub",
        "model_key": "qwen3_tts_0_6b_customvoice",
        "voice": {"kind": "speaker", "name": "Vivian"},
        "chapters": [1, 2],
        "chunk_words": 90,
        "output_format": "m4b",
        "qa_level": "basic",
        "output_name": "Old Book",
    }
    progress = {
        "phase": "done",
        "message": "2 chapters",
        "chunks_done": 8,
        "chunks_total": 8,
        "eta_s": None,
        "chapters": [{"number": 1, "title": "One", "state": "ready", "audio_path": str(out / "001.m4a")}],
    }
    result = {
        "output_dir": str(out),
        "m4b": str(out / "Old Book.m4b"),
        "chunks_total": 8,
        "duration_s": 61.5,
        "chapters": [{"number": 1, "title": "One", "path": str(out / "001.m4a"), "duration_s": 30.25}],
    }
    db = tmp_path / "jobs.sqlite"
    with sqlite3.connect(db) as conn:  # the first release's table, before the steering columns
        conn.execute(
            "CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL, state TEXT "
            "NOT NULL, params TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '{}', result TEXT NOT NULL "
            "DEFAULT '{}', error TEXT NOT NULL DEFAULT '', cancel_requested INTEGER NOT NULL DEFAULT 0, "
            "created_at REAL NOT NULL, started_at REAL, finished_at REAL, updated_at REAL NOT NULL, "
            "seq INTEGER NOT NULL)"
        )
        conn.execute(
            "INSERT INTO jobs VALUES ('old', 'convert', 'Old Book', 'done', ?, ?, ?, '', 0, 1, 2, 3, 3, 1)",
            (json.dumps(params), json.dumps(progress), json.dumps(result)),
        )
    (job,) = JobStore(db).list()
    assert job.state is JobState.DONE and job.priority == 0 and not job.paused
    request = ConvertRequest.from_dict(job.params)
    assert (
        request.output_layout is OutputLayout.FLAT and request.qa_level is QaLevel.BASIC
    )  # closed sets: enums
    assert request.footnotes is None and request.mastering == ()
    assert request.voice.name == "Vivian" and request.chapters == (1, 2) and request.metadata == ()
    assert ConvertRequest.from_dict(request.to_dict()) == request
    stored = request.to_dict()  # the plain words, in the shape old versions read
    assert (stored["output_layout"], stored["qa_level"], stored["voice"]["name"], stored["mastering"]) == (
        "flat",
        "basic",
        "Vivian",
        {},
    )
    assert json.loads(json.dumps(stored)) == stored
    doc = ConvertProgress.from_dict(job.progress)
    assert (doc.chunks_done, doc.chunks_failed, doc.failed_chunks, doc.phases) == (8, 0, (), ())
    assert doc.chapters[0].number == 1 and doc.fraction == 1.0
    done = ConvertResult.from_dict(job.result)
    assert done.m4b == out / "Old Book.m4b" and done.missing_chunks == () and done.levels is None
    assert [(c.index, c.duration_ms) for c in done.chapters] == [(1, 30250)]
    api = job_out(job).progress
    assert (api.phase, api.chunks_done, api.chunks_failed, api.fraction) == ("done", 8, 0, 1.0)
    files = {f.rel: f.kind for f in job_files(job, tmp_path / "out")}
    assert files == {"Old Book/Old Book.m4b": "book", "Old Book/001.m4a": "chapter"}


def test_params_that_lack_fields_read_tolerantly_for_the_jobs_tab() -> None:
    from omni_web.client import VoiceKind
    from omni_web.jobs import Job, JobState
    from omni_web.pipeline import ConvertRequest
    from omni_web.ui.jobview import voice_of

    assert ConvertRequest.read({}).model_key == "" and ConvertRequest.read(None).output_dir is None
    bare = ConvertRequest.read(
        {
            "book_path": "/b.epub",
            "voice": {"kind": "speaker", "name": "vivian"},
            "output_dir": "/out",
            "qa_level": "loud",
        }
    )  # an unknown word: book and model only
    assert (bare.book_path, bare.model_key, bare.voice.kind, bare.output_dir) == (
        Path("/b.epub"),
        "",
        VoiceKind.DEFAULT,
        None,
    )
    job = Job(
        id="j",
        kind="convert",
        title="B",
        state=JobState.DONE,
        params={
            "book_path": "/b.epub",
            "model_key": "qwen3_tts_0_6b_customvoice",
            "voice": {"kind": "clone", "reference": "/v/narrator.wav"},
        },
    )
    assert voice_of(job) == "clone of narrator.wav"
    speaker = Job(
        id="k",
        kind="convert",
        title="B",
        state=JobState.DONE,
        params={"voice": {"kind": "speaker", "name": "vivian"}},
    )  # no model: the name as stored
    assert voice_of(speaker) == "vivian"


def test_a_fix_plan_keeps_its_stored_shape_and_reads_from_the_params() -> None:
    from omni_web.jobs import Job, JobState
    from omni_web.library import fix_of, same_server_work
    from omni_web.pipeline.fix import FIX_KEY, FixPlan

    plan = FixPlan((4,), (1, 2, 3))
    assert json.dumps(plan.to_dict()) == '{"chapters": [4], "reused": [1, 2, 3], "whole_book": ""}'
    params = {"book_path": "/b.epub", "model_key": "m", FIX_KEY: plan.to_dict()}
    fix = Job(id="f", kind="convert", title="B", state=JobState.QUEUED, params=params)
    book = Job(
        id="b",
        kind="convert",
        title="B",
        state=JobState.RUNNING,
        params={"book_path": "/b.epub", "model_key": "m"},
    )
    assert fix_of(fix) == plan and fix_of(book) is None
    assert same_server_work(book, fix) and not same_server_work(
        book,
        Job(
            id="o",
            kind="convert",
            title="B",
            state=JobState.QUEUED,
            params={**params, "api_url": "http://gpu:8000"},
        ),
    )


def test_the_finished_line_says_the_absolute_figures() -> None:
    from omni_web.cli.convert import throughput_line

    doc = ConvertProgress(
        realtime_factor=62.14,
        peak_in_flight=72,
        server_full_at=64,
        refusals=2,
        gpu_line="GPU 87% busy (mean), memory up to 61.2 of 80.0 GiB",
        audio_per_gpu_s=71.4,
    )
    assert throughput_line(doc) == (
        "Throughput: 62.1 s of audio per wall second; up to 72 requests in flight (server full at ~64); "
        "2 refused by the server's full queue; GPU 87% busy (mean), memory up to 61.2 of 80.0 GiB, "
        "71 s of audio per GPU-second"
    )
    assert throughput_line(ConvertProgress()) == ""
    # Stored and read back, an older document without the fields still reads.
    assert ConvertProgress.from_dict(doc.to_dict()).in_flight_line == ""
    assert ConvertProgress.from_dict({"phase": "done"}).peak_in_flight == 0
