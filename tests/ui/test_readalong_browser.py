"""The read-along player in a real browser: a job made with Read-along, its chapter's text follows
the audio (the right sentence lit at a given time), a click seeks, and the audio is served only
behind the login.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.ui.browser_kit import LONG_S, expect, job_badge, shot, tab, upload_test_book
from tests.ui.test_browser import app  # noqa: F401 - the same webapp as the main browser tests

pytestmark = pytest.mark.browser


def test_player_highlights_the_sentence_being_read_and_seeks_on_click(page, app, browser):  # noqa: F811
    tab(page, "Server")
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)
    upload_test_book(page, "hefty-water.epub", "Hefty Water")
    page.locator("#gen-readalong input[type=checkbox]").check()
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true")
    expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 1000)

    page.locator("#jobs-readalong").get_by_text("Read along").first.click()  # folded under the chapters
    page.locator("#ra-chapter input").click()
    page.get_by_role("option", name=re.compile(r"^2\. The Switch")).click()
    sentences = page.locator("#ra-view .ra-s")
    expect(sentences.first).to_be_visible(timeout=30_000)
    count = sentences.count()
    assert count >= 4
    audio = page.locator("#ra-view audio")
    page.wait_for_function("() => document.querySelector('#ra-view audio').readyState >= 1", timeout=30_000)

    # Put the audio inside the third sentence: exactly that sentence is lit.
    target = sentences.nth(2)
    start = float(target.get_attribute("data-start"))
    end = float(target.get_attribute("data-end"))
    audio.evaluate(f"a => {{ a.currentTime = {(start + end) / 2}; }}")
    expect(target).to_have_class(re.compile(r"\bra-active\b"), timeout=10_000)
    expect(page.locator("#ra-view .ra-active")).to_have_count(1)
    shot(page, "jobs-readalong")

    # A click on the last sentence seeks there (and lights it).
    last = sentences.nth(count - 1)
    last_start = float(last.get_attribute("data-start"))
    clicked = time.monotonic()
    last.click()
    expect(last).to_have_class(re.compile(r"\bra-active\b"), timeout=10_000)
    position = audio.evaluate("a => a.currentTime")
    # The audio may play on from the seek: allow what a busy machine took between click and read.
    assert last_start - 0.01 <= position <= last_start + 0.5 + (time.monotonic() - clicked)

    # The finished job offers the read-along EPUB and the subtitles for download.
    expect(page.locator("#ra-epub")).to_be_visible(timeout=30_000)
    with page.expect_download(timeout=60_000) as info:
        page.locator("#ra-epub").click()
    # Library layout: the EPUB is named after the book, in its narrator version's folder.
    assert info.value.suggested_filename == "Hefty Water.readalong.epub"
    assert re.search(r"/Hefty%20Water%20%7B.+%7D/Hefty%20Water\.readalong\.epub$", info.value.url)
    expect(page.locator("#ra-subtitles")).to_contain_text(".vtt")

    # The audio comes from the app's output folder, and only with a login.
    src = audio.get_attribute("src")
    assert src.startswith("/gradio_api/file=")
    assert page.request.get(app.url + src).status == 200
    stranger = browser.new_context()
    try:
        assert stranger.request.get(app.url + src).status in (401, 403)
    finally:
        stranger.close()
