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

from tests.epub_builder import make_epub, nav_xhtml, xhtml
from tests.fakes.sgl_omni import FakeServer, start_fake_server
from tests.ui.browser_kit import LONG_S, expect, job_badge, log_in, serve_webapp, shot, tab
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


CHAPTERS = 138
PHONE = {"width": 390, "height": 844}


def _long_book(path: Path) -> Path:
    """A Moby-Dick-shaped book: 138 chapters with titles of their own, a few sentences each."""
    documents = [(f"c{n:03d}.xhtml", xhtml(f"<h1>{n}. The Whale Part {n}</h1><p>Call me reader number {n}. "
                                           "The sea was grey and the ship was slow. We sailed on.</p>"))
                 for n in range(1, CHAPTERS + 1)]
    nav = nav_xhtml([(name, f"{n}. The Whale Part {n}") for n, (name, _) in enumerate(documents, start=1)])
    return make_epub(path, documents, nav=nav, title="Long Whale", author="Test Writer")


def _answered_ms(page, click_js: str, done_js: str) -> float:
    """Milliseconds from a click (``click_js``) until ``done_js`` holds, measured in the page."""
    return page.evaluate(f"""() => new Promise((resolve) => {{
      const start = performance.now();
      {click_js};
      const poll = () => ({done_js}) ? resolve(performance.now() - start) : requestAnimationFrame(poll);
      poll();
    }})""")


def test_a_138_chapter_job_page_stays_short_and_quick(page, app, browser, tmp_path):
    book = _long_book(tmp_path / "long-whale.epub")
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text("Long Whale", timeout=60_000)
    page.get_by_role("button", name="All", exact=True).click()
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true",
                                                                               timeout=60_000)
    expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 5 * 1000)
    expect(page.locator("#jobs-chapters [data-play]")).to_have_count(CHAPTERS, timeout=60_000)
    page.wait_for_timeout(2500)  # a tick or two after the end: everything the page will show is there

    # Summary and actions first, then the chapters; the long lists folded, named by chapter.
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 3000, height
    levels = page.locator("#jobs-levels")
    expect(levels).to_contain_text("138 files")
    assert levels.evaluate("e => e.open") is False
    assert "5. The Whale Part 5" in levels.text_content() and ".flac" not in levels.text_content()
    shot(page, "jobs-138-chapters-desktop")

    # Clicks are answered within a second: play in place, unfold the levels.
    play = _answered_ms(page, "document.querySelector('#jobs-chapters [data-play=\"5\"]').click()",
                        "document.querySelector('#ow-nowplaying audio')?.readyState >= 1")
    expect(page.locator("#ow-nowplaying")).to_contain_text("5. The Whale Part 5")
    fold = _answered_ms(page, "document.querySelector('#jobs-levels summary').click()",
                        "document.querySelector('#jobs-levels').open && "
                        "document.querySelector('#jobs-levels table').offsetHeight > 0")
    assert play < 1000 and fold < 1000, (play, fold)
    page.wait_for_timeout(4500)  # two ticks: the open fold stays open
    assert levels.evaluate("e => e.open") is True

    # On a phone: the chapter's play button plays where it is; the player bar is in view.
    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    try:
        phone = context.new_page()
        log_in(phone, app)
        tab(phone, "Jobs")
        button = phone.locator('#jobs-chapters [data-play="40"]')
        button.scroll_into_view_if_needed(timeout=60_000)
        button.click()
        bar = phone.locator("#ow-nowplaying")
        expect(bar).to_contain_text("40. The Whale Part 40")
        box, shown = bar.bounding_box(), button.bounding_box()
        assert box["y"] + box["height"] <= PHONE["height"] + 1 and 0 <= shown["y"] <= PHONE["height"], (box, shown)
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 2, width  # nothing wider than the phone
        shot(phone, "jobs-138-chapters-phone")
    finally:
        context.close()
