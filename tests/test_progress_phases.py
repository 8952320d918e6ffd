"""Every phase of a conversion reports its own count and ETA, and a resumed run starts from what is
already made (chunks counted, finished chapters still "ready"), against the fake sgl-omni."""

from __future__ import annotations

import html

from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.jobs import Job, JobState
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertProgress, ConvertRequest, PhaseProgress, PhaseState, plan_conversion
from omni_web.pipeline.tracking import ProgressTracker
from omni_web.render import RenderProgress
from omni_web.settings import Settings
from omni_web.ui.jobview import job_detail_html
from tests.conftest import DATA_DIR
from tests.test_pipeline import FAST, convert


def _phase(doc: dict, name: str) -> dict:
    return next(row for row in doc["phases"] if row["name"] == name)


def test_each_phase_has_its_own_progress(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    settings = Settings(also_mp3_chapters=True)
    result, docs = convert(data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"),
                           settings=settings)
    assert [row["name"] for row in docs[0]["phases"]] == ["rendering", "chapters", "book", "mp3"]
    last = docs[-1]
    assert all(row["state"] == PhaseState.DONE for row in last["phases"]), last["phases"]
    assert _phase(last, "rendering")["done"] == last["chunks_total"]
    assert _phase(last, "chapters")["done"] == len(result.chapters) == 4
    assert _phase(last, "book") == {**_phase(last, "book"), "done": 100, "total": 100, "unit": "%"}
    # The book file's phase moved on its own while the rendering one was already full.
    encoding = [d for d in docs if _phase(d, "rendering")["state"] == PhaseState.DONE
                and _phase(d, "book")["state"] != PhaseState.PENDING]
    assert encoding and any(_phase(d, "book")["state"] == PhaseState.DONE for d in encoding)
    assert last["words"] > 0


def test_a_resumed_run_starts_from_what_is_done(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    first, _ = convert(
        data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"), chapters=(2, 3)
    )
    _, docs = convert(
        data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"), chapters=(2, 3)
    )
    opening = docs[0]
    assert opening["chunks_done"] == opening["chunks_total"] == opening["chunks_cached"] > 0
    # The first snapshot already shows the finished chapters ready, with their files and lengths,
    # and the chapters phase counts them; no chapter ever goes back from "ready".
    assert [c["state"] for c in opening["chapters"]] == ["ready", "ready"]
    assert [c["audio_path"] for c in opening["chapters"]] == [str(c.path) for c in first.chapters]
    assert all(c["duration_s"] > 0 for c in opening["chapters"])
    assert _phase(opening, "chapters")["done"] == 2 and opening["chapters_mastered"] == 2
    assert all(c["state"] == "ready" for doc in docs for c in doc["chapters"])
    assert docs[-1]["chapters_mastered"] == 2  # confirmed again by the finisher, not counted twice
    assert docs[-1]["chunks_cached"] == opening["chunks_total"]
    assert [str(c.path) for c in first.chapters] == [c["audio_path"] for c in docs[-1]["chapters"]]


def test_phase_eta_comes_from_its_own_rate() -> None:
    phase = PhaseProgress(name="chapters", total=10)
    started = phase.advanced(2, now=100.0, baseline=2)  # two found done: no rate yet
    assert started.state == PhaseState.ACTIVE and started.eta_s is None and started.started_at == 100.0
    later = started.advanced(4, now=110.0, baseline=2)  # 2 more in 10 s: 6 left = 30 s
    assert later.eta_s == 30.0
    assert later.advanced(10, now=130.0, baseline=2).state == PhaseState.DONE


def test_a_chunk_given_up_settles_rendering_and_is_named_in_the_jobs_tab() -> None:
    """One poison chunk of 88: rendering reads done with 1 failed, not a stopped 87/88."""
    model = "qwen3_tts_0_6b_customvoice"
    book = load_book(DATA_DIR / "hefty-water.epub")
    request = ConvertRequest(
        book_path=DATA_DIR / "hefty-water.epub", model_key=model, voice=VoiceChoice.speaker("Vivian")
    )
    docs: list = []
    tracker = ProgressTracker(plan_conversion(book, request, get_entry(model), Settings()), docs.append)
    total = tracker.doc.chunks_total
    named = "chunk 3 of chapter 2 ('Water'): \"The bucket\""
    tracker.gave_up([named])
    tracker.render(
        RenderProgress(
            chunks_done=total - 1,
            chunks_total=total,
            chunks_cached=0,
            audio_s=60.0,
            rendered_audio_s=60.0,
            elapsed_s=30.0,
            chunks_failed=1,
        )
    )
    doc = docs[-1]
    rendering = doc.phase_named("rendering")
    assert rendering.state is PhaseState.DONE and rendering.eta_s is None
    assert rendering.counts == f"{total - 1}/{total} chunks, 1 failed"
    assert doc.fraction == 1.0 and doc.chunk_counts == f"{total - 1}/{total} chunks, 1 failed"
    stored = ConvertProgress.from_dict(doc.to_dict())
    assert (stored.chunks_failed, stored.failed_chunks) == (1, (named,))
    job = Job(
        id="j", kind="convert", title="Hefty Water", state=JobState.DONE, params={}, progress=doc.to_dict()
    )
    page = job_detail_html(job, 0)
    assert f"{total - 1}/{total} chunks, 1 failed · done" in page
    assert "Not in the book" in page and html.escape(named) in page


def test_finishing_chapters_behind_rendering_shows_no_eta_of_its_own() -> None:
    """Chapters are finished as they are rendered: their bar says it keeps up, not rendering's ETA again."""
    phases = (PhaseProgress(name="rendering", label="Rendering", done=40, total=276, unit="chunks",
                            state=PhaseState.ACTIVE, eta_s=600.0),
              PhaseProgress(name="chapters", label="Finishing chapters", done=10, total=138, unit="chapters",
                            state=PhaseState.ACTIVE, eta_s=600.0))
    doc = ConvertProgress(phase="rendering", chunks_done=40, chunks_total=276, phases=phases)
    job = Job(id="j", kind="convert", title="Long Whale", state=JobState.RUNNING, params={},
              progress=doc.to_dict())
    page = job_detail_html(job, 0)
    assert page.count("ETA 10:00") == 1 and "10/138 chapters · keeps up with rendering" in page


def test_during_an_outage_the_job_says_it_waits_and_shows_no_frozen_eta() -> None:
    from omni_web.ui.jobview import jobs_table_html

    phases = (
        PhaseProgress(
            name="rendering",
            label="Rendering",
            done=40,
            total=276,
            unit="chunks",
            state=PhaseState.ACTIVE,
            eta_s=600.0,
        ),
    )
    doc = ConvertProgress(
        phase="rendering",
        chunks_done=40,
        chunks_total=276,
        phases=phases,
        server_status="Waiting for the server at http://127.0.0.1:8100",
        server_down_since=1.0,
    )
    job = Job(
        id="j", kind="convert", title="Long Whale", state=JobState.RUNNING, params={}, progress=doc.to_dict()
    )
    table = jobs_table_html([job], {})
    assert "waiting for server" in table and "10:00" not in table
    page = job_detail_html(job, 0)
    assert "40/276 chunks · waits for the server" in page and "ETA 10:00" not in page
