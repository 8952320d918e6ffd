"""The cast panel in a real browser: a fixture book's characters listed, one mapped to a third
voice, and its sample line heard from the running (fake) server in that voice."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.server import ServerManager
from omni_web.settings import load_settings
from tests.fakes.sgl_omni import free_port
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, cache_model, prepare_root, start_webapp
from tests.ui.test_browser import CHROMIUM, LONG_S, _shot, _tab, _upload, browser, page  # noqa: F401

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it)")
    base = tmp_path_factory.mktemp("browser-cast")
    paths = prepare_root(base / "home", model_keys=(MODEL,))
    cache_model(base / "hf-cache", MODEL)
    env = {"HF_HUB_CACHE": str(base / "hf-cache"), "FAKE_SGL_REQUEST_LOG": str(base / "requests.jsonl")}
    running = start_webapp(paths, port=free_port(), host="0.0.0.0", env=env, log_path=base / "webapp.log")
    try:
        yield running
    finally:
        running.stop()
        ServerManager(paths, load_settings(paths)).stop(grace_s=5.0)


def _pick(view, elem_id: str, option: str) -> None:
    view.locator(f"#{elem_id} input").click()
    view.get_by_role("option", name=option, exact=True).click()


def test_cast_screen_lists_characters_and_a_third_voice_is_heard(page, app) -> None:  # noqa: F811
    _tab(page, "Server")
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)

    _upload(page, "pg11-alice.epub", "Alice")
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
    _shot(page, "generate-cast")
    log = Path(app.log_path).parent / "requests.jsonl"  # beside webapp.log (see the app fixture)
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert sent[-1]["voice"] == "Eric"  # the character's own voice, not the narrator's or the dialogue's
