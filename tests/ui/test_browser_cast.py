"""The cast panel in a real browser: a fixture book's characters listed, one mapped to a third
voice, and its sample line heard from the running (fake) server in that voice."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.browser_kit import LONG_S, expect, serve_webapp, shot, tab, upload_test_book
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "browser-cast", {}, request_log=True)


def _pick(view, elem_id: str, option: str) -> None:
    view.locator(f"#{elem_id} input").click()
    view.get_by_role("option", name=option, exact=True).click()


def test_cast_screen_lists_characters_and_a_third_voice_is_heard(page, app) -> None:  # noqa: F811
    tab(page, "Server")
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)

    upload_test_book(page, "pg11-alice.epub", "Alice")
    page.locator("#cast-panel").get_by_text("Cast: dialogue and characters").click()
    characters = page.locator("#cast-characters")
    for name in ("Alice", "Hatter", "March Hare", "Dormouse", "Queen"):
        expect(characters).to_contain_text(name, timeout=60_000)
    expect(characters).to_contain_text("Why is a raven like a writing-desk?")

    _pick(page, "cast-dialogue", "Ryan")
    expect(page.locator("#cast-use input")).to_be_checked(timeout=30_000)
    _pick(page, "cast-character", "Hatter")
    _pick(page, "cast-voice", "Eric")
    page.locator("#cast-assign").click()
    expect(page.locator("#cast-notice")).to_contain_text("Hatter", timeout=30_000)
    row = characters.locator("tr", has_text="Hatter").first
    expect(row).to_contain_text("Eric")

    page.locator("#cast-hear").click()
    expect(page.locator("#cast-notice")).to_contain_text("Hatter: “", timeout=60_000)
    expect(page.locator("#cast-audio [data-testid=\"waveform-Cast preview\"] audio")).to_have_attribute(
        "src", re.compile(r"^blob:"), timeout=30_000)
    shot(page, "generate-cast")
    log = Path(app.log_path).parent / "requests.jsonl"  # beside webapp.log (see the app fixture)
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert sent[-1]["voice"] == "Eric"  # the character's own voice, not the narrator's or the dialogue's


def test_two_names_of_one_person_are_merged_on_the_cast_screen(page, app) -> None:  # noqa: F811
    upload_test_book(page, "pg11-alice.epub", "Alice")
    page.locator("#cast-panel").get_by_text("Cast: dialogue and characters").click()
    characters = page.locator("#cast-characters")
    expect(characters).to_contain_text("Frog-Footman", timeout=60_000)
    page.locator("#cast-names").get_by_text("Names: one person under two names").click()
    expect(page.locator("#cast-hints")).to_contain_text("may be", timeout=30_000)
    # Picking one of a pair the rules left apart offers the other for the merge: two clicks.
    _pick(page, "cast-character", "Footman")
    expect(page.locator("#cast-same-as input")).to_have_value("Frog-Footman", timeout=30_000)
    page.locator("#cast-merge").click()
    expect(page.locator("#cast-notice")).to_contain_text("Footman is Frog-Footman now", timeout=30_000)
    # One row for him now, his other name beside it; the same edit the CLI's --merge saves.
    first = characters.locator("tr td:first-child")
    expect(first.filter(has_text=re.compile(r"^Footman$"))).to_have_count(0, timeout=30_000)
    row = characters.locator("tr").filter(has=page.locator("td:first-child", has_text="Frog-Footman"))
    expect(row.locator("td").nth(1)).to_have_text("Footman")
    shot(page, "generate-cast-names")
