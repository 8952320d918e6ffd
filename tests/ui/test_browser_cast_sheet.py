"""The cast sheet in a real browser: voices picked for Alice's main characters with one box, a
character's line heard from the running (fake) server in the voice picked for them, the LLM pass
against a fake chat server with its cost told and the characters it found listed twice merged, and
the review list worked through with one click."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.paths import DataPaths
from omni_web.settings import load_settings, save_settings
from tests.fakes.fake_chat import FakeChat, alias_groups, asked_quotes, serve_fake_chat
from tests.ui.browser_kit import LONG_S, expect, serve_webapp, shot, tab, upload_test_book
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser


def _cautious(user: str) -> str:
    """A labeller sure of every other quote it is asked about (Alice, C1), unsure of the rest; asked
    who is listed twice, the Footman and the Frog-Footman."""
    if "Label these quotes" not in user:
        return alias_groups(user, ("Footman", "Frog-Footman"))
    return json.dumps({"labels": [{"quote": n, "speaker": "C1", "confidence": 0.9 if k % 2 else 0.3,
                                   "delivery": "neutral"} for k, n in enumerate(asked_quotes(user))]})


@pytest.fixture(scope="module")
def chat() -> Iterator[tuple[FakeChat, str]]:
    fake = FakeChat(answer=_cautious)
    with serve_fake_chat(fake) as url:
        yield fake, url


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, chat) -> Iterator[AppProcess]:
    for running in serve_webapp(tmp_path_factory, "browser-cast-sheet", {}, request_log=True):
        paths = DataPaths(Path(running.log_path).parent / "home")
        save_settings(
            paths, dataclasses.replace(load_settings(paths), llm_url=chat[1] + "/v1", llm_model="fake-7b")
        )
        yield running


def _to_review(page) -> int:
    text = page.locator("#cast-review").inner_text()
    match = re.search(r"(\d+) quotes to review", text)
    assert match, text
    return int(match.group(1))


def test_cast_sheet_picks_voices_plays_a_line_labels_with_the_llm_and_reviews(page, app, chat) -> None:  # noqa: F811
    tab(page, "Server")
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)
    upload_test_book(page, "pg11-alice.epub", "Alice")
    page.locator("#cast-sheet-panel").get_by_text("Cast sheet: voices for every character").click()
    review = page.locator("#cast-review")
    expect(review).to_contain_text("quotes to review", timeout=90_000)
    before = _to_review(page)

    page.locator("#cast-auto input").check()
    expect(page.locator("#cast-auto input")).to_be_checked()
    # The picks wait behind the sheet's first drawing in one queue: slow on a loaded two-core machine.
    sheet = page.locator("#cast-sheet")
    for name in ("Alice", "Hatter", "Queen"):
        expect(sheet.locator("tr", has_text=name).first).to_contain_text("picked", timeout=LONG_S * 1000)
    voices = [
        sheet.locator("tr", has_text=n).first.locator("td").nth(2).inner_text() for n in ("Alice", "Hatter")
    ]
    assert voices[0] != voices[1] and "Vivian" not in voices  # distinct, and not the narrator's

    page.locator("#cast-sheet-play button", has_text="▶ Hatter").click()
    notice = page.locator("#cast-sheet-notice")
    expect(notice).to_contain_text("Hatter: “", timeout=LONG_S * 1000)
    log = Path(app.log_path).parent / "requests.jsonl"
    assert json.loads(log.read_text().splitlines()[-1])["voice"] == voices[1]

    page.locator("#cast-llm-run").click()
    expect(notice).to_contain_text("The LLM labelled the unsure quotes", timeout=120_000)
    expect(notice).to_contain_text("requests")
    expect(notice).to_contain_text("merged them: Frog-Footman is Footman", timeout=LONG_S * 1000)
    fake, _ = chat
    assert fake.received and fake.received[0]["model"] == "fake-7b"
    labelled = _to_review(page)
    assert 0 < labelled < before  # the sure half left the list, the unsure half stays

    page.locator("#cast-review-assign").click()  # the first quote, its best guess: one click
    expect(notice).to_contain_text("is ", timeout=LONG_S * 1000)
    expect(notice).to_contain_text("the next render redoes only its chunk")
    expect(review).to_contain_text(f"{labelled - 1} quotes to review", timeout=LONG_S * 1000)
    shot(page, "generate-cast-sheet")
