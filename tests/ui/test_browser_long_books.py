"""The web UI for long books and many of them, in Debian's chromium through ``webapp.py``.

One walk per concern, sharing one app: the voice menu follows the server (a Start, a remote URL
saved on the Server tab) without a reload, with one key per voice whichever list spelled it. The
servers here list their speakers in lower case, as the real Qwen3-TTS checkpoint does, while the
catalog spells them as the model card does. Screenshots go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.sgl_omni import FakeServer, start_fake_server
from tests.ui.browser_kit import LONG_S, expect, serve_webapp, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, cache_model

pytestmark = pytest.mark.browser

FAKE_ENV = {"FAKE_SGL_LATENCY_S": "0.05", "FAKE_SGL_SLOTS": "16"}
# The checkpoint's speaker table as the real config.json has it: lower case.
ALL_SPEAKERS = ("vivian", "serena", "uncle_fu", "dylan", "eric", "ryan", "aiden", "ono_anna", "sohee")
REMOTE_SPEAKERS = ("vivian", "serena", "uncle_fu", "ryan")


def _speak_lower_case(snapshot: Path, speakers: tuple[str, ...]) -> Path:
    """Give a cached model's config the checkpoint's lower-case speaker table (a fresh file, not the blob)."""
    config = snapshot / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    config.unlink()
    data["talker_config"] = {"spk_id": {name: 3000 + i for i, name in enumerate(speakers)}}
    config.write_text(json.dumps(data), encoding="utf-8")
    return snapshot


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    for running in serve_webapp(tmp_path_factory, "long-books-app", FAKE_ENV):
        _speak_lower_case(cache_model(running.log_path.parent / "hf-cache", MODEL), ALL_SPEAKERS)
        yield running


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeServer]:
    """An sgl-omni started elsewhere (the user's own), with fewer speakers than the catalog."""
    base = tmp_path_factory.mktemp("remote")
    snapshot = _speak_lower_case(cache_model(base / "hf-cache", MODEL), REMOTE_SPEAKERS)
    with start_fake_server(str(snapshot), env={"FAKE_SGL_WARMUP_S": "0.1"}, log_path=base / "remote.log") as server:
        yield server


def _toasts(page, text: str):
    return page.locator(".toast-body").filter(has_text=text)


def _preview_plays(page) -> None:
    page.locator("#gen-preview").click()
    expect(page.locator("#gen-notice")).to_contain_text("Preview:", timeout=LONG_S * 1000)
    expect(_toasts(page, "voice menu")).to_have_count(0)


def _voice_options(page) -> list[str]:
    page.locator("#gen-voice input").click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    page.locator(".ow-header").click()  # let go of the box, so the next update lands in it
    return [text.replace("✓", "").strip() for text in options]  # the chosen one carries a tick


def test_the_voice_menu_follows_the_server(page, app, remote, tmp_path):
    from tests.conftest import DATA_DIR

    # The page opens with no server: the menu is the catalog's ("Vivian").
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(DATA_DIR / "hefty-water.epub"))
    expect(page.locator("#gen-book")).to_contain_text("Hefty Water", timeout=60_000)
    expect(page.locator("#gen-voice input")).to_have_value("Vivian")

    # Start on the Server tab; back on Generate without a reload, Preview works with the same voice.
    tab(page, "Server")
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)
    tab(page, "Generate")
    expect(page.locator("#gen-voice input")).to_have_value("Vivian")
    _preview_plays(page)
    assert len(_voice_options(page)) == len(ALL_SPEAKERS)

    # A remote URL saved on the Server tab: its four speakers, and a working Preview, without a reload.
    tab(page, "Server")
    page.locator("#server-remote-url textarea, #server-remote-url input").first.fill(remote.base_url)
    page.locator("#server-save-remote").click()
    expect(page.locator("#server-notice")).to_contain_text("Remote URL set", timeout=30_000)
    tab(page, "Generate")
    expect(page.locator("#gen-model-info")).to_contain_text("served by the remote server", timeout=30_000)
    options = _voice_options(page)
    assert options == ["Vivian", "Ryan", "Serena", "Uncle Fu"], options  # the default first
    expect(page.locator("#gen-voice input")).to_have_value("Vivian")
    _preview_plays(page)
    shot(page, "generate-menu-follows-remote")

    # The remote goes away: the menu falls back to the catalog's nine, still without a reload.
    remote.stop()
    expect(page.locator("#gen-model-info")).not_to_contain_text("served by the remote", timeout=60_000)
    assert len(_voice_options(page)) == len(ALL_SPEAKERS)
    tab(page, "Server")
    page.locator("#server-remote-url textarea, #server-remote-url input").first.fill("")
    page.locator("#server-save-remote").click()
    expect(page.locator("#server-notice")).to_contain_text("Remote URL cleared", timeout=30_000)
