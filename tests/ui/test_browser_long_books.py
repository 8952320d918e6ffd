"""The web UI for long books and many of them, in Debian's chromium through ``webapp.py``.

One walk per concern, sharing one app: the voice menu follows the server (a Start, a remote URL
saved on the Server tab) without a reload, with one key per voice whichever list spelled it (the
servers here list their speakers in lower case, as the real Qwen3-TTS checkpoint does, while the
catalog spells them as the model card does); a 138-chapter book whose server is killed mid-render
waits, says so and goes on, then its job page stays under 3,000 px with clicks answered within 1 s,
on a phone too, and the next book gets an estimate; a login survives an app restart. Screenshots
go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.paths import DataPaths
from omni_web.server.record import load_record
from omni_web.ui.sessions import SESSIONS_FILE
from tests.epub_builder import make_epub, nav_xhtml, xhtml
from tests.fakes.sgl_omni import FakeServer, free_port, start_fake_server
from tests.ui.browser_kit import LONG_S, expect, job_badge, log_in, serve_webapp, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, cache_model, prepare_root, start_webapp, wait_for

pytestmark = pytest.mark.browser

# Slow enough that the long book is still rendering when its server is killed.
FAKE_ENV = {"FAKE_SGL_LATENCY_S": "1.0", "FAKE_SGL_SLOTS": "8"}
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
    with start_fake_server(
        str(snapshot), env={"FAKE_SGL_WARMUP_S": "0.1"}, log_path=base / "remote.log"
    ) as server:
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
    documents = [
        (
            f"c{n:03d}.xhtml",
            xhtml(
                f"<h1>{n}. The Whale Part {n}</h1><p>Call me reader number {n}. "
                "The sea was grey and the ship was slow. We sailed on.</p>"
            ),
        )
        for n in range(1, CHAPTERS + 1)
    ]
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


# A 276-chunk render with a server restart, then a phone session: past the suite's 600 s cap on a
# two-core machine at load 10, though every wait in it waits for an event.
@pytest.mark.timeout(1800)
def test_a_138_chapter_job_page_stays_short_and_quick(page, app, browser, tmp_path):
    book = _long_book(tmp_path / "long-whale.epub")
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text("Long Whale", timeout=60_000)
    page.get_by_role("button", name="All", exact=True).click()
    expect(page.locator("#gen-estimate")).to_contain_text("No book has finished on this machine yet")
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=60_000
    )
    # The managed server is killed mid-render: the job says it waits within 10 s, and goes on.
    rendering = page.locator("#jobs-detail [data-phase=rendering] .ow-bar-text")

    def early_in_rendering() -> bool:
        found = (
            re.match(r"(\d+)/276 chunks · (ETA|measuring)", rendering.first.text_content(timeout=5000) or "")
            if rendering.count()
            else None
        )
        return bool(found and int(found.group(1)) <= 200)

    wait_for(early_in_rendering, timeout_s=LONG_S, interval_s=0.1, what="the first chunks of the long book")
    record = load_record(DataPaths(app.log_path.parent / "home"))
    assert record is not None
    # A managed restart can be quicker than a tick: the page records every waiting line it shows.
    page.evaluate("""() => { window.__waiting = [];
      new MutationObserver(() => { const box = document.querySelector('#jobs-waiting');
        if (box) { window.__waiting.push(box.closest('#jobs-detail').textContent); } })
        .observe(document.querySelector('#jobs-detail'), {subtree: true, childList: true}); }""")
    os.killpg(record.pgid, signal.SIGKILL)  # the whole server, as a crash or the OOM killer takes it
    killed = time.time()
    log = page.locator("#jobs-log")
    # The job notices within 10 s (the time its log stamps), and the page shows it a tick later.
    expect(log).to_contain_text("The server died; restarting it.", timeout=30_000)
    stamp = re.search(r"(\d\d):(\d\d):(\d\d) The server died", log.text_content()).groups()
    noticed = time.localtime(killed)
    noticed_s = (
        (int(stamp[0]) - noticed.tm_hour) * 3600
        + (int(stamp[1]) - noticed.tm_min) * 60
        + int(stamp[2])
        - noticed.tm_sec
    )
    assert noticed_s <= 10, noticed_s
    shot(page, "jobs-138-chapters-server-killed")
    expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 5 * 1000)
    expect(log).to_contain_text("The server answers again after")
    waiting = page.evaluate("window.__waiting")
    assert all(
        "Waiting for the server (down since" in text and "restarts the server it manages" in text
        for text in waiting
    ), waiting[:2]
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
    # Answered: the player bar names the chapter; its audio then streams from the output folder.
    play = _answered_ms(
        page,
        "document.querySelector('#jobs-chapters [data-play=\"5\"]').click()",
        "document.querySelector('#ow-nowplaying')?.textContent.includes('5. The Whale Part 5')",
    )
    page.wait_for_function(
        "() => document.querySelector('#ow-nowplaying audio').readyState >= 1", timeout=30_000
    )
    fold = _answered_ms(
        page,
        "document.querySelector('#jobs-levels summary').click()",
        "document.querySelector('#jobs-levels').open && "
        "document.querySelector('#jobs-levels table').offsetHeight > 0",
    )
    assert play < 1000 and fold < 1000, (play, fold)
    page.wait_for_timeout(4500)  # two ticks: the open fold stays open
    assert levels.evaluate("e => e.open") is True

    # The next book gets an estimate before Generate, from the speed this one measured.
    words = re.search(r"([\d,]+) words", page.locator("#jobs-detail").inner_text()).group(1)
    tab(page, "Generate")
    page.get_by_role("button", name="None", exact=True).click()
    page.get_by_role("button", name="All", exact=True).click()
    expect(page.locator("#gen-estimate")).to_contain_text(re.compile(rf"About .+ for {words} words"))
    shot(page, "generate-estimate")

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
        assert box["y"] + box["height"] <= PHONE["height"] + 1 and 0 <= shown["y"] <= PHONE["height"], (
            box,
            shown,
        )
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 2, width  # nothing wider than the phone
        shot(phone, "jobs-138-chapters-phone")

        # The shelf on the phone: the book from chapter 5 at 1.5x, and there again after a reload.
        tab(phone, "Shelf")
        card = phone.locator(".ow-shelf-book").filter(has_text="Long Whale")
        expect(card).to_contain_text("138 chapters")
        expect(card).to_contain_text("Vivian")
        expect(card.get_by_role("link", name="m4b")).to_be_visible()
        card.locator(".ow-shelf-open").click()
        player = phone.locator(".ow-shelf-player")
        expect(player).to_be_visible()
        # The player names the chapter the moment it is clicked. Read in the click's own tick: on a
        # loaded machine the book plays on for many of its three-second chapters before a later look.
        named = player.evaluate("""p => { p.querySelector('[data-chapter="4"]').click();
          return p.querySelector('.ow-shelf-now').textContent; }""")
        assert named == "5. The Whale Part 5", named
        player.locator(".ow-shelf-speed").select_option("1.5")
        phone.wait_for_function(
            """() => { const a = document.querySelector('.ow-shelf-player audio');
          const start = document.querySelector('.ow-shelf-player')._book.chapters[4].start;
          return a.readyState >= 1 && a.playbackRate === 1.5 && a.currentTime >= start && !a.paused; }""",
            timeout=60_000,
        )
        # Playing on, the name follows the position (never a chapter the audio is not in).
        assert phone.evaluate("""() => { const p = document.querySelector('.ow-shelf-player');
          const a = p.querySelector('audio'); a.pause(); a.dispatchEvent(new Event('timeupdate'));
          const at = p._book.chapters.filter((c) => c.start <= a.currentTime + 0.01).length - 1;
          return p.querySelector('.ow-shelf-now').textContent === p._book.chapters[at].title; }""")
        shot(phone, "shelf-phone-playing")
        phone.locator(".ow-shelf-player audio").evaluate("a => a.pause()")  # saves the position
        phone.reload()
        tab(phone, "Shelf")
        phone.locator(".ow-shelf-book").filter(has_text="Long Whale").locator(".ow-shelf-open").click()
        phone.wait_for_function(
            """() => { const a = document.querySelector('.ow-shelf-player audio');
          const start = document.querySelector('.ow-shelf-player')._book.chapters[4].start;
          return a.readyState >= 1 && a.playbackRate === 1.5 && a.currentTime >= start; }""",
            timeout=60_000,
        )
        expect(phone.locator(".ow-shelf-speed")).to_have_value("1.5")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 2, width
    finally:
        context.close()


def test_a_login_survives_an_app_restart(browser, tmp_path):
    paths = prepare_root(tmp_path / "home")
    first = start_webapp(paths, port=free_port(), host="0.0.0.0", log_path=tmp_path / "first.log")
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        log_in(page, first)
        first.stop()
        again = start_webapp(paths, port=free_port(), host="0.0.0.0", log_path=tmp_path / "again.log")
        try:
            page.goto(again.url)  # the same browser, a restarted app (cookies ignore the port)
            expect(page.get_by_role("tab", name="Generate")).to_be_visible(timeout=60_000)
            assert page.locator("input[type=password]").count() == 0
        finally:
            again.stop()
        saved = paths.state_dir / SESSIONS_FILE
        assert saved.stat().st_mode & 0o077 == 0 and first.password() not in saved.read_text()
        # Another password: the old logins are gone.
        env = {"OMNI_WEB_AUTH": "omni:another-pass-1"}
        third = start_webapp(
            paths, port=free_port(), host="0.0.0.0", env=env, log_path=tmp_path / "third.log"
        )
        try:
            page.goto(third.url)
            expect(page.locator("input[type=password]")).to_be_visible(timeout=60_000)
        finally:
            third.stop()
    finally:
        context.close()
        first.stop()
