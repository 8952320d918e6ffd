"""The QA review panel in a real browser: a finished book with flagged chunks, one regenerated.

The book is made in this process against a fake server that answers 30 % of requests with silence
(one take per chunk, so those are flagged), and recorded as a finished job. The app then runs
against a clean fake server; the review panel lists the flagged chunks, Regenerate queues a job,
and that job sends exactly one request and rebuilds the m4b.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from omni_web.client import SpeechClient, VoiceChoice
from omni_web.jobs import JobState, JobStore
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.pipeline.review import REGENERATE_PRIORITY
from omni_web.qa import find_report, read_report
from omni_web.services import CONVERT_JOB
from omni_web.settings import load_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port, start_fake_server
from tests.ui.browser_kit import LONG_S, expect, require_chromium, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, prepare_root, start_webapp, wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def reviewed_app(tmp_path: Path) -> Iterator[tuple[AppProcess, dict, Path, JobStore]]:
    require_chromium()
    paths = prepare_root(tmp_path / "home", model_keys=(MODEL,))
    faulty = start_fake_server(MODEL, env={"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "0.3"},
                               log_path=tmp_path / "faulty.log")
    try:
        request = ConvertRequest(book_path=DATA_DIR / "wasteland.epub", model_key=MODEL,
                                 voice=VoiceChoice.speaker("Vivian"), chapters=(2, 3), qa_takes=1, chunk_words=40)
        with SpeechClient(faulty.base_url) as client:
            result = run_conversion(request, paths=paths, settings=load_settings(paths), client=client)
    finally:
        faulty.stop()
    store = JobStore(paths.jobs_db)
    job = store.enqueue(CONVERT_JOB, request.to_dict(), title="The Waste Land")
    store.claim_next()
    store.finish(job.id, JobState.DONE, result=result.to_dict())
    log = tmp_path / "requests.jsonl"
    clean = start_fake_server(MODEL, env={"FAKE_SGL_REQUEST_LOG": str(log)}, log_path=tmp_path / "clean.log")
    settings = yaml.safe_load(paths.settings_file.read_text()) | {"remote_url": clean.base_url}
    paths.settings_file.write_text(yaml.safe_dump(settings), encoding="utf-8")
    app = start_webapp(paths, port=free_port(), log_path=tmp_path / "webapp.log")
    try:
        yield app, read_report(find_report(result.output_dir)), log, store
    finally:
        app.stop()
        clean.stop()


@pytest.fixture
def page(browser, reviewed_app):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(reviewed_app[0].url)  # loopback: no login
    expect(page.get_by_role("tab", name="Jobs")).to_be_visible(timeout=60_000)
    yield page
    context.close()


def test_review_panel_regenerates_one_chunk_and_rebuilds_the_book(page, reviewed_app) -> None:
    _app, report, log, store = reviewed_app
    flagged = [c for c in report["chunks"] if c["verdict"] == "flagged"]
    assert flagged
    m4b = Path(next(iter(store.list())).result["m4b"])
    m4b_before = m4b.stat().st_mtime_ns
    tab(page, "Jobs")
    page.get_by_text("Review audio QA").click()
    page.locator("#review-refresh").click()
    expect(page.locator("#review-summary")).to_contain_text(f"{len(flagged)} flagged", timeout=LONG_S * 1000)
    first = flagged[0]
    expect(page.locator("#review-detail")).to_contain_text("silent")
    expect(page.locator("#review-text textarea")).to_have_value(first["text"])
    shot(page, "jobs-review")
    page.locator("#review-regenerate").click()
    expect(page.locator("#review-status")).to_contain_text("Queued job", timeout=60_000)

    def regenerated_job_done():
        jobs = store.list()
        return len(jobs) == 2 and all(j.state is JobState.DONE for j in jobs)

    wait_for(regenerated_job_done, timeout_s=LONG_S, what="the regenerate job to finish")
    fix = max(store.list(), key=lambda job: job.created_at)
    assert fix.priority == REGENERATE_PRIORITY  # it jumps the queue
    assert fix.params["output_name"] == m4b.parent.name  # the job's own library folder, rebuilt in place
    requests = [json.loads(line)["input"] for line in log.read_text().splitlines()]
    assert requests == [first["text"]]  # one request: only that chunk
    assert m4b.stat().st_mtime_ns != m4b_before
    assert list(m4b.parents[2].rglob("*.m4b")) == [m4b]
    again = read_report(find_report(m4b.parent))
    assert next(c for c in again["chunks"] if c["key"] == first["key"])["verdict"] == "retaken"


INBOX_CHAPTERS = 10


def _many_chunk_book(path: Path) -> Path:
    """Ten chapters of about 55 chunks each at 20 words a chunk: over 500 chunks to review."""
    from tests.epub_builder import make_epub, nav_xhtml, xhtml

    sentence = "The long ship sailed north through the cold grey water {n} again."
    documents = [(f"c{c:02d}.xhtml", xhtml(f"<h1>Part {c}</h1><p>" + " ".join(
        sentence.format(n=f"{c}-{n}") for n in range(110)) + "</p>")) for c in range(1, INBOX_CHAPTERS + 1)]
    nav = nav_xhtml([(name, f"Part {n}") for n, (name, _) in enumerate(documents, start=1)])
    return make_epub(path, documents, nav=nav, title="Many Chunks", author="Test Writer")


@pytest.fixture
def inbox_app(tmp_path: Path) -> Iterator[tuple[AppProcess, dict, Path]]:
    """A finished book whose every chunk was flagged (each take silent, one take per chunk)."""
    require_chromium()
    paths = prepare_root(tmp_path / "home", model_keys=(MODEL,))
    book = _many_chunk_book(tmp_path / "many.epub")
    faulty = start_fake_server(MODEL, env={"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "1.0",
                                           "FAKE_SGL_SLOTS": "32"}, log_path=tmp_path / "faulty.log")
    try:
        request = ConvertRequest(book_path=book, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"),
                                 chapters=tuple(range(1, INBOX_CHAPTERS + 1)), qa_takes=1, chunk_words=20)
        with SpeechClient(faulty.base_url) as client:
            result = run_conversion(request, paths=paths, settings=load_settings(paths), client=client)
    finally:
        faulty.stop()
    store = JobStore(paths.jobs_db)
    job = store.enqueue(CONVERT_JOB, request.to_dict(), title="Many Chunks")
    store.claim_next()
    store.finish(job.id, JobState.DONE, result=result.to_dict())
    app = start_webapp(paths, port=free_port(), log_path=tmp_path / "webapp.log")
    try:
        yield app, read_report(find_report(result.output_dir)), result.output_dir
    finally:
        app.stop()


def test_hundreds_of_flagged_chunks_are_filtered_paged_and_accepted_in_two_clicks(browser, inbox_app) -> None:
    app, report, output_dir = inbox_app
    flagged = [c for c in report["chunks"] if c["verdict"] == "flagged"]
    assert len(flagged) >= 500, len(flagged)
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        page.goto(app.url)
        tab(page, "Jobs")
        page.get_by_text("Review audio QA").click()
        page.locator("#review-refresh").click()
        count = page.locator("#review-count")
        expect(count).to_contain_text(f"{len(flagged):,} flagged chunks · page 1 of", timeout=LONG_S * 1000)
        expect(page.locator("#review-listing tbody tr")).to_have_count(50)  # one page, not hundreds of rows
        # One set of counts: the job line says what the review says.
        expect(page.locator("#jobs-detail")).to_contain_text(f"0 retaken, {len(flagged)} flagged, 0 accepted")
        expect(page.locator("#review-summary")).to_contain_text(f"0 retaken, {len(flagged)} flagged, 0 accepted")
        # A chapter filter: only its chunks, and accept-all says how many it takes.
        in_third = sum(1 for c in flagged if int(c["chapter"]) == 3)
        page.locator("#review-chapter input").click()
        page.get_by_role("option", name=f"Chapter 3 · {in_third}").click()
        expect(count).to_contain_text(f"{in_third:,} of {len(flagged):,} flagged chunks match")
        expect(page.locator("#review-accept-all")).to_have_text(f"Accept all {in_third:,}")
        page.locator("#review-chapter input").click()
        page.get_by_role("option", name="All chapters").click()
        expect(page.locator("#review-accept-all")).to_have_text(f"Accept all {len(flagged):,}")
        shot(page, "jobs-review-inbox")
        # Two clicks: accept all, then confirm.
        page.locator("#review-accept-all").click()
        page.locator("#review-confirm-go").click()
        expect(page.locator("#review-status")).to_contain_text(f"Accepted {len(flagged):,} chunks", timeout=60_000)
        expect(page.locator("#review-summary")).to_contain_text(f"0 flagged, {len(flagged)} accepted")
        expect(page.locator("#jobs-detail")).to_contain_text(f"0 flagged, {len(flagged)} accepted")
        again = read_report(find_report(output_dir))
        assert again["counts"]["flagged"] == 0 and again["counts"]["accepted"] >= len(flagged)
    finally:
        context.close()
