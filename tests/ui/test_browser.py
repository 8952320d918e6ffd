"""The web UI in a real browser: Playwright drives Debian's chromium through ``webapp.py``.

A new user's path: open the printed URL, log in with the printed password, start the (fake)
server from the Server tab, upload an EPUB, generate, watch the job finish, download the m4b.
A second test refreshes the page mid-job and finds the job still running. Screenshots of every
tab go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.browser_kit import (
    LONG_S,
    expect,
    job_badge,
    serve_webapp,
    shot,
    tab,
    upload_test_book,
)
from tests.ui.helpers import AppProcess, cache_model

pytestmark = pytest.mark.browser
# Slow enough that a long book is still rendering after a page reload, fast enough for CI.
BROWSER_FAKE_ENV = {"FAKE_SGL_LATENCY_S": "0.4", "FAKE_SGL_SLOTS": "8"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "browser-app", BROWSER_FAKE_ENV)


def _duration_s(path: Path) -> float:
    done = subprocess.run(  # noqa: S603 - fixed argv
        ["ffprobe", "-v", "error", "-show_format", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    )
    return float(json.loads(done.stdout)["format"]["duration"])


def test_epub_to_downloaded_m4b(page, app, tmp_path):
    # Server tab: one downloaded model, so Start asks nothing.
    tab(page, "Server")
    expect(page.locator("#server-status-line")).to_contain_text("stopped")
    expect(page.locator("#server-command textarea")).to_have_value(
        re.compile(r"sgl-omni serve --model-path Qwen/")
    )
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)
    expect(page.locator("#server-status-line")).to_contain_text("Qwen3-TTS 0.6B CustomVoice")
    expect(page.locator("#server-boot-log textarea")).not_to_have_value("", timeout=30_000)

    # Generate tab: the book, its chapters preselected, the model picker in columns.
    upload_test_book(page, "hefty-water.epub", "Hefty Water")
    boxes = page.locator("#gen-chapters input[type=checkbox]")
    expect(boxes).to_have_count(4)
    for index in range(4):
        expect(boxes.nth(index)).to_be_checked()
    expect(page.locator("#gen-model input")).to_have_value(
        re.compile(r"^● Qwen3-TTS 0\.6B CustomVoice\s+tts")
    )
    expect(page.locator("#gen-voice input")).to_have_value("Vivian")
    page.locator("#gen-generate").click()

    # Jobs tab opens on the new job; it finishes; its chapters play; the m4b downloads.
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true")
    expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 1000)
    expect(page.locator("#jobs-table")).to_contain_text("Hefty Water")
    download_button = page.locator("#jobs-download")
    expect(download_button).to_be_visible(timeout=30_000)
    with page.expect_download(timeout=60_000) as info:
        download_button.click()
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert saved.suffix == ".m4b" and _duration_s(saved) > 5
    page.locator('#jobs-chapters [data-play="2"]').click()
    # The chapter plays in the player bar at the foot of the window, from the output folder.
    expect(page.locator("#ow-nowplaying")).to_contain_text("2. The Switch")
    page.wait_for_function(
        "() => document.querySelector('#ow-nowplaying audio').readyState >= 1", timeout=30_000
    )

    # Higgs with a chunk size above its window: a dialog over the page asks first (Higgs is
    # downloaded now; a model that is not would be refused, as Start does).
    cache_model(app.log_path.parent / "hf-cache", "higgs_audio_v3_tts")
    tab(page, "Generate")
    page.locator("#gen-model input").click()
    page.get_by_role("option", name=re.compile(r"Higgs Audio v3 TTS")).click()
    expect(page.locator("#gen-voice input")).to_have_value("Default voice")
    page.locator("#gen-generate").click()
    dialog = page.locator("#gen-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("80 words")
    expect(page.locator("#gen-dialog-clamp")).to_have_text("Set Chunk to 80")
    expect(page.locator("#gen-dialog-keep")).to_be_visible()
    shot(page, "generate-higgs-dialog")
    page.locator("#gen-dialog-cancel").click()
    expect(dialog).to_be_hidden()

    for name in ("Jobs", "Server", "Models", "Setup", "Settings", "Generate"):
        tab(page, name)
        page.wait_for_timeout(1500)  # let the tab's first poll render
        shot(page, name.lower())


def test_a_refresh_mid_job_finds_the_job_still_running(page, app):
    upload_test_book(page, "pg11-alice.epub", "Alice")
    page.get_by_role("button", name="None", exact=True).click()
    boxes = page.locator("#gen-chapters input[type=checkbox]")
    # None has taken effect before the first check: its answer arriving late would clear the checks.
    for index in (5, 15):
        expect(boxes.nth(index)).not_to_be_checked(timeout=60_000)
    # Chapters I-X: about 700 requests, far more rendering than a reload takes even on a loaded
    # machine. Each box is confirmed before the next (a check re-renders the list).
    for index in range(5, 15):
        boxes.nth(index).check()
        expect(boxes.nth(index)).to_be_checked()
    expect(boxes.nth(15)).not_to_be_checked()
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=LONG_S * 1000
    )
    expect(job_badge(page)).to_have_text("running", timeout=LONG_S * 1000)
    expect(page.locator("#jobs-detail")).to_contain_text("Rendering", timeout=LONG_S * 1000)
    page.reload()
    tab(page, "Jobs")
    expect(page.locator("#jobs-detail")).to_contain_text("Alice", timeout=LONG_S * 1000)
    expect(job_badge(page)).to_have_text("running", timeout=LONG_S * 1000)
    shot(page, "jobs-after-refresh")
    # Stop it rather than wait for the whole book: the chunks in flight finish first.
    page.locator("#jobs-cancel").click()
    expect(job_badge(page)).to_have_text("cancelled", timeout=LONG_S * 1000)


def test_server_voices_and_transcription_model_boxes(page):
    tab(page, "Generate")
    expect(page.locator("#gen-voice input")).to_have_value("Vivian", timeout=30_000)
    page.locator("#gen-server-voices").get_by_text("Voices on the server").click()
    info = page.locator("#gen-sv-info")
    expect(info).to_contain_text("speaks only with its built-in speakers")
    page.locator("#gen-model input").click()
    page.get_by_role("option", name=re.compile(r"Higgs Audio v3 TTS")).click()
    # No server, or (after the first test) one hosting another model: either way, where to start it.
    expect(info).to_contain_text("Start Higgs Audio v3 TTS in the Server tab")
    page.locator("#gen-sv-upload").click()  # no clip chosen and no server: says what to do
    expect(page.get_by_text("Start Higgs Audio v3 TTS in the Server tab").first).to_be_visible()
    shot(page, "generate-server-voices")

    tab(page, "Settings")
    status = page.locator("#settings-whisper-status")
    expect(status).to_contain_text("not downloaded")
    expect(status).to_contain_text("faster-whisper small")
    expect(page.locator("#settings-whisper-install")).to_be_visible()
    shot(page, "settings-transcriber")
