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


def _refresh_until(page, locator, pattern: re.Pattern[str]) -> None:
    """Refresh the review panel by hand until ``locator`` shows ``pattern`` (chunks are flagged
    only after their takes, as the job goes on)."""
    for _ in range(60):
        page.locator("#review-refresh").click()
        try:
            expect(locator).to_contain_text(pattern, timeout=5000)
            return
        except AssertionError:
            continue
    expect(locator).to_contain_text(pattern)


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
    _refresh_until(page, summary, re.compile(r"[1-9]\d* flagged.*so far"))
    expect(page.locator("#jobs-table")).to_contain_text("running")
    first = page.locator("#review-text textarea").input_value()
    assert first.strip(), "no flagged chunk shown"
    expect(page.locator("#review-detail")).to_contain_text("silent")

    page.locator("#review-accept").click()
    status = page.locator("#review-status")
    expect(status).to_contain_text(re.compile(r"Accepted chapter \d+, chunk \d+ as it is"), timeout=60_000)
    shot(page, "jobs-review-running")

    # The one chunk accepted may have been the only one flagged so far: the next comes with its takes.
    _refresh_until(page, page.locator("#review-accept-all"), re.compile(r"Accept all [1-9]"))
    page.locator("#review-accept-all").click()
    page.locator("#review-confirm-go").click()
    expect(status).to_contain_text(re.compile(r"Accepted [1-9][\d,]* chunks?"), timeout=60_000)
    page.locator("#review-refresh").click()
    expect(summary).to_contain_text(re.compile(r"[1-9]\d* accepted"))  # in the job's own counts
    # Still rendering: nothing of the above waited for the end of the job.
    expect(page.locator("#jobs-table")).to_contain_text("running")
    page.locator("#jobs-cancel").click()
    expect(page.locator("#jobs-table")).to_contain_text("cancelled", timeout=120_000)


def test_a_job_queued_before_the_pages_first_poll_shows_in_the_jobs_table(page, tmp_path):
    # The page's live poll is held back until the new job runs, so its first answer already has the
    # job while the table on the page was drawn without it: the job's state then stays the same
    # for minutes, and the table showed "No jobs yet" all that time (seen in a full run).
    let_through = {"open": False}

    def hold(route) -> None:
        if let_through["open"]:
            route.continue_()
            return
        answer = route.fetch()
        if "running" in answer.json()["parts"]["jobs-table"]:
            let_through["open"] = True
            route.fulfill(response=answer)
        else:
            route.abort()

    page.route("**/live/poll*", hold)
    book = _long_book(tmp_path / "long-whale.epub")
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text("Long Whale", timeout=60_000)
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true",
                                                                               timeout=60_000)
    table = page.locator("#jobs-table")
    expect(table).to_contain_text("running", timeout=120_000)
    assert let_through["open"]
    page.locator("#jobs-cancel").click()
    expect(table).to_contain_text("cancelled", timeout=120_000)
