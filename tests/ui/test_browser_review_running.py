"""Review and accept while the book renders: a 138-chapter book against a server whose every take
is silent, so QA flags chunks from the first minute. The review panel lists them while the job
runs, and Accept (one chunk) and Accept all (with its confirmation) take them at once; the job goes
on rendering, and the panel's counts move the accepted chunks out of "flagged" (they stayed there:
the running job counts only what it saw). Regenerate still waits for the end of the job."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.ui.browser_kit import expect, serve_webapp, shot, tab
from tests.ui.helpers import AppProcess
from tests.ui.test_browser_long_books import _long_book

pytestmark = pytest.mark.browser

# Every take silent (QA flags each chunk after its takes); slow enough to render for minutes.
FAKE_ENV = {"FAKE_SGL_FAULTS": "silent", "FAKE_SGL_FAULT_SHARE": "1.0", "FAKE_SGL_LATENCY_S": "1.0",
            "FAKE_SGL_SLOTS": "4"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "review-running-app", FAKE_ENV)


def test_review_and_accept_work_while_the_book_renders(page, tmp_path):
    book = _long_book(tmp_path / "long-whale.epub")
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text("Long Whale", timeout=60_000)
    page.get_by_role("button", name="All", exact=True).click()
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true",
                                                                               timeout=60_000)
    page.get_by_text("Review audio QA").click()
    summary = page.locator("#review-summary")
    # Refreshed by hand until the job has flagged a few chunks (each needs its takes first).
    for _ in range(60):
        page.locator("#review-refresh").click()
        try:
            expect(summary).to_contain_text(re.compile(r"[1-9]\d* flagged.*so far"), timeout=5000)
            break
        except AssertionError:
            continue
    expect(summary).to_contain_text("so far")
    expect(page.locator("#jobs-table")).to_contain_text("running")
    first = page.locator("#review-text textarea").input_value()
    assert first.strip(), "no flagged chunk shown"
    expect(page.locator("#review-detail")).to_contain_text("silent")

    page.locator("#review-accept").click()
    status = page.locator("#review-status")
    expect(status).to_contain_text(re.compile(r"Accepted chapter \d+, chunk \d+ as it is"), timeout=60_000)
    shot(page, "jobs-review-running")

    page.locator("#review-refresh").click()
    expect(page.locator("#review-accept-all")).to_have_text(re.compile(r"Accept all [1-9]"), timeout=60_000)
    page.locator("#review-accept-all").click()
    page.locator("#review-confirm-go").click()
    expect(status).to_contain_text(re.compile(r"Accepted [1-9][\d,]* chunks?"), timeout=60_000)
    page.locator("#review-refresh").click()
    expect(summary).to_contain_text(re.compile(r"[1-9]\d* accepted"))  # in the job's own counts
    # Still rendering: nothing of the above waited for the end of the job.
    expect(page.locator("#jobs-table")).to_contain_text("running")
    page.locator("#jobs-cancel").click()
