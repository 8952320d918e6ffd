"""Jobs tab handlers through gradio_client: a book goes from upload to a downloadable m4b, jobs
queue in order for two users, cancel and resume, and only output files are served."""

from __future__ import annotations

import html
import io
import itertools
import json
import re
import subprocess
import threading
import zipfile
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from gradio_client import handle_file

from omni_web.jobs import JobState
from tests.conftest import DATA_DIR
from tests.ui.conftest import MODEL, PASSWORD, USER
from tests.ui.helpers import wait_for


def _ffprobe(path: Path) -> dict:
    done = subprocess.run(  # noqa: S603 - fixed argv
        ["ffprobe", "-v", "error", "-show_format", "-show_chapters", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout)


_CHUNK_SIZES = itertools.count(100, 10)


def _submit(client, book: str = "hefty-water.epub", chapters: list[int] | None = None,
            chunk_words: int | None = None) -> str:
    """Queue a job; each call asks for another chunk size unless told, so no two are twins."""
    client.predict(api_name="/generate_load")
    _, _, chapter_update, *_ = client.predict(handle_file(DATA_DIR / book), api_name="/book_upload")
    chosen = chapters if chapters is not None else chapter_update["value"]
    words = chunk_words or next(_CHUNK_SIZES)
    notice, job_id, *_ = client.predict(chosen, MODEL, "speaker:Vivian", "", "", words, api_name="/generate")
    assert job_id and "Queued" in notice
    return job_id


def _wait_finished(app, job_id: str, timeout_s: float = 120):
    return wait_for(lambda: (job := app.services.library.jobs.get(job_id)).state.finished and job,
                    timeout_s=timeout_s, what=f"job {job_id} to finish")


def _value(output):
    """A component's value whether the API returned it bare or inside an update."""
    return output.get("value") if isinstance(output, dict) else output


def _href(markup: str) -> str:
    match = re.search(r'id="jobs-download" href="([^"]+)"', markup)
    assert match, markup
    return html.unescape(match.group(1))


def _link(markup: str) -> Path:
    """The file the Jobs tab's download link serves."""
    return Path(unquote(_href(markup).removeprefix("gradio_api/file=")))


def _logged_in(app) -> httpx.Client:
    http = httpx.Client(base_url=app.url, timeout=30)
    http.post("/login", data={"username": USER, "password": PASSWORD}).raise_for_status()
    return http


def test_a_book_goes_from_upload_to_a_downloadable_m4b(ui_app):
    client = ui_app.client()
    job_id = _submit(client)
    seen_running = False
    picked = []  # the pick's values sent; an update of the choices alone keeps the one shown

    def refresh():
        nonlocal seen_running
        outputs = client.predict(job_id, api_name="/jobs_refresh")
        picked.append(_value(outputs[1]))
        seen_running |= "running" in outputs[2] or "queued" in outputs[2]
        return outputs if "badge ow-ok\">done" in outputs[2] else None

    overview, pick, detail, downloads, chapters, _levels = wait_for(
        refresh, timeout_s=120, interval_s=0.5, what="the job to be done on the Jobs tab")
    job = ui_app.services.library.jobs.get(job_id)
    assert job.state is JobState.DONE, job.error
    assert "Hefty Water" in overview and job_id in overview
    assert "Qwen3-TTS 0.6B CustomVoice" in overview and MODEL not in overview  # names as users read them
    assert picked[0] == job_id and set(picked) <= {job_id, None}
    assert job_id in str(pick)
    assert "done" in detail and "Finished:" in detail
    assert seen_running or job.finished_at - job.created_at < 2.0
    # The download link serves the job's own file from the output folder (no copy in Gradio's cache).
    m4b = _link(downloads)
    assert m4b == Path(job.result["m4b"]).resolve() and m4b.is_relative_to(ui_app.paths.outputs_dir.resolve())
    where = m4b.relative_to(ui_app.paths.outputs_dir.resolve()).as_posix()
    assert f"In the output folder: <code>{where}</code>" in downloads  # where the file is, shown
    shown = re.sub(r"<[^>]+>", " ", downloads)  # the text a user reads (links carry their own URLs)
    assert str(ui_app.paths.outputs_dir) not in shown  # never the server's absolute path
    http = _logged_in(ui_app)
    served = http.get("/" + _href(downloads))
    assert served.status_code == 200 and served.content == m4b.read_bytes()
    probe = _ffprobe(m4b)
    assert float(probe["format"]["duration"]) > 5
    assert [c["tags"]["title"] for c in probe["chapters"]] == ["Hefty Water", "The Switch", "The Source",
                                                               "Hefty Ruby Water"]
    # Every finished chapter has a play button (a fresh page gets the whole table at once).
    chapters = ui_app.client().predict(job_id, api_name="/jobs_refresh")[4]
    assert re.findall(r'data-play="(\d+)"', chapters) == ["1", "2", "3", "4"]
    assert "Hefty Ruby Water" in chapters and "4 of 4 ready" in chapters


def _log_in(context, ui_app):
    """A page of ``context`` logged in to the app."""
    page = context.new_page()
    page.goto(ui_app.url)
    page.locator("input[type=text]").fill(USER)
    page.locator("input[type=password]").fill(PASSWORD)
    page.get_by_role("button", name="Login").click()
    return page


def _wait_until_it_stays(page, selector: str) -> None:
    """Until the element has stayed 5 s: the page's first ticks may send a panel again (same
    content, new elements), and a click whose element is replaced between press and release goes
    nowhere."""
    page.wait_for_function(
        """(selector) => { const a = document.querySelector(selector);
        if (!a) { return false; } a.seen = a.seen || Date.now(); return Date.now() - a.seen > 5000; }""",
        arg=selector,
        polling=500,
        timeout=60_000,
    )


@pytest.mark.browser
def test_the_finished_book_downloads_through_links_not_server_paths(ui_app, browser, tmp_path):
    from tests.ui.browser_kit import VIEWPORT, expect, job_badge, require_chromium, shot, tab

    require_chromium()
    # The book the test above converted.
    job = next(job for job in ui_app.services.library.jobs.list() if job.state is JobState.DONE)
    m4b = Path(job.result["m4b"])
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    try:
        page = _log_in(context, ui_app)
        tab(page, "Jobs")
        expect(job_badge(page)).to_have_text("done", timeout=60_000)
        panel = page.locator("#jobs-downloads")
        expect(panel.locator("#jobs-download")).to_have_text(f"⬇ {m4b.name}")
        expect(panel.locator("#jobs-download-mp3")).to_have_text("MP3 files (zip)")
        texts = panel.locator("a").all_inner_texts()
        assert texts and not any("/" in text for text in texts), texts  # names, never server paths
        where = panel.locator(".ow-where")  # small, for copying by hand: from the output folder
        expect(where).to_contain_text(f"In the output folder: {m4b.parent.name}/{m4b.name}")
        assert str(m4b.parent.parent) not in where.inner_text()  # never the server's absolute path

        # The m4b, as the link serves it.
        base = ui_app.url + "/"
        served = page.request.get(base + panel.locator("#jobs-download").get_attribute("href"))
        assert served.status == 200 and served.body() == m4b.read_bytes()
        # A click on "MP3 files (zip)" downloads one MP3 per chapter, cut from the m4b (no MP3 setting).
        _wait_until_it_stays(page, "#jobs-download-mp3")
        with page.expect_download(timeout=180_000) as info:
            panel.locator("#jobs-download-mp3").click()
        assert info.value.suggested_filename == f"{m4b.stem} - MP3.zip"
        saved = tmp_path / "mp3.zip"
        info.value.save_as(saved)
        with zipfile.ZipFile(saved) as archive:
            names = archive.namelist()
            archive.extractall(tmp_path / "mp3")
        assert [n for n in names if n.endswith(".mp3")] == [
            "01 - Hefty Water.mp3",
            "02 - The Switch.mp3",
            "03 - The Source.mp3",
            "04 - Hefty Ruby Water.mp3",
        ]
        lengths = [
            float(_ffprobe(tmp_path / "mp3" / n)["format"]["duration"]) for n in names if n.endswith(".mp3")
        ]
        assert abs(sum(lengths) - float(_ffprobe(m4b)["format"]["duration"])) < 0.5, lengths
        expect(panel).to_contain_text(re.compile(r"MP3 files \(zip\)\s+\d+(\.\d)? [KM]B"))  # made: its size
        # "Download all": the m4b and the four MP3s in one zip.
        everything = page.request.get(
            base + panel.locator("#jobs-download-all").get_attribute("href"), timeout=180_000
        )
        assert everything.status == 200
        with zipfile.ZipFile(io.BytesIO(everything.body())) as archive:
            assert archive.read(m4b.name) == m4b.read_bytes()
            assert sum(n.startswith("MP3/") and n.endswith(".mp3") for n in archive.namelist()) == 4
        shot(page, "jobs-downloads")

        # The Shelf offers the same links on the book's card.
        tab(page, "Shelf")
        card = page.locator(".ow-shelf-book").filter(has_text="Hefty Water").first
        mp3_link = card.get_by_role("link", name="MP3 files (zip)")
        expect(mp3_link).to_be_visible(timeout=30_000)
        assert not any("/" in text for text in card.locator("a").all_inner_texts())
        zipped = page.request.get(base + mp3_link.get_attribute("href"))
        assert zipped.status == 200 and zipped.body() == saved.read_bytes()  # the cached zip
        everything = page.request.get(
            base + card.get_by_role("link", name="Download all (zip)").get_attribute("href"), timeout=180_000
        )
        assert (
            everything.status == 200 and m4b.name in zipfile.ZipFile(io.BytesIO(everything.body())).namelist()
        )
        shot(page, "shelf-downloads")
    finally:
        context.close()
    stranger = browser.new_context()
    try:
        href = f"{ui_app.url}/downloads/job/{job.id}/mp3.zip"
        assert stranger.request.get(href).status == 401
    finally:
        stranger.close()


@pytest.mark.browser
def test_downloads_never_leave_the_page(ui_app, browser):
    """Every download link of the Jobs tab and of the Shelf card saves a file and leaves the page
    where it was: same document (a mark set on it survives), same tab (zip links once reloaded the
    app onto the Generate tab)."""
    from tests.ui.browser_kit import VIEWPORT, expect, job_badge, require_chromium, tab

    require_chromium()
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    try:
        page = _log_in(context, ui_app)
        tab(page, "Jobs")
        expect(job_badge(page)).to_have_text("done", timeout=60_000)
        page.evaluate("() => { window.owStayed = 'here'; }")
        card = page.locator(".ow-shelf-book").filter(has_text="Hefty Water").first
        for tab_name, links in (
            ("Jobs", page.locator("#jobs-dl-list a")),
            ("Shelf", card.locator(".ow-dl-row a")),
        ):
            tab(page, tab_name)
            expect(links.first).to_be_visible(timeout=30_000)
            names = links.all_inner_texts()
            assert len(names) >= 3, names  # the m4b, MP3 files (zip), Download all (zip)
            for index, name in enumerate(names):
                link = links.nth(index)
                _wait_until_it_stays(page, f'[id="{link.get_attribute("id")}"]')
                with page.expect_download(timeout=180_000) as info:
                    link.click()
                assert info.value.failure() is None, (name, info.value.failure())
                assert page.evaluate("() => window.owStayed") == "here", f"{name!r} reloaded the page"
                expect(page.get_by_role("tab", name=tab_name, exact=True)).to_have_attribute(
                    "aria-selected", "true"
                )
    finally:
        context.close()


def test_only_output_and_voice_files_are_served(ui_app):
    job = next(
        job
        for job in ui_app.services.library.jobs.list()
        if job.state is JobState.DONE and job.result.get("m4b")
    )
    anonymous = httpx.get(f"{ui_app.url}/gradio_api/file={job.result['m4b']}", timeout=30)
    assert anonymous.status_code in (401, 403)
    http = _logged_in(ui_app)
    served = http.get(f"/gradio_api/file={job.result['m4b']}")
    assert served.status_code == 200 and served.content == Path(job.result["m4b"]).read_bytes()
    for private in (
        ui_app.paths.jobs_db,
        ui_app.paths.settings_file,
        next(ui_app.paths.logs_dir.glob("*.log")),
        ui_app.paths.backend_venv / "pyvenv.cfg",
        DATA_DIR / "hefty-water.epub",
    ):
        assert http.get(f"/gradio_api/file={private}").status_code == 403, private


def test_a_second_session_sees_the_same_jobs(ui_app):
    jobs_before = ui_app.services.library.jobs.list()
    overview, *_ = ui_app.client().predict(api_name="/jobs_load")
    for job in jobs_before:
        assert job.id in overview


def test_two_users_submitting_at_once_both_finish_in_order(ui_app):
    clients = [ui_app.client(), ui_app.client()]
    ids: list[str] = []
    errors: list[BaseException] = []

    def submit(client) -> None:
        try:
            ids.append(_submit(client))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=submit, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors and len(ids) == 2
    jobs = sorted((_wait_finished(ui_app, job_id) for job_id in ids), key=lambda job: job.created_at)
    assert all(job.state is JobState.DONE for job in jobs), [job.error for job in jobs]
    first, second = jobs
    # One GPU server: in queue order; the second starts beside the first only once the first's last
    # chunks are in flight (the worker's hand-off, tests/test_jobs_queue.py), never before it.
    assert second.started_at >= first.started_at


def test_cancel_a_queued_and_a_running_job_then_resume(ui_app):
    client = ui_app.client()
    # Small chunks make the long job long even on the fast fake server (~2,000 requests): the worker
    # rightly hands the server on once a render is due to end within seconds (services.HAND_OFF_LEAD_S),
    # which at the usual chunk size came before this test had cancelled the queued job.
    long_id = _submit(client, "pg11-alice.epub", chunk_words=20)
    short_id = _submit(client, "hefty-water.epub")
    queued = ui_app.services.library.jobs.get(short_id)
    assert queued.state is JobState.QUEUED
    wait_for(
        lambda: ui_app.services.library.jobs.get(long_id).state is JobState.RUNNING,
        timeout_s=30,
        what="the long job to start",
    )
    overview, _pick, detail, *_ = client.predict(short_id, api_name="/jobs_refresh")
    assert "queued, #1 in line" in overview and "Waiting: #1 in the queue" in detail
    client.predict(short_id, api_name="/job_cancel")
    assert ui_app.services.library.jobs.get(short_id).state is JobState.CANCELLED
    wait_for(
        lambda: (ui_app.services.library.jobs.get(long_id).progress.get("chunks_done") or 0) > 0,
        timeout_s=60,
        what="the long job to render its first chunks",
    )
    client.predict(long_id, api_name="/job_cancel")
    cancelled = _wait_finished(ui_app, long_id, timeout_s=60)
    assert cancelled.state is JobState.CANCELLED
    assert cancelled.progress["chunks_done"] < cancelled.progress["chunks_total"]
    outputs = client.predict(short_id, api_name="/job_resume")
    assert short_id in outputs[0]
    assert _wait_finished(ui_app, short_id).state is JobState.DONE
    assert ui_app.services.library.jobs.get(long_id).state is JobState.CANCELLED  # untouched until resumed


def test_mp3_chapters_are_offered_when_the_setting_asks_for_them(ui_app):
    settings = ui_app.services.settings
    ui_app.services.save_settings(replace(settings, also_mp3_chapters=True))
    try:
        job_id = _submit(ui_app.client(), chapters=[2, 3])
        job = _wait_finished(ui_app, job_id)
    finally:
        ui_app.services.save_settings(settings)
    assert job.state is JobState.DONE, job.error
    outputs = ui_app.client().predict(job_id, api_name="/jobs_refresh")
    m4b = _link(outputs[3])
    assert m4b.suffix == ".m4b" and m4b.is_file()
    # The MP3s are links in one fold, served from the output folder (no copies, no settings box).
    fold = outputs[3][outputs[3].index('id="jobs-mp3s"') :]
    hrefs = [html.unescape(h) for h in re.findall(r'href="(gradio_api/file=[^"]+\.mp3)"', fold)]
    mp3s = [Path(unquote(h.removeprefix("gradio_api/file="))) for h in hrefs]
    assert len(mp3s) == 2 and "MP3 chapters · 2 files" in fold
    assert all(_ffprobe(path)["format"]["format_name"] == "mp3" for path in mp3s)
    assert _logged_in(ui_app).get("/" + hrefs[0]).content == mp3s[0].read_bytes()
    # Its "MP3 files (zip)" holds those very files (zipped, not cut from the m4b again).
    zipped = _logged_in(ui_app).get(f"/downloads/job/{job_id}/mp3.zip")
    assert zipped.status_code == 200
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        assert sorted(n for n in archive.namelist() if n.endswith(".mp3")) == sorted(p.name for p in mp3s)
        assert archive.read(mp3s[0].name) == mp3s[0].read_bytes()


def test_two_voices_keep_two_books_and_a_twin_opens_the_first(ui_app):
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    ids = []
    for voice in ("speaker:Vivian", "speaker:Ryan"):
        _, job_id, *_ = client.predict([2, 3], MODEL, voice, "", "", 250, api_name="/generate")
        assert job_id
        ids.append(job_id)
    first, second = (_wait_finished(ui_app, job_id) for job_id in ids)
    assert first.state is second.state is JobState.DONE, (first.error, second.error)
    books = [Path(job.result["m4b"]) for job in (first, second)]
    # The library layout: each narrator version in its own folder of the book's author.
    assert books[0] != books[1] and books[0].parent.parent == books[1].parent.parent
    assert all(book.is_file() for book in books)
    assert "Vivian" in books[0].parent.name and "Ryan" in books[1].parent.name
    narrators = [_ffprobe(book)["format"]["tags"].get("composer", "") for book in books]
    assert "Vivian" in narrators[0] and "Ryan" in narrators[1]
    # The Jobs tab shows where each job's file is.
    downloads = client.predict(ids[0], api_name="/jobs_refresh")[3]
    assert books[0].name in html.unescape(downloads) and _link(downloads) == books[0].resolve()
    # The same request again: no twin is queued, the page offers the existing job instead.
    before = len(ui_app.services.library.jobs.list())
    notice, job_id, _, _, confirm = client.predict(
        [2, 3], MODEL, "speaker:Vivian", "", "", 250, api_name="/generate"
    )
    assert job_id == "" and "already exists" in confirm and ids[0] in confirm
    assert len(ui_app.services.library.jobs.list()) == before
    notice, job_id, *_ = client.predict(
        [2, 3], MODEL, "speaker:Vivian", "", "", 250, api_name="/generate_open_twin"
    )
    assert job_id == ids[0]


def test_run_again_is_a_new_job_with_its_own_queue_time_and_the_same_book(ui_app):
    client = ui_app.client()
    job_id = _submit(client, chapters=[2])
    first = _wait_finished(ui_app, job_id)
    assert first.state is JobState.DONE, first.error
    outputs = client.predict(job_id, api_name="/job_rerun")
    again_id = _value(outputs[1])
    assert again_id and again_id != job_id  # the page follows the new row
    again = _wait_finished(ui_app, again_id)
    assert again.state is JobState.DONE, again.error
    assert (
        again.created_at > first.created_at
        and ui_app.services.library.jobs.get(job_id).state is JobState.DONE
    )
    assert again.result["m4b"] == first.result["m4b"]  # the same file, rebuilt from cached chunks
    assert "Vivian" in outputs[0]  # the jobs list names the voice


def test_the_page_opens_on_the_running_job_not_the_newest_queued_one() -> None:
    from omni_web.jobs import Job
    from omni_web.ui.jobs import default_job

    newest_first = [
        Job(id=i, kind="convert", title=i, state=s, params={})
        for i, s in (("q2", JobState.QUEUED), ("q1", JobState.QUEUED), ("r", JobState.RUNNING))
    ]
    assert default_job(newest_first) == "r"
    assert default_job(newest_first[:2]) == "q2" and default_job([]) is None
