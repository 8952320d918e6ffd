"""The page is light while nothing changes: over 30 idle seconds on the Jobs tab, while a
138-chapter book renders, the page's main thread runs a small share of the time. It was 99 % with
Gradio timers ticking, 7-17 % with the page's poll (most of it a Gradio status tracker drawing 60
frames a second for nothing, omni_web/ui/live.py QUIET_TRACKERS_JS); now about 5 % on a 2-core
machine, so the bar here is the issue's 10 %, with the number printed.

The share asserted is CPU time: the renderers' main threads' own (``/proc``). Chromium's
``TaskDuration`` (printed beside it) is wall time, which grows while another process holds the
core: on a quiet machine both read ~5 %, beside ``stress-ng --cpu 4`` the CPU share still reads
4.6 % while TaskDuration reads 8 %, and CI's loaded run once read 11.4 %.

Idle here means what a user sees: the page open on the running job, no click. The job moves on
(its counts change), so the page has real updates to draw; what it must not do is redraw what did
not change or show loading indicators for its background ticks.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.browser_kit import LONG_S, expect, serve_webapp, tab
from tests.ui.helpers import AppProcess, wait_for
from tests.ui.test_browser_long_books import _long_book

pytestmark = pytest.mark.browser

# Slow enough that the book is still rendering after the measured half-minute (276 chunks, 4 at a time).
FAKE_ENV = {"FAKE_SGL_LATENCY_S": "3.0", "FAKE_SGL_SLOTS": "4"}
IDLE_S = 30.0
BUSY_LIMIT = 0.10


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "idle-app", FAKE_ENV)


def _metrics(cdp) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def _renderer_main_threads_cpu_s(browser_cdp) -> float:
    """CPU seconds the main threads of the browser's renderer processes have run (``/proc``).

    CPU time, unlike the wall time of the page's tasks, does not grow while another process holds
    the core, so a loaded CI machine measures the page's own work. A renderer's main thread is the
    thread whose id is the process id.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in browser_cdp.send("SystemInfo.getProcessInfo")["processInfo"]:
        if process["type"] != "renderer":
            continue
        pid = process["id"]
        try:
            stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
        except OSError:  # a renderer that has just gone away ran nothing more
            continue
        # Fields after the parenthesised command name: utime and stime are the 12th and 13th.
        fields = stat.rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def test_the_idle_jobs_page_of_a_running_long_book_keeps_the_main_thread_free(page, app, tmp_path, capsys):
    book = _long_book(tmp_path / "long-whale.epub")
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text("Long Whale", timeout=60_000)
    page.get_by_role("button", name="All", exact=True).click()
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true",
                                                                               timeout=60_000)
    rendering = page.locator("#jobs-detail [data-phase=rendering] .ow-bar-text")

    def rendering_started() -> bool:
        text = rendering.first.text_content(timeout=5000) if rendering.count() else ""
        found = re.match(r"(\d+)/276 chunks", text or "")
        return bool(found and int(found.group(1)) >= 1)

    wait_for(rendering_started, timeout_s=LONG_S, interval_s=0.2, what="the long book rendering")
    before_text = rendering.first.text_content()
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "timeTicks"})
    browser_cdp = page.context.browser.new_browser_cdp_session()
    start = _metrics(cdp)
    start_cpu = _renderer_main_threads_cpu_s(browser_cdp)
    started = time.monotonic()
    page.wait_for_timeout(IDLE_S * 1000)  # the measured window itself, not a wait for something
    end = _metrics(cdp)
    cpu = (_renderer_main_threads_cpu_s(browser_cdp) - start_cpu) / (time.monotonic() - started)
    wall = end["Timestamp"] - start["Timestamp"]
    busy = (end["TaskDuration"] - start["TaskDuration"]) / wall
    script = (end["ScriptDuration"] - start["ScriptDuration"]) / wall
    layout = (end["LayoutDuration"] - start["LayoutDuration"]) / wall
    with capsys.disabled():
        print(
            f"\nIdle Jobs page, 138-chapter book rendering, {wall:.1f} s ({time.monotonic() - started:.1f} s "
            "wall): "
            f"main thread busy {busy:.1%} (script {script:.1%}, layout {layout:.1%}), "
            f"on the CPU {cpu:.1%}"
        )
    # The job did move during the window, so the page had real updates to show.
    assert rendering.first.text_content() != before_text
    assert cpu < BUSY_LIMIT, f"main thread on the CPU {cpu:.1%} of {wall:.1f} idle seconds (busy {busy:.1%})"
    page.locator("#jobs-cancel").click()


def _frames_in(page, trace, seconds: float) -> int:
    """Animation frames the page ran in the next ``seconds`` (Chromium's trace)."""
    browser = page.context.browser
    browser.start_tracing(page=page, path=str(trace), categories=["devtools.timeline"])
    page.wait_for_timeout(seconds * 1000)  # the measured window itself, not a wait for something
    browser.stop_tracing()
    events = json.loads(trace.read_text())["traceEvents"]
    return sum(1 for event in events if event.get("name") == "FireAnimationFrame")


def test_an_idle_page_draws_almost_no_frames(page, tmp_path, capsys):
    """Gradio's status trackers asked for a frame 60 times a second on every page, forever (the
    page's script slows them to one a second); nothing else on an idle page animates. The page
    settles after its load events, so the quietest of a few 3-second windows counts (each had 180
    frames or more before)."""
    windows = []
    while len(windows) < 5 and (not windows or min(windows) >= 30):
        windows.append(_frames_in(page, tmp_path / f"trace-{len(windows)}.json", 3.0))
    with capsys.disabled():
        print(f"\nIdle page: animation frames per 3 s window: {windows}")
    assert min(windows) < 30, f"{windows} animation frames in 3-second idle windows"
