"""The QA review panel in a real browser: a finished book with flagged chunks, one regenerated.

The book is made in this process against a fake server that answers 30 % of requests with silence
(one take per chunk, so those are flagged), and recorded as a finished job. The app then runs
against a clean fake server; the review panel lists the flagged chunks, Regenerate queues a job,
and that job sends exactly one request and rebuilds the m4b, while a long book renders on the
same server and model, and with a mastering setting changed since the book was made.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from omni_web.client import SpeechClient, VoiceChoice
from omni_web.jobs import JobState, JobStore
from omni_web.library import CONVERT_JOB
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.pipeline.review import REGENERATE_PRIORITY
from omni_web.qa import Verdict, find_report, read_report
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
    faulty = start_fake_server(
        MODEL,
        env={"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "0.3"},
        log_path=tmp_path / "faulty.log",
    )
    try:
        request = ConvertRequest(
            book_path=DATA_DIR / "wasteland.epub",
            model_key=MODEL,
            voice=VoiceChoice.speaker("Vivian"),
            chapters=(2, 3),
            qa_takes=1,
            chunk_words=40,
        )
        with SpeechClient(faulty.base_url) as client:
            result = run_conversion(request, paths=paths, settings=load_settings(paths), client=client)
    finally:
        faulty.stop()
    store = JobStore(paths.jobs_db)
    job = store.enqueue(CONVERT_JOB, request.to_dict(), title="The Waste Land")
    store.claim_next()
    store.finish(job.id, JobState.DONE, result=result.to_dict())
    log = tmp_path / "requests.jsonl"
    # Every request takes three seconds, so the long book below renders for minutes.
    clean = start_fake_server(
        MODEL,
        env={"FAKE_SGL_REQUEST_LOG": str(log), "FAKE_SGL_LATENCY_S": "3.0"},
        log_path=tmp_path / "clean.log",
    )
    # A mastering setting changed since the book was made (a fix must still master as the book was).
    settings = yaml.safe_load(paths.settings_file.read_text()) | {
        "remote_url": clean.base_url,
        "aac_bitrate_kbps": 96,
    }
    paths.settings_file.write_text(yaml.safe_dump(settings), encoding="utf-8")
    app = start_webapp(paths, port=free_port(), log_path=tmp_path / "webapp.log")
    try:
        yield (
            app,
            read_report(find_report(result.output_dir)),
            log,
            store,
            _many_chunk_book(tmp_path / "long.epub"),
        )
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


def _long_job_running(store: JobStore, book: Path) -> str:
    """Queue a long book on the same server and model (as the worker sees it), wait until it renders."""
    request = ConvertRequest(
        book_path=book,
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=tuple(range(1, INBOX_CHAPTERS + 1)),
        qa_takes=1,
        chunk_words=20,
    )
    long = store.enqueue(CONVERT_JOB, request.to_dict(), title="Many Chunks")

    def rendering():
        job = store.get(long.id)
        assert job.state in (JobState.QUEUED, JobState.RUNNING), job.error
        return job.state is JobState.RUNNING and (job.progress.get("chunks_done") or 0) > 0

    wait_for(rendering, timeout_s=LONG_S, what="the long book to render")
    return long.id


@pytest.mark.parametrize("samples_first", [False, True], ids=["in-order", "samples-first"])
def test_a_regenerate_during_a_long_job_finishes_in_under_a_minute_and_rebuilds_one_chapter(
    page, reviewed_app, samples_first
) -> None:
    """With "Samples first" on too: the fix is no sample of the book's first chapter (it was once a
    "(sample)" m4b of 1 chapter, queued behind the long book, and the chunk was never fixed)."""
    _app, report, log, store, long_book = reviewed_app
    flagged = [c for c in report.chunks if c.verdict is Verdict.FLAGGED]
    assert flagged
    m4b = Path(next(iter(store.list())).result["m4b"])
    m4b_before = m4b.stat().st_mtime_ns
    mastered = {p.name: p.read_bytes() for p in report.parts_dir.glob("*.m4a")}
    assert len(mastered) == 2  # chapters 2 and 3
    tab(page, "Jobs")
    page.get_by_text("Review audio QA").click()
    page.locator("#review-refresh").click()
    expect(page.locator("#review-summary")).to_contain_text(f"{len(flagged)} flagged", timeout=LONG_S * 1000)
    # The drift report: each chapter's pace (and pitch) over its takes, from the report.
    assert [d.chapter for d in report.drift] == [2, 3] and all(d.pace_median for d in report.drift), (
        report.drift
    )
    drift = page.locator("#review-drift")
    expect(drift.locator("tbody tr")).to_have_count(2)
    expect(drift).to_contain_text(report.drift[0].pace_text)
    expect(drift).to_contain_text(report.drift[1].title)
    first = flagged[0]
    expect(page.locator("#review-detail")).to_contain_text("silent")
    expect(page.locator("#review-text textarea")).to_have_value(first.text)
    shot(page, "jobs-review")
    long_id = _long_job_running(store, long_book)
    if samples_first:  # turned on as a user does, once the long book runs in full
        tab(page, "Queue")
        page.locator("#queue-samples input").check()
        expect(page.locator("#queue-status")).to_contain_text("samples first on")
        tab(page, "Jobs")
    started, clicked_at = time.monotonic(), time.time()
    page.locator("#review-regenerate").click()
    status = page.locator("#review-status")
    expect(status).to_contain_text("Queued job", timeout=60_000)
    expect(status).to_contain_text(f"Only chapter {first.chapter} is rebuilt; the other chapter is reused")
    expect(status).to_contain_text("It starts now")  # the long job is on the same server and model
    shot(page, "jobs-review-fix")

    def fix_done():
        fixes = [job for job in store.list() if job.params.get("fix")]
        assert not fixes or fixes[0].state in (JobState.QUEUED, JobState.RUNNING, JobState.DONE), fixes[
            0
        ].error
        return fixes and fixes[0].state is JobState.DONE and fixes[0]

    fix = wait_for(fix_done, timeout_s=LONG_S, interval_s=0.1, what="the regenerate job to finish")
    seconds = time.monotonic() - started
    long_state = store.get(long_id).state
    store.request_cancel(long_id)
    print(
        f"\nregenerate of one chunk during a long job: {seconds:.1f} s from the click to done "
        f"(click to queued {fix.created_at - clicked_at:.1f} s, queued {fix.started_at - fix.created_at:.1f} "
        "s, "
        f"run {fix.finished_at - fix.started_at:.1f} s; long job {long_state.value}, "
        f"{store.get(long_id).progress.get('chunks_done')} chunks in)"
    )
    assert long_state is JobState.RUNNING  # it ran beside the long job, not after it
    assert seconds < 60
    assert fix.priority == REGENERATE_PRIORITY  # first in line
    assert fix.run_kind == "full" and not fix.sample, (fix.run_kind, fix.sample)
    assert fix.params["output_name"] == m4b.parent.name  # the job's own library folder, rebuilt in place
    texts = {c.text for c in report.chunks}
    requests = [json.loads(line)["input"] for line in log.read_text().splitlines()]
    assert [text for text in requests if text in texts] == [first.text]  # one request: only that chunk
    assert m4b.stat().st_mtime_ns != m4b_before
    assert list(m4b.parents[2].rglob("*.m4b")) == [m4b]
    # The other chapter's mastered file is the very same (mastered as the book was, not at 96 kbit/s).
    after = {p.name: p.read_bytes() for p in report.parts_dir.glob("*.m4a")}
    kept = {name for name, data in mastered.items() if after.get(name) == data}
    assert len(kept) == 1 and not kept.pop().startswith(f"{first.chapter:03d}-")
    assert after != mastered  # the fixed chapter's file was made again
    again = read_report(find_report(m4b.parent))
    assert next(c for c in again.chunks if c.key == first.key).verdict is Verdict.RETAKEN
    wait_for(lambda: store.get(long_id).state.finished, timeout_s=LONG_S, what="the long job to stop")


INBOX_CHAPTERS = 10


def _many_chunk_book(path: Path) -> Path:
    """Ten chapters of about 55 chunks each at 20 words a chunk: over 500 chunks to review."""
    from tests.epub_builder import make_epub, nav_xhtml, xhtml

    sentence = "The long ship sailed north through the cold grey water {n} again."
    documents = [
        (
            f"c{c:02d}.xhtml",
            xhtml(
                f"<h1>Part {c}</h1><p>" + " ".join(sentence.format(n=f"{c}-{n}") for n in range(110)) + "</p>"
            ),
        )
        for c in range(1, INBOX_CHAPTERS + 1)
    ]
    nav = nav_xhtml([(name, f"Part {n}") for n, (name, _) in enumerate(documents, start=1)])
    return make_epub(path, documents, nav=nav, title="Many Chunks", author="Test Writer")


@pytest.fixture
def inbox_app(tmp_path: Path) -> Iterator[tuple[AppProcess, dict, Path]]:
    """A finished book whose every chunk was flagged (each take silent, one take per chunk)."""
    require_chromium()
    paths = prepare_root(tmp_path / "home", model_keys=(MODEL,))
    book = _many_chunk_book(tmp_path / "many.epub")
    faulty = start_fake_server(
        MODEL,
        env={"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "1.0", "FAKE_SGL_SLOTS": "32"},
        log_path=tmp_path / "faulty.log",
    )
    try:
        request = ConvertRequest(
            book_path=book,
            model_key=MODEL,
            voice=VoiceChoice.speaker("Vivian"),
            chapters=tuple(range(1, INBOX_CHAPTERS + 1)),
            qa_takes=1,
            chunk_words=20,
        )
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
    flagged = [c for c in report.chunks if c.verdict is Verdict.FLAGGED]
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
        expect(page.locator("#review-summary")).to_contain_text(
            f"0 retaken, {len(flagged)} flagged, 0 accepted"
        )
        # A chapter filter: only its chunks, and accept-all says how many it takes.
        in_third = sum(1 for c in flagged if c.chapter == 3)
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
        expect(page.locator("#review-status")).to_contain_text(
            f"Accepted {len(flagged):,} chunks", timeout=60_000
        )
        expect(page.locator("#review-summary")).to_contain_text(f"0 flagged, {len(flagged)} accepted")
        expect(page.locator("#jobs-detail")).to_contain_text(f"0 flagged, {len(flagged)} accepted")
        again = read_report(find_report(output_dir))
        assert again.count(Verdict.FLAGGED) == 0 and again.count(Verdict.ACCEPTED) >= len(flagged)
    finally:
        context.close()
